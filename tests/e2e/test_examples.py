"""The examples in examples/ run as a newcomer runs them (`python3
examples/X.py --connection-file FILE --out FILE`) against `deskhand serve
--virtual`: each types a shell command, and the file that command writes
holds its line. The MCP example reads the dialog's accessibility tree, so
deskhand and the apps share a session bus of the test's own."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from computer_http import png_size
from daemon import Daemon
from xhelpers import REPO, missing, require, scratch_dir

EXAMPLES = REPO / "examples"


@pytest.fixture(scope="module")
def desk():
    """(daemon, bus): a session bus that offers the AT-SPI bus, and
    `deskhand serve --virtual` on it. The person's shell is sh, so that the
    xterm deskhand launches reads no rc file of this machine's account."""
    require("dbus-daemon", "xterm", "zenity")
    if not Path("/usr/share/dbus-1/services/org.a11y.Bus.service").exists():
        missing("at-spi2-core (org.a11y.Bus.service)")
    for module in ("mcp", "httpx2", "websockets"):
        if importlib.util.find_spec(module) is None:
            missing(f"the Python package {module} (scripts/install-deps)")
    tmp = Path(scratch_dir("examples-"))
    run_dir = tmp / "run"
    run_dir.mkdir(mode=0o700)
    # its own runtime directory: the accessibility bus it starts gets a
    # socket of its own, not ~/.cache/at-spi/bus
    bus_proc = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1",
         f"--address=unix:path={tmp}/bus"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "XDG_RUNTIME_DIR": str(run_dir)})
    bus = bus_proc.stdout.readline().strip()
    try:
        d = Daemon("--virtual=1280x800", env={"DBUS_SESSION_BUS_ADDRESS": bus, "SHELL": "/bin/sh"})
    except BaseException:
        bus_proc.terminate()
        raise
    yield d, bus
    rc = d.terminate()
    bus_proc.terminate()
    bus_proc.wait(10)
    assert rc == 0, f"deskhand exited {rc} on SIGTERM\n{d.stderr_tail()}"


def run_example(desk, name: str, out: Path, *args: str) -> str:
    """Runs examples/`name` as its own process; its stdout. It finds the
    daemon by the connection file alone: no DISPLAY, and no API key (the
    computer-use loop runs its scripted model)."""
    daemon, bus = desk
    drop = ("DISPLAY", "ANTHROPIC_API_KEY", "NO_AT_BRIDGE", "AT_SPI_BUS_ADDRESS")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["DBUS_SESSION_BUS_ADDRESS"] = bus
    r = subprocess.run([sys.executable, str(EXAMPLES / name),
                        "--connection-file", str(daemon.connection_file), "--out", str(out),
                        *args], env=env, cwd=out.parent, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, (f"{name} exited {r.returncode}\nstdout:\n{r.stdout}\n"
                               f"stderr:\n{r.stderr}\n{daemon.stderr_tail()}")
    return r.stdout


def test_mcp_agent_types_a_command_into_a_dialog_by_its_tree(desk, tmp_path):
    out = tmp_path / "mcp.txt"
    stdout = run_example(desk, "mcp_agent.py", out)
    assert out.read_text() == "hello from mcp_agent.py\n", stdout
    # it read the tree, wrote the field and pressed OK through it
    assert 'button "OK"' in stdout and 'text_field ""' in stdout, stdout
    assert "typed: confirmed | readback: match" in stdout, stdout
    assert "clicked OK: done via accessibility" in stdout, stdout


def test_computer_use_loop_runs_the_scripted_models_command(desk, tmp_path):
    out = tmp_path / "computer.txt"
    stdout = run_example(desk, "computer_use_loop.py", out)
    assert out.read_text() == "hello from computer_use_loop.py\n", stdout
    actions = [line for line in stdout.splitlines() if " -> " in line]
    assert len(actions) == 4 and all(a.endswith("-> ok") for a in actions), stdout


def test_wire_ops_client_types_a_command_into_the_xterm_it_launched(desk, tmp_path):
    out, shot = tmp_path / "wire.txt", tmp_path / "xterm.png"
    stdout = run_example(desk, "wire_ops_client.py", out, "--screenshot", str(shot))
    assert out.read_text() == "hello from wire_ops_client.py\n", stdout
    width, height = png_size(shot.read_bytes())
    assert f"screenshot: {width}x{height} image/png" in stdout, stdout
