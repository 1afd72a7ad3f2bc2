"""The computer endpoints on the real binary and a virtual desktop with
xterm: recorded Anthropic and OpenAI action sequences replayed (the typed
command runs and its file appears), zoom returns the crop's size, and a
batch failing at action 2 of 4 stops there with a screenshot."""

from __future__ import annotations

import base64
import time

import pytest

from desktop import attach
from computer_http import (Computer, data_url_png, fixture, png_size, tool_result_image,
                           tool_result_text)
from xhelpers import XTerm, poll

SHELL = ["env", "PS1=$ ", "bash", "--norc", "--noprofile"]
HALF = "?max_width=640&max_height=400"  # the 1280x800 desktop at scale 0.5


@pytest.fixture
def computer(daemon):
    c = Computer(daemon)
    yield c
    c.end()


def test_anthropic_tool_definition_matches_its_frames(computer):
    d = computer.get("/v1/computer/anthropic/tool?version=computer_20251124").json()
    assert (d["type"], d["name"], d["enable_zoom"]) == ("computer_20251124", "computer", True)
    assert (d["display_width_px"], d["display_height_px"]) == (1280, 800)
    half = computer.get("/v1/computer/anthropic/tool?version=computer_20250124&" + HALF[1:]).json()
    assert (half["display_width_px"], half["display_height_px"]) == (640, 400)
    assert "enable_zoom" not in half


def test_recorded_anthropic_sequence_runs_the_typed_command(computer, display, apps, tmp_path):
    out = tmp_path / "anthropic.txt"
    term = XTerm(display, command=SHELL, cwd=str(tmp_path))
    apps.append(term)
    cx, cy = term.rect().center()
    blocks = fixture("anthropic_xterm.json", x=cx // 2, y=cy // 2, out=str(out))
    results = [computer.anthropic(b, HALF) for b in blocks]
    for b, r in zip(blocks, results):
        assert r["tool_use_id"] == b["id"]
        assert not r.get("is_error"), (b, tool_result_text(r))
    poll(lambda: out.exists() and out.read_text() == "deskhand-anthropic\n", timeout=10,
         what=f"{out} to contain the typed text")
    assert png_size(tool_result_image(results[-1])) == (640, 400)
    px, py = attach(display).pointer()
    assert abs(px - cx) <= 2 and abs(py - cy) <= 2, "the click landed through the frame"


def test_a_loop_that_sends_no_session_header_runs_the_typed_command(daemon, display, apps,
                                                                    tmp_path):
    """A client written from Anthropic's docs knows nothing of deskhand's
    session header: its screenshot, click and typing still go to one
    session, its token's default one."""
    loop = Computer(daemon, default=True)
    out = tmp_path / "default.txt"
    term = XTerm(display, command=SHELL, cwd=str(tmp_path))
    apps.append(term)
    cx, cy = term.rect().center()
    blocks = fixture("anthropic_xterm.json", x=cx // 2, y=cy // 2, out=str(out))
    try:
        sessions = set()
        for b in blocks:
            r = loop.anthropic(b, HALF)
            assert not r.get("is_error"), (b, tool_result_text(r))
            sessions.add(loop.session)
        poll(lambda: out.exists() and out.read_text() == "deskhand-anthropic\n", timeout=10,
             what=f"{out} to contain the typed text")
        assert len(sessions) == 1, f"the answers named several sessions: {sessions}"
    finally:
        loop.end()


def test_zoom_returns_the_crop_at_full_detail(computer):
    computer.anthropic({"type": "tool_use", "id": "z0", "name": "computer",
                        "input": {"action": "screenshot"}}, HALF)
    r = computer.anthropic({"type": "tool_use", "id": "z1", "name": "computer",
                            "input": {"action": "zoom", "region": [0, 0, 200, 100]}}, HALF)
    assert not r.get("is_error"), tool_result_text(r)
    assert png_size(tool_result_image(r)) == (400, 200), "200x100 frame pixels at scale 0.5"
    # Later coordinates still refer to the full frame.
    c = computer.anthropic({"type": "tool_use", "id": "z2", "name": "computer",
                            "input": {"action": "mouse_move", "coordinate": [600, 300]}}, HALF)
    assert not c.get("is_error"), tool_result_text(c)
    assert png_size(tool_result_image(c)) == (640, 400)


def test_recorded_openai_sequence_runs_the_typed_command(computer, display, apps, tmp_path):
    out = tmp_path / "openai.txt"
    term = XTerm(display, command=SHELL, cwd=str(tmp_path))
    apps.append(term)
    cx, cy = term.rect().center()
    # OpenAI's cap on 1280x800: a 768 px short edge, scale 0.96.
    calls = fixture("openai_xterm.json", x=int(cx * 0.96), y=int(cy * 0.96), out=str(out))
    for call in calls:
        a = computer.openai(call)
        assert a.status == 200, (a.status, a.body[:300])
        o = a.json()
        assert (o["type"], o["call_id"]) == ("computer_call_output", call["call_id"])
        assert png_size(data_url_png(o)) == (1228, 768)
        assert "acknowledged_safety_checks" not in o
    poll(lambda: out.exists() and out.read_text() == "deskhand-openai\n", timeout=10,
         what=f"{out} to contain the typed text")


def test_openai_safety_checks_are_refused_without_a_person(computer, tmp_path):
    computer.openai({"call_id": "s0", "action": {"type": "screenshot"}})
    out = tmp_path / "never.txt"
    a = computer.openai({"call_id": "s1", "actions": [
        {"type": "type", "text": f"touch {out}"}, {"type": "keypress", "keys": ["ENTER"]}],
        "pending_safety_checks": [{"id": "sc", "code": "sensitive_domain", "message": "?"}]})
    assert a.status == 422
    body = a.json()
    assert body["error"]["code"] == "approval_denied", "no person to ask: denied"
    assert png_size(data_url_png(body["computer_call_output"])) == (1228, 768)
    time.sleep(0.5)
    assert not out.exists()


def test_a_batch_failing_at_action_two_of_four_stops_there(computer, display, apps, tmp_path):
    out = tmp_path / "batch.txt"
    term = XTerm(display, command=SHELL, cwd=str(tmp_path))
    apps.append(term)
    cx, cy = term.rect().center()
    first = computer.actions([{"action_type": "screenshot"}])
    assert first["status"] == "success"
    assert first["action_result"]["screen_dimensions"] == {"width": 1280, "height": 800}
    r = computer.actions([
        {"action_type": "left_click", "x": cx, "y": cy},
        {"action_type": "mouse_move", "x": 99999, "y": 10},
        {"action_type": "type", "text": f"touch {out}"},
        {"action_type": "key", "key_name": "ENTER"},
    ])
    assert r["status"] == "error"
    assert r["error"]["failed_action_index"] == 1
    assert r["error"]["code"] == "desktop_coordinate_out_of_bounds"
    assert png_size(base64.b64decode(r["action_result"]["screenshot"])) == (1280, 800)
    assert attach(display).pointer() == (cx, cy), "action 1 ran"
    time.sleep(1.0)
    assert not out.exists(), "actions 3 and 4 were not executed"
    # The same session goes on: the command runs when sent on its own.
    ok = computer.actions([{"action_type": "type", "text": f"touch {out}"},
                           {"action_type": "key", "key_name": "ENTER"}])
    assert ok["status"] == "success", ok.get("error")
    poll(out.exists, timeout=10, what=f"{out} to be created")
