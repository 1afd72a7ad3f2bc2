"""X11: playing the person with a real input device: a button press that comes
from the X server's own mouse device (not one of the XTEST devices that
`xdotool` and every other program use), through XTEST's device form
(XTestFakeDeviceButtonEvent naming that device). To deskhand's watcher it
is indistinguishable from the person's hand on a mouse."""

from __future__ import annotations

from xhelpers import run
from xlib import Display, mouse_id


def device_click(display: str, x: int, y: int, button: int = 1) -> None:
    """The person's click with the mouse at (x, y): the pointer is warped
    there, then the mouse device presses and releases `button`."""
    run(display, "xdotool", "mousemove", str(x), str(y))
    mouse = mouse_id(display)
    with Display(display) as d:
        for press in (True, False):
            d.device_event(mouse, button=button, press=press)

