"""An HTTP client for deskhand's computer endpoints (/v1/actions,
/v1/computer/*): JSON in, JSON out, the session header kept."""

from __future__ import annotations

import base64
import http.client
import json
import struct
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)


def request(port: int, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> Answer:
    """One raw request; `headers` are sent as given (no token added)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host="Host" in (headers or {}),
                        skip_accept_encoding=True)
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders()
        if body:
            try:
                conn.send(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused before the body was read: the answer still comes
        r = conn.getresponse()
        return Answer(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


class Computer:
    """A client of the computer endpoints in one HTTP session of its own:
    its first request asks for a fresh one (`new`), later ones send back
    the id the answers name. With `default=True` it sends no header at
    all, as a client written from a vendor's docs does: its token's
    default session."""

    def __init__(self, daemon, default: bool = False):
        self.port, self.token = daemon.port, daemon.token
        self.default = default
        self.session: str = "new"

    def _headers(self) -> dict[str, str]:
        h = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        if not self.default:
            h["X-Deskhand-Session"] = self.session
        return h

    def post(self, path: str, body) -> Answer:
        a = request(self.port, "POST", path, json.dumps(body).encode(), self._headers())
        if "x-deskhand-session" in a.headers:
            self.session = a.headers["x-deskhand-session"]
        return a

    def get(self, path: str) -> Answer:
        return request(self.port, "GET", path, None, self._headers())

    def actions(self, actions: list) -> dict:
        a = self.post("/v1/actions", actions)
        assert a.status == 200, (a.status, a.body[:300])
        return a.json()

    def anthropic(self, block: dict, query: str = "") -> dict:
        a = self.post("/v1/computer/anthropic" + query, block)
        assert a.status == 200, (a.status, a.body[:300])
        return a.json()

    def openai(self, call: dict, query: str = "") -> Answer:
        return self.post("/v1/computer/openai" + query, call)

    def end(self) -> None:
        """Ends the session (its takeover ends at once), by the id the
        answers named."""
        if self.session != "new":
            headers = dict(self._headers(), **{"X-Deskhand-Session": self.session})
            request(self.port, "DELETE", "/v1/computer/session", None, headers)
            self.session = "new"


def tool_result_image(result: dict) -> bytes:
    img = next(p for p in result["content"] if p["type"] == "image")
    return base64.b64decode(img["source"]["data"])


def tool_result_text(result: dict) -> str:
    return next((p["text"] for p in result["content"] if p["type"] == "text"), "")


def data_url_png(output: dict) -> bytes:
    url = output["output"]["image_url"]
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix), url[:40]
    return base64.b64decode(url[len(prefix):])


def fixture(name: str, **values) -> list:
    """A recorded action sequence with `{name}` placeholders filled in
    (numbers where the whole string is a placeholder)."""
    def fill(v):
        if isinstance(v, str) and v.startswith("{") and v.endswith("}") and v[1:-1] in values:
            return values[v[1:-1]]
        if isinstance(v, str):
            return v.format(**values)
        if isinstance(v, list):
            return [fill(x) for x in v]
        if isinstance(v, dict):
            return {k: fill(x) for k, x in v.items()}
        return v
    return fill(json.loads((FIXTURES / name).read_text()))
