"""The person's say over the computer endpoints on the real binary: under
`--approval write` screenshots run unasked and an input batch waits for the
control pipe's answer; OpenAI safety checks are acknowledged only when the
person approves them; a consent file's `refuse_apps` keeps agents out of
terminals."""

from __future__ import annotations

import base64
import concurrent.futures
import json
import os
import pty
import time
from pathlib import Path

import pytest

from computer_http import Computer, data_url_png, png_size
from daemon import Daemon
from xhelpers import XTerm, poll, run

SHELL = ["env", "PS1=$ ", "bash", "--norc", "--noprofile"]


def _serve(*args: str) -> Daemon:
    return Daemon("--virtual=1280x800", *args, control=True)


@pytest.fixture
def asking():
    d = _serve("--approval", "write")
    yield d
    d.terminate()


def _asked(d: Daemon, send, answer) -> tuple[dict, object]:
    """Sends a batch (`send()`) on a thread, waits for the host's approval
    request and lets `answer(ask)` answer it on the control pipe; the ask
    and the batch's result."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(send)
        ask = d.next_event()
        assert ask["event"] == "approval.request", ask
        assert not pending.done(), "the batch waits for the answer"
        answer(ask)
        return ask, pending.result(timeout=30)


def _approve(d: Daemon, ask: dict) -> None:
    """The host approves `ask`, and deskhand acknowledges it."""
    d.control({"method": "approve", "params": {"id": ask["id"]}})
    assert d.next_event() == {"event": "ack", "method": "approve", "id": ask["id"],
                              "waiting": True}


def _typed_command(cx: int, cy: int, command: str) -> list:
    return [{"action_type": "left_click", "x": cx, "y": cy},
            {"action_type": "type", "text": command},
            {"action_type": "key", "key_name": "ENTER"}]


def test_under_write_input_waits_for_the_control_pipe(asking, apps, tmp_path):
    computer = Computer(asking)
    term = XTerm(asking.display, command=SHELL, cwd=str(tmp_path))
    apps.append(term)
    cx, cy = term.rect().center()
    first = computer.actions([{"action_type": "screenshot"}])
    assert first["status"] == "success", "a screenshot is not asked about"

    approved, denied = tmp_path / "approved.txt", tmp_path / "denied.txt"

    def look_then_approve(ask: dict) -> None:
        assert ask["needs"] == "input" and ask["actions"] == ["click", "type", "key"], ask
        assert ask["session"] == computer.session and ask["timeout_s"] == 60
        time.sleep(0.5)
        assert not approved.exists(), "nothing runs before the answer"
        _approve(asking, ask)

    _, r = _asked(asking, lambda: computer.actions(_typed_command(cx, cy, f"touch {approved}")),
                  look_then_approve)
    assert r["status"] == "success", r.get("error")
    poll(approved.exists, timeout=10, what=f"{approved} to be created")

    _, r = _asked(asking, lambda: computer.actions(_typed_command(cx, cy, f"touch {denied}")),
                  lambda ask: asking.control({"method": "deny", "params": {"id": ask["id"]}}))
    assert r["error"]["code"] == "approval_denied" and r["error"]["failed_action_index"] == 0
    assert png_size(base64.b64decode(r["action_result"]["screenshot"])) == (1280, 800)
    time.sleep(1.0)
    assert not denied.exists(), "a denied batch sent nothing"
    computer.end()


def test_a_garbage_control_line_is_skipped_and_the_next_answer_counts(asking, apps, tmp_path):
    """Bytes that are not UTF-8, a line that is not JSON: each is answered
    with an error event and logged by its length; the pipe reads on, and
    the host's approve that follows runs the batch."""
    computer = Computer(asking)
    term = XTerm(asking.display, command=SHELL, cwd=str(tmp_path))
    apps.append(term)
    cx, cy = term.rect().center()
    assert computer.actions([{"action_type": "screenshot"}])["status"] == "success"
    approved = tmp_path / "approved-after-garbage.txt"

    def garbage_then_approve(ask: dict) -> None:
        asking.control_line(b'\xff\xfe{"method": "approve", "secret-ish": "\xc3"}')
        assert asking.next_event() == {"event": "error", "message": "not UTF-8"}
        asking.control_line(b"{not json")
        assert asking.next_event() == {"event": "error", "message": "not JSON"}
        _approve(asking, ask)

    _, r = _asked(asking, lambda: computer.actions(_typed_command(cx, cy, f"touch {approved}")),
                  garbage_then_approve)
    assert r["status"] == "success", r.get("error")
    poll(approved.exists, timeout=10, what=f"{approved} to be created")
    log = asking.stderr_tail(200)
    assert "a control line is not UTF-8: skipped it bytes=" in log, log
    assert "secret-ish" not in log, "a skipped line's content is not logged"
    computer.end()


