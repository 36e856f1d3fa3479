"""Reference renderings of the conformance corpus's TIFFs whose samples are not unsigned integers
of up to 16 bits (signed, 32-bit, float), or whose layout the `tiff` crate does not read (YCbCr
LZW strips, WebP tiles, Zstandard strips): each made by Pillow where Pillow opens the file, else by libvips through
sharp, as an 8-bit PNG. `guest/src/convert/tests/layouts.rs` compares the converter's page with
each. Run from the repository root with tests/conformance's environment installed:
    tests/conformance/.venv/bin/python tests/corpus/convert/make_sample_formats.py
"""
import subprocess
import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "tests/corpus/conformance/tiff"
OUT = ROOT / "tests/corpus/convert"
SHARP = ROOT / "tests/conformance/node_modules/sharp"

# file -> the reference that renders it (Pillow's `convert` to L/RGB clips a signed, 32-bit or
# float level to 0..255; sharp's PNG output casts to uchar, which clips too).
REFERENCES = {
    "int16.tif": "pillow",
    "int16_zstd.tif": "pillow",
    "gradient-1c-32b.tiff": "sharp",  # Pillow reads unsigned 32-bit samples as signed
    "gradient-1c-32b-float.tiff": "pillow",
    "minisblack-1c-i16b.tiff": "pillow",
    "ycbcr-cat.tif": "pillow",
    "int8_rgb.tif": "sharp",
    "int16_rgb.tif": "sharp",
    "gradient-3c-32b.tiff": "sharp",
    "flower-rgb-planar-32.tif": "sharp",
    "random-fp16-pred3.tiff": "sharp",
    "cmyk-3c-32b-float.tiff": "sharp",
}

SHARP_JS = """
const sharp = require(process.argv[1]);
sharp(process.argv[2]).png().toFile(process.argv[3]).catch((e) => { console.error(e); process.exit(1); });
"""


def main():
    for name, tool in REFERENCES.items():
        src, dst = SOURCE / name, OUT / f"sample-{Path(name).stem}.ref.png"
        if tool == "pillow":
            with Image.open(src) as im:
                im.convert("RGB" if im.mode in ("RGB", "RGBA", "CMYK", "YCbCr") else "L").save(dst)
        else:
            subprocess.run(["node", "-e", SHARP_JS, str(SHARP), str(src), str(dst)], check=True)
        with Image.open(dst) as im:
            print(f"{dst.name}: {im.size[0]}x{im.size[1]} {im.mode} ({tool})", file=sys.stderr)


if __name__ == "__main__":
    main()
