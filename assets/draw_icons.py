#!/usr/bin/env python3
"""Draws deskhand's icons (no image library needed): a disc in the colour
of each tray state with a white window outline in it, anti-aliased, as
RGBA PNGs. Run from the repository root: python3 assets/draw_icons.py
(icon.icns and icon.ico, for the macOS and Windows bundles, are made from
icon.png by `npx tauri icon`)."""

import struct
import zlib
from pathlib import Path

STATES = {
    "idle": (0x8A, 0x8F, 0x98),       # no agent connected
    "connected": (0x2F, 0x80, 0xED),  # an agent is connected
    "takeover": (0xE5, 0x38, 0x3B),   # an agent drives (the red frame shows)
    "paused": (0xF2, 0xA9, 0x00),     # the person took over; Continue resumes
}
OUT = Path(__file__).resolve().parent / "icons"


def png(width: int, pixels: list[bytes]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    raw = b"".join(b"\x00" + row for row in pixels)
    header = struct.pack(">IIBBBBB", width, len(pixels), 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def coverage(inside, x: int, y: int, n: int = 4) -> float:
    """The share of pixel (x, y) that `inside` covers (n x n samples)."""
    hits = sum(inside(x + (i + 0.5) / n, y + (j + 0.5) / n) for i in range(n) for j in range(n))
    return hits / (n * n)


def draw(size: int, colour: tuple[int, int, int]) -> bytes:
    c, r = size / 2, size * 0.47
    disc = lambda x, y: (x - c) ** 2 + (y - c) ** 2 <= r * r
    # a window outline: a frame of width w with a title bar
    left, right, top, bottom, w = size * 0.27, size * 0.73, size * 0.30, size * 0.70, size * 0.06

    def window(x, y):
        if not (left <= x <= right and top <= y <= bottom):
            return False
        edge = x < left + w or x > right - w or y > bottom - w
        return edge or y < top + 2.2 * w

    rows = []
    for y in range(size):
        row = bytearray()
        for x in range(size):
            a = coverage(disc, x, y)
            white = coverage(window, x, y)
            rgb = [round(ch * (1 - white) + 255 * white) for ch in colour]
            row += bytes(rgb + [round(255 * a)])
        rows.append(bytes(row))
    return png(size, rows)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for state, colour in STATES.items():
        (OUT / f"tray-{state}.png").write_bytes(draw(32, colour))
    app = STATES["takeover"]
    for name, size in (("32x32.png", 32), ("128x128.png", 128), ("128x128@2x.png", 256),
                       ("icon.png", 512)):
        (OUT / name).write_bytes(draw(size, app))


if __name__ == "__main__":
    main()
