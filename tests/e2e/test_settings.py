"""The settings file (`--settings`, by default settings.toml in the XDG
config dir), re-read while deskhand runs: turning the clipboard off makes
the next call answer FEATURE_NOT_SUPPORTED; a file that does not parse
keeps the last good settings; the kill switch is grabbed anew and the
audit log moves while running, the port applies at start; on two real
monitors (Xorg + dummy driver), keeping DUMMY0 private limits
screenshots, frames, windows and input of every protocol to DUMMY1."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import time
from contextlib import contextmanager

import pytest

from computer_http import Computer, png_size, tool_result_image, tool_result_text
from daemon import Daemon
from desktop import attach, start_dual
from imaging import decode_png
from webdriver import free_port
from xhelpers import XTerm, poll


def clipboard_write(c) -> str | None:
    return c.error_code("CLIPBOARD_WRITE", {"format": "text", "content": "from the settings test"})


def test_the_clipboard_follows_the_file_and_a_bad_file_changes_nothing(tmp_path):
    settings = tmp_path / "settings.toml"
    settings.write_text("[clipboard]\nenabled = true\n")
    d = Daemon("--virtual=640x480", "--settings", str(settings))
    try:
        c = d.client()
        assert clipboard_write(c) is None, "the file turned the clipboard on at start"
        settings.write_text("[clipboard]\nenabled = false\n")
        poll(lambda: clipboard_write(c) == "FEATURE_NOT_SUPPORTED", timeout=5,
             what="the clipboard to go off with the file")
        settings.write_text("[clipboard]\nenabled = tru\n")
        poll(lambda: "is not valid" in d.stderr_tail(), timeout=5, what="the bad file reported")
        assert clipboard_write(c) == "FEATURE_NOT_SUPPORTED", "the last good settings stay"
        settings.write_text("[clipboard]\nenabled = true\n")
        poll(lambda: clipboard_write(c) is None, timeout=5, what="the clipboard to come back")
        c.close()
    finally:
        assert d.terminate() == 0, d.stderr_tail()


def test_a_bad_file_at_start_is_refused_with_the_reason(tmp_path):
    settings = tmp_path / "settings.toml"
    settings.write_text('displays = []\n')
    with pytest.raises(AssertionError, match="empty list"):
        Daemon("--virtual=640x480", "--settings", str(settings), env={"RUST_BACKTRACE": "0"})


def takeover_survives(c, seconds: float = 1.0) -> bool:
    """Whether no pushed state ends `c`'s takeover within `seconds` (a
    paused state may come: the person's keys pause it)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = c.pushed_state(timeout=max(0.05, deadline - time.monotonic()))
        except TimeoutError:
            return True
        if not state.get("on"):
            return False
    return True


def ended_by_kill_switch(c) -> str:
    state = c.pushed_state()
    while state.get("on"):
        state = c.pushed_state()
    return state["reason"]


@contextmanager
def another_program_grabs(display: str, key: str, modifiers: int):
    """Another client of the X server holds `modifiers`+`key` on the root
    window (as a desktop's own shortcut would) while the block runs."""
    x11 = ctypes.CDLL(ctypes.util.find_library("X11"))
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XDefaultRootWindow.restype = ctypes.c_ulong
    x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x11.XStringToKeysym.restype = ctypes.c_ulong
    x11.XStringToKeysym.argtypes = [ctypes.c_char_p]
    x11.XKeysymToKeycode.restype = ctypes.c_ubyte
    x11.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
    x11.XGrabKey.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_ulong,
                             ctypes.c_int, ctypes.c_int, ctypes.c_int]
    x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    dpy = x11.XOpenDisplay(display.encode())
    assert dpy, f"cannot open display {display}"
    try:
        keycode = x11.XKeysymToKeycode(dpy, x11.XStringToKeysym(key.encode()))
        assert keycode, key
        x11.XGrabKey(dpy, keycode, modifiers, x11.XDefaultRootWindow(dpy), 1, 1, 1)
        x11.XSync(dpy, 0)
        yield
    finally:
        x11.XCloseDisplay(dpy)


CONTROL_MASK, MOD1_MASK = 1 << 2, 1 << 3


