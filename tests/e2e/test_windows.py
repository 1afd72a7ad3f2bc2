"""WINDOW_LIST_REQUEST, WINDOW_FOCUS and SCREENSHOT_REQUEST.window_id on a
real desktop with a window manager and real xterms."""

from imaging import decode_png
from xhelpers import XTerm, poll, require, run


def listed(client, **payload):
    return client.call("WINDOW_LIST_REQUEST", payload, expect="WINDOW_LIST_RESPONSE")["windows"]


def find(windows, title):
    match = [w for w in windows if w["title"] == title]
    assert len(match) == 1, f"{title!r} listed {len(match)} times in {[w['title'] for w in windows]}"
    return match[0]


def active_window(display: str) -> int:
    out = run(display, "xprop", "-root", "_NET_ACTIVE_WINDOW")
    return int(out.rsplit(" ", 1)[-1], 16)


def test_two_xterms_are_listed_with_pids_and_bounds(client, display, apps):
    a = XTerm(display, cols=40, rows=10, pos="+50+60")
    b = XTerm(display, cols=50, rows=12, pos="+600+300")
    apps.extend([a, b])
    windows = listed(client)
    for term in (a, b):
        w = find(windows, term.title)
        assert w["pid"] == term.proc.pid, (w, term.proc.pid)
        assert w["app_name"] == "XTerm"
        r = term.rect()
        assert w["bounds"] == [r.x, r.y, r.x + r.w, r.y + r.h], (w["bounds"], r)
        assert w["window_id"].startswith("win_")
        assert w["monitor"] == 0
    assert windows[0]["title"] == b.title, "the newest window is on top and listed first"
    only = listed(client, app_bundle_id="xterm")
    assert {w["title"] for w in only} >= {a.title, b.title}


def test_focus_switches_the_active_window(client, display, apps):
    require("xprop")
    a = XTerm(display, cols=40, rows=10, pos="+50+60")
    b = XTerm(display, cols=40, rows=10, pos="+500+60")
    apps.extend([a, b])
    windows = listed(client)
    for term in (a, b, a):
        client.call("WINDOW_FOCUS", {"window_id": find(windows, term.title)["window_id"]},
                    expect="ACK")
        poll(lambda: active_window(display) == int(term.wid), timeout=5,
             what=f"_NET_ACTIVE_WINDOW to be {term.title}")
    focused = [w for w in listed(client) if w["is_focused"]]
    assert [w["title"] for w in focused] == [a.title]


def test_a_closed_window_is_stale(client, display, apps):
    term = XTerm(display, cols=30, rows=8, pos="+80+80")
    apps.append(term)
    wid = find(listed(client), term.title)["window_id"]
    term.close()
    poll(lambda: all(w["title"] != term.title for w in listed(client)), timeout=5,
         what="the closed xterm to leave the list")
    for mtype, payload in (("WINDOW_FOCUS", {"window_id": wid}),
                           ("SCREENSHOT_REQUEST", {"window_id": wid})):
        msg = client.request(mtype, payload)
        assert msg["type"] == "ERROR" and msg["payload"]["code"] == "WINDOW_STALE", msg
        assert msg["payload"]["details"]["window_id"] == wid


def test_screenshot_of_a_window_is_its_content(client, display, apps):
    term = XTerm(display, cols=30, rows=8, pos="+200+150", bg="#ff0000")
    apps.append(term)
    w = find(listed(client), term.title)
    client.call("WINDOW_FOCUS", {"window_id": w["window_id"]}, expect="ACK")
    shot = client.screenshot(window_id=w["window_id"])
    x1, y1, x2, y2 = w["bounds"]
    img = decode_png(shot["image"])
    assert (img.width, img.height) == (x2 - x1, y2 - y1)
    assert shot["meta"]["origin"] == [x1, y1]
    assert img.pixel(img.width // 2, img.height - 5) == (255, 0, 0)
    msg = client.request("SCREENSHOT_REQUEST", {"window_id": w["window_id"],
                                                 "region": [0, 0, 10, 10]})
    assert msg["type"] == "ERROR" and msg["payload"]["code"] == "INVALID_ARGUMENTS", msg
