"""The Wayland desktop of the end-to-end tests: a private headless GNOME
session (gnome-shell 43 `--headless --wayland`, a virtual monitor) with
its own runtime directory, session bus, empty system bus, PipeWire,
WirePlumber and the desktop portals, and deskhand's GNOME Shell extension
enabled. The person is a second input device and the compositor's own
screencast from mutter's private D-Bus APIs (gnome_person.py); the portal
dialogs are answered through AT-SPI (portal_dialog.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from daemon import Daemon, binary
from desktop.base import CONTINUE_Y, Desktop, Person
from imaging import Image, decode_png
from xhelpers import REPO, missing, poll, require, scratch_dir

SYSTEM_PYTHON = "/usr/bin/python3"
HERE = Path(__file__).resolve().parent
EXTENSION = "deskhand@deskhand.dev"
# The extension's sources: made into its builds and linked by the same
# scripts the packages run.
EXTENSION_SRC = REPO / "installers" / "linux" / "gnome-shell"
SHELL = "org.gnome.Shell"
# The tests' own read-only look at the compositor, apart from deskhand's
# extension (which answers deskhand alone).
PROBE = "gnome-probe@deskhand.test"
PROBE_BUS = ("/dev/deskhand/test/Probe", "dev.deskhand.test.Probe")

SYSTEM_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path={path}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/>
<allow user="*"/></policy>
</busconfig>"""

# A JSON answer of the probe read with GLib, so words stay as they are.
JSON_SCRIPT = """
import sys
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SESSION)
out = bus.call_sync("org.gnome.Shell", sys.argv[1], sys.argv[2], sys.argv[3], None,
                    GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, 10000, None)
print(out.unpack()[0])
"""

# X keysyms of the keys the tests press by name.
KEYSYMS = {"escape": 0xFF1B, "return": 0xFF0D, "ctrl": 0xFFE3, "shift": 0xFFE1, "alt": 0xFFE9,
           "super": 0xFFEB, "tab": 0xFF09, "backspace": 0xFF08}


def keysym(name: str) -> int:
    if name.lower() in KEYSYMS:
        return KEYSYMS[name.lower()]
    if len(name) == 1:
        return ord(name) if ord(name) < 0x100 else 0x1000000 + ord(name)
    raise ValueError(f"no keysym for {name!r}")