def test_the_kill_switch_follows_the_file(tmp_path):
    settings = tmp_path / "settings.toml"
    settings.write_text('kill_switch = "ctrl+alt+k"\n')
    d = Daemon("--virtual=800x600", "--settings", str(settings))
    try:
        c = d.client()
        c.act("mouse_down", coordinate=[400, 300], button="left")
        attach(d.display).person.key("ctrl+alt+Escape")
        assert takeover_survives(c), "the default chord is not the kill switch any more"
        attach(d.display).person.key("ctrl+alt+k")
        assert ended_by_kill_switch(c) == "kill_switch"
        poll(lambda: not any(attach(d.display).held_buttons().values()), timeout=5,
             what="the held button to be released")
        c.close()
        settings.write_text('kill_switch = "ctrl+shift+F9"\n')
        poll(lambda: "the kill-switch hotkey changed" in d.stderr_tail(200), timeout=5,
             what="the new chord to be grabbed")
        c = d.client()
        attach(d.display).person.key("ctrl+alt+k")
        assert takeover_survives(c), "the old chord was let go"
        attach(d.display).person.key("ctrl+shift+F9")
        assert ended_by_kill_switch(c) == "kill_switch"
        c.close()
        settings.write_text('kill_switch = "ctrl+alt+nope"\n')
        poll(lambda: "is not valid" in d.stderr_tail(), timeout=5, what="the bad chord reported")
        with another_program_grabs(d.display, "h", CONTROL_MASK | MOD1_MASK):
            settings.write_text('kill_switch = "ctrl+alt+h"\n')
            poll(lambda: "could not be grabbed" in d.stderr_tail(), timeout=5,
                 what="the held chord refused")
        c = d.client()
        attach(d.display).person.key("ctrl+shift+F9")
        assert ended_by_kill_switch(c) == "kill_switch", "the last good chord stays"
        c.close()
    finally:
        assert d.terminate() == 0, d.stderr_tail()


def test_refused_apps_follow_the_file(tmp_path, apps):
    settings = tmp_path / "settings.toml"
    settings.write_text("")
    d = Daemon("--virtual=800x600", "--settings", str(settings))
    try:
        term = XTerm(d.display)
        apps.append(term)
        cx, cy = term.rect().center()
        c = d.client()

        def click() -> dict | None:
            msg = c.request("INPUT_ACTION", {"action": "left_click", "coordinate": [cx, cy]})
            return msg["payload"] if msg["type"] == "ERROR" else None

        assert click() is None, "terminals are not refused by default"
        settings.write_text('refuse_apps = ["terminals"]\n')
        refused = poll(click, timeout=5, what="the terminal to be refused")
        assert refused["code"] == "PERMISSION_DENIED" and "terminals" in refused["message"], refused
        settings.write_text("refuse_apps = false\n")
        poll(lambda: click() is None, timeout=5, what="the terminal to take input again")
        c.close()
    finally:
        assert d.terminate() == 0, d.stderr_tail()


def audit_ops(path) -> list[str]:
    if not path.exists():
        return []
    return [json.loads(line)["op"] for line in path.read_text().splitlines()]


def test_the_audit_log_moves_with_the_file_and_an_unusable_place_changes_nothing(tmp_path):
    first, second = tmp_path / "a" / "audit.jsonl", tmp_path / "b" / "audit.jsonl"
    settings = tmp_path / "settings.toml"
    port = f"listen_port = {free_port()}\n"
    settings.write_text(f'{port}audit_log = "{first}"\n')
    d = Daemon("--virtual=640x480", "--settings", str(settings), port_and_audit_from_settings=True)
    try:
        c = d.client(takeover=False)
        c.call("CURSOR_POSITION_REQUEST")
        assert "cursor_position" in audit_ops(first)
        settings.write_text(f'{port}audit_log = "{second}"\n')
        poll(lambda: "audit.moved" in audit_ops(second), timeout=5, what="the log to move")
        c.call("CURSOR_POSITION_REQUEST")
        assert audit_ops(second)[-1] == "cursor_position", audit_ops(second)
        assert audit_ops(first)[-1] == "audit.moved", "the old file says where the log went"
        moved = json.loads(first.read_text().splitlines()[-1])["target"]
        assert moved == {"from": str(first), "to": str(second)}
        # A place that cannot be created (even by root) changes nothing.
        settings.write_text(f'{port}audit_log = "/proc/deskhand-test/audit.jsonl"\n')
        poll(lambda: "could not be applied" in d.stderr_tail(), timeout=5, what="the refusal")
        # Nor does a file that holds something else (refused as it is read).
        other = tmp_path / "notes.txt"
        other.write_text("a person's notes\n")
        settings.write_text(f'{port}audit_log = "{other}"\n')
        poll(lambda: "other than audit records" in d.stderr_tail(), timeout=5,
             what="the refusal of another file")
        assert other.read_text() == "a person's notes\n"
        c.call("CURSOR_POSITION_REQUEST")
        assert audit_ops(second)[-1] == "cursor_position"
        c.close()
    finally:
        assert d.terminate() == 0, d.stderr_tail()


