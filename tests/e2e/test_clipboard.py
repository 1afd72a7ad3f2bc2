"""The clipboard sandbox on a real X desktop: each flag combination, copies
made by other apps (xclip, a Tk "password manager"), what deskhand wrote
being pasteable by others, FILE_TOO_LARGE, and `type` with `paste: true`
into xterm."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from daemon import Daemon, binary
from xhelpers import REPO, XTerm, poll, require

FIXTURES = REPO / "tests" / "fixtures"
XTERM_CTRL_V = "XTerm*VT100.translations: #override Ctrl <Key>v: insert-selection(CLIPBOARD)"


def copy_with_xclip(display: str, text: str) -> None:
    """Another app copies `text`: xclip forks a child that owns CLIPBOARD
    (it takes the selection after the parent returned: wait for it)."""
    subprocess.run(["xclip", "-selection", "clipboard", "-i"], input=text.encode(),
                   env=dict(os.environ, DISPLAY=display), check=True, timeout=10,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    poll(lambda: paste_with_xclip(display) == text, timeout=5, what="xclip to own the clipboard")


def paste_with_xclip(display: str, target: str = "UTF8_STRING") -> str:
    """Another app pastes: what the CLIPBOARD owner serves for `target`."""
    out = subprocess.run(["xclip", "-selection", "clipboard", "-o", "-t", target],
                         env=dict(os.environ, DISPLAY=display), capture_output=True,
                         timeout=10)
    return out.stdout.decode("latin-1" if target == "STRING" else "utf-8")


def concealed_reason(c, **payload) -> str:
    msg = c.request("CLIPBOARD_READ", {"format": "text", **payload})
    assert msg["type"] == "ERROR", msg
    assert msg["payload"]["code"] == "CLIPBOARD_CONCEALED", msg
    assert msg["payload"]["fatal"] is False
    return msg["payload"]["details"]["reason"]


def error_code(c, mtype: str, payload: dict) -> str:
    msg = c.request(mtype, payload)
    assert msg["type"] == "ERROR", msg
    return msg["payload"]["code"]


def read(c) -> str:
    p = c.call("CLIPBOARD_READ", {"format": "text"}, expect="CLIPBOARD_READ_RESPONSE")
    assert p["size_bytes"] == len(p["content"].encode()), p
    return p["content"]


def write(c, text: str) -> None:
    c.call("CLIPBOARD_WRITE", {"format": "text", "content": text}, expect="ACK")


def offers(c) -> bool:
    hello = c.hello["payload"]
    fine = {"clipboard.read", "clipboard.write"} <= set(hello["computer_use_features"])
    assert fine == ("clipboard" in hello["computer_use_features_coarse"]), hello
    return fine


@pytest.fixture(scope="module")
def writeback_daemon():
    require("xclip")
    d = Daemon("--virtual=1024x768", "--enable-clipboard")
    yield d
    assert d.terminate() == 0


@pytest.fixture(scope="module")
def foreign_daemon():
    require("xclip", "wish")
    d = Daemon("--virtual=1024x768", "--enable-clipboard", "--enable-clipboard-read-foreign",
               "--approve-clipboard-reads")
    yield d
    assert d.terminate() == 0


def test_default_deny_offers_no_clipboard_and_leaves_it_alone(daemon, client, display):
    require("xclip")
    assert not offers(client)
    copy_with_xclip(display, "the person's copy")
    assert error_code(client, "CLIPBOARD_READ", {"format": "text"}) == "FEATURE_NOT_SUPPORTED"
    assert error_code(client, "CLIPBOARD_WRITE",
                      {"format": "text", "content": "x"}) == "FEATURE_NOT_SUPPORTED"
    code = error_code(client, "INPUT_ACTION", {"action": "type", "text": "p" * 300, "paste": True})
    assert code == "FEATURE_NOT_SUPPORTED"
    assert paste_with_xclip(display) == "the person's copy"


def test_writeback_only_reads_back_just_what_deskhand_wrote(writeback_daemon):
    d, c = writeback_daemon, writeback_daemon.client()
    assert offers(c)
    copy_with_xclip(d.display, "copied by the person")
    assert concealed_reason(c) == "writeback_only"

    write(c, "written by deskhand · ü")
    # Other apps can paste it: deskhand keeps owning the clipboard.
    assert paste_with_xclip(d.display) == "written by deskhand · ü"
    assert paste_with_xclip(d.display, "STRING") == "written by deskhand · ü"
    assert read(c) == "written by deskhand · ü"

    # Credential-looking text is refused even when deskhand wrote it itself.
    write(c, "AIzaSyD3m0K3yF0rT3st1ngOnlyAbCdEfGhIjKl")
    assert concealed_reason(c) == "credential_like"

    copy_with_xclip(d.display, "copied by the person again")
    assert concealed_reason(c) == "writeback_overwritten"
    # An app that only reads did not change anything: still concealed.
    assert paste_with_xclip(d.display) == "copied by the person again"
    c.close()


def test_read_foreign_reads_copies_but_never_secrets(foreign_daemon, tmp_path):
    d, c = foreign_daemon, foreign_daemon.client()
    copy_with_xclip(d.display, "meeting moved to 10:30")
    assert read(c) == "meeting moved to 10:30"

    ready = tmp_path / "ready"
    manager = subprocess.Popen(
        ["wish", str(FIXTURES / "secret-copy.tcl"), "correct horse battery", str(ready)],
        env=dict(os.environ, DISPLAY=d.display), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        poll(ready.exists, timeout=20, what="the password manager's copy")
        assert paste_with_xclip(d.display) == "correct horse battery", "the copy is there"
        msg = c.request("CLIPBOARD_READ", {"format": "text"})
        assert msg["payload"]["code"] == "CLIPBOARD_CONCEALED", msg
        assert msg["payload"]["details"] == {"reason": "concealed_type",
                                             "marker": "x-kde-passwordManagerHint"}
    finally:
        manager.kill()
        manager.wait(5)

    copy_with_xclip(d.display, "export OPENAI_API_KEY=sk-proj-Zx81bQ2vLk9PmN4rTy7sWc3H")
    assert concealed_reason(c) == "credential_like"
    copy_with_xclip(d.display, "ghp_R4nd0mL00k1ngT0k3nV4lu3Xy9Zq2Wv8")
    assert concealed_reason(c) == "credential_like"
    c.close()


def test_foreign_reads_without_approval_are_not_granted(tmp_path):
    require("xclip")
    d = Daemon("--virtual=800x600", "--enable-clipboard", "--enable-clipboard-read-foreign")
    try:
        c = d.client()
        copy_with_xclip(d.display, "not approved")
        msg = c.request("CLIPBOARD_READ", {"format": "text"})
        assert msg["payload"]["code"] == "CAPABILITY_NOT_GRANTED", msg
        assert msg["payload"]["details"]["needed"] == "host_approval"
        c.close()
    finally:
        assert d.terminate() == 0


def test_read_foreign_needs_enable_clipboard():
    out = subprocess.run([binary(), "serve",
                          "--enable-clipboard-read-foreign"], capture_output=True, timeout=30)
    assert out.returncode == 2, out
    assert b"--enable-clipboard" in out.stderr, out.stderr


def test_max_file_size_bounds_both_directions(foreign_daemon):
    d = foreign_daemon
    c = d.client(hello_ack={"max_file_size_bytes": 64})
    copy_with_xclip(d.display, "before")
    msg = c.request("CLIPBOARD_WRITE", {"format": "text", "content": "w" * 65})
    assert msg["payload"]["code"] == "FILE_TOO_LARGE", msg
    assert msg["payload"]["details"]["max_file_size_bytes"] == 64
    assert paste_with_xclip(d.display) == "before", "an oversized write changed the clipboard"
    write(c, "w" * 64)
    assert paste_with_xclip(d.display) == "w" * 64

    copy_with_xclip(d.display, "r" * 100)
    assert error_code(c, "CLIPBOARD_READ", {"format": "text"}) == "FILE_TOO_LARGE"
    c.close()


def test_paste_4kb_arrives_in_xterm_intact(writeback_daemon, tmp_path):
    d, c = writeback_daemon, writeback_daemon.client()
    out = tmp_path / "pasted.txt"
    term = XTerm(d.display, command=["bash", "-c", f"exec cat > {out}"], xrm=XTERM_CTRL_V)
    try:
        text = "".join(f"{i:03d} the quick brown fox jumps over the lazy dog, ünïcödé ok\n"
                       for i in range(64))
        assert len(text.encode()) >= 4096
        copy_with_xclip(d.display, "the person's copy")
        c.act("left_click", coordinate=list(term.rect().center()))
        started = time.monotonic()
        c.act("type", text=text, paste=True, preserve_clipboard=True)
        poll(lambda: out.exists() and out.read_text() == text, timeout=15,
             what="xterm to receive the 4 KB paste intact")
        print(f"4 KB paste arrived in {time.monotonic() - started:.2f} s")
        # preserve_clipboard: the person's copy is back once the paste was taken
        poll(lambda: paste_with_xclip(d.display) == "the person's copy", timeout=5,
             what="the previous clipboard to be restored")
    finally:
        term.close()
        c.close()


def test_audit_log_records_clipboard_ops_without_their_text(writeback_daemon):
    import json
    d, c = writeback_daemon, writeback_daemon.client()
    marker = "audit marker " + os.urandom(6).hex()  # spaces: not credential-like
    write(c, marker)
    assert read(c) == marker
    c.act("type", text=marker * 20, paste=True)
    c.close()
    text = d.audit_log.read_text()
    assert marker not in text, "clipboard or pasted text leaked into the audit log"
    records = [json.loads(line) for line in text.splitlines()]
    sized = [r for r in records if (r.get("target") or {}).get("text_bytes") == len(marker)]
    mine = [r for r in sized if r["session"] == sized[-1]["session"]]
    assert [r["op"] for r in mine] == ["clipboard.write", "clipboard.read"], mine
    assert all(len(r["target"]["text_hmac_sha256_prefix"]) == 12 for r in mine)
    pasted = [r for r in records if (r.get("target") or {}).get("paste") is True]
    assert pasted and pasted[-1]["target"]["text_bytes"] == 20 * len(marker)
