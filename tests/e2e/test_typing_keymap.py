"""Typing leaves the keymap as it found it and changes it only for
characters no key produces: counted as the MappingNotify events every X
client gets, compared with `xmodmap -pke` before and after, also after a
`kill -9` mid-text and across ten daemon starts. A character that cannot
be typed fails the act before anything is sent; keypad names are keypad
keys."""

from __future__ import annotations

import random
import time

import pytest

from daemon import ErrorReply
from desktop import attach
from typing_helpers import (MappingCounter, OwnDesktop, TermSink, TkEntry, keymap, mixed_case,
                            quiet_keymap, random_text, wait_keymap)
from xhelpers import poll

OFF_KEYMAP = "àáâãäåæçèéêëìíîïðñòóôõö日本語のテキスト"


def warm_up(client, display: str, tmp_path) -> None:
    """The first key event after another device was used makes the server
    copy that device's keymap (one MappingNotify): typed before counting."""
    warm = TermSink(display, tmp_path, "warm")
    try:
        assert warm.type_into(client, "warm") == b"warm"
    finally:
        warm.close()


def test_mixed_case_text_changes_no_keymap(client, display, tmp_path):
    before = quiet_keymap(display)
    warm_up(client, display, tmp_path)
    sink = TermSink(display, tmp_path)
    counter = MappingCounter(display)
    try:
        text = mixed_case(random.Random(5), 200)
        assert sink.type_into(client, text) == text.encode()
        time.sleep(1.0)  # past the moment remapped keycodes would be given back
        assert counter.count() == 0, "a text of keys on the keyboard changed the keymap"
    finally:
        counter.close()
        sink.close()
    assert keymap(display) == before


def test_keymap_changes_at_most_once_per_character_on_no_key(client, display, tmp_path):
    before = quiet_keymap(display)
    warm_up(client, display, tmp_path)
    rng = random.Random(6)
    text = list(mixed_case(rng, 180) + OFF_KEYMAP[:20])
    rng.shuffle(text)
    text = "".join(text)
    sink = TermSink(display, tmp_path)
    counter = MappingCounter(display)
    try:
        assert sink.type_into(client, text) == text.encode()
        wait_keymap(display, before)
        changes = counter.count()
    finally:
        counter.close()
        sink.close()
    # 20 characters on no key: remapped in batches, then given back.
    assert 0 < changes <= 20, f"{changes} keymap changes for 20 characters on no key"


def test_untypable_character_fails_before_anything_is_sent(client, display, tmp_path):
    sink = TermSink(display, tmp_path)
    try:
        client.act("left_click", coordinate=list(sink.term.rect().center()))
        with pytest.raises(ErrorReply) as refused:
            client.act("type", text="abc\x01def")
        payload = refused.value.msg["payload"]
        assert payload["code"] == "INVALID_ARGUMENTS", payload
        assert payload["details"]["index"] == 3, payload
        assert "character 3" in payload["message"], payload
        client.act("type", text="ok")
        client.act("key", key="ctrl+d")
        poll(sink.out.exists, timeout=10, what="the sink's file")
        assert sink.out.read_bytes() == b"ok", "part of the refused text was typed"
    finally:
        sink.close()


def test_kp_enter_is_the_keypad_enter_key(client, display, apps, tmp_path):
    entry = TkEntry(display, tmp_path)
    apps.append(entry)
    client.act("left_click", coordinate=list(entry.rect().center()))
    client.act("type", text="typed")
    client.act("key", key="kp_enter")
    poll(entry.out.exists, timeout=10, what="the entry's file")
    assert entry.out.read_text() == "typed<KP_Enter>"


def test_kill_9_mid_text_then_restart_restores_the_keymap(tmp_path):
    desk = OwnDesktop(tmp_path)
    try:
        before = keymap(desk.display)
        daemon = desk.start()
        client = daemon.client()
        sink = TermSink(desk.display, tmp_path)
        client.act("left_click", coordinate=list(sink.term.rect().center()))
        client.send("INPUT_ACTION", {"action": "type",
                                     "text": random_text(random.Random(7), 2000)})
        poll(lambda: keymap(desk.display) != before, timeout=10, interval=0.02,
             what="deskhand to remap keycodes while typing")
        daemon.kill()
        assert keymap(desk.display) != before, "nothing was left to restore: the test proves nothing"
        sink.close()
        with desk.start().client():
            wait_keymap(desk.display, before, timeout=5)
            assert not any(attach(desk.display).held_keys().values()), attach(desk.display).held_keys()
    finally:
        desk.stop()


def test_ten_starts_in_a_row_type_exactly(tmp_path):
    desk = OwnDesktop(tmp_path)
    try:
        before = keymap(desk.display)
        rng = random.Random(8)
        for start in range(10):
            daemon = desk.start()
            with daemon.client() as client:
                sink = TermSink(desk.display, tmp_path, f"start{start}")
                try:
                    text = mixed_case(rng, 60) + OFF_KEYMAP[start]
                    assert sink.type_into(client, text) == text.encode(), f"start {start}"
                finally:
                    sink.close()
            assert daemon.terminate() == 0, daemon.stderr_tail()
            assert keymap(desk.display) == before, f"start {start} left the keymap changed"
    finally:
        desk.stop()


def fill_spare_keycodes(display: str) -> None:
    """Another program maps every free keycode (to F20), as a person's
    custom keymap might."""
    free = [line.split()[1] for line in keymap(display).splitlines()
            if line.split("=", 1)[-1].strip() == ""]
    assert free, "the display has no free keycode to fill"
    from xhelpers import run
    run(display, "xmodmap", *[arg for k in free for arg in ("-e", f"keycode {k} = F20")])


def test_no_spare_keycode_is_said_by_hello_and_doctor_and_refuses_before_sending(tmp_path):
    desk = OwnDesktop(tmp_path, prepare=fill_spare_keycodes)
    try:
        daemon = desk.start()
        client = daemon.client()
        assert "input.type.unicode" not in client.hello["payload"]["computer_use_features"]
        assert "no keycode is free" in daemon.stderr_tail(200)
        import subprocess
        from daemon import binary
        human = subprocess.run([binary(), "doctor", "--display", desk.display],
                               capture_output=True, text=True, timeout=30).stdout
        assert "spare keycodes: none free" in human, human
        sink = TermSink(desk.display, tmp_path)
        try:
            client.act("left_click", coordinate=list(sink.term.rect().center()))
            with pytest.raises(ErrorReply) as refused:
                client.act("type", text="ab日c")
            payload = refused.value.msg["payload"]
            assert (payload["code"], payload["details"]["index"]) == ("INVALID_ARGUMENTS", 2), payload
            client.act("type", text="ok")
            client.act("key", key="ctrl+d")
            poll(sink.out.exists, timeout=10, what="the sink's file")
            assert sink.out.read_bytes() == b"ok", "part of the refused text was typed"
        finally:
            sink.close()
    finally:
        desk.stop()
