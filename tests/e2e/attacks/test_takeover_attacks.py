"""Attacks on the person's control of the desktop, run against the real
binary on a virtual desktop the way an agent trying to misuse it would.
The catalogue of every attack class and where it is tested is
`tests/e2e/attacks/README.md`.

| attack class | what the attacker does | what must happen |
|---|---|---|
| resume by reconnecting | closes its socket after a hand-back or the kill switch, opens another, asks for the takeover | comes up paused, input refused, the indicator shows Continue, Continue still resumes |
| shell through APP_LAUNCH | launches `/bin/sh -c …`, an interpreter, a terminal with `-e`, a desktop entry with `-e` | refused, nothing runs; a GUI app still launches |
| commands through APP_LAUNCH | launches programs that run commands (the loader, `tar`, `git`, `vim`, `xdotool`, `setpriv`, `prlimit`, `capsh`, `tmux`, `sqlite3`, `zip`, `cmake`, `bwrap`), a text file without `#!`, dash or xterm under another name | refused (not an installed app, or not with these arguments), nothing runs; an app of an entry launches; `launch_allow` lets exactly its file run |
| act without the frame | launches or focuses without a takeover, or while paused | refused |
| flush the audit log | sends a 2 MiB window id | INVALID_ARGUMENTS, small reply, earlier records kept |
| dead client keeps acting | is killed during a long type or a hold | typing stops, nothing stays held |
| press Continue itself | `xdotool click` on Continue | no resume; the person's mouse resumes |
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import continue_if_held
from daemon import Daemon, ErrorReply, agent_process
from desktop import CONTINUE_Y, attach
from xhelpers import XTerm, poll, require, run, unique_title

WIDTH = 1280


def paused_by_the_person(client, display) -> None:
    time.sleep(0.3)
    attach(display).person.move(700, 500)
    assert client.pushed_state()["paused"] is True


def assert_input_refused(client, display) -> None:
    before = attach(display).pointer()
    try:
        client.act("left_click", coordinate=[200, 200])
    except ErrorReply as e:
        assert e.msg["payload"]["code"] == "USER_TOOK_OVER", e.msg
    else:
        raise AssertionError("a click went through while the person held the desktop")
    assert attach(display).pointer() == before, "a refused click moved the pointer"


def test_reconnecting_after_a_hand_back_does_not_resume(daemon, display):
    first = daemon.client()
    paused_by_the_person(first, display)
    first.close()
    again = daemon.client()
    state = again.takeover_state
    assert state == {"on": True, "indicator": True, "paused": True,
                     "paused_reason": "pointer_moved"}, state
    assert_input_refused(again, display)
    # Another program's click on Continue does not resume.
    attach(display).person.click(WIDTH // 2, CONTINUE_Y)
    time.sleep(0.5)
    assert again.request("CURSOR_POSITION_REQUEST")["type"] == "CURSOR_POSITION_RESPONSE"
    assert not [e for e in again.events if e.get("type") == "TAKEOVER_STATE"], again.events
    attach(display).person.real_click(WIDTH // 2, CONTINUE_Y)
    assert again.pushed_state()["paused"] is False
    again.act("mouse_move", coordinate=[300, 300])
    assert attach(display).pointer() == (300, 300)


def test_reconnecting_after_the_kill_switch_does_not_resume(daemon, display):
    first = daemon.client()
    attach(display).person.key("ctrl+alt+Escape")
    state = first.pushed_state()
    while state.get("on"):
        state = first.pushed_state()
    assert state["reason"] == "kill_switch", state
    first.close()
    again = daemon.client()
    assert again.takeover_state["paused"] is True, again.takeover_state
    assert again.takeover_state["paused_reason"] == "kill_switch"
    assert_input_refused(again, display)
    attach(display).person.real_click(WIDTH // 2, CONTINUE_Y)
    assert again.pushed_state()["paused"] is False
    again.act("mouse_move", coordinate=[310, 310])
    assert attach(display).pointer() == (310, 310)


def refused_launch(client, payload: dict) -> dict:
    msg = client.request("APP_LAUNCH", {"activate": False, **payload})
    assert msg["type"] == "ERROR", (payload, msg)
    return msg["payload"]


def test_shells_and_terminal_commands_are_refused_and_gui_apps_launch(client, display, tmp_path):
    marker = tmp_path / "ran"
    for payload in (
        {"executable_path": "/bin/sh", "args": ["-c", f"touch {marker}"]},
        {"executable_path": "/usr/bin/env", "args": ["touch", str(marker)]},
        {"executable_path": sys.executable, "args": ["-c", f"open('{marker}', 'w')"]},
        {"executable_path": "/usr/bin/xterm", "args": ["-e", "sh", "-c", f"touch {marker}"]},
        {"bundle_id": "debian-xterm", "args": ["-e", "touch", str(marker)]},
    ):
        err = refused_launch(client, payload)
        assert err["code"] == "CAPABILITY_NOT_GRANTED", (payload, err)
        assert err["details"]["capability"] == "run_commands", err
        assert "not commands" in err["message"], err
    time.sleep(1.0)
    assert not marker.exists(), "a refused launch ran its command"
    # xterm's own entry (debian-xterm.desktop) names it with no arguments.
    ack = client.call("APP_LAUNCH", {"executable_path": "/usr/bin/xterm", "activate": False},
                      expect="ACK")
    try:
        poll(lambda: window_of(display, ack["pid"]), timeout=15,
             what="the launched xterm's window")
    finally:
        subprocess.run(["kill", str(ack["pid"])], check=False)


def window_of(display: str, pid: int) -> str:
    return run(display, "xdotool", "search", "--onlyvisible", "--pid", str(pid),
               check=False).strip()


def launch_vectors(tmp, marker) -> list[tuple[str, dict]]:
    """Each way the attack run ran a command through APP_LAUNCH; the
    command would create `marker(name)`."""
    dash, xterm = shutil.which("dash"), shutil.which("xterm")
    plain = tmp / "plain-script"  # no #!: execvp hands it to /bin/sh
    plain.write_text(f"touch {marker('plain')}\n")
    plain.chmod(0o755)
    copy = tmp / "notes"
    shutil.copy2(dash, copy)
    other_name = tmp / "viewer"
    try:
        os.link(dash, other_name)
    except OSError:  # another file system, or protected_hardlinks
        other_name.symlink_to(dash)
    xterm_copy = tmp / "editor"
    shutil.copy2(xterm, xterm_copy)
    zipfile = tmp / "a.zip"

    def exe(name: str, path: str, *args: str) -> tuple[str, dict]:
        return name, {"executable_path": path, "args": list(args)}

    return [
        exe("loader", "/lib64/ld-linux-x86-64.so.2", "/bin/sh", "-c", f"touch {marker('loader')}"),
        exe("tar", shutil.which("tar"), "-cf", "/dev/null", "--checkpoint=1",
            f"--checkpoint-action=exec=touch {marker('tar')}", "/etc/hostname"),
        exe("git", shutil.which("git"), "-c", f"alias.x=!touch {marker('git')}", "x"),
        exe("vim", shutil.which("vim"), "-es", "-c", f"!touch {marker('vim')}", "-c", "q"),
        ("vim-entry", {"bundle_id": "vim", "args": [str(tmp / "notes.txt")]}),
        exe("xdotool", shutil.which("xdotool"), "exec", "touch", str(marker("xdotool"))),
        exe("setpriv", shutil.which("setpriv"), "--nnp", "touch", str(marker("setpriv"))),
        exe("prlimit", shutil.which("prlimit"), "--nofile=1024", "touch", str(marker("prlimit"))),
        exe("capsh", shutil.which("capsh") or "/usr/sbin/capsh", "--", "-c",
            f"touch {marker('capsh')}"),
        exe("tmux", shutil.which("tmux"), "new-session", "-d", f"touch {marker('tmux')}"),
        exe("sqlite3", shutil.which("sqlite3"), ":memory:", f".system touch {marker('sqlite3')}"),
        exe("zip", shutil.which("zip"), "-q", str(zipfile), "/etc/hostname", "-T", "-TT",
            f"touch {marker('zip')}"),
        exe("cmake", shutil.which("cmake"), "-E", "env", "touch", str(marker("cmake"))),
        exe("bwrap", shutil.which("bwrap"), "--bind", "/", "/", "touch", str(marker("bwrap"))),
        exe("plain", str(plain)),
        exe("dash-copy", str(copy), "-c", f"touch {marker('dash-copy')}"),
        exe("dash-other-name", str(other_name), "-c", f"touch {marker('dash-other-name')}"),
        exe("xterm-copy", str(xterm_copy), "-e", "sh", "-c", f"touch {marker('xterm-copy')}"),
        ("xterm-entry", {"bundle_id": "debian-xterm",
                         "args": ["-e", "touch", str(marker("xterm-entry"))]}),
        # An entry the person's account wrote (an agent typing into an
        # editor could): with options of its own, and naming a program in
        # the home directory; by id and by path.
        ("own-entry", {"bundle_id": "deskhand-own-archive", "args": ["/etc/hostname"]}),
        exe("own-entry-path", shutil.which("gzip"), "/etc/hostname"),
        ("own-program", {"bundle_id": "deskhand-own-program"}),
    ]


def entry(apps_dir, name: str, lines: str) -> None:
    (apps_dir / f"{name}.desktop").write_text(
        f"[Desktop Entry]\nType=Application\nName={name}\n{lines}\n")


def test_commands_of_the_attack_run_are_refused_and_only_apps_launch(tmp_path):
    require("xclock", "xdotool", "dash", "xterm", "tar", "git", "vim", "setpriv", "prlimit",
            "tmux", "sqlite3", "zip", "cmake", "bwrap")
    markers = tmp_path / "markers"
    markers.mkdir()

    def marker(name: str):
        return markers / name

    # The system's entries (root's, in XDG_DATA_DIRS) and the person's own
    # (XDG_DATA_HOME).
    apps_dir = tmp_path / "system" / "applications"
    apps_dir.mkdir(parents=True)
    own_dir = tmp_path / "data" / "applications"
    own_dir.mkdir(parents=True)
    entry(own_dir, "deskhand-own-archive",
          f"Exec=tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='touch {marker('own-entry')}' %F")
    entry(own_dir, "deskhand-own-gzip", "Exec=gzip -S .x %F")
    home_bin = Path(os.environ["HOME"]) / f".deskhand-e2e-{os.getpid()}"
    home_bin.mkdir(exist_ok=True)
    shutil.copy2(shutil.which("xclock"), home_bin / "clock")
    entry(apps_dir, "deskhand-own-program", f"Exec={home_bin / 'clock'}")
    title = unique_title("deskhand-clock")
    entry(apps_dir, "deskhand-clock", f"Exec=xclock -title {title}")
    # An entry that takes files: options to it are refused all the same.
    entry(apps_dir, "deskhand-archive", "Exec=tar %F")
    allowed = tmp_path / "allowed" / "stamp"
    allowed.parent.mkdir()
    shutil.copy2(shutil.which("touch"), allowed)
    consent = tmp_path / "consent.json"
    consent.write_text(json.dumps({"input": True, "launch_allow": [str(allowed)]}))
    d = Daemon("--virtual=1024x768", "--consent", str(consent),
               env={"XDG_DATA_HOME": str(tmp_path / "data"),
                    "XDG_DATA_DIRS": f"{tmp_path / 'system'}:/usr/local/share:/usr/share"})
    started = []
    try:
        c = d.client()
        for name, payload in launch_vectors(tmp_path, marker):
            err = refused_launch(c, payload)
            assert err["code"] == "CAPABILITY_NOT_GRANTED", (name, err)
            assert err["details"]["capability"] == "run_commands", (name, err)
            assert "launch_allow" in err["message"], (name, err)
        time.sleep(1.5)
        ran = sorted(p.name for p in markers.iterdir())
        assert not ran, f"refused launches ran their commands: {ran}"

        # An installed app's entry: by id, and its program by path.
        ack = c.call("APP_LAUNCH", {"bundle_id": "deskhand-clock", "activate": False},
                     expect="ACK")
        started.append(ack["pid"])
        poll(lambda: run(d.display, "xdotool", "search", "--onlyvisible", "--name",
                         f"^{title}$", check=False).strip(),
             timeout=15, what="the window of the entry's xclock")
        ack = c.call("APP_LAUNCH", {"executable_path": shutil.which("xclock"),
                                    "activate": False}, expect="ACK")
        started.append(ack["pid"])
        poll(lambda: run(d.display, "xdotool", "search", "--onlyvisible", "--name", "^xclock$",
                         check=False).strip(),
             timeout=15, what="the window of xclock launched by path")

        # launch_allow: exactly that file runs, with any arguments, also
        # under another name; another file (the original touch) does not.
        ack = c.call("APP_LAUNCH", {"executable_path": str(allowed),
                                    "args": ["-m", str(marker("allowed"))], "activate": False},
                     expect="ACK")
        poll(marker("allowed").exists, timeout=10, what="the allowed executable to run")
        link = allowed.parent / "same-file"
        os.link(allowed, link)
        c.call("APP_LAUNCH", {"executable_path": str(link), "args": [str(marker("linked"))],
                              "activate": False}, expect="ACK")
        poll(marker("linked").exists, timeout=10, what="the allowed file under another name")
        err = refused_launch(c, {"executable_path": shutil.which("touch"),
                                 "args": [str(marker("not-allowed"))]})
        assert err["code"] == "CAPABILITY_NOT_GRANTED", err
        time.sleep(1.0)
        assert not marker("not-allowed").exists()
    finally:
        for pid in started:
            subprocess.run(["kill", str(pid)], check=False)
        d.terminate()
        shutil.rmtree(home_bin, ignore_errors=True)


def test_launch_and_focus_need_a_takeover_and_are_refused_while_paused(daemon, display):
    term = XTerm(display)
    try:
        bystander = daemon.client(takeover=False)
        windows = bystander.call("WINDOW_LIST_REQUEST", {}, expect="WINDOW_LIST_RESPONSE")
        wid = next(w["window_id"] for w in windows["windows"] if w["title"] == term.title)
        for mtype, payload in (("WINDOW_FOCUS", {"window_id": wid}),
                               ("APP_LAUNCH", {"executable_path": "/usr/bin/xterm"})):
            msg = bystander.request(mtype, payload)
            assert msg["type"] == "ERROR", msg
            p = msg["payload"]
            assert (p["code"], p["details"]["needed"]) == ("CAPABILITY_NOT_GRANTED", "takeover"), p
        driver = daemon.client()
        paused_by_the_person(driver, display)
        for mtype, payload in (("WINDOW_FOCUS", {"window_id": wid}),
                               ("APP_LAUNCH", {"executable_path": "/usr/bin/xterm"})):
            msg = driver.request(mtype, payload)
            assert msg["type"] == "ERROR" and msg["payload"]["code"] == "USER_TOOK_OVER", msg
        driver.close()
        bystander.close()
        continue_if_held(daemon)
    finally:
        term.close()


def test_an_overlong_window_id_is_refused_and_the_audit_history_stays(daemon, client):
    marker = unique_title("before-the-flood")
    client.request("PERMISSIONS_CHECK_REQUEST", {"permissions": [marker[:40]]})
    huge = "win_" + "x" * (2 * 1024 * 1024)
    for _ in range(5):
        msg = client.request("WINDOW_FOCUS", {"window_id": huge})
        assert msg["type"] == "ERROR" and msg["payload"]["code"] == "INVALID_ARGUMENTS", \
            str(msg)[:300]
        assert len(json.dumps(msg)) < 4096, "the reply echoes the id"
    lines = daemon.audit_log.read_text().splitlines()
    assert all(len(line.encode()) <= 4096 for line in lines), max(map(len, lines))
    records = [json.loads(line) for line in lines]
    assert any(r["session"] == client.hello["payload"]["session_id"]
               and r["op"] == "session.open" for r in records), "earlier records were rotated out"
    session = client.hello["payload"]["session_id"]

    def refused_focus() -> int:
        """The refusals recorded: written one by one, or counted (a refusal
        the session repeats is counted, the count written within 10 s)."""
        mine = [json.loads(line) for line in daemon.audit_log.read_text().splitlines()]
        mine = [r for r in mine if r["session"] == session and r["op"] == "window.focus"]
        assert all(r["outcome"] == "invalid_arguments" for r in mine), mine
        return sum((r["target"] or {}).get("repeated", 1) for r in mine)

    poll(lambda: refused_focus() == 5, timeout=20, what="the five refusals in the audit log")


def test_a_client_killed_mid_type_stops_typing(daemon, display, apps, tmp_path):
    out = tmp_path / "typed.txt"
    term = XTerm(display, command=["sh", "-c", f"stty -echo; cat > {out}"])
    apps.append(term)
    x, y = term.rect().center()
    attach(display).person.click(x, y)
    line = "a" * 49 + "\n"
    agent = agent_process(daemon, {"action": "type", "text": line * 1300})
    poll(lambda: out.exists() and out.stat().st_size > 500, timeout=20,
         what="the typed text to start arriving")
    agent.kill()
    agent.wait()
    time.sleep(0.5)
    stopped_at = out.stat().st_size
    time.sleep(1.5)
    assert out.stat().st_size == stopped_at, "typing went on after the client died"
    assert stopped_at < len(line) * 1300 // 2, stopped_at
    assert not any(attach(display).held_keys().values()), attach(display).held_keys()


def test_a_client_killed_mid_hold_releases_everything(daemon, display):
    agent = agent_process(daemon, {"action": "hold_key", "key": "shift", "duration_ms": 20000})
    poll(lambda: any(attach(display).held_keys().values()), timeout=10, what="shift to be held")
    agent.kill()
    agent.wait()
    poll(lambda: not any(attach(display).held_keys().values()), timeout=2,
         what="shift released long before the 20 s hold ends")
