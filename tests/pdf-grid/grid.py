"""PDF image pages at every size, through the gate and through pdftoppm (README.md here).

Makes one-image PDFs (sizes 1..4000 px, DCT/Flate/LZW/RunLength/CCITT/JBIG2/JPX, grey/RGB/CMYK,
by Pillow, img2pdf, reportlab, ImageMagick where its policy allows, and pdfwrite.py for the
filters none of them writes), renders page 1 with `mediagate admit --out` and with pdftoppm at
the gate's output size, and asks PSNR >= 30 dB. allowed.tsv lists the known failures; a listed
case that passes fails the run, so the list cannot go stale.
"""

from __future__ import annotations

import argparse
import fnmatch
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import img2pdf
from PIL import Image, ImageChops, ImageStat
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

import pdfwrite

HERE = os.path.dirname(os.path.abspath(__file__))
PHOTO = os.path.join(HERE, "..", "corpus", "photos", "kodim23.png")
MIN_PSNR = 30.0
# The reference checked against the source image: a generator that wrote a wrong page (inverted,
# shifted, garbled) fails here, before the gate is judged against it. Looser than MIN_PSNR: the
# source is resampled by Pillow, the page by poppler, and lossy codecs sit in between.
MIN_SOURCE_PSNR = 18.0
# 200 dpi is the gate's finest (MAX_DPI): an image placed at 200 dpi renders pixel for pixel up to
# 2000 px, so the comparison sees the decoders, not two resamplers. 72 dpi is what Pillow and
# most tools write by default, rendered 2.78x up.
DPI = 200
# The gate's cap on a PDF's bytes (PDF_RAW_CAP, guest/src/limits.rs): a larger file is refused as
# documented, so the grid does not ask it to render one (PackBits of a 3000 px CMYK photo is 24 MB).
PDF_RAW_CAP = 20 * 1024 * 1024
# The gate renders a page fitted into FIT_SIDE² (guest/src/limits.rs) and at most MAX_DPI
# (guest/src/convert/pdf.rs); the reference is rendered at the same scale.
FIT_SIDE = 2000
MAX_DPI = 200.0
DEFAULT_DPI = 72
# DeviceCMYK is device-dependent (PDF 2.0, 8.6.4.4): a renderer converts it as some CMYK device
# would print it, so two renderers agree only when told the same device. The reference is told a
# standard one (PDF's DefaultCMYK, 8.6.5.6, through pdftoppm's -defaultcmykprofile): the SWOP
# press profile Ghostscript ships (Debian's libgs-common, which test.sh installs). The gate's
# hayro converts through the SWOP-like CGATS001 profile it embeds; poppler's built-in formula, a
# device of its own, differs from both by ~29.5 dB and is kept in the report (`stock_psnr`).
CMYK_PROFILE = "/usr/share/color/icc/ghostscript/default_cmyk.icc"

# Every size class: 1 px, odd and even, non-square, the sizes of the known Pillow report, powers
# of two and one off them, the gate's 2000 px fit crossed, 4000 px sides and slivers.
ALL_SIZES = [
    (1, 1), (1, 2), (2, 1), (3, 3), (7, 5), (8, 8), (15, 16), (17, 9), (31, 33), (64, 64),
    (99, 100), (127, 255), (200, 100), (256, 256), (300, 200), (333, 111), (400, 300),
    (512, 384), (640, 479), (800, 600), (1023, 767), (1024, 1024), (1600, 1200), (2048, 1536),
    (2999, 2001), (4000, 3000), (4000, 7), (7, 4000),
]
# The cross product of generators, filters and colour spaces takes a subset (time), still 1 px,
# odd, the known sizes, and one over the fit.
SOME_SIZES = [(1, 1), (7, 5), (31, 33), (200, 100), (256, 256), (333, 111), (400, 300),
              (512, 384), (800, 600), (1023, 767), (2999, 2001)]


