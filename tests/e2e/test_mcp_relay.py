"""`deskhand mcp` beside a running daemon, on the real binary: with no
DISPLAY it relays to the daemon of the connection file (no desktop of its
own) and its first answer names the desktop; a line that is no message is
answered with a parse error and the relay goes on; a relay that ends (its
stdin closed, SIGTERM) ends its session on the daemon, so that nobody is
kept BUSY; a second engine on a display a daemon serves refuses to start."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
from pathlib import Path

import pytest

import mcp
from mcp import StdioServerParameters

from daemon import Daemon, binary, descendants
from desktop import attach
from mcp_client import MODES, Session, Stdio, run
from xhelpers import XTerm, missing, poll, scratch_dir

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "raw-relay-test", "version": "1"}}}


def _default_connection_file_of(d: Daemon, tmp: Path) -> dict:
    """An environment whose default connection file
    (`$XDG_RUNTIME_DIR/deskhand/endpoint.json`) is `d`'s, as when `serve`
    runs without `--connection-file` in the person's session."""
    runtime = tmp / "person-runtime"
    (runtime / "deskhand").mkdir(parents=True, mode=0o700)
    shutil.copy(d.connection_file, runtime / "deskhand" / "endpoint.json")
    return {"XDG_RUNTIME_DIR": str(runtime), "DISPLAY": ""}


def _takeover_is_free(d: Daemon) -> dict:
    """Another client asks for the takeover once, without waiting."""
    c = d.client(takeover=False)
    try:
        return c.take_over(wait=0.0)
    finally:
        c.close()


def _mcp_records(d: Daemon, session: str) -> list[dict]:
    return [r for r in map(json.loads, d.audit_log.read_text().splitlines())
            if r.get("session") == session]


@pytest.mark.parametrize("mode", MODES)
def test_deskhand_mcp_without_display_relays_to_the_running_daemon(daemon, tmp_path, mode):
    proc = Stdio(env=_default_connection_file_of(daemon, tmp_path))
    target = (321, 234)

    async def body():
        async with proc.connect(mode) as s:
            instructions = s.client.instructions or ""
            assert f"X display {daemon.display}" in instructions, instructions
            assert f"pid {daemon.proc.pid}" in instructions, instructions
            pids = proc.pids()
            assert len(pids) == 1, pids
            assert descendants(pids[0]) == [], "the relay started a desktop of its own"
            state = await s.start(input="takeover")
            assert state["takeover"]["on"] is True, state
            await s.call("move_cursor", {"x": target[0], "y": target[1]})
            assert attach(daemon.display).pointer() == target, "the relay drives the daemon's desktop"
            await s.end()
            return state["session_id"]

    session = run(body())
    log = proc.stderr()
    assert "relaying MCP to the running deskhand daemon" in log, log
    assert "engine of its own" not in log and "virtual desktop" not in log, log
    assert not proc.audit_log.exists(), "the relay opened an engine of its own"
    ops = {r["op"] for r in _mcp_records(daemon, session)}
    assert "move_cursor" in ops, ops


class RawStdio:
    """`deskhand mcp ARGS` on pipes, driven line by line."""

    def __init__(self, *args: str, env: dict | None = None):
        tmp = Path(scratch_dir("raw-mcp-"))
        self.stderr_path = tmp / "stderr.log"
        self._stderr = open(self.stderr_path, "wb")
        base = {f"XDG_{k}": str(tmp / k.lower()) for k in ("CONFIG_HOME", "STATE_HOME",
                                                          "RUNTIME_DIR")}
        for path in base.values():
            os.makedirs(path, mode=0o700, exist_ok=True)
        self.proc = subprocess.Popen(
            [binary(), "mcp", *args, "--audit-log", str(tmp / "audit.jsonl")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            env={**os.environ, **base, "DESKHAND_LOG": "info", **(env or {})})
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for raw in self.proc.stdout:
            self._lines.put(json.loads(raw))
        self._lines.put(None)

    def send(self, message: dict | bytes) -> None:
        raw = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def recv(self, timeout: float = 20.0) -> dict:
        line = self._lines.get(timeout=timeout)
        assert line is not None, f"the relay closed stdout\n{self.stderr()}"
        return line

    def stderr(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text("utf-8", "replace")

    def wait(self, timeout: float = 15.0) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self._stderr.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.mark.parametrize("ending", ["stdin closed", "SIGTERM"])
def test_a_bad_line_is_a_parse_error_and_a_relay_that_ends_leaves_no_takeover(daemon, ending):
    relay = RawStdio("--display", daemon.display, "--connection-file",
                     str(daemon.connection_file))
    try:
        relay.send(INIT)
        assert relay.recv()["result"]["serverInfo"]["name"] == "deskhand"
        relay.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        relay.send(b"\xff\xfe{\"jsonrpc\": \"2.0\", \"id\": 7}")
        e = relay.recv()
        assert e["id"] is None and e["error"]["code"] == -32700, e
        relay.send(b"{not json")
        assert relay.recv()["error"]["code"] == -32700
        relay.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "start_session", "arguments": {"input": "takeover"}}})
        started = relay.recv()
        assert started["id"] == 2, started
        state = started["result"]["structuredContent"]
        assert state["takeover"]["on"] is True, state
        busy = _takeover_is_free(daemon)
        assert busy["type"] == "ERROR" and busy["payload"]["code"] == "BUSY", busy
        if ending == "SIGTERM":
            relay.proc.send_signal(signal.SIGTERM)
        else:
            relay.proc.stdin.close()
        assert relay.wait() == 0, relay.stderr()
    finally:
        relay.kill()
    log = relay.stderr()
    assert "not UTF-8: answered a parse error" in log, log
    assert "the relay ended its MCP session on the daemon ended=true" in log, log
    free = _takeover_is_free(daemon)
    assert free["type"] == "TAKEOVER_STATE" and free["payload"]["on"] is True, free


