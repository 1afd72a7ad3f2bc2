"""The accessibility tree through the MCP Python SDK and the wire op
A11Y_TREE_REQUEST: a GTK 3 form and a 500-row list
(tests/fixtures/a11y_form.py) on deskhand's own virtual desktop, with a session bus of the test's own (dbus-daemon) that gives
GTK and deskhand the AT-SPI bus. Reads are checked against the fixture's
own widget allocations; headless acts against what the app did (the file
its Save button writes) and the pointer that must not move."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from daemon import Daemon
from desktop import attach
from imaging import decode_png
from mcp_client import http, run, window_id
from xhelpers import REPO, a11y_env, missing, poll, require, scratch_dir

FIXTURE = REPO / "tests" / "fixtures" / "a11y_form.py"
FORM = "deskhand a11y form"
LIST = "deskhand a11y list"
SECRET = "hunter2-secret"


class Desk:
    """A session bus, deskhand on a virtual desktop using it, and the GTK
    fixture app on that desktop."""

    def __init__(self):
        require("dbus-daemon", "xdotool")
        if not Path("/usr/share/dbus-1/services/org.a11y.Bus.service").exists():
            missing("at-spi2-core (org.a11y.Bus.service)")
        self.tmp = Path(scratch_dir("a11y-"))
        run_dir = self.tmp / "run"
        run_dir.mkdir(mode=0o700)
        self.bus_proc = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--print-address=1",
             f"--address=unix:path={self.tmp}/bus"],
            stdout=subprocess.PIPE, text=True)
        self.bus = self.bus_proc.stdout.readline().strip()
        env = {"DBUS_SESSION_BUS_ADDRESS": self.bus, "XDG_RUNTIME_DIR": str(run_dir)}
        self.daemon = Daemon("--virtual=1280x800", env=env)
        self.display = self.daemon.display
        self.saved = self.tmp / "saved.txt"
        self.bounds_path = self.tmp / "bounds.json"
        app_env = {**a11y_env(self.display, self.bus), **env}
        self.app_env, self.others = app_env, []
        self.app = subprocess.Popen(
            ["/usr/bin/python3", str(FIXTURE), "--saved", str(self.saved),
             "--bounds", str(self.bounds_path), "--rows", "500"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=app_env, text=True)
        line = self.app.stdout.readline()
        if not line:
            pytest.fail("the GTK fixture exited before it was ready (python3-gi, GTK 3?)")
        self.pid = json.loads(line)["pid"]

    def bounds(self) -> dict:
        """The fixture's widget bounds, as GTK allocated them."""
        if self.bounds_path.exists():
            self.bounds_path.unlink()
        os.kill(self.pid, signal.SIGUSR1)
        poll(self.bounds_path.exists, what="the fixture to write its bounds")
        return json.loads(self.bounds_path.read_text())

    def launch(self, *argv: str) -> subprocess.Popen:
        """Another app on the desktop and the bus, closed with the fixture."""
        app = subprocess.Popen(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=self.app_env)
        self.others.append(app)
        return app

    def add_widget(self) -> None:
        os.kill(self.pid, signal.SIGUSR2)

    def close(self) -> None:
        for other in self.others:
            other.terminate()
            other.wait(10)
        self.app.terminate()
        self.app.wait(10)
        self.daemon.terminate()
        self.bus_proc.terminate()
        self.bus_proc.wait(10)


@pytest.fixture(scope="module")
def desk():
    d = Desk()
    yield d
    d.close()


def rows(state: dict, role: str, label: str) -> list[dict]:
    return [e for e in state["elements"] if e["role"] == role and e["label"] == label]


def one(state: dict, role: str, label: str) -> dict:
    found = rows(state, role, label)
    assert len(found) == 1, f"{role} {label!r}: {found} in\n{state.get('tree_text', '')[:2000]}"
    return found[0]


def near(frame: dict, alloc: list[int], slack: int = 2) -> bool:
    got = [frame["x"], frame["y"], frame["width"], frame["height"]]
    return all(abs(a - b) <= slack for a, b in zip(got, alloc))


async def form_state(s, **args) -> dict:
    windows = (await s.call("list_windows"))["windows"]
    return await s.call("get_window_state", {"window_id": window_id(windows, FORM),
                                             "include_screenshot": False, **args})


def test_a_full_read_lists_the_form_with_the_fixtures_bounds(desk):
    async def body():
        async with http(desk.daemon, "legacy") as s:
            await s.start()
            state = await poll_async(lambda: form_state(s))
            bounds = desk.bounds()
            for role, label in (("text_field", "Name"), ("button", "Save"),
                                ("check_box", "Subscribe"), ("password_text", "Password")):
                row = one(state, role, label)
                assert row["element_token"] == f"{state['snapshot_id']}:{row['element_index']}"
                assert near(row["frame"], bounds[label]), (row, bounds[label])
            assert "value" not in one(state, "password_text", "Password")
            assert SECRET not in json.dumps(state)
            assert '[' in state["tree_text"] and '"Save"' in state["tree_text"]
            again = await form_state(s)
            assert again["snapshot_id"] == state["snapshot_id"], "an unchanged window keeps it"
    run(body())


