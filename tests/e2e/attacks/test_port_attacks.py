"""Attacks on the local port, its files and what the daemon leaves to others.

| attack class | what the attacker does | what must happen | test name |
|---|---|---|---|
| connection flood | holds 200 half-open connections (a partial request line, no token) | a real client still connects and gets HELLO at once; the daemon keeps few of them open | test_half_open_flood_does_not_keep_a_client_out |
| slow headers | sends half a request line and waits | the daemon closes the socket within the header deadline | test_half_sent_request_is_closed_within_the_header_deadline |
| silent connection | connects and sends nothing | closed within the header deadline | test_silent_connection_is_closed_within_the_header_deadline |
| keep-alive after refusal | makes a refused request, keeps the connection | 401 and the connection closed | test_refused_request_closes_its_connection |
| over-size frame | sends a message over the size limit | close frame 1009 | test_over_size_message_gets_close_1009 |
| idle session | connects and sends nothing | close frame 1001 after the idle timeout | test_idle_connection_gets_close_1001 |
| ping keep-alive | sends only pings | still closed 1001 at the idle timeout; requests do keep it | test_pings_alone_do_not_keep_a_connection_open |
| NUL key | `key: "\\u0000"` and other control characters | INVALID_ARGUMENTS | test_control_character_keys_are_refused |
| duplicate Host | a good `Host` and then a foreign one | 400 | test_duplicate_host_is_400 |
| absolute request URI | `GET http://evil.example/v1/ws` with a good Host | 403 | test_absolute_uri_naming_another_host_is_refused |
| case of names | `Host: LOCALHOST:port`, `bearer` in lower case | accepted (101) | test_host_and_bearer_scheme_are_case_insensitive |
| open connection directory | makes the connection file's directory writable by all | deskhand's own directory made 0700 before the file is written; a named one refused | test_connection_directory_open_to_others_is_made_private |
| foreign connection directory | owns the connection file's directory | refused at start | test_connection_directory_of_another_user_is_refused |
| planted token | a token file owned by another user | refused at start | test_token_file_of_another_user_is_refused |
| readable ledger | reads the held-input ledger | ledger 0600 in a 0700 directory | test_held_input_ledger_is_private |
| inherited descriptors and environment | an app deskhand launches | no descriptor of deskhand's; only the session's variables | test_launched_app_inherits_no_descriptors_and_a_clean_environment |
| stale connection file | the daemon is killed (-9) | the next start replaces endpoint.json; a live daemon's is not taken over | test_stale_connection_file_is_replaced_after_kill_9 |
| orphaned overlay | the daemon is killed (-9) while its indicator shows and another process holds the overlay's stdin | the overlay exits at once | test_overlay_exits_when_the_daemon_is_killed |
"""

from __future__ import annotations

import base64
import json
import os
import pwd
import select
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from daemon import (Client, Daemon, binary, descendants, kill_tree, process_alive,
                    read_status)
from desktop import start
from xhelpers import missing, poll, scratch_dir

HEADER_DEADLINE = 5.0  # ServerConfig's default
MARGIN = 3.0


def ws_key() -> str:
    return base64.b64encode(os.urandom(16)).decode()


