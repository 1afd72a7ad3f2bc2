"""Takeover and hand-back on a real X desktop: the indicator (mapped, on
top, click-through, never in screenshots), the person's pointer and keys
pausing deskhand mid-action, Continue, the host's resume on the control
pipe, and the kill switch. xdotool plays the person."""

from __future__ import annotations

import os
import time

import pytest

from daemon import Daemon, ErrorReply
from desktop import CONTINUE_Y, attach, start, stop_button
from imaging import decode_png
from xhelpers import REPO, App, XTerm, map_state, overlay_window, poll, require, run, unique_title

FIXTURES = REPO / "tests" / "fixtures"


def no_keys_or_buttons_held(display: str) -> None:
    assert not any(attach(display).held_keys().values()), attach(display).held_keys()
    assert not any(attach(display).held_buttons().values()), attach(display).held_buttons()


def test_indicator_is_mapped_on_top_click_through_and_goes_at_the_end(daemon, client, display,
                                                                      apps, tmp_path):
    require("wish", "xwininfo")
    assert client.takeover_state == {"on": True, "indicator": True, "paused": False}
    log = tmp_path / "clicks.txt"
    title = unique_title("deskhand-clicklog")
    app = App(display, ["wish", str(FIXTURES / "clicklog.tcl"), str(log), title], title)
    apps.append(app)
    wid, above = overlay_window(display)
    assert map_state(display, wid) == "IsViewable"
    visible_above = [w for w in above if map_state(display, w) == "IsViewable"]
    assert not visible_above, f"windows over the overlay: {visible_above}"
    # The person clicks on the left frame strip: the app below gets it.
    r = app.rect()
    x, y = r.x + 2, r.y + r.h // 2
    assert x < 6, f"the app does not reach under the frame: {r}"
    attach(display).person.click(x, y)
    poll(lambda: log.exists() and log.read_text().strip() == f"{x} {y}", timeout=5,
         what="the click on the frame to reach the window below")
    state = client.take_over(False)["payload"]
    assert state["on"] is False and state["reason"] == "ended"
    assert map_state(display, wid) == "IsUnMapped"


def test_screenshots_never_show_the_indicator(client, display, apps):
    require("import", "xsetroot")
    run(display, "xsetroot", "-solid", "#3a5a7a")
    apps.append(XTerm(display, cols=30, rows=8, pos="+0+0", bg="#10a010"))
    client.take_over(False)
    without = decode_png(client.screenshot(format="png")["image"])
    assert client.take_over(True)["payload"]["indicator"] is True
    assert attach(display).pixel(0, 0) == (224, 27, 36), "the frame is on screen"
    during = decode_png(client.screenshot(format="png")["image"])
    assert during.pixel(0, 0) != (224, 27, 36)
    assert during.rows == without.rows, "the screenshot differs from one without takeover"


def test_screenshots_leave_out_the_indicator_after_a_window_moves_under_it(client, display,
                                                                          apps):
    # The first screenshot during the takeover remembers the windows
    # beneath the frame; the second must notice that one moved under it.
    run(display, "xsetroot", "-solid", "#3a5a7a")
    term = XTerm(display, cols=30, rows=8, pos="+300+300", bg="#a01010")
    apps.append(term)
    assert client.take_over(True)["payload"]["indicator"] is True
    decode_png(client.screenshot(format="png")["image"])
    run(display, "xdotool", "windowmove", term.wid, "0", "0")
    poll(lambda: term.rect().x < 20 and term.rect().y < 40, what="the xterm at the corner")
    time.sleep(0.3)
    during = decode_png(client.screenshot(format="png")["image"])
    client.take_over(False)
    without = decode_png(client.screenshot(format="png")["image"])
    r = term.rect()
    assert r.x < 6, "the xterm reaches under the frame's left edge"
    assert without.pixel(r.x + r.w - 4, r.y + r.h - 4) == (160, 16, 16)
    assert during.rows == without.rows, "the frame or a stale piece is in the screenshot"


