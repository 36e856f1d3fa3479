"""The carriers: each makes a real image that hides a marker text in one place a decoder does not
show, so that the test can ask whether that place survives the gate's canonical form.

Pillow writes what it can (EXIF, XMP, comments, text chunks, ICC profiles); the rest is byte
surgery on what Pillow wrote, with lengths, CRCs and RIFF sizes made right so that every decoder
still reads the file as an ordinary image.
"""

from __future__ import annotations

import io
import random
import struct
import zlib
from dataclasses import dataclass
from typing import Callable

from PIL import Image, ImageCms, PngImagePlugin

W, H = 48, 32


@dataclass(frozen=True)
class Carrier:
    name: str
    ext: str
    # marker -> the image's bytes
    make: Callable[[bytes], bytes]
    # The `dropped` kind docs/design.md names for this place (for a carrier still open, the
    # kind the gate should name when it closes it).
    kind: str
    # Metadata that `--keep-metadata` keeps as given (the other places are repairs or parts the
    # canonical form rewrites whatever the options).
    metadata: bool = False
    # The input's reference pixels are read as libpng reads them, an ancillary chunk whose CRC
    # fails skipped (Pillow refuses such a file unless told to load what it can).
    lenient: bool = False


def _pixels(marker: bytes, mode: str = "RGB") -> Image.Image:
    # Seeded by the marker: a failure's image can be made again from the marker in its message.
    rng = random.Random(marker)
    bands = len(mode)
    return Image.frombytes(mode, (W, H), bytes(rng.getrandbits(8) for _ in range(W * H * bands)))


def _save(im: Image.Image, fmt: str, **params) -> bytes:
    out = io.BytesIO()
    im.save(out, fmt, **params)
    return out.getvalue()


def _xmp(marker: bytes) -> bytes:
    return (
        b'<?xpacket begin="\xef\xbb\xbf" id="W5M0MpCehiHzreSzNTczkc9d"?>'
        b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
        b'<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">'
        b"<dc:description>" + marker + b"</dc:description>"
        b'</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>'
    )


def _exif(marker: bytes, utf16: bool = False) -> bytes:
    exif = Image.Exif()
    if utf16:
        # XPComment: Windows' UTF-16LE tag, which a plain byte search does not see.
        exif[0x9C9C] = marker.decode().encode("utf-16-le") + b"\0\0"
    else:
        exif[0x010E] = marker.decode()  # ImageDescription
    return exif.tobytes()


def _srgb_profile() -> bytes:
    return ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()


def icc_with_private_tag(marker: bytes) -> bytes:
    """The sRGB profile with one more tag, a private `text` tag holding the marker: a profile every
    colour engine still uses, carrying free text none of them reads."""
    profile = _srgb_profile()
    (count,) = struct.unpack(">I", profile[128:132])
    table = [struct.unpack(">4sII", profile[132 + 12 * i : 144 + 12 * i]) for i in range(count)]
    data_start = 132 + 12 * count
    body = profile[data_start:]
    body += b"\0" * (-len(body) % 4)
    text = b"text\0\0\0\0" + marker + b"\0"
    # One more 12-byte entry in the tag table moves every tag's data along by as much.
    shift = 12
    entries = [(sig, off + shift, size) for sig, off, size in table]
    entries.append((b"smug", data_start + shift + len(body), len(text)))
    body += text + b"\0" * (-len(text) % 4)
    out = bytearray(profile[:128])
    out += struct.pack(">I", len(entries))
    for sig, off, size in entries:
        out += struct.pack(">4sII", sig, off, size)
    out += body
    out[0:4] = struct.pack(">I", len(out))
    out[84:100] = bytes(16)  # profile ID: zero means "not computed"
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# JPEG