@pytest.mark.parametrize("mode", MODES)
def test_a_relay_closed_by_its_client_ends_its_takeover(daemon, mode):
    """The SDK closes the relay's stdin as it leaves, in both revisions:
    the session started through the relay ends on the daemon."""
    proc = Stdio("--display", daemon.display, "--connection-file", str(daemon.connection_file))

    async def body():
        async with proc.connect(mode) as s:
            state = await s.start(input="takeover")
            assert state["takeover"]["on"] is True, state

    run(body())
    assert "the relay ended a session it started ended=true" in proc.stderr(), proc.stderr()
    free = _takeover_is_free(daemon)
    assert free["type"] == "TAKEOVER_STATE" and free["payload"]["on"] is True, free


def test_a_relay_goes_on_after_the_daemon_closed_its_idle_session(tmp_path):
    """The daemon closes an MCP HTTP session unused for its idle time (30
    minutes; 2 s here): the relay opens a new one with the client's own
    initialize, and the client's next call is answered."""
    d = Daemon("--virtual=800x600", "--mcp-session-idle", "2")
    proc = Stdio("--display", d.display, "--connection-file", str(d.connection_file))
    try:
        async def body():
            async with proc.connect("legacy") as s:
                assert "windows" in await s.call("list_windows")
                await asyncio.sleep(4)
                assert "windows" in await s.call("list_windows")

        run(body())
        assert "opened a new one" in proc.stderr(), proc.stderr()
    finally:
        d.terminate()


def _second_engine(argv: list[str], env: dict, lines: list[bytes]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=b"".join(line + b"\n" for line in lines), env=env,
                          capture_output=True, timeout=60)


