"""Any Unicode text arrives byte-exact: 2,000 random characters from
Latin-1, Latin Extended, Greek, Cyrillic, CJK and emoji, ten texts in a
row, into an xterm and into a Tk entry; the keymap is the one it was
afterwards."""

from __future__ import annotations

import random

from typing_helpers import TermSink, TkEntry, quiet_keymap, random_text, wait_keymap

RUNS = 10
LENGTH = 2000


def test_random_unicode_into_xterm_ten_times(client, display, tmp_path):
    before = quiet_keymap(display)
    rng = random.Random(20)
    for run in range(RUNS):
        text = random_text(rng, LENGTH)
        sink = TermSink(display, tmp_path, f"run{run}")
        try:
            got = sink.type_into(client, text)
        finally:
            sink.close()
        assert got == text.encode(), f"run {run}: {first_difference(got.decode('utf-8', 'replace'), text)}"
    wait_keymap(display, before)


def test_random_unicode_into_a_tk_entry_ten_times(client, display, apps, tmp_path):
    before = quiet_keymap(display)
    entry = TkEntry(display, tmp_path)
    apps.append(entry)
    rng = random.Random(21)
    for run in range(RUNS):
        text = random_text(rng, LENGTH)
        got = entry.type_into(client, text)
        assert got == text, f"run {run}: {first_difference(got, text)}"
    wait_keymap(display, before)


def first_difference(got: str, want: str) -> str:
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"character {i}: got {got[i:i + 5]!r}, wanted {want[i:i + 5]!r}"
    return f"got {len(got)} characters, wanted {len(want)}"
