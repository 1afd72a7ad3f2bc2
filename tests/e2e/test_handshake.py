"""The ready line, the connection file and the HELLO / HELLO_ACK handshake."""

import json
import re
import stat
from desktop import attach



def test_ready_line_describes_a_live_endpoint(daemon):
    r = daemon.ready
    # stdout is a pipe here (as the journal or a container's log is): the
    # token stays in the owner-only connection file the line names.
    assert "token" not in r, r
    assert r["connection_file"] == str(daemon.connection_file), r
    assert re.fullmatch(r"[0-9a-f]{64}", daemon.token), daemon.token
    assert re.fullmatch(r"ws://127\.0\.0\.1:\d+/v1/ws", r["ws"]), r
    assert r["http"] == f"http://127.0.0.1:{daemon.port}", r
    assert re.fullmatch(r":\d+", r["display"]), r
    assert r["pid"] == daemon.proc.pid, r
    assert attach(r["display"]).alive(), "the virtual display in the ready line does not answer"


def test_connection_file_is_private_and_holds_the_token(daemon):
    st = daemon.connection_file.lstat()
    assert stat.S_ISREG(st.st_mode), "connection file is not a regular file"
    assert stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
    text = daemon.connection_file.read_text()
    json.loads(text)
    assert daemon.token in text, "connection file does not hold the token"


def test_hello_advertises_computer_use_and_the_screen(client):
    p = client.hello["payload"]
    assert p["protocol_version"], p
    assert p["session_id"], p
    assert p["server"]["name"] and p["server"]["version"], p
    assert "computer_use" in p["capabilities"], p
    for feature in ("screenshot.region", "input.click.modifiers", "input.drag.path",
                    "input.mouse.down_up", "cursor.position", "display.info",
                    "input.type.unicode"):
        assert feature in p["computer_use_features"], (feature, p["computer_use_features"])
    for bucket in ("screenshot", "input"):
        assert bucket in p["computer_use_features_coarse"], p["computer_use_features_coarse"]
    assert p["screen_resolution"] == [1280, 800], p
    # This daemon has no session bus, so no accessibility bus: no trees.
    assert "a11y.tree" not in p["computer_use_features"], p["computer_use_features"]


def test_hello_ack_with_max_file_size_is_accepted(daemon):
    c = daemon.client(hello_ack={"max_file_size_bytes": 1_000_000})
    try:
        info = c.call("DISPLAY_INFO_REQUEST", {}, expect="DISPLAY_INFO_RESPONSE")
        assert len(info["monitors"]) == 1, info
        assert c.events == [], f"unexpected messages (a reply to HELLO_ACK?): {c.events}"
    finally:
        c.close()


def test_token_survives_a_restart_without_a_keychain(tmp_path):
    """With no OS keychain (no session bus here) the token is created on
    first run, kept in a 0600 file, reused (not a silent in-memory
    fallback), and the log says where it went."""
    from daemon import Daemon

    config = tmp_path / "config"
    config.mkdir(mode=0o700)
    tokens = []
    for _ in range(2):
        d = Daemon("--virtual=640x480", env={"XDG_CONFIG_HOME": str(config)})
        try:
            tokens.append(d.token)
            d.client().close()  # the token works (and the daemon is fully up)
        finally:
            assert d.terminate() == 0, d.stderr_tail()
        assert "no OS keychain answered" in d.stderr_path.read_text(), d.stderr_tail()
    assert tokens[0] == tokens[1], "a new token was minted on restart"
    stored = [p for p in config.rglob("*") if p.is_file()]
    assert stored, "no token file under $XDG_CONFIG_HOME"
    for p in stored:
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, (p, oct(p.stat().st_mode))


def test_a_second_serve_on_a_taken_port_names_the_deskhand_there_and_starts_nothing(tmp_path):
    """`serve --virtual` on the port the running deskhand serves: refused
    before its virtual desktop starts, naming the running one."""
    import socket
    import subprocess

    from daemon import Daemon, binary

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    first = Daemon("--virtual=640x480", "--listen", f"127.0.0.1:{port}",
                   default_connection_file=True, port_and_audit_from_settings=True)
    try:
        # In the first one's session: its runtime directory and so its
        # connection file.
        env = first.env
        second = subprocess.run(
            [binary(), "serve", "--virtual=640x480", "--listen", f"127.0.0.1:{port}",
             "--connection-file", str(tmp_path / "second.json")],
            env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode != 0
        said = second.stderr
        assert f"127.0.0.1:{port} is already served by another deskhand (pid {first.proc.pid}" \
            in said, said
        assert "--listen 127.0.0.1:0" in said, said
        assert "desktop attached" not in said, "no virtual desktop was started"
        assert not (tmp_path / "second.json").exists()
    finally:
        assert first.terminate() == 0, first.stderr_tail()
