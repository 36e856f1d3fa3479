#!/usr/bin/env python3
"""Writes the converter bombs that fit the convert target's 16 KiB inputs into fuzz/seeds/
(bomb-*.svg, bomb-*.pdf): nesting deeper than the guest's stack takes, long text runs, long
outlines, a JBIG2 size its dictionary hides, filter chains, LZW, a huge inline image, a million
operators, form fan-out and a form cycle. The same classes, at full size, are the end-to-end tests
in tests/e2e/convert_bounds.rs. Run from anywhere: python3 fuzz/seeds/make_bombs.py"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">%s</svg>'


def write(name, data):
    if isinstance(data, str):
        data = data.encode()
    assert len(data) <= 16384, (name, len(data))
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def pdf(objects):
    out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return out


def stream(d, data):
    return b"<< " + d + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def page(content, resources=b"<< >>", more=(), content_dict=b""):
    return pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources " + resources + b" /Contents 4 0 R >>",
        stream(content_dict, content),
        *more,
    ])


rect = '<rect width="1" height="1" fill="red"/>'
write("bomb-nested-g.svg", SVG % ("<g>" * 400 + rect + "</g>" * 400))
write("bomb-nested-opacity.svg", SVG % ('<g opacity=".9">' * 400 + rect + "</g>" * 400))
write("bomb-patterns.svg", SVG % ("".join(
    f'<pattern id="p{i}" width="1" height="1"><rect width="1" height="1" fill="url(#p{i - 1})"/></pattern>'
    for i in range(1, 120)) + '<pattern id="p0" width="1" height="1">' + rect + '</pattern><rect width="9" height="9" fill="url(#p119)"/>'))
write("bomb-masks.svg", SVG % ('<mask id="m0">' + rect + "</mask>" + "".join(
    f'<mask id="m{i}"><rect width="1" height="1" mask="url(#m{i - 1})"/></mask>' for i in range(1, 150))
    + '<rect width="9" height="9" mask="url(#m149)"/>'))
write("bomb-clips.svg", SVG % ('<clipPath id="c0"><rect/></clipPath>' + "".join(
    f'<clipPath id="c{i}" clip-path="url(#c{i - 1})"><rect/></clipPath>' for i in range(1, 220))
    + '<rect width="9" height="9" clip-path="url(#c219)"/>'))
write("bomb-text-run.svg", '<!DOCTYPE svg [<!ENTITY a "' + "x" * 100 + '">]>'
      + SVG % ('<text y="50">' + "&a;" * 1500 + "</text>"))
write("bomb-outline.svg", SVG % ('<defs><path id="l" d="M50 50' + " c1 1 2 2 0 0" * 1000 + '" fill="none" stroke="#000"/>'
                                 + '<g id="t">' + '<use href="#l"/>' * 20 + "</g></defs>" + '<use href="#t"/>' * 20))

# A JBIG2 page-information segment of 65535x65535 in an image that says 10x10.
jbig2 = bytes([0, 0, 0, 0, 48, 0, 1]) + struct.pack(">III", 19, 65535, 65535) + bytes(11)
image = stream(b"/Type /XObject /Subtype /Image /Width 10 /Height 10 /BitsPerComponent 1 "
               b"/ColorSpace /DeviceGray /Filter /JBIG2Decode", jbig2)
write("bomb-jbig2.pdf", page(b"q 100 0 0 100 0 0 cm /Im0 Do Q", b"<< /XObject << /Im0 5 0 R >> >>", [image]))
inner = zlib.compress(bytes(300 * 1024 * 1024), 9)
twice = zlib.compress(inner, 9)
write("bomb-flate-flate.pdf", page(twice, content_dict=b"/Filter [/FlateDecode /FlateDecode]"))
write("bomb-hex-flate-flate.pdf", page(twice.hex().encode() + b">",
                                       content_dict=b"/Filter [/ASCIIHexDecode /FlateDecode /FlateDecode]"))
# LZW (early change): codes 256 (clear), then 0 and the ever-longer strings of zeros it builds.
def lzw_zeros(codes):
    bits, out, width, nxt = [], bytearray(), 9, 258
    seq = [256, 0] + list(range(258, 258 + codes))
    for code in seq:
        bits.append((code, width))
        if code >= 258 or code == 0:
            nxt += 1 if code != 0 else 0
        if nxt + 1 >= (1 << width) and width < 12:
            width += 1
    acc, n = 0, 0
    for code, w in bits:
        acc = acc << w | code
        n += w
        while n >= 8:
            n -= 8
            out.append(acc >> n & 0xFF)
    if n:
        out.append(acc << (8 - n) & 0xFF)
    return bytes(out)
write("bomb-lzw.pdf", page(lzw_zeros(3000), content_dict=b"/Filter /LZWDecode"))
write("bomb-inline-image.pdf", page(b"q 100 0 0 100 0 0 cm BI /W 7000 /H 7000 /BPC 8 /CS /G /F /Fl ID "
                                    + zlib.compress(b"\0" * 64) + b" EI Q"))
write("bomb-operators.pdf", page(zlib.compress(b"0 0 m " * 1_000_001, 9), content_dict=b"/Filter /FlateDecode"))
forms = [stream(b"/Type /XObject /Subtype /Form /BBox [0 0 595 842] /Resources << /XObject << /X %d 0 R >> >>" % (6 + i),
                b"/X Do " * 10) for i in range(11)]
forms.append(stream(b"/Type /XObject /Subtype /Form /BBox [0 0 595 842] /Resources << >>", b"0 0 10 10 re f"))
write("bomb-form-fan-out.pdf", page(b"/X0 Do", b"<< /XObject << /X0 5 0 R >> >>", forms))
write("bomb-form-cycle.pdf", page(b"/X0 Do", b"<< /XObject << /X0 5 0 R >> >>", [stream(
    b"/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << /XObject << /X0 5 0 R >> >>", b"/X0 Do /X0 Do")]))

# The jpeg target: small real JPEGs whose frame header is made to declare more pixels than the
# scan holds (the decoder pads the missing blocks), so that a few hundred bytes reach the fit's
# 1/2, 1/4 and 1/8 DCT scales and the 50 MP edge.
for source in ("gray.jpg", "rgb.jpg"):
    with open(os.path.join(HERE, source), "rb") as f:
        jpeg = f.read()
    sof = jpeg.index(b"\xff\xc0")
    for w, h in ((4000, 3000), (8000, 6000), (16000, 3000), (7000, 7000), (65535, 1)):
        declared = jpeg[:sof + 5] + struct.pack(">HH", h, w) + jpeg[sof + 9:]
        write("jpeg-%s-declares-%dx%d.jpg" % (source[:-4], w, h), declared)
