"""Click into an xterm, type a command, press Enter: the shell writes a file."""

import os

from xhelpers import XTerm, poll


def test_type_into_xterm_runs_the_command(client, display, apps, tmp_path):
    out = tmp_path / "typed.txt"
    term = XTerm(display, command=["env", "PS1=$ ", "bash", "--norc", "--noprofile"],
                 cwd=str(tmp_path))
    apps.append(term)
    client.act("left_click", coordinate=list(term.rect().center()))
    client.act("type", text=f"echo deskhand-ok > {out}")
    client.act("key", key="Return")
    poll(lambda: out.exists() and out.read_text() == "deskhand-ok\n", timeout=10,
         what=f"{out} to contain 'deskhand-ok'")


def test_key_chord_reaches_the_focused_window(client, display, apps, tmp_path):
    """ctrl+u erases the typed line: only the second command runs."""
    first, second = tmp_path / "erased.txt", tmp_path / "kept.txt"
    term = XTerm(display, command=["env", "PS1=$ ", "bash", "--norc", "--noprofile"],
                 cwd=str(tmp_path))
    apps.append(term)
    client.act("left_click", coordinate=list(term.rect().center()))
    client.act("type", text=f"touch {first}")
    client.act("key", key="ctrl+u")
    client.act("type", text=f"touch {second}")
    client.act("key", key="enter")
    poll(lambda: second.exists(), timeout=10, what=f"{second} to be created")
    assert not first.exists(), "ctrl+u did not erase the line: the first command ran"
    assert sorted(os.listdir(tmp_path)) == ["kept.txt"], os.listdir(tmp_path)
