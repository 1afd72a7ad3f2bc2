"""The tray app's dialogs on a real X server: a wire-ops client's takeover
request, with no consent file granting it, opens the consent dialog. Only
the person's mouse (a click from the X server's own pointer device, as the
Continue tests make it) ticks "ALSO allow VISIBLE TAKEOVER" and Allow; the
same clicks from `xdotool` (XTEST) and the keyboard change nothing; Deny,
and no answer before the settings' `consent_timeout_s`, deny. The dialog's
words are read as a screen reader reads them (AT-SPI)."""

from __future__ import annotations

import contextlib
import re
import subprocess
import time

from daemon import Daemon
from desktop import attach
from test_app import (app_binary, bus, find, icon_window, menu_item,  # noqa: F401 (fixtures)
                      trayer, xvfb)
from xhelpers import FIXTURES, a11y_env, close_window, poll, run, window_rect
from xlib import Display

# Places inside the dialog, from its fixed layout (ui/ask.css).
TAKEOVER_BOX = (220, 276)
LEASE_15_MINUTES = (84, 374)
DENY = (115, 482)
ALLOW = (325, 482)


def start_asking_app(display: str, bus: str, tmp_path, timeout_s: int = 60) -> Daemon:
    """The app on `display` with nothing granted: a takeover is asked."""
    settings = tmp_path / "settings.toml"
    settings.write_text(f"consent_timeout_s = {timeout_s}\n")
    return Daemon("--display", display, "--settings", str(settings),
                  env={"DISPLAY": display, "DBUS_SESSION_BUS_ADDRESS": bus},
                  command=[app_binary()])


def dialog(display: str):
    """The open dialog's rectangle, once it shows (the first WebKit window
    of a cold machine under load has taken over 20 s to map)."""
    wid = poll(lambda: find(display, "--name", "^deskhand: your answer$"), timeout=45,
               what="the consent dialog")
    rect = window_rect(display, wid)
    assert (rect.w, rect.h) == (440, 520), rect
    return rect


def at(rect, place: tuple[int, int]) -> tuple[int, int]:
    return rect.x + place[0], rect.y + place[1]


def xdotool_click(display: str, x: int, y: int) -> None:
    attach(display).person.click(x, y)


def person_click(display: str, x: int, y: int) -> None:
    # Clear of the 1.5 s after any press deskhand made, and of the
    # previous click's release.
    time.sleep(0.3)
    attach(display).person.real_click(x, y)


def not_consented(reply: dict) -> bool:
    """The wire's refusal for want of the person's consent."""
    return (reply.get("type") == "ERROR" and reply["payload"]["code"] == "CAPABILITY_NOT_GRANTED"
            and reply["payload"]["details"]["needed"] == "consent")


def audit_says(app: Daemon, *texts: str) -> None:
    """The audit log holds every text (its records are written as the
    questions end, on the audit writer's own time)."""
    poll(lambda: all(t in app.audit_log.read_text() for t in texts), timeout=10,
         what=f"the audit log to say {texts}")


