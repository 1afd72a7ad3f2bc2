"""X11 side of the end-to-end tests: servers, apps and the person's tools
(xdotool, xclip, xinput, xwininfo), all run as real processes."""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
IN_CI = os.environ.get("CI", "").lower() == "true"
_BASE: list[str] = []


def scratch_dir(prefix: str) -> str:
    """A fresh directory under this run's scratch base, removed at exit
    (kept when DESKHAND_E2E_KEEP=1, for post-mortems)."""
    if not _BASE:
        _BASE.append(tempfile.mkdtemp(prefix="deskhand-e2e-"))
        if os.environ.get("DESKHAND_E2E_KEEP") != "1":
            atexit.register(shutil.rmtree, _BASE[0], True)
    return tempfile.mkdtemp(prefix=prefix, dir=_BASE[0])


def missing(what: str) -> None:
    """A dependency is missing: fail under CI=true, skip otherwise."""
    if IN_CI:
        pytest.fail(f"missing dependency (CI=true, so this is a failure): {what}")
    pytest.skip(f"missing dependency: {what}")


def require(*tools: str) -> None:
    for tool in tools:
        if shutil.which(tool) is None:
            missing(f"`{tool}` not on PATH (run scripts/install-deps)")


def poll(fn, timeout: float = 10.0, interval: float = 0.1, what: str = "condition"):
    """Call fn until it returns a truthy value; return it, or fail after timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")
        time.sleep(interval)


def run(display: str, *argv: str, timeout: float = 10.0, check: bool = True) -> str:
    env = dict(os.environ, DISPLAY=display)
    res = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    if check and res.returncode != 0:
        raise AssertionError(f"{argv} exited {res.returncode}: {res.stderr.strip()}")
    return res.stdout


def display_alive(display: str) -> bool:
    env = dict(os.environ, DISPLAY=display)
    res = subprocess.run(["xdpyinfo"], env=env, capture_output=True, timeout=10)
    return res.returncode == 0


def display_socket(display: str) -> Path:
    return Path("/tmp/.X11-unix") / f"X{display.lstrip(':').split('.')[0]}"


def assert_display_gone(display: str, grace: float = 3.0) -> None:
    poll(
        lambda: not display_alive(display) and not display_socket(display).exists(),
        timeout=grace,
        what=f"X display {display} to go away (xdpyinfo still connects or socket remains)",
    )


def pointer(display: str) -> tuple[int, int]:
    out = run(display, "xdotool", "getmouselocation", "--shell")
    vals = dict(line.split("=", 1) for line in out.split())
    return int(vals["X"]), int(vals["Y"])


def overlay_window(display: str) -> tuple[str, list[str]]:
    """The overlay's window id and the ids of the windows stacked above it
    (xwininfo lists the root's children top first)."""
    out = run(display, "xwininfo", "-root", "-children")
    children = [line.split()[0] for line in out.splitlines()
                if re.match(r"\s+0x[0-9a-f]+ ", line)]
    for i, line in enumerate(l for l in out.splitlines() if re.match(r"\s+0x[0-9a-f]+ ", l)):
        if '"deskhand takeover"' in line:
            return children[i], children[:i]
    raise AssertionError(f"no overlay window among the root's children:\n{out}")


def map_state(display: str, wid: str) -> str:
    out = run(display, "xwininfo", "-id", wid)
    return re.search(r"Map State: (\w+)", out).group(1)


def a11y_env(display: str, bus: str) -> dict:
    """This process's environment for a program on `display` that speaks
    AT-SPI on the session bus `bus` (an app, or a screen reader's reads)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_AT_BRIDGE", "AT_SPI_BUS_ADDRESS")}
    env.update(DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=bus)
    return env


def pixel_of_import(display: str, x: int, y: int) -> tuple[int, int, int]:
    """A pixel of the screen as another program sees it (ImageMagick's
    `import` of the root window), overlay included."""
    from imaging import decode_png
    png = subprocess.run(["import", "-display", display, "-window", "root", "png:-"],
                         capture_output=True, check=True, timeout=30).stdout
    return decode_png(png).pixel(x, y)


def overlay_viewable(display: str) -> bool:
    """Whether the takeover overlay's window is on screen (False when it is
    unmapped or there is none)."""
    try:
        wid, _ = overlay_window(display)
    except AssertionError:
        return False
    return map_state(display, wid) == "IsViewable"


def primary_selection(display: str) -> str:
    env = dict(os.environ, DISPLAY=display)
    res = subprocess.run(
        ["xclip", "-o", "-selection", "primary"], env=env, capture_output=True, timeout=10
    )
    return res.stdout.decode("utf-8", "replace") if res.returncode == 0 else ""


def _held(display: str, device_kind: str, item: str) -> dict[str, list[int]]:
    """What is held on every slave device of `device_kind` (pointer or
    keyboard, XTEST included), by device name: the `item`s (button, key)
    that xinput reports down. Masters cannot be queried with XI 1
    query-state; their state is the union of their slaves'."""
    out = run(display, "xinput", "list", "--short")
    held: dict[str, list[int]] = {}
    for line in out.splitlines():
        m = re.search(rf"↳\s*(.*?)\s+id=(\d+)\s+\[slave\s+{device_kind}", line)
        if not m:
            continue
        state = run(display, "xinput", "query-state", m.group(2))
        held[m.group(1)] = [int(b) for b in re.findall(rf"{item}\[(\d+)\]=down", state)]
    if not held:
        raise AssertionError(f"no slave {device_kind} devices found in:\n{out}")
    return held


