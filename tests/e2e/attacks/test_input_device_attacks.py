"""Attacks through the X server's input devices and the takeover frame
(issue 31): another program clicks Continue through the XTEST pointer of a
master it added, moves or shrinks the frame away while an agent acts, and
deskhand is killed mid-type. The catalogue is `tests/e2e/attacks/README.md`.

| attack class | what the attacker does | what must happen |
|---|---|---|
| Continue through a new master | `XIChangeHierarchy` adds a master, its XTEST pointer clicks Continue | nothing resumes; the daemon says it ignored the click |
| hide the frame | `xdotool windowmove` / `windowsize` on the overlay during a takeover | the next act is refused (BUSY, `frame`), the frame is put back, later acts work; a later takeover's frame is back too |
| hide the frame in place | an empty SHAPE bounding or clip region on the overlay, or `_NET_WM_WINDOW_OPACITY` 0 (a compositor honours it) | the next act is refused (BUSY, `frame`: `reshaped`, `faded`), the red frame is drawn again and the opacity gone; later acts work |
| keys left down by a crash | `kill -9` mid-type, or a key held on the XTEST keyboard at start | nothing held on the XTEST devices after the start; the person's own keyboard keeps its key |
"""

from __future__ import annotations

import json
import random
import re
import time

from daemon import Daemon, ErrorReply
from desktop import CONTINUE_Y, attach, start_dual
from typing_helpers import OwnDesktop, TermSink
from xhelpers import poll, run
from xlib import Display, device_ids, lib

WIDTH = 1280


def click_through_master(display: str, master: str, x: int, y: int) -> None:
    """The attacker: warps the pointer of master `master` to (x, y) and
    clicks there through that master's own XTEST pointer (a device that did
    not exist when deskhand started)."""
    ids = device_ids(display)
    with Display(display) as d:
        lib("Xi").XIWarpPointer(d.dpy, ids[f"{master} pointer"], 0, d.root(), 0, 0, 0, 0, x, y)
        d.sync()
        for press in (True, False):
            d.device_event(ids[f"{master} XTEST pointer"], button=1, press=press)


def device_key(display: str, device: str, keycode: int, press: bool) -> None:
    """A key of the device named `device` goes down or up (XTEST's device
    form: the X server makes it that device's own event)."""
    with Display(display) as d:
        d.device_event(device_ids(display)[device], keycode=keycode, press=press)


def refusals(daemon) -> int:
    """How many clicks on deskhand's UI the daemon refused as synthetic."""
    daemon.stderr_tail(1)  # flushes
    return daemon.stderr_path.read_text("utf-8", "replace").count(
        "ignoring a click no input device made")


