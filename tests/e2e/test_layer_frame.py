"""The red frame on a Wayland compositor with the wlr layer shell (KDE
Plasma, sway and the other wlroots desktops): `deskhand-overlay` draws it
as layer surfaces (`DESKHAND_OVERLAY_SURFACE=layer-shell`), here on a
headless sway. Driven with the engine's own commands, read back from the
compositor's own screen copy (grim) and clicked with the compositor's
own pointer: the frame shows above a window, the rest of the screen
stays visible and takes clicks, only Continue and Stop answer, and the
overlay goes when it is told or when deskhand's end of its stdin closes,
and says so when the compositor goes away. And deskhand's doctor there
names the layer shell as the frame and says what hand-back lacks."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path

import pytest

from daemon import binary
from desktop import CONTINUE_Y, stop_button
from desktop.sway import Sway
from xhelpers import REPO, poll

RED = (0xE0, 0x1B, 0x24)
DIM_RED = (0x78, 0x28, 0x28)  # the frame while paused
BLUE = (0x33, 0x66, 0x99)
SCREEN = {"x": 0, "y": 0, "width": 1280, "height": 800}


class Overlay:
    """deskhand-overlay in the layer-shell mode, as the engine drives it."""

    def __init__(self, sway: Sway):
        program = sway.program(str(Path(binary()).parent / "deskhand-overlay"))
        self.proc = sway.spawn(program, env={"DESKHAND_OVERLAY_SURFACE": "layer-shell"},
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.events: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        assert self.event()["event"] == "ready"

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.events.put(json.loads(line))

    def send(self, **cmd) -> None:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    def event(self, timeout: float = 10) -> dict:
        return self.events.get(timeout=timeout)

    def quiet(self, seconds: float = 0.7) -> bool:
        """Nothing said for `seconds`."""
        try:
            said = self.events.get(timeout=seconds)
        except queue.Empty:
            return True
        raise AssertionError(f"the overlay said {said}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


@pytest.fixture()
def sway():
    s = Sway()
    yield s
    s.stop()


@pytest.fixture()
def overlay(sway):
    o = Overlay(sway)
    yield o
    o.close()


def start_form(sway: Sway) -> Path:
    """The GTK form (tests/fixtures/wayland_form.py) filling the screen
    under the frame: its Save button the bottom half. Answers the file
    Save writes."""
    saved = sway.runtime / "saved.txt"
    form = sway.spawn("/usr/bin/python3", str(REPO / "tests/fixtures/wayland_form.py"),
                      "--saved", str(saved), env={"GDK_BACKEND": "wayland"},
                      stdout=subprocess.PIPE, text=True)
    assert json.loads(form.stdout.readline()).get("ready"), "the form did not start"
    return saved


def test_the_frame_shows_above_a_window_and_leaves_the_rest_seen(sway, overlay):
    start_form(sway)
    overlay.send(cmd="show", monitors=[SCREEN], paused=False)
    shown = overlay.event()
    assert shown["event"] == "shown" and len(shown["windows"]) == 1, shown
    assert {"x": 0, "y": 0, "width": 1280, "height": 6} in shown["rects"], shown
    screen = poll(lambda: (s := sway.screen()).pixel(640, 2) == RED and s, timeout=5,
                  what="the red frame's top edge on screen")
    assert screen.pixel(2, 400) == RED and screen.pixel(1277, 400) == RED
    assert screen.pixel(640, 797) == RED, "above the window's Save button"
    assert screen.pixel(640, 400) != RED, "the middle is the window's"
    overlay.send(cmd="hide")
    assert overlay.event()["event"] == "hidden"
    poll(lambda: sway.screen().pixel(640, 2) != RED, timeout=5, what="the frame gone")


def test_a_click_on_the_frame_reaches_the_window_and_only_the_buttons_answer(sway, overlay):
    saved = start_form(sway)
    overlay.send(cmd="show", monitors=[SCREEN], paused=True)
    assert overlay.event()["event"] == "shown"
    poll(lambda: sway.screen().pixel(640, CONTINUE_Y) != BLUE, timeout=5,
         what="Continue on screen")
    # The frame's bottom edge lies over the form's Save button: the click
    # goes through to it, and the overlay says nothing.
    sway.click(640, 797)
    poll(saved.exists, timeout=5, what="Save clicked through the frame")
    overlay.quiet()
    sway.click(640, CONTINUE_Y)
    assert overlay.event()["event"] == "continue_clicked"
    x, y, w, h = stop_button(1280)
    sway.click(x + w // 2, y + h // 2)
    assert overlay.event()["event"] == "stop_clicked"
    overlay.send(cmd="resume")
    changed = overlay.event()
    assert changed == {"event": "changed", "paused": False, "rects": changed["rects"]}
    # Unpaused there is no button: a click there is the window's.
    sway.click(640, CONTINUE_Y)
    overlay.quiet()


def test_at_a_fractional_scale_the_frame_fits_the_output_and_its_buttons_answer():
    """An output at 150% (KDE's common laptop setting): 1920x1200 pixels
    are 1280x800 logical units. The engine gives the monitor in pixels;
    the frame must cover exactly the output (not spill past it, as a
    surface sized in pixels would), drawn at its pixels, and a click in
    logical units must land on the button drawn there."""
    sway = Sway("1920x1200", scale=1.5)
    overlay = None
    try:
        overlay = Overlay(sway)
        overlay.send(cmd="show", monitors=[{"x": 0, "y": 0, "width": 1920, "height": 1200}],
                     paused=True)
        assert overlay.event()["event"] == "shown"
        screen = poll(lambda: (s := sway.screen()).pixel(960, 2) == DIM_RED and s, timeout=5,
                      what="the paused frame's top edge on screen")
        assert (screen.width, screen.height) == (1920, 1200)
        # Every edge of the output, and only the edges.
        for x, y in ((2, 600), (1917, 600), (960, 1197), (1917, 1197)):
            assert screen.pixel(x, y) == DIM_RED, (x, y, screen.pixel(x, y))
        assert screen.pixel(8, 600) == BLUE, "the frame is 6 pixels wide"
        assert screen.pixel(960, 600) == BLUE, "the middle shows the desktop"
        assert screen.pixel(960, CONTINUE_Y) != BLUE, "Continue drawn at its pixels"
        x, y, w, h = stop_button(1920)
        sway.click(round(960 / 1.5), round(CONTINUE_Y / 1.5))
        assert overlay.event()["event"] == "continue_clicked"
        sway.click(round((x + w // 2) / 1.5), round((y + h // 2) / 1.5))
        assert overlay.event()["event"] == "stop_clicked"
        # Beside the buttons the click is not the frame's.
        sway.click(round(200 / 1.5), round(CONTINUE_Y / 1.5))
        overlay.quiet()
    finally:
        if overlay is not None:
            overlay.close()
        sway.stop()


def test_the_frame_fits_its_output_again_when_the_person_changes_its_scale():
    """The person sets the output from 100% to 150% while the frame shows
    (the monitor stays 1920x1200 pixels, now 1280x800 units): the frame
    fits the output again instead of spilling past it."""
    sway = Sway("1920x1200")
    overlay = None
    try:
        overlay = Overlay(sway)
        overlay.send(cmd="show", monitors=[{"x": 0, "y": 0, "width": 1920, "height": 1200}],
                     paused=False)
        assert overlay.event()["event"] == "shown"
        poll(lambda: sway.screen().pixel(1917, 600) == RED, timeout=5,
             what="the frame's right edge at 100%")
        sway.swaymsg("output", "HEADLESS-1", "scale", "1.5")
        sway.scale = 1.5

        def fits() -> bool:
            s = sway.screen()
            return (s.width, s.height) == (1920, 1200) and s.pixel(1917, 600) == RED \
                and s.pixel(960, 1197) == RED and s.pixel(8, 600) == BLUE

        poll(fits, timeout=5, what="the frame on the output's edges at 150%")
    finally:
        if overlay is not None:
            overlay.close()
        sway.stop()


def test_the_compositor_going_away_is_a_lost_frame(sway, overlay):
    overlay.send(cmd="show", monitors=[SCREEN], paused=False)
    assert overlay.event()["event"] == "shown"
    sway.stop()
    assert overlay.event() == {"event": "lost", "reason": "display_closed"}
    assert overlay.proc.wait(5) != 0


def test_the_overlay_ends_with_its_stdin(sway, overlay):
    overlay.send(cmd="show", monitors=[SCREEN], paused=False)
    assert overlay.event()["event"] == "shown"
    overlay.proc.stdin.close()
    assert overlay.proc.wait(5) == 0
    poll(lambda: sway.screen().pixel(640, 2) != RED, timeout=5, what="the frame gone")


def test_the_doctor_on_a_wlroots_desktop_names_the_layer_shell_and_its_missing_detector(sway):
    """deskhand's Wayland backend where there is no GNOME: the frame is the
    overlay's on the layer shell; sway 1.7 has no ext-idle-notify, so
    nothing can tell the person's input from deskhand's, and takeover is
    unavailable for that reason."""
    program = sway.program(binary())
    sway.program(str(Path(binary()).parent / "deskhand-overlay"))
    done = sway.spawn(program, "doctor", "--json", stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE, text=True)
    out, err = done.communicate(timeout=60)
    report = json.loads(out)
    assert report["session_type"] == "wayland", err[-800:]
    caps = {c["name"]: c for c in report["capabilities"]}
    assert caps["takeover_indicator"]["status"] == "available", caps["takeover_indicator"]
    assert caps["input_takeover"]["reason_code"] == "compositor_unsupported", caps["input_takeover"]
    probes = {p["label"]: p for p in report["probes"]}
    assert probes["layer shell"]["status"] == "ok", probes["layer shell"]
    assert "ext_idle_notifier_v1" in probes["hand-back"]["message"], probes["hand-back"]
    assert probes["hand-back"]["status"] != "ok"
