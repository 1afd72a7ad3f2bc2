#!/usr/bin/env python3
"""An MCP agent with the official MCP Python SDK (`pip install "mcp>=2.3"`).

    python3 examples/mcp_agent.py [--connection-file FILE] [--out FILE]

It opens a one-line "Run a command" dialog (zenity) on deskhand's desktop,
reads the dialog's accessibility tree, types a shell command into its text
field, clicks OK by its element token, and checks that the command ran.
It talks Streamable HTTP to the running `deskhand serve`: the URL and the
token are in its connection file.
"""

import argparse
import asyncio
import json
import os
import shlex
import subprocess
import sys
import time

import httpx2  # installed with mcp
import mcp
from mcp.client.streamable_http import streamable_http_client


def default_connection_file() -> str:
    """Where `deskhand serve` writes it on Linux, unless told --connection-file."""
    base = (os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("XDG_STATE_HOME")
            or os.path.expanduser("~/.local/state"))
    return os.path.join(base, "deskhand", "endpoint.json")


async def call(client, tool: str, **args) -> dict:
    """One tool call; its structured result, or the tool's error text."""
    result = await client.call_tool(tool, args)
    if result.is_error:
        raise RuntimeError(f"{tool}: {result.content[0].text}")
    return result.structured_content


async def read_tree(client, session: str, pid: int) -> dict:
    """The window's accessibility tree (the app shows up on the
    accessibility bus shortly after its window appears, so ask again)."""
    for _ in range(100):
        try:
            state = await call(client, "get_window_state", session_id=session, pid=pid,
                               include_screenshot=False)
            if "elements" in state:
                return state
            problem = state["tree_error"]["message"]
        except RuntimeError as e:  # no window yet
            problem = str(e)
        await asyncio.sleep(0.2)
    raise RuntimeError(f"no accessibility tree: {problem} (deskhand and the app need the "
                       "same session bus, with at-spi2-core)")


async def agent(conn: dict, out: str) -> None:
    if os.path.exists(out):
        os.remove(out)  # what is checked below is this run's file
    # 1. Open the app: zenity asks for one line of text and prints it; sh runs it.
    env = dict(os.environ, DISPLAY=conn["display"])
    dialog = subprocess.Popen(["zenity", "--entry", "--title", "Run a command",
                               "--text", "Command:"], env=env, stdout=subprocess.PIPE)
    subprocess.Popen(["sh"], stdin=dialog.stdout)
    try:
        headers = {"Authorization": f"Bearer {conn['token']}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            async with mcp.Client(streamable_http_client(conn["mcp"], http_client=http)) as c:
                # 2. A session. "headless" (the default) acts through the accessibility
                #    tree only: no pointer, no keys, no red frame on the screen.
                session = (await call(c, "start_session"))["session_id"]

                # 3. Read the dialog's tree: one row per element, each with a token.
                state = await read_tree(c, session, dialog.pid)
                print(state["tree_text"])
                field = next(e for e in state["elements"] if e["role"] == "text_field")
                ok = next(e for e in state["elements"]
                          if e["role"] == "button" and e["label"] == "OK")

                # 4. Type a command into the text field, then click OK, both by token.
                command = f"echo hello from mcp_agent.py > {shlex.quote(out)}"
                typed = await call(c, "type_text", session_id=session,
                                   element_token=field["element_token"], text=command)
                print("typed:", typed["effect"], "| readback:", typed.get("readback"))
                clicked = await call(c, "click", session_id=session,
                                     element_token=ok["element_token"])
                print("clicked OK:", clicked["effect"], "via", clicked["path"])
                await call(c, "end_session", session_id=session)
    finally:
        if dialog.poll() is None:
            dialog.terminate()

    # 5. Verify: the shell ran the command, so the file holds its line.
    for _ in range(100):
        if os.path.exists(out) and open(out).read().endswith("\n"):
            break
        time.sleep(0.1)
    else:
        sys.exit(f"{out} was not written")
    print(f"{out}: {open(out).read().strip()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connection-file", default=default_connection_file())
    parser.add_argument("--out", default="/tmp/deskhand-mcp-example.txt")
    args = parser.parse_args()
    with open(args.connection_file) as f:
        conn = json.load(f)  # {"mcp": "http://127.0.0.1:PORT/mcp", "token": ..., ...}
    asyncio.run(agent(conn, os.path.abspath(args.out)))


if __name__ == "__main__":
    main()