def test_a_click_through_a_new_masters_xtest_pointer_does_not_resume(tmp_path):
    """Xorg (Xvfb adds no master: its XIChangeHierarchy fails)."""
    xorg = start_dual()
    consent = tmp_path / "consent.json"
    consent.write_text(json.dumps({"input": True}))
    daemon = Daemon("--display", xorg.name, "--consent", str(consent),
                    env={"XDG_STATE_HOME": str(tmp_path / "state")})
    display = xorg.name
    try:
        client = daemon.client()
        time.sleep(0.3)
        attach(display).person.move(700, 500)  # the person's hand
        assert client.pushed_state()["paused"] is True
        run(display, "xinput", "create-master", "intruder")
        poll(lambda: "intruder XTEST pointer" in device_ids(display), timeout=5,
             what="the new master's XTEST pointer")
        time.sleep(1.6)  # past the quiet time after deskhand's own clicks
        refused = refusals(daemon)
        click_through_master(display, "intruder", WIDTH // 2, CONTINUE_Y)
        # The overlay saw the click and deskhand refused it.
        poll(lambda: refusals(daemon) > refused, timeout=5, what="deskhand to refuse the click")
        assert client.request("CURSOR_POSITION_REQUEST")["type"] == "CURSOR_POSITION_RESPONSE"
        assert not [e for e in client.events if e.get("type") == "TAKEOVER_STATE"], \
            "resumed by a click through another master's XTEST pointer"
        msg = client.request("INPUT_ACTION", {"action": "mouse_move", "coordinate": [200, 200]})
        assert msg["type"] == "ERROR" and msg["payload"]["code"] == "USER_TOOK_OVER", msg
        client.close()
    finally:
        daemon.terminate()
        xorg.stop()


def overlay_windows(display: str) -> list[str]:
    out = run(display, "xdotool", "search", "--onlyvisible", "--classname", "deskhand-overlay",
              check=False)
    return out.split()


def geometry(display: str, wid: str) -> tuple[int, int, int, int]:
    out = run(display, "xwininfo", "-id", wid)
    num = {k: int(re.search(rf"{k}:\s+(-?\d+)", out).group(1))
           for k in ("Absolute upper-left X", "Absolute upper-left Y", "Width", "Height")}
    return tuple(num.values())


def refused_for_the_frame(client, display) -> dict:
    before = attach(display).pointer()
    try:
        client.act("mouse_move", coordinate=[321, 321])
    except ErrorReply as e:
        assert attach(display).pointer() == before, "a refused act moved the pointer"
        return e.msg["payload"]
    raise AssertionError("an act went through with the frame off screen")


def test_moving_or_shrinking_the_frame_refuses_input_and_puts_it_back(daemon, display):
    client = daemon.client()
    client.act("mouse_move", coordinate=[300, 300])
    (wid,) = poll(lambda: overlay_windows(display), timeout=5, what="the overlay window")
    assert geometry(display, wid) == (0, 0, WIDTH, 800)
    for attack, what in ((["windowmove", wid, "5000", "5000"], "moved"),
                         (["windowsize", wid, "1", "1"], "resized")):
        run(display, "xdotool", *attack)
        poll(lambda: geometry(display, wid) != (0, 0, WIDTH, 800), timeout=3,
             what="the attack to take effect")
        err = refused_for_the_frame(client, display)
        assert err["code"] == "BUSY" and err["details"] == {"frame": what}, err
        assert geometry(display, wid) == (0, 0, WIDTH, 800), "the frame was not put back"
        client.act("mouse_move", coordinate=[310 + len(what), 300])
        assert attach(display).pointer() == (310 + len(what), 300)
    # Moved while no act checks, between takeovers: the next one puts it back.
    run(display, "xdotool", "windowmove", wid, "5000", "5000")
    client.close()
    again = daemon.client()
    assert again.takeover_state["on"] is True, again.takeover_state
    (shown,) = poll(lambda: overlay_windows(display), timeout=5, what="the overlay window")
    assert geometry(display, shown) == (0, 0, WIDTH, 800), "a later takeover's frame is off screen"
    again.act("mouse_move", coordinate=[330, 330])
    assert attach(display).pointer() == (330, 330)
    again.close()


RED = (224, 27, 36)
SHAPE_BOUNDING, SHAPE_CLIP = 0, 1


def empty_shape(display: str, wid: str, kind: int) -> None:
    """The attacker: sets the overlay window's SHAPE region of `kind` to
    nothing (anyone may shape another client's window)."""
    with Display(display) as d:
        lib("Xext").XShapeCombineRectangles(d.dpy, int(wid, 0), kind, 0, 0, None, 0, 0, 0)
        d.sync()


def opacity(display: str, wid: str) -> str:
    return run(display, "xprop", "-id", wid, "_NET_WM_WINDOW_OPACITY")


def test_hiding_the_frame_in_place_refuses_input_and_draws_it_again(daemon, display):
    client = daemon.client()
    client.act("mouse_move", coordinate=[300, 300])
    (wid,) = poll(lambda: overlay_windows(display), timeout=5, what="the overlay window")
    assert attach(display).pixel(0, 0) == RED, "the frame is on screen"
    for kind in (SHAPE_BOUNDING, SHAPE_CLIP):
        empty_shape(display, wid, kind)
        poll(lambda: attach(display).pixel(0, 0) != RED, timeout=3,
             what="the emptied frame to vanish")
        err = refused_for_the_frame(client, display)
        assert err["code"] == "BUSY" and err["details"] == {"frame": "reshaped"}, err
        poll(lambda: attach(display).pixel(0, 0) == RED, timeout=3,
             what="the frame drawn again")
        client.act("mouse_move", coordinate=[310 + kind, 300])
        assert attach(display).pointer() == (310 + kind, 300)
    # No compositor runs here, so the fade itself shows nothing: what is
    # checked is that the act is refused and the property gone.
    run(display, "xprop", "-id", wid, "-f", "_NET_WM_WINDOW_OPACITY", "32c",
        "-set", "_NET_WM_WINDOW_OPACITY", "0")
    assert "= 0" in opacity(display, wid)
    err = refused_for_the_frame(client, display)
    assert err["code"] == "BUSY" and err["details"] == {"frame": "faded"}, err
    assert "not found" in opacity(display, wid), opacity(display, wid)
    client.act("mouse_move", coordinate=[340, 300])
    assert attach(display).pointer() == (340, 300)
    assert attach(display).pixel(0, 0) == RED
    client.close()


def xtest_held(display: str) -> list[int]:
    held = {**attach(display).held_keys(), **attach(display).held_buttons()}
    return [k for name, keys in held.items() if "XTEST" in name for k in keys]


def test_kill_9_mid_type_leaves_nothing_held_after_the_restart(tmp_path):
    desk = OwnDesktop(tmp_path)
    rng = random.Random(31)
    left_down = 0
    try:
        for trial in range(5):
            daemon = desk.start()
            client = daemon.client()
            sink = TermSink(desk.display, tmp_path, f"trial{trial}")
            client.act("left_click", coordinate=list(sink.term.rect().center()))
            # Capitals, AltGr characters and characters on no key: Shift_L,
            # ISO_Level3_Shift and remapped spare keycodes go down and up.
            text = "".join(rng.choice("AZ€ŁÆ§ĦŊЖЯ") for _ in range(3000))
            client.send("INPUT_ACTION", {"action": "type", "text": text})
            time.sleep(0.3 + rng.random() * 0.7)
            daemon.kill()
            left_down += bool(xtest_held(desk.display))
            sink.close()
            with desk.start().client():
                held = xtest_held(desk.display)
                assert not held, f"trial {trial}: {held} still down after the restart"
            desk.daemon.terminate()
        print(f"{left_down} of 5 kills left something down before the restart")
    finally:
        desk.stop()


def test_keys_on_the_xtest_devices_are_released_at_start_but_not_the_persons(tmp_path):
    """No ledger lists them: a crash left them. The person's own keyboard
    (Xvfb's) holds its key on."""
    desk = OwnDesktop(tmp_path)
    try:
        run(desk.display, "xdotool", "keydown", "shift", "mousedown", "3")
        device_key(desk.display, "Xvfb keyboard", 38, True)  # the person holds "a"
        held = {**attach(desk.display).held_keys(), **attach(desk.display).held_buttons()}
        assert held["Virtual core XTEST keyboard"] and held["Virtual core XTEST pointer"], held
        with desk.start().client():
            held = {**attach(desk.display).held_keys(), **attach(desk.display).held_buttons()}
            assert held["Virtual core XTEST keyboard"] == [], held
            assert held["Virtual core XTEST pointer"] == [], held
            assert held["Xvfb keyboard"] == [38], "the person's own key was released"
    finally:
        device_key(desk.display, "Xvfb keyboard", 38, False)
        desk.stop()
