"""Attaching to an existing X server: input needs a consent file."""

import json

import pytest

from daemon import Daemon
from xhelpers import pointer, run, start_xvfb


@pytest.fixture(scope="module")
def xvfb():
    server = start_xvfb("1024x768")
    yield server
    server.stop()


def serve(xvfb, *extra):
    return Daemon("--display", xvfb.display, *extra)


def stop(d):
    rc = d.terminate()
    assert rc == 0, f"deskhand exited {rc}\n{d.stderr_tail()}"


def test_without_consent_input_is_not_granted(xvfb):
    run(xvfb.display, "xdotool", "mousemove", "10", "10")
    d = serve(xvfb)
    try:
        assert d.display == xvfb.display, d.ready
        c = d.client()
        for payload in ({"action": "mouse_move", "coordinate": [200, 150]},
                        {"action": "left_click", "coordinate": [200, 150]},
                        {"action": "type", "text": "nope"}):
            msg = c.request("INPUT_ACTION", payload)
            assert msg["type"] == "ERROR", msg
            assert msg["payload"]["code"] == "CAPABILITY_NOT_GRANTED", msg
            assert (msg["payload"].get("details") or {}).get("needed") == "consent", msg
        assert pointer(xvfb.display) == (10, 10), "input was injected without consent"
        # reading the screen is not input: it still works
        assert c.screenshot()["width"] == 1024
        c.close()
    finally:
        stop(d)
    assert pointer(xvfb.display) == (10, 10)
    assert run(xvfb.display, "xdpyinfo"), "deskhand took down a display it did not start"


def test_consent_file_granting_input_allows_it(xvfb, tmp_path):
    consent = tmp_path / "consent.json"
    consent.write_text(json.dumps({"input": True}))
    run(xvfb.display, "xdotool", "mousemove", "10", "10")
    d = serve(xvfb, "--consent", str(consent))
    try:
        c = d.client()
        c.act("mouse_move", coordinate=[200, 150])
        assert pointer(xvfb.display) == (200, 150)
        c.close()
    finally:
        stop(d)
    assert run(xvfb.display, "xdpyinfo"), "deskhand took down a display it did not start"


def test_consent_file_denying_input_refuses_it(xvfb, tmp_path):
    consent = tmp_path / "consent.json"
    consent.write_text(json.dumps({"input": False}))
    run(xvfb.display, "xdotool", "mousemove", "10", "10")
    d = serve(xvfb, "--consent", str(consent))
    try:
        c = d.client()
        msg = c.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [300, 300]})
        assert msg["type"] == "ERROR" and msg["payload"]["code"] == "CAPABILITY_NOT_GRANTED", msg
        assert pointer(xvfb.display) == (10, 10)
        c.close()
    finally:
        stop(d)
