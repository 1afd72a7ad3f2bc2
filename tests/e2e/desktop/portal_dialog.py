"""The person answering the desktop portal's dialog (xdg-desktop-portal-
gnome's "Screen Share" / "Remote Desktop") through AT-SPI, as a screen
reader user would: pick the first monitor, set "Allow remote interaction",
then Share or Cancel. Runs under /usr/bin/python3 (pyatspi) in the
session's environment:

    portal_dialog.py share|cancel [--remote yes|no] [--timeout S]

Prints what it did as JSON; exit 1 when no dialog came."""

import argparse
import json
import sys
import time

import pyatspi

APP = "xdg-desktop-portal-gnome"


def descendants(acc):
    for i in range(acc.childCount):
        child = acc.getChildAtIndex(i)
        if child is None:
            continue
        yield child
        yield from descendants(child)


def dialog():
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        if app is None or app.name != APP:
            continue
        for j in range(app.childCount):
            frame = app.getChildAtIndex(j)
            if frame is not None and frame.getState().contains(pyatspi.STATE_VISIBLE):
                return frame
    return None


def press(acc):
    acc.queryAction().doAction(0)


def gone(frame, timeout: float = 5) -> None:
    """Waits until the answered dialog is off screen (the next one must
    not be mistaken for it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if not frame.getState().contains(pyatspi.STATE_VISIBLE):
                return
        except Exception:  # noqa: BLE001 - a destroyed dialog is gone
            return
        time.sleep(0.05)


def answer(frame, share: bool, remote: bool) -> dict:
    done = {"dialog": frame.name}
    nodes = list(descendants(frame))
    for node in nodes:
        role = node.getRole()
        if role == pyatspi.ROLE_LIST and share:
            inner = list(descendants(node))
            items = [n for n in inner if n.getRole() == pyatspi.ROLE_LIST_ITEM]
            # the monitors' list (the other holds the remote-interaction switch)
            if items and not any(n.getRole() == pyatspi.ROLE_CHECK_BOX for n in inner):
                node.querySelection().selectChild(0)
                press(items[0]) if items[0].queryAction().nActions else None
                done["picked"] = items[0].name
        if role == pyatspi.ROLE_CHECK_BOX and "remote" in (node.name or "").lower():
            checked = node.getState().contains(pyatspi.STATE_CHECKED)
            if checked != remote:
                press(node)
            done["remote"] = remote
    label = "_Share" if share else "_Cancel"
    deadline = time.monotonic() + 5
    while True:
        buttons = [n for n in descendants(frame)
                   if n.getRole() == pyatspi.ROLE_PUSH_BUTTON and (n.name or "").startswith(label)]
        ready = [b for b in buttons if b.getState().contains(pyatspi.STATE_SENSITIVE)]
        if ready:
            press(ready[0])
            done["pressed"] = label.strip("_")
            gone(frame)
            return done
        if time.monotonic() > deadline:
            raise SystemExit(f"no sensitive {label} button in {frame.name!r}")
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["share", "cancel"])
    ap.add_argument("--remote", choices=["yes", "no"], default="yes")
    ap.add_argument("--timeout", type=float, default=20)
    args = ap.parse_args()
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        frame = dialog()
        if frame is not None:
            print(json.dumps(answer(frame, args.what == "share", args.remote == "yes")))
            return
        time.sleep(0.1)
    print(json.dumps({"dialog": None}))
    sys.exit(1)


if __name__ == "__main__":
    main()
