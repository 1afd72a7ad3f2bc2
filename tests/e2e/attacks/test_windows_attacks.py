"""Attacks on the Windows backend (issue 47), run as its attack run ran
them: deskhand.exe in a Wine virtual desktop, the person played on the X
side (real input to Windows), the attacker a small program of the same
user in the same desktop (tests/wine/wattack.c). The catalogue is
`tests/e2e/attacks/README.md`.

| attack class | what the attacker does | what must happen |
|---|---|---|
| press Continue by messages | after the person's click elsewhere, puts the cursor on Continue and posts a press and release to the overlay | nothing resumes; the person's own click on Continue does |
| hide the frame in place | an empty window region, or a colour key of the frame's red, on the overlay | the next act is refused (`BUSY`, `frame`), the frame is drawn again, later acts work |
| cover the frame | a topmost, click-through window over the four edges | the next act is refused (`BUSY`, `frame: covered`), the frame is raised over it |
| dodge the terminal refusal | adds `WS_EX_TOOLWINDOW` to a refused console | the console still gets no click and no key |
| launch through a switch or a writable folder | APP_LAUNCH of an installed app with `/gpu-launcher=…`-style switches; of a machine Start Menu shortcut to a program under `C:\\ProgramData`; of an HKLM App Paths entry `notes` naming a renamed copy of a shell (`cmdlike.exe`: `cmd.exe`'s version resource) | refused, nothing starts; a drive path argument reaches the app; the audit names the program and its arguments |
| deafen the hand-back hook | sets a low-level mouse hook of its own and exits without removing it (Wine then calls no hook for the mouse) | deskhand notices its hook hears nothing while the pointer moves and sets it again: the person's click on Continue resumes, a click in place pauses |
| connection file in an open folder | `serve --connection-file` in a folder every account may write to (Everyone may add files) | refused with the folder named, before the desktop is opened: no file written |
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from desktop import CONTINUE_Y
from desktop.windows import WindowsDesktop, start, windows_binary
from xhelpers import poll, run, scratch_dir

WATTACK = r"C:\deskhand-tests\wattack.exe"
# The frame's red and the Continue button's green (overlay/src/paint.rs),
# the cover's grey (tests/wine/wattack.c).
RED = (0xE0, 0x1B, 0x24)
CONTINUE_GREEN = (0x26, 0x7A, 0x34)
GREY = (0x80, 0x80, 0x80)
# A point of the frame's top edge.
EDGE = (640, 2)


@pytest.fixture(scope="module")
def win():
    desktop = start("1280x800")
    yield desktop
    desktop.stop()


@pytest.fixture(scope="module")
def win_daemon(win: WindowsDesktop):
    consent = scratch_dir("win-attack-consent-") + "/consent.json"
    with open(consent, "w") as f:
        f.write('{"input": true, "refuse_apps": ["terminals"]}')
    d = win.serve("--consent", consent)
    yield d
    d.kill()


@pytest.fixture
def client(win_daemon):
    c = win_daemon.client()
    yield c
    c.close()


def attack(win: WindowsDesktop, *argv: str) -> str:
    """Runs the attacker program to its end (it must find what it acts
    on); what it says it did."""
    return win.wine(WATTACK, *argv)


def still_paused(client) -> None:
    """An act now is refused: the person holds the desktop."""
    msg = client.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [900, 700]})
    assert msg["type"] == "ERROR", f"the takeover resumed: {msg}"
    assert msg["payload"]["code"] == "USER_TOOK_OVER", msg


def frame_refused(client, what: str) -> None:
    """The next act is refused because the frame was tampered with (`what`)."""
    msg = client.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [700, 500]})
    assert msg["type"] == "ERROR", f"the act went on while the frame was {what}: {msg}"
    p = msg["payload"]
    assert p["code"] == "BUSY" and p["details"].get("frame") == what, p


def red_frame(win: WindowsDesktop) -> None:
    poll(lambda: win.pixel(*EDGE) == RED, timeout=5, what="the red frame on screen")


def test_a_posted_click_on_continue_resumes_nothing_and_the_persons_click_does(win, client):
    client.take_over()
    try:
        client.act("mouse_move", coordinate=[700, 500])
        # The person clicks on their desktop, away from the frame: a real
        # press, which pauses the agent.
        win.person.real_click(300, 600)
        poll(lambda: win.pixel(456, CONTINUE_Y) == CONTINUE_GREEN, timeout=5,
             what="the Continue button on screen")
        for _ in range(3):
            # Another real click elsewhere, then the attacker's posted one
            # on Continue right after it (the old rule took any real press
            # in the last 3 s as the posted click's).
            win.person.real_click(300, 600)
            out = attack(win, "post-click", "640", str(CONTINUE_Y))
            assert "posted a click" in out, out
            time.sleep(1.5)
            still_paused(client)
        # The person's own click on Continue resumes.
        win.person.real_click(640, CONTINUE_Y)
        poll(lambda: client.request("INPUT_ACTION", {"action": "mouse_move",
                                                     "coordinate": [650, 450]})["type"] == "ACK",
             timeout=5, what="the takeover resumed by the person's click on Continue")
    finally:
        client.take_over(False)


@pytest.mark.parametrize("tamper, what, vanishes", [
    ("empty-region", "reshaped", True),
    # Wine draws a colour-keyed window unchanged; Windows would draw the
    # frame's red see-through.
    ("colour-key", "keyed", False),
])
def test_a_frame_hidden_in_place_refuses_the_next_act_and_is_drawn_again(win, client, tamper,
                                                                          what, vanishes):
    client.take_over()
    try:
        client.act("mouse_move", coordinate=[700, 500])
        red_frame(win)
        # It exits 1 when it found no overlay window to act on.
        attack(win, tamper)
        if vanishes:
            poll(lambda: win.pixel(*EDGE) != RED, timeout=5, what="the frame hidden by the attack")
        frame_refused(client, what)
        red_frame(win)
        client.act("mouse_move", coordinate=[710, 510])
    finally:
        client.take_over(False)


def test_a_window_over_the_frames_edges_refuses_the_next_act_and_the_frame_is_raised(win, client):
    client.take_over()
    try:
        client.act("mouse_move", coordinate=[700, 500])
        red_frame(win)
        win.start_app(WATTACK, "cover", "30")
        poll(lambda: win.pixel(*EDGE) == GREY, timeout=15, what="the cover over the frame")
        frame_refused(client, "covered")
        red_frame(win)
        client.act("mouse_move", coordinate=[710, 510])
    finally:
        client.take_over(False)
        win.close_apps()


def console(win: WindowsDesktop, client) -> dict:
    """Starts a Wine console running cmd; its window as WINDOW_LIST has it."""
    win.close_apps()
    win.start_app("wineconsole", "cmd")

    def listed():
        windows = client.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]
        return [w for w in windows if w["app_name"] in ("conhost", "wineconsole", "cmd")]

    return poll(listed, timeout=20, what="the console in WINDOW_LIST")[0]


def refused_terminal(client, action: dict) -> None:
    """`action` is refused: the person's policy refuses terminals."""
    msg = client.request("INPUT_ACTION", action)
    assert msg["type"] == "ERROR", f"the console got {action}: {msg}"
    p = msg["payload"]
    assert p["code"] == "PERMISSION_DENIED" and "refuses terminals" in p["message"], p


