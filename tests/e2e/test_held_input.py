"""Input held by a client is released when that client goes away."""

import socket

from desktop import attach
from xhelpers import poll, require


def test_abrupt_disconnect_releases_held_button(daemon, display):
    require("xinput")
    held = attach(display).held_buttons()
    assert not any(held.values()), f"a button is already down: {held}"
    c = daemon.client()
    c.act("mouse_down", coordinate=[640, 700], button="left")
    held = attach(display).held_buttons()
    assert any(1 in b for b in held.values()), f"mouse_down did not press button 1: {held}"
    # abrupt: no close frame, just drop the TCP connection
    c.ws.socket.shutdown(socket.SHUT_RDWR)
    c.ws.socket.close()
    poll(lambda: not attach(display).any_button_down(), timeout=5,
         what="button 1 to be released after the client vanished")


def test_clean_close_releases_held_button(daemon, display):
    require("xinput")
    c = daemon.client()
    c.act("mouse_down", coordinate=[640, 700], button="left")
    assert attach(display).any_button_down()
    c.close()
    poll(lambda: not attach(display).any_button_down(), timeout=5,
         what="button 1 to be released after the client closed")


def test_next_client_is_not_blocked_after_disconnect(daemon, display):
    c = daemon.client()
    c.act("mouse_down", coordinate=[600, 700], button="left")
    c.ws.socket.shutdown(socket.SHUT_RDWR)
    c.ws.socket.close()
    c2 = daemon.client()
    try:
        c2.act("left_click", coordinate=[610, 710])
        poll(lambda: not attach(display).any_button_down(), timeout=5, what="no button held")
    finally:
        c2.close()
