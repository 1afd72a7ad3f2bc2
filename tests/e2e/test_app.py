"""The tray app (`deskhand-app`) on a real X server with a session bus
(`dbus-run-session`): one process serving the same port as `deskhand
serve`; with `trayer` as the tray host its icon shows and its menu's "Pause
agents" holds the desktop until Continue, "Stop all agents" ends a takeover
and lets go of what an agent holds,
Settings…, Doctor… and Activity… open their windows and Quit ends the app
cleanly; without a tray
host it opens its main window and says why; a second start leaves the
first running; `--start-at-login` writes and removes the autostart entry."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from daemon import Daemon, kill_tree
from desktop import attach, start
from xhelpers import REPO, close_window, poll, require, run, window_rect

APP = os.environ.get("DESKHAND_APP_BIN", str(REPO / "target" / "debug" / "deskhand-app"))


def app_binary() -> str:
    require("dbus-daemon", "xwininfo", "xdotool")
    if not os.access(APP, os.X_OK):
        pytest.fail(f"the tray app is not built at {APP} (cargo build -p deskhand-app)")
    return APP


@pytest.fixture
def xvfb():
    server = start("1024x768")
    yield server
    server.stop()


@pytest.fixture
def bus():
    """A session bus of the test's own (the single-instance check and the
    StatusNotifierItem lookup use it)."""
    proc = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    address = proc.stdout.readline().decode().strip()
    assert address.startswith("unix:"), address
    yield address
    kill_tree(proc)


@pytest.fixture
def trayer(xvfb):
    require("trayer")
    proc = subprocess.Popen(
        ["trayer", "--edge", "top", "--align", "right", "--widthtype", "pixel", "--width", "120",
         "--height", "32", "--SetDockType", "true", "--transparent", "false"],
        env=dict(os.environ, DISPLAY=xvfb.name),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wid = poll(lambda: find(xvfb.name, "--name", "^panel$"),
               timeout=10, what="trayer's panel")
    yield wid
    kill_tree(proc)


def find(display: str, *query: str) -> str | None:
    out = run(display, "xdotool", "search", "--onlyvisible", *query, check=False)
    ids = out.split()
    return ids[0] if ids else None


def start_app(display: str, bus: str, tmp_path, *extra: str) -> Daemon:
    consent = tmp_path / "consent.json"
    consent.write_text('{"input": true}')
    return Daemon("--display", display, "--consent", str(consent), *extra,
                  env={"DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": bus}, command=[app_binary()])


def test_the_app_serves_the_port_and_its_tray_menu_stops_agents_and_quits(xvfb, trayer, bus,
                                                                          tmp_path):
    app = start_app(xvfb.name, bus, tmp_path)
    try:
        assert "token" not in app.ready, "the token stays out of the app's stdout"
        c = app.client(takeover=False)
        shot = c.screenshot()
        assert (shot["width"], shot["height"]) == (1024, 768), "the same port as serve"
        poll(lambda: icon_window(xvfb.name, trayer), timeout=15,
             what="the tray icon embedded in trayer")
        assert find(xvfb.name, "--name", "^deskhand$") is None, "no main window with a tray"
        # The tray click opening the menu is the person's own input (a
        # takeover on would pause at it), so Pause is chosen before one.
        menu_item(xvfb.name, trayer, "pause")
        state = c.take_over(True)["payload"]
        assert state["on"] is True and state["paused"] is True, state
        assert state["paused_reason"] == "paused_by_person", state
        assert c.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [5, 5]})[
            "payload"]["code"] == "USER_TOOK_OVER", "no input while paused"
        attach(xvfb.name).person.click_continue(1024)
        deadline = time.monotonic() + 10
        while c.pushed_state(timeout=max(0.1, deadline - time.monotonic()))["paused"]:
            pass  # Continue resumes (pushes of the paused start come first)
        menu_item(xvfb.name, trayer, "stop")
        deadline = time.monotonic() + 10
        while c.pushed_state(timeout=max(0.1, deadline - time.monotonic()))["on"]:
            pass  # the takeover's own pushes come first
        assert c.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [5, 5]})[
            "type"] == "ERROR", "no input after Stop all agents"
        c.close()
        for item, title in (("settings", "deskhand settings"), ("doctor", "deskhand doctor"),
                            ("activity", "deskhand activity")):
            menu_item(xvfb.name, trayer, item)
            poll(lambda: find(xvfb.name, "--name", f"^{title}$"), timeout=15,
                 what=f"the {title} window from the tray menu")
        menu_item(xvfb.name, trayer, "quit")
        assert app.proc.wait(15) == 0, app.stderr_tail()
        assert not app.connection_file.exists(), "Quit removes the connection file"
    finally:
        app.kill()


def test_stop_all_agents_ends_a_takeover_and_releases_what_it_holds(xvfb, bus, tmp_path):
    """An agent holds a button in its takeover; "Stop all agents", asked
    of the running app by a second start with `--stop-agents` (a desktop
    shortcut's way; a click of the person's would pause and release
    first), ends the takeover and lets the button go."""
    require("xinput")
    app = start_app(xvfb.name, bus, tmp_path)
    try:
        c = app.client()
        assert c.takeover_state and c.takeover_state["on"], c.takeover_state
        c.act("mouse_down", coordinate=[500, 500], button="left")
        held = attach(xvfb.name).held_buttons()
        assert any(1 in b for b in held.values()), f"the agent holds button 1: {held}"
        second = subprocess.run([app_binary(), "--stop-agents"],
                                env=second_start_env(app, bus), capture_output=True, timeout=30)
        assert second.returncode == 0, second.stderr.decode()[-2000:]
        deadline = time.monotonic() + 10
        while (state := c.pushed_state(timeout=max(0.1, deadline - time.monotonic())))["on"]:
            pass  # the takeover's own pushes come first
        assert state["reason"] == "kill_switch", state
        poll(lambda: not attach(xvfb.name).any_button_down(), timeout=5,
             what="button 1 released by Stop all agents")
        assert c.error_code("INPUT_ACTION", {"action": "mouse_move", "coordinate": [5, 5]}) \
            is not None, "no input after Stop all agents"
        c.close()
    finally:
        app.kill()


def second_start_env(app: Daemon, bus: str) -> dict:
    """The environment of a second start in `app`'s session on `bus`."""
    return dict(os.environ, DISPLAY=app.display, DBUS_SESSION_BUS_ADDRESS=bus,
                XDG_CONFIG_HOME=str(app.tmp / "config_home"),
                XDG_STATE_HOME=str(app.tmp / "state_home"),
                XDG_RUNTIME_DIR=str(app.tmp / "runtime_dir"))


