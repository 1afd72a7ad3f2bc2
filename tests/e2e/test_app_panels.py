"""The tray app's Settings, Doctor and Activity windows, driven like a
person's pointer would reach them but through WebDriver (`tauri-driver`
+ WebKitWebDriver starting the real app on a real X server): turning the
clipboard off in Settings makes the next call answer
FEATURE_NOT_SUPPORTED, deselecting a display refuses its screenshot and
input, and a save that would allow more is refused without a click of the
person's own mouse (WebDriver's clicks are not one); the token is copied
and replaced; the Doctor shows the display's checklist; Activity lists a
connected agent, its timeline, and End takes its input away."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from daemon import Client
from desktop import attach, start, start_dual
from mcp_client import Stdio, run
from test_app import app_binary, bus, find, xvfb  # noqa: F401 (fixtures)
from test_clipboard import paste_with_xclip
from test_keychain import lookup, secret_service  # noqa: F401 (a fixture)
from webdriver import Driver, WebDriverError
from xhelpers import poll, scratch_dir, window_rect
from xhelpers import run as run_x


class DrivenApp:
    """The app started by WebKitWebDriver with `--open <window>`, its port
    read from the connection file."""

    def __init__(self, display: str, bus: str, window: str, *extra: str,
                 settings: str = "", consent: dict | None = None, audit_log_flag: bool = True,
                 env: dict | None = None):
        """`audit_log_flag=False` leaves the audit log's place to the
        settings file; `env` is added to the app's environment."""
        self.tmp = Path(scratch_dir("app-"))
        self.connection_file = self.tmp / "endpoint.json"
        self.audit_log = self.tmp / "audit.jsonl"
        self.settings = self.tmp / "settings.toml"
        self.settings.write_text(settings)
        consent_file = self.tmp / "consent.json"
        consent_file.write_text(json.dumps(consent if consent is not None else {"input": True}))
        env = dict(os.environ, DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=bus, **(env or {}))
        for k in ("CONFIG_HOME", "STATE_HOME", "RUNTIME_DIR"):
            path = self.tmp / k.lower()
            path.mkdir(mode=0o700)
            env[f"XDG_{k}"] = str(path)
        audit = ["--audit-log", str(self.audit_log)] if audit_log_flag else []
        args = ["--display", display, "--listen", "127.0.0.1:0",
                "--connection-file", str(self.connection_file), *audit,
                "--settings", str(self.settings), "--consent", str(consent_file), *extra,
                "--open", window]
        self.driver = Driver(app_binary(), args, env)
        ready = poll(self._ready, timeout=30, what="the app's connection file")
        self.ws_url, self.token, self.pid = ready["ws"], ready["token"], ready["pid"]

    def _ready(self):
        try:
            return json.loads(self.connection_file.read_text())
        except (OSError, ValueError):
            return None

    def client(self, **kw) -> Client:
        return Client(self.ws_url, self.token, **kw)

    def __enter__(self) -> "DrivenApp":
        return self

    def __exit__(self, *_exc) -> None:
        self.stop()

    def stop(self) -> None:
        self.driver.quit()
        try:
            os.kill(self.pid, 9)
        except ProcessLookupError:
            pass


def clipboard_write(c: Client) -> str | None:
    return c.error_code("CLIPBOARD_WRITE", {"format": "text", "content": "from the panels test"})


def settings_shown(d: Driver) -> None:
    d.switch_to_title("deskhand settings")
    d.wait_text("#listen", lambda t: t.startswith("127.0.0.1:"), what="the settings form")


def save(d: Driver) -> str:
    d.run('document.getElementById("message").textContent = ""')
    d.click("#save")
    return d.wait_text("#message", lambda t: t and t != "Saving…", what="the save's answer")


def click_as_the_person(display: str, d: Driver, css: str, title: str = "deskhand settings"):
    """A click of the mouse device on `css`, scrolled into view, where the
    page laid it out."""
    window = window_rect(display, find(display, "--name", f"^{title}$"))
    box = d.run("const e = document.querySelector(arguments[0]);"
                "e.scrollIntoView({block: 'center'});"
                "const r = e.getBoundingClientRect();"
                "return {x: r.x, y: r.y, width: r.width, height: r.height};", css)
    attach(display).person.real_click(window.x + round(box["x"] + box["width"] / 2),
                 window.y + round(box["y"] + box["height"] / 2))