def test_the_person_moving_the_pointer_stops_typing(client, display, apps, tmp_path):
    out = tmp_path / "typed.txt"
    term = XTerm(display, command=["bash", "-c", f"stty -icanon -echo; exec cat > {out}"])
    apps.append(term)
    client.act("left_click", coordinate=list(term.rect().center()))
    # Long enough to be under way when the person moves (200 characters
    # take a few milliseconds).
    text = "".join(chr(ord("a") + i % 26) for i in range(40000))
    mid = client.send("INPUT_ACTION", {"action": "type", "text": text})
    poll(lambda: out.exists() and out.stat().st_size > 20, timeout=10,
         what="typing to start")
    attach(display).person.move(1100, 700)
    reply = client.reply_to(mid, timeout=30)
    assert reply["type"] == "ERROR", reply
    p = reply["payload"]
    assert p["code"] == "USER_TOOK_OVER", p
    assert p["details"]["effect"] == "stopped"
    assert p["details"]["paused_reason"] == "pointer_moved"
    typed = p["details"]["typed_characters"]
    assert 0 < typed < 40000, typed
    poll(lambda: out.stat().st_size == typed, timeout=10,
         what=f"xterm to have received exactly {typed} characters")
    time.sleep(0.5)
    assert out.read_text() == text[:typed], "what xterm got is not what was reported"
    no_keys_or_buttons_held(display)
    assert client.pushed_state()["paused"] is True


def test_the_persons_move_right_before_deskhands_is_kept(client, display):
    """The person moves the pointer just before the agent's move arrives
    (before the watcher's next look, as a rule): the move is refused,
    nothing of it happens, and the pointer stays where the person put it."""
    client.act("mouse_move", coordinate=[100, 100])
    attach(display).person.move(50, 750)
    reply = client.request("INPUT_ACTION", {"action": "left_click", "coordinate": [600, 400]})
    assert reply["type"] == "ERROR", reply
    p = reply["payload"]
    assert (p["code"], p["details"]["effect"], p["details"]["paused_reason"]) == \
        ("USER_TOOK_OVER", "refused", "pointer_moved"), p
    time.sleep(0.1)
    assert attach(display).pointer() == (50, 750), "deskhand moved the pointer away from the person"
    no_keys_or_buttons_held(display)
    assert client.pushed_state()["paused"] is True


def test_an_unlogged_xtest_key_pauses_and_acts_are_refused_until_continue(client, display):
    time.sleep(0.3)
    attach(display).person.key("shift")
    state = client.pushed_state()
    assert state == {"on": True, "indicator": True, "paused": True,
                     "paused_reason": "key_pressed"}
    before = attach(display).pointer()
    with pytest.raises(ErrorReply) as refused:
        client.act("left_click", coordinate=[200, 200])
    d = refused.value.msg["payload"]["details"]
    assert (d["effect"], d["paused_reason"]) == ("refused", "key_pressed")
    assert attach(display).pointer() == before, "a refused click moved the pointer"
    shot = decode_png(client.screenshot(format="png")["image"])
    assert shot.pixel(640, CONTINUE_Y) != (38, 122, 52), "Continue is in the screenshot"

    # A synthetic click sent to the overlay window does not resume.
    wid, _ = overlay_window(display)
    attach(display).person.move(640, CONTINUE_Y)
    run(display, "xdotool", "click", "--window", wid, "1")
    time.sleep(0.5)
    assert client.request("CURSOR_POSITION_REQUEST")["type"] == "CURSOR_POSITION_RESPONSE"
    assert not [e for e in client.events if e.get("type") == "TAKEOVER_STATE"], client.events

    attach(display).person.real_click(640, CONTINUE_Y)  # the person's real click on Continue
    assert client.pushed_state()["paused"] is False
    client.act("mouse_move", coordinate=[300, 300])
    assert attach(display).pointer() == (300, 300)


