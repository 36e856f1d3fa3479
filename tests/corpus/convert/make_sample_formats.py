"""Reference renderings of the conformance corpus's TIFFs whose samples are not unsigned integers
of 8 or 16 bits (signed, 32-bit, float, odd widths), or whose layout the `tiff` crate does not
read (YCbCr LZW strips, WebP tiles, Zstandard strips): each made by Pillow where Pillow opens the
file, else by libvips through sharp, else (the odd widths neither reads) by ImageMagick (libtiff),
as an 8-bit PNG. `guest/src/convert/tests/layouts.rs` compares the converter's page with
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
    # Old-style JPEG: one stream from JPEGInterchangeFormat, one put together from the tables.
    "smallliz.tif": "pillow",
    "zackthecat.tif": "pillow",
    # Grey with four unspecified 16-bit signed extra samples: the grey is kept (libvips and
    # ImageMagick take the first extra as alpha, which is 0 here: a wholly transparent page).
    "geo-5b.tif": "sharp-first-band",
    # Unsigned samples of odd widths: libtiff scales each to the output's levels.
    "minisblack-1c-3b.tiff": "imagemagick",
    "minisblack-1c-5b.tiff": "imagemagick",
    "minisblack-1c-7b.tiff": "imagemagick",
    # ImageMagick 6 does not apply WhiteIsZero to odd widths (miniswhite-1c-3b renders as its
    # minisblack twin, which holds the same bytes): its rendering negated is the TIFF's meaning.
    "miniswhite-1c-6b.tiff": "imagemagick-negated",
    "seq-1c-3b-miniswhite-ef237c07.tiff": "imagemagick-negated",
    "flower-minisblack-06.tif": "imagemagick",
    "flower-minisblack-12.tif": "imagemagick",
    # ImageMagick 6 garbles 24-bit samples and the others refuse them: the same picture at 8 bits
    # (whose levels are the 24-bit ones' high bytes, give or take the rounding), read by Pillow.
    "flower-minisblack-24.tif": "pillow:flower-minisblack-08.tif",
    "flower-rgb-contig-02.tif": "imagemagick",
    "flower-rgb-contig-10.tif": "imagemagick",
    "flower-rgb-planar-04.tif": "imagemagick",
    "flower-rgb-planar-14.tif": "imagemagick",
    "12bit.cropped.tiff": "imagemagick",
    "hpredict-1c-12b.tiff": "imagemagick",  # a Predictor tag on uncompressed data: ignored
    # LogLuv: libtiff's 8-bit rendering, which ImageMagick reads (a 1x1 page of luminance 0).
    "logluv-3c-16b.tiff": "imagemagick",
}

SHARP_JS = """
const sharp = require(process.argv[1]);
const image = sharp(process.argv[2]);
(process.argv[4] === "first-band" ? image.extractChannel(0) : image)
  .png().toFile(process.argv[3]).catch((e) => { console.error(e); process.exit(1); });
"""


def main():
    for name, tool in REFERENCES.items():
        src, dst = SOURCE / name, OUT / f"sample-{Path(name).stem}.ref.png"
        if tool.startswith("pillow"):
            with Image.open(SOURCE / tool.split(":")[1] if ":" in tool else src) as im:
                im.convert("RGB" if im.mode in ("RGB", "RGBA", "CMYK", "YCbCr") else "L").save(dst)
        elif tool.startswith("imagemagick"):
            # ImageMagick 6 by its absolute path (tests/conformance/test.sh says why).
            negate = ["-negate"] if tool.endswith("-negated") else []
            subprocess.run(["/usr/bin/convert", f"{src}[0]", *negate, "-depth", "8", f"png:{dst}"], check=True)
        else:
            band = ["first-band"] if tool.endswith("-first-band") else []
            subprocess.run(["node", "-e", SHARP_JS, str(SHARP), str(src), str(dst), *band], check=True)
        with Image.open(dst) as im:
            print(f"{dst.name}: {im.size[0]}x{im.size[1]} {im.mode} ({tool})", file=sys.stderr)


if __name__ == "__main__":
    main()
