"""Test media made here: PNGs written byte by byte (no metadata chunks, no imaging library), an
SVG that claims to be a PNG, the end-to-end tests' PDF fixture."""

from __future__ import annotations

import base64
import random
import struct
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _png(width: int, height: int, rows: bytes, level: int = 6) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(rows, level))
            + _chunk(b"IEND", b""))


def small_png() -> bytes:
    """A 16×12 RGB PNG with a gradient: IHDR, IDAT, IEND only (nothing to strip)."""
    rows = b"".join(b"\x00" + bytes(v for x in range(16) for v in (x * 16, y * 20, 128)) for y in range(12))
    return _png(16, 12, rows)


def screenshot_png(width: int = 2560, height: int = 1600, seed: int = 7) -> bytes:
    """A screenshot-sized PNG of about 6 MB: flat bands (a window's chrome) between bands of noise
    (photos, anti-aliased text) that compress poorly. Deterministic."""
    rnd = random.Random(seed)
    flat = b"\x00" + bytes((235, 238, 242)) * width
    rows = []
    for y in range(height):
        if (y // 40) % 2:
            rows.append(b"\x00" + rnd.randbytes(width * 3))
        else:
            rows.append(flat)
    return _png(width, height, b"".join(rows), level=1)


#: An SVG document: what a file named `.png` often really is.
SVG = (b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
       b'<rect width="10" height="10" fill="red"/></svg>\n')

PDF = (REPO / "tests" / "fixtures" / "hello.pdf").read_bytes()

#: An animated GIF: a type some providers (Gemini) do not take.
GIF = (REPO / "tests" / "corpus" / "convert" / "gif-animated-pillow.gif").read_bytes()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{b64(data)}"
