"""What every desktop the end-to-end tests run on must offer: starting one,
playing the person on it, and reading back what reached it. Each platform
(x11.py; Windows and Wayland with their backends) implements these two
classes; the tests use only them for what is not about one platform."""

from __future__ import annotations

from abc import ABC, abstractmethod

# The overlay's Continue button on the primary display (overlay/src/paint.rs):
# under the label at the top centre; the same on every desktop.
CONTINUE_Y = 6 + 32 + 8 + 16


def stop_button(width: int) -> tuple[int, int, int, int]:
    """The overlay's "Stop agents" button (x, y, width, height) on a display
    `width` pixels wide: right of Continue ("Let the agent continue"),
    which is centred; 16 pixels a character, 24 of padding."""
    go_width = len("Let the agent continue") * 16 + 24
    x = width // 2 - go_width // 2 + go_width + 16
    return x, CONTINUE_Y - 16, len("Stop agents") * 16 + 24, 32


class Person(ABC):
    """The person at the desktop, played from outside deskhand.

    Two kinds of input, as the desktop tells them apart: `move`, `click`,
    `key` and `type` go through the desktop's synthetic-input path (what
    any other program can send: on X11 XTEST), which hands control back
    like the person's hand but is no proof of one; `real_click` comes from
    an input device, the only kind deskhand's own Continue button and
    dialogs accept."""

    @abstractmethod
    def move(self, x: int, y: int) -> None:
        """Moves the pointer to (x, y), global desktop pixels."""

    @abstractmethod
    def click(self, x: int, y: int, button: int = 1) -> None:
        """Moves there and clicks `button`."""

    @abstractmethod
    def key(self, *chords: str) -> None:
        """Presses and releases each chord, e.g. `ctrl+c`, `Escape`."""

    @abstractmethod
    def type(self, text: str) -> None:
        """Types `text` into the focused window."""

    @abstractmethod
    def real_click(self, x: int, y: int, button: int = 1) -> None:
        """A click with the mouse device itself at (x, y)."""

    def click_continue(self, width: int) -> None:
        """Clicks Continue on the paused indicator of a primary display
        `width` pixels wide."""
        self.real_click(width // 2, CONTINUE_Y)


class Desktop(ABC):
    """A desktop: one deskhand serves (`--virtual`), or one the test started
    (`start`, `start_dual`). `name` is what deskhand's `--display` takes
    and its ready line reports."""

    name: str
    person: Person

    @abstractmethod
    def stop(self) -> None:
        """Ends a desktop the test started."""

    @abstractmethod
    def alive(self) -> bool:
        """Whether the desktop still answers."""

    @abstractmethod
    def assert_gone(self, grace: float = 3.0) -> None:
        """Fails unless the desktop is gone within `grace` seconds (a
        virtual desktop deskhand started must end with it)."""

    @abstractmethod
    def env(self) -> dict:
        """The environment for a program started on this desktop."""

    @abstractmethod
    def pointer(self) -> tuple[int, int]:
        """Where the pointer is, global desktop pixels."""

    @abstractmethod
    def held_keys(self) -> dict[str, list[int]]:
        """Keys held down, by input device."""

    @abstractmethod
    def held_buttons(self) -> dict[str, list[int]]:
        """Pointer buttons held down, by input device."""

    def any_button_down(self) -> bool:
        return any(self.held_buttons().values())

    @abstractmethod
    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        """A screen pixel as another program captures it (what deskhand
        draws included)."""
