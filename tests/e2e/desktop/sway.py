"""A headless sway (wlroots) session of the test's own, for what KDE and
the wlroots desktops share: the wlr layer shell the red frame is drawn
on. sway refuses to run as root, so as root (CI) it runs as `nobody`, and
so does every client the test starts in it (the socket is that user's).
The screen is read with `grim` (wlr-screencopy); the person's mouse is a
pointer device of its own (tests/fixtures/wlr_pointer.py, the wlr
virtual-pointer protocol): without one the seat has no pointer at all."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from imaging import Image, decode_png
from xhelpers import REPO, poll, require, scratch_dir

USER = "nobody"
SESSION_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={path}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""
RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"


class Sway:
    """sway on a headless output of `size` pixels at `scale` (1.5: a
    1920x1200 output is 1280x800 logical units, as on a KDE laptop at
    150%)."""

    def __init__(self, size: str = "1280x800", scale: float = 1):
        require("sway", "swaymsg", "grim")
        self.size = tuple(int(v) for v in size.split("x"))
        self.scale = scale
        self.runtime = Path(scratch_dir("sway-"))
        as_root = os.getuid() == 0
        # The scratch base is the test run's (root's): let the user in.
        if as_root:
            os.chmod(self.runtime.parent, 0o755)
            shutil.chown(self.runtime, user=USER)
        self.runtime.chmod(0o700)
        config = self.runtime / "config"
        w, h = self.size
        # A plain blue desktop: what the frame leaves uncovered shows it.
        config.write_text(f"output HEADLESS-1 resolution {w}x{h} position 0 0 "
                          f"scale {scale} bg #336699 solid_color\n")
        config.chmod(0o644)
        self.env = {"XDG_RUNTIME_DIR": str(self.runtime), "PATH": "/usr/bin:/bin",
                    "HOME": str(self.runtime)}
        self._log = open(self.runtime / "sway.log", "w")
        self._proc = subprocess.Popen(
            self.as_user("sway", "-c", str(config)),
            env=dict(self.env, WLR_BACKENDS="headless", WLR_RENDERER="pixman",
                     WLR_LIBINPUT_NO_DEVICES="1"),
            stdout=self._log, stderr=subprocess.STDOUT)
        socket = poll(lambda: next(self.runtime.glob("wayland-*[0-9]"), None), timeout=20,
                      what="sway's socket")
        self.env["WAYLAND_DISPLAY"] = socket.name
        self.env["SWAYSOCK"] = str(poll(lambda: next(self.runtime.glob("sway-ipc.*"), None),
                                        timeout=10, what="sway's IPC socket"))
        self._mouse = self.spawn("/usr/bin/python3", str(REPO / "tests/fixtures/wlr_pointer.py"),
                                 env={"POINTER_EXTENT": f"{round(w / scale)}x{round(h / scale)}"},
                                 stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
        assert self._mouse.stdout.readline().strip() == "ready", "no pointer device"

    def as_user(self, *argv: str) -> list[str]:
        """`argv` as the session's user."""
        return [RUNUSER, "-u", USER, "--", *argv] if os.getuid() == 0 else list(argv)

    def program(self, path: str) -> str:
        """A copy of `path` the session's user may run."""
        copy = self.runtime / Path(path).name
        shutil.copy(path, copy)
        if os.getuid() == 0:
            shutil.chown(copy, user=USER)
        return str(copy)

    def spawn(self, *argv: str, env: dict | None = None, **kw) -> subprocess.Popen:
        """`argv` as a client of this session."""
        full = dict(self.env, **(env or {}))
        return subprocess.Popen(self.as_user("env", *[f"{k}={v}" for k, v in full.items()],
                                             *argv), **kw)

    def swaymsg(self, *args: str) -> str:
        out = subprocess.run(self.as_user("env", f"SWAYSOCK={self.env['SWAYSOCK']}",
                                          "swaymsg", *args),
                             capture_output=True, text=True, timeout=10)
        assert out.returncode == 0, f"swaymsg {args}: {out.stdout} {out.stderr}"
        return out.stdout

    def _pointer(self, line: str) -> None:
        self._mouse.stdin.write(line + "\n")
        self._mouse.stdin.flush()
        assert self._mouse.stdout.readline().strip() == "ok", line

    def click(self, x: int, y: int) -> None:
        """The person's mouse onto (x, y) (logical units), a moment, then
        a left click."""
        self._pointer(f"move {x} {y}")
        time.sleep(0.1)
        self._pointer("press")
        self._pointer("release")

    def screen(self) -> Image:
        shot = self.runtime / "screen.png"
        subprocess.run(self.as_user("env", *[f"{k}={v}" for k, v in self.env.items()],
                                    "grim", "-s", str(self.scale), str(shot)),
                       check=True, timeout=10)
        return decode_png(shot.read_bytes())

    def session_bus(self) -> str:
        """A session bus for deskhand in this session (sway starts none)
        that starts no services: a desktop with no portals at all. Its
        address."""
        path = self.runtime / "session_bus"
        conf = self.runtime / "session_bus.conf"
        conf.write_text(SESSION_BUS_CONFIG.format(path=path))
        self._bus = subprocess.Popen(
            ["dbus-daemon", "--nofork", "--print-address", f"--config-file={conf}"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self._bus.stdout.readline()
        return f"unix:path={path}"

    def tree(self) -> dict:
        """sway's own tree of containers (`swaymsg -t get_tree`)."""
        return json.loads(self.swaymsg("-t", "get_tree"))

    def stop(self) -> None:
        if getattr(self, "_bus", None) is not None:
            self._bus.kill()
        self._mouse.kill()
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._log.close()
