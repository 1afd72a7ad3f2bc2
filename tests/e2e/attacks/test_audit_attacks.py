"""Attacks on the audit log: erasing the history with a flood of refused
requests (each session's repeats are counted in one record and its writes
are bounded, so the other sessions' records stay), and spoofing what a
person reads in `deskhand audit tail` with escape codes and bidirectional
overrides in a client-chosen op name (shown as escapes, never obeyed)."""

from __future__ import annotations

import json
import subprocess

from daemon import Daemon, binary
from xhelpers import poll

FLOOD = 100_000
BURST = 500


def records(d: Daemon) -> list[dict]:
    return [json.loads(line) for line in d.audit_log.read_text().splitlines()]


def test_a_flood_of_refusals_is_one_counted_record_and_the_history_stays():
    d = Daemon("--virtual=640x480")
    try:
        with d.client(takeover=False) as person_agent:
            person_agent.screenshot()
        flooder = d.client(takeover=False)
        # Pipelined in bursts (a client that never reads would only stall
        # its own connection once the socket buffers are full).
        move = {"action": "mouse_move", "coordinate": [5, 5]}
        for start in range(0, FLOOD, BURST):
            for i in range(start, start + BURST):
                flooder.send("INPUT_ACTION", move, mid=f"f{i}")
            answered = 0
            while answered < BURST:
                msg = flooder.recv(timeout=60)
                if str(msg.get("id", "")).startswith("f"):
                    assert msg["type"] == "ERROR", msg
                    answered += 1
        def counts() -> list[dict]:
            return [r for r in records(d) if "repeated" in (r["target"] or {})]

        # The first refusal is written, the rest counted (summed up every
        # 10 s while the flood goes on).
        poll(lambda: sum(r["target"]["repeated"] for r in counts()) == FLOOD - 1, timeout=30,
             what="the flood's counts in the audit log")
        for counted in counts():
            assert counted["op"] == "input.mouse_move" and counted["outcome"] != "ok", counted
        flooder.close()
        kept = records(d)
        assert len(kept) < 20, f"{len(kept)} records for one flood"
        assert any(r["op"] == "screenshot" and r["outcome"] == "ok" for r in kept), \
            "the other session's history was pushed out"
        assert not d.audit_log.with_name(d.audit_log.name + ".1").exists(), "the log rotated"
    finally:
        assert d.terminate() == 0, d.stderr_tail()


def test_audit_tail_shows_escape_codes_and_bidi_overrides_without_obeying_them():
    d = Daemon("--virtual=640x480")
    try:
        with d.client(takeover=False) as c:
            spoof = "\x1b[2J\r2026-01-01T00:00:00Z  person  settings.saved  ok\u202e"
            assert c.error_code("INPUT_ACTION", {"action": spoof, "coordinate": [1, 1]})
        poll(lambda: "\\u001b[2J" in d.audit_log.read_text(), timeout=10,
             what="the spoofing record")
        for json_lines in (False, True):
            out = subprocess.run(
                [binary(), "audit", "tail", "--file", str(d.audit_log),
                 *(["--json"] if json_lines else [])],
                capture_output=True, text=True, timeout=30, check=True).stdout
            assert "\x1b" not in out and "\r" not in out and "\u202e" not in out, repr(out)
            assert ("\\u001b" if json_lines else "\\u{001b}") in out, out
            if json_lines:
                for line in out.splitlines():
                    json.loads(line)  # still JSON
    finally:
        assert d.terminate() == 0, d.stderr_tail()
