"""What the typing tests share: apps that write what they receive to a
file (an xterm in raw mode, a Tk entry), the keymap as `xmodmap` prints
it, a counter of the keymap changes every X client is told about, the
XKB group, and a display of the test's own with a daemon on it."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import random
import time
from pathlib import Path

from daemon import Daemon
from desktop import start
from xhelpers import FIXTURES, App, XTerm, missing, poll, require, run, unique_title

UTF8 = {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}

# The characters that move between us, de, fr and dvorak.
LAYOUT_CHARS = "yzYZ@#$[]{}|\\~^<>/-_=+;:'\",."


# 2000 characters outside the keymap take about 12 s to type on this
# machine's debug build (docs/performance.md); a loaded machine doubles it.
TYPE_TIMEOUT = 60.0


class TermSink:
    """xterm (UTF-8) running tests/fixtures/rawsink.py: every byte typed
    into it until Ctrl+D lands in a file."""

    def __init__(self, display: str, tmp: Path, name: str = "sink"):
        require("xterm", "python3")
        self.out, ready = tmp / f"{name}.bytes", tmp / f"{name}.ready"
        self.term = XTerm(display, command=["python3", str(FIXTURES / "rawsink.py"),
                                            str(self.out), str(ready)],
                          xrm="XTerm*utf8: 2", env=UTF8)
        poll(ready.exists, timeout=10, what="the raw sink to be ready")

    def type_into(self, client, text: str) -> bytes:
        """Clicks into the terminal, types `text` and Ctrl+D; returns the
        bytes the terminal passed on."""
        client.act("left_click", coordinate=list(self.term.rect().center()))
        client.act("type", text=text, timeout=TYPE_TIMEOUT)
        client.act("key", key="ctrl+d")
        poll(self.out.exists, timeout=30, what=f"{self.out} to be written")
        return self.out.read_bytes()

    def close(self) -> None:
        self.term.close()


class TkEntry(App):
    """A Tk entry (tests/fixtures/entry.tcl) that writes its text to a file
    on Return."""

    def __init__(self, display: str, tmp: Path):
        require("wish")
        self.out = tmp / "entry.txt"
        title = unique_title("deskhand-entry")
        super().__init__(display, ["wish", str(FIXTURES / "entry.tcl"), str(self.out), title],
                         title, env=UTF8)

    def type_into(self, client, text: str) -> str:
        clicked = self.out.with_name(self.out.name + ".click")
        for f in (self.out, clicked):
            f.unlink(missing_ok=True)
        client.act("left_click", coordinate=list(self.rect().center()))
        # The entry handles the click before any key: a click it read late
        # would move its cursor into the text being typed.
        poll(clicked.exists, timeout=30, what="the entry to see the click")
        client.act("type", text=text, timeout=TYPE_TIMEOUT)
        client.act("key", key="Return")
        poll(self.out.exists, timeout=30, what=f"{self.out} to be written")
        return self.out.read_bytes().decode("utf-8")


def keymap(display: str) -> str:
    """The keymap as `xmodmap -pke` prints it."""
    require("xmodmap")
    return run(display, "xmodmap", "-pke")


def quiet_keymap(display: str) -> str:
    """The keymap once deskhand has given back what earlier typing
    remapped (it does once typing has been idle for half a second)."""
    time.sleep(1.0)
    return keymap(display)


def wait_keymap(display: str, expected: str, timeout: float = 10.0) -> None:
    """Waits until the keymap is `expected` again (deskhand gives remapped
    keycodes back once typing has been idle for a moment)."""
    poll(lambda: keymap(display) == expected, timeout=timeout, interval=0.2,
         what="the keymap to be the one the test set")


def setxkbmap(display: str, *args: str) -> None:
    require("setxkbmap")
    run(display, "setxkbmap", *args)


def _xlib():
    name = ctypes.util.find_library("X11")
    if name is None:
        missing("libX11 (for counting MappingNotify and locking the XKB group)")
    lib = ctypes.CDLL(name)
    lib.XOpenDisplay.restype = ctypes.c_void_p
    lib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    for f in ("XSync", "XkbLockGroup"):
        getattr(lib, f).argtypes = [ctypes.c_void_p, ctypes.c_uint] + (
            [ctypes.c_uint] if f == "XkbLockGroup" else [])
    lib.XPending.argtypes = [ctypes.c_void_p]
    lib.XNextEvent.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.XCloseDisplay.argtypes = [ctypes.c_void_p]
    return lib


def lock_group(display: str, group: int) -> None:
    """Locks the XKB group (0-based), as a layout-switch shortcut does,
    without a key event (which would be the person taking over)."""
    lib = _xlib()
    dpy = lib.XOpenDisplay(display.encode())
    assert dpy, f"cannot open {display}"
    assert lib.XkbLockGroup(dpy, 0x100, group), "XkbLockGroup failed"
    lib.XSync(dpy, 0)
    lib.XCloseDisplay(dpy)


class MappingCounter:
    """A plain (non-XKB) X client: the server tells it about every keymap
    change with one MappingNotify, as it tells every old client."""

    MAPPING_NOTIFY = 34

    def __init__(self, display: str):
        self.lib = _xlib()
        saved = os.environ.get("XKB_DISABLE")
        os.environ["XKB_DISABLE"] = "1"
        try:
            self.dpy = self.lib.XOpenDisplay(display.encode())
        finally:
            if saved is None:
                del os.environ["XKB_DISABLE"]
            else:
                os.environ["XKB_DISABLE"] = saved
        assert self.dpy, f"cannot open {display}"
        self.seen = 0
        self.count()
        self.seen = 0

    def count(self) -> int:
        """MappingNotify events seen since it was opened."""
        event = ctypes.create_string_buffer(192)
        self.lib.XSync(self.dpy, 0)
        while self.lib.XPending(self.dpy):
            self.lib.XNextEvent(self.dpy, event)
            if ctypes.c_int.from_buffer(event).value == self.MAPPING_NOTIFY:
                self.seen += 1
        return self.seen

    def close(self) -> None:
        self.lib.XCloseDisplay(self.dpy)


RANGES = [
    (0x00A1, 0x00FF),  # Latin-1
    (0x0100, 0x024F),  # Latin Extended-A and -B
    (0x0391, 0x03C9),  # Greek
    (0x0410, 0x044F),  # Cyrillic
    (0x4E00, 0x9FFF),  # CJK
    (0x1F600, 0x1F64F),  # emoji
]


def random_text(rng: random.Random, n: int) -> str:
    """`n` characters drawn evenly from RANGES (no control characters)."""
    out = []
    while len(out) < n:
        lo, hi = rng.choice(RANGES)
        c = chr(rng.randint(lo, hi))
        if c.isprintable() and c != "\u00ad":
            out.append(c)
    return "".join(out)


def mixed_case(rng: random.Random, n: int) -> str:
    """`n` letters (both cases), digits and ASCII symbols."""
    pool = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
            "!@#$%^&*()-_=+[]{};:'\",.<>/?\\|`~ ")
    return "".join(rng.choice(pool) for _ in range(n))


class OwnDesktop:
    """An Xvfb of the test's own (set up by `prepare` before deskhand
    starts) and a daemon on it; `state` keeps the daemon's state directory
    across restarts (the held-input and remapped-keycode lists)."""

    def __init__(self, tmp: Path, prepare=None):
        self.tmp = tmp
        self.server = start("1024x768")
        self.display = self.server.name
        if prepare:
            prepare(self.display)
        self.consent = tmp / "consent.json"
        self.consent.write_text(json.dumps({"input": True}))
        self.state = tmp / "state"
        self.state.mkdir(exist_ok=True)
        self.daemon: Daemon | None = None

    def start(self) -> Daemon:
        self.daemon = Daemon("--display", self.display, "--consent", str(self.consent),
                             env={"XDG_STATE_HOME": str(self.state)})
        return self.daemon

    def stop(self) -> None:
        if self.daemon is not None:
            self.daemon.kill() if self.daemon.proc.poll() is None else None
            self.daemon = None
        self.server.stop()