def test_on_a_small_screen_settings_opens_wholly_on_it_and_scrolls(bus):  # noqa: F811
    small = start("800x600")
    try:
        with DrivenApp(small.name, bus, "settings") as app:
            d = app.driver
            settings_shown(d)
            r = window_rect(small.name, find(small.name, "--name", "^deskhand settings$"))
            assert r.x >= 0 and r.y >= 0 and r.x + r.w <= 800 and r.y + r.h <= 600, r
            assert d.run("return document.scrollingElement.scrollHeight > innerHeight")
    finally:
        small.stop()


def test_settings_turn_the_clipboard_off_but_cannot_turn_it_on(xvfb, bus):  # noqa: F811
    file = "[clipboard]\nenabled = true\n"
    with DrivenApp(xvfb.name, bus, "settings", settings=file) as app:
        c = app.client(takeover=False)
        assert clipboard_write(c) is None, "the file's clipboard is on"
        d = app.driver
        settings_shown(d)
        assert d.selected("#clipboard_enabled")
        d.click("#clipboard_enabled")
        assert save(d).startswith("Saved"), d.text("#message")
        assert "enabled = false" in app.settings.read_text()
        poll(lambda: clipboard_write(c) == "FEATURE_NOT_SUPPORTED", timeout=5,
             what="the next call to find the clipboard off")
        # The same window cannot loosen it again: WebDriver's click is no
        # click of the person's mouse.
        before = app.settings.read_text()
        d.click("#clipboard_enabled")
        answer = save(d)
        assert "only a click of your own mouse" in answer, answer
        assert app.settings.read_text() == before, "a refused save writes nothing"
        assert clipboard_write(c) == "FEATURE_NOT_SUPPORTED"
        c.close()


def test_refusing_terminals_saves_at_once_but_allowing_them_again_takes_the_person(
        xvfb, bus):  # noqa: F811
    with DrivenApp(xvfb.name, bus, "settings") as app:
        d = app.driver
        settings_shown(d)
        assert not d.selected("#refuse-terminals")
        d.click("#refuse-terminals")
        assert save(d).startswith("Saved"), d.text("#message")
        assert 'refuse_apps = ["terminals"]' in app.settings.read_text()
        d.click("#refuse-terminals")
        answer = save(d)
        assert "only a click of your own mouse" in answer and "refuse_apps" in answer, answer
        assert 'refuse_apps = ["terminals"]' in app.settings.read_text(), "nothing written"


def test_the_persons_own_click_on_save_turns_the_clipboard_on(xvfb, bus):  # noqa: F811
    with DrivenApp(xvfb.name, bus, "settings") as app:
        c = app.client(takeover=False)
        assert clipboard_write(c) == "FEATURE_NOT_SUPPORTED", "off by default"
        d = app.driver
        settings_shown(d)
        d.click("#clipboard_enabled")
        d.run('document.getElementById("message").textContent = ""')
        click_as_the_person(xvfb.name, d, "#save")
        answer = d.wait_text("#message", lambda t: t and t != "Saving…", what="the save's answer")
        assert answer.startswith("Saved"), answer
        assert "enabled = true" in app.settings.read_text()
        poll(lambda: clipboard_write(c) is None, timeout=5, what="the clipboard to be on")
        c.close()


