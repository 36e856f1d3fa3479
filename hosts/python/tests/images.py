"""Small test images made here, byte by byte (no corpus, no imaging library); the PDF is the
end-to-end tests' fixture."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width: int = 8, height: int = 8, rgb: tuple = (200, 30, 30)) -> bytes:
    """A valid RGB PNG of one colour."""
    row = b"\x00" + bytes(rgb) * width
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(row * height))
            + _chunk(b"IEND", b""))


def png_with_broken_pixels(width: int = 8, height: int = 8) -> bytes:
    """A PNG whose signature and header are right but whose pixel data cannot be decoded: only a
    check that decodes every pixel (`verify="full"`) finds out."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", b"this is not zlib data")
            + _chunk(b"IEND", b""))


#: An SVG document: what a file named `.png` often really is.
SVG = (b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
       b'<rect width="10" height="10" fill="red"/></svg>\n')

PDF = (Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "hello.pdf").read_bytes()