def test_a_refused_console_made_a_tool_window_gets_no_input(win, client):
    window = console(win, client)
    x, y, w, h = window["bounds"]
    click = {"action": "left_click", "coordinate": [x + w // 2, y + h // 2]}
    typing = {"action": "type", "text": "echo typed by the agent"}
    client.take_over()
    try:
        refused_terminal(client, click)
        # The attacker gives the console the tool-window style: it leaves
        # WINDOW_LIST (and the taskbar), yet still takes clicks and keys.
        attack(win, "tool-window", window["app_bundle_id"])

        def listed():
            windows = client.call("WINDOW_LIST_REQUEST", {},
                                  expect="WINDOW_LIST_RESPONSE")["windows"]
            return [w for w in windows if w["window_id"] == window["window_id"]]

        poll(lambda: not listed(), timeout=5, what="the console out of WINDOW_LIST")
        refused_terminal(client, click)
        refused_terminal(client, typing)
    finally:
        client.take_over(False)
        win.close_apps()


def resumed(client) -> bool:
    msg = client.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [700, 500]})
    return msg["type"] == "ACK"


def test_a_mouse_hook_that_exits_does_not_leave_deskhand_deaf(win, client):
    # Another program's hook, first in the chain while it runs; it exits
    # without removing it (as when it crashes or is killed).
    assert "hooked" in attack(win, "hook", "2")
    client.take_over()
    try:
        client.act("mouse_move", coordinate=[700, 500])
        # The person moves (the pointer's place pauses the agent even with
        # a deaf hook); their moves, heard by no hook, show it deaf.
        for i in range(8):
            win.person.move(200 + 20 * i, 600)
            time.sleep(0.15)
        still_paused(client)
        # Their click on Continue is seen by the hook: it resumes.
        poll(lambda: win.pixel(456, CONTINUE_Y) == CONTINUE_GREEN, timeout=5,
             what="the Continue button on screen")
        win.person.real_click(640, CONTINUE_Y)
        poll(lambda: resumed(client), timeout=5,
             what="the takeover resumed by the person's click on Continue")
        # A click in place (no move at all) pauses the agent.
        run(win.x_display, "xdotool", "click", "1")

        def paused_by_the_click():
            msg = client.request("INPUT_ACTION", {"action": "mouse_move",
                                                  "coordinate": [700, 500]})
            return msg["type"] == "ERROR" and msg["payload"]["details"].get(
                "paused_reason") == "button_pressed"

        poll(paused_by_the_click, timeout=5, what="the click in place pausing the agent")
        win.person.real_click(640, CONTINUE_Y)
        poll(lambda: resumed(client), timeout=5, what="resumed again")
    finally:
        client.take_over(False)