def pointer_buttons_down(display: str) -> dict[str, list[int]]:
    """Buttons held on every slave pointer, by device name."""
    return _held(display, "pointer", "button")


def keys_down(display: str) -> dict[str, list[int]]:
    """Keys held on every slave keyboard, by device name."""
    return _held(display, "keyboard", "key")


def any_button_down(display: str) -> bool:
    return any(pointer_buttons_down(display).values())


@dataclass
class Rect:
    x: int
    y: int
    w: int
    h: int

    def center(self) -> tuple[int, int]:
        return self.x + self.w // 2, self.y + self.h // 2


def window_rect(display: str, wid: str) -> Rect:
    """Inside of the client window in root coordinates (xwininfo is right
    under a reparenting WM, where `xdotool getwindowgeometry` is not)."""
    out = run(display, "xwininfo", "-id", wid)

    def field(name: str) -> int:
        return int(re.search(rf"{name}:\s+(-?\d+)", out).group(1))

    return Rect(
        field("Absolute upper-left X"), field("Absolute upper-left Y"),
        field("Width"), field("Height"),
    )


class App:
    """A client program on a display, found by a unique window title."""

    def __init__(self, display: str, argv: list[str], title: str, cwd: str | None = None,
                 env: dict | None = None):
        self.display = display
        self.title = title
        env = dict(os.environ, **(env or {}), DISPLAY=display)
        self.proc = subprocess.Popen(
            argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.wid = poll(lambda: self._find(title), timeout=20, interval=0.1,
                        what=f"a visible window titled {title}")
        poll(lambda: self.rect().w > 1, timeout=5, what=f"{title} to be mapped")
        time.sleep(0.3)  # let the window manager settle placement and focus

    def _find(self, title: str) -> str | None:
        if self.proc.poll() is not None:
            raise AssertionError(f"{title}: program exited {self.proc.returncode} before mapping")
        # not --sync: xdotool aborts on a BadWindow when any window vanishes
        # mid-search, so retry here instead
        out = run(self.display, "xdotool", "search", "--onlyvisible", "--name", f"^{title}$",
                  check=False)
        return out.split()[0] if out.split() else None

    def rect(self) -> Rect:
        return window_rect(self.display, self.wid)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def close_window(display: str, wid: str) -> None:
    """What the title bar's X does: a WM_DELETE_WINDOW message to the
    window (the app decides what closing means)."""
    x11 = ctypes.CDLL(ctypes.util.find_library("X11"))
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XInternAtom.restype = ctypes.c_ulong
    x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x11.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long,
                               ctypes.c_void_p]
    x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    dpy = x11.XOpenDisplay(display.encode())
    assert dpy, f"cannot open display {display}"
    try:
        # An XClientMessageEvent laid out in an XEvent's 24 longs (x86_64).
        event = (ctypes.c_long * 24)()
        event[0] = 33  # ClientMessage
        event[4] = int(wid, 0)  # window
        event[5] = x11.XInternAtom(dpy, b"WM_PROTOCOLS", 0)  # message_type
        event[6] = 32  # format
        event[7] = x11.XInternAtom(dpy, b"WM_DELETE_WINDOW", 0)  # data.l[0]
        x11.XSendEvent(dpy, int(wid, 0), 0, 0, ctypes.byref(event))
        x11.XSync(dpy, 0)
    finally:
        x11.XCloseDisplay(dpy)


