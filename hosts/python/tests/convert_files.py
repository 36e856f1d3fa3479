"""Files of the types the converter takes, written by hand from each format's specification (so no
converter of ours makes its own input). The real files made with other tools are in
tests/corpus/convert/ when that directory is there."""

from __future__ import annotations

import struct


def _pixel(x: int, y: int, width: int, height: int) -> tuple:
    return (round(255 * x / max(1, width - 1)), round(255 * y / max(1, height - 1)), 96)


def bmp(width: int = 40, height: int = 30) -> bytes:
    """A 24-bit BMP: BITMAPINFOHEADER, BI_RGB, bottom-up rows padded to 4 bytes."""
    row_bytes = (width * 3 + 3) // 4 * 4
    rows = []
    for y in range(height - 1, -1, -1):
        row = bytearray()
        for x in range(width):
            r, g, b = _pixel(x, y, width, height)
            row += bytes((b, g, r))
        row += b"\0" * (row_bytes - len(row))
        rows.append(bytes(row))
    pixels = b"".join(rows)
    header = b"BM" + struct.pack("<IHHI", 54 + len(pixels), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    return header + info + pixels


SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" width="300" height="150" viewBox="0 0 300 150">'
       b'<rect width="300" height="150" fill="#fff"/><rect x="20" y="20" width="110" height="60" fill="#2563eb"/>'
       b'<circle cx="220" cy="75" r="50" fill="#f97316"/></svg>\n')


def minimal_pdf(text: str = "mediagate") -> bytes:
    """A valid one-page PDF (the cross-reference offsets computed)."""
    stream = f"BT /F1 18 Tf 20 40 Td ({text}) Tj ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 100] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = "%PDF-1.4\n"
    offsets = []
    for i, body in enumerate(objects):
        offsets.append(len(out))
        out += f"{i + 1} 0 obj\n{body}\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n"
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    return out.encode()
