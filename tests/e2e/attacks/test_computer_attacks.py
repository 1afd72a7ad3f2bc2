"""Attacks on the computer endpoints (/v1/actions, /v1/computer/*).

| attack class | what the attacker does | what must happen | test name |
|---|---|---|---|
| no token | POSTs a batch without the token, or with a wrong one | 401, nothing sent | test_no_or_wrong_token_is_401_on_every_computer_route |
| foreign Origin | a web page's fetch to the endpoints | 403 | test_foreign_origin_is_403 |
| DNS rebinding | a foreign `Host` | 403 | test_foreign_host_is_403 |
| simple request | `Content-Type: text/plain` (no CORS preflight) | 415, nothing sent | test_non_json_content_type_is_415 |
| oversized body | a body over the 1 MiB limit | 413, nothing typed | test_oversized_body_is_refused |
| session from nowhere | an invented `X-Deskhand-Session` | 400, no session, nothing sent | test_an_invented_session_grants_nothing |
| blind input | a click before any screenshot was returned | refused, the pointer does not move | test_input_before_any_frame_is_refused |
| orphan takeover | a first click that is refused (no frame yet, or off the frame) | no takeover stays: the overlay is unmapped, another client takes over at once | test_a_refused_first_click_leaves_no_frame_on_screen |
| abandoned takeover | one click, then silence | the takeover ends after 60 s without input: the frame goes, another client takes over | test_a_takeover_left_idle_ends_after_a_minute |
| token swap | another token's `X-Deskhand-Session`, and its `DELETE` | 400, nothing sent, the owner's takeover and session stay | test_another_tokens_session_is_refused_and_its_delete_ends_nothing |
"""

from __future__ import annotations

import json
import time

import pytest

from computer_http import Computer, request
from daemon import Client
from desktop import attach
from xhelpers import overlay_viewable, poll

ROUTES = [("POST", "/v1/actions"), ("POST", "/v1/computer/anthropic"),
          ("POST", "/v1/computer/openai"), ("GET", "/v1/computer/anthropic/tool")]
BATCH = json.dumps([{"action_type": "mouse_move", "x": 3, "y": 3}]).encode()


def headers(daemon, **extra) -> dict:
    h = {"Host": f"127.0.0.1:{daemon.port}", "Authorization": f"Bearer {daemon.token}",
         "Content-Type": "application/json"}
    h.update(extra)
    return {k: v for k, v in h.items() if v is not None}


@pytest.mark.parametrize("method,path", ROUTES)
def test_no_or_wrong_token_is_401_on_every_computer_route(daemon, method, path):
    body = BATCH if method == "POST" else None
    assert request(daemon.port, method, path, body, headers(daemon, Authorization=None)).status == 401
    wrong = headers(daemon, Authorization="Bearer " + "0" * 64)
    assert request(daemon.port, method, path, body, wrong).status == 401


@pytest.mark.parametrize("method,path", ROUTES)
def test_foreign_origin_is_403(daemon, method, path):
    body = BATCH if method == "POST" else None
    h = headers(daemon, Origin="https://evil.example")
    assert request(daemon.port, method, path, body, h).status == 403


def test_foreign_host_is_403(daemon):
    h = headers(daemon, Host=f"evil.example:{daemon.port}")
    assert request(daemon.port, "POST", "/v1/actions", BATCH, h).status == 403


def test_non_json_content_type_is_415(daemon):
    before = attach(daemon.display).pointer()
    h = headers(daemon, **{"Content-Type": "text/plain"})
    assert request(daemon.port, "POST", "/v1/actions", BATCH, h).status == 415
    assert attach(daemon.display).pointer() == before


def test_oversized_body_is_refused(daemon):
    big = json.dumps([{"action_type": "type", "text": "a" * (2 << 20)}]).encode()
    a = request(daemon.port, "POST", "/v1/actions", big, headers(daemon))
    assert a.status == 413


def test_an_invented_session_grants_nothing(daemon):
    before = attach(daemon.display).pointer()
    h = headers(daemon, **{"X-Deskhand-Session": "http-00000000-0000-0000-0000-000000000000"})
    a = request(daemon.port, "POST", "/v1/actions", BATCH, h)
    assert a.status == 400
    assert a.json()["error"]["details"]["field"] == "X-Deskhand-Session"
    assert "x-deskhand-session" not in a.headers, "no session was made for it"
    assert attach(daemon.display).pointer() == before