APP_PATHS = r"HKLM\Software\Microsoft\Windows\CurrentVersion\App Paths"
MACHINE_START_MENU = r"C:\ProgramData\Microsoft\Windows\Start Menu\Programs"
WINPUT = r"C:\deskhand-tests\winput.exe"
NOTEPAD = r"C:\windows\system32\notepad.exe"
CMDLIKE = r"C:\deskhand-tests\cmdlike.exe"


def launch_refused(client, payload: dict, why: str) -> None:
    msg = client.request("APP_LAUNCH", {"activate": False, **payload})
    assert msg["type"] == "ERROR", (payload, msg)
    assert why in msg["payload"]["message"], (payload, msg)


def pids_of(win: WindowsDesktop, image: str) -> set[str]:
    out = win.wine("tasklist", "/fo", "csv", "/nh")
    return {line.split(",")[1].strip('"') for line in out.splitlines()
            if line.lower().startswith(f'"{image.lower()}"')}


def driving(win: WindowsDesktop, client) -> None:
    """The agent holds the takeover, not paused: a pause the person left
    (an earlier test's) they end with Continue."""
    client.take_over()
    if not resumed(client):
        poll(lambda: win.pixel(456, CONTINUE_Y) == CONTINUE_GREEN, timeout=5,
             what="the Continue button on screen")
        win.person.real_click(640, CONTINUE_Y)
        poll(lambda: resumed(client), timeout=5, what="the takeover resumed by Continue")


def test_launch_switches_writable_folders_and_a_renamed_shell_start_nothing(win, win_daemon,
                                                                          client):
    driving(win, client)
    try:
        launch_attacks(win, win_daemon, client)
    finally:
        client.take_over(False)


