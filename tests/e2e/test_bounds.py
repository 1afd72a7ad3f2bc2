"""INPUT_OUT_OF_BOUNDS: coordinates outside the desktop inject nothing and
echo the display rects."""

import pytest
from desktop import attach


SINGLE = [{"index": 0, "origin": [0, 0], "size": [1280, 800]}]


def error_payload(msg: dict, code: str) -> dict:
    assert msg["type"] == "ERROR", f"expected ERROR {code}, got {msg}"
    assert msg["payload"]["code"] == code, msg
    return msg["payload"]


@pytest.mark.parametrize("action,coord", [
    ("left_click", [10000, 10000]),
    ("left_click", [1280, 10]),
    ("mouse_move", [10, 800]),
    ("right_click", [-1, 5]),
    ("double_click", [5, -1]),
])
def test_out_of_bounds_is_refused_with_display_rects(client, display, action, coord):
    client.act("mouse_move", coordinate=[100, 100])
    msg = client.request("INPUT_ACTION", {"action": action, "coordinate": coord})
    p = error_payload(msg, "INPUT_OUT_OF_BOUNDS")
    assert p["fatal"] is False, p
    assert p["details"]["displays"] == SINGLE, p["details"]
    assert attach(display).pointer() == (100, 100), "an out-of-bounds action moved the pointer"


def test_drag_path_with_a_point_outside_is_refused(client, display):
    client.act("mouse_move", coordinate=[100, 100])
    msg = client.request("INPUT_ACTION", {"action": "drag", "button": "left",
                                          "path": [[10, 10], [200, 200], [5000, 200]]})
    p = error_payload(msg, "INPUT_OUT_OF_BOUNDS")
    assert p["details"]["displays"] == SINGLE
    assert attach(display).pointer() == (100, 100), "part of a refused drag was performed"


def test_last_pixel_is_in_bounds(client, display):
    client.act("mouse_move", coordinate=[1279, 799])
    assert attach(display).pointer() == (1279, 799)


def test_connection_survives_out_of_bounds(client):
    client.request("INPUT_ACTION", {"action": "left_click", "coordinate": [9999, 9999]})
    assert client.screenshot()["width"] == 1280