def test_a_terminal_on_stdin_answers_nothing(apps, tmp_path):
    """`deskhand serve` in a terminal an agent could type into: nobody is
    asked, so an input batch under `--approval write` is denied at once and
    a line typed into the terminal approves nothing."""
    person, terminal = pty.openpty()
    d = Daemon("--virtual=1280x800", "--approval", "write", stdin=terminal)
    try:
        computer = Computer(d)
        term = XTerm(d.display, command=SHELL, cwd=str(tmp_path))
        apps.append(term)
        cx, cy = term.rect().center()
        typed = tmp_path / "typed.txt"
        os.write(person, b'{"method": "approve", "params": {"id": "approval-1"}}\n')
        started = time.monotonic()
        r = computer.actions(_typed_command(cx, cy, f"touch {typed}"))
        assert r["error"]["code"] == "approval_denied", r
        assert "no person can be asked" in r["error"]["message"], r["error"]
        assert time.monotonic() - started < 20, "denied at once, not after the 60 s wait"
        time.sleep(1.0)
        assert not typed.exists(), "nothing was sent"
        computer.end()
    finally:
        d.terminate()
        os.close(person)
        os.close(terminal)


def test_openai_safety_checks_run_once_the_person_approves(apps, tmp_path):
    d = _serve()
    try:
        computer = Computer(d)
        term = XTerm(d.display, command=SHELL, cwd=str(tmp_path))
        apps.append(term)
        cx, cy = (int(v * 0.96) for v in term.rect().center())
        assert computer.openai({"call_id": "c0", "action": {"type": "screenshot"}}).status == 200
        out = tmp_path / "checked.txt"
        checks = [{"id": "sc_1", "code": "sensitive_domain", "message": "The page is a bank."}]
        call = {"type": "computer_call", "call_id": "c1", "pending_safety_checks": checks,
                "actions": [{"type": "click", "button": "left", "x": cx, "y": cy},
                            {"type": "type", "text": f"touch {out}"},
                            {"type": "keypress", "keys": ["ENTER"]}]}
        ask, a = _asked(d, lambda: computer.openai(call), lambda ask: _approve(d, ask))
        assert ask["safety_checks"] == checks, ask
        assert a.status == 200, a.body[:300]
        o = a.json()
        assert o["acknowledged_safety_checks"] == checks
        assert png_size(data_url_png(o)) == (1228, 768)
        poll(out.exists, timeout=10, what=f"{out} to be created")
        computer.end()
    finally:
        d.terminate()


def _click_and_type_refused(computer: Computer, term: XTerm, tmp_path) -> Path:
    """Clicks into `term` and types a command: refused as a terminal at the
    first action. Returns the file the command would have made."""
    cx, cy = term.rect().center()
    computer.actions([{"action_type": "screenshot"}])
    out = tmp_path / "refused.txt"
    r = computer.actions(_typed_command(cx, cy, f"touch {out}"))
    assert r["error"]["code"] == "permission_denied", r["error"]
    assert "terminals" in r["error"]["message"], r["error"]
    assert r["error"]["failed_action_index"] == 0
    return out


def test_refused_terminals_get_no_input(apps, tmp_path):
    consent = tmp_path / "consent.json"
    consent.write_text(json.dumps({"input": True, "refuse_apps": ["terminals"]}))
    d = _serve("--consent", str(consent))
    try:
        computer = Computer(d)
        term = XTerm(d.display, command=SHELL, cwd=str(tmp_path))
        apps.append(term)
        out = _click_and_type_refused(computer, term, tmp_path)
        time.sleep(1.0)
        assert not out.exists(), "nothing reached the terminal"
        computer.end()
    finally:
        d.terminate()


def test_a_terminal_under_another_class_gets_no_input(apps, tmp_path):
    """`xterm -class Notes -name notes` is still a terminal: its process
    runs xterm, whose entry is a TerminalEmulator. Its process is the one
    the X server knows, not the one `_NET_WM_PID` claims (any client may
    set it: here it names this test's own Python)."""
    consent = tmp_path / "consent.json"
    consent.write_text(json.dumps({"input": True, "refuse_apps": ["terminals"]}))
    d = _serve("--consent", str(consent))
    try:
        computer = Computer(d)
        term = XTerm(d.display, command=SHELL, cwd=str(tmp_path),
                     extra=["-class", "Notes", "-name", "notes"])
        apps.append(term)
        wm_class = run(d.display, "xprop", "-id", term.wid, "WM_CLASS")
        assert '"notes", "Notes"' in wm_class, wm_class
        run(d.display, "xprop", "-id", term.wid, "-f", "_NET_WM_PID", "32c",
            "-set", "_NET_WM_PID", str(os.getpid()))
        assert f"= {os.getpid()}" in run(d.display, "xprop", "-id", term.wid, "_NET_WM_PID")
        out = _click_and_type_refused(computer, term, tmp_path)
        # Focused by the person: typing into it is refused as well.
        run(d.display, "xdotool", "windowfocus", "--sync", term.wid)
        r = computer.actions([{"action_type": "type", "text": f"touch {out}"},
                              {"action_type": "key", "key_name": "ENTER"}])
        assert r["error"]["code"] == "permission_denied", r["error"]
        assert r["error"]["failed_action_index"] == 0
        time.sleep(1.0)
        assert not out.exists(), "nothing reached the terminal"
        computer.end()
    finally:
        d.terminate()
