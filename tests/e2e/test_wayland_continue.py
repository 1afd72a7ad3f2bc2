"""Continue means Continue on GNOME: the press that pauses an agent never
resumes it on its own release, even when the Continue button appears
under it, and every real click of the person on Continue resumes."""

from __future__ import annotations

import time

import pytest

from desktop.wayland import start
from test_wayland_backend import CONTINUE_GREEN, serve_granted
from xhelpers import poll


@pytest.fixture(scope="module")
def gnome():
    desktop = start("1280x800")
    yield desktop
    desktop.stop()


@pytest.fixture(scope="module")
def client(gnome):
    d = serve_granted(gnome)
    c = d.client()
    yield c
    c.close()
    d.kill()


def acts(client) -> bool:
    """Whether the agent's input goes through now."""
    msg = client.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [900, 650]})
    return msg["type"] == "ACK"


def acts_at(client, x: int, y: int) -> bool:
    msg = client.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [x, y]})
    return msg["type"] == "ACK"


def continue_shown(gnome) -> int | None:
    """The height of Continue's middle where it shows now: in its place,
    or lower when it made room for the pointer."""
    top = gnome.continue_y - 16
    screen = gnome.screen()
    ys = [y for y in range(top, top + 200) if screen.pixel(456, y) == CONTINUE_GREEN]
    return (ys[0] + ys[-1]) // 2 if ys else None


def still_paused_after_release(gnome, client, held: bool) -> None:
    """The person pressed where Continue would appear (the button `held`
    still): Continue shows clear of the pointer, the release resumes
    nothing, and a real click on Continue does."""
    y = poll(lambda: continue_shown(gnome), timeout=5, what="Continue shown")
    x, py = gnome.pointer()
    assert y - py >= 16 + 16, f"Continue at {y} under the pointer at {py}"
    if held:
        gnome.person.button_up()
    # A long press on the bare desktop opens GNOME's background menu,
    # which would take the next click: the person closes it.
    gnome.person.key("Escape")
    time.sleep(1.5)
    assert not acts(client), "the click that paused the agent resumed it"
    time.sleep(1.6)
    gnome.person.real_click(640, y)
    poll(lambda: acts(client), timeout=5, what="Continue clicked resuming")


def test_a_press_where_continue_appears_pauses_and_its_release_does_not_resume(gnome, client):
    """The pointer rests where Continue would appear (the agent left it
    there); the person's press there pauses, Continue appears clear of
    the pointer, and the release resumes nothing."""
    assert client.take_over()["type"] == "TAKEOVER_STATE"
    try:
        poll(lambda: acts_at(client, 640, gnome.continue_y), timeout=10, what="the takeover acting")
        time.sleep(0.5)
        gnome.person._do("button", button=1, press=True)
        poll(lambda: not acts_at(client, 640, gnome.continue_y), timeout=5,
             what="the press pausing the agent")
        still_paused_after_release(gnome, client, held=True)
    finally:
        client.take_over(False)


def test_a_click_just_after_a_move_paused_does_not_resume(gnome, client):
    """The person moves onto a spot (a window's close button) where
    Continue would appear and clicks it: the move pauses, Continue makes
    room for the pointer, and that click is not taken as Continue."""
    assert client.take_over()["type"] == "TAKEOVER_STATE"
    try:
        poll(lambda: acts(client), timeout=10, what="the takeover acting")
        gnome.person.button_down(640, gnome.continue_y)
        gnome.person.button_up()
        poll(lambda: not acts(client), timeout=5, what="the move pausing the agent")
        still_paused_after_release(gnome, client, held=False)
    finally:
        client.take_over(False)


def test_every_real_click_on_continue_resumes(gnome, client):
    """Twenty pauses by the person's move, each ended by their click on
    Continue: each resumes, and stays resumed (the click's own events are
    not taken for a new touch)."""
    assert client.take_over()["type"] == "TAKEOVER_STATE"
    resumed = 0
    try:
        for i in range(20):
            poll(lambda: acts(client), timeout=10, what=f"acting before pause {i}")
            gnome.person.move(300 + i * 10, 500)
            poll(lambda: not acts(client), timeout=5, what=f"pause {i} by the person's move")
            poll(lambda: gnome.pixel(456, gnome.continue_y) == CONTINUE_GREEN, timeout=5,
                 what="Continue on screen")
            # deskhand's own last act was at least this long ago: a click
            # right after one of its own is not taken for the person's.
            time.sleep(1.6)
            gnome.person.real_click(640, gnome.continue_y)
            poll(lambda: acts(client), timeout=5, what=f"Continue {i} resuming")
            time.sleep(0.3)
            assert acts(client), f"Continue {i} resumed and paused again"
            resumed += 1
    finally:
        client.take_over(False)
    assert resumed == 20
