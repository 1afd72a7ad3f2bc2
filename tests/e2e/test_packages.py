"""The Linux packages (`installers/build-packages`, the Tauri bundler from
npm @tauri-apps/cli@2): the .deb builds, `dpkg -i` installs it, the
installed command line runs `doctor --json`, the app and the systemd user
unit are in place, and `dpkg -r` removes every file again. The .rpm is
built beside it and its file list checked without installing it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from xhelpers import REPO, missing

INSTALLED = ["/usr/bin/deskhand", "/usr/bin/deskhand-app",
             "/usr/lib/systemd/user/deskhand.service"]


@pytest.fixture(scope="module")
def packages():
    if os.geteuid() != 0:
        missing("root, to install the .deb with dpkg (CI runs as root)")
    for tool in ("dpkg", "dpkg-deb", "npm"):
        if not shutil.which(tool):
            missing(tool)
    out = subprocess.run([str(REPO / "installers" / "build-packages")], cwd=REPO,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    built = [Path(line) for line in out.stdout.split() if line.endswith((".deb", ".rpm"))]
    deb = next(p for p in built if p.suffix == ".deb")
    rpm = next(p for p in built if p.suffix == ".rpm")
    return deb, rpm


def dpkg(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["dpkg", *args], capture_output=True, text=True, timeout=300)


def test_the_deb_installs_runs_and_removes_cleanly(packages, tmp_path):
    deb, _ = packages
    assert dpkg("-s", "deskhand").returncode != 0, "deskhand was already installed"
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True,
                             check=True).stdout
    contents = {"/" + line.split()[-1].removeprefix("./") for line in listing.splitlines()}
    for path in INSTALLED:
        assert path in contents, f"{path} not in the .deb"
    installed = dpkg("-i", str(deb))
    try:
        assert installed.returncode == 0, installed.stderr
        env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
        env["XDG_RUNTIME_DIR"] = str(tmp_path)
        doctor = subprocess.run(["/usr/bin/deskhand", "doctor", "--json"], capture_output=True,
                                text=True, timeout=60, env=env)
        report = json.loads(doctor.stdout)
        assert report["schema"] and report["driver_version"], report
        assert report["network"]["telemetry"] is False
        assert subprocess.run(["/usr/bin/deskhand-app", "--help"], capture_output=True,
                              timeout=30).returncode == 0
        unit = Path("/usr/lib/systemd/user/deskhand.service").read_text()
        assert "ExecStart=/usr/bin/deskhand serve" in unit
    finally:
        removed = dpkg("-r", "deskhand")
    assert removed.returncode == 0, removed.stderr
    assert dpkg("-s", "deskhand").returncode != 0 or "deinstall" in dpkg("-s", "deskhand").stdout
    for path in INSTALLED:
        assert not os.path.exists(path), f"{path} left behind by dpkg -r"


def test_the_rpm_holds_the_same_files(packages):
    _, rpm = packages
    for tool in ("rpm2cpio", "cpio"):
        if not shutil.which(tool):
            missing(f"{tool} (apt install rpm2cpio cpio) to read the .rpm")
    listing = subprocess.run(f"rpm2cpio '{rpm}' | cpio -t --quiet", shell=True,
                             capture_output=True, text=True, check=True).stdout
    contents = {"/" + line.removeprefix("./").lstrip("/") for line in listing.splitlines()}
    for path in INSTALLED:
        assert path in contents, f"{path} not in the .rpm"
