"""`deskhand doctor` reports the AT-SPI accessibility backend from a real
bus check: `available` (with read_tree and act_semantic) under a session
bus that starts at-spi2-core's accessibility bus, `unavailable` with the
reason and a next step when there is none or it does not answer. The
backend is optional: it never changes `ready`, only `--require
accessibility`."""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from daemon import binary
from test_doctor import doctor, jsonschema, report, schema  # noqa: F401 (fixture)
from xhelpers import missing

# Without a display (so x11 is unavailable and `ready` is false whatever
# the bus says), and without whatever accessibility bus the runner has.
DROP = ("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE",
        "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS")
NOWHERE = "unix:path=/nonexistent/deskhand-e2e-bus"


def by(entries, key, value):
    return next(e for e in entries if e[key] == value)


@pytest.fixture(scope="module")
def session_bus():
    """Checks that a fresh session bus can start at-spi2-core's
    accessibility bus here (D-Bus activation)."""
    if shutil.which("dbus-run-session") is None:
        missing("`dbus-run-session` not on PATH (dbus)")
    if not Path("/usr/share/dbus-1/services/org.a11y.Bus.service").exists():
        missing("at-spi2-core (org.a11y.Bus.service)")


def under_session_bus(tmp_path, *args):
    """`deskhand doctor *args` under its own session bus: (exit status, its
    stdout, stderr). Its stdout goes through a file: the services the bus
    activates (the accessibility bus, its registry) print on theirs."""
    out = tmp_path / "doctor.out"
    env = {k: v for k, v in os.environ.items() if k not in DROP}
    argv = ["dbus-run-session", "--", "sh", "-c", 'out="$1"; shift; exec "$@" > "$out"',
            "sh", str(out), binary(), "doctor", *args]
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=60)
    return done.returncode, out.read_text(), done.stderr


def test_a_bus_that_answers_makes_atspi_available(schema, session_bus, tmp_path):  # noqa: F811
    rc, text, err = under_session_bus(tmp_path, "--json")
    r = json.loads(text)
    jsonschema.validate(r, schema)
    atspi = by(r["backends"], "id", "atspi")
    assert atspi == {"id": "atspi", "status": "available", "required": False,
                     "reason_code": None, "action": None}, err
    for name in ("read_tree", "act_semantic"):
        cap = by(r["capabilities"], "name", name)
        assert (cap["status"], cap["reason_code"], cap["consent"]) == ("available", None, "session")
    perm = by(r["permissions"], "name", "accessibility")
    assert (perm["status"], perm["reason_code"]) == ("granted", None)
    assert not any(s["reason_code"].startswith("atspi_") for s in r["next_steps"])
    # Without a display, x11 alone makes it not ready.
    assert rc == 1 and r["ready"] is False
    rc, text, err = under_session_bus(tmp_path, "--require", "accessibility")
    assert rc == 0, text + err
    assert "✓ backend atspi (optional): available" in text
    assert "✓ Accessibility: ready" in text


@pytest.mark.parametrize("env, codes", [
    # Nothing advertises it: the session bus is not there.
    ({"DBUS_SESSION_BUS_ADDRESS": NOWHERE},
     {"atspi_bus_not_advertised", "atspi_bus_unreachable"}),
    # It is given, but nothing answers at that address.
    ({"DBUS_SESSION_BUS_ADDRESS": NOWHERE, "AT_SPI_BUS_ADDRESS": NOWHERE},
     {"atspi_bus_unreachable"}),
], ids=["no-session-bus", "bus-not-answering"])
def test_no_accessibility_bus_says_why_and_what_to_do(schema, env, codes):  # noqa: F811
    started = time.monotonic()
    rc, r = report(schema, env_extra=env, drop=DROP)
    assert time.monotonic() - started < 15, "the bus check is bounded"
    atspi = by(r["backends"], "id", "atspi")
    assert atspi["status"] == "unavailable" and atspi["required"] is False
    code = atspi["reason_code"]
    assert code in codes
    assert atspi["action"], "an action sentence for the person"
    for name in ("read_tree", "act_semantic"):
        cap = by(r["capabilities"], "name", name)
        assert (cap["status"], cap["reason_code"]) == ("unavailable", code)
    perm = by(r["permissions"], "name", "accessibility")
    assert (perm["status"], perm["reason_code"]) == ("missing", code)
    steps = [s for s in r["next_steps"] if s["reason_code"] == code]
    assert len(steps) == 1, r["next_steps"]
    assert steps[0]["backend"] == "atspi" and steps[0]["permission"] == "accessibility"
    assert steps[0]["required"] is False and steps[0]["action"] == atspi["action"]
    assert len({s["reason_code"] for s in r["next_steps"]}) == len(r["next_steps"])
    human = doctor("--require", "accessibility", env_extra=env, drop=DROP)
    assert human.returncode == 78, human.stdout
    assert f"→ atspi ({code}): {atspi['action']}" in human.stdout


def test_no_accessibility_bus_leaves_a_display_ready(schema, display):  # noqa: F811
    env = {"DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": NOWHERE}
    rc, r = report(schema, env_extra=env, drop=DROP)
    assert rc == 0 and r["ready"] is True, r["next_steps"]
    assert by(r["backends"], "id", "atspi")["status"] == "unavailable"
    # (Input also needs the takeover indicator, which has nothing to do
    # with accessibility: screenshots alone are asked for here.)
    human = doctor("--require", "screenshot", env_extra=env, drop=DROP)
    assert human.returncode == 0, human.stdout
    assert "⚠ backend atspi (optional): unavailable" in human.stdout
