"""deskhand's Wayland backend on sway (no GNOME extension): the window
list comes from sway's own IPC. A headless sway with two GTK windows,
deskhand serving it with no desktop portals at all (monitors from the
compositor's outputs), and the list checked against sway's own tree."""

from __future__ import annotations

import json
import subprocess

import pytest

from daemon import Daemon, binary
from desktop.sway import Sway
from xhelpers import REPO, poll

TITLES = ("deskhand sway one", "deskhand sway two")


@pytest.fixture()
def sway():
    s = Sway()
    yield s
    s.stop()


def form(sway: Sway, title: str) -> subprocess.Popen:
    """A GTK form titled `title` in the session."""
    proc = sway.spawn("/usr/bin/python3", str(REPO / "tests/fixtures/wayland_form.py"),
                      "--saved", str(sway.runtime / f"{title}.txt"), "--title", title,
                      env={"GDK_BACKEND": "wayland"}, stdout=subprocess.PIPE, text=True)
    assert json.loads(proc.stdout.readline()).get("ready"), "the form did not start"
    return proc


def serve(sway: Sway) -> Daemon:
    """deskhand serving the sway session, on a session bus with no
    portals."""
    return Daemon("--backend", "wayland", env={
        "WAYLAND_DISPLAY": sway.env["WAYLAND_DISPLAY"],
        "XDG_RUNTIME_DIR": str(sway.runtime), "SWAYSOCK": sway.env["SWAYSOCK"],
        "DBUS_SESSION_BUS_ADDRESS": sway.session_bus()})


def views(node: dict) -> list[dict]:
    """Every window of sway's tree."""
    if node.get("pid") and not node.get("nodes"):
        return [node]
    return [v for key in ("nodes", "floating_nodes") for child in node.get(key, [])
            for v in views(child)]


def test_the_window_list_is_sways_own_with_bounds_apps_and_pids(sway):
    forms = [form(sway, title) for title in TITLES]
    d = serve(sway)
    try:
        c = d.client()

        def listed() -> dict | None:
            windows = c.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]
            ours = {w["title"]: w for w in windows if w["title"].startswith("deskhand sway")}
            return ours if len(ours) == 2 else None

        ours = poll(listed, timeout=10, what="both forms in WINDOW_LIST")
        tree = {v["name"]: v for v in views(sway.tree())}
        for title in TITLES:
            w, v = ours[title], tree[title]
            r, inner = v["rect"], v["window_rect"]
            x, y = r["x"] + inner["x"], r["y"] + inner["y"]
            assert w["bounds"] == [x, y, x + inner["width"], y + inner["height"]], (w, v)
            # The pid is sway's (the compositor's), the form's process.
            assert w["pid"] == v["pid"], (w, v)
            # The form's app id (GTK's: its program's name).
            assert w["app_name"] == v["app_id"] == "wayland_form.py", (w, v)
        # Side by side, as sway tiles them: two different places.
        assert ours["deskhand sway one"]["bounds"] != ours["deskhand sway two"]["bounds"]
        focused = next(v["name"] for v in tree.values() if v["focused"])
        assert [t for t, w in ours.items() if w["is_focused"]] == [focused], ours
        # A window on a workspace that does not show is hidden, as sway says.
        sway.swaymsg(f'[title="{TITLES[0]}"]', "move", "to", "workspace", "9")

        def hidden() -> bool:
            windows = c.call("WINDOW_LIST_REQUEST", {"include_minimized": True},
                             expect="WINDOW_LIST_RESPONSE")["windows"]
            state = {w["title"]: w["is_minimized"] for w in windows}
            return state.get(TITLES[0]) is True and state.get(TITLES[1]) is False

        poll(hidden, timeout=10, what="the moved window hidden, the other shown")
        c.close()
    finally:
        d.kill()
        for p in forms:
            p.kill()


def test_with_no_screencast_the_monitors_are_the_compositors_outputs_at_their_scale():
    """No portal at all: the monitor is the compositor's output, its
    logical size from xdg-output (sway says scale 2 for 150%)."""
    sway = Sway("1920x1200", scale=1.5)
    try:
        d = serve(sway)
        try:
            c = d.client()
            monitors = c.call("DISPLAY_INFO_REQUEST", {}, expect="DISPLAY_INFO_RESPONSE")["monitors"]
            assert len(monitors) == 1, monitors
            m = monitors[0]
            assert m["physical_size"] == [1920, 1200] and m["logical_size"] == [1280, 800], m
            assert m["scale"] == 1.5 and m["name"] == "HEADLESS-1", m
            c.close()
        finally:
            d.kill()
    finally:
        sway.stop()


def test_the_doctor_on_sway_names_its_ipc_as_the_window_list(sway):
    program = sway.program(binary())
    done = sway.spawn(program, "doctor", "--json", stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE, text=True)
    out, err = done.communicate(timeout=60)
    probes = {p["label"]: p for p in json.loads(out)["probes"]}
    assert probes["windows"]["status"] == "ok", (probes["windows"], err[-500:])
    assert "sway's IPC" in probes["windows"]["message"], probes["windows"]
    # Where nothing answers, it says there is no window list.
    done = sway.spawn(program, "doctor", "--json", env={"SWAYSOCK": "/nonexistent"},
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, _ = done.communicate(timeout=60)
    probes = {p["label"]: p for p in json.loads(out)["probes"]}
    assert probes["windows"]["status"] != "ok", probes["windows"]
    assert probes["windows"]["message"].startswith("unavailable"), probes["windows"]
