"""The tray app's windows driven over W3C WebDriver: `tauri-driver` in
front of WebKitWebDriver (Debian's webkit2gtk-driver), which starts the
app itself with the arguments given. A small client over urllib: new
session, window switching, finding, clicking and reading elements."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from daemon import kill_tree
from xhelpers import missing, poll

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tauri_driver_binary() -> str:
    found = shutil.which("tauri-driver") or str(Path.home() / ".cargo" / "bin" / "tauri-driver")
    if not os.access(found, os.X_OK):
        missing("tauri-driver (cargo install tauri-driver --locked)")
    if not shutil.which("WebKitWebDriver"):
        missing("WebKitWebDriver (apt install webkit2gtk-driver)")
    return found


class WebDriverError(Exception):
    pass


class Driver:
    """`tauri-driver` and one session of the app it started."""

    def __init__(self, app: str, args: list[str], env: dict[str, str]):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [tauri_driver_binary(), "--port", str(self.port), "--native-port", str(free_port())],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{self.port}"
        poll(self._up, timeout=20, what="tauri-driver to listen")
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "wry", "tauri:options": {"application": app, "args": args}}}}
        self.session = poll(lambda: self._new_session(caps), timeout=60,
                            what="a WebDriver session of the app")

    def _new_session(self, caps: dict) -> str | None:
        # tauri-driver listens before WebKitWebDriver behind it does: a
        # dropped connection means "not yet".
        try:
            return self._call("POST", "/session", caps, timeout=60)["sessionId"]
        except (ConnectionError, urllib.error.URLError):
            time.sleep(0.2)
            return None

    def _up(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def _call(self, method: str, path: str, body: dict | None = None, timeout: float = 30):
        data = json.dumps(body if body is not None else {}).encode() if method == "POST" else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        # tauri-driver's proxy now and then drops a request on a stale
        # connection to WebKitWebDriver before forwarding it: sent again.
        for attempt in range(3):
            try:
                with urllib.request.urlopen(req, timeout=timeout) as r:
                    return json.loads(r.read() or b"{}").get("value")
            except urllib.error.HTTPError as e:
                raise WebDriverError(f"{method} {path}: {e.code} {e.read()[:500]!r}") from None
            except http.client.RemoteDisconnected:
                if attempt == 2:
                    raise
                time.sleep(0.2)
        return None

    def _s(self, method: str, path: str, body: dict | None = None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def windows(self) -> list[str]:
        return self._s("GET", "/window/handles")

    def title(self) -> str:
        return self._s("GET", "/title")

    def switch_to_title(self, title: str, timeout: float = 20) -> None:
        """Makes the window titled `title` current, once it is open."""
        def find():
            for handle in self.windows():
                self._s("POST", "/window", {"handle": handle})
                if self.title() == title:
                    return handle
            return None
        poll(find, timeout=timeout, what=f"the window {title!r}")

    def find(self, css: str, timeout: float = 10) -> str:
        def look():
            try:
                return self._s("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]
            except WebDriverError:
                return None
        return poll(look, timeout=timeout, what=f"the element {css}")

    def find_all(self, css: str) -> list[str]:
        found = self._s("POST", "/elements", {"using": "css selector", "value": css})
        return [e[ELEMENT] for e in found]

    def click(self, css: str) -> None:
        self._s("POST", f"/element/{self.find(css)}/click")

    def text(self, css: str) -> str:
        return self._s("GET", f"/element/{self.find(css)}/text")

    def rect(self, css: str) -> dict:
        """The element's box in the page's CSS pixels (x, y, width, height)."""
        return self._s("GET", f"/element/{self.find(css)}/rect")

    def selected(self, css: str) -> bool:
        return self._s("GET", f"/element/{self.find(css)}/selected")

    def run(self, script: str, *args):
        return self._s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def wait_text(self, css: str, predicate, timeout: float = 15, what: str = "text") -> str:
        return poll(lambda: (lambda t: t if predicate(t) else None)(self.text(css)),
                    timeout=timeout, what=what)

    def quit(self) -> None:
        try:
            self._call("DELETE", f"/session/{self.session}", timeout=15)
        except (WebDriverError, OSError):
            pass
        kill_tree(self.proc)
        time.sleep(0.2)
