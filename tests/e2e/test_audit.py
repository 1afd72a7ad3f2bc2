"""The audit log: one JSON record per op, appended before the reply, and
never the typed text or the token."""

import json

import pytest

from daemon import Daemon
from desktop import attach

SECRET = "hunter2-Zq7-typed-secret"


@pytest.fixture(scope="module")
def own_daemon():
    d = Daemon("--virtual=1280x800")
    yield d
    rc = d.terminate()
    assert rc == 0, d.stderr_tail()
    attach(d.display).assert_gone()


def records(d) -> list[dict]:
    if not d.audit_log.exists():
        return []
    lines = d.audit_log.read_text("utf-8").splitlines()
    out = []
    for i, line in enumerate(lines):
        rec = json.loads(line)  # every line is one JSON object
        assert isinstance(rec, dict), f"audit line {i} is not an object: {line}"
        out.append(rec)
    return out


def test_one_record_per_op_and_no_typed_text(own_daemon):
    d = own_daemon
    c = d.client()
    try:
        # HELLO_ACK has no reply, so its record may land at any time until the
        # next reply: synchronise on one request before counting.
        c.call("DISPLAY_INFO_REQUEST", {}, expect="DISPLAY_INFO_RESPONSE")
        ops = [
            ("CURSOR_POSITION_REQUEST", {}),
            ("INPUT_ACTION", {"action": "mouse_move", "coordinate": [50, 60]}),
            ("INPUT_ACTION", {"action": "type", "text": SECRET}),
            ("INPUT_ACTION", {"action": "key", "key": "ctrl+a"}),
            ("SCREENSHOT_REQUEST", {"format": "jpeg", "quality": 30}),
            ("INPUT_ACTION", {"action": "left_click", "coordinate": [99999, 5]}),  # refused
        ]
        for mtype, payload in ops:
            before = len(records(d))
            reply = c.request(mtype, payload)
            after = records(d)
            assert len(after) == before + 1, (
                f"{mtype} {payload.get('action', '')}: audit grew by {len(after) - before} "
                f"records before the reply, expected exactly 1: {after[before:]}")
            rec = after[-1]
            assert "op" in rec and "outcome" in rec, f"record lacks op/outcome: {rec}"
            if reply["type"] == "ERROR":
                assert rec["outcome"] not in ("ok", "success", True), f"refused op logged ok: {rec}"
    finally:
        c.close()
    raw = d.audit_log.read_text("utf-8")
    assert SECRET not in raw, "typed text leaked into the audit log"
    assert SECRET[:8] not in raw, "part of the typed text leaked into the audit log"
    assert d.token not in raw, "the token leaked into the audit log"


def test_token_and_text_not_in_stderr(own_daemon):
    text = own_daemon.stderr_path.read_text("utf-8", "replace")
    assert own_daemon.token not in text, "the token was logged to stderr"
    assert SECRET not in text, "typed text was logged to stderr"


def test_audit_tail_reads_the_log_without_the_text(own_daemon):
    """`deskhand audit tail` prints the newest records, as columns or as the
    JSON lines, and the typed text is in neither."""
    import subprocess

    from daemon import binary

    d = own_daemon
    c = d.client()
    try:
        c.act("type", text=SECRET)
        c.call("CURSOR_POSITION_REQUEST", {}, expect="CURSOR_POSITION_RESPONSE")
    finally:
        c.close()
    from xhelpers import poll
    poll(lambda: records(d)[-1]["op"] == "session.close", timeout=5,
         what="the session.close record")

    def tail(*extra):
        return subprocess.run([binary(), "audit", "tail", "--file", str(d.audit_log), *extra],
                              capture_output=True, text=True, timeout=20, check=True).stdout

    human = tail("-n", "4")
    assert len(human.splitlines()) == 4, human
    for op in ("input.type", "cursor_position", "takeover.ended", "session.close"):
        assert op in human, human
    raw = tail("-n", "1000", "--json").splitlines()
    assert [json.loads(line) for line in raw] == records(d)[-len(raw):]
    assert len(raw) == len(records(d))
    assert SECRET not in human and SECRET not in "\n".join(raw)


def test_audit_tail_follow_goes_on_in_the_new_file_after_a_rotation(tmp_path):
    """`audit tail --follow` prints records as they are appended, and after
    the log is rotated (moved away, a new file at its path) it reads the
    new file, not the old one."""
    import subprocess
    import threading

    from daemon import binary
    from xhelpers import poll

    log = tmp_path / "audit.jsonl"

    def record(op: str) -> str:
        return json.dumps({"ts": "2026-12-04T10:00:00.000Z", "op": op, "session": "s1",
                           "ok": True}) + "\n"

    log.write_text(record("first"))
    follower = subprocess.Popen([binary(), "audit", "tail", "--file", str(log), "--follow",
                                 "--json"], stdout=subprocess.PIPE, text=True)
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(follower.stdout.readline, "")),
                              daemon=True)
    reader.start()
    try:
        poll(lambda: any('"first"' in s for s in seen), timeout=10, what="the first record")
        with log.open("a") as f:
            f.write(record("appended"))
        poll(lambda: any('"appended"' in s for s in seen), timeout=10, what="the appended record")
        log.rename(tmp_path / "audit.jsonl.1")
        log.write_text(record("after-rotation"))
        poll(lambda: any('"after-rotation"' in s for s in seen), timeout=10,
             what="the new file's record")
        with (tmp_path / "audit.jsonl.1").open("a") as f:
            f.write(record("old-file"))
        with log.open("a") as f:
            f.write(record("new-file"))
        poll(lambda: any('"new-file"' in s for s in seen), timeout=10, what="the next record")
        assert not any('"old-file"' in s for s in seen), seen
    finally:
        follower.kill()
        follower.wait(timeout=10)
