"""The Windows backend, end to end: deskhand.exe (x86_64-pc-windows-gnu) in
a Wine virtual desktop, clients on the Linux side over loopback, the person
played with xdotool on the X display (a device's input to Windows)."""

from __future__ import annotations

import subprocess
import time

import pytest

from daemon import agent_process
from desktop import CONTINUE_Y
from desktop.windows import WindowsDesktop, start
from imaging import decode_png
from xhelpers import poll, scratch_dir

TEXT = "Hello, Wörld — 日本 🎉"
NOTEPAD = r"C:\windows\system32\notepad.exe"
# The tests' own Windows program (tests/wine/winput.c).
WINPUT = r"C:\deskhand-tests\winput.exe"
VK_SHIFT = 0x10


def held(win: WindowsDesktop) -> set[int]:
    """The virtual keys and buttons Windows holds down now."""
    return {int(v) for v in win.wine(WINPUT, "held").split()}


@pytest.fixture(scope="module")
def win():
    desktop = start("1280x800")
    yield desktop
    desktop.stop()


@pytest.fixture(scope="module")
def win_daemon(win: WindowsDesktop):
    consent = scratch_dir("win-consent-") + "/consent.json"
    with open(consent, "w") as f:
        f.write('{"input": true}')
    d = win.serve("--consent", consent, "--enable-clipboard", "--enable-clipboard-read-foreign")
    yield d
    d.kill()


@pytest.fixture
def client(win_daemon):
    c = win_daemon.client()
    yield c
    c.close()


def notepad(win: WindowsDesktop, client) -> dict:
    """Starts Wine's notepad; its window as WINDOW_LIST reports it."""
    win.start_app("notepad")

    def listed():
        windows = client.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]
        return [w for w in windows if w["app_name"] == "notepad"]

    return poll(listed, timeout=20, what="notepad's window in WINDOW_LIST")[-1]


# The Continue button's colour (overlay/src/paint.rs).
CONTINUE_GREEN = (0x26, 0x7A, 0x34)


def click_continue(win: WindowsDesktop) -> None:
    """The person clicks Continue once the paused frame shows it (its
    left edge, 12 pixels of padding: green)."""
    poll(lambda: win.pixel(456, CONTINUE_Y) == CONTINUE_GREEN, timeout=5,
         what="the Continue button on screen")
    win.person.real_click(640, CONTINUE_Y)


def paused(client, reason: str) -> None:
    def state():
        msg = client.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [900, 700]})
        return msg["payload"].get("details", {}).get("paused_reason")

    poll(lambda: state() == reason, timeout=5, what=f"a pause with {reason}")


def test_the_ready_line_and_hello_are_honest_for_windows(win_daemon, client):
    assert win_daemon.display == "windows", win_daemon.ready
    p = client.hello["payload"]
    assert p["screen_resolution"] == [1280, 800], p
    features = p["computer_use_features"]
    for feature in ("screenshot.region", "input.type.unicode", "window.list", "app.launch"):
        assert feature in features, (feature, features)
    assert {"clipboard.read", "clipboard.write"} <= set(features), features
    # No UI Automation under Wine.
    assert "a11y.tree" not in features, features


def test_a_screenshot_is_the_desktop_x_shows(win, client):
    shot = decode_png(client.screenshot()["image"])
    assert (shot.width, shot.height) == (1280, 800)
    for x, y in ((5, 5), (640, 400), (1000, 700), (1279, 799)):
        assert shot.pixel(x, y) == win.pixel(x, y), (x, y)


