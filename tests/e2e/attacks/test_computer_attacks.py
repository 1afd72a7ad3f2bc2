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
"""

from __future__ import annotations

import json

import pytest

from computer_http import Computer, request
from xhelpers import pointer

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
    before = pointer(daemon.display)
    h = headers(daemon, **{"Content-Type": "text/plain"})
    assert request(daemon.port, "POST", "/v1/actions", BATCH, h).status == 415
    assert pointer(daemon.display) == before


def test_oversized_body_is_refused(daemon):
    big = json.dumps([{"action_type": "type", "text": "a" * (2 << 20)}]).encode()
    a = request(daemon.port, "POST", "/v1/actions", big, headers(daemon))
    assert a.status == 413


def test_an_invented_session_grants_nothing(daemon):
    before = pointer(daemon.display)
    h = headers(daemon, **{"X-Deskhand-Session": "http-00000000-0000-0000-0000-000000000000"})
    a = request(daemon.port, "POST", "/v1/actions", BATCH, h)
    assert a.status == 400
    assert a.json()["error"]["details"]["field"] == "X-Deskhand-Session"
    assert "x-deskhand-session" not in a.headers, "no session was made for it"
    assert pointer(daemon.display) == before


def test_input_before_any_frame_is_refused(daemon):
    c = Computer(daemon)
    try:
        before = pointer(daemon.display)
        r = c.anthropic({"type": "tool_use", "id": "t", "name": "computer",
                         "input": {"action": "left_click", "coordinate": [5, 5]}})
        assert r["is_error"] is True
        assert pointer(daemon.display) == before, "nothing was sent"
    finally:
        c.end()
    fresh = Computer(daemon)  # the error's screenshot was c's first frame
    try:
        b = fresh.actions([{"action_type": "mouse_move", "x": 7, "y": 7}])
        assert b["error"]["failed_action_index"] == 0
        assert pointer(daemon.display) == before
    finally:
        fresh.end()
