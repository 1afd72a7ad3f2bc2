"""Another program takes the kill switch's chord first (issue 47, 7a):
deskhand.exe in a Wine virtual desktop, the attacker a program of the
person's own (tests/wine/wattack.c) that registers ctrl+alt+Escape before
deskhand starts. A file of its own: the chord must be free of every other
deskhand when the attacker takes it. The catalogue is
`tests/e2e/attacks/README.md`.

| attack class | what the attacker does | what must happen |
|---|---|---|
| take the kill switch first | registers ctrl+alt+Escape (RegisterHotKey) before deskhand starts, so the person's press reaches it | the doctor says the chord does nothing and why, before and while deskhand serves (the tray app's consent dialog then names only the ways that work: unit-tested, Wine has no WebView2); the takeover is still granted; once the program lets go, deskhand registers the chord and the person's press ends the takeover |
"""

from __future__ import annotations

import json
import subprocess

import pytest

from daemon import Daemon
from desktop.windows import WindowsDesktop, start, windows_binary
from xhelpers import poll, scratch_dir

WATTACK = r"C:\deskhand-tests\wattack.exe"


@pytest.fixture(scope="module")
def win():
    desktop = start("1280x800")
    yield desktop
    desktop.stop()


def kill_switch_probe(win: WindowsDesktop) -> dict:
    """The `kill switch` probe of `deskhand doctor --json`."""
    out = subprocess.run(["wine", str(windows_binary("deskhand")), "doctor", "--json"],
                         env=win.env(), capture_output=True, text=True, timeout=60)
    probes = {p["label"]: p for p in json.loads(out.stdout)["probes"]}
    assert "kill switch" in probes, sorted(probes)
    return probes["kill switch"]


def test_a_chord_another_program_holds_is_said_to_do_nothing_until_it_lets_go(win):
    attacker = subprocess.Popen(["wine", WATTACK, "hotkey", "600"], env=win.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    d = None
    try:
        said = attacker.stdout.readline()
        assert "holds ctrl+alt+Escape" in said, said
        # Before deskhand serves: Windows would not give it the chord.
        probe = kill_switch_probe(win)
        assert probe["status"] != "ok", probe
        assert "ctrl+alt+Escape does nothing" in probe["message"], probe
        assert "another program holds it" in probe["message"], probe
        consent = scratch_dir("win-kill-consent-") + "/consent.json"
        with open(consent, "w") as f:
            f.write('{"input": true}')
        d = Daemon("--consent", consent, env=win.env(),
                   command=["wine", str(windows_binary("deskhand")), "serve"])
        # While it serves: the running deskhand says its chord does nothing.
        probe = kill_switch_probe(win)
        assert probe["status"] != "ok", probe
        assert "does nothing: another program holds ctrl+alt+Escape" in probe["message"], probe
        assert "the running deskhand says" in probe["message"], probe
        assert "Stop all agents" in probe["message"], probe
        # The program lets go: deskhand takes the chord (asked for again
        # every 2 s) and the person's press ends the takeover.
        attacker.kill()
        attacker.wait(10)
        poll(lambda: kill_switch_probe(win)["status"] == "ok", timeout=30,
             what="the running deskhand holding the chord once the program let go")
        assert "ctrl+alt+Escape stops every agent" in kill_switch_probe(win)["message"]
        c = d.client()
        try:
            c.take_over()
            c.act("mouse_move", coordinate=[700, 500])
            win.person.key("ctrl+alt+Escape")
            state = c.pushed_state()
            while state.get("on"):
                state = c.pushed_state()  # a paused state may come first
            assert state["reason"] == "kill_switch", state
        finally:
            c.close()
    finally:
        if attacker.poll() is None:
            attacker.kill()
        if d is not None:
            d.kill()
