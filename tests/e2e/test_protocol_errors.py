"""Bad messages get ERRORs and the connection stays usable."""

import json
import time

import pytest


def test_malformed_json_is_invalid_message_and_connection_survives(client):
    client.ws.send("{this is not json")
    msg = client.recv()
    assert msg["type"] == "ERROR", msg
    assert msg["payload"]["code"] == "INVALID_MESSAGE", msg
    assert client.screenshot()["width"] == 1280


def test_unknown_type_is_answered_with_its_id(client):
    mid = client.send("FROBNICATE_REQUEST", {})
    msg = client.recv()
    assert msg.get("id") == mid, f"reply does not carry the request id {mid}: {msg}"
    assert msg["type"] == "ERROR", msg
    assert msg["payload"]["code"] == "UNKNOWN_MESSAGE_TYPE", msg
    assert client.screenshot()["height"] == 800


def test_unknown_action_is_invalid_arguments_or_unsupported(client):
    msg = client.request("INPUT_ACTION", {"action": "teleport", "coordinate": [1, 1]})
    assert msg["type"] == "ERROR", msg
    assert msg["payload"]["code"] in ("INVALID_ARGUMENTS", "FEATURE_NOT_SUPPORTED"), msg


def test_bad_coordinate_type_is_invalid_arguments(client):
    msg = client.request("INPUT_ACTION", {"action": "left_click", "coordinate": "here"})
    assert msg["type"] == "ERROR", msg
    assert msg["payload"]["code"] == "INVALID_ARGUMENTS", msg


def test_wait_over_cap_is_refused_or_capped(client):
    t0 = time.monotonic()
    msg = client.request("INPUT_ACTION", {"action": "wait", "duration_ms": 60000}, timeout=10)
    assert time.monotonic() - t0 < 6, "wait was not capped at 5000 ms"
    assert msg["type"] in ("ACK", "ERROR"), msg


def test_wait_waits(client):
    t0 = time.monotonic()
    client.act("wait", duration_ms=300)
    assert time.monotonic() - t0 >= 0.29


def test_error_shape(client):
    msg = client.request("FROBNICATE_REQUEST", {})
    p = msg["payload"]
    assert set(p) >= {"code", "message", "fatal", "details"}, p
    assert isinstance(p["message"], str) and p["message"], p
    assert p["fatal"] is False, p


def test_malformed_frames_get_clear_answers(daemon):
    """The attack catalogue's malformed wire messages: each gets an answer
    that says what was wrong, under the request's id, echoing no more than
    a little of the client's own text."""
    from websockets.exceptions import ConnectionClosed

    c = daemon.client()
    try:
        # A lone surrogate: not JSON to a strict parser, yet the answer
        # carries the request's id.
        c.ws.send('{"type":"INPUT_ACTION","id":"lone-1","ts":0,'
                  '"payload":{"action":"type","text":"\\ud800"}}')
        msg = c.recv()
        assert msg["type"] == "ERROR" and msg["payload"]["code"] == "INVALID_MESSAGE", msg
        assert msg.get("id") == "lone-1", msg
        held = c.request("INPUT_ACTION", {"action": "hold_key", "key": "shift"})
        assert held["payload"]["code"] == "INVALID_ARGUMENTS", held
        assert "duration_ms is required" in held["payload"]["message"], held
        long_key = "k" * 10_000
        named = c.request("INPUT_ACTION", {"action": "key", "key": long_key})
        assert named["payload"]["code"] == "INVALID_ARGUMENTS", named
        assert "(10000 characters)" in named["payload"]["message"], named
        assert len(json.dumps(named)) < 1000, "the key name came back whole"
        # A text frame that is not UTF-8 ends the connection with 1007.
        c.ws.send(b'{"type":"\xff\xfe"}', text=True)
        with pytest.raises(ConnectionClosed) as closed:
            c.ws.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007, closed.value
    finally:
        c.close()