def test_the_kill_switch_ends_the_takeover_and_releases_everything(client, display):
    client.act("mouse_down", coordinate=[700, 500], button="left")
    assert any(attach(display).held_buttons().values())
    attach(display).person.key("ctrl+alt+Escape")
    state = client.pushed_state()
    while state.get("on"):
        state = client.pushed_state()  # a paused state may come first
    assert state["reason"] == "kill_switch", state
    poll(lambda: not any(attach(display).held_buttons().values()), timeout=5,
         what="the held button to be released")
    no_keys_or_buttons_held(display)
    wid, _ = overlay_window(display)
    assert map_state(display, wid) == "IsUnMapped"


def test_stop_agents_on_the_paused_frame_ends_the_takeover_until_the_persons_continue(
        daemon, client, display):
    client.act("mouse_down", coordinate=[700, 500], button="left")
    time.sleep(0.3)
    attach(display).person.key("shift")  # the person's key: paused
    assert client.pushed_state()["paused"] is True
    x, y, w, h = stop_button(1280)
    poll(lambda: attach(display).pixel(x + 2, y + 2) == (0x20, 0x20, 0x20), timeout=5,
         what="the paused frame to show Stop agents")
    attach(display).person.real_click(x + w // 2, y + h // 2)  # the person's click on Stop
    state = client.pushed_state()
    assert (state["on"], state["reason"]) == (False, "kill_switch"), state
    no_keys_or_buttons_held(display)
    poll(lambda: map_state(display, overlay_window(display)[0]) == "IsUnMapped", timeout=5,
         what="the frame to go")
    # Agents stay stopped: a new takeover comes up paused until Continue.
    other = daemon.client(takeover=False)
    try:
        again = other.take_over()["payload"]
        assert (again["paused"], again["paused_reason"]) == (True, "kill_switch"), again
    finally:
        other.close()


def test_the_host_resumes_on_the_control_pipe():
    d = Daemon("--virtual=800x600", control=True)
    try:
        c = d.client()
        session = c.hello["payload"]["session_id"]
        time.sleep(0.3)
        attach(d.display).person.move(700, 500)
        assert c.pushed_state()["paused_reason"] == "pointer_moved"
        paused = d.next_event()
        assert paused["event"] == "takeover.paused", paused
        assert (paused["session"], paused["reason"]) == (session, "pointer_moved")
        d.control({"method": "takeover.resume", "params": {"session": session}})
        events = [d.next_event(), d.next_event()]
        ack = next(e for e in events if e["event"] == "ack")
        assert ack == {"event": "ack", "method": "takeover.resume", "resumed": [session]}
        resumed = next(e for e in events if e["event"] == "takeover.resumed")
        assert (resumed["session"], resumed["by"]) == (session, "host")
        assert c.pushed_state()["paused"] is False
        c.act("mouse_move", coordinate=[10, 10])
        d.control({"method": "kill"})
        assert d.next_event() == {"event": "ack", "method": "kill"}
        assert c.pushed_state()["reason"] == "kill_switch"
        c.close()
    finally:
        assert d.terminate() == 0


def test_input_held_by_a_killed_daemon_is_released_at_the_next_start(tmp_path):
    """SIGKILL leaves nothing to release anything; the next start on the
    same display reads the persisted ledger and releases it."""
    import json
    xvfb = start("800x600")
    consent = tmp_path / "consent.json"
    consent.write_text(json.dumps({"input": True}))
    state = {"XDG_STATE_HOME": str(tmp_path / "state")}
    try:
        first = Daemon("--display", xvfb.name, "--consent", str(consent), env=state)
        c = first.client()
        c.act("mouse_down", coordinate=[100, 100], button="left")
        c.act("hold_key", key="shift", duration_ms=10)  # pressed and released: not left held
        assert any(attach(xvfb.name).held_buttons().values())
        first.kill()
        assert any(attach(xvfb.name).held_buttons().values()), "the button is still down"
        second = Daemon("--display", xvfb.name, "--consent", str(consent), env=state)
        try:
            poll(lambda: not any(attach(xvfb.name).held_buttons().values()), timeout=5,
                 what="the next start to release the button")
            audit = [json.loads(line) for line in second.audit_log.read_text().splitlines()]
            released = [r for r in audit if r["op"] == "held_input.released"]
            assert released and released[0]["target"] == {"count": 1}, audit
        finally:
            assert second.terminate() == 0
    finally:
        xvfb.stop()


def test_the_person_moving_the_pointer_stops_a_glide(client, display):
    client.act("mouse_move", coordinate=[100, 100])
    mid = client.send("INPUT_ACTION", {"action": "mouse_move", "coordinate": [1100, 700],
                                       "duration_ms": 2000})
    time.sleep(0.4)
    attach(display).person.move(50, 750)
    reply = client.reply_to(mid, timeout=10)
    assert reply["type"] == "ERROR", reply
    d = reply["payload"]["details"]
    assert (d["effect"], d["paused_reason"]) == ("stopped", "pointer_moved"), d
    time.sleep(0.1)
    assert attach(display).pointer() == (50, 750), "deskhand went on moving after the person took over"


def test_continue_right_after_deskhands_own_click_does_not_resume(client, display):
    client.act("left_click", coordinate=[900, 600])
    time.sleep(0.2)  # past the window in which synthetic keys count as deskhand's
    attach(display).person.key("shift")  # the person
    assert client.pushed_state()["paused"] is True
    attach(display).person.click(640, CONTINUE_Y)
    time.sleep(0.3)
    assert client.request("CURSOR_POSITION_REQUEST")["type"] == "CURSOR_POSITION_RESPONSE"
    assert not [e for e in client.events if e.get("type") == "TAKEOVER_STATE"], \
        "resumed by a click within 1.5 s of deskhand's own"
    time.sleep(1.5)
    attach(display).person.real_click(640, CONTINUE_Y)
    assert client.pushed_state()["paused"] is False


def overlay_pids(daemon) -> list[int]:
    kids = [pid for pid in daemon.descendants()
            if "deskhand-overlay" in open(f"/proc/{pid}/cmdline", "rb").read().decode(
                "utf-8", "replace")]
    assert kids, "no overlay process"
    return kids


def wakeups(pid: int) -> int:
    """How many times the process's threads went to sleep and were woken."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/status") as f:
            total += sum(int(line.split()[1]) for line in f
                         if line.startswith(("voluntary_ctxt_switches",
                                             "nonvoluntary_ctxt_switches")))
    return total


def test_the_overlay_sleeps_while_the_pointer_moves(daemon, client):
    """The indicator needs only its own windows' events: pointer motion
    elsewhere (deskhand's, or the person's) must not wake it each time."""
    (overlay,) = overlay_pids(daemon)
    time.sleep(0.3)  # let it settle after showing
    before = wakeups(overlay)
    moves = 200
    for i in range(moves):
        client.act("mouse_move", coordinate=[100 + i % 300, 200 + i % 150])
    woken = wakeups(overlay) - before
    assert woken < moves // 10, f"the overlay woke {woken} times for {moves} pointer moves"


def test_killing_the_overlay_ends_the_takeover(daemon, client):
    kids = overlay_pids(daemon)
    for pid in kids:
        os.kill(pid, 9)
    state = client.pushed_state()
    assert (state["on"], state["reason"]) == (False, "indicator_lost"), state
    with pytest.raises(ErrorReply) as refused:
        client.act("mouse_move", coordinate=[10, 10])
    assert refused.value.msg["payload"]["details"]["needed"] == "takeover"
    # A new takeover starts a new overlay.
    assert client.take_over()["payload"]["indicator"] is True
