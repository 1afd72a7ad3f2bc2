"""The Windows backend, end to end: deskhand.exe (x86_64-pc-windows-gnu) in
a Wine virtual desktop, clients on the Linux side over loopback, the person
played with xdotool on the X display (a device's input to Windows)."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import time

import pytest

from daemon import agent_process
from desktop import CONTINUE_Y
from desktop.windows import WindowsDesktop, start, windows_binary, windows_unit_tests
from imaging import decode_png
from xhelpers import poll, scratch_dir

TEXT = "Hello, Wörld — 日本 🎉"
NOTEPAD = r"C:\windows\system32\notepad.exe"
# The tests' own Windows program (tests/wine/winput.c).
WINPUT = r"C:\deskhand-tests\winput.exe"
VK_SHIFT = 0x10
VK_LBUTTON = 0x01


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
    """Starts Wine's notepad (ending the ones tests started before); its
    window as WINDOW_LIST reports it."""
    win.close_apps()
    win.start_app("notepad")

    def listed():
        windows = client.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]
        return [w for w in windows if w["app_name"] == "notepad"]

    def started():
        return [w for w in listed() if w["is_focused"]]

    # The one just started comes up in front, with the focus.
    return poll(started, timeout=20, what="notepad's window in WINDOW_LIST, focused")[0]


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
    # No UI Automation under Wine, but MSAA answers: trees can be read.
    assert "a11y.tree" in features, features


def test_the_doctor_reports_the_windows_backend(win):
    out = subprocess.run(["wine", str(windows_binary("deskhand")), "doctor", "--json"],
                         env=win.env(), capture_output=True, text=True, timeout=60)
    r = json.loads(out.stdout)
    assert r["platform"] == "windows", r
    backend = next(b for b in r["backends"] if b["id"] == "windows")
    assert backend["status"] == "available", backend
    caps = {c["name"]: c["status"] for c in r["capabilities"]}
    for name in ("capture_window", "input_takeover", "takeover_indicator", "takeover_handback",
                 "clipboard_read", "clipboard_write"):
        assert caps[name] == "available", (name, caps)
    # MSAA reads and acts where UI Automation is missing.
    assert caps["read_tree"] == "available" and caps["act_semantic"] == "available", caps
    probes = {p["label"]: p for p in r["probes"]}
    assert probes["input desktop"]["status"] == "ok", probes
    assert probes["session"]["status"] == "ok", probes
    assert "interactive" in probes["session"]["message"], probes
    assert probes["integrity level"]["status"] == "ok", probes
    assert "integrity" in probes["integrity level"]["message"], probes
    assert "gdi" in probes["capture"]["message"], probes
    # Wine registers no UI Automation client object: the doctor names the
    # path in use (MSAA) and why, with the code.
    a11y = probes["accessibility"]
    assert a11y["status"] == "ok", a11y
    assert a11y["message"].startswith("MSAA (IAccessible), because "), a11y
    assert "CoCreateInstance(CUIAutomation) failed: 0x80040154 REGDB_E_CLASSNOTREG" in \
        a11y["message"], a11y


def test_the_human_doctor_is_ready_where_the_json_says_ready(win):
    exe = str(windows_binary("deskhand"))
    human = subprocess.run(["wine", exe, "doctor"], env=win.env(), capture_output=True,
                           text=True, timeout=60)
    r = json.loads(subprocess.run(["wine", exe, "doctor", "--json"], env=win.env(),
                                  capture_output=True, text=True, timeout=60).stdout)
    assert r["ready"] is True, r
    assert human.returncode == 0, human.stdout
    assert "✓ Screenshot: ready" in human.stdout and "✓ Input: ready" in human.stdout, human.stdout
    # Both name the accessibility path and the code of what is missing, alike.
    a11y = next(p for p in r["probes"] if p["label"] == "accessibility")
    assert "0x80040154" in a11y["message"], a11y
    assert f"✓ accessibility: {a11y['message']}" in human.stdout, human.stdout


@pytest.mark.parametrize("crate, windows_only", [
    ("deskhand-backend-windows", "test win::tests::"),
    ("deskhand-files", "test acl::tests::files_and_directories_get_the_owner_only_dacl"),
])
def test_the_windows_unit_tests_pass_in_the_wine_desktop(win, crate, windows_only):
    program = windows_unit_tests(crate)
    out = subprocess.run(["wine", str(program)], env=win.env(), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    # The tests that call Windows ran (not only the portable ones).
    assert windows_only in out.stdout, out.stdout[-3000:]


def test_a_screenshot_is_the_desktop_x_shows(win, client):
    points = ((5, 5), (640, 400), (1000, 700), (1279, 799))

    def mismatches():
        # Both sides read afresh: a window the test before closed may
        # still be leaving the screen.
        shot = decode_png(client.screenshot()["image"])
        assert (shot.width, shot.height) == (1280, 800)
        return [(x, y) for x, y in points if shot.pixel(x, y) != win.pixel(x, y)]

    poll(lambda: not mismatches(), timeout=5, what="a screenshot equal to X's image")


def test_include_cursor_draws_the_pointer(win, client):
    assert "screenshot.cursor" in client.hello["payload"]["computer_use_features"]
    client.act("mouse_move", coordinate=[700, 500])
    region = [680, 480, 740, 540]
    plain = decode_png(client.screenshot(region=region)["image"])
    drawn = decode_png(client.screenshot(region=region, include_cursor=True)["image"])
    pixels = [(x, y) for x in range(60) for y in range(60)]
    changed = [(x, y) for x, y in pixels if drawn.pixel(x, y) != plain.pixel(x, y)]
    assert len(changed) >= 10, "include_cursor drew no cursor"
    # Wine's arrow has its hot spot at its top-left: (700, 500) = (20, 20) here.
    assert min(x for x, _ in changed) in (19, 20, 21), changed[:5]
    assert min(y for _, y in changed) in (19, 20, 21), changed[:5]


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


# The frame's red (overlay/src/paint.rs).
RED = (0xE0, 0x1B, 0x24)


def test_the_frame_shows_and_the_persons_move_stops_typing_where_it_says(win, client):
    """(What arrived is read back on X11, test_takeover.py: Wine's notepad
    takes a long line slowly, and keys still queued when the person's click
    on Continue moves Wine's focus go with it.)"""
    window = notepad(win, client)
    client.take_over()
    try:
        x1, y1, x2, y2 = window["bounds"]
        centre = [(x1 + x2) // 2, (y1 + y2) // 2]
        client.act("left_click", coordinate=centre)
        # On an edge notepad does not cover (Wine draws an app it activates
        # over topmost windows; the frame is put back at the next act).
        edge = next((x, y) for x, y in ((640, 2), (2, 400), (1277, 400), (640, 797))
                    if not (x1 <= x < x2 and y1 <= y < y2))
        poll(lambda: win.pixel(*edge) == RED, timeout=5, what="the red frame on screen")
        # Long enough to be under way when the person moves.
        text = "".join(chr(ord("a") + i % 26) for i in range(20000))
        mid = client.send("INPUT_ACTION", {"action": "type", "text": text})
        time.sleep(0.3)
        win.person.move(200, 600)
        reply = client.reply_to(mid, timeout=60)
        assert reply["type"] == "ERROR", reply
        p = reply["payload"]
        assert p["code"] == "USER_TOOK_OVER" and p["details"]["paused_reason"] == "pointer_moved", p
        typed = p["details"]["typed_characters"]
        assert 0 < typed < len(text), typed
        # Wine draws the app it activated last over the paused frame until
        # deskhand's next act: notepad goes. And Continue takes no click
        # within 1.5 s of deskhand's own (the one into notepad).
        win.close_apps()
        time.sleep(1.6)
        click_continue(win)
        poll(lambda: client.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": centre})
             ["type"] == "ACK", timeout=5, what="the takeover resumed by Continue")
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


def launched_window_appears(win: WindowsDesktop, client, pid: int) -> None:
    """The app launched as `pid` shows a window in WINDOW_LIST; then it is
    ended."""
    def window():
        windows = client.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]
        return [w for w in windows if w.get("pid") == pid]

    poll(window, timeout=20, what=f"a window of the launched app (pid {pid})")
    win.wine("taskkill", "/f", "/pid", str(pid))


def test_an_installed_app_launches_and_its_window_appears(win, client):
    # What an installer does (as administrator): App Paths under HKLM.
    win.wine("reg", "add",
             r"HKLM\Software\Microsoft\Windows\CurrentVersion\App Paths\notepad.exe",
             "/ve", "/t", "REG_SZ", "/d", NOTEPAD, "/f")
    ack = client.call("APP_LAUNCH", {"bundle_id": "notepad"}, expect="ACK")
    launched_window_appears(win, client, ack["pid"])


def test_a_start_menu_shortcut_launches_its_app_and_the_persons_own_names_it_only(win, client):
    # What an installer does: a shortcut in the machine's Start Menu.
    machine = r"C:\ProgramData\Microsoft\Windows\Start Menu\Programs\Deskhand Pad.lnk"
    win.wine(WINPUT, "shortcut", machine, NOTEPAD)
    ack = client.call("APP_LAUNCH", {"bundle_id": "Deskhand Pad"}, expect="ACK")
    launched_window_appears(win, client, ack["pid"])
    # One in the person's own Start Menu (anything in their account could
    # have made it) names its program but launches nothing.
    person = r"C:\users\root\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Mines.lnk"
    win.wine(WINPUT, "shortcut", person, r"C:\windows\system32\winemine.exe")
    msg = client.request("APP_LAUNCH", {"bundle_id": "Mines"})
    assert msg["type"] == "ERROR", msg
    assert "your account can change" in msg["payload"]["message"], msg


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


def kill_agent_holding(win: WindowsDesktop, daemon, action: dict, vk: int, what: str) -> None:
    """An agent process sends `action`, which holds `vk`, and is killed -9
    while it holds it: deskhand releases it at once."""
    agent = agent_process(daemon, action)
    try:
        poll(lambda: vk in held(win), timeout=10, what=f"{what} to be held")
    finally:
        agent.kill()
        agent.wait()
    poll(lambda: not held(win), timeout=3, what=f"{what} released at once")


def test_a_client_killed_mid_hold_leaves_nothing_held(win, win_daemon):
    kill_agent_holding(win, win_daemon, {"action": "hold_key", "key": "shift",
                                         "duration_ms": 20000}, VK_SHIFT, "shift")


def test_a_client_killed_mid_drag_leaves_no_button_held(win, win_daemon):
    # A drag as agents make it: the button pressed, then moves. Pressed
    # where the pointer is, so that the other tests' client finds it where
    # its own acts left it.
    x, y = win.pointer()
    kill_agent_holding(win, win_daemon, {"action": "mouse_down", "button": "left",
                                         "coordinate": [x, y]}, VK_LBUTTON, "the left button")


def test_a_covered_window_is_captured_as_its_own_image(win, client):
    first = notepad(win, client)
    client.act("type", text="seen through the window above")
    alone = decode_png(client.screenshot(window_id=first["window_id"])["image"])
    # A second notepad opens over most of the first.
    win.start_app("notepad")

    def two():
        windows = client.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]
        return len([w for w in windows if w["app_name"] == "notepad"]) == 2
    poll(two, timeout=20, what="a second notepad")
    x, y, width, height = first["bounds"]
    desktop = decode_png(client.screenshot(region=[x, y, x + width, y + height])["image"])
    covered = decode_png(client.screenshot(window_id=first["window_id"])["image"])
    assert (covered.width, covered.height) == (alone.width, alone.height)
    # Below the title bar (whose colour follows the focus): the text area
    # as it was, though the desktop shows the other window there.
    rows = range(50, alone.height - 10)
    pixels = [(px, py) for px in range(alone.width) for py in rows]
    same = sum(covered.pixel(px, py) == alone.pixel(px, py) for px, py in pixels)
    shown = sum(desktop.pixel(px, py) == alone.pixel(px, py) for px, py in pixels)
    assert same >= 0.98 * len(pixels), (same, len(pixels))
    assert shown < 0.9 * len(pixels), "the second notepad does not cover the first"