async def poll_async(fn, timeout: float = 20.0):
    """`fn()` once the fixture's tree is there (GTK registers on the bus
    shortly after its windows map)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await fn()
        except AssertionError:  # ToolError too
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.3)


def test_a_skeleton_of_the_list_is_much_smaller_and_drills_down(desk):
    async def body():
        async with http(desk.daemon, "legacy") as s:
            await s.start()
            windows = (await s.call("list_windows"))["windows"]
            target = {"window_id": window_id(windows, LIST), "include_screenshot": False}
            full = await poll_async(lambda: s.call("get_window_state", target))
            skeleton = await s.call("get_window_state", {**target, "skeleton": True})
            full_bytes, skel_bytes = len(json.dumps(full)), len(json.dumps(skeleton))
            print(f"list window: {full['window_elements']} elements; full read "
                  f"{len(full['elements'])} rows {full_bytes} B; skeleton "
                  f"{len(skeleton['elements'])} rows {skel_bytes} B")
            assert full["window_elements"] > 1000
            assert full["truncated"] is True and len(full["elements"]) == 250
            assert len(skeleton["elements"]) <= 10 and skel_bytes * 10 < full_bytes
            assert skeleton["skeleton"] is True and skeleton["snapshot_id"] == full["snapshot_id"]
            lst = next(e for e in skeleton["elements"] if e["role"] == "list")
            assert lst["descendant_count"] >= 1000
            region = await s.call("get_window_state", {**target, "root": lst["element_token"],
                                                       "max_elements": 20})
            assert region["root"] == lst["element_token"]
            assert region["elements"][0]["element_index"] == lst["element_index"]
            labels = [e["label"] for e in region["elements"]]
            assert "Row 0" in labels and len(region["elements"]) == 20, labels
    run(body())


def test_a_headless_click_on_a_token_presses_save_without_the_pointer(desk):
    async def body():
        async with http(desk.daemon, "legacy") as s:
            started = await s.start()
            assert started["input"] == "headless"
            state = await poll_async(lambda: form_state(s))
            name = one(state, "text_field", "Name")
            typed = "Ada Lovelace ü ✓"
            set_value = await s.call("set_value", {"element_token": name["element_token"],
                                                   "value": typed})
            assert set_value["readback"] == "match" and set_value["effect"] == "confirmed"
            assert set_value["verified"] is True and set_value["path"] == "accessibility"
            if desk.saved.exists():
                desk.saved.unlink()
            before = attach(desk.display).pointer()
            save = one(state, "button", "Save")
            clicked = await s.call("click", {"element_token": save["element_token"]})
            assert clicked["path"] == "accessibility" and clicked["took_cursor"] is False
            assert clicked["action"] == "click" and "diff" in clicked
            poll(desk.saved.exists, what="the Save button to write its file")
            assert desk.saved.read_text() == typed
            assert attach(desk.display).pointer() == before, "a headless click moved the pointer"
    run(body())


def test_the_password_is_never_listed_read_or_written(desk):
    async def body():
        async with http(desk.daemon, "legacy") as s:
            await s.start()
            state = await poll_async(lambda: form_state(s, include_screenshot=True))
            skeleton = await form_state(s, skeleton=True)
            assert not [e for e in skeleton["elements"] if e["role"] == "password_text"]
            password = one(state, "password_text", "Password")
            e = await s.error("set_value", {"element_token": password["element_token"],
                                            "value": "overwritten"})
            assert e["code"] == "secure_field", e
            e = await s.error("type_text", {"element_token": password["element_token"],
                                            "text": "more"})
            assert e["code"] == "secure_field", e
            assert desk.bounds()["password_changed"] is False
            # The screenshot has the password entry blacked out.
            r = await s.raw("get_window_state", {"window_id": state["window"]["window_id"]})
            image = next(c for c in r.content if c.type == "image")
            img = decode_png(base64.b64decode(image.data))
            frame, shot = password["frame"], r.structured_content["screenshot"]["frame"]
            cx = frame["x"] + frame["width"] // 2 - shot["x"]
            cy = frame["y"] + frame["height"] // 2 - shot["y"]
            assert img.pixel(cx, cy) == (0, 0, 0)
            assert img.pixel(cx, frame["y"] - shot["y"] - 4) != (0, 0, 0)
    run(body())
    assert SECRET not in desk.daemon.audit_log.read_text()


def test_marks_number_the_save_button_and_its_mark_clicks_it(desk):
    async def body():
        async with http(desk.daemon, "legacy") as s:
            await s.start()
            await poll_async(lambda: form_state(s))
            windows = (await s.call("list_windows"))["windows"]
            r = await s.raw("screenshot", {"window_id": window_id(windows, FORM), "marks": True})
            assert not r.is_error, r
            marks = r.structured_content["marks"]
            save = next(m for m in marks if m["role"] == "button" and m["label"] == "Save")
            bounds = desk.bounds()
            assert near(save["frame"], bounds["Save"])
            img = decode_png(base64.b64decode(next(c for c in r.content if c.type == "image").data))
            shot = r.structured_content["image"]["frame"]
            # The box's outline is drawn on the button's edge.
            edge = img.pixel(save["frame"]["x"] - shot["x"] + save["frame"]["width"] // 2,
                             save["frame"]["y"] - shot["y"] + save["frame"]["height"] - 1)
            assert edge not in ((255, 255, 255), (0, 0, 0)), edge
            if desk.saved.exists():
                desk.saved.unlink()
            await s.call("click", {"element_token": save["element_token"]})
            poll(desk.saved.exists, what="the Save button to write its file")
    run(body())


def wire_tree(c, window: str) -> dict | None:
    """A11Y_TREE_REQUEST's payload once the fixture's tree is there, or
    None while it is not yet (GTK registers shortly after mapping)."""
    msg = c.request("A11Y_TREE_REQUEST", {"window_id": window})
    if msg["type"] == "ERROR":
        return None
    assert msg["type"] == "A11Y_TREE_RESPONSE", msg
    return msg["payload"]


def test_the_wire_op_lists_the_form_and_hello_lists_a11y_tree(desk):
    # The bus check runs in the background from the daemon's start: a HELLO
    # lists the feature once it answered.
    def client_with_tree():
        c = desk.daemon.client(takeover=False)
        if "a11y.tree" in c.hello["payload"]["computer_use_features"]:
            return c
        c.close()
        return None

    c = poll(client_with_tree, timeout=20, interval=0.5, what="a HELLO listing a11y.tree")
    try:
        windows = c.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]
        form = window_id(windows, FORM)
        tree = poll(lambda: wire_tree(c, form), timeout=20, what="the form's tree on the wire")
        assert tree["window_id"] == form
        assert tree["window_elements"] >= len(tree["elements"]) > 0, tree
        one(tree, "button", "Save")
        one(tree, "text_field", "Name")
        password = one(tree, "password_text", "Password")
        assert "value" not in password, password
        assert SECRET not in json.dumps(tree)
        for row in tree["elements"]:
            assert row["element_token"] == f"{tree['snapshot_id']}:{row['element_index']}"
        bad = c.request("A11Y_TREE_REQUEST", {"window_id": form, "max_elements": 0})
        assert bad["payload"]["code"] == "INVALID_ARGUMENTS", bad
    finally:
        c.close()


def test_an_added_widget_makes_old_tokens_stale(desk):
    async def body():
        async with http(desk.daemon, "legacy") as s:
            await s.start()
            state = await poll_async(lambda: form_state(s))
            save = one(state, "button", "Save")
            desk.add_widget()
            poll(lambda: desk.bounds() and True, what="the fixture to add its widget")
            e = await s.error("click", {"element_token": save["element_token"]})
            assert e["code"] == "stale_element_token" and e["disposition"]["retry"] == "after_refresh"
            fresh = await form_state(s)
            assert fresh["snapshot_id"] != state["snapshot_id"]
            one(fresh, "button", "Added")
            if desk.saved.exists():
                desk.saved.unlink()
            await s.call("click", {"element_token": one(fresh, "button", "Save")["element_token"]})
            poll(desk.saved.exists, what="the Save button to write its file")
    run(body())


def test_a_computer_frame_marks_the_focused_window_and_a_mark_clicks_save(desk):
    async def body():
        async with http(desk.daemon, "legacy") as s:
            await s.start(input="takeover")
            await poll_async(lambda: form_state(s))
            windows = (await s.call("list_windows"))["windows"]
            await s.call("bring_to_front", {"window_id": window_id(windows, FORM)})
            r = await s.raw("computer", {"action": {"type": "screenshot"}, "marks": True})
            assert not r.is_error, r
            out = r.structured_content
            assert out["marks"]["window_id"] == window_id(windows, FORM), out
            marks = out["marks"]["marks"]
            save = next(m for m in marks if m["role"] == "button" and m["label"] == "Save")
            # 1280x800 fits the default 1920x1200: frame pixels are desktop pixels.
            assert (out["frame"]["width"], out["frame"]["height"]) == (1280, 800)
            bounds = desk.bounds()
            assert near(save["box"], bounds["Save"]), save
            img = decode_png(base64.b64decode(next(c for c in r.content if c.type == "image").data))
            px, py, pw, ph = bounds["Password"]
            assert img.pixel(px + pw // 2, py + ph // 2) == (0, 0, 0), "the password is blacked out"
            b = save["box"]
            edge = img.pixel(b["x"] + b["width"] // 2, b["y"] + b["height"] - 1)
            assert edge not in ((255, 255, 255), (0, 0, 0)), edge
            assert SECRET not in json.dumps(out)
            if desk.saved.exists():
                desk.saved.unlink()
            x, y = save["center"]
            await s.call("computer", {"action": {"type": "click", "x": x, "y": y}})
            poll(desk.saved.exists, what="the click at Save's mark to press it")
    run(body())


def test_a_row_without_actions_is_clicked_with_the_pointer_in_takeover_only(desk):
    async def body():
        async with http(desk.daemon, "legacy") as s:
            await s.start()
            windows = (await s.call("list_windows"))["windows"]
            target = {"window_id": window_id(windows, LIST), "include_screenshot": False}
            state = await poll_async(lambda: s.call("get_window_state", target))
            label = one(state, "label", "Row 3")
            assert not label.get("actions"), label
            before = attach(desk.display).pointer()
            e = await s.error("click", {"element_token": label["element_token"]})
            assert e["code"] == "invalid_arguments" and "takeover" in e["message"], e
            assert attach(desk.display).pointer() == before, "headless never moves the pointer"
            await s.end()

            await s.start(input="takeover")
            await s.call("bring_to_front", {"window_id": target["window_id"]})
            state = await s.call("get_window_state", target)
            label = one(state, "label", "Row 3")
            clicked = await s.call("click", {"element_token": label["element_token"]})
            assert clicked["path"] == "synthetic" and clicked["took_cursor"] is True, clicked
            px, py = attach(desk.display).pointer()
            f = label["frame"]
            assert f["x"] <= px < f["x"] + f["width"] and f["y"] <= py < f["y"] + f["height"]

            assert await poll_async_true(lambda: s.call("get_window_state", target), selected_in)
    run(body())


def selected_in(state: dict) -> bool:
    """Whether the list row holding the label "Row 3" is selected."""
    label = one(state, "label", "Row 3")
    item = next(e for e in state["elements"] if e["element_index"] == label["parent_index"])
    return "selected" in item.get("states", [])


async def poll_async_true(read, check, timeout: float = 10.0) -> bool:
    """Reads until `check(await read())` holds, or fails after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        got = await read()
        if check(got):
            return True
        if time.monotonic() > deadline:
            pytest.fail(f"not so after {timeout} s: {str(got)[:2000]}")
        await asyncio.sleep(0.2)