@dataclass
class Case:
    gen: str
    want: str  # what the generator was asked for (the id); the PDF's own words go in `found`
    mode: str
    w: int
    h: int
    dpi: int
    path: str = ""
    found: str = ""
    error: str = ""
    gate: dict = field(default_factory=dict)
    psnr: float | None = None
    source_psnr: float | None = None
    gate_source_psnr: float | None = None
    # The gate against Ghostscript's rendering, for a case under MIN_PSNR against pdftoppm: the
    # second reference an allowance may require to agree (allowed.tsv).
    ghostscript_psnr: float | None = None
    # A DeviceCMYK case: the gate against pdftoppm with poppler's built-in CMYK formula.
    stock_psnr: float | None = None
    size: tuple[int, int] | None = None
    seconds: float = 0.0

    @property
    def id(self) -> str:
        return f"{self.gen}/{self.want}/{self.w}x{self.h}@{self.dpi}"


_photo_cache: dict = {}


def photo(w: int, h: int, mode: str) -> Image.Image:
    """A photograph at w x h: texture, edges and gradients, never a flat page (which the gate
    rightly calls blank). Mode "1" is thresholded, not dithered: a dither is noise at the pixel
    scale that no two resamplers agree on."""
    key = (w, h, mode)
    if key not in _photo_cache:
        base = Image.open(PHOTO).convert("RGB").resize((w, h), Image.Resampling.LANCZOS)
        if mode == "1":
            image = base.convert("L").point(lambda v: 255 if v >= 128 else 0).convert("1", dither=Image.Dither.NONE)
        elif mode == "P":
            # An adaptive palette, not Pillow's default web palette with its dither (noise).
            image = base.quantize(256, dither=Image.Dither.NONE)
        elif mode == "RGBA":
            # Alpha ramps from opaque to half across the width: pdftoppm shows it on white.
            image = base.copy()
            alpha = Image.linear_gradient("L").rotate(90).resize((w, h)).point(lambda v: 255 - v // 2)
            image.putalpha(alpha)
        else:
            image = base.convert(mode)
        _photo_cache[key] = image
    return _photo_cache[key]


def on_white(image: Image.Image) -> Image.Image:
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        image = image.convert("RGBA")
        white = Image.new("RGBA", image.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, image).convert("RGB")
    return image.convert("RGB")


def encoded(image: Image.Image, fmt: str, **options) -> bytes:
    buf = io.BytesIO()
    image.save(buf, fmt, **options)
    return buf.getvalue()


# --- the generators: each writes case.path, or raises with why it cannot ---------------------


class Skip(Exception):
    """A case the generator refuses by design (not a failure of the gate or of this test)."""


def gen_pillow(case: Case) -> None:
    photo(case.w, case.h, case.mode).save(case.path, "PDF", resolution=case.dpi)


def gen_img2pdf(case: Case) -> None:
    if min(case.w, case.h) * 72.0 / case.dpi < 3:
        raise Skip("img2pdf refuses a page under 3x3 units, PDF's minimum page size")
    image = photo(case.w, case.h, case.mode)
    kind = case.want.split("-")[0]
    if kind == "DCT":
        data = encoded(image, "JPEG", quality=92)
    elif kind == "Flate":
        # PNG cannot hold CMYK; img2pdf takes an uncompressed TIFF for it and writes Flate.
        data = encoded(image, "TIFF") if case.mode == "CMYK" else encoded(image, "PNG")
    elif kind == "CCITT":
        data = encoded(image, "TIFF", compression="group4")
    elif kind == "JPX":
        data = encoded(image, "JPEG2000", irreversible=False)
    else:
        raise ValueError(kind)
    layout = img2pdf.get_fixed_dpi_layout_fun((case.dpi, case.dpi))
    with open(case.path, "wb") as f:
        f.write(img2pdf.convert(data, layout_fun=layout, rotation=img2pdf.Rotation.ifvalid))


def gen_reportlab(case: Case) -> None:
    image = photo(case.w, case.h, case.mode)
    kind = case.want.split("-")[0]
    page = (case.w * 72.0 / case.dpi, case.h * 72.0 / case.dpi)
    c = canvas.Canvas(case.path, pagesize=page, pageCompression=0)
    if kind == "DCT":
        # A JPEG file is passed through as DCTDecode, in its own colour space.
        source = ImageReader(io.BytesIO(encoded(image, "JPEG", quality=92)))
    else:
        source = ImageReader(image)
    c.drawImage(source, 0, 0, width=page[0], height=page[1])
    c.showPage()
    c.save()


def gen_raw(case: Case) -> None:
    kind = case.want.split("-")[0]
    encode = {"LZW": pdfwrite.lzw, "RunLength": pdfwrite.run_length, "JBIG2": pdfwrite.jbig2}[kind]
    pdfwrite.write(case.path, photo(case.w, case.h, case.mode), encode, case.dpi)


MAGICK = shutil.which("convert-im6.q16") or shutil.which("magick")
MAGICK_COMPRESS = {"DCT": "JPEG", "Flate": "Zip", "LZW": "LZW", "RunLength": "RLE", "CCITT": "Group4",
                   "JPX": "JPEG2000"}


def magick_can_write_pdf(tmp: str) -> str:
    """'' when ImageMagick writes PDF here, else why not (Debian's policy.xml forbids the PDF
    coder, and ImageMagick 6 reads policy only from its system path, so MAGICK_CONFIGURE_PATH
    cannot re-allow it)."""
    if not MAGICK:
        return "ImageMagick is not installed"
    probe = os.path.join(tmp, "probe.png")
    Image.new("RGB", (2, 2)).save(probe)
    policy_dir = os.path.join(tmp, "magick-policy")
    os.makedirs(policy_dir, exist_ok=True)
    with open(os.path.join(policy_dir, "policy.xml"), "w") as f:
        f.write('<policymap><policy domain="coder" rights="read|write" pattern="PDF" /></policymap>\n')
    env = dict(os.environ, MAGICK_CONFIGURE_PATH=policy_dir)
    r = subprocess.run([MAGICK, probe, os.path.join(tmp, "probe.pdf")], capture_output=True, text=True, env=env)
    if r.returncode == 0:
        os.environ["MAGICK_CONFIGURE_PATH"] = policy_dir
        return ""
    return f"{os.path.basename(MAGICK)} refuses to write PDF even with MAGICK_CONFIGURE_PATH: {r.stderr.strip()[:160]}"


def gen_magick(case: Case) -> None:
    source = case.path[:-4] + ".src.tif"
    photo(case.w, case.h, case.mode).save(source)
    kind = case.want.split("-")[0]
    r = subprocess.run(
        [MAGICK, "-units", "PixelsPerInch", "-density", str(case.dpi), source, "-compress", MAGICK_COMPRESS[kind],
         case.path],
        capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip()[:200])


GENERATORS = {"pillow": gen_pillow, "img2pdf": gen_img2pdf, "reportlab": gen_reportlab, "raw": gen_raw,
              "magick": gen_magick}


def grid(magick: bool) -> list[Case]:
    cases: list[Case] = []

    def add(gen: str, want: str, mode: str, sizes, dpi: int = DPI):
        cases.extend(Case(gen, want, mode, w, h, dpi) for w, h in sizes)

    # Pillow's own choices per mode: DCT for grey, RGB, CMYK; CCITT G4 for 1-bit; ASCIIHex
    # for a palette; JPX with the alpha in the data for RGBA.
    add("pillow", "DCT-RGB", "RGB", ALL_SIZES, DEFAULT_DPI)
    add("pillow", "DCT-RGB", "RGB", ALL_SIZES)
    for want, mode in [("DCT-grey", "L"), ("DCT-CMYK", "CMYK")]:
        add("pillow", want, mode, SOME_SIZES, DEFAULT_DPI)
        add("pillow", want, mode, SOME_SIZES)
    for want, mode in [("CCITT-grey", "1"), ("ASCIIHex-indexed", "P"), ("JPX-RGBA", "RGBA")]:
        add("pillow", want, mode, SOME_SIZES)
    for want, mode in [("DCT-grey", "L"), ("DCT-RGB", "RGB"), ("DCT-CMYK", "CMYK"), ("Flate-grey", "L"),
                       ("Flate-RGB", "RGB"), ("Flate-CMYK", "CMYK"), ("CCITT-grey", "1"), ("JPX-grey", "L"),
                       ("JPX-RGB", "RGB")]:
        add("img2pdf", want, mode, SOME_SIZES)
    for want, mode in [("DCT-grey", "L"), ("DCT-RGB", "RGB"), ("DCT-CMYK", "CMYK"), ("Flate-RGB", "RGB")]:
        add("reportlab", want, mode, SOME_SIZES)
    for want, mode in [("LZW-grey", "L"), ("LZW-RGB", "RGB"), ("LZW-CMYK", "CMYK"), ("RunLength-grey", "L"),
                       ("RunLength-RGB", "RGB"), ("RunLength-CMYK", "CMYK"), ("JBIG2-grey", "1")]:
        add("raw", want, mode, SOME_SIZES)
    if magick:
        for want, mode in [("DCT-RGB", "RGB"), ("DCT-CMYK", "CMYK"), ("Flate-grey", "L"), ("LZW-RGB", "RGB"),
                           ("RunLength-RGB", "RGB"), ("CCITT-grey", "1"), ("JPX-RGB", "RGB")]:
            add("magick", want, mode, SOME_SIZES)
    return cases


# --- what the PDF says it holds (labels come from the file, not from the request) ------------


def image_words(path: str) -> str:
    data = open(path, "rb").read()
    at = data.find(b"/Subtype /Image")
    if at < 0:
        at = data.find(b"/Subtype/Image")
    if at < 0:
        return "?"
    # From the object's start: /ColorSpace may come before /Subtype, after a nested dictionary.
    start = data.rfind(b" obj", 0, at)
    head = data[start : data.find(b"stream", at)]
    filters = re.findall(rb"/(\w+Decode)\b", head)
    space = re.search(rb"/ColorSpace\s*(\[?\s*/\w+)", head)
    space = space.group(1).replace(b"[", b"").strip() if space else b"(none)"
    bpc = re.search(rb"/BitsPerComponent\s+(\d+)", head)
    parts = [b"+".join(filters).decode() or "raw", space.decode()]
    if bpc:
        parts.append(f"{bpc.group(1).decode()}bit")
    return " ".join(parts)


# --- comparing --------------------------------------------------------------------------------


def psnr(a: Image.Image, b: Image.Image) -> float:
    diff = ImageChops.difference(a.convert("RGB"), b.convert("RGB"))
    stat = ImageStat.Stat(diff)
    mse = sum(s / stat.count[0] for s in stat.sum2) / 3
    return math.inf if mse == 0 else 10 * math.log10(255 * 255 / mse)


def gate_scale(case: Case) -> float:
    """Device pixels per point the gate renders this page at (convert/pdf.rs `render`: fitted
    into FIT_SIDE², at most MAX_DPI), from the page size the generator was asked for."""
    w_pt, h_pt = case.w * 72.0 / case.dpi, case.h * 72.0 / case.dpi
    return min(FIT_SIDE / max(w_pt, h_pt), MAX_DPI / 72.0)


def reference_factor(case: Case, w: int, h: int) -> int:
    """How many times the gate's size pdftoppm renders at, the result box-reduced back.

    poppler (Splash::scaleImage) draws an image that is not made smaller, and grown less than 4x,
    with bilinear interpolation: at 1:1 that blurs it and shifts it half a pixel (29 dB against
    its own source for a lossless 200x100 photo), and at 4x and over it repeats pixels. A 4x
    render box-reduced is the page as the PDF defines it, each image pixel covering its area.
    An image drawn smaller is box-filtered by poppler already and is rendered at size."""
    if w < case.w and h < case.h:
        return 1
    for k in (4, 2):
        if w * h * k * k <= 40_000_000:
            return k
    return 1


def placed_source(case: Case, w: int, h: int) -> Image.Image:
    """The source image where the page puts it in a w x h render: box-resampled (each pixel the
    mean of the area it covers) to the page's extent at the gate's scale, top left, on white."""
    scale = gate_scale(case) * 72.0 / case.dpi
    extent = (min(w, max(1, round(case.w * scale))), min(h, max(1, round(case.h * scale))))
    placed = Image.new("RGB", (w, h), "white")
    placed.paste(on_white(photo(case.w, case.h, case.mode)).resize(extent, Image.Resampling.BOX), (0, 0))
    return placed


def run_case(case: Case, bin_path: str, tmp: str) -> Case:
    start = time.monotonic()
    base = case.path[:-4]
    gate_png = base + ".gate.png"
    r = subprocess.run([bin_path, "admit", case.path, "--page", "1", "--json", "--out", gate_png],
                       capture_output=True, text=True, timeout=120)
    try:
        case.gate = json.loads(r.stdout)
    except ValueError:
        case.gate = {"ok": False, "reason": f"exit {r.returncode}", "message": (r.stderr or r.stdout)[:200]}
    if not case.gate.get("ok"):
        case.error = f"refused {case.gate.get('reason')}: {str(case.gate.get('message', ''))[:140]}"
        case.seconds = time.monotonic() - start
        return case
    gate = Image.open(gate_png)
    gate.load()
    w, h = gate.size
    case.size = (w, h)
    k = reference_factor(case, w, h)
    ref_base = base + ".ref"
    # The page at the gate's scale, cropped to the gate's size from the top left: -scale-to-x/-y
    # would stretch the page to the rounded size (half a pixel; on a 3.5 px sliver, 14 %), and
    # the gate leaves what the rounding adds white, as pdftoppm does past the page.
    dpi = gate_scale(case) * 72 * k
    ref, why = pdftoppm(case, dpi, w, h, k, ref_base, ["-defaultcmykprofile", CMYK_PROFILE])
    if ref is None:
        case.error = why
        case.seconds = time.monotonic() - start
        return case
    case.psnr = psnr(on_white(gate), on_white(ref))
    source = placed_source(case, w, h)
    case.source_psnr = psnr(source, on_white(ref))
    case.gate_source_psnr = psnr(source, on_white(gate))
    if "CMYK" in case.want:
        stock, _ = pdftoppm(case, dpi, w, h, k, base + ".stock", [])
        case.stock_psnr = None if stock is None else psnr(on_white(gate), on_white(stock))
    if case.psnr < MIN_PSNR:
        case.ghostscript_psnr = against_ghostscript(case, gate, dpi, w, h, k, base)
    case.seconds = time.monotonic() - start
    return case


def pdftoppm(case: Case, dpi: float, w: int, h: int, k: int, out_base: str, options: list[str]):
    """(pdftoppm's render of page 1 at the gate's size, '') or (None, why not)."""
    # PPM, not PNG: the same pixels, and poppler's PNG writer took 7 s of CPU for one 2000 px page.
    r = subprocess.run(["pdftoppm", "-singlefile", "-f", "1", "-l", "1", "-r", f"{dpi:.6f}", "-x", "0", "-y", "0",
                        "-W", str(w * k), "-H", str(h * k), *options, case.path, out_base],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return None, f"pdftoppm failed: {r.stderr.strip()[:160]}"
    ref = at_gate_size(Image.open(out_base + ".ppm"), w, h, k)
    if ref.size != (w, h):
        return None, f"pdftoppm rendered {ref.size[0]}x{ref.size[1]}, the gate {w}x{h}"
    return ref, ""


def at_gate_size(render: Image.Image, w: int, h: int, k: int) -> Image.Image:
    """A reference's render (at k times the gate's scale) cropped from the top left to k times the
    gate's size, white where the page ends, and box-reduced by k."""
    render.load()
    if render.size != (w * k, h * k):
        padded = Image.new("RGB", (w * k, h * k), "white")
        padded.paste(render.crop((0, 0, min(render.width, w * k), min(render.height, h * k))), (0, 0))
        render = padded
    return render.reduce(k) if k > 1 else render


def against_ghostscript(case: Case, gate: Image.Image, dpi: float, w: int, h: int, k: int, base: str) -> float | None:
    """The gate's PSNR against Ghostscript's rendering of page 1 at the pdftoppm reference's scale
    (`None`: Ghostscript failed): a second renderer, for the cases where the gate and pdftoppm
    differ."""
    out = base + ".gs.ppm"
    r = subprocess.run(["gs", "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=ppmraw", f"-r{dpi:.6f}",
                        "-dFirstPage=1", "-dLastPage=1", f"-sOutputFile={out}", case.path],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or not os.path.exists(out):
        return None
    return psnr(on_white(gate), on_white(at_gate_size(Image.open(out), w, h, k)))


def against_source(case: Case) -> str:
    if case.source_psnr is None:
        return ""
    return f" (against the source: the gate {case.gate_source_psnr:.1f}, pdftoppm {case.source_psnr:.1f})"


def verdict(case: Case) -> str:
    """'' for a pass, else what failed."""
    if case.error:
        return case.error
    if case.source_psnr is not None and case.source_psnr < MIN_SOURCE_PSNR:
        return (f"pdftoppm does not show the source ({case.source_psnr:.1f} dB; the gate {case.gate_source_psnr:.1f}): "
                "the generator or pdftoppm is wrong")
    if case.psnr is not None and case.psnr < MIN_PSNR:
        return f"PSNR {case.psnr:.1f} dB against pdftoppm (< {MIN_PSNR:.0f}){against_source(case)}"
    return ""


# What an allowance may name in allowed.tsv's third column, the check that keeps the case
# allowed: Ghostscript, a second renderer, agrees with the gate (PSNR >= MIN_PSNR); or the source,
# for a reference that is wrong: the gate is nearer the source image than pdftoppm is.
SECOND_REFERENCES = ("ghostscript", "source")


def read_allowed(path: str) -> list[tuple[str, str, str]]:
    """(pattern, reason, second reference or '') for each allowance."""
    allowed = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pattern, _, rest = line.partition("\t")
        reason, _, second = rest.partition("\t")
        if not reason.strip():
            raise SystemExit(f"allowed.tsv: {pattern!r} has no reason")
        if second.strip() and second.strip() not in SECOND_REFERENCES:
            raise SystemExit(f"allowed.tsv: {pattern!r} names {second.strip()!r}, not one of {sorted(SECOND_REFERENCES)}")
        allowed.append((pattern.strip(), reason.strip(), second.strip()))
    return allowed


def second_disagrees(case: Case, second: str) -> str:
    """'' where the allowance's second reference (if any) agrees with the gate, else why not."""
    if second == "ghostscript":
        db = case.ghostscript_psnr
        if db is not None and db >= MIN_PSNR:
            return ""
        shown = "no render" if db is None else f"{db:.1f} dB"
        return f"allowed only while ghostscript agrees with the gate (>= {MIN_PSNR:.0f} dB): {shown}"
    if second == "source":
        gate, ref = case.gate_source_psnr, case.source_psnr
        if gate is not None and ref is not None and gate > ref:
            return ""
        return (f"allowed only while the gate is nearer the source than pdftoppm: "
                f"the gate {gate if gate is None else round(gate, 1)} dB, pdftoppm {ref if ref is None else round(ref, 1)} dB")
    return ""


def judge(cases: list[Case], allowed: list[tuple[str, str, str]], whole_grid: bool):
    """(failures, allowed failures, stale allowances). A listed case that passes is stale, and so
    is a pattern that matches no case of the whole grid: the list cannot outlive what it lists. A
    listed case whose allowance names a second reference fails where that one disagrees too."""
    failures, allowed_fail, stale = [], [], []
    used = {pattern: 0 for pattern, _, _ in allowed}
    for case in cases:
        why = verdict(case)
        listed = [(p, r, s) for p, r, s in allowed if fnmatch.fnmatchcase(case.id, p)]
        for p, _, _ in listed:
            used[p] += 1
        if listed and not why:
            stale.append((case, listed[0][0]))
        elif listed and second_disagrees(case, listed[0][2]):
            failures.append((case, f"{why}; {second_disagrees(case, listed[0][2])}"))
        elif listed:
            allowed_fail.append((case, why, listed[0][1]))
        elif why:
            failures.append((case, why))
    if whole_grid:
        stale.extend((None, pattern) for pattern, n in used.items() if n == 0)
    return failures, allowed_fail, stale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the mediagate binary")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--filter", default="*", help="a glob over case ids (gen/want/WxH@dpi)")
    parser.add_argument("--report", help="write every case's result here as JSON")
    parser.add_argument("--keep", help="keep the PDFs and renders in this directory")
    args = parser.parse_args()

    if not os.path.exists(CMYK_PROFILE):
        raise SystemExit(f"{CMYK_PROFILE} is missing: the DeviceCMYK reference needs it (Debian's libgs-common)")
    t0 = time.monotonic()
    tmp = args.keep or tempfile.mkdtemp(prefix="pdf-grid-")
    os.makedirs(tmp, exist_ok=True)
    why_no_magick = magick_can_write_pdf(tmp)
    if why_no_magick:
        print(f"ImageMagick: not a generator here ({why_no_magick}); its LZW/RunLength are written by pdfwrite.py")
    cases = [c for c in grid(magick=not why_no_magick) if fnmatch.fnmatchcase(c.id, args.filter)]

    made: list[Case] = []
    not_made: list[Case] = []
    skipped: list[tuple[Case, str]] = []
    for case in cases:
        case.path = os.path.join(tmp, case.id.replace("/", "_").replace("@", "_") + ".pdf")
        try:
            GENERATORS[case.gen](case)
            if os.path.getsize(case.path) > PDF_RAW_CAP:
                raise Skip("the file is over the gate's PDF cap, which it refuses by design (raw_too_large)")
            case.found = image_words(case.path)
            made.append(case)
        except Skip as e:
            skipped.append((case, str(e)))
        except Exception as e:  # a generator that cannot make a case is reported, not hidden
            case.error = f"not generated: {type(e).__name__}: {str(e)[:160]}"
            not_made.append(case)
    t_gen = time.monotonic() - t0
    print(f"generated {len(made)} PDFs in {t_gen:.0f} s ({len(not_made)} could not be made) in {tmp}")
    reasons: dict[str, list[str]] = {}
    for case, why in skipped:
        reasons.setdefault(why, []).append(case.id)
    for why, ids in reasons.items():
        print(f"skipped {len(ids)} ({why}): {' '.join(ids)}")
    skipped_ids = {case.id for case, _ in skipped}
    cases = [c for c in cases if c.id not in skipped_ids]

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(lambda c: run_case(c, args.bin, tmp), made))

    allowed = read_allowed(os.path.join(HERE, "allowed.tsv"))
    failures, allowed_fail, stale = judge(cases, allowed, whole_grid=args.filter == "*")

    # A summary per class: generator, what it was asked for, and what the file holds.
    classes: dict[tuple, list] = {}
    for case in cases:
        classes.setdefault((case.gen, case.want, case.dpi, case.found), []).append(case)
    print(f"\n{'class':<40} {'holds':<34} {'pass':>4} {'fail':>4} {'min dB':>7}")
    for (gen, want, dpi, found), group in sorted(classes.items()):
        passed = [c for c in group if not verdict(c)]
        dbs = [c.psnr for c in group if c.psnr is not None]
        low = f"{min(dbs):7.1f}" if dbs else "      -"
        print(f"{gen + '/' + want + '@' + str(dpi):<40} {found:<34} {len(passed):>4} {len(group) - len(passed):>4} {low}")

    for case, why, reason in allowed_fail:
        second = "" if case.ghostscript_psnr is None else f"; against Ghostscript {case.ghostscript_psnr:.1f} dB"
        print(f"allowed  {case.id}: {why}{second} — {reason}")
    for case, why in failures:
        print(f"FAIL     {case.id} [{case.found}]: {why}")
    for case, pattern in stale:
        what = f"{case.id} passes" if case else "matches no case"
        print(f"STALE    allowed.tsv {pattern!r}: {what}; remove it")

    total = time.monotonic() - t0
    n_pass = sum(1 for c in cases if not verdict(c))
    print(f"\n{len(cases)} cases ({len(skipped)} more skipped): {n_pass} pass, {len(allowed_fail)} fail as allowed, {len(failures)} fail, "
          f"{len(stale)} stale allowances; {total:.0f} s ({args.jobs} jobs)")
    if args.report:
        with open(args.report, "w") as f:
            finite = lambda x: None if x is None or x == math.inf else round(x, 2)  # noqa: E731 (inf: identical)
            json.dump([{"id": c.id, "holds": c.found, "verdict": verdict(c) or "pass", "psnr": finite(c.psnr),
                        "source_psnr": finite(c.source_psnr),
                        "gate_source_psnr": finite(c.gate_source_psnr),
                        "ghostscript_psnr": finite(c.ghostscript_psnr), "stock_psnr": finite(c.stock_psnr), "gate_size": c.size, "seconds": round(c.seconds, 2)}
                       for c in cases], f, indent=1)
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures or stale else 0


if __name__ == "__main__":
    sys.exit(main())
