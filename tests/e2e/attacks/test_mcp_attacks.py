"""Attacks on MCP over Streamable HTTP (`/mcp`): the same guard as `/v1/ws`
(token, loopback Host with our port, no foreign Origin, `Origin: null`
included), the body limit, one client's session used by another, and
sessions opened by the thousand."""

from __future__ import annotations

import json
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


def rss_kib(pid: int) -> int:
    """The process's resident set, from /proc."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def initialize(port: int, token: str) -> tuple[int, str | None, bytes]:
    """A legacy initialize: the status, the Mcp-Session-Id and the body."""
    body = INIT.encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                   f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                   "Accept: application/json, text/event-stream\r\nConnection: close\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
        raw = b""
        while chunk := s.recv(65536):
            raw += chunk
    head, _, rest = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    sid = next((line.split(":", 1)[1].strip() for line in lines[1:]
                if line.lower().startswith("mcp-session-id:")), None)
    return int(lines[0].split()[1]), sid, rest


def test_three_thousand_sessions_are_refused_past_the_cap_and_memory_stays_bounded():
    """3,000 initializes with one token: the token's 128 are opened, the
    rest refused with a JSON-RPC error (503) that says why; the daemon's
    memory stays bounded; ending them frees their places."""
    d = Daemon("--virtual=800x600")
    try:
        pid = d.proc.pid
        before = rss_kib(pid)
        opened, refused = [], []
        for _ in range(3000):
            status, sid, body = initialize(d.port, d.token)
            if status == 200:
                assert sid, "an opened session has its id"
                opened.append(sid)
            else:
                assert status == 503, (status, body[:200])
                refused.append(json.loads(body))
        after = rss_kib(pid)
        assert len(opened) == 128, len(opened)
        assert len(refused) == 3000 - 128
        assert "too many MCP sessions" in refused[0]["error"]["message"], refused[0]
        assert after - before < 40 * 1024, f"RSS grew {before} -> {after} KiB"
        # Ending them frees their places.
        for sid in opened:
            with socket.create_connection(("127.0.0.1", d.port), timeout=10) as s:
                s.sendall((f"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{d.port}\r\n"
                           f"Authorization: Bearer {d.token}\r\nMcp-Session-Id: {sid}\r\n"
                           "MCP-Protocol-Version: 2025-06-18\r\n"
                           "Content-Length: 0\r\n\r\n").encode())
                assert read_status(s) in (200, 202, 204)
        status, sid, _ = initialize(d.port, d.token)
        assert status == 200 and sid, status
    finally:
        assert d.terminate() == 0
