"""The Linux packages (`installers/build-packages`, the Tauri bundler from
npm @tauri-apps/cli@2): the .deb builds and passes lintian, `dpkg -i`
installs it, the installed deskhand takes over a desktop (its red frame
shows, the person's move hands back) and its doctor says ready, and
`dpkg -r` removes every file again. The .rpm is built beside it and its
file list checked without installing it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from daemon import Daemon
from desktop import attach
from xhelpers import REPO, map_state, missing, overlay_window, poll

# The frame and the window list in a GNOME Wayland session: the extension's
# two builds, and the link postinst makes to the one the shell loads.
EXTENSION = "/usr/share/gnome-shell/extensions/deskhand@deskhand.dev"
BUILDS = "/usr/share/deskhand/gnome-shell"
INSTALLED = ["/usr/bin/deskhand", "/usr/bin/deskhand-app", "/usr/bin/deskhand-overlay",
             "/usr/lib/systemd/user/deskhand.service",
             *(f"{BUILDS}/{b}/deskhand@deskhand.dev/{f}" for b in ("43", "45")
               for f in ("extension.js", "metadata.json"))]


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


def is_installed() -> bool:
    """deskhand is installed (not merely remembered: a package with a
    postrm stays in the `config-files` state after `dpkg -r`)."""
    return "Status: install ok installed" in dpkg("-s", "deskhand").stdout


def test_the_deb_installs_runs_and_removes_cleanly(packages, tmp_path):
    deb, _ = packages
    assert not is_installed(), "deskhand was already installed"
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True,
                             check=True).stdout
    contents = {"/" + line.split()[-1].removeprefix("./") for line in listing.splitlines()}
    for path in INSTALLED:
        assert path in contents, f"{path} not in the .deb"
    installed = dpkg("-i", str(deb))
    files: list[str] = []
    try:
        assert installed.returncode == 0, installed.stderr
        files = [f for f in dpkg("-L", "deskhand").stdout.split("\n") if os.path.isfile(f)]
        assert subprocess.run(["/usr/bin/deskhand-app", "--help"], capture_output=True,
                              timeout=30).returncode == 0
        unit = Path("/usr/lib/systemd/user/deskhand.service").read_text()
        assert "ExecStart=/usr/bin/deskhand serve" in unit
        the_extension_is_linked_for_this_gnome_shell()
        the_installed_deskhand_takes_over_and_hands_back(tmp_path)
        the_units_output_holds_no_token(unit)
    finally:
        removed = dpkg("-r", "deskhand")
    assert removed.returncode == 0, removed.stderr
    assert not is_installed()
    for path in [*INSTALLED, *files, EXTENSION]:
        assert not os.path.lexists(path), f"{path} left behind by dpkg -r"
    # Purged, dpkg forgets it too (its postrm runs once more, for purge).
    purged = dpkg("-P", "deskhand")
    assert purged.returncode == 0, purged.stderr
    assert dpkg("-s", "deskhand").returncode != 0


def the_extension_is_linked_for_this_gnome_shell() -> None:
    """postinst linked the build this machine's gnome-shell (43) loads, and
    the .deb asks to run it again when gnome-shell changes."""
    shell = subprocess.run(["gnome-shell", "--version"], capture_output=True, text=True)
    assert shell.returncode == 0, "gnome-shell is one of the test dependencies"
    major = int(shell.stdout.split()[2].split(".")[0])
    build = "45" if major >= 45 else "43"
    assert os.readlink(EXTENSION) == f"{BUILDS}/{build}/deskhand@deskhand.dev"
    metadata = json.loads(Path(EXTENSION, "metadata.json").read_text())
    assert str(major) in metadata["shell-version"], metadata


def the_installed_deskhand_takes_over_and_hands_back(tmp_path) -> None:
    """The packaged binaries alone (nothing from the build tree): the
    frame shows, the person's move hands back, and doctor says ready."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "DESKHAND_OVERLAY")}
    assert "DESKHAND_OVERLAY" not in os.environ, "the test must find the packaged overlay"
    d = Daemon("--virtual=1024x768", command=["/usr/bin/deskhand", "serve"])
    try:
        c = d.client()
        assert c.takeover_state == {"on": True, "indicator": True, "paused": False}, \
            c.takeover_state
        wid, _ = overlay_window(d.display)
        assert map_state(d.display, wid) == "IsViewable"
        assert attach(d.display).pixel(0, 0) == (224, 27, 36), "the red frame is on screen"
        c.act("mouse_move", coordinate=[300, 300])
        attach(d.display).person.move(50, 700)
        poll(lambda: c.pushed_state()["paused"], timeout=10, what="the hand-back")
        doctor = subprocess.run(["deskhand", "doctor", "--json"], capture_output=True, text=True,
                                timeout=60, env={**env, "DISPLAY": d.display,
                                                 "XDG_RUNTIME_DIR": str(tmp_path)})
        report = json.loads(doctor.stdout)
        assert doctor.returncode == 0 and report["ready"], report["next_steps"]
        assert report["network"]["telemetry"] is False
        c.close()
    finally:
        assert d.terminate() == 0, d.stderr_tail()


def the_units_output_holds_no_token(unit: str) -> None:
    """The unit's own command, its stdout a pipe as the journal's stream
    is: what it prints (all of it lands in the journal, readable by the
    adm and systemd-journal groups) never holds the token."""
    start = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    argv = start.removeprefix("ExecStart=").split()
    d = Daemon("--virtual=800x600", command=argv)
    try:
        assert "token" not in d.ready, d.ready
        assert json.loads(Path(d.ready["connection_file"]).read_text())["token"] == d.token
        d.client().close()
    finally:
        assert d.terminate() == 0, d.stderr_tail()
    printed = [d.ready, *d.remaining_lines()]
    assert not any(d.token in json.dumps(line) for line in printed), printed
    assert d.token not in d.stderr_tail(), "the token is in the log"


def test_the_deb_links_the_extension_again_when_gnome_shell_changes(packages):
    deb, _ = packages
    triggers = subprocess.run(["dpkg-deb", "-I", str(deb), "triggers"], capture_output=True,
                              text=True)
    assert triggers.stdout.split() == ["interest-noawait", "/usr/bin/gnome-shell"]
    postinst = subprocess.run(["dpkg-deb", "-I", str(deb), "postinst"], capture_output=True,
                              text=True).stdout
    assert postinst == (REPO / "installers/linux/gnome-shell/pick").read_text()


def test_the_deb_passes_lintian(packages):
    deb, _ = packages
    if not shutil.which("lintian"):
        missing("lintian (apt install lintian)")
    out = subprocess.run(["lintian", "--tag-display-limit", "0", str(deb)], capture_output=True,
                         text=True, timeout=600)
    errors = [line for line in out.stdout.splitlines() if line.startswith("E:")]
    assert not errors, out.stdout


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