def pick_folder(display: str, folder: Path) -> None:
    """The person types `folder` into the native folder picker and picks
    it (GTK's location field: ctrl+L, the path, Return)."""
    dialog = poll(lambda: find(display, "--name", "^The audit log's folder$"), timeout=15,
                  what="the folder picker")
    r = window_rect(display, dialog)
    run_x(display, "xdotool", "mousemove", str(r.x + r.w // 2), str(r.y + r.h // 2))
    run_x(display, "xdotool", "windowfocus", "--sync", dialog)
    run_x(display, "xdotool", "key", "--delay", "50", "ctrl+l")
    run_x(display, "xdotool", "type", "--delay", "20", f"{folder}/")
    run_x(display, "xdotool", "key", "--delay", "200", "Return")
    poll(lambda: find(display, "--name", "^The audit log's folder$") is None, timeout=10,
         what="the folder picker to close")


def audit_ops(path: Path) -> list[str]:
    return [json.loads(line)["op"] for line in path.read_text().splitlines()] if path.exists() else []


def test_the_kill_switch_and_the_audit_folder_change_with_the_persons_click(xvfb, bus):  # noqa: F811
    with DrivenApp(xvfb.name, bus, "settings", consent={"takeover": True},
                   audit_log_flag=False) as app:
        d = app.driver
        settings_shown(d)
        old_log = Path(d.text("#audit_log"))
        assert old_log == app.tmp / "state_home" / "deskhand" / "audit.jsonl", old_log
        d.run('document.getElementById("kill_switch").value = "ctrl+alt+j"')
        assert "only a click of your own mouse" in save(d), "WebDriver's click is not the person's"
        assert "ctrl+alt+j" not in app.settings.read_text()
        folder = app.tmp / "picked"
        folder.mkdir()
        d.click("#audit_log_choose")
        pick_folder(xvfb.name, folder)
        new_log = folder / "audit.jsonl"
        d.wait_text("#message", lambda t: "Save to write the audit log there" in t,
                    what="the picked folder in the form")
        assert d.run('return document.getElementById("audit_log_path").value') == str(new_log)
        d.run('document.getElementById("message").textContent = ""')
        click_as_the_person(xvfb.name, d, "#save")
        answer = d.wait_text("#message", lambda t: t and t != "Saving…", what="the save's answer")
        assert answer.startswith("Saved"), answer
        written = app.settings.read_text()
        assert 'kill_switch = "ctrl+alt+j"' in written and str(new_log) in written, written
        assert d.text("#audit_log") == str(new_log)
        assert audit_ops(old_log)[-1] == "audit.moved"
        c = app.client()
        c.act("mouse_down", coordinate=[500, 400], button="left")
        assert audit_ops(new_log)[-1] == "input.mouse_down", audit_ops(new_log)
        run_x(xvfb.name, "xdotool", "key", "ctrl+alt+j")
        state = c.pushed_state()
        while state.get("on"):
            state = c.pushed_state()
        assert state["reason"] == "kill_switch", state
        c.close()


@pytest.fixture
def xorg():
    server = start_dual()
    yield server
    server.stop()


def test_deselecting_a_display_refuses_its_screenshot_and_input(xorg, bus):  # noqa: F811
    with DrivenApp(xorg.name, bus, "settings") as app:
        c = app.client()
        assert c.screenshot(monitor=0)["width"] == 1280, "every display shows at first"
        d = app.driver
        settings_shown(d)
        assert d.selected("#displays_all")
        d.click("#display-DUMMY0")
        assert save(d).startswith("Saved"), d.text("#message")
        assert 'displays = ["DUMMY1"]' in app.settings.read_text()
        c.act("mouse_move", coordinate=[1400, 100])

        def refused():
            shot = c.request("SCREENSHOT_REQUEST", {"monitor": 0})
            return shot["type"] == "ERROR" and shot["payload"]["code"] == "INVALID_ARGUMENTS"
        poll(refused, timeout=5, what="DUMMY0's screenshot to be refused")
        assert c.error_code("INPUT_ACTION", {"action": "left_click", "coordinate": [100, 100]}) \
            == "INPUT_OUT_OF_BOUNDS"
        assert attach(xorg.name).pointer() == (1400, 100), "nothing reached the private display"
        # Showing it again allows more: refused without the person's mouse.
        d.click("#displays_all")
        assert "only a click of your own mouse" in save(d)
        assert c.error_code("SCREENSHOT_REQUEST", {"monitor": 0}) == "INVALID_ARGUMENTS"
        c.close()


def test_the_doctor_shows_the_displays_checklist_and_runs_again(xvfb, bus):  # noqa: F811
    with DrivenApp(xvfb.name, bus, "doctor") as app:
        d = app.driver
        d.switch_to_title("deskhand doctor")
        summary = d.wait_text("#summary", bool, what="the doctor's report")
        assert summary.startswith("Ready"), summary
        x11 = d.run('return [...document.querySelectorAll("tr.check")]'
                    '.find((r) => r.textContent.includes("The X11 desktop")).className')
        assert x11 == "check ok", x11
        # The clipboard is off in the settings (the default): said so, in
        # one line per capability, and not flagged as a problem.
        for what in ("Read the clipboard", "Write the clipboard"):
            row = d.run('return [...document.querySelectorAll("tr.check")]'
                        '.find((r) => r.textContent.includes(arguments[0]))', what)
            assert row, what
            assert d.run("return arguments[0].className", row) == "check off", what
            assert "off in your settings" in d.run("return arguments[0].textContent", row), what
        # The person's words: no command of deskhand's, every to-do about
        # something named.
        page = d.run("return document.body.innerText")
        for developer in ("deskhand serve", "health_report", "estart deskhand"):
            assert developer not in page, (developer, page)
        steps = d.run('return [...document.querySelectorAll("#steps li")]'
                      '.map((li) => [li.className, li.querySelector("strong") !== null])')
        assert all(cls == "ok" or named for cls, named in steps), steps
        d.click("#run")
        d.wait_text("#message", lambda t: t.startswith("Checked at"), what="a second report")
        d.click("#settings")
        settings_shown(d)


def test_activity_lists_an_agent_and_what_it_was_allowed_and_revoke_takes_its_input_away(
        xvfb, bus):  # noqa: F811
    with DrivenApp(xvfb.name, bus, "activity") as app:
        c = app.client(hello_ack={"client": "activity test agent"})
        assert c.takeover_state and c.takeover_state["on"], c.takeover_state
        c.act("mouse_move", coordinate=[50, 60])
        d = app.driver
        d.switch_to_title("deskhand activity")
        row = 'tr.session td:first-child'
        d.wait_text(row, lambda t: "activity test agent" in t, what="the agent in the list")
        assert "driving" in d.text("tr.session")
        allowed = d.text("tr.session td.allowed")
        assert allowed.startswith("see the screen, use mouse and keyboard (red frame)"), allowed
        d.wait_text("section.timeline", lambda t: "mouse move" in t,
                    what="the agent's move in its timeline")
        d.click("tr.session button.end")
        d.wait_text("#message", lambda t: t.startswith("Revoked: activity test agent"),
                    what="Revoke's answer")
        msg = c.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [5, 5]})
        assert msg["type"] == "ERROR", msg
        assert attach(xvfb.name).pointer() == (50, 60), "no input after End"
        c.close()


