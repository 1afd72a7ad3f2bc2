"""Pointer gestures that select text: drag (path), triple_click, shift+click.
The user-visible effect is the PRIMARY selection, read with xclip."""

import json
import time
import uuid

import pytest

from xhelpers import FIXTURES, App, XTerm, poll, primary_selection, require

TEXT = ["alpha beta gamma", "second line here", "third"]
MULTI_CLICK_PAUSE = 0.7  # longer than xterm's and Tk's multi-click time


@pytest.fixture
def text_xterm(display, apps):
    require("xclip")
    lines = "\\n".join(TEXT)
    script = f"printf '{lines}\\n'; exec sleep 600"
    term = XTerm(display, pos="+20+30", command=["sh", "-c", script])
    apps.append(term)
    time.sleep(MULTI_CLICK_PAUSE)
    return term


def test_drag_along_path_selects_words(client, display, text_xterm):
    t = text_xterm
    path = [list(t.cell(0, 0)), list(t.cell(3, 0)), list(t.cell(7, 0)), list(t.cell(10, 0))]
    client.act("drag", path=path, button="left")
    poll(lambda: primary_selection(display) == "alpha beta", timeout=5,
         what="PRIMARY == 'alpha beta'")


def test_triple_click_selects_a_line(client, display, text_xterm):
    client.act("triple_click", coordinate=list(text_xterm.cell(4, 1)))
    poll(lambda: primary_selection(display).rstrip("\n") == "second line here", timeout=5,
         what="PRIMARY == 'second line here'")


def test_double_click_selects_a_word(client, display, text_xterm):
    client.act("double_click", coordinate=list(text_xterm.cell(12, 0)))
    poll(lambda: primary_selection(display) == "gamma", timeout=5, what="PRIMARY == 'gamma'")


def test_mouse_down_move_up_selects(client, display, text_xterm):
    t = text_xterm
    client.act("mouse_down", coordinate=list(t.cell(0, 1)), button="left")
    client.act("mouse_move", coordinate=list(t.cell(4, 1)))
    client.act("mouse_move", coordinate=list(t.cell(6, 1)))
    client.act("mouse_up", coordinate=list(t.cell(6, 1)), button="left")
    poll(lambda: primary_selection(display) == "second", timeout=5, what="PRIMARY == 'second'")


@pytest.fixture
def textpad(display, apps, tmp_path):
    """Tk text widget (tests/fixtures/textpad.tcl): there, and not in xterm,
    shift+click extends the selection. Reports its character grid."""
    require("wish", "xclip")
    info = tmp_path / "textpad.json"
    title = f"deskhand-textpad-{uuid.uuid4().hex[:8]}"
    app = App(display, ["wish", str(FIXTURES / "textpad.tcl"), str(info), title], title)
    apps.append(app)
    grid = json.loads(poll(lambda: info.exists() and info.read_text(), timeout=10,
                           what="textpad grid info"))
    time.sleep(MULTI_CLICK_PAUSE)

    def gap(col: int, row: int) -> list[int]:
        """A point just right of the boundary before character `col`."""
        return [grid["x"] + col * grid["cw"] + 2, grid["y"] + row * grid["ch"] + grid["ch"] // 2]

    return gap


def test_shift_click_extends_selection(client, display, textpad):
    client.act("drag", path=[textpad(0, 0), textpad(3, 0), textpad(5, 0)], button="left")
    poll(lambda: primary_selection(display) == "alpha", timeout=5, what="PRIMARY == 'alpha'")
    time.sleep(MULTI_CLICK_PAUSE)
    client.act("left_click", coordinate=textpad(10, 0), modifiers=["shift"])
    poll(lambda: primary_selection(display) == "alpha beta", timeout=5,
         what="shift+click to extend PRIMARY to 'alpha beta'")


def test_click_without_shift_does_not_extend(client, display, textpad):
    """Control for the test above: a plain click clears the selection."""
    client.act("drag", path=[textpad(0, 0), textpad(5, 0)], button="left")
    poll(lambda: primary_selection(display) == "alpha", timeout=5, what="PRIMARY == 'alpha'")
    time.sleep(MULTI_CLICK_PAUSE)
    client.act("left_click", coordinate=textpad(10, 0))
    poll(lambda: primary_selection(display) == "", timeout=5, what="selection cleared")
