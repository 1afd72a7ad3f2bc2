"""Driving the real `deskhand` binary: the daemon process and a wire-ops
WebSocket client (websockets' synchronous API)."""

from __future__ import annotations

import base64
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlparse

from websockets.sync.client import connect

from xhelpers import REPO, missing, scratch_dir

READY_TIMEOUT = 60.0
REQUEST_TIMEOUT = 20.0


def binary() -> str:
    path = Path(os.environ.get("DESKHAND_BIN", REPO / "target" / "debug" / "deskhand"))
    if not path.is_absolute():
        path = (Path.cwd() / path).resolve()
        if not path.exists():
            path = (REPO / os.environ["DESKHAND_BIN"]).resolve()
    if not path.is_file() or not os.access(path, os.X_OK):
        missing(f"deskhand binary at {path} (build it: cargo build -p deskhand)")
    return str(path)


class Daemon:
    """`deskhand serve ...`; waits for the single ready line on stdout."""

    def __init__(self, *serve_args: str, env: dict | None = None, control: bool = False,
                 command: list[str] | None = None, stdin: int | None = None,
                 port_and_audit_from_settings: bool = False,
                 default_connection_file: bool = False):
        """`command` runs instead of `deskhand serve` (the tray app takes
        the same flags); `stdin`, a descriptor, stands in for the control
        pipe; `port_and_audit_from_settings` leaves out `--listen` and
        `--audit-log`, so that the settings file (or the defaults) set
        them; `default_connection_file` leaves out `--connection-file`
        (the file goes where other commands look for it)."""
        self.tmp = Path(scratch_dir("daemon-"))
        self.connection_file = self.tmp / (
            "runtime_dir/endpoint.json" if default_connection_file else "endpoint.json")
        self.audit_log = self.tmp / "audit.jsonl"
        self.stderr_path = self.tmp / "stderr.log"
        own = [] if port_and_audit_from_settings else [
            "--listen", "127.0.0.1:0", "--audit-log", str(self.audit_log)]
        if not default_connection_file:
            own += ["--connection-file", str(self.connection_file)]
        self.argv = [*(command or [binary(), "serve"]), *serve_args, *own]
        self._stderr = open(self.stderr_path, "wb")
        # keep the token, state and runtime files away from the person's own
        isolated = {f"XDG_{k}": str(self.tmp / k.lower()) for k in ("CONFIG_HOME", "STATE_HOME",
                                                                  "RUNTIME_DIR")}
        for path in isolated.values():
            os.makedirs(path, mode=0o700, exist_ok=True)
        # and away from the person's keychain: no session bus unless a test
        # brings its own (test_keychain.py)
        isolated["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={self.tmp}/no-session-bus"
        # the environment of the person's session it runs in, for a second
        # process in the same session
        self.env = {**os.environ, **isolated, **(env or {})}
        self.proc = subprocess.Popen(
            self.argv, stdout=subprocess.PIPE, stderr=self._stderr,
            stdin=stdin if stdin is not None else (
                subprocess.PIPE if control else subprocess.DEVNULL),
            env=self.env,
        )
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        try:
            line = self._lines.get(timeout=READY_TIMEOUT)
        except queue.Empty:
            self.kill()
            raise AssertionError(f"no ready line within {READY_TIMEOUT}s\n{self.stderr_tail()}")
        if line is None:
            rc = self.proc.wait(5)
            raise AssertionError(f"deskhand exited {rc} before ready\n{self.stderr_tail()}")
        try:
            self.ready = json.loads(line)
        except ValueError:
            self.kill()
            raise AssertionError(f"first stdout line is not JSON: {line!r}\n{self.stderr_tail()}")
        if self.ready.get("event") != "ready":
            self.kill()
            raise AssertionError(f"first stdout line is not a ready event: {line!r}")
        self.ws_url = self.ready["ws"]
        # on a pipe (as here) the token stays in the connection file
        # (0600), which the ready line names; the tray app names none
        if "connection_file" in self.ready:
            self.connection_file = Path(self.ready["connection_file"])
        self.token = self.ready.get("token") or json.loads(
            self.connection_file.read_text())["token"]
        self.display = self.ready["display"]
        self.port = urlparse(self.ws_url).port

    def _pump(self) -> None:
        for raw in self.proc.stdout:
            self._lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
        self._lines.put(None)

    def remaining_lines(self, timeout: float = 5.0) -> list[str]:
        """Every stdout line not yet read, up to the end of its output (after
        the process has exited)."""
        lines = []
        while (line := self._lines.get(timeout=timeout)) is not None:
            lines.append(line)
        return lines

    def control(self, message: dict) -> None:
        """One JSON line on the control pipe (stdin), as the host sends it."""
        self.control_line(json.dumps(message).encode())

    def control_line(self, raw: bytes) -> None:
        """One line of any bytes on the control pipe."""
        assert self.proc.stdin is not None, "start the Daemon with control=True"
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def next_event(self, timeout: float = REQUEST_TIMEOUT,
                   skip: tuple = ("session.started", "session.ended")) -> dict:
        """The next JSON line deskhand wrote on stdout after the ready line,
        passing over the events named in `skip`."""
        while True:
            line = self._lines.get(timeout=timeout)
            assert line is not None, f"stdout closed\n{self.stderr_tail()}"
            event = json.loads(line)
            if event.get("event") not in skip:
                return event

    def extra_stdout(self) -> list[str]:
        """stdout lines after the ready line (call after the process exited)."""
        out = []
        while True:
            try:
                line = self._lines.get(timeout=2)
            except queue.Empty:
                return out
            if line is None:
                return out
            out.append(line)

    def stderr_tail(self, n: int = 40) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        text = self.stderr_path.read_text("utf-8", "replace").splitlines()
        return "deskhand stderr (tail):\n" + "\n".join(text[-n:])

    def descendants(self) -> list[int]:
        """pids of every live descendant process (Xvfb, window manager...)."""
        return descendants(self.proc.pid)

    def terminate(self, timeout: float = 15.0) -> int:
        """SIGTERM; returns the exit code (kills and fails if it hangs)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise AssertionError(f"deskhand did not exit within {timeout}s of SIGTERM\n"
                                     + self.stderr_tail())
        self._stderr.close()
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL the daemon and everything it started (no orphans left)."""
        kill_tree(self.proc)

    def client(self, **kw) -> "Client":
        return Client(self.ws_url, self.token, **kw)


def descendants(root: int) -> list[int]:
    """pids of every live descendant process of `root`."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except FileNotFoundError:
            continue
        for tid in tasks:
            try:
                kids = Path(f"/proc/{pid}/task/{tid}/children").read_text().split()
            except FileNotFoundError:
                continue
            for k in kids:
                found.append(int(k))
                todo.append(int(k))
    return found


def kill_tree(proc: subprocess.Popen) -> None:
    """SIGKILL `proc` and everything it started, if it still runs."""
    if proc.poll() is None:
        kids = descendants(proc.pid)
        proc.kill()
        proc.wait(10)
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def process_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # zombies are dead


class ErrorReply(Exception):
    def __init__(self, msg: dict):
        self.msg = msg
        p = msg.get("payload") or {}
        super().__init__(f"ERROR {p.get('code')}: {p.get('message')} {p.get('details')}")


class Client:
    """A wire-ops client: connect, HELLO / HELLO_ACK, then id-matched requests."""

    def __init__(self, url: str, token: str | None, headers: dict | None = None,
                 hello_ack: dict | None = None, takeover: bool = True):
        hdrs = dict(headers or {})
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        self._stack = ExitStack()
        self.ws = self._stack.enter_context(
            connect(url, additional_headers=hdrs, max_size=None, open_timeout=15))
        self.events: list[dict] = []
        self.hello = self.recv()
        assert self.hello.get("type") == "HELLO", f"first message is not HELLO: {self.hello}"
        self.send("HELLO_ACK", hello_ack if hello_ack is not None else {})
        self.takeover_state: dict | None = None
        if takeover:
            self.take_over()

    def take_over(self, on: bool = True, wait: float = 5.0) -> dict:
        """TAKEOVER_REQUEST, as an agent that means to drive sends first; a
        takeover still held by a connection that is closing is waited for.
        Returns the reply (TAKEOVER_STATE, or ERROR when refused)."""
        deadline = time.monotonic() + wait
        while True:
            msg = self.request("TAKEOVER_REQUEST", {"on": on})
            busy = msg.get("type") == "ERROR" and msg["payload"]["code"] == "BUSY"
            if not busy or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if msg.get("type") == "TAKEOVER_STATE":
            self.takeover_state = msg["payload"]
        return msg

    def pushed_state(self, timeout: float = REQUEST_TIMEOUT) -> dict:
        """The next TAKEOVER_STATE deskhand pushed (without an id)."""
        deadline = time.monotonic() + timeout
        while True:
            for i, msg in enumerate(self.events):
                if msg.get("type") == "TAKEOVER_STATE" and not msg.get("id"):
                    return self.events.pop(i)["payload"]
            self.events.append(self.recv(timeout=max(0.01, deadline - time.monotonic())))

    def send(self, mtype: str, payload: dict, mid: str | None = None) -> str:
        mid = mid or str(uuid.uuid4())
        self.ws.send(json.dumps({"type": mtype, "id": mid, "ts": time.time(), "payload": payload}))
        return mid

    def recv(self, timeout: float = REQUEST_TIMEOUT) -> dict:
        raw = self.ws.recv(timeout=timeout)
        assert isinstance(raw, str), "server sent a binary frame; wire ops are JSON text"
        return json.loads(raw)

    def reply_to(self, mid: str, timeout: float = REQUEST_TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            msg = self.recv(timeout=max(0.01, deadline - time.monotonic()))
            if msg.get("id") == mid:
                return msg
            self.events.append(msg)

    def request(self, mtype: str, payload: dict | None = None, timeout: float = REQUEST_TIMEOUT
                ) -> dict:
        """Send a request; return the matching reply (any type, ERROR included)."""
        return self.reply_to(self.send(mtype, payload or {}), timeout)

    def error_code(self, mtype: str, payload: dict | None = None) -> str | None:
        """The error code the request is answered with, None if it succeeds."""
        msg = self.request(mtype, payload)
        return msg["payload"]["code"] if msg.get("type") == "ERROR" else None

    def call(self, mtype: str, payload: dict | None = None, expect: str | None = None,
             timeout: float = REQUEST_TIMEOUT) -> dict:
        """Send a request; return the reply's payload, raising ErrorReply on ERROR."""
        msg = self.request(mtype, payload, timeout=timeout)
        if msg.get("type") == "ERROR":
            raise ErrorReply(msg)
        if expect:
            assert msg.get("type") == expect, f"expected {expect}, got {msg}"
        return msg["payload"]

    def act(self, action: str, timeout: float = REQUEST_TIMEOUT, **fields) -> dict:
        """INPUT_ACTION that must be ACKed ok."""
        p = self.call("INPUT_ACTION", {"action": action, **fields}, expect="ACK", timeout=timeout)
        assert p.get("ok") is True, f"ACK without ok:true: {p}"
        return p

    def screenshot(self, **payload) -> dict:
        p = self.call("SCREENSHOT_REQUEST", payload, expect="SCREENSHOT_RESPONSE")
        p["image"] = base64.b64decode(p["image_base64"])
        return p

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_status(s: socket.socket) -> int:
    """Reads an HTTP answer's head from `s`; returns its status code."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
    assert m, f"no HTTP status line in reply: {data[:200]!r}"
    return int(m.group(1))


def raw_upgrade(port: int, headers: dict[str, str], path: str = "/v1/ws") -> int:
    """Send a WebSocket upgrade request by hand (for Host headers websockets
    will not forge); return the HTTP status code of the answer."""
    req = [f"GET {path} HTTP/1.1", "Upgrade: websocket", "Connection: Upgrade",
           "Sec-WebSocket-Version: 13",
           "Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)).decode()]
    req += [f"{k}: {v}" for k, v in headers.items()]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(("\r\n".join(req) + "\r\n\r\n").encode())
        return read_status(s)


# An agent in a process of its own: connects, takes over, sends one action.
AGENT = r"""
import json, sys, time, uuid
from websockets.sync.client import connect
url, token, action = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
ws = connect(url, additional_headers={"Authorization": f"Bearer {token}"}, max_size=None)
def send(kind, payload):
    ws.send(json.dumps({"type": kind, "id": str(uuid.uuid4()), "ts": time.time(),
                        "payload": payload}))
json.loads(ws.recv())
send("HELLO_ACK", {})
send("TAKEOVER_REQUEST", {"on": True})
while json.loads(ws.recv())["type"] != "TAKEOVER_STATE":
    pass
send("INPUT_ACTION", action)
print("sent", flush=True)
time.sleep(600)
"""


def agent_process(daemon: Daemon, action: dict) -> subprocess.Popen:
    """An agent in a process of its own (so that it can be killed -9)."""
    proc = subprocess.Popen([sys.executable, "-c", AGENT, daemon.ws_url, daemon.token,
                             json.dumps(action)], stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"sent"
    return proc