def test_gtk3_widget_factory_reads_skeletons_and_toggles_a_check_box_headless(desk):
    require("gtk3-widget-factory")
    desk.launch("gtk3-widget-factory")

    async def body():
        async with http(desk.daemon, "legacy") as s:
            await s.start()

            async def factory():
                windows = (await s.call("list_windows"))["windows"]
                found = [w for w in windows if "widget" in w["title"].lower()]
                assert found, f"no widget factory window yet: {windows}"
                w = max(found, key=lambda w: w["frame"]["width"] * w["frame"]["height"])
                return await s.call("get_window_state", {"window_id": w["window_id"],
                                                         "include_screenshot": False})
            full = await poll_async(factory, timeout=30)
            target = {"window_id": full["window"]["window_id"], "include_screenshot": False}
            skeleton = await s.call("get_window_state", {**target, "skeleton": True})
            print(f"widget factory: {full['window_elements']} elements; full "
                  f"{len(full['elements'])} rows; skeleton {len(skeleton['elements'])} rows")
            assert full["window_elements"] > 200, full["window_elements"]
            assert len(skeleton["elements"]) < len(full["elements"])
            boxes = [e for e in full["elements"] if e["role"] == "check_box"
                     and not {"disabled", "indeterminate"} & set(e.get("states", []))]
            assert boxes, full["tree_text"][:6000]
            box = boxes[0]
            was = "checked" in box.get("states", [])
            before = attach(desk.display).pointer()
            clicked = await s.call("click", {"element_token": box["element_token"]})
            assert clicked["path"] == "accessibility", clicked
            assert attach(desk.display).pointer() == before

            def toggled(state: dict) -> bool:
                now = next(e for e in state["elements"]
                           if e["element_index"] == box["element_index"])
                return ("checked" in now.get("states", [])) != was
            assert await poll_async_true(lambda: s.call("get_window_state", target), toggled)
    run(body())