def test_the_timeline_shows_the_screenshot_the_agent_got(xvfb, bus):  # noqa: F811
    with DrivenApp(xvfb.name, bus, "activity") as app:
        run_x(xvfb.name, "xsetroot", "-solid", "#1e90c8")
        c = app.client(takeover=False)
        # A corner of the root, away from the Activity window.
        shot = c.call("SCREENSHOT_REQUEST", {"region": [800, 680, 1000, 760]},
                      expect="SCREENSHOT_RESPONSE")
        assert shot["mime_type"] == "image/png"
        d = app.driver
        d.switch_to_title("deskhand activity")
        img = 'section.timeline img.thumb[src^="data:image/jpeg"]'
        poll(lambda: d.find_all(img), timeout=15, what="the thumbnail in the timeline")
        row = d.run("return document.querySelector(arguments[0]).closest('tr').textContent", img)
        assert "screenshot" in row, row
        centre = d.run(
            "const i = document.querySelector(arguments[0]);"
            "const c = document.createElement('canvas');"
            "c.width = i.naturalWidth; c.height = i.naturalHeight;"
            "const g = c.getContext('2d'); g.drawImage(i, 0, 0);"
            "return [c.width, c.height,"
            " ...Array.from(g.getImageData(c.width >> 1, c.height >> 1, 1, 1).data).slice(0, 3)];",
            img)
        assert centre[:2] == [200, 80], centre
        assert all(abs(got - want) <= 6 for got, want in zip(centre[2:], (0x1e, 0x90, 0xc8))), centre
        c.close()


def test_retry_the_backend_opens_what_was_missing_at_start(xvfb, bus):  # noqa: F811
    """Started without its overlay, the app has no takeover; once the
    overlay is in place, "Retry the backend" restarts deskhand (its agents
    are cut off and reconnect through the new connection file) and the
    takeover works. Only the person's own click restarts: a restart lifts
    any pause the person made."""
    overlay = Path(scratch_dir("overlay-")) / "deskhand-overlay"
    app = DrivenApp(xvfb.name, bus, "doctor", consent={"takeover": True},
                    env={"DESKHAND_OVERLAY": str(overlay)})
    restarted = None
    try:
        c = app.client(takeover=False)
        refused = c.take_over()["payload"]
        assert not refused["on"] and refused["reason"] == "indicator_unavailable", refused
        shutil.copy(Path(app_binary()).parent / "deskhand-overlay", overlay)
        d = app.driver
        d.switch_to_title("deskhand doctor")
        d.wait_text("#summary", lambda t: t != "", what="the doctor's report")
        before = app.connection_file.read_text()
        d.click("#restart")  # not the person's mouse: refused
        answer = d.wait_text("#message", lambda t: "own mouse" in t, what="the refusal")
        assert "Nothing changed" in answer, answer
        assert app._ready()["pid"] == app.pid, "still the first process"
        try:
            click_as_the_person(xvfb.name, d, "#restart", title="deskhand doctor")
        except WebDriverError:
            pass  # the window may go before WebDriver answers
        restarted = poll(lambda: (lambda r: r if r and r["pid"] != app.pid else None)(app._ready()),
                         timeout=60, what="the restarted app's connection file")
        assert app.connection_file.read_text() != before
        with pytest.raises(ConnectionClosed):
            c.request("CURSOR_POSITION_REQUEST")
        again = Client(restarted["ws"], restarted["token"], takeover=False)
        state = again.take_over()
        assert state["type"] == "TAKEOVER_STATE" and state["payload"]["on"], state
        again.close()
    finally:
        app.stop()
        if restarted:
            try:
                os.kill(restarted["pid"], 9)
            except ProcessLookupError:
                pass


