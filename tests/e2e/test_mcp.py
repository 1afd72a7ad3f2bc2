"""MCP with the official Python SDK 2.x as the client, over Streamable HTTP
(`deskhand serve`) and stdio (`deskhand mcp --virtual`), in the SDK's
default mode (2026-07-28, stateless) and its legacy mode (initialize and
sessions): the tools, a takeover that types a command into xterm, targets,
headless refusals, the person taking over, the clipboard and app scope."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json

import pytest

from daemon import Daemon
from desktop import attach
from imaging import decode_png
from mcp_client import MODES, Stdio, ToolError, http, run, window_id
from xhelpers import App, XTerm, poll, run as xrun, unique_title

TRANSPORTS = ("http", "stdio")
SHELL = ["env", "PS1=$ ", "bash", "--norc", "--noprofile"]
XTERM_CTRL_V = "XTerm*VT100.translations: #override Ctrl <Key>v: insert-selection(CLIPBOARD)"

TOOLS = {"start_session", "get_session_state", "end_session", "list_windows",
         "get_window_state", "screenshot", "click", "double_click", "right_click", "type_text",
         "press_key", "hotkey", "scroll", "drag", "move_cursor", "bring_to_front",
         "clipboard_read", "clipboard_write", "list_notifications", "dismiss_notification",
         "invoke_notification_action", "health_report", "computer", "set_value"}


@contextlib.asynccontextmanager
async def connect(transport: str, mode: str, daemon, *stdio_args: str):
    """(session, display): the shared daemon over HTTP, or a standalone
    `deskhand mcp --virtual` over stdio."""
    if transport == "http":
        async with http(daemon, mode) as s:
            try:
                yield s, daemon.display
            finally:
                await s.end()
    else:
        proc = Stdio("--virtual", "1280x800", *stdio_args)
        async with proc.connect(mode) as s:
            yield s, proc.display()


both = pytest.mark.parametrize("transport,mode", [(t, m) for t in TRANSPORTS for m in MODES])


async def in_thread(fn, *args):
    return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


@both
def test_tools_are_listed_with_contract_schemas(daemon, transport, mode):
    async def body():
        async with connect(transport, mode, daemon) as (s, display):
            # The first answer says which desktop is driven: a standalone
            # `deskhand mcp` names its own virtual one.
            instructions = s.client.instructions or ""
            assert "start_session" in instructions, instructions
            if transport == "stdio":
                assert f"virtual desktop it started (X display {display})" in instructions
            else:
                assert "deskhand mcp" not in instructions, instructions
            tools = (await s.client.list_tools()).tools
            assert {t.name for t in tools} == TOOLS
            for t in tools:
                schema = t.input_schema
                assert schema["type"] == "object" and "$ref" not in json.dumps(schema), t.name
                assert len(json.dumps(schema)) < 12000
            reads = {t.name for t in tools if t.annotations and t.annotations.read_only_hint}
            assert {"list_windows", "screenshot", "get_session_state"} <= reads
            assert "click" not in reads and "type_text" not in reads
            health = await s.call("health_report")
            assert health["schema"] == "deskhand/doctor" and health["ready"] is True, health
            # The same report as `doctor --json`: the daemon's session bus
            # points at nothing, so the optional atspi backend says why.
            atspi = next(b for b in health["backends"] if b["id"] == "atspi")
            assert atspi["status"] == "unavailable" and atspi["required"] is False, atspi
            assert atspi["reason_code"] in ("atspi_bus_not_advertised", "atspi_bus_unreachable")
            # The clipboard as this daemon's settings have it (off).
            clip = next(c for c in health["capabilities"] if c["name"] == "clipboard_read")
            assert clip["reason_code"] == "clipboard_off", clip
    run(body())


@both
def test_a_takeover_session_types_a_command_into_xterm(daemon, apps, tmp_path, transport, mode):
    out = tmp_path / "mcp-typed.txt"

    async def body():
        async with connect(transport, mode, daemon) as (s, display):
            term = XTerm(display, command=SHELL, cwd=str(tmp_path))
            apps.append(term)
            state = await s.start(input="takeover")
            assert state["input"] == "takeover" and state["takeover"]["on"] is True, state
            windows = (await s.call("list_windows"))["windows"]
            wid = window_id(windows, term.title)
            x, y = term.rect().center()
            r = await s.call("click", {"window_id": wid, "x": x, "y": y})
            assert r["effect"] == "sent" and r["window_id"] == wid, r
            assert [st["step"] for st in r["steps"]] == ["resolve", "input"]
            r = await s.call("type_text", {"window_id": wid, "text": f"echo mcp-ok > {out}"})
            assert r["typed_characters"] == len(f"echo mcp-ok > {out}")
            r = await s.call("press_key", {"window_id": wid, "key": "Return",
                                           "observe": {"screenshot": True}})
            assert r["observe"]["screenshot"]["mime_type"] == "image/png", r
            shot = await s.raw("screenshot", {"window_id": wid})
            image = decode_png(base64.b64decode(shot.content[1].data))
            meta = shot.structured_content["image"]
            assert (image.width, image.height) == (meta["width"], meta["height"]), meta
            await in_thread(lambda: poll(lambda: out.exists() and out.read_text() == "mcp-ok\n",
                                         timeout=10, what=f"{out} to hold mcp-ok"))
    run(body())


def test_bring_to_front_then_type_text_lands_in_the_window_brought_to_front(daemon, apps,
                                                                           tmp_path):
    """50 times, alternating two xterms: bring one to front and type into
    it at once. The window manager's focus change is waited for, so no key
    goes to the window that had the focus before."""
    files = [tmp_path / "a.txt", tmp_path / "b.txt"]

    async def body():
        async with connect("http", MODES[0], daemon) as (s, _):
            terms = [XTerm(daemon.display, pos=pos, command=["sh", "-c", f"cat > {f}"])
                     for pos, f in zip(("+0+0", "+600+300"), files)]
            apps.extend(terms)
            await s.start(input="takeover")
            windows = (await s.call("list_windows"))["windows"]
            ids = [window_id(windows, t.title) for t in terms]
            sent: list[list[str]] = [[], []]
            for i in range(50):
                k = i % 2
                line = f"{i:02d}-the-quick-brown-fox-jumps-over-the-lazy-dog"
                await s.call("bring_to_front", {"window_id": ids[k]})
                r = await s.call("type_text", {"window_id": ids[k], "text": line})
                assert r["typed_characters"] == len(line), r
                await s.call("press_key", {"window_id": ids[k], "key": "Return"})
                sent[k].append(line)
            for f, lines in zip(files, sent):
                want = "".join(f"{line}\n" for line in lines)
                await in_thread(lambda: poll(lambda: f.exists() and f.read_text() == want,
                                             timeout=10, what=f"{f.name} to hold its lines"))
    run(body())


@both
def test_the_computer_tool_types_a_command_through_frame_pixels(daemon, apps, tmp_path,
                                                                transport, mode):
    out = tmp_path / "mcp-computer.txt"

    async def body():
        async with connect(transport, mode, daemon) as (s, display):
            term = XTerm(display, command=SHELL, cwd=str(tmp_path))
            apps.append(term)
            await s.start(input="takeover")
            half = {"max_width": 640, "max_height": 400}
            shot = await s.raw("computer", {"action": {"type": "screenshot"}, **half})
            frame = shot.structured_content["frame"]
            assert (frame["width"], frame["height"]) == (640, 400), frame
            image = decode_png(base64.b64decode(shot.content[1].data))
            assert (image.width, image.height) == (640, 400)
            cx, cy = term.rect().center()
            r = await s.call("computer", {"actions": [
                {"type": "click", "x": cx // 2, "y": cy // 2},
                {"type": "type", "text": f"echo computer-ok > {out}"},
                {"type": "keypress", "keys": ["ENTER"]}], **half})
            assert len(r["timings_ms"]) == 3 and r["frame"]["width"] == 640, r
            px, py = attach(display).pointer()
            assert abs(px - cx) <= 2 and abs(py - cy) <= 2, "the click landed through the frame"
            await in_thread(lambda: poll(
                lambda: out.exists() and out.read_text() == "computer-ok\n",
                timeout=10, what=f"{out} to hold computer-ok"))
            e = await s.error("computer", {"action": {"type": "click", "x": 640, "y": 10}, **half})
            assert e["code"] == "desktop_coordinate_out_of_bounds", e
            assert e["failed_action_index"] == 0
    run(body())


@both
def test_two_xterms_are_an_ambiguous_target(daemon, apps, transport, mode):
    async def body():
        async with connect(transport, mode, daemon) as (s, display):
            apps.extend([XTerm(display, pos="+0+0"), XTerm(display, pos="+600+300")])
            await s.start()
            e = await s.error("get_window_state", {"app": "xterm"})
            assert e["code"] == "ambiguous_target" and e["disposition"]["retry"] == "never", e
            assert len(e["candidates"]) >= 2
            assert all(set(c) >= {"window_id", "pid", "app"} for c in e["candidates"]), e
            e = await s.error("get_window_state")
            assert e["code"] == "ambiguous_window_target" and e["candidates"], e
            e = await s.error("get_window_state", {"app": "no-such-app-anywhere"})
            assert e["code"] == "window_target_not_found", e
            first = (await s.call("list_windows"))["windows"][0]["window_id"]
            one = await s.call("get_window_state", {"window_id": first})
            assert one["tree_error"]["code"] == "unsupported" and one["screenshot"]["width"] > 0
    run(body())


@both
def test_headless_refuses_input_before_anything_is_sent(daemon, apps, transport, mode):
    async def body():
        async with connect(transport, mode, daemon) as (s, display):
            state = await s.start(input="headless")
            assert state["input"] == "headless" and state["takeover"]["on"] is False
            before = attach(display).pointer()
            target = (before[0] + 200, before[1] + 100)
            for tool, args in [("click", {"x": target[0], "y": target[1]}),
                               ("type_text", {"text": "nope"}),
                               ("press_key", {"key": "Return"}),
                               ("move_cursor", {"x": target[0], "y": target[1]})]:
                e = await s.error(tool, args)
                assert e["code"] == "requires_takeover", (tool, e)
            assert attach(display).pointer() == before, "a headless act moved the pointer"
    run(body())


@both
def test_the_person_moving_the_mouse_stops_a_long_type_text(daemon, apps, tmp_path,
                                                             transport, mode):
    out = tmp_path / "long.txt"
    text = "".join(chr(ord("a") + i % 26) for i in range(40000))

    async def body():
        async with connect(transport, mode, daemon) as (s, display):
            term = XTerm(display, command=["bash", "-c", f"stty -icanon -echo; exec cat > {out}"])
            apps.append(term)
            await s.start(input="takeover")
            x, y = term.rect().center()
            await s.call("click", {"x": x, "y": y})
            typing = asyncio.create_task(s.raw("type_text", {"text": text}))
            await in_thread(lambda: poll(lambda: out.exists() and out.stat().st_size > 20,
                                         timeout=10, what="typing to start"))
            await in_thread(xrun, display, "xdotool", "mousemove", "1100", "700")
            r = await typing
            assert r.is_error, r.structured_content
            e = r.structured_content["error"]
            assert e["code"] == "user_took_over" and e["effect"] == "stopped", e
            assert e["paused_reason"] == "pointer_moved", e
            typed = e["typed_characters"]
            assert 0 < typed < len(text), typed
            await in_thread(lambda: poll(lambda: out.stat().st_size == typed, timeout=10,
                                         what=f"xterm to have received {typed} characters"))
            assert out.read_text() == text[:typed]
            state = await s.call("get_session_state")
            assert state["takeover"]["paused"] is True, state
            e = await s.error("press_key", {"key": "Return"})
            assert e["code"] == "user_took_over" and e["effect"] == "refused", e
    run(body())


@pytest.fixture(scope="module")
def clipboard_daemon():
    d = Daemon("--virtual=1280x800", "--enable-clipboard")
    yield d
    d.terminate()


@pytest.mark.parametrize("transport,mode", [(t, m) for t in TRANSPORTS for m in MODES])
def test_clipboard_write_then_paste_into_xterm(clipboard_daemon, apps, tmp_path, transport,
                                               mode):
    out = tmp_path / "pasted.txt"
    words = "pasted through deskhand's MCP"

    async def body():
        async with connect(transport, mode, clipboard_daemon, "--enable-clipboard") as (s,
                                                                                         display):
            term = XTerm(display, command=["bash", "-c", f"stty -icanon -echo; exec cat > {out}"],
                         xrm=XTERM_CTRL_V)
            apps.append(term)
            await s.start(input="takeover")
            r = await s.call("clipboard_write", {"text": words})
            assert r["length"] == len(words)
            x, y = term.rect().center()
            await s.call("click", {"x": x, "y": y})
            await s.call("hotkey", {"keys": ["ctrl", "v"]})
            await in_thread(lambda: poll(lambda: out.exists() and out.read_text() == words,
                                         timeout=10, what="the clipboard pasted into xterm"))
            e = await s.error("clipboard_read")
            assert e["code"] == "capability_not_consented", e
    run(body())


@pytest.mark.parametrize("mode", MODES)
def test_a_policy_for_one_app_refuses_a_click_on_another(tmp_path, apps, mode):
    policy = tmp_path / "consent.json"
    policy.write_text(json.dumps({"takeover": True, "apps": ["XTerm"]}))
    d = Daemon("--virtual=1280x800", "--consent", str(policy))
    try:
        async def body():
            async with http(d, mode) as s:
                term = XTerm(d.display, pos="+0+0")
                title = unique_title("deskhand-xclock")
                clock = App(d.display, ["xclock", "-title", title, "-geometry", "200x200+700+400"],
                            title)
                apps.extend([term, clock])
                with pytest.raises(ToolError) as refused:
                    await s.start(input="takeover", apps=["XTerm", "XClock"])
                assert refused.value.error["code"] == "capability_not_consented"
                assert "XClock" in refused.value.error["message"]
                state = await s.start(input="takeover", apps=["XTerm"])
                assert state["apps"] == ["XTerm"] and state["takeover"]["on"], state
                titles = [w["title"] for w in (await s.call("list_windows"))["windows"]]
                assert term.title in titles and title not in titles, titles
                before = attach(d.display).pointer()
                cx, cy = clock.rect().center()
                e = await s.error("click", {"x": cx, "y": cy})
                assert e["code"] == "capability_not_consented", e
                assert attach(d.display).pointer() == before, "the refused click moved the pointer"
                tx, ty = term.rect().center()
                assert (await s.call("click", {"x": tx, "y": ty}))["effect"] == "sent"
                await s.end()
        run(body())
    finally:
        d.terminate()


@pytest.mark.parametrize("mode", MODES)
def test_deskhand_mcp_relays_to_the_daemon_of_its_display(daemon, apps, tmp_path, mode):
    """One desktop, one engine: `deskhand mcp --display` beside `serve`
    relays, so there is one overlay and the daemon's audit log has it all."""
    out = tmp_path / "relayed.txt"
    proc = Stdio("--display", daemon.display, "--connection-file", str(daemon.connection_file))

    async def body():
        async with proc.connect(mode) as s:
            term = XTerm(daemon.display, command=SHELL, cwd=str(tmp_path))
            apps.append(term)
            state = await s.start(input="takeover")
            assert state["takeover"]["indicator"] is True, state
            x, y = term.rect().center()
            await s.call("click", {"x": x, "y": y})
            await s.call("type_text", {"text": f"echo relayed > {out}"})
            await s.call("press_key", {"key": "Return"})
            await in_thread(lambda: poll(lambda: out.exists() and out.read_text() == "relayed\n",
                                         timeout=10, what=f"{out} to hold relayed"))
            overlays = [p for p in daemon.descendants()
                        if "deskhand-overlay" in open(f"/proc/{p}/cmdline").read()]
            assert len(overlays) == 1, overlays
            await s.end()
    run(body())
    log = proc.stderr()
    assert "relaying MCP to the running deskhand daemon" in log, log
    spoken = "2026-07-28" if mode == "auto" else "2025-11-25"
    assert f"the client speaks this MCP revision version=\"{spoken}\"" in log, log
    assert not proc.audit_log.exists(), "the relay opened an engine of its own"
    records = [json.loads(line) for line in daemon.audit_log.read_text().splitlines()]
    mine = [r for r in records if r.get("session") == state_id(records)]
    assert any(r["op"] == "type_text" for r in mine), mine[-5:]


