"""Where a marker text is in a file: every way the test knows to look, each find named by where it
was, so that a carrier that smuggles says where the marker survived.

Ways: the raw bytes (ASCII/UTF-8, UTF-16LE and UTF-16BE); every zlib stream whose header appears
anywhere in the file or inside a PNG chunk, the PNG's IDAT and fdAT data joined across chunks, and
every raw deflate stream at any offset of a PNG chunk (each inflated, then searched the same way,
one level down); exiftool's full dump (`-j -a -u -g1 -b -ee`), its binary values decoded.
"""

from __future__ import annotations

import base64
import json
import struct
import subprocess
import zlib

# An inflated stream larger than this is not searched further (the test's images are tiny).
INFLATE_MAX = 8 << 20


def forms(marker: bytes) -> dict[str, bytes]:
    text = marker.decode()
    return {"ascii": marker, "utf-16le": text.encode("utf-16-le"), "utf-16be": text.encode("utf-16-be")}


def _raw(data: bytes, marker: bytes) -> list[tuple[str, int]]:
    found = []
    for name, needle in forms(marker).items():
        at = data.find(needle)
        if at >= 0:
            found.append((name, at))
    return found


def _inflate(data: bytes, wbits: int) -> bytes | None:
    d = zlib.decompressobj(wbits)
    try:
        out = d.decompress(data, INFLATE_MAX)
    except zlib.error:
        return None
    return out or None


def zlib_streams(data: bytes) -> list[tuple[int, bytes]]:
    """(offset, inflated) for each offset where a zlib header stands and a stream inflates."""
    streams = []
    for at in range(len(data) - 2):
        cmf, flg = data[at], data[at + 1]
        if cmf & 0x0F == 8 and cmf >> 4 <= 7 and (cmf << 8 | flg) % 31 == 0:
            out = _inflate(data[at:], 15)
            if out:
                streams.append((at, out))
    return streams


def deflate_streams(data: bytes) -> list[tuple[int, bytes]]:
    """(offset, inflated) for each offset where raw deflate data decode to something."""
    streams = []
    for at in range(len(data)):
        out = _inflate(data[at:], -15)
        if out:
            streams.append((at, out))
    return streams


# ---------------------------------------------------------------------------------------------
# Where an offset lies, in words


def _png_places(data: bytes) -> list[tuple[int, int, str]]:
    places, at = [], 8
    while at + 8 <= len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8].decode("latin-1")
        end = min(len(data), at + 12 + length)
        places.append((at, end, f"{kind} chunk at byte {at}"))
        at = end
        if kind == "IEND":
            break
    if at < len(data):
        places.append((at, len(data), f"bytes after IEND (from byte {at})"))
    return places


def _jpeg_places(data: bytes) -> list[tuple[int, int, str]]:
    places, at = [], 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            nxt = data.find(b"\xff", at)
            nxt = len(data) if nxt < 0 else nxt
            places.append((at, nxt, f"bytes between segments at byte {at}"))
            at = nxt
            continue
        marker = data[at + 1]
        if marker == 0xD9:
            if at + 2 < len(data):
                places.append((at + 2, len(data), f"bytes after EOI (from byte {at + 2})"))
            break
        if marker in (0x01, *range(0xD0, 0xD8)) or marker == 0xFF:
            at += 1 if marker == 0xFF else 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        end = at + 2 + length
        if marker == 0xDA:
            # The entropy-coded data run to the next marker that is not a stuffed or restart one.
            scan = end
            while scan + 1 < len(data) and not (data[scan] == 0xFF and data[scan + 1] not in (0, *range(0xD0, 0xD8))):
                scan += 1
            end = scan
        payload = data[at + 4 : at + 4 + 12]
        name = payload.split(b"\0")[0][:12].decode("latin-1", "replace") if 0xE0 <= marker <= 0xEF else ""
        places.append((at, end, f"segment 0x{marker:02X}{' ' + repr(name) if name else ''} at byte {at}"))
        at = end
    return places


def _riff_places(data: bytes) -> list[tuple[int, int, str]]:
    places, at = [], 12
    (size,) = struct.unpack("<I", data[4:8])
    riff_end = min(len(data), size + 8)
    while at + 8 <= riff_end:
        kind = data[at : at + 4].decode("latin-1")
        (length,) = struct.unpack("<I", data[at + 4 : at + 8])
        end = at + 8 + length + (length & 1)
        places.append((at, end, f"{kind!r} chunk at byte {at}"))
        at = end
    if riff_end < len(data):
        places.append((riff_end, len(data), f"bytes after the RIFF (from byte {riff_end})"))
    return places


