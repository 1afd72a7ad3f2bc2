"""The Wayland backend where the desktop's portal has no ScreenCast: a
headless GNOME whose portal offers Screenshot but neither ScreenCast nor
RemoteDesktop (desktop/wayland.py's `no_portals`). Screenshots come from
the Screenshot portal; the desktop asks the person once, answered through
AT-SPI; input stays unavailable and says why."""

from __future__ import annotations

import base64
import subprocess

import pytest

from desktop.wayland import SYSTEM_PYTHON, start
from imaging import decode_png
from test_wayland_backend import FORM, health
from xhelpers import poll, scratch_dir

POINTS = ((20, 20), (640, 400), (300, 200), (1270, 790))


@pytest.fixture(scope="module")
def gnome():
    desktop = start("1280x800", no_portals=("ScreenCast", "RemoteDesktop"))
    yield desktop
    desktop.stop()


def shot_of(reply: dict) -> object:
    assert reply.get("type") == "SCREENSHOT_RESPONSE", reply
    return decode_png(base64.b64decode(reply["payload"]["image_base64"]))


def probes(d) -> dict:
    return {p["label"]: p for p in health(d)["probes"]}


def shots_instead(d) -> None:
    """Waits until deskhand found no ScreenCast and takes screenshots from
    the Screenshot portal."""
    poll(lambda: "screenshot portal" in probes(d), timeout=20,
         what="the Screenshot portal taken instead")


def test_screenshots_come_from_the_screenshot_portal_once_the_person_allows_them(gnome):
    title = "deskhand screenshot-portal form"
    saved = scratch_dir("wl-form-") + "/saved.txt"
    gnome.start_app(SYSTEM_PYTHON, str(FORM), "--saved", saved, "--title", title)
    poll(lambda: any(w["title"] == title for w in gnome.windows()),
         timeout=20, what="the form's window")
    d = gnome.serve()
    try:
        shots_instead(d)
        c = d.client()
        # The first screenshot waits for the person's answer in the
        # desktop's own question.
        mid = c.send("SCREENSHOT_REQUEST", {})
        answered = gnome.answer_portal("allow", timeout=30)
        assert answered.get("pressed") == "allow", (answered, d.stderr_tail())
        first = shot_of(c.reply_to(mid, 60))
        assert (first.width, first.height) == (1280, 800)

        def equal() -> bool:
            shot = shot_of(c.request("SCREENSHOT_REQUEST", {}))
            screen = gnome.screen()
            return all(shot.pixel(x, y) == screen.pixel(x, y) for x, y in POINTS)

        # The form shows in it, as mutter's own screencast has the screen;
        # no dialog is asked again.
        poll(equal, timeout=15, what="a screenshot equal to mutter's own")
        # Each shot's file is read and deleted: nothing left in the home.
        left = [p for p in gnome.home.rglob("*.png") if "Screenshot" in p.name]
        assert not left, left
        report = health(d)
        caps = {x["name"]: x for x in report["capabilities"]}
        assert caps["capture_window"]["status"] == "available", caps["capture_window"]
        # No RemoteDesktop portal: no input, said as such.
        assert caps["input_takeover"].get("reason_code") == "portal_unavailable", \
            caps["input_takeover"]
        said = {p["label"]: p for p in report["probes"]}["screenshot portal"]
        assert said["status"] == "ok" and "Screenshot portal" in said["message"], said
        c.close()
    finally:
        d.kill()


def test_a_denial_is_kept_and_said_without_asking_again(gnome):
    # The person allowed screenshots in the test before; the desktop
    # keeps that in its permission store. Take it back as the privacy
    # settings would, then deny the question.
    store = "org.freedesktop.impl.portal.PermissionStore"
    subprocess.run(["gdbus", "call", "--session", "-d", store, "-o",
                    "/org/freedesktop/impl/portal/PermissionStore", "-m",
                    f"{store}.DeletePermission", "screenshot", "screenshot", ""],
                   env=gnome.env(), check=False, capture_output=True, timeout=10)
    d = gnome.serve()
    try:
        shots_instead(d)
        c = d.client()
        mid = c.send("SCREENSHOT_REQUEST", {})
        answered = gnome.answer_portal("deny", timeout=30)
        assert answered.get("pressed") == "deny", (answered, d.stderr_tail())
        reply = c.reply_to(mid, 60)
        assert reply["type"] == "ERROR" and "portal_screenshot_denied" in reply["payload"]["message"], reply
        # Refused at once the next time, with no question.
        again = c.request("SCREENSHOT_REQUEST", {}, timeout=5)
        assert again["type"] == "ERROR" and \
            "portal_screenshot_denied" in again["payload"]["message"], again
        assert gnome.answer_portal("allow", timeout=2).get("dialog") is None, "asked again"
        caps = {x["name"]: x for x in health(d)["capabilities"]}
        assert caps["capture_window"].get("reason_code") == "portal_screenshot_denied", \
            caps["capture_window"]
        c.close()
    finally:
        d.kill()
