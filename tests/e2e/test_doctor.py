"""`deskhand doctor`: the human report exits 0 ready / 78 not ready, and
the --json report validates against its schema and exits 0 / 1, with and
without a display."""

import json
import os
import subprocess

import pytest

from daemon import binary
from xhelpers import missing

try:
    import jsonschema
except ImportError:  # pragma: no cover - CI installs it
    jsonschema = None


def doctor(*args, env_extra=None, drop=("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE")):
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_extra or {})
    return subprocess.run([binary(), "doctor", *args], env=env, capture_output=True,
                          text=True, timeout=30)


@pytest.fixture(scope="module")
def schema():
    if jsonschema is None:
        missing("python jsonschema")
    out = doctor("--schema")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def report(schema, *args, **kw):
    out = doctor("--json", *args, **kw)
    data = json.loads(out.stdout)
    jsonschema.validate(data, schema)
    return out.returncode, data


def test_without_a_display(schema):
    human = doctor()
    assert human.returncode == 78, human.stdout
    assert "display_unreachable" in human.stdout
    rc, r = report(schema)
    assert rc == 1 and r["ready"] is False and r["ok"] is False
    assert r["session_type"] == "none"
    x11 = next(b for b in r["backends"] if b["id"] == "x11")
    assert (x11["status"], x11["reason_code"]) == ("unavailable", "display_unreachable")
    assert any(s["reason_code"] == "display_unreachable" and s["required"] for s in r["next_steps"])
    assert r["network"] == {"code_paths": "none", "telemetry": False, "update_check": False}


def test_with_a_display(schema, display):
    human = doctor(env_extra={"DISPLAY": display})
    assert human.returncode == 0, human.stdout
    assert "extension XTEST: present" in human.stdout
    rc, r = report(schema, env_extra={"DISPLAY": display})
    assert rc == 0 and r["ready"] is True and r["session_type"] == "x11"
    caps = {c["name"]: c for c in r["capabilities"]}
    assert caps["capture_window"]["status"] == "available"
    assert caps["list_notifications"]["status"] == "unsupported"


def test_the_doctor_says_what_x11_cannot_tell(schema, display):
    """An XTEST event sent through the real mouse is that mouse's own
    event on X11: the report and the human lines say so plainly."""
    rc, r = report(schema, env_extra={"DISPLAY": display})
    caps = {c["name"]: c for c in r["capabilities"]}
    handback = caps["takeover_handback"]
    assert (handback["status"], handback["reason_code"]) == (
        "available", "xtest_device_events_look_real"), handback
    assert "cannot tell" in handback["action"] and "untrusted" in handback["action"]
    assert caps["input_takeover"]["reason_code"] is None, caps["input_takeover"]
    line = next(p for p in r["probes"] if p["label"] == "real-device clicks")
    assert line["status"] == "warn" and "XTestFakeDeviceButtonEvent" in line["message"], line
    human = doctor(env_extra={"DISPLAY": display})
    assert "real-device clicks" in human.stdout and "cannot tell" in human.stdout, human.stdout


def test_a_wayland_session_is_reported_honestly(schema, display):
    # A GNOME Wayland session is the Wayland backend's, XWayland's display
    # or not; here no compositor, portal or shell extension answers, and each
    # capability says why it is not ready (tests/e2e/test_wayland_backend.py
    # has the real session).
    rc, r = report(schema, env_extra={"DISPLAY": display, "WAYLAND_DISPLAY": "wayland-0",
                                      "XDG_CURRENT_DESKTOP": "ubuntu:GNOME"})
    assert rc == 1 and r["session_type"] == "wayland"
    assert not any(b["id"] == "x11" for b in r["backends"]), r["backends"]
    portal = next(b for b in r["backends"] if b["id"] == "wayland-portal")
    assert portal["status"] != "available" and portal["reason_code"] == "portal_pending", portal
    caps = {c["name"]: c for c in r["capabilities"]}
    assert caps["takeover_indicator"]["reason_code"] == "shell_extension_missing", caps


def test_another_compositors_wayland_session_gets_the_wayland_backend_too(schema, display):
    # XWayland shows no Wayland app's pixels and none of the person's input
    # on one: in KDE's Wayland session too deskhand uses the Wayland
    # backend (its frame on the layer shell), and says what is missing.
    rc, r = report(schema, env_extra={"DISPLAY": display, "WAYLAND_DISPLAY": "wayland-0",
                                      "XDG_CURRENT_DESKTOP": "KDE"})
    assert rc == 1 and r["session_type"] == "wayland"
    assert not any(b["id"] == "x11" for b in r["backends"]), r["backends"]
    assert any(b["id"] == "wayland-portal" for b in r["backends"]), r["backends"]
    caps = {c["name"]: c for c in r["capabilities"]}
    assert caps["takeover_indicator"]["status"] != "available", caps["takeover_indicator"]