def _gif_places(data: bytes) -> list[tuple[int, int, str]]:
    places = []
    packed = data[10]
    at = 13 + (3 * (2 << (packed & 7)) if packed & 0x80 else 0)
    places.append((0, at, "screen descriptor and global colour table"))

    def run_end(i: int) -> int:
        while i < len(data) and data[i]:
            i += 1 + data[i]
        return i + 1

    while at < len(data):
        intro = data[at]
        if intro == 0x3B:
            if at + 1 < len(data):
                places.append((at + 1, len(data), f"bytes after the trailer (from byte {at + 1})"))
            break
        if intro == 0x21 and at + 1 < len(data):
            label = data[at + 1]
            end = run_end(at + 2)
            ident = data[at + 3 : at + 14].decode("latin-1", "replace") if label == 0xFF else ""
            places.append((at, end, f"extension 0x{label:02X}{' ' + repr(ident) if ident else ''} at byte {at}"))
            at = end
        elif intro == 0x2C and at + 10 <= len(data):
            p = data[at + 9]
            table = at + 10 + (3 * (2 << (p & 7)) if p & 0x80 else 0)
            end = run_end(table + 1)
            places.append((at, end, f"frame (image descriptor, table, LZW data) at byte {at}"))
            at = end
        else:
            places.append((at, len(data), f"unparsed bytes from byte {at}"))
            break
    return places


def places(data: bytes) -> list[tuple[int, int, str]]:
    try:
        if data.startswith(b"\x89PNG"):
            return _png_places(data)
        if data.startswith(b"\xff\xd8"):
            return _jpeg_places(data)
        if data.startswith(b"RIFF"):
            return _riff_places(data)
        if data.startswith(b"GIF"):
            return _gif_places(data)
    except (struct.error, IndexError):
        pass
    return []


def where(data: bytes, offset: int) -> str:
    inside = [name for start, end, name in places(data) if start <= offset < end]
    return inside[-1] if inside else f"byte {offset}"


# ---------------------------------------------------------------------------------------------


def _png_streams(data: bytes) -> list[tuple[str, bytes]]:
    """Each PNG chunk's data, the IDAT data joined, and the fdAT data joined (sequence numbers
    left out): the places a PNG's zlib streams live."""
    if not data.startswith(b"\x89PNG"):
        return []
    out, idat, fdat, at = [], b"", b"", 8
    while at + 8 <= len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        out.append((f"{kind.decode('latin-1')} chunk at byte {at}", body))
        if kind == b"IDAT":
            idat += body
        elif kind == b"fdAT":
            fdat += body[4:]
        at += 12 + length
    if idat:
        out.append(("the IDAT data joined", idat))
    if fdat:
        out.append(("the fdAT data joined", fdat))
    return out


def _search_inflated(label: str, inflated: bytes, marker: bytes, finds: list[str], depth: int) -> None:
    for form, at in _raw(inflated, marker):
        finds.append(f"{form} in {label}, at inflated byte {at}")
    if depth > 0:
        for at, inner in zlib_streams(inflated):
            _search_inflated(f"the zlib stream at byte {at} of {label}", inner, marker, finds, depth - 1)


def find_bytes(data: bytes, marker: bytes, depth: int = 1) -> list[str]:
    """Every find of the marker in `data` without exiftool."""
    finds = [f"{form} at byte {at}, in {where(data, at)}" for form, at in _raw(data, marker)]
    for at, inflated in zlib_streams(data):
        _search_inflated(f"the zlib stream at byte {at} ({where(data, at)})", inflated, marker, finds, depth)
    for label, body in _png_streams(data):
        for at, inflated in zlib_streams(body):
            _search_inflated(f"the zlib stream at byte {at} of {label}", inflated, marker, finds, depth)
        for at, inflated in deflate_streams(body):
            _search_inflated(f"the raw deflate data at byte {at} of {label}", inflated, marker, finds, depth)
    return sorted(set(finds))


def exiftool_dump(path: str) -> list[dict]:
    run = subprocess.run(
        ["exiftool", "-j", "-a", "-u", "-g1", "-b", "-ee", "-m", path], capture_output=True, text=True, check=False
    )
    # exiftool exits 1 when it finds nothing to say about a file; its JSON is still written.
    if not run.stdout.strip():
        raise AssertionError(f"exiftool printed nothing for {path}: {run.stderr.strip()}")
    return json.loads(run.stdout)


def find_exiftool(path: str, marker: bytes) -> list[str]:
    finds = []

    def walk(value, names):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, names + [k])
        elif isinstance(value, list):
            for v in value:
                walk(v, names)
        elif isinstance(value, str):
            tag = ":".join(names)
            if marker.decode() in value:
                finds.append(f"exiftool {tag}")
            elif value.startswith("base64:"):
                blob = base64.b64decode(value[7:])
                finds.extend(f"exiftool {tag} (binary): {f}" for f in find_bytes(blob, marker, depth=0))

    walk(exiftool_dump(path), [])
    return finds


def find(path: str, marker: bytes) -> list[str]:
    with open(path, "rb") as f:
        data = f.read()
    return find_bytes(data, marker) + find_exiftool(path, marker)
