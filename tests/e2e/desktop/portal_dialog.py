"""The person answering the desktop portal's dialog (xdg-desktop-portal-
gnome's "Screen Share" / "Remote Desktop") through AT-SPI, as a screen
reader user would: pick the first monitor, set "Allow remote interaction",
then Share or Cancel. Runs under /usr/bin/python3 (pyatspi) in the
session's environment:

    portal_dialog.py share|cancel|allow|deny [--remote yes|no] [--timeout S]

(allow and deny find the button of gnome-shell's access question, such
as "Allow Applications to Take Screenshots?", for the person to click)

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


def shell_question():
    """gnome-shell's own access question (the Access portal: "Allow
    Applications to Take Screenshots?"), if one is showing."""
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        if app is None or app.name != "gnome-shell":
            continue
        for node in descendants(app):
            if node.getRole() == pyatspi.ROLE_DIALOG and \
                    node.getState().contains(pyatspi.STATE_SHOWING):
                return node
    return None


def access_button(dialog, allow: bool) -> dict:
    """Where the question's Allow (or Deny) button is on screen: the
    person clicks it (St's buttons take no AT-SPI action)."""
    label = "allow" if allow else "deny"
    words = [n.name for n in descendants(dialog)
             if n.getRole() == pyatspi.ROLE_LABEL and n.name]
    for node in descendants(dialog):
        if node.getRole() == pyatspi.ROLE_PUSH_BUTTON and \
                (node.name or "").replace("_", "").lower().startswith(label):
            e = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
            return {"dialog": words[0] if words else "", "button": label,
                    "at": [e.x + e.width // 2, e.y + e.height // 2]}
    raise SystemExit(f"no {label} button in the question {words!r}")


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
    ap.add_argument("what", choices=["share", "cancel", "allow", "deny"])
    ap.add_argument("--remote", choices=["yes", "no"], default="yes")
    ap.add_argument("--timeout", type=float, default=20)
    args = ap.parse_args()
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        if args.what in ("allow", "deny"):
            question = shell_question()
            if question is not None:
                print(json.dumps(access_button(question, args.what == "allow")))
                return
            time.sleep(0.1)
            continue
        frame = dialog()
        if frame is not None:
            print(json.dumps(answer(frame, args.what == "share", args.remote == "yes")))
            return
        time.sleep(0.1)
    print(json.dumps({"dialog": None}))
    sys.exit(1)


if __name__ == "__main__":
    main()