def state_id(records: list[dict]) -> str:
    """The last MCP session in the audit log."""
    return [r["session"] for r in records if str(r.get("session", "")).startswith("mcp-")][-1]


def test_the_host_revokes_an_mcp_session_on_the_control_pipe():
    """session.revoke ends the takeover at once and for good; the host sees
    the session start and end."""
    d = Daemon("--virtual=800x600", control=True)
    try:
        async def body():
            async with http(d, "legacy") as s:
                state = await s.start(input="takeover")
                sid = state["session_id"]
                started = d.next_event(skip=("session.ended",))
                while started.get("session") != sid:
                    started = d.next_event(skip=("session.ended",))
                assert started["event"] == "session.started" and started["protocol"] == "mcp"
                d.control({"method": "session.revoke", "params": {"session": sid}})
                ack = d.next_event(skip=("session.started", "session.ended", "takeover.paused"))
                assert ack == {"event": "ack", "method": "session.revoke", "session": sid}
                now = await s.call("get_session_state")
                assert now["takeover"]["on"] is False and now["takeover"]["reason"] == "revoked"
                e = await s.error("click", {"x": 10, "y": 10})
                assert e["code"] == "requires_takeover", e
                with pytest.raises(ToolError) as again:
                    await s.start(input="takeover")
                assert again.value.error["code"] in ("capability_not_consented",), again.value
                await s.end()
                ended = d.next_event(skip=("session.started",))
                while ended.get("session") != sid:
                    ended = d.next_event(skip=("session.started",))
                assert ended["event"] == "session.ended"
        run(body())
    finally:
        assert d.terminate() == 0
