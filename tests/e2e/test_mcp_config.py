"""`deskhand mcp-config` on the real binary: the entry each MCP client
needs, printed or merged into the client's own config file in a home of
the test's own: other servers and settings kept, a backup of the old file
beside it, and a file that is not the client's format left untouched."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

from daemon import binary


def mcp_config(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    return subprocess.run([binary(), "mcp-config", *args], env=env,
                          capture_output=True, text=True, timeout=30)


def test_the_printed_entry_runs_this_deskhand_mcp(tmp_path):
    out = mcp_config(tmp_path, "--client", "claude-desktop")
    assert out.returncode == 0, out.stderr
    entry = json.loads(out.stdout)["mcpServers"]["deskhand"]
    assert entry == {"command": str(Path(binary()).resolve()), "args": ["mcp"]}
    # Nothing was written without --write.
    assert not list(tmp_path.rglob("*.json"))


def test_write_merges_into_the_clients_file_and_keeps_a_backup(tmp_path):
    config = tmp_path / ".cursor" / "mcp.json"
    config.parent.mkdir()
    old = json.dumps({"mcpServers": {"files": {"command": "fs-mcp", "args": ["/srv"]}}})
    config.write_text(old)
    out = mcp_config(tmp_path, "--client", "cursor", "--write")
    assert out.returncode == 0, out.stderr
    servers = json.loads(config.read_text())["mcpServers"]
    assert servers["files"] == {"command": "fs-mcp", "args": ["/srv"]}
    assert servers["deskhand"]["args"] == ["mcp"]
    assert (tmp_path / ".cursor" / "mcp.json.deskhand-backup").read_text() == old


def test_a_file_that_cannot_be_parsed_is_left_as_it_was(tmp_path):
    config = tmp_path / ".config" / "Code" / "User" / "mcp.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"servers": {  // a comment and a missing brace')
    before = config.read_text()
    out = mcp_config(tmp_path, "--client", "vscode", "--write")
    assert out.returncode != 0
    assert "left as it was" in out.stderr, out.stderr
    assert config.read_text() == before
    assert not list(config.parent.glob("*.deskhand-backup"))


def test_codex_gets_its_toml_table_and_keeps_the_persons_comments(tmp_path):
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('# mine\nmodel = "o3"\n')
    out = mcp_config(tmp_path, "--client", "codex", "--write")
    assert out.returncode == 0, out.stderr
    text = config.read_text()
    assert text.startswith('# mine\nmodel = "o3"\n'), text
    assert tomllib.loads(text)["mcp_servers"]["deskhand"]["args"] == ["mcp"]
