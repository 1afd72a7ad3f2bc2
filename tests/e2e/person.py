"""Playing the person with a real input device: a button press that comes
from the X server's own mouse device (not one of the XTEST devices that
`xdotool` and every other program use), through XTEST's device form
(XTestFakeDeviceButtonEvent naming that device). To deskhand's watcher it
is indistinguishable from the person's hand on a mouse."""

from __future__ import annotations

import ctypes
import ctypes.util
import re

from xhelpers import missing, run

# The overlay's Continue button on the primary display (see overlay/src/paint.rs):
# under the label at the top centre.
CONTINUE_Y = 6 + 32 + 8 + 16


def stop_button(width: int) -> tuple[int, int, int, int]:
    """The overlay's "Stop agents" button (x, y, width, height) on a display
    `width` pixels wide: right of Continue ("Let the agent continue"),
    which is centred; 16 pixels a character, 24 of padding."""
    go_width = len("Let the agent continue") * 16 + 24
    x = width // 2 - go_width // 2 + go_width + 16
    return x, CONTINUE_Y - 16, len("Stop agents") * 16 + 24, 32


def _lib(name: str) -> ctypes.CDLL:
    path = ctypes.util.find_library(name)
    if path is None:
        missing(f"lib{name} (apt: libx11-6 libxi6 libxtst6)")
    return ctypes.CDLL(path)


def pointer_device_id(display: str) -> int:
    """The id of a slave pointer that is not an XTEST device ("Xvfb mouse")."""
    out = run(display, "xinput", "list")
    for line in out.splitlines():
        m = re.search(r"↳ (.+?)\s+id=(\d+)\s+\[slave\s+pointer", line)
        if m and "XTEST" not in m.group(1):
            return int(m.group(2))
    raise AssertionError(f"no non-XTEST pointer device on {display}:\n{out}")


def device_click(display: str, x: int, y: int, button: int = 1) -> None:
    """The person's click with the mouse at (x, y): the pointer is warped
    there, then the mouse device presses and releases `button`."""
    run(display, "xdotool", "mousemove", str(x), str(y))
    x11, xi, xtst = _lib("X11"), _lib("Xi"), _lib("Xtst")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    xi.XOpenDevice.restype = ctypes.c_void_p
    xi.XOpenDevice.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
    xi.XCloseDevice.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    xtst.XTestFakeDeviceButtonEvent.argtypes = [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_int,
        ctypes.c_void_p, ctypes.c_int, ctypes.c_ulong]
    dpy = x11.XOpenDisplay(display.encode())
    assert dpy, f"cannot open display {display}"
    try:
        dev = xi.XOpenDevice(dpy, pointer_device_id(display))
        assert dev, "XOpenDevice failed"
        for press in (1, 0):
            xtst.XTestFakeDeviceButtonEvent(dpy, dev, button, press, None, 0, 0)
        x11.XSync(dpy, 0)
        xi.XCloseDevice(dpy, dev)
    finally:
        x11.XCloseDisplay(dpy)


def click_continue(display: str, width: int) -> None:
    """The person clicks Continue on the paused indicator of a display
    `width` pixels wide."""
    device_click(display, width // 2, CONTINUE_Y)