def raw_http(port: int, request_line: str, headers: list[str], timeout: float = 10.0
             ) -> tuple[int, bool]:
    """Send one request by hand; return its status and whether the server
    then closed the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(("\r\n".join([request_line, *headers]) + "\r\n\r\n").encode())
        status = read_status(s)
        if status == 101:
            return status, False
        return status, wait_closed(s, MARGIN) is not None


def upgrade_headers(port: int, token: str, host: str | None = None) -> list[str]:
    return [f"Host: {host or f'127.0.0.1:{port}'}", f"Authorization: Bearer {token}",
            "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
            f"Sec-WebSocket-Key: {ws_key()}"]


def closed_by_server(s: socket.socket) -> bool:
    """Whether the server has closed `s` (EOF or reset), without waiting."""
    s.setblocking(False)
    try:
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        s.setblocking(True)


def wait_closed(s: socket.socket, timeout: float) -> float | None:
    """Seconds until the server closed `s`, or None if it stayed open."""
    start = time.monotonic()
    s.settimeout(timeout)
    try:
        while s.recv(4096):
            pass
    except (socket.timeout, TimeoutError):
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - start


def socket_fds(pid: int) -> int:
    return sum(1 for fd in os.listdir(f"/proc/{pid}/fd")
               if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"))


def close_code(exc: ConnectionClosed) -> int | None:
    return exc.rcvd.code if exc.rcvd is not None else None


# --- finding 5: the port cannot be blocked without the token ----------------

def test_half_open_flood_does_not_keep_a_client_out():
    """With the header deadline far away (60 s), only the bound on
    connections without the token can let the real client in."""
    d = Daemon("--virtual=640x480", "--header-timeout", "60")
    flood: list[socket.socket] = []
    try:
        for _ in range(200):
            s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
            s.sendall(b"GET /v1/ws HTT")
            flood.append(s)
        c = d.client(takeover=False)
        assert c.hello["type"] == "HELLO"
        c.close()
        held = socket_fds(d.proc.pid)
        assert held < 150, f"the daemon holds {held} sockets for 200 half-open connections"
        closed = poll(lambda: sum(closed_by_server(s) for s in flood) >= 100, timeout=10,
                      what="the oldest half-open connections to be closed")
        assert closed
    finally:
        for s in flood:
            s.close()
        assert d.terminate() == 0


def test_half_sent_request_is_closed_within_the_header_deadline(daemon):
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as s:
        s.sendall(f"GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1:{daemon.port}\r\nUpgr".encode())
        took = wait_closed(s, HEADER_DEADLINE + MARGIN)
    assert took is not None, f"a half-sent request was still open after {HEADER_DEADLINE + MARGIN}s"
    print(f"half-sent request closed after {took:.2f}s")


def test_silent_connection_is_closed_within_the_header_deadline(daemon):
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=10) as s:
        took = wait_closed(s, HEADER_DEADLINE + MARGIN)
    assert took is not None, "a connection that sent nothing stayed open"


def test_refused_request_closes_its_connection(daemon):
    status, closed = raw_http(daemon.port, "GET /v1/ws HTTP/1.1",
                              [f"Host: 127.0.0.1:{daemon.port}", "Authorization: Bearer wrong"])
    assert status == 401
    assert closed, "a refused connection stayed open for the next try"


# --- finding 7: the WebSocket closes with a reason ---------------------------

def test_over_size_message_gets_close_1009(client):
    limit = client.hello["payload"]["max_message_bytes"]
    with pytest.raises(ConnectionClosed) as exc:
        client.ws.send("x" * (limit + 1))
        client.ws.recv(timeout=10)
    assert close_code(exc.value) == 1009, exc.value


@pytest.fixture(scope="module")
def idle_daemon():
    d = Daemon("--virtual=640x480", "--idle-timeout", "1")
    yield d
    assert d.terminate() == 0


def test_idle_connection_gets_close_1001(idle_daemon):
    c = Client(idle_daemon.ws_url, idle_daemon.token, takeover=False)
    try:
        with pytest.raises(ConnectionClosed) as exc:
            c.ws.recv(timeout=1 + MARGIN)
        assert close_code(exc.value) == 1001, exc.value
    finally:
        c.close()


def test_pings_alone_do_not_keep_a_connection_open(idle_daemon):
    # Control: a request every 0.4 s keeps it open past three idle timeouts.
    busy = Client(idle_daemon.ws_url, idle_daemon.token, takeover=False)
    try:
        for _ in range(8):
            busy.call("CURSOR_POSITION_REQUEST", {})
            time.sleep(0.4)
    finally:
        busy.close()
    c = Client(idle_daemon.ws_url, idle_daemon.token, takeover=False)
    try:
        deadline = time.monotonic() + 1 + MARGIN
        with pytest.raises(ConnectionClosed) as exc:
            while time.monotonic() < deadline:
                c.ws.ping().wait(2)
                time.sleep(0.2)
            c.ws.recv(timeout=0.1)
        assert close_code(exc.value) == 1001, exc.value
    finally:
        c.close()


def test_control_character_keys_are_refused(client):
    for key in ["\u0000", "\u001b", "\u007f", "ctrl+\u0000", "\u0000\u0000"]:
        msg = client.request("INPUT_ACTION", {"action": "key", "key": key})
        assert msg["type"] == "ERROR" and msg["payload"]["code"] == "INVALID_ARGUMENTS", (key, msg)


# --- finding 7: Host, request target and token names -------------------------

def test_duplicate_host_is_400(daemon):
    headers = upgrade_headers(daemon.port, daemon.token)
    status, _ = raw_http(daemon.port, "GET /v1/ws HTTP/1.1",
                         headers + [f"Host: evil.example:{daemon.port}"])
    assert status == 400
    assert raw_http(daemon.port, "GET /v1/ws HTTP/1.1", headers)[0] == 101  # control


def test_absolute_uri_naming_another_host_is_refused(daemon):
    headers = upgrade_headers(daemon.port, daemon.token)
    status, _ = raw_http(daemon.port, "GET http://evil.example/v1/ws HTTP/1.1", headers)
    assert status in (400, 403), status
    status, _ = raw_http(daemon.port, f"GET http://evil.example:{daemon.port}/v1/ws HTTP/1.1",
                         headers)
    assert status in (400, 403), status
    own = f"GET http://127.0.0.1:{daemon.port}/v1/ws HTTP/1.1"
    assert raw_http(daemon.port, own, headers)[0] == 101  # control


def test_host_and_bearer_scheme_are_case_insensitive(daemon):
    headers = upgrade_headers(daemon.port, daemon.token, host=f"LOCALHOST:{daemon.port}")
    assert raw_http(daemon.port, "GET /v1/ws HTTP/1.1", headers)[0] == 101
    c = Client(daemon.ws_url, None, headers={"Authorization": f"bearer {daemon.token}"},
               takeover=False)
    try:
        assert c.hello["type"] == "HELLO"
    finally:
        c.close()


# --- finding 7: the files deskhand keeps -------------------------------------

def need_root() -> None:
    if os.geteuid() != 0:
        missing("root, to give a file to another user (CI runs as root)")


def nobody() -> tuple[int, int]:
    pw = pwd.getpwnam("nobody")
    return pw.pw_uid, pw.pw_gid


class Serve:
    """`deskhand serve` with the arguments given as they are (the Daemon
    helper picks its own connection file)."""

    def __init__(self, *args: str, env: dict | None = None, tmp: Path | None = None):
        self.tmp = tmp or Path(scratch_dir("attack-"))
        isolated = {f"XDG_{k}": str(self.tmp / k.lower())
                    for k in ("CONFIG_HOME", "STATE_HOME", "RUNTIME_DIR")}
        for p in isolated.values():
            os.makedirs(p, mode=0o700, exist_ok=True)
        isolated["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={self.tmp}/no-session-bus"
        self.stderr_path = self.tmp / "stderr.log"
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [binary(), "serve", "--listen", "127.0.0.1:0",
                 "--audit-log", str(self.tmp / "audit.jsonl"), *args],
                stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                env={**os.environ, **isolated, **(env or {})})

    def stderr(self) -> str:
        return self.stderr_path.read_text("utf-8", "replace")

    def ready(self, timeout: float = 60.0) -> dict:
        readable, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if readable else b""
        assert line, f"no ready line; stderr:\n{self.stderr()[-2000:]}"
        return json.loads(line)

    def refused(self, timeout: float = 30.0) -> str:
        """Waits for it to exit; returns stderr (it must have failed)."""
        self.proc.wait(timeout)
        assert self.proc.returncode != 0, "deskhand started where it must refuse"
        return self.stderr()

    def descendants(self) -> list[int]:
        return descendants(self.proc.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(15)


def test_connection_directory_open_to_others_is_made_private():
    """deskhand's own directory ($XDG_RUNTIME_DIR/deskhand) is made 0700;
    a directory the person named that others can write to is refused."""
    tmp = Path(scratch_dir("opendir-"))
    own = tmp / "runtime_dir" / "deskhand"
    own.mkdir(parents=True)
    os.chmod(own, 0o777)
    s = Serve("--virtual=320x240", tmp=tmp)
    try:
        s.ready()
        assert stat.S_IMODE(own.stat().st_mode) == 0o700
        assert stat.S_IMODE((own / "endpoint.json").stat().st_mode) == 0o600
    finally:
        s.stop()
    named = Path(scratch_dir("named-")) / "conn"
    named.mkdir()
    os.chmod(named, 0o777)
    err = Serve("--virtual=320x240", "--connection-file", str(named / "endpoint.json")).refused()
    assert "can be written by others" in err, err
    assert not (named / "endpoint.json").exists()


def test_connection_directory_of_another_user_is_refused():
    need_root()
    conn_dir = Path(scratch_dir("foreigndir-")) / "conn"
    conn_dir.mkdir(mode=0o700)
    os.chown(conn_dir, *nobody())
    s = Serve("--virtual=320x240", "--connection-file", str(conn_dir / "endpoint.json"))
    err = s.refused()
    assert "belongs to another user" in err, err
    assert not (conn_dir / "endpoint.json").exists()


def test_token_file_of_another_user_is_refused():
    need_root()
    token_file = Path(scratch_dir("token-")) / "token"
    planted = "ab" * 32
    token_file.write_text(planted + "\n")
    os.chmod(token_file, 0o600)
    os.chown(token_file, *nobody())
    s = Serve("--virtual=320x240", "--token-file", str(token_file),
              "--connection-file", str(Path(scratch_dir("conn-")) / "endpoint.json"))
    err = s.refused()
    assert "belongs to another user" in err, err
    assert planted not in err
    assert token_file.read_text().strip() == planted, "the planted file was left as it was"


def test_held_input_ledger_is_private():
    state = Path(scratch_dir("state-"))
    ledger_dir = state / "deskhand"
    ledger_dir.mkdir(mode=0o755)
    os.chmod(ledger_dir, 0o755)
    d = Daemon("--virtual=640x480", env={"XDG_STATE_HOME": str(state)})
    try:
        c = d.client()
        c.act("hold_key", key="shift", duration_ms=10)
        c.act("type", text="é")  # on no key of `us`: the remapped-keycode list is written
        ledgers = list(ledger_dir.glob("held-input-*.json"))
        assert ledgers, os.listdir(ledger_dir)
        remaps = list(ledger_dir.glob("remapped-keys-*.json"))
        assert remaps, os.listdir(ledger_dir)
        ledgers += remaps
        assert stat.S_IMODE(ledger_dir.stat().st_mode) == 0o700
        for f in ledgers:
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
        c.close()
    finally:
        assert d.terminate() == 0


# --- finding 7: what a launched app gets ---------------------------------------

ALLOWED_ENV = {"DISPLAY", "HOME", "USER", "LOGNAME", "PATH", "SHELL", "LANG", "LANGUAGE", "TZ",
               "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "DESKTOP_SESSION", "XMODIFIERS",
               "GTK_IM_MODULE", "QT_IM_MODULE"}


def fd_targets(pid: int) -> dict[int, str]:
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out[int(fd)] = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            pass
    return out


def test_launched_app_inherits_no_descriptors_and_a_clean_environment():
    marker = {"DESKHAND_ATTACK_MARKER": "1", "RUST_LOG": "trace", "AGENT_API_TOKEN": "s3cret"}
    # xmessage is no installed app: the person allows it.
    consent = Path(scratch_dir("consent-")) / "consent.json"
    consent.write_text(json.dumps({"input": True, "launch_allow": ["/usr/bin/xmessage"]}))
    d = Daemon("--virtual=640x480", "--consent", str(consent), env=marker)
    try:
        c = d.client()
        ack = c.call("APP_LAUNCH", {"executable_path": "/usr/bin/xmessage",
                                    "args": ["-timeout", "60", "deskhand fd check"],
                                    "activate": False}, expect="ACK")
        pid = ack["pid"]
        try:
            poll(lambda: os.readlink(f"/proc/{pid}/exe") == "/usr/bin/xmessage", timeout=10,
                 what="xmessage to run")
            daemon_fds = set(fd_targets(d.proc.pid).values()) - {"/dev/null"}
            inherited = {fd: t for fd, t in fd_targets(pid).items() if t in daemon_fds}
            assert not inherited, f"the app holds deskhand's descriptors: {inherited}"
            env = dict(kv.split("=", 1) for kv in
                       Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in kv)
            stray = {k for k in env if k not in ALLOWED_ENV and not k.startswith(("LC_", "XDG_"))}
            assert not stray, f"the app got deskhand's variables: {sorted(stray)}"
            assert env["DISPLAY"] == d.display
            assert "HOME" in env and "PATH" in env
        finally:
            os.kill(pid, signal.SIGTERM)
        c.close()
    finally:
        assert d.terminate() == 0


# --- finding 7: what a killed daemon leaves behind -----------------------------

def test_stale_connection_file_is_replaced_after_kill_9():
    conn = Path(scratch_dir("stale-")) / "endpoint.json"
    first = Serve("--virtual=640x480", "--connection-file", str(conn))
    first.ready()
    kill_tree(first.proc)
    assert json.loads(conn.read_text())["pid"] == first.proc.pid, "kill -9 left the file"
    second = Serve("--virtual=640x480", "--connection-file", str(conn))
    try:
        ready = second.ready()
        assert json.loads(conn.read_text())["pid"] == second.proc.pid == ready["pid"]
        third = Serve("--virtual=640x480", "--connection-file", str(conn))
        err = third.refused()
        assert f"another deskhand (pid {second.proc.pid})" in err, err
        assert json.loads(conn.read_text())["pid"] == second.proc.pid
    finally:
        second.stop()


def overlay_pids(d: Daemon) -> list[int]:
    out = []
    for pid in d.descendants():
        try:
            if os.readlink(f"/proc/{pid}/exe").endswith("deskhand-overlay"):
                out.append(pid)
        except FileNotFoundError:
            pass
    return out


def test_overlay_exits_when_the_daemon_is_killed(tmp_path):
    """On the person's own display (which outlives deskhand), not a virtual
    one that would take the overlay down with it."""
    xvfb = start("800x600")
    consent = tmp_path / "consent.json"
    consent.write_text(json.dumps({"input": True}))
    try:
        d = Daemon("--display", xvfb.name, "--consent", str(consent))
        c = d.client()
        assert c.takeover_state and c.takeover_state.get("on") is True, c.takeover_state
        overlays = poll(lambda: overlay_pids(d), timeout=10, what="the overlay process")
        # Another process holds the overlay's stdin open too (as a launched
        # app that inherited it would): its closing cannot be what stops it.
        held_stdin = [os.open(f"/proc/{p}/fd/0", os.O_WRONLY | os.O_NONBLOCK) for p in overlays]
        try:
            d.proc.kill()
            d.proc.wait(10)
            poll(lambda: not any(process_alive(p) for p in overlays), timeout=1.0,
                 interval=0.02, what="the overlay to exit after kill -9 of deskhand")
        finally:
            for fd in held_stdin:
                os.close(fd)
            d.kill()
            for pid in overlays:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    finally:
        xvfb.stop()