def window_text(display: str, bus: str, title: str) -> str:
    """What the window named `title` says, as a screen reader reads it."""
    done = subprocess.run(["/usr/bin/python3", str(FIXTURES / "window_text.py"), title],
                          env=a11y_env(display, bus), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def dialog_words(display: str, bus: str) -> str | None:
    """The consent dialog's words once its page has them."""
    said = window_text(display, bus, "deskhand: your answer")
    return said if "To stop it" in said else None


@contextlib.contextmanager
def key_grabbed_by_another(display: str, key: str):
    """Another program holds ctrl+alt+`key` (a passive grab on the root
    window), so deskhand cannot grab that chord while this lasts."""
    with Display(display) as d:
        code = d.x11.XKeysymToKeycode(d.dpy, d.x11.XStringToKeysym(key.encode()))
        control, mod1, lock, mod2 = 1 << 2, 1 << 3, 1 << 1, 1 << 4
        for extra in (0, lock, mod2, lock | mod2):
            d.x11.XGrabKey(d.dpy, code, control | mod1 | extra, d.root(), 1, 1, 1)
        d.sync()
        yield


def ask_takeover(app: Daemon):
    c = app.client(takeover=False, hello_ack={"client": "dialog test agent"})
    return c, c.send("TAKEOVER_REQUEST", {"on": True})


def test_the_persons_clicks_tick_takeover_and_allow_it(xvfb, bus, tmp_path):  # noqa: F811
    app = start_asking_app(xvfb.name, bus, tmp_path)
    try:
        c, mid = ask_takeover(app)
        rect = dialog(xvfb.name)
        person_click(xvfb.name, *at(rect, TAKEOVER_BOX))
        person_click(xvfb.name, *at(rect, LEASE_15_MINUTES))
        person_click(xvfb.name, *at(rect, ALLOW))
        reply = c.reply_to(mid, timeout=20)
        assert reply["type"] == "TAKEOVER_STATE", reply
        assert reply["payload"]["on"] is True and reply["payload"]["indicator"] is True, reply
        poll(lambda: find(xvfb.name, "--name", "^deskhand: your answer$") is None,
             timeout=10, what="the dialog to close")
        c.act("mouse_move", coordinate=[40, 40])
        c.close()
        audit_says(app, '"op":"consent.ask"', '"outcome":"allowed"')
    finally:
        assert app.terminate() == 0, app.stderr_tail()


def test_xdotool_and_the_keyboard_tick_nothing_and_allow_alone_may_be_asked_again(
        xvfb, bus, tmp_path):  # noqa: F811
    app = start_asking_app(xvfb.name, bus, tmp_path)
    try:
        c, mid = ask_takeover(app)
        rect = dialog(xvfb.name)
        xdotool_click(xvfb.name, *at(rect, TAKEOVER_BOX))
        attach(xvfb.name).person.key("Tab", "space", "Tab", "Return")
        xdotool_click(xvfb.name, *at(rect, ALLOW))
        time.sleep(1)
        assert find(xvfb.name, "--name", "^deskhand: your answer$"), \
            "xdotool's click on Allow did not answer"
        # The person allows now: the box was never ticked, so no takeover,
        # and the agent is told what it got and that it may ask again.
        person_click(xvfb.name, *at(rect, ALLOW))
        reply = c.reply_to(mid, timeout=20)
        assert not_consented(reply), reply
        said = reply["payload"]["message"]
        assert said.startswith("the person allowed this session to see the screen and work "
                               "with the whole desktop, not the visible takeover"), said
        assert "ask again in this session and the person sees the dialog once more" in said, said
        poll(lambda: find(xvfb.name, "--name", "^deskhand: your answer$") is None,
             timeout=10, what="the first dialog to close")
        # Asking again opens the dialog again; the person ticks the box.
        mid = c.send("TAKEOVER_REQUEST", {"on": True})
        rect = dialog(xvfb.name)
        person_click(xvfb.name, *at(rect, TAKEOVER_BOX))
        person_click(xvfb.name, *at(rect, ALLOW))
        reply = c.reply_to(mid, timeout=20)
        assert reply["type"] == "TAKEOVER_STATE" and reply["payload"]["on"] is True, reply
        c.close()
    finally:
        assert app.terminate() == 0, app.stderr_tail()


def test_the_dialog_names_the_kill_switch_in_force(xvfb, bus, tmp_path):  # noqa: F811
    """The settings file asks for a chord another program holds: it cannot
    be grabbed, so the one in force stays, and the dialog names that one."""
    app = start_asking_app(xvfb.name, bus, tmp_path)
    try:
        with key_grabbed_by_another(xvfb.name, "k"):
            settings = tmp_path / "settings.toml"
            settings.write_text(settings.read_text() + 'kill_switch = "ctrl+alt+k"\n')
            poll(lambda: "could not be applied" in app.stderr_path.read_text(), timeout=10,
                 what="the new chord to be refused")
            c, mid = ask_takeover(app)
            dialog(xvfb.name)
            said = poll(lambda: dialog_words(xvfb.name, bus), timeout=20,
                        what="the dialog's words")
            assert "press ctrl+alt+Escape" in said, said
            assert "ctrl+alt+k" not in said, said
            c.close()
    finally:
        assert app.terminate() == 0, app.stderr_tail()


def test_deny_denies(xvfb, bus, tmp_path):  # noqa: F811
    app = start_asking_app(xvfb.name, bus, tmp_path)
    try:
        c, mid = ask_takeover(app)
        rect = dialog(xvfb.name)

        def deny():
            """Clicks Deny until the question ends: a click that lands
            before the page is ready does nothing."""
            if find(xvfb.name, "--name", "^deskhand: your answer$"):
                xdotool_click(xvfb.name, *at(rect, DENY))
            try:
                return c.reply_to(mid, timeout=2)
            except TimeoutError:
                return None

        reply = poll(deny, timeout=40, what="the answer to the Deny click")
        assert not_consented(reply), reply
        c.close()
        poll(lambda: re.search(r'"op":"consent\.ask","target":\{[^}]*"outcome":"denied"',
                               app.audit_log.read_text()),
             timeout=10, what="a denied consent question in the audit log")
    finally:
        assert app.terminate() == 0, app.stderr_tail()


def shown_or_ended(display: str, c, mid):
    """"shown" once the dialog shows, or the reply when the question ends
    first (on a busy machine a dialog may take longer to show than the
    shortest consent timeout)."""
    def look():
        if find(display, "--name", "^deskhand: your answer$"):
            return "shown"
        try:
            return c.reply_to(mid, timeout=0.1)
        except TimeoutError:
            return None
    return poll(look, timeout=20, what="the consent dialog or the question's end")


def test_no_answer_denies_after_the_timeout(xvfb, bus, tmp_path):  # noqa: F811
    app = start_asking_app(xvfb.name, bus, tmp_path, timeout_s=5)
    try:
        for _ in range(3):
            c, mid = ask_takeover(app)
            started = time.monotonic()
            if shown_or_ended(xvfb.name, c, mid) == "shown":
                break
            c.close()
        else:
            raise AssertionError("the consent dialog never showed before its timeout")
        reply = c.reply_to(mid, timeout=30)
        assert not_consented(reply), reply
        assert time.monotonic() - started >= 3, "denied by the timeout, not at once"
        poll(lambda: find(xvfb.name, "--name", "^deskhand: your answer$") is None,
             timeout=10, what="the dialog to close after the timeout")
        c.close()
        poll(lambda: '"outcome":"timed_out"' in app.audit_log.read_text(),
             timeout=10, what="a timed-out consent question in the audit log")
    finally:
        assert app.terminate() == 0, app.stderr_tail()


def test_closing_every_window_leaves_deskhand_in_the_tray(xvfb, trayer, bus, tmp_path):  # noqa: F811
    """A consent denied with Escape, one nobody answers, Settings, Doctor
    and Activity closed with the title bar's X: the tray icon and the port
    stay until the person chooses Quit."""
    app = start_asking_app(xvfb.name, bus, tmp_path, timeout_s=5)

    def still_serving() -> None:
        assert app.proc.poll() is None, app.stderr_tail()
        assert icon_window(xvfb.name, trayer), "the tray icon is still there"
        assert app.connection_file.exists(), "the connection file is still there"
        app.client(takeover=False).close()  # HELLO answered

    try:
        poll(lambda: icon_window(xvfb.name, trayer), timeout=15, what="the tray icon")
        c, mid = ask_takeover(app)
        wid = poll(lambda: find(xvfb.name, "--name", "^deskhand: your answer$"), timeout=20,
                   what="the consent dialog")
        time.sleep(1)  # the page's key handler is in place
        run(xvfb.name, "xdotool", "windowfocus", "--sync", wid)
        attach(xvfb.name).person.key("Escape")
        assert not_consented(c.reply_to(mid, timeout=20))
        c.close()
        audit_says(app, '"outcome":"denied"')
        time.sleep(1)
        still_serving()
        c, mid = ask_takeover(app)
        dialog(xvfb.name)
        assert not_consented(c.reply_to(mid, timeout=30))
        c.close()
        audit_says(app, '"outcome":"timed_out"')
        time.sleep(1)
        still_serving()
        for item, title in (("settings", "deskhand settings"), ("doctor", "deskhand doctor"),
                            ("activity", "deskhand activity")):
            menu_item(xvfb.name, trayer, item)
            wid = poll(lambda: find(xvfb.name, "--name", f"^{title}$"), timeout=15,
                       what=f"the {title} window")
            close_window(xvfb.name, wid)
            poll(lambda: find(xvfb.name, "--name", f"^{title}$") is None, timeout=10,
                 what=f"the {title} window to close")
            time.sleep(1)
            still_serving()
        menu_item(xvfb.name, trayer, "quit")
        assert app.proc.wait(15) == 0, app.stderr_tail()
    finally:
        app.kill()
