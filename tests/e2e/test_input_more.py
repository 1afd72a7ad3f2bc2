"""More of INPUT_ACTION and SCREENSHOT on the real desktop: the drawn
cursor, non-ASCII typing, the middle button, the wheel."""

import subprocess
import time

from imaging import decode_png
from xhelpers import XTerm, poll, require, run

SHELL = ["env", "PS1=$ ", "bash", "--norc", "--noprofile"]


def test_include_cursor_draws_the_pointer(client, display):
    require("xsetroot")
    run(display, "xsetroot", "-solid", "#204060")
    client.act("mouse_move", coordinate=[700, 500])
    region = [680, 480, 740, 540]
    plain = decode_png(client.screenshot(region=region)["image"])
    drawn = decode_png(client.screenshot(region=region, include_cursor=True)["image"])
    pixels = [(x, y) for x in range(60) for y in range(60)]
    assert all(plain.pixel(x, y) == (0x20, 0x40, 0x60) for x, y in pixels), \
        "the plain capture shows only the root background"
    changed = [(x, y) for x, y in pixels if drawn.pixel(x, y) != plain.pixel(x, y)]
    assert len(changed) >= 10, "include_cursor drew no cursor"
    # The cursor image surrounds its hotspot at (700, 500) = (20, 20) here.
    xs = [x for x, _ in changed]
    ys = [y for _, y in changed]
    assert min(xs) <= 20 <= max(xs) + 1 and min(ys) <= 20 <= max(ys) + 1, changed[:5]


def test_non_ascii_text_arrives_intact(client, display, apps, tmp_path, monkeypatch):
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    out = tmp_path / "utf8.txt"
    text = "héllo ß 日本"
    term = XTerm(display, command=SHELL, cwd=str(tmp_path))
    apps.append(term)
    client.act("left_click", coordinate=list(term.rect().center()))
    client.act("type", text=f"printf '%s\\n' '{text}' > {out}")
    client.act("key", key="Return")
    poll(lambda: out.exists() and out.read_bytes() == f"{text}\n".encode(), timeout=10,
         what=f"{out} to hold {text!r}")


def test_middle_click_pastes_the_primary_selection(client, display, apps, tmp_path):
    require("xclip")
    out = tmp_path / "pasted.txt"
    term = XTerm(display, command=SHELL, cwd=str(tmp_path))
    apps.append(term)
    # xclip stays in the background owning PRIMARY until it is terminated.
    owner = subprocess.Popen(["xclip", "-selection", "primary", "-quiet"],
                             env={"DISPLAY": display, "PATH": "/usr/bin:/bin"},
                             stdin=subprocess.PIPE)
    owner.stdin.write(f"echo pasted > {out}".encode())
    owner.stdin.close()
    poll(lambda: run(display, "xclip", "-o", "-selection", "primary", check=False) != "",
         timeout=5, what="xclip to own PRIMARY")
    client.act("middle_click", coordinate=list(term.rect().center()))
    # xterm fetches PRIMARY from xclip asynchronously: a Return sent right
    # after the click can reach the shell before the pasted text. A Return
    # after that runs the line; an empty line does nothing.
    def ran():
        client.act("key", key="Return")
        try:
            return poll(lambda: out.exists() and out.read_text() == "pasted\n", timeout=2,
                        what=f"{out} written by the pasted command")
        except AssertionError:
            return False
    try:
        poll(ran, timeout=10, interval=0, what=f"{out} written by the pasted command")
    finally:
        owner.terminate()
        owner.wait(5)


def test_wheel_scrolls_back_and_forth(client, display, apps):
    term = XTerm(display, cols=60, rows=10, pos="+40+40",
                 command=["sh", "-c", "seq 1 300; exec sleep 600"])
    apps.append(term)
    r = term.rect()
    region = [r.x, r.y, r.x + r.w, r.y + r.h]
    center = list(r.center())
    time.sleep(0.5)
    before = client.screenshot(region=region)["image"]
    client.act("scroll", coordinate=center, scroll_direction="up", scroll_amount=5)
    poll(lambda: client.screenshot(region=region)["image"] != before, timeout=5,
         what="the xterm to scroll back")
    client.act("scroll", coordinate=center, scroll_direction="down", scroll_amount=5)
    poll(lambda: client.screenshot(region=region)["image"] == before, timeout=5,
         what="the xterm to scroll forward to where it was")