def icon_window(display: str, panel: str) -> str | None:
    """The tray icon's window inside trayer's panel, once embedded."""
    tree = run(display, "xwininfo", "-tree", "-id", panel)
    for line in tree.splitlines():
        if "tray-icon tray app" in line:
            return line.split()[0]
    return None


def menu_window(display: str):
    """The open menu: the app's visible window that is not its icon nor
    one of its titled windows."""
    for wid in run(display, "xdotool", "search", "--onlyvisible", "--classname",
                   "^deskhand-app$", check=False).split():
        if run(display, "xdotool", "getwindowname", wid, check=False).startswith("deskhand "):
            continue
        r = window_rect(display, wid)
        if r.w > 64 and r.h > 40:
            return r
    return None


def menu_item(display: str, panel: str, which: str) -> None:
    """Opens the icon's menu with a click on the icon and clicks an item:
    the status line, a separator, "Pause agents", "Stop all agents",
    "Settings…", "Doctor…", "Activity…", "Quit deskhand"."""
    icon = icon_window(display, panel)
    assert icon, "the tray icon is in trayer's panel"
    x, y = window_rect(display, icon).center()
    attach(display).person.click(x, y)
    menu = poll(lambda: menu_window(display), timeout=15, what="the tray menu")
    share = {"pause": 0.23, "stop": 0.37, "settings": 0.50, "doctor": 0.64, "activity": 0.77,
             "quit": 0.91}[which]
    run(display, "xdotool", "mousemove", str(menu.x + menu.w // 2),
        str(menu.y + round(menu.h * share)))
    time.sleep(0.2)
    run(display, "xdotool", "click", "1")
    poll(lambda: menu_window(display) is None, timeout=5, what="the menu to close")


def test_without_a_tray_host_the_main_window_says_why_and_closing_it_hides_it(xvfb, bus,
                                                                            tmp_path):
    """The main window stands in for the tray's menu: closing it hides it
    and deskhand goes on; a second start shows it again."""
    app = start_app(xvfb.name, bus, tmp_path)
    try:
        main = poll(lambda: find(xvfb.name, "--name", "^deskhand$"), timeout=20,
                    what="the main window")
        assert "no XEmbed tray" in app.stderr_tail(), app.stderr_tail()
        close_window(xvfb.name, main)
        poll(lambda: find(xvfb.name, "--name", "^deskhand$") is None, timeout=10,
             what="the main window hidden")
        assert app.proc.poll() is None, "closing the main window does not quit"
        app.client(takeover=False).close()
        second = subprocess.run([app_binary(), "--display", xvfb.name, "--listen", "127.0.0.1:0"],
                                env=second_start_env(app, bus), capture_output=True, timeout=30)
        assert second.returncode == 0, second.stderr.decode()[-2000:]
        assert second.stdout == b"", "the second start served nothing"
        assert "already running" in app.stderr_tail(), app.stderr_tail()
        assert app.proc.poll() is None, "the first app keeps running"
        poll(lambda: find(xvfb.name, "--name", "^deskhand$"), timeout=10,
             what="the main window shown again by the second start")
    finally:
        assert app.terminate() == 0, app.stderr_tail()
    assert not app.connection_file.exists(), "SIGTERM cleans up as Quit does"


def test_start_at_login_writes_and_removes_the_autostart_entry(xvfb, bus, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    consent = tmp_path / "consent.json"
    consent.write_text('{"input": true}')

    def start(on: str) -> None:
        app = Daemon("--display", xvfb.name, "--consent", str(consent),
                     "--start-at-login", on, command=[app_binary()],
                     env={"DISPLAY": xvfb.name, "DBUS_SESSION_BUS_ADDRESS": bus,
                          "HOME": str(home)})
        assert app.terminate() == 0, app.stderr_tail()

    start("true")
    entries = list((home / ".config" / "autostart").glob("*.desktop"))
    assert len(entries) == 1, entries
    text = entries[0].read_text()
    assert f"Exec={APP}" in text or APP in text, text
    start("false")
    assert not list((home / ".config" / "autostart").glob("*.desktop")), "removed again"
