"""SIGTERM: held input released, virtual desktop stopped, exit 0."""

import json
import time

from daemon import Daemon, process_alive
from desktop import attach
from xhelpers import poll


def test_sigterm_exits_zero_and_stops_the_virtual_desktop():
    d = Daemon("--virtual=1280x800")
    try:
        assert attach(d.display).alive()
        c = d.client()
        c.act("mouse_down", coordinate=[400, 300], button="left")
        children = poll(d.descendants, timeout=5, what="deskhand's child processes")
        t0 = time.monotonic()
        rc = d.terminate(timeout=15)
        elapsed = time.monotonic() - t0
    finally:
        d.kill()
    assert rc == 0, f"exit code {rc} after SIGTERM\n{d.stderr_tail()}"
    assert elapsed < 10, f"shutdown took {elapsed:.1f}s"
    attach(d.display).assert_gone()
    poll(lambda: not [p for p in children if process_alive(p)], timeout=5,
         what=f"deskhand's children {children} to exit")
    # After the ready line, stdout is the host's control pipe: JSON events
    # only (this client's session starting and ending), never logs.
    events = [json.loads(line) for line in d.extra_stdout()]
    assert [e["event"] for e in events] in (["session.started", "session.ended"],
                                            ["session.started"]), events


def test_sigterm_right_after_ready_exits_zero():
    """The ready line promises a daemon that handles SIGTERM: a supervisor may
    stop it at once. Repeated, since the window is small."""
    for attempt in range(8):
        d = Daemon("--virtual=640x480")
        try:
            rc = d.terminate()
        finally:
            d.kill()
        assert rc == 0, f"attempt {attempt}: exit code {rc}\n{d.stderr_tail()}"
        attach(d.display).assert_gone()