def _segment(marker: int, payload: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def jpeg_segments(data: bytes) -> tuple[list[tuple[int, bytes]], bytes]:
    """The marker segments from SOI up to the first scan, and the rest from SOS on."""
    assert data[:2] == b"\xff\xd8"
    at, segments = 2, []
    while data[at + 1] != 0xDA:
        marker = data[at + 1]
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        segments.append((marker, data[at + 4 : at + 2 + length]))
        at += 2 + length
    return segments, data[at:]


def jpeg_join(segments: list[tuple[int, bytes]], rest: bytes) -> bytes:
    return b"\xff\xd8" + b"".join(_segment(m, p) for m, p in segments) + rest


def _jpeg(marker: bytes, **params) -> bytes:
    return _save(_pixels(marker), "JPEG", quality=90, **params)


def _jpeg_after_app0(marker: bytes, segment: tuple[int, bytes]) -> bytes:
    segments, rest = jpeg_segments(_jpeg(marker))
    assert segments[0][0] == 0xE0 and segments[0][1].startswith(b"JFIF\0")
    return jpeg_join(segments[:1] + [segment] + segments[1:], rest)


def jpeg_jfif_thumbnail(marker: bytes) -> bytes:
    segments, rest = jpeg_segments(_jpeg(marker))
    header = segments[0][1][:12]
    tw = -(-len(marker) // 3)
    thumbnail = marker.ljust(3 * tw, b" ")
    segments[0] = (0xE0, header + bytes([tw, 1]) + thumbnail)
    return jpeg_join(segments, rest)


def jpeg_adobe_long(marker: bytes) -> bytes:
    # Version 100, no flags, transform 1 (YCbCr): what the JFIF file already is, so the 12 bytes
    # change no colour; the marker follows them.
    return _jpeg_after_app0(marker, (0xEE, b"Adobe\x00\x64\x00\x00\x00\x00\x01" + marker))


def jpeg_private_app(marker: bytes) -> bytes:
    return _jpeg_after_app0(marker, (0xE9, b"SMUG\0" + marker))


def jpeg_iptc(marker: bytes) -> bytes:
    # Photoshop's image resource 0x0404 (IPTC-NAA) holding record 2, dataset 120 (the caption).
    iptc = b"\x1c\x02\x78" + struct.pack(">H", len(marker)) + marker
    iptc += b"\0" * (len(iptc) & 1)
    resource = b"8BIM\x04\x04\0\0" + struct.pack(">I", len(iptc)) + iptc
    return _jpeg_after_app0(marker, (0xED, b"Photoshop 3.0\0" + resource))


def jpeg_stray(marker: bytes) -> bytes:
    # Bytes where a marker must stand: libjpeg skips them ("extraneous bytes before marker").
    segments, rest = jpeg_segments(_jpeg(marker))
    head = jpeg_join(segments, b"")
    return head + marker + rest


def jpeg_scan_tail(marker: bytes) -> bytes:
    # After the scan's last used bit, before EOI: libjpeg has every block and skips the rest
    # ("extraneous bytes before marker 0xd9").
    data = _jpeg(marker)
    assert data.endswith(b"\xff\xd9")
    return data[:-2] + marker + b"\xff\xd9"


def jpeg_unused_huffman_table(marker: bytes) -> bytes:
    # An AC table in slot 3, which no scan of a Pillow JPEG uses: libjpeg reads its counts and
    # symbols and checks the codes only of the tables a scan names.
    bits = bytes(15) + bytes([len(marker)])
    return _jpeg_after_app0(marker, (0xC4, b"\x13" + bits + marker))


def jpeg_unused_quant_table(marker: bytes) -> bytes:
    # An 8-bit table in slot 3, which no component of a Pillow JPEG names.
    assert len(marker) <= 64
    return _jpeg_after_app0(marker, (0xDB, b"\x03" + marker.ljust(64, b"\x01")))


# ---------------------------------------------------------------------------------------------
# PNG


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, []
    while at + 8 <= len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        chunks.append((data[at + 4 : at + 8], data[at + 8 : at + 8 + length]))
        at += 12 + length
        if chunks[-1][0] == b"IEND":
            break
    return chunks


def png_chunk(kind: bytes, data: bytes, crc: int | None = None) -> bytes:
    crc = zlib.crc32(kind + data) if crc is None else crc
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def png_join(chunks: list[tuple[bytes, bytes]]) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"".join(png_chunk(k, d) for k, d in chunks)


def _png(marker: bytes, mode: str = "RGB", **params) -> bytes:
    return _save(_pixels(marker, mode), "PNG", **params)


def _png_with(marker: bytes, chunk: tuple[bytes, bytes], before: bytes = b"IDAT") -> bytes:
    chunks = png_chunks(_png(marker))
    at = next(i for i, (k, _) in enumerate(chunks) if k == before)
    return png_join(chunks[:at] + [chunk] + chunks[at:])


def png_iccp_name(marker: bytes) -> bytes:
    assert len(marker) <= 79
    return _png_with(marker, (b"iCCP", marker + b"\0\0" + zlib.compress(_srgb_profile())))


def png_iccp_after_zlib(marker: bytes) -> bytes:
    return _png_with(marker, (b"iCCP", b"ICC Profile\0\0" + zlib.compress(_srgb_profile()) + marker))


def png_idat_after_zlib(marker: bytes) -> bytes:
    chunks = png_chunks(_png(marker))
    last = max(i for i, (k, _) in enumerate(chunks) if k == b"IDAT")
    chunks[last] = (b"IDAT", chunks[last][1] + marker)
    return png_join(chunks)


def png_idat_extra_chunk(marker: bytes) -> bytes:
    chunks = png_chunks(_png(marker))
    last = max(i for i, (k, _) in enumerate(chunks) if k == b"IDAT")
    return png_join(chunks[: last + 1] + [(b"IDAT", marker)] + chunks[last + 1 :])


def png_text(marker: bytes, zip: bool = False, itxt: bool = False) -> bytes:
    info = PngImagePlugin.PngInfo()
    if itxt:
        info.add_itxt("Comment", marker.decode(), lang="en", tkey="Comment", zip=zip)
    else:
        info.add_text("Comment", marker.decode(), zip=zip)
    return _png(marker, pnginfo=info)


def png_xmp(marker: bytes) -> bytes:
    info = PngImagePlugin.PngInfo()
    info.add_itxt("XML:com.adobe.xmp", _xmp(marker).decode())
    return _png(marker, pnginfo=info)


def png_bad_crc(marker: bytes) -> bytes:
    # An ancillary chunk whose CRC fails: libpng skips it unread, so it must not pass either.
    chunks = png_chunks(_png(marker))
    bad = png_chunk(b"tEXt", b"Comment\0" + marker, crc=zlib.crc32(b"tEXt") ^ 1)
    idat = next(i for i, (k, _) in enumerate(chunks) if k == b"IDAT")
    head, tail = png_join(chunks[:idat]), png_join(chunks[idat:])[8:]
    return head + bad + tail


def png_palette_unused(marker: bytes) -> bytes:
    # Four colours in use; the marker sits in palette entries no pixel names.
    rng = random.Random(marker)
    im = Image.frombytes("P", (W, H), bytes(rng.randrange(4) for _ in range(W * H)))
    palette = bytes(rng.getrandbits(8) for _ in range(12)) + marker
    palette += b"\0" * (-len(palette) % 3)
    im.putpalette(palette)
    data = _save(im, "PNG", optimize=False)
    chunks = png_chunks(data)
    i = next(i for i, (k, _) in enumerate(chunks) if k == b"PLTE")
    chunks[i] = (b"PLTE", palette)
    return png_join(chunks)


# ---------------------------------------------------------------------------------------------
# GIF


def _gif_base(marker: bytes, **params) -> bytes:
    rng = random.Random(marker)
    im = Image.frombytes("P", (W, H), bytes(rng.randrange(16) for _ in range(W * H)))
    im.putpalette(bytes(rng.getrandbits(8) for _ in range(48)))
    # Not optimized: Pillow would otherwise rewrite the palette the carriers count on.
    return _save(im, "GIF", optimize=False, **params)


def _gif_header_end(data: bytes) -> int:
    packed = data[10]
    return 13 + (3 * (2 << (packed & 7)) if packed & 0x80 else 0)


def _sub_blocks(payload: bytes) -> bytes:
    return b"".join(bytes([len(payload[i : i + 255])]) + payload[i : i + 255] for i in range(0, len(payload), 255)) + b"\0"


def _gif_insert(marker: bytes, block: bytes) -> bytes:
    data = _gif_base(marker)
    at = _gif_header_end(data)
    return data[:at] + block + data[at:]


def gif_netscape_extra(marker: bytes) -> bytes:
    # The loop count sub-block (id 1, count 0) and then one more sub-block no viewer reads.
    return _gif_insert(marker, b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00" + _sub_blocks(marker))


def gif_netscape_long_count(marker: bytes) -> bytes:
    # The loop count sub-block itself longer than its three bytes.
    block = b"\x01\x00\x00" + marker
    return _gif_insert(marker, b"\x21\xff\x0bNETSCAPE2.0" + bytes([len(block)]) + block + b"\0")


def gif_app_unknown(marker: bytes) -> bytes:
    return _gif_insert(marker, b"\x21\xff\x0bSMUGGLER1.0" + _sub_blocks(marker))


def gif_xmp(marker: bytes) -> bytes:
    # XMP's GIF form: the packet raw (its bytes read as sub-block lengths) and the 258-byte
    # "magic trailer" that walks any such reading back to the terminator.
    trailer = b"\x01" + bytes(range(255, -1, -1)) + b"\0"
    return _gif_insert(marker, b"\x21\xff\x0bXMP DataXMP" + _xmp(marker) + trailer)


def gif_plain_text(marker: bytes) -> bytes:
    grid = struct.pack("<HHHHBBBB", 0, 0, W, H, 8, 8, 1, 0)
    return _gif_insert(marker, b"\x21\x01\x0c" + grid + _sub_blocks(marker))


def gif_unknown_label(marker: bytes) -> bytes:
    return _gif_insert(marker, b"\x21\x99" + _sub_blocks(marker))


def gif_lzw_after_end(marker: bytes) -> bytes:
    # One more sub-block after the frame's LZW end-of-information code, before its terminator:
    # decoders stop at the end code and skip the rest of the run.
    data = _gif_base(marker)
    at = data.index(b"\x2c", _gif_header_end(data))
    packed = data[at + 9]
    at += 10 + (3 * (2 << (packed & 7)) if packed & 0x80 else 0) + 1
    while data[at]:
        at += 1 + data[at]
    return data[:at] + bytes([len(marker)]) + marker + data[at:]


def gif_palette_unused(marker: bytes) -> bytes:
    # Sixteen colours in use, the global table grown to 256 entries: the marker in entries no
    # pixel names.
    data = _gif_base(marker)
    end = _gif_header_end(data)
    table = data[13:end][:48] + marker
    table += bytes(768 - len(table))
    screen = bytearray(data[:13])
    screen[10] = (screen[10] & 0x78) | 0x80 | 7
    return bytes(screen) + table + data[end:]


# ---------------------------------------------------------------------------------------------
# WebP


def riff_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    (size,) = struct.unpack("<I", data[4:8])
    at, chunks = 12, []
    while at + 8 <= size + 8:
        kind, (length,) = data[at : at + 4], struct.unpack("<I", data[at + 4 : at + 8])
        chunks.append((kind, data[at + 8 : at + 8 + length]))
        at += 8 + length + (length & 1)
    return chunks


def riff_join(chunks: list[tuple[bytes, bytes]]) -> bytes:
    body = b"WEBP" + b"".join(k + struct.pack("<I", len(d)) + d + b"\0" * (len(d) & 1) for k, d in chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def _webp(marker: bytes, **params) -> bytes:
    return _save(_pixels(marker, "RGBA"), "WEBP", lossless=True, **params)


def _webp_extended(marker: bytes) -> list[tuple[bytes, bytes]]:
    """The lossless image in the extended form (VP8X first), where unknown chunks may stand."""
    chunks = [c for c in riff_chunks(_webp(marker)) if c[0] != b"VP8X"]
    alpha = 0x10
    vp8x = bytes([alpha, 0, 0, 0]) + (W - 1).to_bytes(3, "little") + (H - 1).to_bytes(3, "little")
    return [(b"VP8X", vp8x)] + chunks


def webp_unknown_chunk(marker: bytes) -> bytes:
    return riff_join(_webp_extended(marker) + [(b"SMUG", marker)])


def webp_image_chunk_trailing(marker: bytes) -> bytes:
    # Bytes after the lossless bitstream, inside its own chunk (the chunk's size grown to hold them).
    chunks = _webp_extended(marker)
    i = next(i for i, (k, _) in enumerate(chunks) if k == b"VP8L")
    chunks[i] = (b"VP8L", chunks[i][1] + marker)
    return riff_join(chunks)


def webp_anmf_unknown_chunk(marker: bytes) -> bytes:
    # An animation of two frames; in the first frame's ANMF, after its image, an unknown chunk
    # (the container allows them there, and decoders skip them).
    first, second = _pixels(marker, "RGBA"), _pixels(marker[::-1], "RGBA")
    data = _save(first, "WEBP", lossless=True, save_all=True, append_images=[second], duration=100, loop=0)
    chunks = riff_chunks(data)
    i = next(i for i, (k, _) in enumerate(chunks) if k == b"ANMF")
    chunks[i] = (b"ANMF", chunks[i][1] + b"SMUG" + struct.pack("<I", len(marker)) + marker + b"\0" * (len(marker) & 1))
    return riff_join(chunks)


# ---------------------------------------------------------------------------------------------


def _after(make: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    return lambda marker: make(marker) + marker


CARRIERS: list[Carrier] = [
    # JPEG
    Carrier("jpeg-jfif-thumbnail", "jpg", jpeg_jfif_thumbnail, "other-metadata"),
    Carrier("jpeg-adobe-app14-long", "jpg", jpeg_adobe_long, "other-metadata"),
    Carrier("jpeg-exif", "jpg", lambda m: _jpeg(m, exif=_exif(m)), "exif", metadata=True),
    Carrier("jpeg-exif-utf16", "jpg", lambda m: _jpeg(m, exif=_exif(m, utf16=True)), "exif", metadata=True),
    Carrier("jpeg-xmp", "jpg", lambda m: _jpeg(m, xmp=_xmp(m)), "xmp", metadata=True),
    Carrier("jpeg-iptc", "jpg", jpeg_iptc, "iptc", metadata=True),
    Carrier("jpeg-com", "jpg", lambda m: _jpeg(m, comment=m), "comment", metadata=True),
    Carrier("jpeg-private-app9", "jpg", jpeg_private_app, "other-metadata"),
    Carrier("jpeg-stray-bytes", "jpg", jpeg_stray, "stray-bytes"),
    Carrier("jpeg-scan-after-last-bit", "jpg", jpeg_scan_tail, "stray-bytes"),
    Carrier("jpeg-unused-huffman-table", "jpg", jpeg_unused_huffman_table, "other-metadata"),
    Carrier("jpeg-unused-quant-table", "jpg", jpeg_unused_quant_table, "other-metadata"),
    Carrier("jpeg-after-eoi", "jpg", _after(_jpeg), "trailing-bytes"),
    Carrier("jpeg-icc-private-tag", "jpg", lambda m: _jpeg(m, icc_profile=icc_with_private_tag(m)), "icc-profile"),
    # PNG
    Carrier("png-iccp-name", "png", png_iccp_name, "other-metadata"),
    Carrier("png-iccp-after-zlib", "png", png_iccp_after_zlib, "other-metadata"),
    Carrier("png-idat-after-zlib", "png", png_idat_after_zlib, "stray-bytes"),
    Carrier("png-idat-extra-chunk", "png", png_idat_extra_chunk, "stray-bytes"),
    Carrier("png-exif", "png", lambda m: _png(m, exif=_exif(m)), "exif", metadata=True),
    Carrier("png-xmp", "png", png_xmp, "xmp", metadata=True),
    Carrier("png-text", "png", png_text, "text", metadata=True),
    Carrier("png-ztxt", "png", lambda m: png_text(m, zip=True), "text", metadata=True),
    Carrier("png-itxt", "png", lambda m: png_text(m, zip=True, itxt=True), "text", metadata=True),
    Carrier("png-unknown-ancillary", "png", lambda m: _png_with(m, (b"smUg", m)), "other-metadata"),
    Carrier("png-bad-crc-chunk", "png", png_bad_crc, "bad-crc", lenient=True),
    Carrier("png-after-iend", "png", _after(_png), "trailing-bytes"),
    Carrier("png-icc-private-tag", "png", lambda m: _png(m, icc_profile=icc_with_private_tag(m)), "icc-profile"),
    Carrier("png-palette-unused", "png", png_palette_unused, "other-metadata"),
    # GIF
    Carrier("gif-netscape-extra-subblocks", "gif", gif_netscape_extra, "other-metadata"),
    Carrier("gif-netscape-long-count", "gif", gif_netscape_long_count, "other-metadata"),
    Carrier("gif-comment", "gif", lambda m: _gif_base(m, comment=m), "comment", metadata=True),
    Carrier("gif-xmp", "gif", gif_xmp, "xmp", metadata=True),
    Carrier("gif-app-unknown", "gif", gif_app_unknown, "other-metadata"),
    Carrier("gif-plain-text", "gif", gif_plain_text, "other-metadata"),
    Carrier("gif-unknown-label", "gif", gif_unknown_label, "other-metadata"),
    Carrier("gif-lzw-after-end", "gif", gif_lzw_after_end, "stray-bytes"),
    Carrier("gif-palette-unused", "gif", gif_palette_unused, "other-metadata"),
    Carrier("gif-after-trailer", "gif", _after(_gif_base), "trailing-bytes"),
    # WebP
    Carrier("webp-exif", "webp", lambda m: _webp(m, exif=_exif(m)), "exif", metadata=True),
    Carrier("webp-xmp", "webp", lambda m: _webp(m, xmp=_xmp(m)), "xmp", metadata=True),
    Carrier("webp-unknown-chunk", "webp", webp_unknown_chunk, "other-metadata"),
    Carrier("webp-anmf-unknown-chunk", "webp", webp_anmf_unknown_chunk, "other-metadata"),
    Carrier("webp-vp8l-trailing", "webp", webp_image_chunk_trailing, "stray-bytes"),
    Carrier("webp-after-riff", "webp", _after(_webp), "trailing-bytes"),
    Carrier("webp-icc-private-tag", "webp", lambda m: _webp(m, icc_profile=icc_with_private_tag(m)), "icc-profile"),
]
