"""Attacks on MCP over Streamable HTTP (`/mcp`): the same guard as `/v1/ws`
(token, loopback Host with our port, no foreign Origin, `Origin: null`
included), the body limit, and one client's session used by another."""

from __future__ import annotations

import json
import os
import select
import socket

import pytest

from daemon import Daemon, read_status
from mcp_client import ToolError, http, run

INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "attacker", "version": "1"}}})


def post(port: int, headers: dict, body: str = INIT) -> int:
    base = {"Host": f"127.0.0.1:{port}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Content-Length": str(len(body.encode()))}
    base.update(headers)
    lines = [f"{k}: {v}" for k, v in base.items() if v is not None]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(("\r\n".join(["POST /mcp HTTP/1.1", *lines]) + "\r\n\r\n").encode()
                  + body.encode())
        return read_status(s)


def test_the_guard_stands_in_front_of_mcp(daemon):
    p, good = daemon.port, f"Bearer {daemon.token}"
    assert post(p, {"Authorization": good}) == 200, "a well-formed initialize is answered"
    assert post(p, {}) == 401
    assert post(p, {"Authorization": "Bearer " + "0" * 64}) == 401
    assert post(p, {"Authorization": good, "Origin": "http://evil.example"}) == 403
    assert post(p, {"Authorization": good, "Origin": "null"}) == 403
    assert post(p, {"Authorization": good, "Host": f"evil.example:{p}"}) == 403
    assert post(p, {"Authorization": good, "Host": f"127.0.0.1:{p + 1}"}) == 403


def test_an_oversized_body_is_refused(daemon):
    """The body is sent in pieces until the answer comes: deskhand refuses
    it (413) before reading all of it, and then closes."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                       "params": {"pad": "x" * (17 << 20)}}).encode()
    p = daemon.port
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n"
            f"Authorization: Bearer {daemon.token}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", p), timeout=10) as s:
        s.sendall(head)
        for i in range(0, len(body), 1 << 16):
            if select.select([s], [], [], 0)[0]:
                break
            try:
                s.sendall(body[i:i + (1 << 16)])
            except (BrokenPipeError, ConnectionResetError):
                break
        assert read_status(s) == 413


@pytest.fixture(scope="module")
def two_clients(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tokens")
    os.chmod(tmp, 0o700)
    other = tmp / "other.token"
    other.write_text(os.urandom(32).hex() + "\n")
    os.chmod(other, 0o600)
    d = Daemon("--virtual=1280x800", "--client-token-file", str(other))
    yield d, other.read_text().strip()
    d.terminate()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_another_clients_session_id_is_refused(two_clients, mode):
    d, other = two_clients

    async def body():
        async with http(d, mode) as mine:
            state = await mine.start()
            async with http(d, mode, token=other) as theirs:
                with pytest.raises(ToolError) as refused:
                    await theirs.call("get_session_state", {"session_id": state["session_id"]})
                assert refused.value.error["code"] == "session_not_found"
                with pytest.raises(ToolError):
                    await theirs.call("end_session", {"session_id": state["session_id"]})
                own = await theirs.start()
                assert own["session_id"] != state["session_id"]
                await theirs.end()
            assert (await mine.call("get_session_state"))["session_id"] == state["session_id"]
            await mine.end()
    run(body())


def test_an_http_session_id_is_refused_with_another_clients_token(two_clients):
    d, other = two_clients
    with socket.create_connection(("127.0.0.1", d.port), timeout=10) as s:
        body = INIT.encode()
        s.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{d.port}\r\n"
                   f"Authorization: Bearer {d.token}\r\nContent-Type: application/json\r\n"
                   "Accept: application/json, text/event-stream\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(4096)
    sid = next(line.split(b":", 1)[1].strip().decode() for line in head.split(b"\r\n")
               if line.lower().startswith(b"mcp-session-id:"))
    listing = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    headers = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    assert post(d.port, {"Authorization": f"Bearer {other}", **headers}, listing) == 404
    assert post(d.port, {"Authorization": f"Bearer {d.token}", **headers}, listing) == 200
