"""Two real monitors (Xorg + dummy driver, RandR outputs side by side):
DUMMY0 1280x800 at (0, 0), DUMMY1 1024x768 at (1280, 0)."""

import json

import pytest

from daemon import Daemon
from desktop import attach, start_dual
from imaging import decode_png
from xhelpers import XTerm

DISPLAYS = [
    {"index": 0, "origin": [0, 0], "size": [1280, 800]},
    {"index": 1, "origin": [1280, 0], "size": [1024, 768]},
]


@pytest.fixture(scope="module")
def xorg():
    server = start_dual()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def dual(xorg, tmp_path_factory):
    consent = tmp_path_factory.mktemp("consent") / "consent.json"
    consent.write_text(json.dumps({"input": True}))
    d = Daemon("--display", xorg.name, "--consent", str(consent))
    c = d.client()
    yield d, c
    c.close()
    rc = d.terminate()
    assert rc == 0, d.stderr_tail()


def test_hello_reports_the_primary_resolution(dual):
    _, c = dual
    assert c.hello["payload"]["screen_resolution"] == [1280, 800]


def test_display_info_lists_both_monitors(dual):
    _, c = dual
    info = c.call("DISPLAY_INFO_REQUEST", {}, expect="DISPLAY_INFO_RESPONSE")
    mons = sorted(info["monitors"], key=lambda m: m["index"])
    assert [(m["index"], m["origin"], m["physical_size"]) for m in mons] == [
        (0, [0, 0], [1280, 800]), (1, [1280, 0], [1024, 768])], info
    assert [m["primary"] for m in mons] == [True, False], info
    assert [m["name"] for m in mons] == ["DUMMY0", "DUMMY1"], info
    for m in mons:
        assert m["scale"] == 1.0 and m["logical_size"] == m["physical_size"], m


def test_screenshot_of_monitor_1_shows_monitor_1(dual, xorg):
    _, c = dual
    # without a window manager the xterm lands exactly where asked
    term = XTerm(xorg.name, cols=30, rows=8, pos="+1400+100", bg="#0000ff")
    try:
        shot = c.screenshot(monitor=1, format="png")
        img = decode_png(shot["image"])
        assert (img.width, img.height) == (1024, 768)
        assert shot["monitor"] == 1 and shot["meta"]["display_id"] == 1, shot["meta"]
        r = term.rect()
        assert r.x == 1400, r
        local = (r.x - 1280 + r.w // 2, r.y + r.h - 10)
        assert img.pixel(*local) == (0, 0, 255), f"monitor-1 pixel {local} is not the blue window"
        full = decode_png(c.screenshot(monitor=0, format="png")["image"])
        assert (full.width, full.height) == (1280, 800)
    finally:
        term.close()


def test_region_across_monitors(dual):
    _, c = dual
    shot = c.screenshot(region=[1200, 100, 1400, 200], format="png")
    assert (decode_png(shot["image"]).width, shot["height"]) == (200, 100)


def test_click_on_second_monitor_is_in_bounds(dual, xorg):
    _, c = dual
    c.act("left_click", coordinate=[1300, 10])
    assert attach(xorg.name).pointer() == (1300, 10)
    pos = c.call("CURSOR_POSITION_REQUEST", {}, expect="CURSOR_POSITION_RESPONSE")
    assert (pos["x"], pos["y"], pos["monitor"]) == (1300, 10, 1), pos


@pytest.mark.parametrize("coord", [
    [2400, 900],   # beyond everything
    [2304, 10],    # one past the right edge of monitor 1
    [1500, 790],   # inside the bounding box, but below monitor 1 (768 tall): a gap
])
def test_outside_the_union_is_out_of_bounds(dual, xorg, coord):
    _, c = dual
    c.act("mouse_move", coordinate=[20, 20])
    msg = c.request("INPUT_ACTION", {"action": "left_click", "coordinate": coord})
    assert msg["type"] == "ERROR" and msg["payload"]["code"] == "INPUT_OUT_OF_BOUNDS", msg
    got = sorted(msg["payload"]["details"]["displays"], key=lambda m: m["index"])
    assert got == DISPLAYS, got
    assert attach(xorg.name).pointer() == (20, 20)


def test_setmonitor_bounds_the_very_next_input(dual, xorg):
    """Input keeps the layout between actions; a monitor set with `xrandr
    --setmonitor` still bounds the very next one (no DISPLAY_INFO between)."""
    from xhelpers import run

    _, c = dual
    c.act("mouse_move", coordinate=[900, 100])  # DUMMY0's right half
    run(xorg.name, "xrandr", "--setmonitor", "DESKHAND-LEFT", "640/100x800/100+0+0", "DUMMY0")
    try:
        msg = c.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [900, 200]})
        assert msg["type"] == "ERROR" and msg["payload"]["code"] == "INPUT_OUT_OF_BOUNDS", msg
        assert attach(xorg.name).pointer() == (900, 100), "the refused move happened"
    finally:
        run(xorg.name, "xrandr", "--delmonitor", "DESKHAND-LEFT")
    c.act("mouse_move", coordinate=[900, 200])
    assert attach(xorg.name).pointer() == (900, 200)


def test_layout_change_is_seen_live(dual, xorg):
    """Move DUMMY1 below DUMMY0: DISPLAY_INFO and the bounds follow at once."""
    from xhelpers import poll, run

    _, c = dual
    run(xorg.name, "xrandr", "--output", "DUMMY1", "--pos", "0x800")
    try:
        def origins():
            info = c.call("DISPLAY_INFO_REQUEST", {}, expect="DISPLAY_INFO_RESPONSE")
            return {m["index"]: m["origin"] for m in info["monitors"]}

        poll(lambda: origins() == {0: [0, 0], 1: [0, 800]}, timeout=5,
             what="DISPLAY_INFO to show DUMMY1 at (0, 800)")
        c.act("mouse_move", coordinate=[10, 1000])
        assert attach(xorg.name).pointer() == (10, 1000)
        msg = c.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [1300, 10]})
        assert msg["type"] == "ERROR" and msg["payload"]["code"] == "INPUT_OUT_OF_BOUNDS", msg
    finally:
        run(xorg.name, "xrandr", "--output", "DUMMY1", "--pos", "1280x0")
        run(xorg.name, "xrandr", "--fb", "2304x800")


def test_setmonitor_is_seen_by_the_very_next_request(dual, xorg):
    """`xrandr --setmonitor` splits the desktop: no polling, the next
    DISPLAY_INFO already lists the new monitor, and deleting it is seen too."""
    from xhelpers import run

    _, c = dual

    def names():
        info = c.call("DISPLAY_INFO_REQUEST", {}, expect="DISPLAY_INFO_RESPONSE")
        return sorted(m["name"] for m in info["monitors"])

    before = names()
    run(xorg.name, "xrandr", "--setmonitor", "DESKHAND-LEFT", "640/100x800/100+0+0", "DUMMY0")
    try:
        assert "DESKHAND-LEFT" in names(), "a new monitor was not seen at once"
    finally:
        run(xorg.name, "xrandr", "--delmonitor", "DESKHAND-LEFT")
    assert names() == before, "the deleted monitor is still reported"
