"""The computer tool on two real monitors (Xorg + dummy driver): DUMMY0
1280x800 at (0, 0), DUMMY1 1024x768 at (1280, 0). One frame shows both
(2304x800 at Anthropic's long-edge cap: 1568x544); a click on the second
monitor through frame pixels lands where it should, a click in the gap
below it is refused, and moving an output between frame and click gives
DESKTOP_LAYOUT_CHANGED."""

import json

import pytest

from computer_http import Computer, png_size, tool_result_image, tool_result_text
from daemon import Daemon
from desktop import attach, start_dual
from xhelpers import poll, run

SCALE = 1568 / 2304


@pytest.fixture(scope="module")
def dual(tmp_path_factory):
    xorg = start_dual()
    consent = tmp_path_factory.mktemp("consent") / "consent.json"
    consent.write_text(json.dumps({"input": True}))
    d = Daemon("--display", xorg.name, "--consent", str(consent))
    yield d, xorg
    rc = d.terminate()
    xorg.stop()
    assert rc == 0, d.stderr_tail()


@pytest.fixture
def computer(dual):
    c = Computer(dual[0])
    yield c
    c.end()


def act(c: Computer, **input_) -> dict:
    return c.anthropic({"type": "tool_use", "id": "t", "name": "computer", "input": input_})


def test_a_frame_of_both_and_a_click_on_the_second(computer, dual):
    _, xorg = dual
    shot = act(computer, action="screenshot")
    assert png_size(tool_result_image(shot)) == (1568, 544)
    # Desktop (1800, 400) is on DUMMY1.
    fx, fy = int(1800 * SCALE), int(400 * SCALE)
    r = act(computer, action="left_click", coordinate=[fx, fy])
    assert not r.get("is_error"), tool_result_text(r)
    x, y = attach(xorg.name).pointer()
    assert abs(x - 1800) <= 2 and abs(y - 400) <= 2, (x, y)


def test_a_click_in_the_gap_is_refused(computer, dual):
    _, xorg = dual
    act(computer, action="screenshot")
    before = attach(xorg.name).pointer()
    # Below DUMMY1 (768 tall) but within the 800-tall frame.
    r = act(computer, action="left_click", coordinate=[int(1800 * SCALE), 542])
    assert r["is_error"] is True
    assert tool_result_text(r).startswith("DESKTOP_COORDINATE_OUT_OF_BOUNDS"), tool_result_text(r)
    assert attach(xorg.name).pointer() == before


def test_moving_an_output_after_the_frame_gives_layout_changed(computer, dual):
    _, xorg = dual
    act(computer, action="screenshot")
    before = attach(xorg.name).pointer()
    run(xorg.name, "xrandr", "--output", "DUMMY1", "--pos", "1280x32")
    try:
        poll(lambda: "+1280+32" in run(xorg.name, "xrandr", "--listmonitors"), timeout=5,
             what="DUMMY1 to move")
        r = act(computer, action="left_click", coordinate=[100, 100])
        assert r["is_error"] is True
        assert tool_result_text(r).startswith("DESKTOP_LAYOUT_CHANGED"), tool_result_text(r)
        assert attach(xorg.name).pointer() == before, "nothing was sent"
        # The error's screenshot is a new frame: the next click works.
        again = act(computer, action="left_click", coordinate=[100, 100])
        assert not again.get("is_error"), tool_result_text(again)
    finally:
        run(xorg.name, "xrandr", "--output", "DUMMY1", "--pos", "1280x0")
        run(xorg.name, "xrandr", "--fb", "2304x800")
