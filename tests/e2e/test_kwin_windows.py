"""deskhand's Wayland backend on KDE Plasma's compositor (no GNOME
extension): the window list comes from KWin's own scripting. A headless
KWin 5.27 with two GTK windows and no desktop portals; deskhand's list
checked against KWin's own, and an answer from any program but KWin
refused."""

from __future__ import annotations

import json
import subprocess

import pytest

from daemon import Daemon, binary
from desktop.kwin import KWin
from xhelpers import REPO, poll

TITLES = ("deskhand kwin one", "deskhand kwin two")


@pytest.fixture(scope="module")
def kwin():
    k = KWin()
    forms = []
    for title in TITLES:
        forms.append(k.spawn("/usr/bin/python3", str(REPO / "tests/fixtures/wayland_form.py"),
                             "--saved", str(k.runtime / f"{title}.txt"), "--title", title,
                             env={"GDK_BACKEND": "wayland"}, stdout=subprocess.PIPE, text=True))
        assert json.loads(forms[-1].stdout.readline()).get("ready"), "the form did not start"
    yield k
    for f in forms:
        f.kill()
    k.stop()


@pytest.fixture(scope="module")
def served(kwin):
    d = Daemon("--backend", "wayland", env={
        k: kwin.env[k] for k in ("WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS")})
    yield d
    d.kill()


def test_the_window_list_is_kwins_own_with_bounds_pids_and_focus(kwin, served):
    c = served.client()
    try:
        def listed() -> dict | None:
            windows = c.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")["windows"]
            ours = {w["title"]: w for w in windows if w["title"] in TITLES}
            return ours if len(ours) == 2 else None

        ours = poll(listed, timeout=15, what="both forms in WINDOW_LIST")
        theirs = {w["title"]: w for w in kwin.windows()}
        for title in TITLES:
            w, k = ours[title], theirs[title]
            x, y, width, height = k["frame"]
            assert w["bounds"] == [x, y, x + width, y + height], (w, k)
            assert w["pid"] == k["pid"] and w["pid"], (w, k)
            assert w["app_name"] == "wayland_form.py", w
            assert w["is_focused"] == k["active"], (w, k)
        assert ours[TITLES[0]]["bounds"] != ours[TITLES[1]]["bounds"], ours
        # Topmost first: the later form opened above the first.
        order = [w["title"] for w in c.call("WINDOW_LIST_REQUEST", {})["windows"]
                 if w["title"] in TITLES]
        assert order == [TITLES[1], TITLES[0]], order
    finally:
        c.close()


def test_a_window_on_another_virtual_desktop_is_hidden(kwin, served):
    move = ("workspace.desktops = 2;\n"
            "for (const w of workspace.clientList())\n"
            f"  if (String(w.caption) === '{TITLES[0]}') w.desktop = %d;")
    kwin.run_script(move % 2)
    c = served.client()
    try:
        def hidden() -> bool:
            windows = c.call("WINDOW_LIST_REQUEST", {"include_minimized": True},
                             expect="WINDOW_LIST_RESPONSE")["windows"]
            state = {w["title"]: w["is_minimized"] for w in windows}
            return state.get(TITLES[0]) is True and state.get(TITLES[1]) is False

        poll(hidden, timeout=10, what="the window on desktop 2 hidden, the other shown")
    finally:
        c.close()
        kwin.run_script(move % 1)


def test_an_answer_from_another_program_than_kwin_is_refused(kwin, served):
    out = kwin.gdbus("dev.deskhand.Engine", "/dev/deskhand/KWin",
                     "dev.deskhand.KWinReport.Report", "0" * 32,
                     '{"focused": false, "rows": []}', check=False)
    assert "AccessDenied" in out and "only KWin answers" in out, out


def test_the_doctor_on_kde_names_kwins_scripting_as_the_window_list(kwin):
    out = subprocess.run([binary(), "doctor", "--json"], env=dict(kwin.env, PATH="/usr/bin:/bin"),
                         capture_output=True, text=True, timeout=60)
    probes = {p["label"]: p for p in json.loads(out.stdout)["probes"]}
    assert probes["windows"]["status"] == "ok", (probes["windows"], out.stderr[-500:])
    assert "KWin" in probes["windows"]["message"], probes["windows"]
