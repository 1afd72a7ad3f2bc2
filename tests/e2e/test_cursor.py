"""mouse_move, CURSOR_POSITION_REQUEST and the real pointer agree."""

import pytest
from desktop import attach



@pytest.mark.parametrize("target", [(321, 234), (1279, 799), (0, 0), (640, 17)])
def test_mouse_move_lands_where_cursor_position_says(client, display, target):
    client.act("mouse_move", coordinate=list(target))
    pos = client.call("CURSOR_POSITION_REQUEST", {}, expect="CURSOR_POSITION_RESPONSE")
    assert (pos["x"], pos["y"]) == target, pos
    assert pos["monitor"] == 0
    assert attach(display).pointer() == target, "xdotool getmouselocation disagrees"
