#!/usr/bin/env python3
"""A wire-ops client: deskhand's own WebSocket protocol, with `websockets`.

    python3 examples/wire_ops_client.py [--connection-file FILE] [--out FILE]
                                        [--screenshot FILE.png]

It does the handshake, takes over the desktop (the red frame shows),
launches xterm, clicks into it, types a shell command that writes --out,
checks the file, takes a screenshot of the terminal and closes it.
"""

import argparse
import base64
import json
import os
import shlex
import sys
import time
import uuid

from websockets.sync.client import connect  # pip install websockets


def default_connection_file() -> str:
    """Where `deskhand serve` writes it on Linux, unless told --connection-file."""
    base = (os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("XDG_STATE_HOME")
            or os.path.expanduser("~/.local/state"))
    return os.path.join(base, "deskhand", "endpoint.json")


class Wire:
    """Messages are JSON {type, id, ts, payload}; a reply carries its request's id."""

    def __init__(self, ws):
        self.ws = ws
        hello = json.loads(self.ws.recv())  # deskhand speaks first: HELLO
        print("HELLO:", hello["payload"]["server"], hello["payload"]["screen_resolution"])
        self.send("HELLO_ACK", {})  # required before any request

    def send(self, kind: str, payload: dict) -> str:
        mid = str(uuid.uuid4())
        self.ws.send(json.dumps({"type": kind, "id": mid, "ts": time.time(),
                                 "payload": payload}))
        return mid

    def request(self, kind: str, **payload) -> dict:
        """Sends a request; the reply's payload (events pushed meanwhile are skipped)."""
        mid = self.send(kind, payload)
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == mid:
                break
        if msg["type"] == "ERROR":
            raise RuntimeError(f"{kind}: {msg['payload']['code']}: {msg['payload']['message']}")
        return msg["payload"]


def drive(wire: Wire, out: str, screenshot) -> None:
    if os.path.exists(out):
        os.remove(out)  # what is checked below is this run's file
    # 1. Take over: input and launching apps need it; the person sees the red frame.
    print("takeover:", wire.request("TAKEOVER_REQUEST", on=True))

    # 2. Launch xterm (an installed app: deskhand runs no shell itself) and find its window.
    pid = wire.request("APP_LAUNCH", executable_path="/usr/bin/xterm")["pid"]
    for _ in range(100):
        windows = wire.request("WINDOW_LIST_REQUEST")["windows"]
        mine = [w for w in windows if w["pid"] == pid]
        if mine:
            break
        time.sleep(0.1)
    else:
        sys.exit("xterm's window did not show up")
    window = mine[0]
    x1, y1, x2, y2 = window["bounds"]
    print("window:", window["title"], window["bounds"])

    # 3. Click into it and type a command; coordinates are desktop pixels.
    wire.request("INPUT_ACTION", action="left_click", coordinate=[(x1 + x2) // 2, (y1 + y2) // 2])
    wire.request("INPUT_ACTION", action="type",
                 text=f"echo hello from wire_ops_client.py > {shlex.quote(out)}")
    wire.request("INPUT_ACTION", action="key", key="Return")

    # 4. Verify: the shell wrote the file. Then a screenshot of the terminal.
    for _ in range(100):
        if os.path.exists(out) and open(out).read().endswith("\n"):
            break
        time.sleep(0.1)
    else:
        sys.exit(f"{out} was not written")
    print(f"{out}: {open(out).read().strip()}")
    shot = wire.request("SCREENSHOT_REQUEST", window_id=window["window_id"])
    print(f"screenshot: {shot['width']}x{shot['height']} {shot['mime_type']}")
    if screenshot:
        with open(screenshot, "wb") as f:
            f.write(base64.b64decode(shot["image_base64"]))

    # 5. Close the terminal and end the takeover (hanging up ends it too).
    wire.request("INPUT_ACTION", action="type", text="exit")
    wire.request("INPUT_ACTION", action="key", key="Return")
    wire.request("TAKEOVER_REQUEST", on=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connection-file", default=default_connection_file())
    parser.add_argument("--out", default="/tmp/deskhand-wire-ops-example.txt")
    parser.add_argument("--screenshot", help="where to save a PNG of the terminal")
    args = parser.parse_args()
    with open(args.connection_file) as f:
        conn = json.load(f)  # {"ws": "ws://127.0.0.1:PORT/v1/ws", "token": ..., ...}
    auth = {"Authorization": f"Bearer {conn['token']}"}
    with connect(conn["ws"], additional_headers=auth, max_size=None) as ws:
        drive(Wire(ws), os.path.abspath(args.out), args.screenshot)


if __name__ == "__main__":
    main()
