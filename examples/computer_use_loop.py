#!/usr/bin/env python3
"""The Anthropic computer tool loop, with deskhand as the computer.

    python3 examples/computer_use_loop.py [--connection-file FILE] [--out FILE]

The model answers with `tool_use` blocks; each goes as it came to
deskhand's POST /v1/computer/anthropic, whose answer is the `tool_result`
block to send back. With ANTHROPIC_API_KEY set, Claude drives (plain HTTP
to the Messages API); without it, a scripted "model" sends a screenshot,
a click, the typing and the Enter key. The task: run a shell command in
the terminal this script opens, which writes --out.
"""

import argparse
import json
import os
import shlex
import subprocess
import tempfile
import time
import urllib.request

TOOL_VERSION, BETA = "computer_20251124", "computer-use-2025-11-24"


def default_connection_file() -> str:
    """Where `deskhand serve` writes it on Linux, unless told --connection-file."""
    base = (os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("XDG_STATE_HOME")
            or os.path.expanduser("~/.local/state"))
    return os.path.join(base, "deskhand", "endpoint.json")


def post(url: str, body, headers: dict):
    """POST JSON; the JSON answer and the answer's headers."""
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"Content-Type": "application/json", **headers})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.load(answer), answer.headers


def claude(tool: dict, key: str, model: str):
    """The real model: the Messages API with the computer tool."""
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01", "anthropic-beta": BETA}
    return lambda messages: post("https://api.anthropic.com/v1/messages", {
        "model": model, "max_tokens": 1024, "tools": [tool], "messages": messages}, headers)[0]


def scripted(tool: dict, command: str):
    """A stand-in model: its replies, one per turn. It knows the terminal fills the screen."""
    centre = [tool["display_width_px"] // 2, tool["display_height_px"] // 2]
    steps = [{"action": "screenshot"},
             {"action": "left_click", "coordinate": centre},
             {"action": "type", "text": command},
             {"action": "key", "text": "Return"}]
    replies = [{"content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "computer",
                             "input": step}]} for i, step in enumerate(steps)]
    replies.append({"content": [{"type": "text", "text": "Done."}]})
    return lambda messages: replies.pop(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connection-file", default=default_connection_file())
    parser.add_argument("--out", default="/tmp/deskhand-computer-use-example.txt")
    parser.add_argument("--model", default="claude-opus-4-5")
    args = parser.parse_args()
    out = os.path.abspath(args.out)
    if os.path.exists(out):
        os.remove(out)  # what is checked below is this run's file
    with open(args.connection_file) as f:
        conn = json.load(f)  # {"http": "http://127.0.0.1:PORT", "token": ..., "display": ...}
    auth = {"Authorization": f"Bearer {conn['token']}"}

    # 1. Open a terminal that fills deskhand's screen; wait until its shell runs.
    with tempfile.TemporaryDirectory() as tmp:
        started = os.path.join(tmp, "started")
        terminal = subprocess.Popen(
            ["xterm", "-maximized", "-e", "sh", "-c", 'touch "$0" && exec sh', started],
            env=dict(os.environ, DISPLAY=conn["display"]))
        while not os.path.exists(started):
            if terminal.poll() is not None:
                raise SystemExit("xterm did not start")
            time.sleep(0.1)

    # 2. The tool definition, sized for deskhand's screenshots.
    url = f"{conn['http']}/v1/computer/anthropic/tool?version={TOOL_VERSION}"
    with urllib.request.urlopen(urllib.request.Request(url, headers=auth)) as answer:
        tool = json.load(answer)
    command = f"echo hello from computer_use_loop.py > {shlex.quote(out)}"
    key = os.environ.get("ANTHROPIC_API_KEY")
    model = claude(tool, key, args.model) if key else scripted(tool, command)

    # 3. The loop: tool_use blocks go to deskhand, its tool_result blocks go back.
    #    No X-Deskhand-Session header: every call goes to this token's default session.
    messages = [{"role": "user", "content": f"In the terminal, run: {command}"}]
    session = None
    for _ in range(20):
        reply = model(messages)
        messages.append({"role": "assistant", "content": reply["content"]})
        uses = [block for block in reply["content"] if block["type"] == "tool_use"]
        if not uses:
            break
        results = []
        for block in uses:
            result, headers = post(f"{conn['http']}/v1/computer/anthropic", block, auth)
            session = headers["X-Deskhand-Session"]  # the session deskhand used
            said = [p["text"] for p in result["content"] if p["type"] == "text"]
            print(json.dumps(block["input"]), "->", said if result.get("is_error") else "ok")
            results.append(result)
        messages.append({"role": "user", "content": results})
    print("model:", " ".join(b["text"] for b in reply["content"] if b["type"] == "text"))

    # 4. End the session: the red frame goes now (else after 60 s without input).
    if session:
        urllib.request.urlopen(urllib.request.Request(
            f"{conn['http']}/v1/computer/session", method="DELETE",
            headers={**auth, "X-Deskhand-Session": session}))

    # 5. Verify: the shell in the terminal wrote the file.
    for _ in range(100):
        if os.path.exists(out) and open(out).read().endswith("\n"):
            break
        time.sleep(0.1)
    terminal.terminate()
    if not os.path.exists(out):
        raise SystemExit(f"{out} was not written")
    print(f"{out}: {open(out).read().strip()}")


if __name__ == "__main__":
    main()
