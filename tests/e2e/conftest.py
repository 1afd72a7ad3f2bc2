"""Shared fixtures: one --virtual daemon for the session, clients, apps."""

from __future__ import annotations

import os

import pytest

from daemon import Daemon
from desktop import attach
from xhelpers import require


@pytest.fixture(scope="session")
def daemon():
    """`deskhand serve --virtual=1280x800`; stopped with SIGTERM at the end,
    which must exit 0 and take the virtual display down with it."""
    require("xdotool", "xdpyinfo", "xwininfo")
    d = Daemon("--virtual=1280x800")
    yield d
    rc = d.terminate()
    assert rc == 0, f"deskhand exited {rc} on SIGTERM\n{d.stderr_tail()}"
    attach(d.display).assert_gone()


def continue_if_held(d: Daemon, width: int = 1280) -> None:
    """The person clicks Continue when a test left the desktop paused (a
    hand-back or the kill switch holds it for every later session); a click
    within 1.5 s of one of deskhand's is ignored, so they click again."""
    c = d.client()
    try:
        if not (c.takeover_state and c.takeover_state.get("paused")):
            return
        for _ in range(4):
            attach(d.display).person.click_continue(width)
            try:
                if c.pushed_state(timeout=1.0)["paused"] is False:
                    return
            except TimeoutError:
                pass
        raise AssertionError("Continue did not resume the desktop a test left paused")
    finally:
        c.close()


@pytest.fixture(scope="module")
def two_clients(tmp_path_factory):
    """A daemon with a second client token (`--client-token-file`), and
    that token."""
    tmp = tmp_path_factory.mktemp("tokens")
    os.chmod(tmp, 0o700)
    other = tmp / "other.token"
    other.write_text(os.urandom(32).hex() + "\n")
    os.chmod(other, 0o600)
    d = Daemon("--virtual=1280x800", "--client-token-file", str(other))
    yield d, other.read_text().strip()
    d.terminate()


@pytest.fixture
def display(daemon) -> str:
    return daemon.display


@pytest.fixture
def client(daemon):
    c = daemon.client()
    yield c
    c.close()


@pytest.fixture
def apps():
    """A list to append started App objects to; all are closed afterwards."""
    started: list = []
    yield started
    for app in started:
        app.close()


@pytest.fixture(autouse=True)
def _close_clients(monkeypatch, request):
    """Every client a test opens is closed after it, pass or fail, so that a
    failed test does not keep holding the takeover; a desktop the test left
    paused is continued, as the person would."""
    opened = []
    original = Daemon.client

    def client(self, **kw):
        c = original(self, **kw)
        opened.append(c)
        return c

    monkeypatch.setattr(Daemon, "client", client)
    yield
    for c in opened:
        try:
            c.close()
        except Exception:
            pass
    if "daemon" in request.fixturenames:
        continue_if_held(request.getfixturevalue("daemon"))
