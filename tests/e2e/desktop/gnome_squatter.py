"""A program of the person's session that takes bus names deskhand relies
on, as any program of the same user may (the attack catalogue's GNOME
rows). Runs under /usr/bin/python3 (Debian's gi); one JSON command per line
on stdin, one JSON answer per line on stdout.

  gnome_squatter.py shell    takes org.gnome.Shell and
                             org.gnome.Mutter.IdleMonitor from gnome-shell
                             (RequestName with REPLACE_EXISTING, which
                             their ALLOW_REPLACEMENT lets through) and
                             answers in the extension's and mutter's place:
                             the frame "intact", no input ever (a huge idle
                             time), and it keeps what it is asked to type.
  gnome_squatter.py engine   takes dev.deskhand.Engine before deskhand
                             starts and asks deskhand's extension for the
                             window list and a frame.

Commands: {"op": "calls"} what was called on it so far;
{"op": "press", "button": "continue"} emits the extension's Pressed signal;
{"op": "ask", "method": "ListWindows", "args": "()"} calls the extension
(through org.gnome.Shell) and says what came back or the error.
"""

import json
import sys
import threading

from gi.repository import Gio, GLib

BUS = Gio.bus_get_sync(Gio.BusType.SESSION)
REPLACE = 0x2  # DBUS_NAME_FLAG_REPLACE_EXISTING
SHELL_IFACE = """<node><interface name="dev.deskhand.Shell1">
  <method name="ShowParts"><arg type="s" direction="in"/></method>
  <method name="HideParts"/>
  <method name="FrameState"><arg type="s" direction="out"/></method>
  <method name="ListWindows"><arg type="s" direction="out"/></method>
  <method name="Focus"><arg type="t" direction="in"/><arg type="b" direction="in"/>
    <arg type="b" direction="out"/></method>
  <method name="CommitText"><arg type="s" direction="in"/><arg type="b" direction="out"/></method>
  <method name="Pointer"><arg type="i" direction="out"/><arg type="i" direction="out"/>
    <arg type="u" direction="out"/></method>
  <signal name="Pressed"><arg type="s"/></signal>
  <property name="Version" type="u" access="read"/>
</interface></node>"""
IDLE_IFACE = """<node><interface name="org.gnome.Mutter.IdleMonitor">
  <method name="GetIdletime"><arg type="t" direction="out"/></method>
</interface></node>"""

calls: list[dict] = []
lock = threading.Lock()


def request_name(name: str) -> int:
    (reply,) = BUS.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus",
                             "org.freedesktop.DBus", "RequestName",
                             GLib.Variant("(su)", (name, REPLACE)), GLib.VariantType("(u)"),
                             Gio.DBusCallFlags.NONE, 10000, None).unpack()
    return reply


def shell_call(_conn, _sender, _path, _iface, method, params, invocation):
    with lock:
        calls.append({"method": method, "args": params.unpack()})
    answers = {
        "FrameState": GLib.Variant("(s)", (json.dumps(
            {"parts": 0, "visible": True, "on_top": True, "placed": []}),)),
        "ListWindows": GLib.Variant("(s)", ("[]",)),
        "Focus": GLib.Variant("(b)", (True,)),
        "CommitText": GLib.Variant("(b)", (True,)),
        "Pointer": GLib.Variant("(iiu)", (0, 0, 0)),
    }
    invocation.return_value(answers.get(method))


def shell_property(_conn, _sender, _path, _iface, _name):
    return GLib.Variant("u", 1)


def idle_call(_conn, _sender, _path, _iface, method, _params, invocation):
    with lock:
        calls.append({"method": method, "args": []})
    invocation.return_value(GLib.Variant("(t)", (10_000_000,)))


def take_shell() -> dict:
    shell = Gio.DBusNodeInfo.new_for_xml(SHELL_IFACE).interfaces[0]
    idle = Gio.DBusNodeInfo.new_for_xml(IDLE_IFACE).interfaces[0]
    BUS.register_object("/dev/deskhand/Shell", shell, shell_call, shell_property, None)
    BUS.register_object("/org/gnome/Mutter/IdleMonitor/Core", idle, idle_call, None, None)
    return {"org.gnome.Shell": request_name("org.gnome.Shell"),
            "org.gnome.Mutter.IdleMonitor": request_name("org.gnome.Mutter.IdleMonitor")}


def ask(method: str, args: str | None = None) -> dict:
    try:
        out = BUS.call_sync("org.gnome.Shell", "/dev/deskhand/Shell", "dev.deskhand.Shell1",
                            method, GLib.Variant(args[0], tuple(args[1])) if args else None, None,
                            Gio.DBusCallFlags.NONE, 10000, None)
        return {"answer": str(out)}
    except GLib.Error as e:
        return {"error": e.message}


def serve(cmd: dict):
    op = cmd["op"]
    if op == "calls":
        with lock:
            return list(calls)
    if op == "press":
        BUS.emit_signal(None, "/dev/deskhand/Shell", "dev.deskhand.Shell1", "Pressed",
                        GLib.Variant("(s)", (cmd["button"],)))
        BUS.flush_sync(None)
        return True
    if op == "ask":
        args = cmd.get("args")
        return ask(cmd["method"], tuple(args) if args else None)
    raise ValueError(f"unknown op {op}")


def commands(loop: GLib.MainLoop) -> None:
    for line in sys.stdin:
        cmd = json.loads(line)
        done = threading.Event()
        out: dict = {}

        def run():
            try:
                out.update(ok=True, result=serve(cmd))
            except Exception as e:  # noqa: BLE001 - every failure goes back to the test
                out.update(ok=False, error=str(e))
            done.set()
            return False

        GLib.idle_add(run)
        done.wait(30)
        print(json.dumps(out), flush=True)
    loop.quit()


def main():
    mode = sys.argv[1]
    if mode == "shell":
        held = take_shell()
    elif mode == "engine":
        held = {"dev.deskhand.Engine": request_name("dev.deskhand.Engine")}
    else:
        raise SystemExit(__doc__)
    print(json.dumps({"ready": True, "held": held, "unique": BUS.get_unique_name()}), flush=True)
    loop = GLib.MainLoop()
    threading.Thread(target=commands, args=(loop,), daemon=True).start()
    loop.run()


if __name__ == "__main__":
    main()
