"""The X11 desktop of the end-to-end tests: Xvfb or Xorg with the dummy
driver, the person played with xdotool (XTEST) and the mouse device itself
(person.py), read back with xdotool, xinput and ImageMagick's `import`."""

from __future__ import annotations

import os

from desktop.base import Desktop, Person
from person import device_click
from xhelpers import (assert_display_gone, display_alive, keys_down, pixel_of_import, pointer,
                      pointer_buttons_down, run, start_xorg_dummy, start_xvfb)


class X11Person(Person):
    def __init__(self, display: str):
        self.display = display

    def move(self, x: int, y: int) -> None:
        run(self.display, "xdotool", "mousemove", str(x), str(y))

    def click(self, x: int, y: int, button: int = 1) -> None:
        run(self.display, "xdotool", "mousemove", str(x), str(y), "click", str(button))

    def key(self, *chords: str) -> None:
        run(self.display, "xdotool", "key", *chords)

    def type(self, text: str) -> None:
        run(self.display, "xdotool", "type", "--", text)

    def real_click(self, x: int, y: int, button: int = 1) -> None:
        device_click(self.display, x, y, button)


class X11Desktop(Desktop):
    def __init__(self, name: str, server=None):
        self.name = name
        self.person = X11Person(name)
        self._server = server

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()

    def alive(self) -> bool:
        return display_alive(self.name)

    def assert_gone(self, grace: float = 3.0) -> None:
        assert_display_gone(self.name, grace)

    def env(self) -> dict:
        return dict(os.environ, DISPLAY=self.name)

    def pointer(self) -> tuple[int, int]:
        return pointer(self.name)

    def held_keys(self) -> dict[str, list[int]]:
        return keys_down(self.name)

    def held_buttons(self) -> dict[str, list[int]]:
        return pointer_buttons_down(self.name)

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        return pixel_of_import(self.name, x, y)


def attach(name: str) -> X11Desktop:
    return X11Desktop(name)


def start(size: str) -> X11Desktop:
    server = start_xvfb(size)
    return X11Desktop(server.display, server)


def start_dual() -> X11Desktop:
    server = start_xorg_dummy()
    return X11Desktop(server.display, server)
