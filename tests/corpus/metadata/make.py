"""Makes the metadata fixtures: a small JPEG and PNG of kodim23 (ImageMagick, `-strip`) with EXIF
that names a camera and a GPS position, and for the PNG a tEXt comment. Run from the repository
root: python3 tests/corpus/metadata/make.py /tmp/k23.jpg /tmp/k23.png, after
`convert tests/corpus/photos/kodim23.png -resize 384x256 -quality 85 -strip /tmp/k23.jpg` and
the same without `-quality 85` to /tmp/k23.png."""
import struct, sys, zlib

def exif_tiff():
    t = b"MM\x00\x2a\x00\x00\x00\x08"
    e = lambda tag, kind, count, value: struct.pack(">HHII", tag, kind, count, value)
    # IFD0 at 8 (42 bytes), Make at 50, Model at 60, GPS IFD at 74 (30 bytes), latitude at 104.
    t += struct.pack(">H", 3) + e(0x010F, 2, 10, 50) + e(0x0110, 2, 14, 60) + e(0x8825, 4, 1, 74) + b"\0\0\0\0"
    t += b"SecretCam\0Model-SN-0042\0"
    t += struct.pack(">H", 2) + e(0x0001, 2, 2, int.from_bytes(b"N\0\0\0", "big")) + e(0x0002, 5, 3, 104) + b"\0\0\0\0"
    t += struct.pack(">6I", 48, 1, 51, 1, 30, 1)
    return t

def jpeg(src):
    d = open(src, "rb").read()
    app1 = b"Exif\0\0" + exif_tiff()
    seg = b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1
    at = 4 + struct.unpack(">H", d[4:6])[0] if d[2:4] == b"\xff\xe0" else 2
    return d[:at] + seg + d[at:]

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

def png(src):
    d = open(src, "rb").read()
    return d[:33] + chunk(b"eXIf", exif_tiff()) + chunk(b"tEXt", b"Comment\0taken at 48.8584N 2.2945E") + d[33:]

open("tests/corpus/metadata/gps-exif.jpg", "wb").write(jpeg(sys.argv[1]))
open("tests/corpus/metadata/gps-exif.png", "wb").write(png(sys.argv[2]))
