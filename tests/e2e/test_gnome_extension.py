"""deskhand's GNOME Shell extension in its two builds: GNOME 43-44's legacy
script (the one the headless GNOME 43 tests run) and GNOME 45+'s ES module
(no GNOME 45 here: its syntax is checked by node, its body is the one the
GNOME 43 tests run). `pick` links the build the installed shell loads, as
the packages' postinst does, and `unpick` removes the link on removal only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from xhelpers import REPO, missing

SRC = REPO / "installers" / "linux" / "gnome-shell"
UUID = "deskhand@deskhand.dev"


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("extension")
    subprocess.run([str(SRC / "make-extension"), str(out)], check=True)
    return out


def node_check(path: Path) -> subprocess.CompletedProcess:
    if not shutil.which("node"):
        missing("node (apt install nodejs), to check the extension's syntax")
    return subprocess.run(["node", "--check", str(path)], capture_output=True, text=True)


def test_each_build_declares_its_shells_and_parses_in_its_form(builds, tmp_path):
    legacy = builds / "43" / UUID
    module = builds / "45" / UUID
    assert json.loads((legacy / "metadata.json").read_text())["shell-version"] == ["43", "44"]
    newer = json.loads((module / "metadata.json").read_text())["shell-version"]
    assert newer[0] == "45" and "48" in newer
    for folder in (legacy, module):
        assert json.loads((folder / "metadata.json").read_text())["uuid"] == UUID
    # A legacy extension is a script: no import or export statement parses there.
    script = tmp_path / "legacy.cjs"
    script.write_text((legacy / "extension.js").read_text())
    checked = node_check(script)
    assert checked.returncode == 0, checked.stderr
    assert "function init()" in script.read_text()
    # GNOME 45+ imports extension.js as a module with a default export.
    esm = tmp_path / "module.mjs"
    esm.write_text((module / "extension.js").read_text())
    checked = node_check(esm)
    assert checked.returncode == 0, checked.stderr
    text = esm.read_text()
    assert "export default class" in text and "imports." not in text
    # The same body in both.
    body = (SRC / "service.js").read_text()
    assert body in script.read_text() and body in text


def fake_shell(tmp_path: Path, version: str | None) -> dict:
    """PATH with a gnome-shell that prints `version`, or (None) one that
    is not there (the shell's "command not found")."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shell = bin_dir / "gnome-shell"
    said = "exit 127" if version is None else f"echo 'GNOME Shell {version}'"
    shell.write_text(f"#!/bin/sh\n{said}\n")
    shell.chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin"}


@pytest.mark.parametrize("version,build", [("43.9", "43"), ("44.10", "43"), ("45.0", "45"),
                                           ("46.2", "45"), ("49.alpha", "45")])
def test_pick_links_the_build_the_installed_shell_loads(builds, tmp_path, version, build):
    link = tmp_path / "extensions" / UUID
    env = {**fake_shell(tmp_path, version), "DESKHAND_EXTENSION_BUILDS": str(builds),
           "DESKHAND_EXTENSION_LINK": str(link)}
    subprocess.run([str(SRC / "pick"), "configure", "0.1.0"], check=True, env=env)
    assert os.readlink(link) == str(builds / build / UUID)
    assert (link / "extension.js").is_file()


def test_pick_without_gnome_shell_removes_the_link_and_unpick_keeps_it_on_upgrade(builds,
                                                                                 tmp_path):
    link = tmp_path / "extensions" / UUID
    env = {"DESKHAND_EXTENSION_BUILDS": str(builds), "DESKHAND_EXTENSION_LINK": str(link)}
    subprocess.run([str(SRC / "pick")], check=True, env={**env, **fake_shell(tmp_path, "46.0")})
    for upgrade in ("upgrade", "1"):
        subprocess.run([str(SRC / "unpick"), upgrade], check=True, env=env)
        assert os.path.islink(link), f"unpick {upgrade} removed the link"
    subprocess.run([str(SRC / "pick"), "triggered"], check=True,
                   env={**env, **fake_shell(tmp_path, None)})
    assert not os.path.lexists(link), "the link stayed with no GNOME Shell"
    subprocess.run([str(SRC / "pick")], check=True, env={**env, **fake_shell(tmp_path, "43.2")})
    subprocess.run([str(SRC / "unpick"), "remove"], check=True, env=env)
    assert not os.path.lexists(link)
