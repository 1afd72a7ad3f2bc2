"""deskhand.exe on a Windows desktop of the person's own that is not
named `Default` (as `CreateDesktop` or a desktop manager makes one; here a
Wine desktop named `Work`): its input goes there, and the doctor says so.
Only the secure desktop, or another desktop than deskhand's, refuses input
(issue 47). A file of its own: one engine serves a display at a time, and
test_windows_backend.py keeps one running on the default desktop."""

from __future__ import annotations

import json
import subprocess

import pytest

from daemon import Daemon
from desktop.windows import start, windows_binary
from xhelpers import scratch_dir


@pytest.fixture(scope="module")
def win():
    desktop = start("1280x800")
    yield desktop
    desktop.stop()


def test_input_works_on_a_desktop_not_named_default(win):
    """deskhand on a desktop of the person's own (here a Wine desktop
    named Work, as `CreateDesktop` makes one): its input goes there."""
    exe = str(windows_binary("deskhand"))

    def on(desktop: str) -> list[str]:
        # A desktop of its own for each program: for a desktop already
        # open, explorer hands the program over and returns at once.
        return ["wine", "explorer", f"/desktop={desktop},1280x800", exe]

    doctor = subprocess.run([*on("Notes"), "doctor", "--json"], env=win.env(),
                            capture_output=True, text=True, timeout=60)
    probes = {p["label"]: p for p in json.loads(doctor.stdout)["probes"]}
    assert probes["input desktop"]["status"] == "ok", probes["input desktop"]
    assert probes["input desktop"]["message"].startswith("Notes:"), probes["input desktop"]
    consent = scratch_dir("win-desktop-consent-") + "/consent.json"
    with open(consent, "w") as f:
        f.write('{"input": true}')
    d = Daemon("--consent", consent, env=win.env(), command=[*on("Work"), "serve"])
    c = d.client()
    try:
        c.take_over()
        c.act("mouse_move", coordinate=[321, 234])
        pos = c.call("CURSOR_POSITION_REQUEST", {}, expect="CURSOR_POSITION_RESPONSE")
        assert (pos["x"], pos["y"]) == (321, 234), pos
        c.take_over(False)
    finally:
        c.close()
        d.kill()
