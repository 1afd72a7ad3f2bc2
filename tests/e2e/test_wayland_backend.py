"""The Wayland backend, end to end: deskhand in a private headless GNOME
session (gnome-shell 43, the desktop portals, PipeWire), the portal's
dialogs answered by the person through AT-SPI, the person's hand played by
mutter's own RemoteDesktop device, and what the screen shows read from
mutter's own screencast (desktop/wayland.py)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from daemon import binary
from desktop.base import CONTINUE_Y
from desktop.wayland import SYSTEM_PYTHON, GnomeDesktop, start
from imaging import decode_png
from xhelpers import REPO, poll, scratch_dir

TEXT = "Hello, Wörld — 日本"
FORM = REPO / "tests" / "fixtures" / "wayland_form.py"
RED = (0xE0, 0x1B, 0x24)
CONTINUE_GREEN = (0x26, 0x7A, 0x34)


@pytest.fixture(scope="module")
def gnome():
    # With XWayland, as a person's GNOME session has it: deskhand is given
    # its X display too, and must drive the session through Wayland.
    desktop = start("1280x800", xwayland=True)
    yield desktop
    desktop.stop()


def serve_granted(gnome: GnomeDesktop, *args: str, expect=("Screen Share", "Remote desktop")):
    """deskhand serve with input consented, the portal's dialogs answered
    (those `expect` names, in order)."""
    consent = scratch_dir("wl-consent-") + "/consent.json"
    with open(consent, "w") as f:
        f.write('{"input": true}')
    d = gnome.serve("--consent", consent, *args)
    for title in expect:
        answered = gnome.answer_portal("share")
        assert answered.get("dialog") == title, (answered, d.stderr_tail())
    c = d.client()
    try:
        # The grant reaches deskhand a moment after the dialog goes.
        poll(lambda: c.request("INPUT_ACTION", {"action": "mouse_move",
                                                "coordinate": [1000, 700]})["type"] == "ACK",
             timeout=10, what="input granted")
    finally:
        c.close()
    return d


@pytest.fixture(scope="module")
def served(gnome):
    d = serve_granted(gnome)
    yield d
    d.kill()


@pytest.fixture
def client(served):
    c = served.client()
    yield c
    c.close()


def new_form(gnome: GnomeDesktop, title: str = "deskhand wayland form"):
    """A GTK form on screen (Wayland-native) titled `title`, and where it
    saves."""
    saved = scratch_dir("wl-form-") + "/saved.txt"
    proc = gnome.start_app(SYSTEM_PYTHON, str(FORM), "--saved", saved, "--title", title)
    poll(lambda: any(w["title"] == title for w in gnome.windows()),
         timeout=20, what="the form's window")
    return proc, saved


@pytest.fixture(scope="module")
def form(gnome):
    return new_form(gnome)


def form_window(client, title: str = "deskhand wayland form") -> dict:
    def listed():
        windows = client.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]
        return next((w for w in windows if w["title"] == title), None)

    return poll(listed, timeout=10, what=f"{title!r} in WINDOW_LIST")


def saved_text(saved: str) -> str | None:
    return open(saved, encoding="utf-8").read() if os.path.exists(saved) else None


def test_doctor_names_the_wayland_backend_and_the_extension(gnome):
    out = subprocess.run([binary(), "doctor", "--json"], env=gnome.env(), capture_output=True,
                         text=True, timeout=60)
    report = json.loads(out.stdout)
    assert report["session_type"] == "wayland", report
    assert any(b["id"] == "wayland-portal" for b in report["backends"]), report["backends"]
    probes = {p["label"]: p for p in report["probes"]}
    assert probes["GNOME Shell extension"]["status"] == "ok", probes
    assert probes["windows"]["status"] == "ok" and "desktop bounds" in probes["windows"]["message"]
    # XWayland's display (set) shows no Wayland app: not offered.
    assert gnome.env().get("DISPLAY"), "the session has XWayland"
    assert not any(b["id"] == "x11" for b in report["backends"]), report["backends"]


def test_doctor_says_the_extension_is_not_enabled_when_the_person_turned_it_off(gnome):
    def extension_probe() -> dict:
        out = subprocess.run([binary(), "doctor", "--json"], env=gnome.env(),
                             capture_output=True, text=True, timeout=60)
        probes = {p["label"]: p for p in json.loads(out.stdout)["probes"]}
        return probes["GNOME Shell extension"]

    enabled = "['deskhand@deskhand.dev', 'gnome-probe@deskhand.test']"
    gnome.gsettings("org.gnome.shell", "enabled-extensions", "['gnome-probe@deskhand.test']")
    try:
        off = poll(lambda: (p := extension_probe())["status"] != "ok" and p, timeout=20,
                   what="the doctor to see the extension off")
        assert "installed but not enabled" in off["message"], off
        assert "gnome-extensions enable deskhand@deskhand.dev" in off["message"], off
    finally:
        gnome.gsettings("org.gnome.shell", "enabled-extensions", enabled)
    poll(lambda: extension_probe()["status"] == "ok", timeout=20, what="the extension back on")


def test_an_xwayland_app_is_seen_through_the_wayland_backend(gnome, served, client):
    """deskhand was given XWayland's display and drives the session through
    Wayland: an X11 app's red window is in its screenshot, not black."""
    assert served.display == gnome.name, served.ready
    title = "deskhand xwayland term"
    gnome.start_app("xterm", "-bg", "red", "-geometry", "40x10+300+300", "-title", title)
    x1, y1, x2, y2 = form_window(client, title)["bounds"]

    def red_inside():
        shot = decode_png(client.screenshot()["image"])
        return shot.pixel((x1 + x2) // 2, (y1 + y2) // 2) == (255, 0, 0)

    poll(red_inside, timeout=10, what="the X11 app's red in deskhand's screenshot")


def test_a_screenshot_is_what_the_compositor_shows(gnome, form, client):
    # Clear of the frame the client's takeover shows (the agent never sees it).
    points = ((20, 20), (640, 400), (300, 200), (1270, 790))

    def mismatches():
        shot = decode_png(client.screenshot()["image"])
        assert (shot.width, shot.height) == (1280, 800)
        screen = gnome.screen()
        return [(x, y, shot.pixel(x, y), screen.pixel(x, y)) for x, y in points
                if shot.pixel(x, y) != screen.pixel(x, y)]

    last = []

    def equal():
        last[:] = mismatches()
        return not last

    try:
        poll(equal, timeout=10, what="a screenshot equal to mutter's own")
    except AssertionError as e:
        raise AssertionError(f"{e}: differing (x, y, ours, mutter's): {last}") from None


def test_the_window_list_has_the_form_with_its_desktop_bounds(gnome, form, client):
    w = form_window(client)
    shell = next(r for r in gnome.windows() if r["title"] == "deskhand wayland form")
    r = shell["rect"]
    assert w["bounds"] == [r["x"], r["y"], r["x"] + r["width"], r["y"] + r["height"]], (w, shell)
    assert w["pid"] == form[0].pid


def test_a_click_and_typed_text_arrive_exactly(gnome, form, client):
    _, saved = form
    w = form_window(client)
    x, y, x2, y2 = w["bounds"]
    width, height = x2 - x, y2 - y
    assert client.take_over()["type"] == "TAKEOVER_STATE"
    try:
        client.act("left_click", coordinate=[x + width // 2, y + int(height * 0.3)])
        client.act("type", text=TEXT + "!")
        client.act("key", text="BackSpace")  # a key, by keysym
        client.act("left_click", coordinate=[x + width // 2, y + int(height * 0.85)])
        poll(lambda: saved_text(saved) == TEXT, timeout=10, what="the typed text saved by the form")
        assert gnome.pointer() == (x + width // 2, y + int(height * 0.85))
        # The button has the focus now: no field takes input-method text,
        # and no key of the layout sends ö. Refused, nothing typed.
        msg = client.request("INPUT_ACTION", {"action": "type", "text": "aö"})
        assert msg["type"] == "ERROR" and "cannot be typed" in msg["payload"]["message"], msg
    finally:
        client.take_over(False)


def paused(client, reason: str) -> None:
    def state():
        msg = client.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [900, 700]})
        return msg["payload"].get("details", {}).get("paused_reason")

    poll(lambda: state() == reason, timeout=5, what=f"a pause with {reason}")


def test_takeover_draws_the_frame_the_agent_never_sees_and_the_person_takes_over(gnome, client):
    assert client.take_over()["type"] == "TAKEOVER_STATE"
    try:
        client.act("mouse_move", coordinate=[700, 500])
        poll(lambda: gnome.pixel(640, 2) == RED, timeout=5, what="the red frame on screen")
        bar = gnome.continue_y - CONTINUE_Y
        assert gnome.pixel(640, bar // 2) != RED, "the label covers GNOME's clock"
        assert gnome.pixel(200, bar + 8) == RED, "the label (its top padding) below the top bar"
        # A notification's banner shows over the label, not under it.
        gnome.notify("A notification for the person")
        poll(lambda: gnome.pixel(640, bar + 8) != RED, timeout=5,
             what="the notification's banner over the label")
        shot = decode_png(client.screenshot()["image"])
        assert shot.pixel(640, 2) != RED, "the frame is in what the agent gets"
        gnome.person.move(200, 600)
        paused(client, "pointer_moved")
        poll(lambda: gnome.pixel(456, gnome.continue_y) == CONTINUE_GREEN, timeout=5,
             what="the Continue button on screen")
        # A click on Continue right after one of deskhand's own (the test
        # before clicked Save) is not taken for the person's.
        time.sleep(1.6)
        gnome.person.real_click(640, gnome.continue_y)

        def resumed():
            msg = client.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [650, 450]})
            return msg["type"] == "ACK"

        poll(resumed, timeout=5, what="the takeover resumed by Continue")
    finally:
        client.take_over(False)
    poll(lambda: gnome.pixel(640, 2) != RED, timeout=5, what="the frame gone")


def test_the_port_wants_the_token(served):
    """The attack catalogue's port rows on Wayland: token, Host, Origin."""
    from daemon import raw_upgrade
    host = {"Host": f"127.0.0.1:{served.port}"}
    auth = {**host, "Authorization": f"Bearer {served.token}"}
    assert raw_upgrade(served.port, {**host, "Authorization": "Bearer " + "0" * 64}) == 401
    assert raw_upgrade(served.port, {**auth, "Origin": "http://evil.example"}) == 403
    assert raw_upgrade(served.port, {**auth, "Host": f"evil.example:{served.port}"}) == 403
    assert raw_upgrade(served.port, auth) == 101


def test_an_mcp_client_types_into_a_wayland_app(gnome, served):
    """The official MCP SDK over HTTP: a takeover session clicks into the
    form, types, and clicks Save."""
    from mcp_client import http, run

    proc, saved = new_form(gnome, "deskhand mcp form")

    async def body():
        async with http(served, "auto") as s:
            state = await s.start(input="takeover")
            assert state["takeover"]["on"] is True, state
            w = None
            for _ in range(50):
                windows = (await s.call("list_windows"))["windows"]
                w = next((w for w in windows if w["title"] == "deskhand mcp form"), None)
                if w:
                    break
                await asyncio.sleep(0.2)
            assert w, windows
            f = w["frame"]
            x, y, width, height = f["x"], f["y"], f["width"], f["height"]
            for fy, text in ((0.3, "mcp on Wayland — ü"), (0.85, None)):
                r = await s.call("click", {"window_id": w["window_id"], "x": x + width // 2,
                                           "y": y + int(height * fy)})
                assert r["effect"] == "sent", r
                if text:
                    r = await s.call("type_text", {"window_id": w["window_id"], "text": text})
                    assert r["typed_characters"] == len(text), r
            await s.end()

    try:
        run(body())
        poll(lambda: saved_text(saved) == "mcp on Wayland — ü", timeout=10,
             what="the typed text saved")
    finally:
        proc.kill()


def test_a_stock_mcp_clients_bare_environment_reaches_the_gnome_session(gnome, served, form,
                                                                        tmp_path):
    """`deskhand mcp` as a stock MCP client starts it (the SDK's default
    environment: no WAYLAND_DISPLAY, no XDG_RUNTIME_DIR, no session bus)
    relays to the deskhand of the person's GNOME session, found in the
    login's runtime directory: the form is in its window list."""
    import mcp
    from mcp_client import Session, run
    from test_mcp_relay import bare_stdio, login_runtime_dir

    with login_runtime_dir() as runtime:
        (runtime / "deskhand").mkdir(mode=0o700)
        shutil.copy(served.connection_file, runtime / "deskhand" / "endpoint.json")

        async def body():
            with open(tmp_path / "stderr.log", "w") as errlog:
                async with mcp.Client(mcp.stdio_client(bare_stdio(tmp_path), errlog=errlog),
                                      mode="auto") as c:
                    assert f"the Wayland session {gnome.name}" in (c.instructions or "")
                    s = Session(c)
                    await s.start(input="headless")
                    titles = [w["title"] for w in (await s.call("list_windows"))["windows"]]
                    assert "deskhand wayland form" in titles, titles
                    await s.end()

        run(body())


def placed(gnome: GnomeDesktop, title: str) -> dict:
    """The compositor's row of the window titled `title`, once it is
    mapped and stays where it was put."""
    seen = []

    def settled():
        row = next((w for w in gnome.windows() if w["title"] == title and w["rect"]["width"]),
                   None)
        seen.append(row)
        return row if row and len(seen) > 1 and seen[-2] == row else None

    return poll(settled, timeout=20, interval=0.3, what=f"{title!r} placed")


def test_focus_and_accessibility_marks_are_placed_on_the_desktop(gnome, served):
    """The GTK 3 accessibility fixture: bring_to_front focuses it, and its
    elements (which a Wayland client measures from its own surface) are
    where the screen shows them: the Save mark's box, the password's
    blackout, and a click at the mark's centre that presses Save."""
    from mcp_client import http, run, window_id

    tmp = scratch_dir("wl-a11y-")
    saved, bounds_path = f"{tmp}/saved.txt", f"{tmp}/bounds.json"
    proc = gnome.start_app(SYSTEM_PYTHON, str(REPO / "tests/fixtures/a11y_form.py"),
                           "--saved", saved, "--bounds", bounds_path, "--rows", "5")
    form = "deskhand a11y form"
    shell = placed(gnome, form)
    os.kill(proc.pid, signal.SIGUSR1)
    poll(lambda: os.path.exists(bounds_path), what="the fixture's widget bounds")
    with open(bounds_path) as f:
        inside = json.load(f)  # from the surface's corner: GTK knows no more on Wayland

    def on_desktop(name: str) -> list[int]:
        x, y, w, h = inside[name]
        return [x + shell["buffer"]["x"], y + shell["buffer"]["y"], w, h]

    async def body():
        async with http(served, "auto") as s:
            await s.start(input="takeover")
            try:
                await marks_in(s)
            finally:
                await s.end()

    async def marks_in(s):
        windows = (await s.call("list_windows"))["windows"]
        await s.call("bring_to_front", {"window_id": window_id(windows, form)})
        poll(lambda: any(w["title"] == form and w["focused"] for w in gnome.windows()),
             timeout=5, what="the form to have the focus")
        for _ in range(50):
            r = await s.raw("computer", {"action": {"type": "screenshot"}, "marks": True})
            marks = (r.structured_content or {}).get("marks", {}).get("marks", [])
            save = next((m for m in marks if m["role"] == "button"
                         and m["label"] == "Save"), None)
            if save:
                break
            await asyncio.sleep(0.2)
        assert save, r
        box = save["box"]
        got = [box["x"], box["y"], box["width"], box["height"]]
        assert all(abs(a - b) <= 2 for a, b in zip(got, on_desktop("Save"))), (got, shell)
        img = decode_png(base64.b64decode(next(c for c in r.content
                                               if c.type == "image").data))
        px, py, pw, ph = on_desktop("Password")
        assert img.pixel(px + pw // 2, py + ph // 2) == (0, 0, 0), "the password is blacked out"
        x, y = save["center"]
        await s.call("computer", {"action": {"type": "click", "x": x, "y": y}})
        poll(lambda: os.path.exists(saved), timeout=10,
             what="the click at Save's mark to press it")

    try:
        run(body())
    finally:
        proc.kill()


def test_a_computer_use_loop_types_into_a_wayland_app(gnome, served):
    """Anthropic's computer tool actions on /v1/computer/anthropic, as a
    vendor's loop posts them (no session header)."""
    from computer_http import Computer, tool_result_text

    proc, saved = new_form(gnome, "deskhand computer form")
    c = served.client(takeover=False)
    try:
        x, y, x2, y2 = form_window(c, "deskhand computer form")["bounds"]
    finally:
        c.close()
    mid = (x + x2) // 2
    loop = Computer(served, default=True)
    blocks = [{"action": "screenshot"},
              # at scale 0.5 (the screenshot is 640x400)
              {"action": "left_click", "coordinate": [mid // 2, (y + (y2 - y) * 3 // 10) // 2]},
              {"action": "type", "text": "computer use on Wayland"},
              {"action": "left_click", "coordinate": [mid // 2, (y + (y2 - y) * 85 // 100) // 2]}]
    try:
        for b in blocks:
            r = loop.anthropic({"type": "tool_use", "id": "t", "name": "computer", "input": b},
                               "?max_width=640&max_height=400")
            assert not r.get("is_error"), (b, tool_result_text(r))
    finally:
        loop.end()
        proc.kill()
    poll(lambda: saved_text(saved) == "computer use on Wayland", timeout=10,
         what="the typed text saved")


def test_the_extension_answers_deskhand_alone(gnome, served):
    """Another program of the session cannot draw, type, read windows or
    follow the pointer through deskhand's GNOME Shell extension: it
    answers the connection holding dev.deskhand.Engine only."""
    calls = (("ShowParts", ["[]"]), ("HideParts", []), ("CommitText", ["'rm -rf ~'"]),
             ("ListWindows", []), ("Pointer", []), ("Focus", ["1", "true"]))
    for method, args in calls:
        out = subprocess.run(["gdbus", "call", "--session", "-d", "org.gnome.Shell", "-o",
                              "/dev/deskhand/Shell", "-m", f"dev.deskhand.Shell1.{method}", *args],
                             env=gnome.env(), capture_output=True, text=True, timeout=10)
        assert out.returncode != 0 and "AccessDenied" in out.stderr, (method, out)


def test_a_launched_app_opens_its_window_in_the_session(client):
    ack = client.call("APP_LAUNCH", {"bundle_id": "gtk3-demo"}, expect="ACK")
    try:
        def listed():
            windows = client.call("WINDOW_LIST_REQUEST", {},
                                  expect="WINDOW_LIST_RESPONSE")["windows"]
            return [w for w in windows if w["pid"] == ack["pid"]]

        w = poll(listed, timeout=20, what="gtk3-demo's window in WINDOW_LIST")[0]
        # A Wayland client of the session (its app id), not an X11 one.
        assert w["app_name"] == "org.gtk.Demo", w
    finally:
        os.kill(ack["pid"], signal.SIGTERM)


def health(daemon) -> dict:
    """MCP's health_report of this daemon."""
    from mcp_client import http, run

    async def body():
        async with http(daemon, "auto") as s:
            return await s.call("health_report")

    return run(body())


def grants(daemon) -> dict[str, str]:
    """What MCP's health_report says of the capture and input
    capabilities (the portals' grants as this deskhand holds them):
    `available` or the reason code."""
    caps = {c["name"]: c for c in health(daemon)["capabilities"]}
    return {name: caps[name].get("reason_code") or caps[name]["status"]
            for name in ("capture_window", "input_takeover")}


def test_the_health_report_says_how_the_grants_stand(served):
    assert grants(served) == {"capture_window": "available", "input_takeover": "available"}
    report = health(served)
    # GNOME 43's RemoteDesktop portal brings no clipboard: said, not faked.
    caps = {c["name"]: c for c in report["capabilities"]}
    for name in ("clipboard_read", "clipboard_write"):
        assert caps[name].get("reason_code") == "compositor_unsupported", caps[name]
    # GNOME 43 has no global-shortcuts portal: no chord, and it says so.
    probes = {p["label"]: p for p in report["probes"]}
    kill = probes["kill switch"]
    assert kill["status"] != "ok" and "no global-shortcuts portal" in kill["message"], kill
    assert "Stop button" in kill["message"], kill
    # GNOME 43's RemoteDesktop portal (version 1) has no ConnectToEIS.
    remote = probes["remote desktop portal"]
    assert "input through the portal's Notify calls" in remote["message"], remote


def test_a_second_start_reuses_the_screencast_grant_and_denials_and_stops_are_said(gnome, served):
    served.kill()
    consent = scratch_dir("wl-consent-") + "/consent.json"
    with open(consent, "w") as f:
        f.write('{"input": true}')
    d = gnome.serve("--consent", consent)
    try:
        # No screen-sharing dialog this time: the first is the input one,
        # and input waits for the person's answer.
        poll(lambda: grants(d) == {"capture_window": "available",
                                   "input_takeover": "portal_pending"},
             timeout=10, what="the screencast restored, input pending")
        # While the person answers, the doctor says what the answer will
        # bring: GNOME 43's portal has no clipboard (as once granted), and
        # the kill switch waits for the dialogs, in the person's words.
        report = health(d)
        caps = {c["name"]: c for c in report["capabilities"]}
        for name in ("clipboard_read", "clipboard_write"):
            assert caps[name].get("reason_code") == "compositor_unsupported", caps[name]
        probes = {p["label"]: p for p in report["probes"]}
        kill = probes["kill switch"]["message"]
        assert "answered the desktop's dialogs" in kill and "deskhand serve" not in kill, kill
        # The extension draws the frame: the layer shell is not needed,
        # and not flagged.
        assert probes["layer shell"]["status"] == "ok", probes["layer shell"]
        # The restore token is in the session's keychain, not in a file.
        assert any(a.startswith("screencast-grant-") for a in gnome.keychain_accounts()), \
            gnome.keychain_accounts()
        state = gnome.home / ".local" / "state" / "deskhand"
        assert not list(state.glob("screencast-grant*")), list(state.iterdir())
        # Meanwhile an agent's input is told to wait, not that it cannot be.
        waiting = d.client()
        try:
            waiting.take_over()
            msg = waiting.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [9, 9]})
            assert msg["type"] == "ERROR" and msg["payload"]["code"] == "PERMISSION_PENDING", msg
            assert "Remote Desktop dialog" in msg["payload"]["message"], msg
        finally:
            waiting.take_over(False)
            waiting.close()
        answered = gnome.answer_portal("cancel")
        assert answered.get("dialog") == "Remote desktop", answered
        poll(lambda: grants(d)["input_takeover"] == "portal_remote_desktop_denied",
             timeout=10, what="the health report to name the denial")
        c = d.client()
        try:
            shot = decode_png(poll(lambda: c.screenshot(), timeout=10,
                                   what="a screenshot")["image"])
            assert (shot.width, shot.height) == (1280, 800)
            c.take_over()

            def refused():
                msg = c.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [10, 10]})
                return msg if msg["type"] == "ERROR" and "denied" in json.dumps(msg) else None

            poll(refused, timeout=10, what="input refused as denied")
            # The person stops the sharing from GNOME's top bar (the ×
            # of its screen-sharing indicator): no stale frames after.
            gnome.person.stop_sharing(1204, 15)
            gnome.new_person()

            def ended():
                msg = c.request("SCREENSHOT_REQUEST", {})
                return msg if msg["type"] == "ERROR" and "ended" in json.dumps(msg) else None

            poll(ended, timeout=10, what="screenshots refused once the sharing was stopped")
        finally:
            c.close()
    finally:
        d.kill()
    time.sleep(0.2)


def test_a_takeover_begun_before_input_was_allowed_goes_on_once_it_is(gnome):
    """An agent takes over and acts while the desktop's Remote Desktop
    dialog still waits: its acts are told to wait (nothing sent, nothing
    left for hand-back to trip on), and once the person allows input the
    same takeover acts, not paused by the person's answer."""
    consent = scratch_dir("wl-consent-") + "/consent.json"
    with open(consent, "w") as f:
        f.write('{"input": true}')
    d = gnome.serve("--consent", consent)
    c = None
    try:
        poll(lambda: grants(d).get("input_takeover") == "portal_pending", timeout=20,
             what="input pending")
        c = d.client()
        c.take_over()
        for x in (300, 320):
            msg = c.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [x, 300]})
            assert msg["payload"]["code"] == "PERMISSION_PENDING", msg
        # Longer than hand-back keeps deskhand's old targets.
        time.sleep(1.0)
        answered = gnome.answer_portal("share")
        assert answered.get("dialog") == "Remote desktop", answered

        def acted():
            msg = c.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [640, 400]})
            assert msg["payload"].get("code") != "USER_TOOK_OVER", msg
            return msg["type"] == "ACK"

        poll(acted, timeout=10, what="the takeover acting once input was allowed")
        assert gnome.pointer() == (640, 400)
    finally:
        if c is not None:
            c.take_over(False)
            c.close()
        d.kill()


def dialog_words(gnome: GnomeDesktop) -> str | None:
    """The consent dialog's words, as a screen reader reads them, once its
    page has them."""
    done = subprocess.run([SYSTEM_PYTHON, str(REPO / "tests/fixtures/window_text.py"),
                           "deskhand: your answer"], env=gnome.env(), capture_output=True,
                          text=True, timeout=60)
    return done.stdout if done.returncode == 0 and "To stop it" in done.stdout else None


def start_app(gnome: GnomeDesktop, served, *args: str):
    """The tray app in the GNOME session, in place of `served`, with the
    portal's dialogs answered."""
    from daemon import Daemon
    from test_app import APP

    served.kill()
    settings = Path(scratch_dir("wl-app-")) / "settings.toml"
    settings.write_text("consent_timeout_s = 60\n")
    app = Daemon("--settings", str(settings), *args, command=[APP],
                 env=dict(gnome.env(), XDG_STATE_HOME=str(gnome.home / ".local/state")))
    # The screencast's grant may be restored; input is asked again.
    answered = gnome.answer_portal("share")
    if answered.get("dialog") == "Screen Share":
        answered = gnome.answer_portal("share")
    assert answered.get("dialog") == "Remote desktop", (answered, app.stderr_tail())
    return app


def test_the_tray_app_asks_the_person_in_a_wayland_dialog(gnome, served):
    """The tray app in the GNOME session: an agent's takeover opens the
    consent dialog as a Wayland window, naming only the ways to stop that
    work there, and the person's clicks tick the takeover box and Allow
    it."""
    from test_app_dialogs import ALLOW, TAKEOVER_BOX

    app = start_app(gnome, served)
    try:
        c = app.client(takeover=False, hello_ack={"client": "wayland dialog agent"})
        mid = c.send("TAKEOVER_REQUEST", {"on": True})
        placed(gnome, "deskhand: your answer")
        # A click before the page has loaded does nothing, and the window
        # may still be placed and sized: wait until a screen reader reads
        # its words, then take where it is.
        words = poll(lambda: dialog_words(gnome), timeout=30, what="the consent page's words")
        # GNOME 43 has no global-shortcuts portal: no chord stops agents
        # there, and deskhand's menu is in the top bar.
        assert "ctrl+alt+Escape" not in words, words
        assert "Stop all agents in deskhand's menu in the top bar" in words, words
        dialog = placed(gnome, "deskhand: your answer")["rect"]
        # GTK draws its title bar inside the window: the page is below it.
        top = dialog["y"] + dialog["height"] - 520
        for x, y in (TAKEOVER_BOX, ALLOW):
            time.sleep(0.3)
            gnome.person.real_click(dialog["x"] + x, top + y)
        reply = c.reply_to(mid, timeout=20)
        assert reply["type"] == "TAKEOVER_STATE" and reply["payload"]["on"] is True, reply
        c.close()
    finally:
        assert app.terminate() == 0, app.stderr_tail()


def open_top_bar_menu(gnome: GnomeDesktop) -> dict:
    """The person clicks deskhand's button in the top bar: its menu, open."""
    bar = poll(gnome.status_menu, timeout=20, what="deskhand's menu in the top bar")
    r = bar["rect"]
    gnome.person.real_click(r["x"] + r["width"] // 2, r["y"] + r["height"] // 2)
    return poll(lambda: (m := gnome.status_menu()) and m["open"] and m["items"] and m,
                timeout=10, what="the top bar's menu open")


def choose_in_top_bar(gnome: GnomeDesktop, label: str) -> None:
    item = next(i for i in open_top_bar_menu(gnome)["items"] if i["label"] == label)
    r = item["rect"]
    gnome.person.real_click(r["x"] + r["width"] // 2, r["y"] + r["height"] // 2)


def test_the_tray_apps_menu_is_in_gnomes_top_bar(gnome, served):
    """GNOME runs no tray host: the app's menu is in the top bar, drawn by
    deskhand's extension, with the status and each agent; the person's
    Stop all agents there ends a takeover, and Settings… opens Settings."""
    consent = Path(scratch_dir("wl-app-")) / "consent.json"
    consent.write_text('{"input": true}')
    app = start_app(gnome, served, "--consent", str(consent))
    try:
        bar = poll(gnome.status_menu, timeout=20, what="deskhand's menu in the top bar")
        assert bar["name"] == "deskhand: No agent connected", bar
        assert not any(w["title"] == "deskhand" for w in gnome.windows()), \
            "no stand-in window where the top bar holds the menu"
        c = app.client(hello_ack={"client": "top bar agent"})
        assert c.takeover_state and c.takeover_state["on"], c.takeover_state
        poll(lambda: gnome.status_menu()["name"] == "deskhand: An agent is using the desktop",
             timeout=10, what="the status of the takeover in the top bar")
        # The person's click on the top bar is their input: it pauses.
        labels = [i["label"] for i in open_top_bar_menu(gnome)["items"]]
        assert any(l.startswith("top bar agent (wire): ") for l in labels), labels
        gnome.person.key("Escape")
        choose_in_top_bar(gnome, "Stop all agents")
        deadline = time.monotonic() + 10
        while (state := c.pushed_state(timeout=max(0.1, deadline - time.monotonic())))["on"]:
            pass  # the takeover's own pushes come first
        assert state["reason"] == "kill_switch", state
        assert c.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [5, 5]})[
            "type"] == "ERROR", "no input after Stop all agents"
        choose_in_top_bar(gnome, "Settings…")
        poll(lambda: any(w["title"] == "deskhand settings" for w in gnome.windows()),
             timeout=30, what="the Settings window from the top bar's menu")
        c.close()
    finally:
        assert app.terminate() == 0, app.stderr_tail()
    assert gnome.status_menu() is None, "the menu goes with the app"


def runs_portal(pid: int) -> bool:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")).startswith("xdg-desktop-portal")
    except OSError:
        return False


def test_the_portals_dialog_stays_above_deskhands_windows(gnome, served):
    """The portal's dialog waits for the person while a deskhand window
    opens over it (Doctor, from a second start): on the compositor's
    stack the dialog is put back on top."""
    from daemon import Daemon
    from test_app import APP

    served.kill()
    env = dict(gnome.env(), XDG_STATE_HOME=str(gnome.home / ".local/state"))
    app = Daemon("--settings", str(Path(scratch_dir("wl-app-")) / "settings.toml"),
                 command=[APP], env=env)
    try:
        poll(lambda: any(runs_portal(w["pid"]) for w in gnome.windows()), timeout=20,
             what="the portal's dialog")
        second = subprocess.run([APP, "--open", "doctor"], env=env, capture_output=True,
                                timeout=60)
        assert second.returncode == 0, second.stderr.decode()[-2000:]

        def order():
            titles = [("portal" if runs_portal(w["pid"]) else w["title"]) for w in gnome.windows()]
            return titles if "deskhand doctor" in titles else None

        poll(order, timeout=30, what="the Doctor window")
        time.sleep(1)  # what the compositor does once the window maps
        stack = order()
        assert stack.index("portal") > stack.index("deskhand doctor"), stack
        for _ in range(2):
            gnome.answer_portal("share")
    finally:
        assert app.terminate() == 0, app.stderr_tail()
