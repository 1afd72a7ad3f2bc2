"""Xlib through ctypes, for what the command-line tools cannot do: events
from a chosen input device (XTEST's device form), passive key grabs and
SHAPE regions of another client's window. One definition of each call's
signature; `Display` opens and closes a connection."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import re

from xhelpers import missing, run

P, INT, UINT, ULONG = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_ulong


@functools.cache
def lib(name: str) -> ctypes.CDLL:
    path = ctypes.util.find_library(name)
    if path is None:
        missing(f"lib{name} (apt: libx11-6 libxi6 libxtst6 libxext6)")
    library = ctypes.CDLL(path)
    for fn, restype, argtypes in SIGNATURES.get(name, ()):
        getattr(library, fn).restype = restype
        getattr(library, fn).argtypes = argtypes
    return library


SIGNATURES = {
    "X11": [
        ("XOpenDisplay", P, [ctypes.c_char_p]),
        ("XCloseDisplay", INT, [P]),
        ("XSync", INT, [P, INT]),
        ("XDefaultRootWindow", ULONG, [P]),
        ("XStringToKeysym", ULONG, [ctypes.c_char_p]),
        ("XKeysymToKeycode", ctypes.c_ubyte, [P, ULONG]),
        ("XGrabKey", INT, [P, INT, UINT, ULONG, INT, INT, INT]),
    ],
    "Xi": [
        ("XOpenDevice", P, [P, ULONG]),
        ("XCloseDevice", INT, [P, P]),
        ("XIWarpPointer", INT, [P, INT, ULONG, ULONG, ctypes.c_double, ctypes.c_double,
                                UINT, UINT, ctypes.c_double, ctypes.c_double]),
    ],
    "Xtst": [
        ("XTestFakeDeviceButtonEvent", INT, [P, P, UINT, INT, P, INT, ULONG]),
        ("XTestFakeDeviceKeyEvent", INT, [P, P, UINT, INT, P, INT, ULONG]),
    ],
    "Xext": [
        ("XShapeCombineRectangles", None, [P, ULONG, INT, INT, INT, P, INT, INT, INT]),
    ],
}


class Display:
    """A connection to an X display, closed at the end of a `with`."""

    def __init__(self, name: str):
        self.x11 = lib("X11")
        self.dpy = self.x11.XOpenDisplay(name.encode())
        assert self.dpy, f"cannot open display {name}"

    def __enter__(self) -> Display:
        return self

    def __exit__(self, *exc) -> None:
        self.x11.XCloseDisplay(self.dpy)

    def sync(self) -> None:
        self.x11.XSync(self.dpy, 0)

    def root(self) -> int:
        return self.x11.XDefaultRootWindow(self.dpy)

    def device_event(self, device_id: int, *, button: int = 0, keycode: int = 0,
                     press: bool) -> None:
        """A button or key of device `device_id` goes down or up: the X
        server makes it that device's own event."""
        xi, xtst = lib("Xi"), lib("Xtst")
        dev = xi.XOpenDevice(self.dpy, device_id)
        assert dev, f"XOpenDevice({device_id}) failed"
        try:
            if button:
                xtst.XTestFakeDeviceButtonEvent(self.dpy, dev, button, int(press), None, 0, 0)
            else:
                xtst.XTestFakeDeviceKeyEvent(self.dpy, dev, keycode, int(press), None, 0, 0)
            self.sync()
        finally:
            xi.XCloseDevice(self.dpy, dev)


def devices(display: str) -> list[tuple[str, int, str]]:
    """Every input device: its name, id and role (`slave pointer`, `master
    keyboard`, ...), as `xinput list --short` gives them."""
    out = run(display, "xinput", "list", "--short")
    return [(m.group(1), int(m.group(2)), " ".join(m.group(3).split()))
            for m in re.finditer(r"[↳⎡⎣⎜\s]*(\S.*?)\s+id=(\d+)\s+\[(\w+\s+\w+)", out)]


def device_ids(display: str) -> dict[str, int]:
    """Every device's id, by name."""
    return {name: i for name, i, _ in devices(display)}


def mouse_id(display: str) -> int:
    """The id of a slave pointer that is not an XTEST device ("Xvfb mouse")."""
    found = [i for name, i, role in devices(display)
             if role == "slave pointer" and "XTEST" not in name]
    assert found, f"no non-XTEST pointer device on {display}: {devices(display)}"
    return found[0]