def launch_attacks(win: WindowsDesktop, win_daemon, client) -> None:
    # An installer's App Paths entry (as administrator): notepad.
    win.wine("reg", "add", APP_PATHS + r"\deskpad.exe", "/ve", "/t", "REG_SZ", "/d", NOTEPAD,
             "/f")
    before = pids_of(win, "notepad.exe")
    # (a) Chromium and Edge read `/x` as a switch, as `-x` and `--x`.
    for switch in (r"/gpu-launcher=C:\windows\system32\cmd.exe /c calc",
                   r"/browser-subprocess-path=C:\windows\system32\cmd.exe",
                   "--gpu-launcher=cmd", "-new-window", "/tmp/a.txt"):
        launch_refused(client, {"bundle_id": "deskpad", "args": [switch]}, "never options")
    # (b) A program under ProgramData (every account may write there),
    # from a shortcut in the machine's Start Menu.
    (win.prefix / "drive_c" / "ProgramData" / "Tools").mkdir(exist_ok=True)
    win.wine("cmd", "/c", "copy", "/y", NOTEPAD, r"C:\ProgramData\Tools\viewer.exe")
    win.wine(WINPUT, "shortcut", MACHINE_START_MENU + r"\Viewer.lnk",
             r"C:\ProgramData\Tools\viewer.exe")
    launch_refused(client, {"bundle_id": "Viewer"}, "your account can change")
    launch_refused(client, {"executable_path": r"C:\ProgramData\Tools\viewer.exe"},
                   "your account can change")
    # (d) A renamed cmd.exe, in the system's program folder, registered by
    # an installer as `notes`: its version resource still says Cmd.Exe
    # (cmdlike.exe: Wine's own cmd.exe has no version resource).
    notes_dir = win.prefix / "drive_c" / "Program Files" / "Notes"
    notes_dir.mkdir(exist_ok=True)
    ran = notes_dir / "ran.txt"
    ran.unlink(missing_ok=True)
    win.wine("cmd", "/c", "copy", "/y", CMDLIKE, r"C:\Program Files\Notes\notes.exe")
    win.wine("reg", "add", APP_PATHS + r"\notes.exe", "/ve", "/t", "REG_SZ", "/d",
             r"C:\Program Files\Notes\notes.exe", "/f")
    launch_refused(client, {"bundle_id": "notes"}, "runs commands")
    launch_refused(client, {"executable_path": r"C:\Program Files\Notes\notes.exe"},
                   "runs commands")
    time.sleep(1)
    assert pids_of(win, "viewer.exe") == set() and pids_of(win, "notes.exe") == set()
    assert pids_of(win, "notepad.exe") == before, "nothing started"
    assert not ran.exists(), "the renamed shell ran"
    # Started by hand, the stand-in does run (the check above can fail).
    win.wine(r"C:\Program Files\Notes\notes.exe")
    assert ran.read_text().strip() == "ran"
    # A file by its drive path reaches the app: notepad opens it.
    (win.prefix / "drive_c" / "ProgramData" / "report.txt").write_text("written\r\n")
    ack = client.call("APP_LAUNCH", {"bundle_id": "deskpad", "activate": False,
                                     "args": [r"C:\ProgramData\report.txt"]}, expect="ACK")

    def titled():
        windows = client.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]
        return [w for w in windows if w.get("pid") == ack["pid"]
                and "report" in w.get("title", "").lower()]

    try:
        poll(titled, timeout=20, what="notepad showing report.txt")
    finally:
        win.wine("taskkill", "/f", "/pid", str(ack["pid"]))
    # The audit names the program and the arguments of each launch.
    launches = [json.loads(line) for line in win_daemon.audit_log.read_text().splitlines()
                if '"app.launch"' in line]
    last = launches[-1]["target"]
    assert last["program"].lower() == NOTEPAD.lower(), last
    assert last["args"] == [r"C:\ProgramData\report.txt"], last
    # (Refusals in a row after the first are counted in one record.)
    refused = next(r for r in launches if r["target"].get("bundle_id") == "deskpad")
    assert refused["outcome"] == "capability_not_granted", refused
    assert refused["target"]["program"].lower() == NOTEPAD.lower(), refused
    assert refused["target"]["args"] == [
        r"/gpu-launcher=C:\windows\system32\cmd.exe /c calc"], refused


def test_a_connection_file_in_a_folder_every_account_may_write_is_refused(win):
    """Refused on Linux for the mode bits, on Windows for the folder's DACL
    (under Wine read back from the mode: 0777 gives Everyone write, 0755
    Everyone read, which is taken: unit
    `acl::tests::a_folder_every_account_may_write_to_is_told_from_one_they_may_read`)."""
    folder = Path(scratch_dir("win-open-folder-")) / "conn"
    folder.mkdir()
    folder.chmod(0o777)
    out = subprocess.run(["wine", str(windows_binary("deskhand")), "serve", "--listen",
                          "127.0.0.1:0", "--connection-file", str(folder / "endpoint.json")],
                         env=win.env(), capture_output=True, text=True, timeout=120)
    assert out.returncode != 0, out.stdout
    assert "can be written by others" in out.stderr and "conn" in out.stderr, out.stderr[-2000:]
    assert list(folder.iterdir()) == [], "nothing written"
