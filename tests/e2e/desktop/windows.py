"""The Windows desktop of the end-to-end tests: deskhand.exe (built for
x86_64-pc-windows-gnu) in a Wine virtual desktop on an Xvfb display. The
person is played from the X side with xdotool: to Windows that is real
input (not injected), as a person's hand would be. Read back on the X
side too (xdotool, ImageMagick's `import`, xclip for the clipboard Wine
shares with X)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from daemon import Daemon
from desktop.base import Desktop
from desktop.x11 import X11Person
from xhelpers import (REPO, keys_down, missing, pixel_of_import, pointer, pointer_buttons_down,
                      require, run, start_xvfb)

TARGET = REPO / "target" / "x86_64-pc-windows-gnu" / "debug"


def windows_binary(name: str) -> Path:
    """A program of the Windows build (`deskhand`, `deskhand-overlay`)."""
    path = Path(os.environ.get("DESKHAND_WINDOWS_DIR", TARGET)) / f"{name}.exe"
    if not path.is_file():
        missing(f"{path} (build it: cargo build --target x86_64-pc-windows-gnu -p deskhand "
                "-p deskhand-overlay)")
    return path


def windows_unit_tests(crate: str) -> Path:
    """The newest unit-test program of `crate` in the Windows build."""
    built = sorted((TARGET / "deps").glob(f"{crate.replace('-', '_')}-*.exe"),
                   key=lambda p: p.stat().st_mtime)
    if not built:
        missing(f"the unit tests of {crate} (build them: cargo test --no-run "
                f"--target x86_64-pc-windows-gnu -p {crate})")
    return built[-1]


def prefix() -> Path:
    """The Wine prefix the tests run in (made once by tests/wine/prefix)."""
    require("wine", "wineserver", "x86_64-w64-mingw32-gcc")
    out = subprocess.run([str(REPO / "tests" / "wine" / "prefix")], check=True,
                         capture_output=True, text=True, timeout=300)
    return Path(out.stdout.strip().splitlines()[-1])


class WinePerson(X11Person):
    """xdotool on the X display: input Windows sees as a device's (Wine
    reads it from X, so even xdotool's clicks are real to Windows)."""

    def real_click(self, x: int, y: int, button: int = 1) -> None:
        self.click(x, y, button)


class WindowsDesktop(Desktop):
    """A Wine virtual desktop (`size`) on an Xvfb of its own."""

    def __init__(self, size: str = "1280x800"):
        self._xvfb = start_xvfb(size)
        self.x_display = self._xvfb.display
        self.size = tuple(int(v) for v in size.split("x"))
        self.name = "windows"
        self.person = WinePerson(self.x_display)
        self.prefix = prefix()
        self._env = dict(os.environ, DISPLAY=self.x_display, WINEPREFIX=str(self.prefix),
                         WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=", WINEARCH="win64")
        # A Wine server left from another display would open the programs there.
        subprocess.run(["wineserver", "-k"], env=self._env, timeout=30, check=False)
        # every Wine program opens in one virtual desktop of this size
        self.wine("reg", "add", r"HKCU\Software\Wine\Explorer", "/v", "Desktop", "/t", "REG_SZ",
                  "/d", "Default", "/f")
        self.wine("reg", "add", r"HKCU\Software\Wine\Explorer\Desktops", "/v", "Default",
                  "/t", "REG_SZ", "/d", size, "/f")
        self._apps: list[subprocess.Popen] = []

    def wine(self, *argv: str, timeout: float = 60) -> str:
        """Runs a Windows program to its end; its stdout."""
        out = subprocess.run(["wine", *argv], env=self._env, capture_output=True, timeout=timeout)
        assert out.returncode == 0, f"wine {argv}: {out.returncode} {out.stderr[-500:]!r}"
        return out.stdout.decode("utf-8", "replace")

    def start_app(self, *argv: str) -> subprocess.Popen:
        """Starts a Windows program in the desktop, left running."""
        proc = subprocess.Popen(["wine", *argv], env=self._env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        self._apps.append(proc)
        return proc

    def close_apps(self) -> None:
        """Ends the programs `start_app` started."""
        for proc in self._apps:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        self._apps.clear()

    def serve(self, *args: str) -> Daemon:
        """`deskhand.exe serve` on this desktop (paths given as Linux
        paths reach it as Z:\\ paths)."""
        exe = windows_binary("deskhand")
        windows_binary("deskhand-overlay")
        return Daemon(*args, command=["wine", str(exe), "serve"], env=self._env)

    def stop(self) -> None:
        subprocess.run(["wineserver", "-k"], env=self._env, timeout=30, check=False)
        self.close_apps()
        self._xvfb.stop()

    def alive(self) -> bool:
        return subprocess.run(["xdotool", "getmouselocation"], env=self.env(),
                              capture_output=True, timeout=5).returncode == 0

    def assert_gone(self, grace: float = 3.0) -> None:
        deadline = time.monotonic() + grace
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not self.alive(), "the Wine desktop's display is still there"

    def env(self) -> dict:
        return dict(self._env)

    def pointer(self) -> tuple[int, int]:
        return pointer(self.x_display)

    def held_keys(self) -> dict[str, list[int]]:
        return keys_down(self.x_display)

    def held_buttons(self) -> dict[str, list[int]]:
        return pointer_buttons_down(self.x_display)

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        return pixel_of_import(self.x_display, x, y)

    def clipboard(self) -> str:
        """The clipboard as X sees it (Wine shares it with X); "" when it
        holds no text."""
        return run(self.x_display, "xclip", "-o", "-selection", "clipboard", check=False)


def attach(name: str) -> Desktop:
    raise NotImplementedError("a Windows desktop is started by the test (start())")


def start(size: str) -> WindowsDesktop:
    if shutil.which("wine") is None:
        missing("wine (run scripts/install-deps)")
    return WindowsDesktop(size)


def start_dual() -> WindowsDesktop:
    raise NotImplementedError("a Wine virtual desktop has one display")
