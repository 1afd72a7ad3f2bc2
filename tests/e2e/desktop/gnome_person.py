"""The person at a headless GNOME session, and the compositor's own view
of it: a second input device and a screencast of mutter's private D-Bus
APIs (org.gnome.Mutter.RemoteDesktop and .ScreenCast, as
gnome-remote-desktop uses them), outside deskhand and its portals.

Runs under /usr/bin/python3 (Debian's gi) as a child of the test, one JSON
command per line on stdin, one JSON answer per line on stdout:
  {"op": "move", "x": 10, "y": 20}           pointer to desktop pixels
  {"op": "button", "button": 1, "press": true}
  {"op": "keysym", "keysym": 65307, "press": true}
  {"op": "png", "path": "/tmp/x.png"}        the monitor as mutter paints it
  {"op": "idle"}                             IdleMonitor's idle time, ms
"""

import json
import subprocess
import sys

from gi.repository import Gio, GLib

BUS = Gio.bus_get_sync(Gio.BusType.SESSION)
BUTTONS = {1: 0x110, 2: 0x112, 3: 0x111}  # BTN_LEFT, BTN_MIDDLE, BTN_RIGHT


def call(name, path, iface, method, args=None, reply=None):
    return BUS.call_sync(name, path, iface, method, args,
                         GLib.VariantType(reply) if reply else None,
                         Gio.DBusCallFlags.NONE, 10000, None)


class Person:
    def __init__(self):
        rd = "org.gnome.Mutter.RemoteDesktop"
        sc = "org.gnome.Mutter.ScreenCast"
        (self.rd_session,) = call(rd, "/org/gnome/Mutter/RemoteDesktop", rd, "CreateSession",
                                  reply="(o)").unpack()
        session_id = BUS.call_sync(rd, self.rd_session, "org.freedesktop.DBus.Properties", "Get",
                                   GLib.Variant("(ss)", (rd + ".Session", "SessionId")),
                                   GLib.VariantType("(v)"), Gio.DBusCallFlags.NONE, 10000,
                                   None).unpack()[0]
        (self.sc_session,) = call(sc, "/org/gnome/Mutter/ScreenCast", sc, "CreateSession",
                                  GLib.Variant("(a{sv})", ({"remote-desktop-session-id":
                                                            GLib.Variant("s", session_id)},)),
                                  "(o)").unpack()
        (self.stream,) = call(sc, self.sc_session, sc + ".Session", "RecordMonitor",
                              GLib.Variant("(sa{sv})", ("", {"cursor-mode": GLib.Variant("u", 1)})),
                              "(o)").unpack()
        self.node = None
        loop = GLib.MainLoop()

        def added(_conn, _sender, _path, _iface, _signal, params):
            self.node = params.unpack()[0]
            loop.quit()

        BUS.signal_subscribe(None, sc + ".Stream", "PipeWireStreamAdded", self.stream, None,
                             Gio.DBusSignalFlags.NONE, added)
        call(rd, self.rd_session, rd + ".Session", "Start")
        GLib.timeout_add(10000, loop.quit)
        loop.run()
        if self.node is None:
            raise SystemExit("mutter's screencast gave no PipeWire stream")

    def rd(self, method, signature, *args):
        call("org.gnome.Mutter.RemoteDesktop", self.rd_session,
             "org.gnome.Mutter.RemoteDesktop.Session", method, GLib.Variant(signature, args))

    def move(self, x, y):
        self.rd("NotifyPointerMotionAbsolute", "(sdd)", self.stream, float(x), float(y))

    def button(self, button, press):
        self.rd("NotifyPointerButton", "(ib)", BUTTONS[button], press)

    def keysym(self, keysym, press):
        self.rd("NotifyKeyboardKeysym", "(ub)", keysym, press)

    def png(self, path):
        subprocess.run(["gst-launch-1.0", "-q", "pipewiresrc", f"path={self.node}",
                        "num-buffers=1", "!", "videoconvert", "!", "pngenc", "!",
                        "filesink", f"location={path}"], check=True, timeout=20,
                       capture_output=True)

    def idle(self):
        (ms,) = call("org.gnome.Mutter.IdleMonitor", "/org/gnome/Mutter/IdleMonitor/Core",
                     "org.gnome.Mutter.IdleMonitor", "GetIdletime", None, "(t)").unpack()
        return ms


def main():
    person = Person()
    print(json.dumps({"ready": True, "node": person.node}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd.pop("op")
        try:
            result = getattr(person, op)(**cmd)
            print(json.dumps({"ok": True, "result": result}), flush=True)
        except Exception as e:  # noqa: BLE001 - every failure goes back to the test
            print(json.dumps({"ok": False, "error": str(e)}), flush=True)


if __name__ == "__main__":
    main()
