"""Playing the person with a real input device: a button press that comes
from the X server's own mouse device (not one of the XTEST devices that
`xdotool` and every other program use), through XTEST's device form
(XTestFakeDeviceButtonEvent naming that device). To deskhand's watcher it
is indistinguishable from the person's hand on a mouse."""

from __future__ import annotations

from xhelpers import run
from xlib import Display, mouse_id

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


def device_click(display: str, x: int, y: int, button: int = 1) -> None:
    """The person's click with the mouse at (x, y): the pointer is warped
    there, then the mouse device presses and releases `button`."""
    run(display, "xdotool", "mousemove", str(x), str(y))
    mouse = mouse_id(display)
    with Display(display) as d:
        for press in (True, False):
            d.device_event(mouse, button=button, press=press)


def click_continue(display: str, width: int) -> None:
    """The person clicks Continue on the paused indicator of a display
    `width` pixels wide."""
    device_click(display, width // 2, CONTINUE_Y)