def test_input_before_any_frame_is_refused(daemon):
    c = Computer(daemon)
    try:
        before = attach(daemon.display).pointer()
        r = c.anthropic({"type": "tool_use", "id": "t", "name": "computer",
                         "input": {"action": "left_click", "coordinate": [5, 5]}})
        assert r["is_error"] is True
        assert attach(daemon.display).pointer() == before, "nothing was sent"
    finally:
        c.end()
    fresh = Computer(daemon)  # the error's screenshot was c's first frame
    try:
        b = fresh.actions([{"action_type": "mouse_move", "x": 7, "y": 7}])
        assert b["error"]["failed_action_index"] == 0
        assert attach(daemon.display).pointer() == before
    finally:
        fresh.end()


def test_a_refused_first_click_leaves_no_frame_on_screen(daemon):
    """A session's first click refused (no frame yet; then off the frame)
    leaves no takeover behind: no red frame, and another client is not
    told BUSY."""
    c = Computer(daemon)
    try:
        before = attach(daemon.display).pointer()
        r = c.actions([{"action_type": "left_click", "x": 5, "y": 5}])
        assert r["error"]["failed_action_index"] == 0, r
        assert not overlay_viewable(daemon.display), "no frame stays for a refused click"
        c.actions([{"action_type": "screenshot"}])
        r = c.actions([{"action_type": "left_click", "x": 99999, "y": 5}])
        assert r["error"]["code"] == "desktop_coordinate_out_of_bounds", r
        assert not overlay_viewable(daemon.display)
        assert attach(daemon.display).pointer() == before, "nothing was sent"
        other = Client(daemon.ws_url, daemon.token, takeover=False)
        try:
            reply = other.request("TAKEOVER_REQUEST", {"on": True})
            assert reply["type"] == "TAKEOVER_STATE" and reply["payload"]["on"] is True, reply
            poll(lambda: overlay_viewable(daemon.display), timeout=5, what="the other's frame")
        finally:
            other.close()
        poll(lambda: not overlay_viewable(daemon.display), timeout=5, what="the frame gone")
    finally:
        c.end()


def test_a_takeover_left_idle_ends_after_a_minute(daemon):
    """A client that clicked once and went silent holds the desktop only
    for the idle time (60 s), without a DELETE."""
    c = Computer(daemon)
    c.actions([{"action_type": "screenshot"}])
    c.actions([{"action_type": "mouse_move", "x": 40, "y": 40}])
    assert overlay_viewable(daemon.display), "the first input shows the frame"
    started = time.monotonic()
    poll(lambda: not overlay_viewable(daemon.display), timeout=90, interval=0.5,
         what="the idle takeover to end")
    assert time.monotonic() - started > 50, "it ended before its idle time"
    other = Client(daemon.ws_url, daemon.token, takeover=False)
    try:
        reply = other.request("TAKEOVER_REQUEST", {"on": True})
        assert reply["type"] == "TAKEOVER_STATE" and reply["payload"]["on"] is True, reply
    finally:
        other.close()
        c.end()


def test_another_tokens_session_is_refused_and_its_delete_ends_nothing(two_clients):
    d, other = two_clients
    mine = Computer(d)
    try:
        mine.actions([{"action_type": "screenshot"}])
        mine.actions([{"action_type": "mouse_move", "x": 40, "y": 40}])
        assert attach(d.display).pointer() == (40, 40)
        assert overlay_viewable(d.display), "the owner's takeover shows"
        theirs = {"Authorization": f"Bearer {other}", "Content-Type": "application/json",
                  "X-Deskhand-Session": mine.session}
        move = json.dumps([{"action_type": "mouse_move", "x": 90, "y": 90}]).encode()
        a = request(d.port, "POST", "/v1/actions", move, theirs)
        assert a.status == 400, (a.status, a.body[:200])
        assert a.json()["error"]["details"]["field"] == "X-Deskhand-Session"
        assert request(d.port, "DELETE", "/v1/computer/session", None, theirs).status == 400
        assert attach(d.display).pointer() == (40, 40), "nothing was sent for the other token"
        assert overlay_viewable(d.display), "its DELETE ended nothing"
        mine.actions([{"action_type": "mouse_move", "x": 50, "y": 50}])
        assert attach(d.display).pointer() == (50, 50), "the owner's session still drives"
    finally:
        mine.end()
    poll(lambda: not overlay_viewable(d.display), timeout=5, what="the owner's frame gone")
