"""Local port security on the WebSocket upgrade: token, Origin, Host."""

import pytest
from websockets.exceptions import InvalidStatus

from daemon import Client, raw_upgrade


def rejected_status(daemon, token, headers=None) -> int:
    with pytest.raises(InvalidStatus) as exc:
        Client(daemon.ws_url, token, headers=headers)
    return exc.value.response.status_code


def test_no_token_is_401(daemon):
    assert rejected_status(daemon, None) == 401


def test_wrong_token_is_401(daemon):
    wrong = ("0" if daemon.token[0] != "0" else "1") + daemon.token[1:]
    assert rejected_status(daemon, wrong) == 401


def test_token_in_query_string_is_not_accepted(daemon):
    with pytest.raises(InvalidStatus) as exc:
        Client(f"{daemon.ws_url}?token={daemon.token}", None)
    assert exc.value.response.status_code == 401


def test_foreign_origin_is_403(daemon):
    status = rejected_status(daemon, daemon.token, headers={"Origin": "http://evil.example"})
    assert status == 403


def test_foreign_host_is_403(daemon):
    auth = {"Authorization": f"Bearer {daemon.token}"}
    assert raw_upgrade(daemon.port, {"Host": f"evil.example:{daemon.port}", **auth}) == 403
    assert raw_upgrade(daemon.port, {"Host": "127.0.0.1:1", **auth}) == 403


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}"])
def test_loopback_host_with_token_upgrades(daemon, host):
    """Control for the 401/403 tests: the same raw request with a good Host is accepted."""
    hdrs = {"Host": host.format(port=daemon.port), "Authorization": f"Bearer {daemon.token}"}
    assert raw_upgrade(daemon.port, hdrs) == 101


def test_valid_token_connects(daemon):
    c = daemon.client()
    try:
        assert c.hello["type"] == "HELLO"
    finally:
        c.close()