class GnomePerson(Person):
    """mutter's RemoteDesktop device: input deskhand did not send. GNOME
    has no other way in for a person here (no uinput), so it serves as
    both the synthetic path and the device (`real_click`)."""

    def __init__(self, env: dict):
        self._proc = subprocess.Popen([SYSTEM_PYTHON, str(HERE / "gnome_person.py")], env=env,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = json.loads(self._proc.stdout.readline() or "{}")
        assert ready.get("ready"), "the GNOME person did not start"

    def _do(self, op: str, **args):
        self._proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self._proc.stdin.flush()
        answer = json.loads(self._proc.stdout.readline())
        assert answer["ok"], f"{op}: {answer.get('error')}"
        return answer["result"]

    def move(self, x: int, y: int) -> None:
        self._do("move", x=x, y=y)

    def click(self, x: int, y: int, button: int = 1) -> None:
        self.move(x, y)
        self._do("button", button=button, press=True)
        self._do("button", button=button, press=False)

    def button_down(self, x: int, y: int, button: int = 1) -> None:
        """The pointer onto (x, y), a moment, then a button held there."""
        self.move(x, y)
        time.sleep(0.25)
        self._do("button", button=button, press=True)

    def button_up(self, button: int = 1) -> None:
        self._do("button", button=button, press=False)

    def key(self, *chords: str) -> None:
        for chord in chords:
            syms = [keysym(k) for k in chord.split("+")]
            for s in syms:
                self._do("keysym", keysym=s, press=True)
            for s in reversed(syms):
                self._do("keysym", keysym=s, press=False)

    def press(self, name: str, hold: float = 0.08) -> None:
        """One key held a moment, as a finger presses it."""
        self._do("keysym", keysym=keysym(name), press=True)
        time.sleep(hold)
        self._do("keysym", keysym=keysym(name), press=False)

    def type(self, text: str) -> None:
        for c in text:
            self._do("keysym", keysym=keysym(c), press=True)
            self._do("keysym", keysym=keysym(c), press=False)

    def real_click(self, x: int, y: int, button: int = 1) -> None:
        # As a hand does: onto the place, a moment, then the click (on a
        # busy machine a press that comes with the pointer's first arrival
        # may reach a WebKit page before it knows the pointer is there).
        self.move(x, y)
        time.sleep(0.25)
        self.click(x, y, button)

    def stop_sharing(self, x: int, y: int) -> None:
        """Clicks GNOME's stop of its screen-sharing indicator at (x, y).
        That ends every screencast, this device's own too: the release
        may find it gone."""
        self.move(x, y)
        self._do("button", button=1, press=True)
        self._proc.stdin.write(json.dumps({"op": "button", "button": 1, "press": False}) + "\n")
        self._proc.stdin.flush()
        self._proc.stdout.readline()

    def png(self, path: str) -> None:
        self._do("png", path=path)

    def idle_ms(self) -> int:
        return self._do("idle")

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.wait(10)


def engines() -> list[str]:
    """The programs the tests' extension trusts to drive the session: the
    deskhand and tray app under test, by their real paths."""
    app = Path(binary()).with_name("deskhand-app")
    return [str(Path(binary()).resolve()), str(app.resolve())]


class Squatter:
    """A program of the session holding bus names deskhand relies on
    (gnome_squatter.py): `shell` takes GNOME Shell's and mutter's, `engine`
    deskhand's engine name."""

    def __init__(self, env: dict, mode: str):
        self._proc = subprocess.Popen([SYSTEM_PYTHON, str(HERE / "gnome_squatter.py"), mode],
                                      env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True)
        self.ready = json.loads(self._proc.stdout.readline() or "{}")
        assert self.ready.get("ready"), "the squatter did not start"
        self.pid = self._proc.pid

    def do(self, op: str, **args):
        self._proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self._proc.stdin.flush()
        answer = json.loads(self._proc.stdout.readline())
        assert answer["ok"], f"{op}: {answer.get('error')}"
        return answer["result"]

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.wait(10)


def x11_sockets_dir() -> None:
    """/tmp/.X11-unix as a booted system has it (systemd-tmpfiles: 1777):
    mutter refuses to start when it is missing or not writable, as on a
    fresh machine where no X server ran yet."""
    sockets = Path("/tmp/.X11-unix")
    sockets.mkdir(exist_ok=True)
    if sockets.stat().st_uid == os.getuid():
        sockets.chmod(0o1777)


class GnomeDesktop(Desktop):
    """A headless GNOME session of the test's own, one monitor of `size`;
    with `xwayland`, XWayland's display for X11 apps (in `DISPLAY`)."""

    def __init__(self, size: str = "1280x800", xwayland: bool = False,
                 no_portals: tuple[str, ...] = ()):
        self.size = tuple(int(v) for v in size.split("x"))
        self.xwayland = xwayland
        self.name = "wayland-0"
        root = Path(scratch_dir("gnome-"))
        self.runtime = root / "run"
        self.home = root / "home"
        for d in (self.runtime, self.home):
            d.mkdir(mode=0o700)
        self._procs: list[subprocess.Popen] = []
        self._env = {k: v for k, v in os.environ.items()
                     if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
        self._env.update(XDG_RUNTIME_DIR=str(self.runtime), HOME=str(self.home),
                         XDG_CURRENT_DESKTOP="GNOME", XDG_SESSION_TYPE="wayland",
                         GDK_BACKEND="wayland", NO_AT_BRIDGE="0")
        self._apps: list[subprocess.Popen] = []
        self.person = None
        if no_portals:
            self._env["XDG_DESKTOP_PORTAL_DIR"] = str(self._portals_without(root, no_portals))
        try:
            self._start_session()
        except BaseException:
            self.stop()
            raise

    def _start_session(self) -> None:
        self._env["DBUS_SYSTEM_BUS_ADDRESS"] = self._bus("system")
        self._env["DBUS_SESSION_BUS_ADDRESS"] = self._bus("session")
        ext = self.home / ".local/share/gnome-shell/extensions"
        ext.mkdir(parents=True)
        self._install_extension(ext / EXTENSION)
        (ext / PROBE).symlink_to(HERE / PROBE)
        self.gsettings("org.gnome.shell", "enabled-extensions", f"['{EXTENSION}', '{PROBE}']")
        self.gsettings("org.gnome.shell", "welcome-dialog-last-shown-version", "'999'")
        self._start_keyring()
        x11_sockets_dir()
        self._spawn("pipewire")
        self._spawn("wireplumber")
        w, h = self.size
        x11 = [] if self.xwayland else ["--no-x11"]
        self._spawn("gnome-shell", "--headless", "--wayland", *x11, "--virtual-monitor",
                    f"{w}x{h}", "--wayland-display", self.name)
        poll(lambda: (self.runtime / self.name).exists(), timeout=30, what="gnome-shell's socket")
        poll(self._extension_up, timeout=30, what="deskhand's GNOME Shell extension")
        self._env["WAYLAND_DISPLAY"] = self.name
        if self.xwayland:
            self._env["DISPLAY"] = poll(self._x_display, timeout=30, what="XWayland's display")
            # mutter's XWayland takes the clients that show its cookie.
            auth = poll(lambda: next(self.runtime.glob(".mutter-Xwaylandauth.*"), None),
                        timeout=10, what="XWayland's authority file")
            self._env["XAUTHORITY"] = str(auth)
        self.person = GnomePerson(self._env)
        # gnome-shell starts in the overview.
        self.person.key("Escape")

    @staticmethod
    def _portals_without(root: Path, interfaces: tuple[str, ...]) -> Path:
        """The system's portal backends as xdg-desktop-portal reads them,
        less `interfaces` (e.g. "ScreenCast"): a desktop whose portal does
        not offer them. xdg-desktop-portal 1.16 picks among backends that
        offer one interface by the order it reads them, which a copy may
        change: GNOME's own backends keep their interfaces, the GTK one
        (the fallback) only the rest."""
        out = root / "portals"
        out.mkdir()
        dropped = {f"org.freedesktop.impl.portal.{i}" for i in interfaces}
        confs = sorted(Path("/usr/share/xdg-desktop-portal/portals").glob("*.portal"))

        def offered(conf: Path) -> list[str]:
            line = next(l for l in conf.read_text().splitlines() if l.startswith("Interfaces="))
            return [i for i in line.split("=", 1)[1].split(";") if i]

        gnome_own = {i for c in confs if c.name != "gtk.portal" for i in offered(c)}
        for conf in confs:
            drop = dropped | (gnome_own if conf.name == "gtk.portal" else set())
            kept = [i for i in offered(conf) if i not in drop]
            lines = [f"Interfaces={';'.join(kept)};" if l.startswith("Interfaces=") else l
                     for l in conf.read_text().splitlines()]
            (out / conf.name).write_text("\n".join(lines) + "\n")
        return out

    def _start_keyring(self) -> None:
        """The session's keychain (gnome-keyring's Secret Service, unlocked
        as at login), where deskhand keeps its token and the portal's
        restore token."""
        log = open(self.runtime / "gnome-keyring-daemon.log", "w")
        keyring = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
            env=self._env, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT)
        keyring.stdin.write(b"deskhand-test-keyring")
        keyring.stdin.close()
        self._procs.append(keyring)
        poll(lambda: "true" in subprocess.run(
                 ["gdbus", "call", "--session", "-d", "org.freedesktop.DBus", "-o",
                  "/org/freedesktop/DBus", "-m", "org.freedesktop.DBus.NameHasOwner",
                  "org.freedesktop.secrets"], env=self._env, capture_output=True, text=True,
                 timeout=10).stdout,
             timeout=20, what="gnome-keyring's Secret Service")

    def keychain_accounts(self) -> list[str]:
        """The accounts of deskhand's items in this session's keychain."""
        out = subprocess.run(["secret-tool", "search", "--all", "service", "deskhand"],
                             env=self._env, capture_output=True, text=True, timeout=20)
        # secret-tool prints the attributes on stderr.
        return [line.split(" = ", 1)[1] for line in (out.stdout + out.stderr).splitlines()
                if line.startswith("attribute.username = ")]

    def _install_extension(self, link: Path) -> None:
        """deskhand's extension in the build this gnome-shell loads, as the
        packages install it (`make-extension`, then `pick`)."""
        builds = self.home / "extension-builds"
        subprocess.run([str(EXTENSION_SRC / "make-extension"), str(builds),
                        *(arg for engine in engines() for arg in ("--engine", engine))],
                       check=True)
        subprocess.run([str(EXTENSION_SRC / "pick")], check=True, env={
            **self._env, "DESKHAND_EXTENSION_BUILDS": str(builds),
            "DESKHAND_EXTENSION_LINK": str(link)})

    def _x_display(self) -> str | None:
        """XWayland's display, once mutter names it in its log."""
        said = re.search(r"Using public X11 display (:\d+)",
                         (self.runtime / "gnome-shell.log").read_text(errors="replace"))
        return said and said.group(1)

    def _bus(self, kind: str) -> str:
        path = self.runtime / f"{kind}_bus"
        args = ["dbus-daemon", "--nofork", "--print-address"]
        if kind == "system":
            conf = self.runtime / "system.conf"
            conf.write_text(SYSTEM_BUS_CONFIG.format(path=path))
            args.append(f"--config-file={conf}")
        else:
            args += ["--session", f"--address=unix:path={path}"]
        log = open(self.runtime / f"{kind}_bus.log", "w")
        self._procs.append(subprocess.Popen(args, env=self._env, stdout=subprocess.PIPE,
                                            stderr=log, text=True))
        self._procs[-1].stdout.readline()
        return f"unix:path={path}"

    def _spawn(self, *argv: str) -> None:
        log = open(self.runtime / f"{Path(argv[0]).name}.log", "w")
        self._procs.append(subprocess.Popen(argv, env=self._env, stdout=log,
                                            stderr=subprocess.STDOUT))

    def gsettings(self, schema: str, key: str, value: str) -> None:
        subprocess.run(["gsettings", "set", schema, key, value], env=self._env, check=True,
                       timeout=30)

    def gdbus(self, path: str, method: str, *args: str) -> str:
        """Calls a method of the shell (gdbus's text answer)."""
        out = subprocess.run(["gdbus", "call", "--session", "-d", SHELL, "-o", path, "-m",
                              method, *args], env=self._env, capture_output=True,
                             text=True, timeout=10)
        assert out.returncode == 0, f"{method}: {out.stderr}"
        return out.stdout.strip()

    def notify(self, summary: str) -> None:
        """A notification (the shell's own: this session runs no
        notification daemon for programs); its banner shows at the top,
        below the top bar."""
        path, iface = PROBE_BUS
        self.gdbus(path, f"{iface}.Notify", summary)

    def probe(self, method: str) -> str:
        path, iface = PROBE_BUS
        return self.gdbus(path, f"{iface}.{method}")

    def _extension_up(self) -> bool:
        try:
            self.gdbus("/dev/deskhand/Shell", "org.freedesktop.DBus.Properties.Get",
                       "dev.deskhand.Shell1", "Version")
            self.probe("Pointer")
            return True
        except AssertionError:
            return False

    def _probe_json(self, method: str):
        out = subprocess.run([SYSTEM_PYTHON, "-c", JSON_SCRIPT, *PROBE_BUS, method],
                             env=self._env, capture_output=True, text=True, timeout=10,
                             check=True)
        return json.loads(out.stdout)

    def windows(self) -> list[dict]:
        """The windows as the compositor has them (the probe's list)."""
        return self._probe_json("ListWindows")

    @property
    def continue_y(self) -> int:
        """Where Continue is on this session's primary monitor: the label
        and buttons go below GNOME's top bar."""
        bar = self._probe_json("TopBar")
        return CONTINUE_Y + bar["y"] + bar["height"]

    def status_menu(self) -> dict | None:
        """deskhand's menu in the top bar as the shell has it: its button's
        `rect` and accessible `name`, whether it is `open`, and then its
        `items` (`label`, `reactive`, `rect`); None when it is not there."""
        return self._probe_json("StatusMenu")

    def start_app(self, *argv: str) -> subprocess.Popen:
        proc = subprocess.Popen(list(argv), env=self._env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        self._apps.append(proc)
        return proc

    def close_apps(self) -> None:
        for proc in self._apps:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        self._apps.clear()

    def squatter(self, mode: str) -> Squatter:
        """A program of this session taking bus names (`shell`, `engine`)."""
        return Squatter(self._env, mode)

    def new_person(self) -> None:
        """A new device for the person (after one was ended)."""
        self.person.stop()
        self.person = GnomePerson(self._env)

    def serve(self, *args: str) -> Daemon:
        """`deskhand serve` in this session; its config and state kept in
        the session's home across starts, as the person's are (the
        screencast grant's restore token is named after the config
        directory in the keychain)."""
        home = {"XDG_STATE_HOME": str(self.home / ".local" / "state"),
                "XDG_CONFIG_HOME": str(self.home / ".config")}
        return Daemon(*args, command=[binary(), "serve"], env=dict(self._env, **home))

    def answer_portal(self, what: str = "share", remote: bool = True,
                      timeout: float = 20) -> dict:
        """The person answers the portal's next dialog (`share` or
        `cancel`, with "Allow remote interaction" set to `remote`; `allow`
        or `deny` for gnome-shell's own access question, which the person
        answers with a click); what the dialog was and what was done."""
        out = subprocess.run([SYSTEM_PYTHON, str(HERE / "portal_dialog.py"), what, "--remote",
                              "yes" if remote else "no", "--timeout", str(timeout)],
                             env=self._env, capture_output=True, text=True, timeout=timeout + 30)
        lines = out.stdout.strip().splitlines()
        answered = json.loads(lines[-1]) if lines else {"dialog": None,
                                                         "stderr": out.stderr[-500:]}
        if "at" in answered:
            # gnome-shell's own question: the person clicks the button.
            self.person.real_click(*answered["at"])
            answered["pressed"] = answered["button"]
        return answered

    def stop(self) -> None:
        self.close_apps()
        if self.person is not None:
            self.person.stop()
        for proc in reversed(self._procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in reversed(self._procs):
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()

    def alive(self) -> bool:
        return self._procs[-1].poll() is None and self._extension_up()

    def assert_gone(self, grace: float = 3.0) -> None:
        deadline = time.monotonic() + grace
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not self.alive(), "gnome-shell is still there"

    def env(self) -> dict:
        return dict(self._env)

    def pointer(self) -> tuple[int, int]:
        x, y, _ = self.probe("Pointer").strip("()").split(", ")
        return int(x), int(y)

    def held_keys(self) -> dict[str, list[int]]:
        raise NotImplementedError("GNOME tells no client which keys are down")

    def held_buttons(self) -> dict[str, list[int]]:
        buttons = int(self.probe("Pointer").strip("()").split(", ")[2].split()[-1])
        return {"pointer": [b + 1 for b in range(5) if buttons & (1 << b)]}

    def screen(self) -> Image:
        """The monitor as mutter paints it (what deskhand's extension
        draws included)."""
        path = scratch_dir("gnome-shot-") + "/screen.png"
        self.person.png(path)
        with open(path, "rb") as f:
            return decode_png(f.read())

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        return self.screen().pixel(x, y)


def attach(name: str) -> Desktop:
    raise NotImplementedError("a GNOME session is started by the test (start())")


def start(size: str = "1280x800", xwayland: bool = False,
          no_portals: tuple[str, ...] = ()) -> GnomeDesktop:
    require("gnome-shell", "pipewire", "wireplumber", "dbus-daemon", "gsettings", "gdbus",
            "gnome-keyring-daemon", "secret-tool",
            "gst-launch-1.0")
    if not Path("/usr/libexec/xdg-desktop-portal-gnome").exists():
        missing("xdg-desktop-portal-gnome (run scripts/install-deps)")
    if shutil.which(SYSTEM_PYTHON) is None:
        missing(SYSTEM_PYTHON)
    if xwayland:
        require("Xwayland")
    return GnomeDesktop(size, xwayland, no_portals)


def start_dual() -> GnomeDesktop:
    raise NotImplementedError("the headless GNOME session has one virtual monitor")
