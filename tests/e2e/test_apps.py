"""APP_LAUNCH and APP_LIST_REQUEST on a real desktop: launched apps run,
show up in the list with their windows, come to the front, and no shell
ever reads their arguments."""

import os
import signal

import pytest

from daemon import Daemon
from xhelpers import poll, require, run, scratch_dir


def apps(client, **payload):
    return client.call("APP_LIST_REQUEST", payload, expect="APP_LIST_RESPONSE")["apps"]


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def test_launched_xterm_is_listed_and_activated(client, display):
    require("xterm", "xprop", "xdotool")
    # debian-xterm.desktop names /usr/bin/xterm, with no arguments.
    ack = client.call("APP_LAUNCH", {"executable_path": "/usr/bin/xterm"}, expect="ACK")
    pid = ack["pid"]
    try:
        def listed():
            return [a for a in apps(client) if a["pid"] == pid and a["window_count"] == 1]

        app = poll(listed, timeout=15, what="the launched xterm with one window in APP_LIST")[0]
        assert app["name"] == "xterm" and app["executable_path"] == "/usr/bin/xterm", app
        wid = int(run(display, "xdotool", "search", "--onlyvisible", "--pid",
                      str(pid)).split()[0])

        def active():
            out = run(display, "xprop", "-root", "_NET_ACTIVE_WINDOW")
            return int(out.rsplit(" ", 1)[-1], 16)

        poll(lambda: active() == wid, timeout=10, what="the launched xterm to be activated")
        front = [a for a in apps(client) if a["is_frontmost"]]
        assert [a["pid"] for a in front] == [pid], front
    finally:
        kill(pid)


def test_launch_by_desktop_id(client, display):
    require("xterm")
    ack = client.call("APP_LAUNCH", {"bundle_id": "debian-xterm", "activate": False}, expect="ACK")
    pid = ack["pid"]
    try:
        poll(lambda: any(a["pid"] == pid and a["window_count"] == 1 for a in apps(client)),
             timeout=15, what="the xterm of debian-xterm.desktop in APP_LIST")
    finally:
        kill(pid)


@pytest.fixture(scope="module")
def with_entries():
    """A daemon whose system data directories have an entry for touch,
    taking files (root's: the person's own entries launch nothing)."""
    data = scratch_dir("data-")
    os.makedirs(f"{data}/applications")
    with open(f"{data}/applications/deskhand-touch.desktop", "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Touch\nExec=touch %F\n")
    d = Daemon("--virtual=640x480",
               env={"XDG_DATA_DIRS": f"{data}:/usr/local/share:/usr/share"})
    yield d
    d.terminate()


def test_arguments_never_reach_a_shell(with_entries, tmp_path):
    client = with_entries.client()
    name = "a b;c $(id)"
    for payload in ({"executable_path": "/usr/bin/touch"}, {"bundle_id": "deskhand-touch"}):
        ack = client.call("APP_LAUNCH", {**payload, "args": [str(tmp_path / name)],
                                         "activate": False}, expect="ACK")
        assert ack["pid"] > 0
        poll(lambda: (tmp_path / name).exists(), timeout=5, what="the file with the literal name")
        assert os.listdir(tmp_path) == [name], os.listdir(tmp_path)
        os.remove(tmp_path / name)


def test_bad_launches_are_invalid_arguments(client, tmp_path):
    plain = tmp_path / "not-executable"
    plain.write_text("echo no\n")
    plain.chmod(0o644)
    for payload in ({"bundle_id": "no-such-app-deskhand"},
                    {"bundle_id": "../../etc/passwd"},
                    {"executable_path": "xterm"},
                    {"executable_path": str(plain)},
                    {"executable_path": str(tmp_path / "absent")},
                    {}):
        msg = client.request("APP_LAUNCH", payload)
        assert msg["type"] == "ERROR" and msg["payload"]["code"] == "INVALID_ARGUMENTS", \
            (payload, msg)


def test_background_processes_only_on_request(client):
    visible = {a["pid"] for a in apps(client)}
    everything = {a["pid"] for a in apps(client, include_background=True)}
    assert visible <= everything
    daemon_pids = [a["pid"] for a in apps(client, include_background=True)
                   if a["name"] == "deskhand"]
    assert daemon_pids, "deskhand itself runs without a window"
    assert not visible & set(daemon_pids)
