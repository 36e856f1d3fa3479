"""A small PDF writer for the filters no installed generator writes (LZW, RunLength, JBIG2).

It writes one page holding one image XObject drawn over the whole page, with a correct xref
table. The image data always comes from a real encoder (libtiff through Pillow): TIFF's LZW is
PDF's LZWDecode with EarlyChange 1, TIFF's PackBits is PDF's RunLengthDecode, and a CCITT G4
strip is what a JBIG2 generic region coded with MMR holds. This file only wraps those bytes.
"""

from __future__ import annotations

import io
import struct

from PIL import Image, TiffImagePlugin

# One strip for the whole image: an LZW stream cannot be split, and the strip is the stream.
_ONE_STRIP = 1 << 40

COLOUR_SPACES = {"L": b"/DeviceGray", "RGB": b"/DeviceRGB", "CMYK": b"/DeviceCMYK", "1": b"/DeviceGray"}


def _tiff_strip(image: Image.Image, compression: str) -> bytes:
    buf = io.BytesIO()
    image.save(buf, "TIFF", compression=compression, strip_size=_ONE_STRIP)
    buf.seek(0)
    tiff = Image.open(buf)
    offsets = tiff.tag_v2[TiffImagePlugin.STRIPOFFSETS]
    counts = tiff.tag_v2[TiffImagePlugin.STRIPBYTECOUNTS]
    data = buf.getvalue()
    # PackBits codes each row on its own, so its strips could be joined; LZW's could not.
    return b"".join(data[o : o + c] for o, c in zip(offsets, counts))


def lzw(image: Image.Image) -> tuple[bytes, bytes]:
    return _tiff_strip(image, "tiff_lzw"), b"/Filter /LZWDecode"


def run_length(image: Image.Image) -> tuple[bytes, bytes]:
    # 128 is RunLengthDecode's end of data; PackBits has no such marker.
    return _tiff_strip(image, "packbits") + b"\x80", b"/Filter /RunLengthDecode"


def _g4(image: Image.Image) -> bytes:
    return _tiff_strip(image, "group4")


def _jbig2_segment(number: int, kind: int, data: bytes) -> bytes:
    # Header: number, flags (type; page association in one byte), no referred segments,
    # page 1, data length.
    return struct.pack(">IBBBI", number, kind, 0, 1, len(data)) + data


def jbig2(image: Image.Image) -> tuple[bytes, bytes]:
    """The embedded JBIG2 organisation PDF uses: a page-information segment, one immediate
    lossless generic region coded with MMR (T.6, the G4 strip libtiff wrote) and end of page."""
    w, h = image.size
    # Pillow writes mode "1" as min-is-black, so libtiff codes the image's 0 bits (black) as
    # T.6 white runs; JBIG2 codes black as a T.6 black run, so the bits are flipped first.
    g4 = _g4(Image.eval(image.convert("L"), lambda v: 255 - v).convert("1"))
    page_info = struct.pack(">IIIIBH", w, h, 0, 0, 0x01, 0)
    region_info = struct.pack(">IIIIB", w, h, 0, 0, 0)
    generic_flags = b"\x01"  # MMR
    stream = (
        _jbig2_segment(0, 48, page_info)
        + _jbig2_segment(1, 39, region_info + generic_flags + g4)
        + _jbig2_segment(2, 49, b"")
    )
    return stream, b"/Filter /JBIG2Decode"


def write(path: str, image: Image.Image, encode, dpi: float) -> None:
    """One page of `image` drawn at `dpi`, its samples coded by `encode` (a function above)."""
    data, filter_entry = encode(image)
    w, h = image.size
    pw, ph = w * 72.0 / dpi, h * 72.0 / dpi
    bits = 1 if image.mode == "1" else 8
    image_dict = (
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /BitsPerComponent %d /ColorSpace %s %s /Length %d >>"
        % (w, h, bits, COLOUR_SPACES[image.mode], filter_entry, len(data))
    )
    content = b"q %.4f 0 0 %.4f 0 0 cm /Im0 Do Q" % (pw, ph)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.4f %.4f] /Resources << /XObject << /Im0 5 0 R >> >> "
        b"/Contents 4 0 R >>" % (pw, ph),
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        image_dict + b"\nstream\n" + data + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    with open(path, "wb") as f:
        f.write(out)
