"""The bench's reference: a window's accessibility tree walked with pyatspi,
as Python agents on Linux read it (role, name, states, extents and
children of every element, one call after another).

    pyatspi_walk.py PID TITLE ROUNDS

Prints one JSON line: {"elements": N, "ms": [one per round]}.
"""

import json
import sys
import time

import pyatspi


def find_frame(pid, title):
    for app in pyatspi.Registry.getDesktop(0):
        if app is None or app.get_process_id() != pid:
            continue
        for frame in app:
            if frame is not None and frame.name == title:
                return frame
    return None


def walk(node):
    count = 1
    node.getRole()
    _ = node.name
    states = node.getState()
    if states.contains(pyatspi.STATE_SHOWING):
        try:
            node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        except NotImplementedError:
            pass
    for child in node:
        if child is not None:
            count += walk(child)
    return count


def main():
    pid, title, rounds = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    frame = find_frame(pid, title)
    if frame is None:
        print(json.dumps({"error": f"no window {title!r} of {pid}"}))
        return 1
    times, elements = [], 0
    for _ in range(rounds):
        started = time.perf_counter()
        elements = walk(frame)
        times.append((time.perf_counter() - started) * 1000.0)
    print(json.dumps({"elements": elements, "ms": times}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
