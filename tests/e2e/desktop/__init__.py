"""The end-to-end harness's per-platform layer: starting a desktop, playing
the person on it, reading back what reached it (base.py says what each
must offer). `DESKHAND_E2E_DESKTOP` picks the implementation: `x11` (the
default, Xvfb and Xorg); Windows and Wayland add theirs with their
backends. What only exists on one desktop (XInput devices, SHAPE, XKB
layouts) stays in that platform's helpers, its tests marked `only(...)`."""

from __future__ import annotations

import importlib
import os

import pytest

from desktop.base import CONTINUE_Y, Desktop, Person, stop_button

KIND = os.environ.get("DESKHAND_E2E_DESKTOP", "x11")
_impl = importlib.import_module(f"desktop.{KIND}")

__all__ = ["CONTINUE_Y", "Desktop", "KIND", "Person", "attach", "only", "start", "start_dual",
           "stop_button"]


def attach(name: str) -> Desktop:
    """The desktop called `name` (one a daemon serves, or a test started)."""
    return _impl.attach(name)


def start(size: str = "1280x800") -> Desktop:
    """A desktop of the test's own with one display of `size`."""
    return _impl.start(size)


def start_dual() -> Desktop:
    """A desktop of the test's own with two displays side by side: 1280x800
    at (0, 0), primary, and 1024x768 at (1280, 0)."""
    return _impl.start_dual()


def only(*kinds: str):
    """Marks a test that exists only on these desktops."""
    return pytest.mark.skipif(KIND not in kinds, reason=f"only on {', '.join(kinds)}")