def test_the_port_comes_from_the_file_at_start(tmp_path):
    port = free_port()
    settings = tmp_path / "settings.toml"
    settings.write_text(f"listen_port = {port}\n")
    d = Daemon("--virtual=640x480", "--settings", str(settings), port_and_audit_from_settings=True)
    try:
        assert d.port == port, d.ready
        d.client(takeover=False).close()
    finally:
        assert d.terminate() == 0, d.stderr_tail()


@pytest.fixture(scope="module")
def private_dummy0(tmp_path_factory):
    xorg = start_dual()
    tmp = tmp_path_factory.mktemp("settings")
    consent = tmp / "consent.json"
    consent.write_text(json.dumps({"input": True}))
    settings = tmp / "settings.toml"
    settings.write_text('displays = ["DUMMY1"]\n')
    d = Daemon("--display", xorg.name, "--consent", str(consent), "--settings", str(settings))
    yield d, xorg, settings
    rc = d.terminate()
    xorg.stop()
    assert rc == 0, d.stderr_tail()


def test_a_private_display_is_out_of_every_protocol(private_dummy0):
    d, xorg, _ = private_dummy0
    c = d.client()
    info = c.call("DISPLAY_INFO_REQUEST", {}, expect="DISPLAY_INFO_RESPONSE")
    assert [m["name"] for m in info["monitors"]] == ["DUMMY1"], info
    shot = c.request("SCREENSHOT_REQUEST", {"monitor": 0})
    assert shot["type"] == "ERROR" and shot["payload"]["code"] == "INVALID_ARGUMENTS", shot
    c.act("mouse_move", coordinate=[1400, 100])
    msg = c.request("INPUT_ACTION", {"action": "left_click", "coordinate": [100, 100]})
    assert msg["type"] == "ERROR" and msg["payload"]["code"] == "INPUT_OUT_OF_BOUNDS", msg
    assert attach(xorg.name).pointer() == (1400, 100), "nothing reached the private display"
    c.close()
    computer = Computer(d)
    try:
        frame = computer.anthropic({"type": "tool_use", "id": "s", "name": "computer",
                                    "input": {"action": "screenshot"}})
        assert png_size(tool_result_image(frame)) == (1024, 768), "DUMMY1 alone"
        r = computer.anthropic({"type": "tool_use", "id": "c", "name": "computer",
                                "input": {"action": "left_click", "coordinate": [100, 100]}})
        assert not r.get("is_error"), tool_result_text(r)
        assert attach(xorg.name).pointer() == (1380, 100), "frame pixels map onto DUMMY1"
    finally:
        computer.end()


def test_windows_on_a_private_display_are_not_listed_or_reached(private_dummy0, apps):
    d, xorg, _ = private_dummy0
    private = XTerm(xorg.name, cols=20, rows=5, pos="+100+100")
    shared = XTerm(xorg.name, cols=20, rows=5, pos="+1400+100")
    apps.extend([private, shared])
    c = d.client()
    titles = [w["title"] for w in
              c.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]]
    assert shared.title in titles and private.title not in titles, titles
    c.close()


def test_showing_every_display_again_applies_to_the_next_request(private_dummy0):
    d, _, settings = private_dummy0
    c = d.client()
    settings.write_text('displays = "all"\n')

    def names():
        info = c.call("DISPLAY_INFO_REQUEST", {}, expect="DISPLAY_INFO_RESPONSE")
        return sorted(m["name"] for m in info["monitors"])
    poll(lambda: names() == ["DUMMY0", "DUMMY1"], timeout=5, what="both displays listed again")
    private = XTerm(d.display, cols=20, rows=5, pos="+100+100")
    try:
        titles = [w["title"] for w in
                  c.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]]
        assert private.title in titles, "DUMMY0's windows are listed again"
    finally:
        private.close()
    shot = c.screenshot(monitor=0)
    image = decode_png(shot["image"])
    assert (image.width, image.height) == (1280, 800), "DUMMY0 can be captured again"
    settings.write_text('displays = ["DUMMY1"]\n')
    poll(lambda: names() == ["DUMMY1"], timeout=5, what="DUMMY0 private again")
    c.close()
