"""Typing follows the keyboard layout as it is now: set before deskhand
starts, switched with setxkbmap while it runs, and the group of a
two-group layout switched between two texts. The bytes the terminal
receives are exactly the text."""

from __future__ import annotations

import pytest

from typing_helpers import (LAYOUT_CHARS, OwnDesktop, TermSink, keymap, lock_group, quiet_keymap,
                            setxkbmap, wait_keymap)

LAYOUTS = [("us",), ("de",), ("fr",), ("us", "dvorak")]
TEXT = f"echo {LAYOUT_CHARS} > /tmp/x/{LAYOUT_CHARS[::-1]} yzYZ ok"


def layout_id(layout: tuple[str, ...]) -> str:
    return "-".join(layout)


@pytest.fixture
def us_afterwards(display):
    """The session's display is back on `us` after the test."""
    yield
    setxkbmap(display, "us")


@pytest.mark.parametrize("layout", LAYOUTS, ids=layout_id)
def test_layout_set_before_start(layout, tmp_path):
    desk = OwnDesktop(tmp_path, prepare=lambda d: setxkbmap(d, *layout))
    try:
        before = keymap(desk.display)
        with desk.start().client() as client:
            sink = TermSink(desk.display, tmp_path)
            try:
                assert sink.type_into(client, TEXT) == TEXT.encode()
            finally:
                sink.close()
        wait_keymap(desk.display, before)
    finally:
        desk.stop()


@pytest.mark.parametrize("layout", LAYOUTS, ids=layout_id)
def test_layout_switched_while_running(layout, client, display, tmp_path, us_afterwards):
    # deskhand first types on another layout, so it has read that one.
    other = LAYOUTS[(LAYOUTS.index(layout) + 1) % len(LAYOUTS)]
    setxkbmap(display, *other)
    first = TermSink(display, tmp_path, "first")
    try:
        assert first.type_into(client, "warm-up yz") == b"warm-up yz"
    finally:
        first.close()
    setxkbmap(display, *layout)
    before = quiet_keymap(display)
    sink = TermSink(display, tmp_path, "switched")
    try:
        assert sink.type_into(client, TEXT) == TEXT.encode()
    finally:
        sink.close()
    wait_keymap(display, before)


def test_two_groups_switched_between_texts(client, display, tmp_path, us_afterwards):
    setxkbmap(display, "us,de")
    before = quiet_keymap(display)
    try:
        lock_group(display, 0)
        sink = TermSink(display, tmp_path, "group1")
        try:
            text = f"us: {LAYOUT_CHARS}"
            assert sink.type_into(client, text) == text.encode()
        finally:
            sink.close()
        lock_group(display, 1)
        sink = TermSink(display, tmp_path, "group2")
        try:
            text = f"de: {LAYOUT_CHARS} äöüÄÖÜß€µ²³"
            assert sink.type_into(client, text) == text.encode()
        finally:
            sink.close()
    finally:
        lock_group(display, 0)
    wait_keymap(display, before)
