"""LogLuv and LogL TIFFs under SGILog compression (34676), written byte by byte here (no common
tool writes them from 8-bit pixels), and ImageMagick's rendering of the LogLuv one (libtiff's
8-bit reader, `TIFFReadRGBAImage`). `guest/src/convert/tests/layouts.rs` compares the converter's
pages with them. Run from the repository root (needs Debian's imagemagick, no other package):
    python3 tests/corpus/convert/make_logluv.py

The rows mix runs and literals in every byte plane; the pixels span dark to past white, colours
far from grey, a negative luminance and zero. ImageMagick 6 shows a LogL page's raw 16-bit codes,
not its luminance, so the LogL file has no reference rendering: the test checks its levels
against the encoding's definition.
"""
import math
import struct
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parent


def rle_row(pixels, planes):
    """One row as libtiff's SGILog encoder lays it out: byte planes, most significant first, each
    a run (128 + count − 2, byte) where the plane repeats a byte, literals (count, bytes) else."""
    out = bytearray()
    for plane in range(planes):
        shift = 8 * (planes - 1 - plane)
        values = [(p >> shift) & 0xFF for p in pixels]
        i = 0
        while i < len(values):
            run = 1
            while i + run < len(values) and values[i + run] == values[i] and run < 129:
                run += 1
            if run >= 2:
                out += bytes([128 + run - 2, values[i]])
                i += run
            else:
                j = i + 1
                while j < len(values) and (j + 1 >= len(values) or values[j + 1] != values[j]) and j - i < 127:
                    j += 1
                out += bytes([j - i]) + bytes(values[i:j])
                i = j
    return bytes(out)


def tiff(path, width, rows, photometric):
    """A little-endian TIFF of one strip per row, 16-bit signed samples (what libtiff's
    SGILOGDATAFMT_16BIT writers record; the codec decides the pixel layout)."""
    planes, spp = (4, 3) if photometric == 32845 else (2, 1)
    strips = [rle_row(r, planes) for r in rows]
    data = b"".join(strips)
    height = len(rows)
    extra = bytearray()
    entries = []
    ifd_at = 8 + len(data)
    n_entries = 12
    extra_at = ifd_at + 2 + 12 * n_entries + 4

    def array(fmt, values):
        at = extra_at + len(extra)
        extra.extend(struct.pack("<" + fmt * len(values), *values))
        return at

    offsets, at = [], 8
    for s in strips:
        offsets.append(at)
        at += len(s)
    entries += [(256, 3, 1, width), (257, 3, 1, height)]
    entries.append((258, 3, spp, array("H", [16] * spp) if spp > 1 else 16))
    entries += [(259, 3, 1, 34676), (262, 3, 1, photometric)]
    entries.append((273, 4, height, array("I", offsets)))
    entries += [(277, 3, 1, spp), (278, 3, 1, 1)]
    entries.append((279, 4, height, array("I", [len(s) for s in strips])))
    entries.append((284, 3, 1, 1))
    entries.append((339, 3, spp, array("H", [2] * spp) if spp > 1 else 2))
    entries.append((274, 3, 1, 1))
    entries.sort()
    assert len(entries) == n_entries
    ifd = struct.pack("<H", len(entries))
    for tag, kind, count, value in entries:
        packed = struct.pack("<HH", value, 0) if kind == 3 and count == 1 else struct.pack("<I", value)
        ifd += struct.pack("<HHI", tag, kind, count) + packed
    ifd += struct.pack("<I", 0)
    path.write_bytes(b"II*\0" + struct.pack("<I", ifd_at) + data + ifd + bytes(extra))


def log_l(y):
    """libtiff's LogL16 code of luminance `y` (a sign bit, then 256 × (log2 y + 64))."""
    return 0 if y == 0 else (0x8000 if y < 0 else 0) | int(256 * (math.log2(abs(y)) + 64))


def log_luv(y, u, v):
    return log_l(y) << 16 | int(410 * u) << 8 | int(410 * v)


def main():
    d65 = (0.1978, 0.4683)
    luv_rows = [
        [log_luv(y, *d65) for y in (0.05, 0.05, 0.05, 0.2, 0.5, 0.9)],
        [log_luv(0.3, 0.4, 0.5), log_luv(0.3, 0.15, 0.45), log_luv(0.2, 0.18, 0.3), log_luv(0.3, *d65),
         log_luv(0.3, *d65), log_luv(0.6, 0.25, 0.52)],
        [0, log_luv(2.0, *d65), log_luv(-0.3, *d65), log_luv(1e-3, *d65), log_luv(1.0, *d65), 0],
    ]
    tiff(OUT / "logluv-rle.tif", 6, luv_rows, 32845)
    subprocess.run(["/usr/bin/convert", f"{OUT / 'logluv-rle.tif'}[0]", "-depth", "8",
                    f"png:{OUT / 'logluv-rle.ref.png'}"], check=True)
    grey_rows = [[log_l(y) for y in row] for row in (
        (0.01, 0.1, 0.25, 0.5, 0.5, 0.5), (0.75, 1.0, 3.0, 0, -0.5, 0.0625), (0.5,) * 6)]
    tiff(OUT / "logl-rle.tif", 6, grey_rows, 32844)


if __name__ == "__main__":
    main()