def test_typing_arrives_exactly_and_chords_work(win, client):
    window = notepad(win, client)
    client.take_over()
    try:
        x, y, w, h = window["bounds"]
        client.act("left_click", coordinate=[x + w // 2, y + h // 2])
        client.act("type", text=TEXT)
        client.act("key", text="ctrl+a")
        client.act("key", text="ctrl+c")
        poll(lambda: win.clipboard() == TEXT, timeout=5, what="the typed text on the clipboard")
        assert win.pointer() == (x + w // 2, y + h // 2), "the click went where it was sent"
    finally:
        client.take_over(False)


def test_what_deskhand_writes_is_pasteable_and_other_copies_are_not_read(win, client):
    text = "written by deskhand · ü 日本"
    client.call("CLIPBOARD_WRITE", {"format": "text", "content": text}, expect="ACK")
    # Another app (on the X side, through Wine's clipboard) pastes it.
    assert win.clipboard() == text
    p = client.call("CLIPBOARD_READ", {"format": "text"}, expect="CLIPBOARD_READ_RESPONSE")
    assert p["content"] == text, p
    # The person copies something else: not for the agent without their approval.
    subprocess.run(["xclip", "-selection", "clipboard", "-i"], input=b"the person's copy",
                   env=win.env(), check=True, timeout=10, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    poll(lambda: win.clipboard() == "the person's copy", timeout=5, what="the person's copy")
    msg = client.request("CLIPBOARD_READ", {"format": "text"})
    assert msg["type"] == "ERROR", msg
    assert msg["payload"]["code"] == "CAPABILITY_NOT_GRANTED", msg
    assert msg["payload"]["details"]["needed"] == "host_approval", msg


def test_command_runners_and_scripts_are_not_launched(win, client, tmp_path):
    script = tmp_path / "run.bat"
    script.write_text("echo hi > %TEMP%\\deskhand-bat.txt\r\n")
    for path in (r"C:\windows\system32\cmd.exe",
                 r"C:\windows\system32\WindowsPowerShell\v1.0\powershell.exe",
                 "Z:" + str(script).replace("/", "\\")):
        msg = client.request("APP_LAUNCH", {"executable_path": path})
        assert msg["type"] == "ERROR", (path, msg)
        assert msg["payload"]["code"] in ("CAPABILITY_NOT_GRANTED", "INVALID_ARGUMENTS"), (path, msg)


def test_an_installed_app_launches_and_its_window_appears(win, client):
    # What an installer does (as administrator): App Paths under HKLM.
    win.wine("reg", "add",
             r"HKLM\Software\Microsoft\Windows\CurrentVersion\App Paths\notepad.exe",
             "/ve", "/t", "REG_SZ", "/d", NOTEPAD, "/f")
    ack = client.call("APP_LAUNCH", {"bundle_id": "notepad"}, expect="ACK")
    pid = ack["pid"]

    def window():
        windows = client.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]
        return [w for w in windows if w.get("pid") == pid]

    poll(window, timeout=20, what="the launched notepad's window")


def test_the_port_wants_the_token(win_daemon):
    """The attack catalogue's port rows on Windows: token, Host, Origin."""
    daemon = win_daemon
    from daemon import raw_upgrade
    host = {"Host": f"127.0.0.1:{daemon.port}"}
    auth = {**host, "Authorization": f"Bearer {daemon.token}"}
    assert raw_upgrade(daemon.port, {**host, "Authorization": "Bearer " + "0" * 64}) == 401
    assert raw_upgrade(daemon.port, {**auth, "Origin": "http://evil.example"}) == 403
    assert raw_upgrade(daemon.port, {**auth, "Host": f"evil.example:{daemon.port}"}) == 403
    assert raw_upgrade(daemon.port, auth) == 101


def test_a_client_killed_mid_hold_leaves_nothing_held(win, win_daemon):
    agent = agent_process(win_daemon, {"action": "hold_key", "key": "shift", "duration_ms": 20000})
    try:
        poll(lambda: VK_SHIFT in held(win), timeout=10, what="shift to be held")
    finally:
        agent.kill()
        agent.wait()
    poll(lambda: not held(win), timeout=3, what="shift released long before the 20 s hold ends")


def test_the_persons_input_hands_control_back_and_only_their_click_continues(win, client):
    client.take_over()
    try:
        client.act("mouse_move", coordinate=[700, 500])
        win.person.move(200, 600)
        paused(client, "pointer_moved")
        # Another program's SendInput on Continue is injected input: no resume.
        win.wine(WINPUT, "click", "640", str(CONTINUE_Y))
        time.sleep(1)
        paused(client, "pointer_moved")
        # The person's click (a device's, to Windows) resumes.
        click_continue(win)

        def resumed():
            msg = client.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [650, 450]})
            return msg["type"] == "ACK"

        poll(resumed, timeout=5, what="the takeover resumed by Continue")
        win.person.key("a")
        paused(client, "key_pressed")
        click_continue(win)
        poll(resumed, timeout=5, what="the takeover resumed by Continue")
    finally:
        client.take_over(False)
