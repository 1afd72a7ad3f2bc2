"""The token and the audit key live in the OS keychain when one answers:
a private D-Bus session with gnome-keyring (the Secret Service) unlocked
with a known password, as on a person's desktop."""

import json
import os
import re
import socket
import subprocess
import time

import pytest

from daemon import Daemon, binary
from xhelpers import missing, poll, require, scratch_dir

PASSWORD = b"deskhand-test-keyring"


def name_has_owner(env: dict, name: str) -> bool:
    out = subprocess.run(
        ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
         "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", f"string:{name}"],
        env=env, capture_output=True, text=True, timeout=10)
    return out.returncode == 0 and "boolean true" in out.stdout


@pytest.fixture
def secret_service():
    """A session bus and an unlocked gnome-keyring on it; yields the
    environment that reaches them."""
    require("dbus-daemon", "dbus-send", "gnome-keyring-daemon", "secret-tool")
    home = scratch_dir("keyring-home-")
    bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    address = bus.stdout.readline().strip()
    env = {"DBUS_SESSION_BUS_ADDRESS": address, "HOME": home,
           "XDG_DATA_HOME": f"{home}/data", "XDG_RUNTIME_DIR": home,
           "PATH": os.environ["PATH"]}
    keyring = subprocess.Popen(
        ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    keyring.stdin.write(PASSWORD)
    keyring.stdin.close()
    try:
        deadline = time.monotonic() + 15
        while not name_has_owner(env, "org.freedesktop.secrets"):
            if keyring.poll() is not None or time.monotonic() > deadline:
                missing("a working gnome-keyring-daemon (the Secret Service)")
            time.sleep(0.1)
        yield env
    finally:
        for p in (keyring, bus):
            p.kill()
            p.wait(10)


def bus_and_config(secret_service: dict, config) -> dict:
    """The daemon's environment: the test's session bus, its config dir."""
    return {"DBUS_SESSION_BUS_ADDRESS": secret_service["DBUS_SESSION_BUS_ADDRESS"],
            "XDG_CONFIG_HOME": str(config)}


def lookup(env: dict, account: str) -> str:
    out = subprocess.run(["secret-tool", "lookup", "service", "deskhand", "username", account],
                         env=env, capture_output=True, text=True, timeout=10)
    return out.stdout.strip()


def test_token_is_kept_in_the_keychain_and_survives_a_restart(secret_service, tmp_path):
    config = tmp_path / "config"
    config.mkdir(mode=0o700)
    # an earlier run without a keychain left its token in a file
    Daemon("--virtual=640x480", env={"XDG_CONFIG_HOME": str(config)}).terminate()
    old_file = config / "deskhand" / "token"
    old_token = old_file.read_text().strip()

    env = bus_and_config(secret_service, config)
    tokens = []
    for _ in range(2):
        d = Daemon("--virtual=640x480", env=env)
        try:
            tokens.append(d.token)
            d.client().close()  # the token works
        finally:
            assert d.terminate() == 0, d.stderr_tail()
        assert "no OS keychain" not in d.stderr_path.read_text(), d.stderr_tail()
    assert tokens == [old_token, old_token], "the file's token did not move into the keychain"
    assert not old_file.exists(), "the token file is still there after moving into the keychain"
    assert not (config / "deskhand" / "audit-key").exists()
    account = f"token for {config}/deskhand"
    assert lookup(secret_service, account) == old_token, "the keychain does not hold the token"
    assert len(lookup(secret_service, f"audit key for {config}/deskhand")) == 64


def bus_pids(env: dict) -> set[int]:
    """The processes connected to the test's session bus."""
    out = subprocess.run(
        ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
         "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames"],
        env=env, capture_output=True, text=True, timeout=10, check=True)
    pids = set()
    for name in re.findall(r'string "(:[0-9.]+)"', out.stdout):
        pid = subprocess.run(
            ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
             "/org/freedesktop/DBus", "org.freedesktop.DBus.GetConnectionUnixProcessID",
             f"string:{name}"],
            env=env, capture_output=True, text=True, timeout=10)
        found = re.search(r"uint32 ([0-9]+)", pid.stdout)
        if found:
            pids.add(int(found.group(1)))
    return pids


def test_the_daemon_lets_go_of_the_bus_once_its_secrets_are_loaded(secret_service,
                                                                    tmp_path):
    config = tmp_path / "config"
    config.mkdir(mode=0o700)
    d = Daemon("--virtual=640x480", env=bus_and_config(secret_service, config))
    try:
        assert lookup(secret_service, f"token for {config}/deskhand") == d.token
        poll(lambda: d.proc.pid not in bus_pids(secret_service),
             what="the daemon's D-Bus connection to close")
        d.client().close()  # and it still answers with its token
    finally:
        assert d.terminate() == 0, d.stderr_tail()


def test_each_config_directory_has_its_own_keychain_token(secret_service, tmp_path):
    tokens = []
    for name in ("a", "b"):
        config = tmp_path / name
        config.mkdir(mode=0o700)
        d = Daemon("--virtual=640x480", env=bus_and_config(secret_service, config))
        tokens.append(d.token)
        assert d.terminate() == 0, d.stderr_tail()
        assert not (config / "deskhand" / "token").exists()
    assert tokens[0] != tokens[1]


def test_an_explicit_token_file_bypasses_the_keychain(secret_service, tmp_path):
    config = tmp_path / "config"
    config.mkdir(mode=0o700)
    token_file = tmp_path / "my-token"
    env = bus_and_config(secret_service, config)
    d = Daemon("--virtual=640x480", "--token-file", str(token_file), env=env,
               default_connection_file=True)
    # The doctor says where the running deskhand keeps it, although a
    # keychain answers (one source of truth, as the log and Settings).
    doctor = subprocess.run([binary(), "doctor", "--json"], capture_output=True, text=True,
                            timeout=60, env={**os.environ, **env, "DISPLAY": d.display,
                                             "XDG_RUNTIME_DIR": str(d.tmp / "runtime_dir")})
    store = next(p for p in json.loads(doctor.stdout)["probes"] if p["label"] == "token store")
    assert str(token_file) in store["message"] and "running" in store["message"], store
    assert d.terminate() == 0, d.stderr_tail()
    assert f"kept_in={token_file}" in d.stderr_path.read_text(), d.stderr_tail()
    assert token_file.read_text().strip() == d.token
    assert lookup(secret_service, f"token for {config}/deskhand") == ""


def test_a_keychain_that_never_answers_is_waited_for_once(tmp_path):
    # A session bus socket that accepts and then says nothing: the D-Bus
    # handshake hangs, as with an unlock prompt nobody answers.
    path = tmp_path / "silent-bus"
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(str(path))
    silent.listen(8)
    config = tmp_path / "config"
    config.mkdir(mode=0o700)
    env = {"DBUS_SESSION_BUS_ADDRESS": f"unix:path={path}", "XDG_CONFIG_HOME": str(config)}
    try:
        d = Daemon("--virtual=640x480", env=env)
        try:
            d.client().close()
        finally:
            assert d.terminate() == 0, d.stderr_tail()
        log = d.stderr_path.read_text()
        # the audit key waited; the token after it did not wait again
        assert re.search(r"did not answer within 10s(?! earlier)", log), d.stderr_tail()
        assert "did not answer within 10s earlier" in log, d.stderr_tail()
        assert (config / "deskhand" / "token").read_text().strip() == d.token
    finally:
        silent.close()
