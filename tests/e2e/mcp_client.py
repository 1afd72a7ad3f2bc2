"""MCP clients of the official Python SDK (2.x) against the real binary:
over Streamable HTTP to a `deskhand serve` daemon, and over stdio to
`deskhand mcp` (standalone on a virtual desktop of its own, or relayed to a
daemon). Tests are plain functions that run one coroutine each."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from pathlib import Path

import httpx2
import mcp
from mcp import StdioServerParameters

from daemon import binary
from xhelpers import poll, scratch_dir

MODES = ("auto", "legacy")


def run(coro):
    return asyncio.run(coro)


def isolated_env(tmp: Path) -> dict:
    env = {f"XDG_{k}": str(tmp / k.lower()) for k in ("CONFIG_HOME", "STATE_HOME", "RUNTIME_DIR")}
    for path in env.values():
        os.makedirs(path, mode=0o700, exist_ok=True)
    env["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={tmp}/no-session-bus"
    return {**os.environ, **env}


@contextlib.asynccontextmanager
async def http(daemon, mode: str, token: str | None = None, headers: dict | None = None):
    """An SDK client over Streamable HTTP to `daemon`'s /mcp."""
    h = {"Authorization": f"Bearer {token or daemon.token}", **(headers or {})}
    http_client = httpx2.AsyncClient(headers=h, timeout=30)
    url = f"http://127.0.0.1:{daemon.port}/mcp"
    async with http_client:
        async with mcp.Client(mcp.client.streamable_http.streamable_http_client(
                url, http_client=http_client), mode=mode) as c:
            yield Session(c)


class Stdio:
    """`deskhand mcp ARGS` as an SDK client spawns it; its stderr is kept
    to learn the display it started and to show on failure."""

    def __init__(self, *args: str, env: dict | None = None):
        self.tmp = Path(scratch_dir("mcp-"))
        self.stderr_path = self.tmp / "stderr.log"
        self.audit_log = self.tmp / "audit.jsonl"
        base = isolated_env(self.tmp)
        self.params = StdioServerParameters(
            command=binary(), args=["mcp", *args, "--audit-log", str(self.audit_log)],
            env={**base, "DESKHAND_LOG": "info", **(env or {})})

    def stderr(self) -> str:
        return self.stderr_path.read_text("utf-8", "replace") if self.stderr_path.exists() else ""

    def pids(self) -> list[int]:
        """pids of the running `deskhand mcp` of this Stdio (its own audit
        log path is on its command line)."""
        mine = str(self.audit_log).encode()
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                except OSError:
                    continue
                if mine in cmdline.split(b"\0"):
                    found.append(int(entry))
        return found

    def display(self) -> str:
        def found():
            m = re.search(r"\bdesktop=(:\d+)", self.stderr())
            return m.group(1) if m else None
        return poll(found, timeout=30, what="deskhand mcp to name its display")

    @contextlib.asynccontextmanager
    async def connect(self, mode: str):
        with open(self.stderr_path, "a") as errlog:
            async with mcp.Client(mcp.stdio_client(self.params, errlog=errlog), mode=mode) as c:
                yield Session(c)


class ToolError(AssertionError):
    def __init__(self, result):
        self.result = result
        self.error = (result.structured_content or {}).get("error", {})
        super().__init__(f"{self.error.get('code')}: {self.error.get('message')}")


class Session:
    """One SDK client; `call` returns structuredContent or raises ToolError."""

    def __init__(self, client):
        self.client = client
        self.session_id = None

    async def raw(self, name: str, args: dict | None = None, **kw):
        args = dict(args or {})
        if self.session_id and name != "start_session" and "session_id" not in args:
            args["session_id"] = self.session_id
        return await self.client.call_tool(name, args, **kw)

    async def call(self, name: str, args: dict | None = None, **kw) -> dict:
        r = await self.raw(name, args, **kw)
        if r.is_error:
            raise ToolError(r)
        return r.structured_content

    async def error(self, name: str, args: dict | None = None, **kw) -> dict:
        r = await self.raw(name, args, **kw)
        assert r.is_error, f"{name} succeeded: {r.structured_content}"
        s = r.structured_content
        assert s["ok"] is False and set(s["error"]) >= {"code", "message", "disposition",
                                                        "suggestion"}, s
        text = r.content[0].text
        e = s["error"]
        assert text == f"{e['code']}: {e['message']} [retry: {e['disposition']['retry']}] " \
                       f"{e['suggestion']}", text
        return e

    async def start(self, **args) -> dict:
        """Starts a session, or restarts this client's own: a stateless
        client names it (the daemon gives no session to a request that
        names none)."""
        if self.session_id and "session_id" not in args:
            args["session_id"] = self.session_id
        r = await self.client.call_tool("start_session", args)
        s = r.structured_content
        self.session_id = s.get("session_id") or s.get("error", {}).get("session_id")
        if r.is_error:
            raise ToolError(r)
        return s

    async def end(self) -> None:
        if self.session_id:
            await self.call("end_session")
            self.session_id = None


def window_id(windows: list[dict], title: str) -> str:
    for w in windows:
        if w["title"] == title:
            return w["window_id"]
    raise AssertionError(f"no window titled {title} in {json.dumps(windows)[:400]}")