def test_copy_and_replace_the_token(xvfb, bus):  # noqa: F811
    """Replace serves a new token, writes it to the connection file,
    closes the connections opened with the old one and refuses it from
    then on; a `deskhand mcp` relay goes on with the new one; Copy puts
    it on the clipboard."""
    with DrivenApp(xvfb.name, bus, "settings") as app:
        old = app.client(takeover=False)
        relay = Stdio("--display", xvfb.name, "--connection-file", str(app.connection_file))
        d = app.driver
        settings_shown(d)
        run(relayed_before_and_after(relay, lambda: replace_token(d)))
        assert "relaying with the new one" in relay.stderr(), relay.stderr()
        new = json.loads(app.connection_file.read_text())["token"]
        assert new != app.token and len(new) == 64, "a new token in the connection file"
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                old.recv(timeout=5)
        assert closed.value.rcvd.code == 1008, closed.value
        with pytest.raises(InvalidStatus) as refused:
            Client(app.ws_url, app.token)
        assert refused.value.response.status_code == 401
        fresh = Client(app.ws_url, new, takeover=False)
        assert fresh.screenshot()["width"] == 1024
        fresh.close()
        d.click("#token_copy")
        d.wait_text("#message", lambda t: t.startswith("The token is"), what="Copy's answer")
        assert paste_with_xclip(xvfb.name) == new, "Copy puts the token on the clipboard"


def test_replacing_a_token_kept_in_the_keychain(xvfb, secret_service):  # noqa: F811
    bus = secret_service["DBUS_SESSION_BUS_ADDRESS"]
    with DrivenApp(xvfb.name, bus, "settings") as app:
        d = app.driver
        settings_shown(d)
        assert "keychain" in d.text("#token_kept_in"), d.text("#token_kept_in")
        config = app.tmp / "config_home" / "deskhand"
        account = f"token for {config}"
        assert lookup(secret_service, account) == app.token
        replace_token(d)
        new = json.loads(app.connection_file.read_text())["token"]
        assert new != app.token and len(new) == 64
        assert lookup(secret_service, account) == new, "the keychain holds the new token"
        assert not (config / "token").exists(), "no token file beside the keychain"
        fresh = Client(app.ws_url, new, takeover=False)
        fresh.close()


def replace_token(d: Driver) -> None:
    d.click("#token_rotate")
    d.click("#rotate_yes")
    d.wait_text("#message", lambda t: t.startswith("The token was replaced"),
                what="Replace's answer")


async def relayed_before_and_after(relay, between) -> None:
    """A `deskhand mcp` relay lists windows, `between()` runs, and the
    same relay lists them again (with the new token it reads)."""
    async with relay.connect("auto") as s:
        await s.start()
        await s.call("list_windows")
        await asyncio.to_thread(between)
        await s.call("list_windows")
        await s.end()


def test_without_a_tray_the_main_window_is_deskhands_menu(xvfb, bus):  # noqa: F811
    """No tray host and no top bar: the main window shows the status and
    each agent, and its items do what the tray's do."""
    with DrivenApp(xvfb.name, bus, "activity") as app:
        c = app.client(hello_ack={"client": "main window agent"})
        assert c.takeover_state and c.takeover_state["on"], c.takeover_state
        d = app.driver
        d.switch_to_title("deskhand")
        d.wait_text("#line", lambda t: t == "An agent is using the desktop", what="the status")
        d.wait_text("#sessions", lambda t: "main window agent (wire): using the desktop" in t,
                    what="the agent in the list")
        d.click("#item-stop")
        deadline = time.monotonic() + 10
        while (state := c.pushed_state(timeout=max(0.1, deadline - time.monotonic())))["on"]:
            pass  # the takeover's own pushes come first
        assert state["reason"] == "kill_switch", state
        d.wait_text("#line", lambda t: t == "1 agent connected", what="the status after Stop")
        d.click("#item-doctor")
        d.switch_to_title("deskhand doctor")
        c.close()