@pytest.mark.parametrize("second", ["mcp --standalone", "serve", "serve elsewhere"])
def test_a_second_engine_on_a_served_display_refuses_to_start(daemon, tmp_path, second):
    """The person's session (its runtime directory) already has a daemon
    on this display: `deskhand mcp --standalone` with a consent file of
    its own that grants a takeover, a second `serve` with another
    connection file, and one with another runtime directory (where the
    session's lock file is not seen: the X server's DESKHAND_ENGINE
    selection is) all exit at once naming the daemon; the pointer does not
    move."""
    consent = tmp_path / "consent.json"
    consent.write_text(json.dumps({"takeover": True}))
    audit = tmp_path / "second-audit.jsonl"
    common = ["--display", daemon.display, "--consent", str(consent), "--audit-log", str(audit)]
    env = {**daemon.env, "DESKHAND_LOG": "info"}
    if second == "serve elsewhere":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        env["XDG_RUNTIME_DIR"] = str(elsewhere)
    if second.startswith("serve"):
        argv = [binary(), "serve", *common, "--listen", "127.0.0.1:0",
                "--connection-file", str(tmp_path / "second-endpoint.json")]
    else:
        argv = [binary(), "mcp", "--standalone", *common]
    before = attach(daemon.display).pointer()
    target = (before[0] + 150, before[1] + 90)
    call = {"jsonrpc": "2.0", "method": "tools/call"}
    lines = [json.dumps(m).encode() for m in [
        INIT, {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {**call, "id": 2, "params": {"name": "start_session", "arguments": {"input": "takeover"}}},
        {**call, "id": 3, "params": {"name": "move_cursor",
                                     "arguments": {"x": target[0], "y": target[1]}}}]]
    r = _second_engine(argv, env, lines)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode != 0, err
    if second == "serve elsewhere":
        assert (f"deskhand (pid {daemon.proc.pid}) already drives display {daemon.display} "
                "(it owns the X selection DESKHAND_ENGINE)") in err, err
    else:
        assert (f"deskhand (pid {daemon.proc.pid}) already serves display "
                f"{daemon.display}") in err, err
        assert str(daemon.connection_file) in err, err
    assert b'"result"' not in r.stdout, r.stdout
    assert attach(daemon.display).pointer() == before, "the second engine moved the pointer"
    assert not audit.exists() or "move_cursor" not in audit.read_text()
    poll(lambda: daemon.proc.poll() is None, timeout=1, what="the daemon to keep serving")
    assert _takeover_is_free(daemon)["type"] == "TAKEOVER_STATE"


# What the MCP SDK's stdio client passes on when it is given no environment
# (mcp.client.stdio.get_default_environment): the bare environment every
# stock MCP client starts a stdio server with.
SDK_DEFAULT_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


@contextlib.contextmanager
def login_runtime_dir():
    """`/run/user/UID` as systemd-logind makes it for a signed-in person
    (0700, theirs), with nothing of deskhand's in it; removed again if this
    test made it."""
    path = Path(f"/run/user/{os.getuid()}")
    made = not path.exists()
    if made:
        try:
            path.mkdir(mode=0o700, parents=True)
        except PermissionError:
            missing(f"{path}, as a login makes it (CI runs as root and makes it)")
    shutil.rmtree(path / "deskhand", ignore_errors=True)
    try:
        yield path
    finally:
        shutil.rmtree(path / "deskhand", ignore_errors=True)
        if made:
            path.rmdir()


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def bare_stdio(tmp: Path) -> StdioServerParameters:
    """`deskhand mcp` as a stock MCP client spawns it: the SDK's own
    default environment (no DISPLAY, no XDG_RUNTIME_DIR, no session bus)."""
    assert all(k in os.environ for k in ("HOME", "PATH")), "the test's own environment"
    return StdioServerParameters(command=binary(), args=["mcp", "--audit-log",
                                                         str(tmp / "audit.jsonl")], env=None)


def test_a_stock_clients_bare_environment_reaches_the_persons_deskhand(daemon, tmp_path):
    from mcp.client.stdio import get_default_environment
    assert set(get_default_environment()) <= set(SDK_DEFAULT_ENV), get_default_environment()
    term = XTerm(daemon.display, pos="+40+40")
    try:
        with login_runtime_dir() as runtime:
            # The person's deskhand (as the app writes it, in the login's
            # runtime directory).
            (runtime / "deskhand").mkdir(mode=0o700)
            shutil.copy(daemon.connection_file, runtime / "deskhand" / "endpoint.json")

            async def body():
                errlog = open(tmp_path / "stderr.log", "w")
                async with mcp.Client(mcp.stdio_client(bare_stdio(tmp_path), errlog=errlog),
                                      mode="auto") as c:
                    s = Session(c)
                    assert f"X display {daemon.display}" in (c.instructions or "")
                    await s.start(input="headless")
                    windows = (await s.call("list_windows"))["windows"]
                    assert term.title in [w["title"] for w in windows], windows
                    await s.end()

            run(body())
    finally:
        term.close()
    log = (tmp_path / "stderr.log").read_text()
    assert "relaying MCP to the running deskhand daemon" in log, log


def test_with_no_deskhand_a_bare_environment_says_how_to_start_it_and_starts_nothing(tmp_path):
    with login_runtime_dir():
        async def body():
            errlog = open(tmp_path / "stderr.log", "w")
            async with mcp.Client(mcp.stdio_client(bare_stdio(tmp_path), errlog=errlog),
                                  mode="auto") as c:
                s = Session(c)
                pid = next(p for p in map(int, filter(str.isdigit, os.listdir("/proc")))
                           if str(tmp_path / "audit.jsonl").encode() in cmdline(p))
                error = await s.error("list_windows")
                assert error["code"] == "display_unavailable", error
                assert "deskhand-app" in error["message"], error
                assert "Not connected" in (c.instructions or ""), c.instructions
                assert descendants(pid) == [], "deskhand mcp started a desktop of its own"

        run(body())
    assert not (tmp_path / "audit.jsonl").exists(), "an engine of its own was opened"
