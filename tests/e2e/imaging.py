"""Tiny pure-stdlib image readers for the end-to-end tests.

PNG: full decode of non-interlaced images (greyscale, RGB, palette,
grey+alpha, RGBA; 1/2/4/8/16-bit), enough to read pixels of any screenshot
an encoder produces.
JPEG: structural check only (SOI, segments, SOFn size, EOI).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


@dataclass
class Image:
    width: int
    height: int
    channels: int  # samples per pixel in `rows` (one byte each)
    rows: list[bytes]
    palette: bytes | None = None

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        """RGB of pixel (x, y); alpha is dropped."""
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise IndexError(f"pixel ({x}, {y}) outside {self.width}x{self.height}")
        row = self.rows[y]
        c = self.channels
        px = row[x * c : (x + 1) * c]
        if self.palette is not None:
            i = px[0] * 3
            return tuple(self.palette[i : i + 3])  # type: ignore[return-value]
        if c in (1, 2):
            return (px[0], px[0], px[0])
        return (px[0], px[1], px[2])


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def _unfilter(data: bytes, width: int, height: int, bpp: int) -> list[bytes]:
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    pos = 0
    for _ in range(height):
        ftype = data[pos]
        cur = bytearray(data[pos + 1 : pos + 1 + stride])
        pos += 1 + stride
        if len(cur) != stride:
            raise ValueError("PNG image data is truncated")
        if ftype == 0:
            pass
        elif ftype == 1:
            for i in range(bpp, stride):
                cur[i] = (cur[i] + cur[i - bpp]) & 0xFF
        elif ftype == 2:
            for i in range(stride):
                cur[i] = (cur[i] + prev[i]) & 0xFF
        elif ftype == 3:
            for i in range(stride):
                left = cur[i - bpp] if i >= bpp else 0
                cur[i] = (cur[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                left = cur[i - bpp] if i >= bpp else 0
                upleft = prev[i - bpp] if i >= bpp else 0
                cur[i] = (cur[i] + _paeth(left, prev[i], upleft)) & 0xFF
        else:
            raise ValueError(f"bad PNG filter type {ftype}")
        rows.append(bytes(cur))
        prev = cur
    return rows


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the IHDR chunk, without decoding."""
    if data[:8] != PNG_SIGNATURE or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    return struct.unpack(">II", data[16:24])


def decode_png(data: bytes) -> Image:
    if data[:8] != PNG_SIGNATURE:
        raise ValueError("not a PNG (bad signature)")
    pos = 8
    ihdr = None
    palette = None
    idat = bytearray()
    seen_iend = False
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        ctype = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        if zlib.crc32(ctype + body) & 0xFFFFFFFF != crc:
            raise ValueError(f"PNG chunk {ctype!r} has a bad CRC")
        pos += 12 + length
        if ctype == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif ctype == b"PLTE":
            palette = bytes(body)
        elif ctype == b"IDAT":
            idat += body
        elif ctype == b"IEND":
            seen_iend = True
            break
    if ihdr is None or not seen_iend:
        raise ValueError("PNG lacks IHDR or IEND")
    width, height, depth, ctype_, _comp, _filt, interlace = ihdr
    if interlace != 0 or ctype_ not in _CHANNELS or depth not in (1, 2, 4, 8, 16):
        raise ValueError(f"unsupported PNG: depth={depth} color={ctype_} interlace={interlace}")
    channels = _CHANNELS[ctype_]
    if depth < 8 and channels != 1:
        raise ValueError(f"invalid PNG: depth {depth} with color type {ctype_}")
    raw = zlib.decompress(bytes(idat))
    if depth >= 8:
        bpp = channels * depth // 8
        rows = _unfilter(raw, width, height, bpp)
        if depth == 16:  # keep the high byte of each sample
            rows = [row[::2] for row in rows]
    else:
        stride = (width * depth + 7) // 8
        packed = _unfilter_packed(raw, stride, height)
        rows = [_unpack(row, width, depth, ctype_ == 0) for row in packed]
    return Image(width, height, channels, rows, palette if ctype_ == 3 else None)


def _unfilter_packed(raw: bytes, stride: int, height: int) -> list[bytes]:
    # sub-byte depths filter whole bytes with bpp = 1
    return _unfilter(raw, stride, height, 1)


def _unpack(row: bytes, width: int, depth: int, scale: bool) -> bytes:
    """Sub-byte samples to one byte each (greyscale scaled to 0..255)."""
    per_byte, mask = 8 // depth, (1 << depth) - 1
    mult = 255 // mask if scale else 1
    out = bytearray(width)
    for x in range(width):
        byte = row[x // per_byte]
        shift = 8 - depth * (x % per_byte + 1)
        out[x] = ((byte >> shift) & mask) * mult
    return bytes(out)


def jpeg_info(data: bytes) -> tuple[int, int]:
    """Validate JPEG structure; return (width, height) from the SOFn header."""
    if data[:2] != b"\xff\xd8":
        raise ValueError("not a JPEG (no SOI marker)")
    if data[-2:] != b"\xff\xd9":
        raise ValueError("JPEG does not end with an EOI marker")
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise ValueError(f"JPEG marker expected at byte {pos}")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        (seglen,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return width, height
        if marker == 0xDA:
            break  # start of scan before any SOF
        pos += 2 + seglen
    raise ValueError("JPEG has no SOF header")
