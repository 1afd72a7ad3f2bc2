"""Attacks on the GNOME Wayland backend (issue 46), in a private headless
GNOME 43 session with deskhand's extension (desktop/wayland.py): a program
of the same user takes GNOME Shell's replaceable bus names or deskhand's
engine name, an agent's stream of acts tries to make hand-back deaf, and
one long line tries to kill the person's app. The catalogue is
`tests/e2e/attacks/README.md`.

| attack class | what the attacker does | what must happen |
|---|---|---|
| GNOME Shell's names taken | `RequestName(org.gnome.Shell / org.gnome.Mutter.IdleMonitor, REPLACE_EXISTING)` while an agent drives, answering in the extension's place and forging `Pressed("continue")` | the takeover ends, no act goes, nothing typed reaches the program, nothing resumes |
| the engine's name squatted | owns `dev.deskhand.Engine` before deskhand starts | the extension gives it no window list and draws nothing; `serve` and `doctor` name it |
| hand-back deafened | acts every 100 ms | the person's key pauses the agent |
| one long line | 10,000 characters with no line break | they arrive exactly; the app lives |
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time

import pytest

from daemon import binary
from desktop.wayland import GnomeDesktop, start
from test_wayland_backend import form_window, new_form, saved_text, serve_granted
from xhelpers import poll, scratch_dir

PRIMARY_OWNER = 1


@pytest.fixture(scope="module")
def gnome():
    desktop = start("1280x800")
    yield desktop
    desktop.stop()


def isolated_env(gnome: GnomeDesktop) -> dict:
    """The session's environment with state and config of a test's own."""
    root = scratch_dir("wl-squat-")
    env = gnome.env()
    for k in ("CONFIG_HOME", "STATE_HOME"):
        os.makedirs(f"{root}/{k.lower()}", mode=0o700)
        env[f"XDG_{k}"] = f"{root}/{k.lower()}"
    return env


def test_a_program_holding_the_engines_name_gets_nothing_and_serve_names_it(gnome):
    # Runs first: no deskhand holds the name yet in this session.
    squat = gnome.squatter("engine")
    try:
        assert squat.ready["held"] == {"dev.deskhand.Engine": PRIMARY_OWNER}, squat.ready
        fake = json.dumps([{"rect": {"x": 0, "y": 0, "width": 1280, "height": 40},
                            "colour": 0xE01B24, "text": "the agent finished - click to close",
                            "press": "continue"}])
        status = json.dumps({"state": "idle", "line": "No agent connected", "sessions": [],
                             "items": [{"id": "quit", "label": "Update deskhand…"}]})
        for method, args in (("ListWindows", None), ("ShowParts", ["(s)", [fake]]),
                             ("CommitText", ["(s)", ["rm -rf ~"]]), ("Pointer", None),
                             ("ShowStatus", ["(s)", [status]]), ("TopInset", None)):
            said = squat.do("ask", method=method, args=args)
            assert "AccessDenied" in said.get("error", ""), (method, said)
        assert gnome.pixel(640, 10) != (0xE0, 0x1B, 0x24), "a frame was drawn for the squatter"
        assert gnome.status_menu() is None, "a top-bar menu was drawn for the squatter"
        env = isolated_env(gnome)
        served = subprocess.run([binary(), "serve", "--listen", "127.0.0.1:0"], env=env,
                                capture_output=True, text=True, timeout=60)
        assert served.returncode != 0, served
        assert f"pid {squat.pid}" in served.stderr and "not deskhand" in served.stderr, \
            served.stderr[-2000:]
        doctor = subprocess.run([binary(), "doctor", "--json"], env=env, capture_output=True,
                                text=True, timeout=60)
        probes = {p["label"]: p for p in json.loads(doctor.stdout)["probes"]}
        probe = probes["engine's bus name"]
        assert probe["status"] != "ok" and f"pid {squat.pid}" in probe["message"], probe
    finally:
        squat.stop()


@pytest.fixture(scope="module")
def served(gnome):
    d = serve_granted(gnome)
    yield d
    d.kill()


def test_a_stream_of_acts_does_not_make_hand_back_deaf(gnome, served):
    c = served.client()
    answers: list[dict] = []
    stop = threading.Event()

    def stream():
        x = 600
        while not stop.is_set():
            x = 602 if x == 600 else 600
            answers.append(c.request("INPUT_ACTION", {"action": "mouse_move",
                                                      "coordinate": [x, 500]}))
            if answers[-1]["type"] != "ACK":
                return
            time.sleep(0.1)

    assert c.take_over()["type"] == "TAKEOVER_STATE"
    acting = threading.Thread(target=stream)
    try:
        acting.start()
        time.sleep(1.5)
        before = list(answers)
        assert len(before) >= 8 and all(a["type"] == "ACK" for a in before), \
            [a["payload"] for a in before if a["type"] != "ACK"]
        sent = len(answers)
        gnome.person.press("shift", hold=0.08)
        acting.join(5)
        assert not acting.is_alive(), (
            f"the person's key did not stop the stream of acts: {len(answers) - sent} acts "
            f"after it, the last {answers[-1]}\n{served.stderr_tail(15)}")
        last = answers[-1]
        assert last["type"] == "ERROR" and last["payload"]["details"].get("paused_reason"), last
        # The person gives control back: a click on Continue, not within
        # 1.5 s of deskhand's own input (clicked again if it did not take,
        # as a person would).
        for _ in range(3):
            time.sleep(1.6)
            gnome.person.real_click(640, gnome.continue_y)
            try:
                poll(lambda: c.request("INPUT_ACTION", {
                    "action": "mouse_move", "coordinate": [650, 450]})["type"] == "ACK",
                    timeout=3, what="the takeover resumed by Continue")
                break
            except AssertionError:
                continue
        else:
            raise AssertionError(f"Continue never resumed\n{served.stderr_tail(12)}")
    finally:
        stop.set()
        acting.join(5)
        c.take_over(False)
        c.close()


def test_ten_thousand_characters_in_one_line_arrive_whole_and_the_app_lives(gnome, served):
    c = served.client()
    proc, saved = new_form(gnome, "long line form")
    w = form_window(c, "long line form")
    x, y, x2, y2 = w["bounds"]
    line = ("Zeile ohne Umbruch – ü " * 500)[:10_000]
    assert c.take_over()["type"] == "TAKEOVER_STATE"
    try:
        c.act("left_click", coordinate=[(x + x2) // 2, y + int((y2 - y) * 0.3)])
        c.act("type", text=line)
        c.act("left_click", coordinate=[(x + x2) // 2, y + int((y2 - y) * 0.85)])
        poll(lambda: saved_text(saved) == line, timeout=20, what="the whole line saved")
        assert proc.poll() is None, "the app died"
    finally:
        c.take_over(False)
        c.close()
        proc.kill()


def test_gnome_shells_names_taken_over_end_the_takeover_and_get_nothing(gnome, served):
    # Runs last: the deskhand serving this module has lost its shell.
    c = served.client()
    proc, _ = new_form(gnome, "squatted form")
    w = form_window(c, "squatted form")
    x, y, x2, y2 = w["bounds"]
    assert c.take_over()["type"] == "TAKEOVER_STATE"
    c.act("left_click", coordinate=[(x + x2) // 2, y + int((y2 - y) * 0.3)])
    squat = gnome.squatter("shell")
    try:
        assert squat.ready["held"] == {"org.gnome.Shell": PRIMARY_OWNER,
                                       "org.gnome.Mutter.IdleMonitor": PRIMARY_OWNER}, squat.ready
        # deskhand hears the names change hands at once (NameOwnerChanged).
        time.sleep(1.0)
        first = c.request("INPUT_ACTION", {"action": "type", "text": "secret"})
        assert first["type"] == "ERROR", first
        # A forged Continue resumes nothing; a new takeover is refused.
        squat.do("press", button="continue")
        time.sleep(1.0)
        again = c.request("INPUT_ACTION", {"action": "type", "text": "secret"})
        assert again["type"] == "ERROR", again
        retaken = c.request("TAKEOVER_REQUEST", {"on": True})
        assert retaken["type"] == "ERROR", retaken
        # deskhand never spoke to it: no frame asked of it, no text typed
        # to it, no idle time read from it.
        assert squat.do("calls") == [], "deskhand spoke to the program holding the names"
        # A deskhand starting now finds no extension, and says who holds
        # the shell's name.
        doctor = subprocess.run([binary(), "doctor", "--json"], env=isolated_env(gnome),
                                capture_output=True, text=True, timeout=60)
        probes = {p["label"]: p for p in json.loads(doctor.stdout)["probes"]}
        said = probes["GNOME Shell extension"]
        assert said["status"] != "ok" and f"pid {squat.pid}" in said["message"], said
    finally:
        squat.stop()
        c.close()
        proc.kill()
