"""Fixtures of the attack tests."""

from __future__ import annotations

import os

import pytest

from daemon import Daemon


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