def unique_title(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class XTerm(App):
    """xterm with a fixed cell grid: -b 2 internal border, no scrollbar."""

    BORDER = 2

    def __init__(self, display: str, cols: int = 80, rows: int = 24, pos: str = "+0+0",
                 bg: str | None = None, command: list[str] | None = None, cwd: str | None = None,
                 xrm: str | None = None, env: dict | None = None,
                 extra: list[str] | None = None):
        """`extra`: more xterm options (`-class`, `-name`, ...)."""
        require("xterm")
        title = unique_title("deskhand-xterm")
        argv = ["xterm", "-T", title, "-geometry", f"{cols}x{rows}{pos}", "-b", str(self.BORDER),
                "+sb", "-xrm", "XTerm*allowTitleOps: false"]
        if bg:
            argv += ["-bg", bg]
        if xrm:
            argv += ["-xrm", xrm]
        argv += (extra or []) + ["-e"] + (command or ["sleep", "600"])
        self.cols, self.rows = cols, rows
        super().__init__(display, argv, title, cwd)

    def cell(self, col: int, row: int) -> tuple[int, int]:
        """Root coordinates of the centre of character cell (col, row)."""
        r = self.rect()
        cw = (r.w - 2 * self.BORDER) // self.cols
        ch = (r.h - 2 * self.BORDER) // self.rows
        return (r.x + self.BORDER + col * cw + cw // 2, r.y + self.BORDER + row * ch + ch // 2)


class XServer:
    """An X server the test starts itself (Xvfb, or Xorg with the dummy driver)."""

    def __init__(self, argv: list[str], name: str):
        self.tmp = scratch_dir(f"{name}-")
        r, w = os.pipe()
        self.log = open(os.path.join(self.tmp, "server.log"), "wb")
        self.proc = subprocess.Popen(
            argv + ["-displayfd", str(w)], pass_fds=(w,), stdout=self.log, stderr=self.log,
            cwd=self.tmp,
        )
        os.close(w)
        try:
            data = b""
            deadline = time.monotonic() + 30
            os.set_blocking(r, False)
            while not data.endswith(b"\n"):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError(f"{name} did not start; see {self.log.name}")
                try:
                    chunk = os.read(r, 64)
                except BlockingIOError:
                    time.sleep(0.05)
                    continue
                if not chunk:
                    time.sleep(0.05)
                data += chunk
        finally:
            os.close(r)
        self.display = ":" + data.decode().strip()
        poll(lambda: display_alive(self.display), timeout=10, what=f"{name} {self.display}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()


def start_xvfb(size: str = "1280x800") -> XServer:
    require("Xvfb", "xdpyinfo", "xdotool")
    return XServer(["Xvfb", "-screen", "0", f"{size}x24", "-nolisten", "tcp", "-noreset"], "xvfb")


def start_xorg_dummy() -> XServer:
    """Xorg + dummy driver with two monitors side by side:
    DUMMY0 1280x800 at (0, 0) and DUMMY1 1024x768 at (1280, 0)."""
    require("Xorg", "xrandr", "xdpyinfo", "xdotool")
    if not Path("/usr/lib/xorg/modules/drivers/dummy_drv.so").exists():
        missing("xserver-xorg-video-dummy (dummy_drv.so)")
    tmp = scratch_dir("xorg-log-")
    server = XServer(
        ["Xorg", "-config", str(FIXTURES / "xorg-dummy.conf"), "-noreset", "-nolisten", "tcp",
         "-logfile", os.path.join(tmp, "Xorg.log"), "-novtswitch", "-sharevts"],
        "xorg",
    )
    d = server.display
    run(d, "xrandr", "--addmode", "DUMMY1", "1024x768")
    run(d, "xrandr", "--output", "DUMMY0", "--mode", "1280x800", "--pos", "0x0", "--primary",
        "--output", "DUMMY1", "--mode", "1024x768", "--pos", "1280x0")
    monitors = run(d, "xrandr", "--listmonitors")
    if "1024/" not in monitors or "+1280+0" not in monitors:
        server.stop()
        raise AssertionError(f"xrandr did not set up two monitors:\n{monitors}")
    return server
