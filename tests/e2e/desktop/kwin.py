"""A headless KWin (KDE Plasma's compositor, `kwin_wayland --virtual`) of
the test's own, with a session bus of its own that starts no services
(so no desktop portals: KWin alone). What KWin itself says of its windows
comes from a script of the test's, printed into KWin's log."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from desktop.sway import SESSION_BUS_CONFIG
from xhelpers import poll, require, scratch_dir


class KWin:
    """kwin_wayland on a virtual output of `size`."""

    def __init__(self, size: str = "1280x800"):
        require("kwin_wayland", "dbus-daemon", "gdbus")
        self.runtime = Path(scratch_dir("kwin-"))
        self.runtime.chmod(0o700)
        (self.runtime / "home").mkdir()
        self._procs: list[subprocess.Popen] = []
        bus = self.runtime / "session_bus"
        conf = self.runtime / "session_bus.conf"
        conf.write_text(SESSION_BUS_CONFIG.format(path=bus))
        self._start(["dbus-daemon", "--nofork", "--print-address", f"--config-file={conf}"],
                    stdout=subprocess.PIPE, text=True).stdout.readline()
        self.env = {"XDG_RUNTIME_DIR": str(self.runtime), "HOME": str(self.runtime / "home"),
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "DBUS_SESSION_BUS_ADDRESS": f"unix:path={bus}"}
        # The packaged binary carries cap_sys_resource, which a plain
        # user (or a container) may not be given: a copy has none.
        kwin = self.runtime / "kwin_wayland"
        shutil.copy(shutil.which("kwin_wayland"), kwin)
        w, h = size.split("x")
        self.log = self.runtime / "kwin.log"
        self._start([str(kwin), "--virtual", "--width", w, "--height", h, "--socket",
                     "wayland-kwin", "--no-lockscreen", "--no-global-shortcuts",
                     "--no-kactivities"], env=self.env, stdout=open(self.log, "w"),
                    stderr=subprocess.STDOUT)
        poll(lambda: (self.runtime / "wayland-kwin").exists(), timeout=30,
             what="KWin's socket")
        poll(lambda: self._on_bus("org.kde.KWin"), timeout=30, what="KWin on the session bus")
        self.env["WAYLAND_DISPLAY"] = "wayland-kwin"

    def _start(self, argv: list[str], **kw) -> subprocess.Popen:
        self._procs.append(subprocess.Popen(argv, **kw))
        return self._procs[-1]

    def _on_bus(self, name: str) -> bool:
        return "true" in self.gdbus("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                    "org.freedesktop.DBus.NameHasOwner", name, check=False)

    def gdbus(self, dest: str, path: str, method: str, *args: str, check: bool = True) -> str:
        out = subprocess.run(["gdbus", "call", "--session", "-d", dest, "-o", path, "-m",
                              method, *args], env=self.env, capture_output=True, text=True,
                             timeout=10)
        assert out.returncode == 0 or not check, f"{method}: {out.stderr}"
        return out.stdout.strip() + out.stderr.strip()

    def spawn(self, *argv: str, env: dict | None = None, **kw) -> subprocess.Popen:
        return self._start(list(argv), env=dict(self.env, **(env or {})), **kw)

    def run_script(self, body: str) -> str:
        """Runs `body` as a KWin script of the test's own and waits for
        it; what it printed (`say(text)`), as the rest of its line."""
        self._scripts = getattr(self, "_scripts", 0) + 1
        marker = f"DESKHAND-TEST-{self._scripts}-{os.getpid()}"
        script = self.runtime / f"{marker}.js"
        script.write_text(f"function say(t) {{ print('{marker} ' + t); }}\n{body}\n"
                          "say('done');\n")
        said = self.gdbus("org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting.loadScript",
                          str(script), marker)
        sid = "".join(c for c in said.split(",")[0] if c.isdigit())
        if not self.gdbus("org.kde.KWin", f"/Scripting/Script{sid}", "org.kde.kwin.Script.run",
                          check=False).startswith("()"):
            self.gdbus("org.kde.KWin", f"/{sid}", "org.kde.kwin.Script.run")

        def printed():
            lines = [line.split(marker, 1)[1].strip()
                     for line in self.log.read_text(errors="replace").splitlines()
                     if marker in line]
            return lines if "done" in lines else None

        try:
            return poll(printed, timeout=5, what="KWin running the test's script")[0]
        finally:
            self.gdbus("org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting.unloadScript",
                       marker, check=False)

    def windows(self) -> list[dict]:
        """KWin's own list, from a script of the test's: each window's
        caption, pid, frame geometry and whether it is active."""
        return json.loads(self.run_script(
            "const all = workspace.windowList ? workspace.windowList() : workspace.clientList();\n"
            "const act = workspace.activeWindow !== undefined ? workspace.activeWindow"
            " : workspace.activeClient;\n"
            "say(JSON.stringify(all.map(w => ({title: String(w.caption), pid: w.pid, "
            "frame: [w.frameGeometry.x, w.frameGeometry.y, w.frameGeometry.width, "
            "w.frameGeometry.height], active: w === act}))));"))

    def stop(self) -> None:
        for p in reversed(self._procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
