"""Attaching to an existing X server: input needs a consent file."""

import json

import pytest

from daemon import Daemon
from desktop import attach, start
from xhelpers import run


@pytest.fixture(scope="module")
def xvfb():
    server = start("1024x768")
    yield server
    server.stop()


def serve(xvfb, *extra):
    return Daemon("--display", xvfb.name, *extra)


def stop(d):
    rc = d.terminate()
    assert rc == 0, f"deskhand exited {rc}\n{d.stderr_tail()}"


def test_without_consent_input_is_not_granted(xvfb):
    attach(xvfb.name).person.move(10, 10)
    d = serve(xvfb)
    try:
        assert d.display == xvfb.name, d.ready
        c = d.client()
        for payload in ({"action": "mouse_move", "coordinate": [200, 150]},
                        {"action": "left_click", "coordinate": [200, 150]},
                        {"action": "type", "text": "nope"}):
            msg = c.request("INPUT_ACTION", payload)
            assert msg["type"] == "ERROR", msg
            assert msg["payload"]["code"] == "CAPABILITY_NOT_GRANTED", msg
            assert (msg["payload"].get("details") or {}).get("needed") == "consent", msg
        assert attach(xvfb.name).pointer() == (10, 10), "input was injected without consent"
        # reading the screen is not input: it still works
        assert c.screenshot()["width"] == 1024
        c.close()
    finally:
        stop(d)
    assert attach(xvfb.name).pointer() == (10, 10)
    assert run(xvfb.name, "xdpyinfo"), "deskhand took down a display it did not start"


def test_consent_file_granting_input_allows_it(xvfb, tmp_path):
    consent = tmp_path / "consent.json"
    consent.write_text(json.dumps({"input": True}))
    attach(xvfb.name).person.move(10, 10)
    d = serve(xvfb, "--consent", str(consent))
    try:
        c = d.client()
        c.act("mouse_move", coordinate=[200, 150])
        assert attach(xvfb.name).pointer() == (200, 150)
        c.close()
    finally:
        stop(d)
    assert run(xvfb.name, "xdpyinfo"), "deskhand took down a display it did not start"


def test_consent_file_denying_input_refuses_it(xvfb, tmp_path):
    consent = tmp_path / "consent.json"
    consent.write_text(json.dumps({"input": False}))
    attach(xvfb.name).person.move(10, 10)
    d = serve(xvfb, "--consent", str(consent))
    try:
        c = d.client()
        msg = c.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [300, 300]})
        assert msg["type"] == "ERROR" and msg["payload"]["code"] == "CAPABILITY_NOT_GRANTED", msg
        assert attach(xvfb.name).pointer() == (10, 10)
        c.close()
    finally:
        stop(d)


def test_the_host_asks_the_person_and_their_answer_is_the_sessions_grant(xvfb):
    """No consent file, a host on the control pipe: a takeover request
    waits for the person's answer there; allowed with the takeover ticked,
    the session drives; a second session is asked anew and denied."""
    attach(xvfb.name).person.move(10, 10)
    d = Daemon("--display", xvfb.name, control=True)
    try:
        c = d.client(takeover=False, hello_ack={"client": "consent test agent"})
        mid = c.send("TAKEOVER_REQUEST", {"on": True})
        ask = d.next_event()
        assert ask["event"] == "consent.request", ask
        assert ask["client"] == "consent test agent" and ask["takeover"] is True, ask
        assert ask["apps"] is None and ask["timeout_s"] == 60, ask
        d.control({"method": "consent.answer",
                   "params": {"id": ask["id"], "allow": True, "takeover": True}})
        # The ack and the end of the question, in either order.
        events = [d.next_event(), d.next_event()]
        assert {"event": "ack", "method": "consent.answer", "id": ask["id"],
                "waiting": True} in events, events
        assert {"event": "consent.ended", "id": ask["id"], "outcome": "allowed"} in events, events
        reply = c.reply_to(mid)
        assert reply["type"] == "TAKEOVER_STATE" and reply["payload"]["on"] is True, reply
        c.act("mouse_move", coordinate=[200, 150])
        assert attach(xvfb.name).pointer() == (200, 150)
        c.close()

        other = d.client(takeover=False)
        mid = other.send("TAKEOVER_REQUEST", {"on": True})
        ask = d.next_event()
        assert ask["event"] == "consent.request" and ask["client"] == "an unnamed client", ask
        d.control({"method": "consent.answer", "params": {"id": ask["id"], "allow": False}})
        reply = other.reply_to(mid)
        assert reply["payload"]["code"] == "CAPABILITY_NOT_GRANTED", reply
        assert reply["payload"]["details"]["needed"] == "consent", reply
        msg = other.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [300, 300]})
        assert msg["type"] == "ERROR", msg
        assert attach(xvfb.name).pointer() == (200, 150), "the denied session sent nothing"
        other.close()
    finally:
        stop(d)