def test_an_mcp_client_types_into_an_app(win, win_daemon, client):
    """The official MCP SDK over HTTP against deskhand.exe: a takeover
    session clicks into notepad, types, selects and copies."""
    from mcp_client import http, run

    title = notepad(win, client)["title"]
    client.close()  # its takeover ends: the MCP session takes over

    async def body():
        async with http(win_daemon, "auto") as s:
            state = await s.start(input="takeover")
            assert state["takeover"]["on"] is True, state

            windows = (await s.call("list_windows"))["windows"]
            w = [w for w in windows if w["focused"]][0]
            assert w["title"] == title, windows
            f = w["frame"]
            x, y, width, height = f["x"], f["y"], f["width"], f["height"]
            r = await s.call("click", {"window_id": w["window_id"], "x": x + width // 2,
                                       "y": y + height // 2})
            assert r["effect"] == "sent", r
            r = await s.call("type_text", {"window_id": w["window_id"], "text": "mcp on Windows"})
            assert r["typed_characters"] == len("mcp on Windows"), r
            for key in ("ctrl+a", "ctrl+c"):
                await s.call("press_key", {"window_id": w["window_id"], "key": key})
            shot = await s.raw("screenshot", {"window_id": w["window_id"]})
            assert not shot.is_error, shot.structured_content
            image = decode_png(base64.b64decode(shot.content[1].data))
            assert (image.width, image.height) == (width, height), (image.width, image.height)
            await s.end()

    run(body())
    poll(lambda: win.clipboard() == "mcp on Windows", timeout=5, what="the typed text copied")


def test_an_mcp_client_reads_and_sets_notepads_text_through_msaa(win, win_daemon, client):
    """Wine has no UI Automation: the official MCP SDK reads notepad's tree
    through MSAA (its Edit and the text in it), sets the text with
    set_value (readback match), and the text is read back independently:
    selected and copied with keys, from the X clipboard."""
    from mcp_client import http, run

    title = notepad(win, client)["title"]
    client.close()  # its takeover ends: the MCP session takes over
    first, second = "typed before MSAA", "Wörld, set through MSAA ✓"

    async def body():
        async with http(win_daemon, "auto") as s:
            await s.start(input="takeover")
            windows = (await s.call("list_windows"))["windows"]
            w = [w for w in windows if w["title"] == title][0]
            wid = w["window_id"]
            r = await s.call("type_text", {"window_id": wid, "text": first})
            assert r["typed_characters"] == len(first), r

            def edits(state):
                assert "elements" in state, state
                return [e for e in state["elements"] if e["role"] == "text_field"]

            async def edit_with(text):
                """The tree once the Edit holds `text` (typed keys may
                still be arriving), and the Edit's row."""
                deadline = time.monotonic() + 10
                while True:
                    state = await s.call("get_window_state", {"window_id": wid,
                                                              "include_screenshot": False})
                    found = [e for e in edits(state) if e.get("value") == text]
                    if found or time.monotonic() > deadline:
                        break
                    await asyncio.sleep(0.2)
                assert found, state.get("tree_text", state)
                return state, found[0]

            state, edit = await edit_with(first)
            # Wine's window objects answer no role: the client stands in.
            assert state["elements"][0]["label"] == title, state["tree_text"]
            assert "editable" in edit["states"], edit
            r = await s.call("set_value", {"element_token": edit["element_token"],
                                           "value": second})
            assert r["readback"] == "match" and r["effect"] == "confirmed", r
            assert r["verified"] is True and r["path"] == "accessibility", r
            await edit_with(second)
            for key in ("ctrl+a", "ctrl+c"):
                await s.call("press_key", {"window_id": wid, "key": key})
            await s.end()

    try:
        run(body())
    except BaseException as e:
        raise AssertionError(f"{e!r}\n{win_daemon.stderr_tail()}") from e
    poll(lambda: win.clipboard() == second, timeout=5, what="the text set through MSAA, copied")


def test_a_computer_use_loop_types_into_an_app(win, win_daemon, client):
    """Anthropic's computer tool actions on /v1/computer/anthropic, as a
    vendor's loop posts them (no session header)."""
    from computer_http import Computer, tool_result_text

    window = notepad(win, client)
    client.close()  # its takeover ends: the loop's own session takes over
    x, y, w, h = window["bounds"]
    loop = Computer(win_daemon, default=True)
    blocks = [{"action": "screenshot"},
              # at scale 0.5 (the screenshot is 640x400)
              {"action": "left_click", "coordinate": [(x + w // 2) // 2, (y + h // 2) // 2]},
              {"action": "type", "text": "computer use on Windows"},
              {"action": "key", "text": "ctrl+a"},
              {"action": "key", "text": "ctrl+c"}]
    try:
        for b in blocks:
            r = loop.anthropic({"type": "tool_use", "id": "t", "name": "computer", "input": b},
                               "?max_width=640&max_height=400")
            assert not r.get("is_error"), (b, tool_result_text(r))
    finally:
        loop.end()
    poll(lambda: win.clipboard() == "computer use on Windows", timeout=5,
         what="the typed text copied")


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


def test_the_kill_switch_ends_the_takeover_and_releases_everything(win, client):
    client.act("mouse_down", coordinate=[700, 500], button="left")
    try:
        # Each look starts a Windows program: slow on a loaded machine.
        poll(lambda: 0x01 in held(win), timeout=20, what="the left button held")
    except AssertionError as e:
        # Say whether the takeover was paused (and the button released).
        state = client.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [710, 510]})
        raise AssertionError(f"{e}; an act now gets {state}, pushed: {client.events}") from None
    win.person.key("ctrl+alt+Escape")
    state = client.pushed_state()
    while state.get("on"):
        state = client.pushed_state()  # a paused state may come first
    assert state["reason"] == "kill_switch", state
    poll(lambda: not held(win), timeout=5, what="nothing held after the kill switch")
