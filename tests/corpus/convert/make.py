#!/usr/bin/env python3
"""Makes tests/corpus/convert/: the files the conversions are tested on, each made by a tool
that is not mediagate's, a reference rendering of each by an independent tool, hostile files, and
manifest.json. The tests read only the committed files; this script is here so they can be made again.

Needs (Debian 12 + PyPI + npm; see README.md beside this file for the versions used):
  apt-get install -y imagemagick poppler-utils qpdf ghostscript librsvg2-bin chromium fonts-dejavu-core
  python3 -m venv /tmp/fx-venv && /tmp/fx-venv/bin/pip install pillow pillow-heif reportlab numpy
  (cd /tmp/fx-pw && npm init -y && npm install playwright-core)      # never downloads a browser
Run:  /tmp/fx-venv/bin/python tests/corpus/convert/make.py [--playwright /tmp/fx-pw/node_modules]
"""

import argparse
import base64
import hashlib
import io
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np
import pillow_heif
import reportlab
from PIL import Image, ImageDraw, features
from reportlab.lib.colors import Color
from reportlab.pdfgen import canvas as rl_canvas

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent
MAGICK = "/usr/bin/convert"  # ImageMagick 6 itself, not any stand-in earlier on PATH
IDENTIFY = "/usr/bin/identify"
PDF_REF_SIDE = 1000  # PDF references: pdftoppm -scale-to 1000 (the page's longer side is 1000 px)
SVG_REF_FIT = 512  # SVG references: the SVG's size fitted (up or down) into 512 x 512, aspect kept
TMP = Path(tempfile.mkdtemp(prefix="mg-fixtures-"))

manifest = []


def run(*args, **kw):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, **kw)


def try_run(args, timeout=20):
    """Runs an outside tool on a hostile file, bounded (20 s, 2 GiB): what it did, in words."""
    try:
        p = subprocess.run(["prlimit", "--as=2147483648", "--"] + [str(a) for a in args],
                           capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"did not finish in {timeout} s (killed)"
    lines = p.stderr.decode(errors="replace").strip().splitlines() or [""]
    # Python's exception is its last line; ImageMagick's and the others' first line says what failed.
    err = lines[-1] if re.match(r"^[\w.]+(Error|Exception)\b", lines[-1]) else lines[0]
    err = err[:200].replace(str(HERE) + "/", "")
    return f"exit {p.returncode}" + (f": {err}" if err else "")


def flat_rgb(img):
    """An image as float RGB composited over white (how the tests compare: alpha over white)."""
    img = img.convert("RGBA")
    a = np.asarray(img, dtype=np.float64)
    alpha = a[..., 3:4] / 255.0
    return a[..., :3] * alpha + 255.0 * (1.0 - alpha)


def psnr(a, b):
    """PSNR in dB between two images of one size, RGB over white; 100.0 means identical."""
    x, y = flat_rgb(a), flat_rgb(b)
    assert x.shape == y.shape, (x.shape, y.shape)
    mse = float(np.mean((x - y) ** 2))
    return 100.0 if mse == 0 else round(10 * math.log10(255.0**2 / mse), 2)


def magick_decode(path, index=None):
    """ImageMagick's decode of a file (frame/page/entry `index`) as an RGBA PNG image."""
    src = f"{path}[{index}]" if index is not None else str(path)
    p = run(MAGICK, src, "-depth", "8", "PNG32:-")
    return Image.open(io.BytesIO(p.stdout))


def save_ref(img, name):
    img.save(HERE / name, optimize=True)
    return name


def entry(file, fmt, mime, made_by, outcome, refs=(), **extra):
    e = {"file": file, "format": fmt, "mime": mime, "bytes": (HERE / file).stat().st_size, "made_by": made_by,
         "expected": outcome, "references": list(refs)}
    e.update(extra)
    manifest.append(e)


def ref(path, made_by, second_tool=None, db=None, page=None):
    im = Image.open(HERE / path)
    r = {"page": page, "path": path, "width": im.width, "height": im.height, "made_by": made_by}
    if second_tool:
        r["psnr_vs_second_tool"] = {"tool": second_tool, "db": db}
    return r


# ---------------------------------------------------------------- sources (from tests/corpus/)
def sources():
    photo = Image.open(CORPUS / "photos/kodim23.png").convert("RGB").resize((192, 128), Image.LANCZOS)
    photo2 = Image.open(CORPUS / "photos/kodim07.png").convert("RGB").resize((192, 128), Image.LANCZOS)
    photo3 = Image.open(CORPUS / "photos/kodim02.png").convert("RGB").resize((192, 128), Image.LANCZOS)
    alpha = Image.open(CORPUS / "photos/Transparency.png").convert("RGBA")
    icon256 = alpha.resize((256, 256), Image.LANCZOS)
    alpha128 = alpha.resize((128, 128), Image.LANCZOS)
    for n, im in [("photo", photo), ("photo2", photo2), ("photo3", photo3), ("icon256", icon256),
                  ("alpha128", alpha128)]:
        im.save(TMP / f"{n}.png")
    return photo, photo2, photo3, icon256, alpha128


# ---------------------------------------------------------------- SVG
FONT = "DejaVu Sans"

SVGS = {
    "svg-flowchart.svg": (512, 320, f"""<svg xmlns="http://www.w3.org/2000/svg" width="512" height="320" viewBox="0 0 512 320">
  <defs>
    <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto">
      <path d="M0,0 L10,5 L0,10 z" fill="#334155"/>
    </marker>
  </defs>
  <rect width="512" height="320" fill="#ffffff"/>
  <g font-family="{FONT}" font-size="16" text-anchor="middle" fill="#0f172a">
    <rect x="20" y="40" width="130" height="56" rx="10" fill="#dbeafe" stroke="#1d4ed8" stroke-width="2"/>
    <text x="85" y="74">Read file</text>
    <polygon points="256,30 330,68 256,106 182,68" fill="#fef3c7" stroke="#b45309" stroke-width="2"/>
    <text x="256" y="73">Allowed?</text>
    <rect x="362" y="40" width="130" height="56" rx="10" fill="#dcfce7" stroke="#15803d" stroke-width="2"/>
    <text x="427" y="74">Convert</text>
    <rect x="182" y="220" width="148" height="56" rx="10" fill="#fee2e2" stroke="#b91c1c" stroke-width="2"/>
    <text x="256" y="254">Refuse</text>
    <text x="346" y="58" font-size="13">yes</text>
    <text x="272" y="160" font-size="13">no</text>
  </g>
  <g stroke="#334155" stroke-width="2" fill="none" marker-end="url(#arrow)">
    <path d="M150,68 L180,68"/>
    <path d="M330,68 L360,68"/>
    <path d="M256,106 L256,218"/>
  </g>
</svg>
"""),
    "svg-icon-24.svg": (24, 24, """<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24">
  <path fill="none" d="M0 0h24v24H0z"/>
  <path fill="#1f2937" d="M19 3H5c-1.1 0-2 .9-2 2v14c0 1.1.9 2 2 2h14c1.1 0 2-.9 2-2V5c0-1.1-.9-2-2-2zm0 16H5V5h14v14zm-5.04-6.71-2.75 3.54-1.96-2.36L6.5 17h11l-3.54-4.71z"/>
  <circle cx="8.5" cy="8.5" r="1.5" fill="#f59e0b"/>
</svg>
"""),
    "svg-chart-gradients.svg": (400, 300, f"""<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300" viewBox="0 0 400 300">
  <defs>
    <linearGradient id="bg" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#f8fafc"/><stop offset="1" stop-color="#cbd5e1"/>
    </linearGradient>
    <linearGradient id="bar" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#3b82f6"/><stop offset="1" stop-color="#1e3a8a"/>
    </linearGradient>
    <radialGradient id="glow" cx="0.5" cy="0.5" r="0.5">
      <stop offset="0" stop-color="#f97316" stop-opacity="0.9"/><stop offset="1" stop-color="#f97316" stop-opacity="0"/>
    </radialGradient>
  </defs>
  <rect x="10" y="10" width="380" height="280" rx="16" fill="url(#bg)"/>
  <g fill="url(#bar)">
    <rect x="50" y="160" width="40" height="100"/>
    <rect x="110" y="110" width="40" height="150"/>
    <rect x="170" y="70" width="40" height="190" fill-opacity="0.6"/>
    <rect x="230" y="130" width="40" height="130" opacity="0.4"/>
  </g>
  <circle cx="320" cy="90" r="60" fill="url(#glow)"/>
  <polyline points="70,150 130,100 190,60 250,120 330,80" fill="none" stroke="#dc2626" stroke-width="3"
            stroke-linejoin="round" stroke-opacity="0.8"/>
  <line x1="40" y1="260" x2="370" y2="260" stroke="#475569" stroke-width="2"/>
  <text x="200" y="285" font-family="{FONT}" font-size="14" text-anchor="middle" fill="#334155">Quarterly admissions</text>
</svg>
"""),
    "svg-logo-paths.svg": (256, 256, """<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256">
  <g transform="translate(128 128)">
    <path d="M0,-110 C60,-110 110,-60 110,0 C110,60 60,110 0,110 C-60,110 -110,60 -110,0 C-110,-60 -60,-110 0,-110 Z"
          fill="#0ea5e9" stroke="#0c4a6e" stroke-width="6"/>
    <path d="M-60,40 L-60,-40 L0,20 L60,-40 L60,40" fill="none" stroke="#ffffff" stroke-width="18"
          stroke-linecap="round" stroke-linejoin="round"/>
    <g transform="rotate(45)">
      <rect x="-12" y="70" width="24" height="24" fill="#facc15" stroke="#713f12" stroke-width="3"/>
    </g>
    <path d="M-80,-70 Q0,-130 80,-70" fill="none" stroke="#e0f2fe" stroke-width="5" stroke-dasharray="12 8"/>
  </g>
</svg>
"""),
    "svg-viewbox-only.svg": (300, 150, """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 300 150">
  <rect x="0" y="0" width="300" height="150" fill="#fdf4ff"/>
  <ellipse cx="80" cy="75" rx="60" ry="40" fill="#a855f7"/>
  <path d="M170,120 L210,30 L250,120 Z" fill="#22c55e" fill-opacity="0.7" stroke="#14532d" stroke-width="4"/>
</svg>
"""),
}


def embedded_png_svg(photo):
    small = photo.resize((96, 64), Image.LANCZOS)
    buf = io.BytesIO()
    small.save(buf, "PNG", optimize=True)
    b64 = base64.b64encode(buf.getvalue()).decode()
    return (200, 150, f"""<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="200" height="150" viewBox="0 0 200 150">
  <rect width="200" height="150" fill="#e2e8f0"/>
  <image x="10" y="10" width="180" height="120" preserveAspectRatio="none" xlink:href="data:image/png;base64,{b64}"/>
  <rect x="10" y="10" width="180" height="120" fill="none" stroke="#0f172a" stroke-width="3"/>
</svg>
""")


def fit(w, h, side):
    s = side / max(w, h)
    return round(w * s), round(h * s)


# ---------------------------------------------------------------- Chromium
def chromium_job(job, playwright):
    # An ES module finds packages beside itself (not by NODE_PATH): run a copy next to node_modules/.
    script = Path(playwright).parent / "mediagate-fixtures-browser.mjs"
    shutil.copy(HERE / "browser.mjs", script)
    env = dict(os.environ, CHROMIUM="/usr/bin/chromium")
    p = subprocess.run(["node", str(script)], input=json.dumps(job).encode(), capture_output=True, env=env,
                       cwd=str(script.parent), timeout=300)
    if p.returncode != 0:
        sys.exit("browser.mjs failed:\n" + p.stderr.decode(errors="replace"))
    return json.loads(p.stdout)


def chromium_version():
    return " ".join(run("/usr/bin/chromium", "--version").stdout.decode().split()[:2])


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--playwright", default="/tmp/fx-pw/node_modules")
    args = ap.parse_args()
    for f in HERE.iterdir():
        if f.name not in ("make.py", "browser.mjs", "README.md"):
            f.unlink()
    photo, photo2, photo3, icon256, alpha128 = sources()
    chrome = chromium_version()
    im_version = " ".join(run(MAGICK, "-version").stdout.decode().splitlines()[0].replace("Version: ", "").split()[:3])
    pil = f"Pillow {Image.__version__}"

    # ---- SVG + the canvas PNG + the Chromium PDF: one Chromium run
    svgs = dict(SVGS)
    svgs["svg-embedded-png.svg"] = embedded_png_svg(photo)
    job = {"svg": [], "canvas": {"width": 480, "height": 320}, "pdf": []}
    for name, (w, h, text) in svgs.items():
        (HERE / name).write_text(text)
        rw, rh = fit(w, h, SVG_REF_FIT)
        job["svg"].append({"name": name, "text": text, "width": rw, "height": rh})
    job["pdf"].append({"name": "pdf-text-chromium.pdf", "width": "148mm", "height": "210mm", "html": CHROMIUM_PDF_HTML})
    out = chromium_job(job, args.playwright)
    for s in job["svg"]:
        name = s["name"]
        refname = name.replace(".svg", ".ref.png")
        (HERE / refname).write_bytes(base64.b64decode(out["svg"][name]))
        rsvg = TMP / (name + ".rsvg.png")
        run("rsvg-convert", "-w", s["width"], "-h", s["height"], "-o", rsvg, HERE / name)
        db = psnr(Image.open(HERE / refname), Image.open(rsvg))
        made = "written by hand (make.py)" + (", text in DejaVu Sans" if "<text" in svgs[name][2] else "") + (
            ", a data: PNG made by Pillow inside" if "data:image/png" in svgs[name][2] else "")
        entry(name, "svg", "image/svg+xml", made, {"outcome": "converted"},
              [ref(refname, f"{chrome}: <img> drawn on a {s['width']}x{s['height']} canvas, toDataURL('image/png')",
                   "rsvg-convert 2.54.7 at the same size", db)],
              intrinsic_size=[svgs[name][0], svgs[name][1]], reference_fit=SVG_REF_FIT)
    (HERE / "canvas-drawing.png").write_bytes(base64.b64decode(out["canvas"]))
    entry("canvas-drawing.png", "png", "image/png",
          f"{chrome}: 2D canvas (gradient, text in DejaVu Sans, strokes, alpha), canvas.toBlob('image/png')",
          {"outcome": "admitted", "note": "a PNG: admitted by the plain gate, no conversion"})
    (HERE / "pdf-text-chromium.pdf").write_bytes(base64.b64decode(out["pdf"]["pdf-text-chromium.pdf"]))

    # ---- BMP
    bmp_cases = []
    photo.save(HERE / "bmp-24bit-bottom-up.bmp")
    bmp_cases.append(("bmp-24bit-bottom-up.bmp", f"{pil}: Image.save(.bmp) of an RGB image (24-bit, BI_RGB, bottom-up)"))
    run(MAGICK, TMP / "alpha128.png", "-define", "bmp:format=bmp4", "BMP:" + str(HERE / "bmp-32bit-alpha.bmp"))
    bmp_cases.append(("bmp-32bit-alpha.bmp", f"{im_version}: convert alpha.png -define bmp:format=bmp4 BMP:out.bmp "
                      "(32-bit BI_BITFIELDS with an alpha mask, V4 header)"))
    photo.convert("P", palette=Image.ADAPTIVE, colors=256).save(HERE / "bmp-8bit-palette.bmp")
    bmp_cases.append(("bmp-8bit-palette.bmp", f"{pil}: convert('P', ADAPTIVE, 256 colours).save(.bmp) (8-bit palette)"))
    run(MAGICK, TMP / "photo.png", "-colors", "64", "-type", "Palette", "-compress", "RLE",
        "BMP3:" + str(HERE / "bmp-rle8.bmp"))
    bmp_cases.append(("bmp-rle8.bmp", f"{im_version}: convert photo.png -colors 64 -type Palette -compress RLE BMP3:out.bmp (RLE8)"))
    run(MAGICK, TMP / "photo.png", "-define", "bmp:subtype=RGB565", "BMP:" + str(HERE / "bmp-16bit-565.bmp"))
    bmp_cases.append(("bmp-16bit-565.bmp", f"{im_version}: convert photo.png -define bmp:subtype=RGB565 BMP:out.bmp (16-bit 5-6-5 bitfields)"))
    top_down(HERE / "bmp-24bit-bottom-up.bmp", HERE / "bmp-24bit-top-down.bmp")
    bmp_cases.append(("bmp-24bit-top-down.bmp", f"make.py from {pil}'s bmp-24bit-bottom-up.bmp: rows reversed, height "
                      "negated (a top-down BMP; neither tool writes one)"))
    for name, made in bmp_cases:
        pim = Image.open(HERE / name)
        pim.load()
        refname = save_ref(pim.convert("RGBA" if pim.mode == "RGBA" else "RGB"), name.replace(".bmp", ".ref.png"))
        db = psnr(Image.open(HERE / refname), magick_decode(HERE / name))
        entry(name, "bmp", "image/bmp", made, {"outcome": "converted"},
              [ref(refname, f"{pil} decode, saved as PNG", f"{im_version} decode", db)],
              pillow_reads={"mode": pim.mode, "compression": pim.info.get("compression")})

    # ---- TIFF
    tif_cases = []
    photo.save(HERE / "tiff-raw-rgb.tif", compression=None)
    tif_cases.append(("tiff-raw-rgb.tif", f"{pil}: save(.tif, compression=None) (uncompressed RGB, one strip)"))
    photo.save(HERE / "tiff-lzw.tif", compression="tiff_lzw")
    tif_cases.append(("tiff-lzw.tif", f"{pil} (libtiff): save(.tif, compression='tiff_lzw')"))
    photo.save(HERE / "tiff-deflate.tif", compression="tiff_adobe_deflate")
    tif_cases.append(("tiff-deflate.tif", f"{pil} (libtiff): save(.tif, compression='tiff_adobe_deflate')"))
    alpha128.save(HERE / "tiff-rgba-deflate.tif", compression="tiff_adobe_deflate")
    tif_cases.append(("tiff-rgba-deflate.tif", f"{pil} (libtiff): RGBA save(.tif, compression='tiff_adobe_deflate') (unassociated alpha)"))
    run(MAGICK, TMP / "photo.png", "-compress", "JPEG", "-quality", "90", HERE / "tiff-jpeg.tif")
    tif_cases.append(("tiff-jpeg.tif", f"{im_version}: convert photo.png -compress JPEG -quality 90 out.tif (new-style JPEG, compression 7)"))
    run(MAGICK, TMP / "photo.png", "-depth", "16", "-compress", "None", HERE / "tiff-16bit.tif")
    tif_cases.append(("tiff-16bit.tif", f"{im_version}: convert photo.png -depth 16 -compress None out.tif (16 bits per sample RGB)"))
    run(MAGICK, TMP / "photo.png", "-colorspace", "CMYK", "-compress", "LZW", HERE / "tiff-cmyk.tif")
    tif_cases.append(("tiff-cmyk.tif", f"{im_version}: convert photo.png -colorspace CMYK -compress LZW out.tif (CMYK, no ICC profile)"))
    run(MAGICK, TMP / "photo.png", TMP / "photo2.png", TMP / "photo3.png", "-compress", "LZW", HERE / "tiff-multipage.tif")
    tif_cases.append(("tiff-multipage.tif", f"{im_version}: convert photo.png photo2.png photo3.png -compress LZW out.tif "
                      "(3 pages; page 1 is the one converted)"))
    for name, made in tif_cases:
        pim = Image.open(HERE / name)
        pim.seek(0)
        pim.load()
        dec = pim
        if pim.mode == "CMYK":
            dec = pim.convert("RGB")
        elif pim.mode not in ("RGB", "RGBA"):
            dec = pim.convert("RGB")
        refname = save_ref(dec, name.replace(".tif", ".ref.png"))
        db = psnr(Image.open(HERE / refname), magick_decode(HERE / name, 0))
        extra = {"pillow_reads": {"mode": pim.mode, "compression": pim.info.get("compression"),
                                  "pages": getattr(pim, "n_frames", 1)}}
        note = None
        if name == "tiff-cmyk.tif":
            note = "CMYK with no ICC profile: Pillow's and ImageMagick's naive CMYK->RGB differ; a decoder that has no CMYK may refuse (undecodable)"
        if name == "tiff-16bit.tif":
            note = "reference: Pillow reads 16-bit RGB as 8-bit RGB (the high byte)"
        out_ = {"outcome": "converted"}
        if note:
            out_["note"] = note
        entry(name, "tiff", "image/tiff", made, out_, [ref(refname, f"{pil} decode of page 1, saved as PNG",
                                                           f"{im_version} decode of page 1", db)], **extra)

    # ---- ICO
    run(MAGICK, TMP / "icon256.png", "-define", "icon:auto-resize=256,48,32,16", HERE / "ico-multi-imagemagick.ico")
    icon256.save(HERE / "ico-multi-pillow.ico", sizes=[(16, 16), (32, 32), (48, 48), (256, 256)])
    icon256.resize((48, 48), Image.LANCZOS).save(HERE / "ico-bmp-entries.ico", sizes=[(16, 16), (32, 32), (48, 48)],
                                                 bitmap_format="bmp")
    for name, made in [
        ("ico-multi-imagemagick.ico", f"{im_version}: convert icon256.png -define icon:auto-resize=256,48,32,16 out.ico "
         "(the 256 entry PNG-compressed, the others BMP with an AND mask)"),
        ("ico-multi-pillow.ico", f"{pil}: save(.ico, sizes=16,32,48,256) (every entry PNG-compressed)"),
        ("ico-bmp-entries.ico", f"{pil}: save(.ico, sizes=16,32,48, bitmap_format='bmp') (every entry a 32-bit BMP)"),
    ]:
        pim = Image.open(HERE / name)
        sizes = sorted(pim.info.get("sizes", pim.ico.sizes()))
        pim.size = sizes[-1]
        pim.load()
        refname = save_ref(pim.convert("RGBA"), name.replace(".ico", ".ref.png"))
        idx = largest_ico_index(HERE / name)
        db = psnr(Image.open(HERE / refname), magick_decode(HERE / name, idx))
        entry(name, "ico", "image/vnd.microsoft.icon", made, {"outcome": "converted", "note": "the largest entry"},
              [ref(refname, f"{pil} decode of the largest entry ({sizes[-1][0]}x{sizes[-1][1]}), saved as PNG",
                   f"{im_version} decode of entry {idx}", db)],
              entries=[list(s) for s in sizes], also_claimed_as=["image/x-icon"])

    # ---- animated GIF
    gif_pillow(HERE / "gif-animated-pillow.gif")
    gif_magick(HERE / "gif-animated-imagemagick.gif")
    for name, made in [
        ("gif-animated-pillow.gif", f"{pil}: save(.gif, save_all, 6 frames, disposal 2,1,3,0,2,1, transparency, loop 0)"),
        ("gif-animated-imagemagick.gif", f"{im_version}: convert -dispose Background -delay 20 (4 frames, the first "
         "80x60 at +40+30 on a 160x120 screen, transparent elsewhere) -loop 0 out.gif"),
    ]:
        pim = Image.open(HERE / name)
        pim.seek(0)
        first = pim.convert("RGBA")
        refname = save_ref(first, name.replace(".gif", ".frame1.ref.png"))
        mag = Image.open(io.BytesIO(run(MAGICK, f"{HERE / name}[0]", "-coalesce", "-background", "none",
                                        "-extent", f"{pim.width}x{pim.height}", "PNG32:-").stdout))
        db = psnr(Image.open(HERE / refname), mag)
        entry(name, "gif", "image/gif", made,
              {"outcome": "converted", "when": "a profile that refuses animation (openai); other profiles admit the GIF as it is",
               "note": "converted to its first frame, composited on the logical screen"},
              [ref(refname, f"{pil} frame 1 (composited on the logical screen) as RGBA PNG",
                   f"{im_version} frame 1 -coalesce", db)], frames=pim.n_frames)

    # ---- PDF
    pdfs = []
    reportlab_text(HERE / "pdf-text-standard14.pdf")
    pdfs.append(("pdf-text-standard14.pdf", f"reportlab {reportlab.Version}: Helvetica, Times-Roman, Courier (standard 14, "
                 "not embedded), A5, one page", {"outcome": "converted"}))
    pdfs.append(("pdf-text-chromium.pdf", f"{chrome}: page.pdf() (playwright-core) of HTML in DejaVu Sans with an inline "
                 "SVG diagram; fonts embedded as subsets; A5", {"outcome": "converted"}))
    photo.resize((384, 256), Image.LANCZOS).save(HERE / "pdf-image-pillow.pdf", resolution=96)
    pdfs.append(("pdf-image-pillow.pdf", f"{pil}: save(.pdf, resolution=96) of a 384x256 photo (image only, DCT)",
                 {"outcome": "converted"}))
    run("rsvg-convert", "-f", "pdf", "-o", HERE / "pdf-cairo-chart.pdf", HERE / "svg-chart-gradients.svg")
    pdfs.append(("pdf-cairo-chart.pdf", "rsvg-convert 2.54.7 (cairo) -f pdf of svg-chart-gradients.svg (vector, "
                 "gradients, transparency, text)", {"outcome": "converted"}))
    reportlab_pages(HERE / "pdf-3-pages.pdf")
    pdfs.append(("pdf-3-pages.pdf", f"reportlab {reportlab.Version}: 3 A5 pages, each a big page number and shapes",
                 {"outcome": "converted", "pages": 3, "note": "page 4 (or 0) is PageError::NoSuchPage {requested, count: 3}"}))
    reportlab_blank(HERE / "pdf-page2-blank.pdf", text_first=True)
    pdfs.append(("pdf-page2-blank.pdf", f"reportlab {reportlab.Version}: page 1 text, page 2 nothing drawn",
                 {"outcome": "converted", "page": 1, "page_2": {"outcome": "refused", "page_error": "Blank"}}))
    reportlab_blank(HERE / "pdf-blank.pdf", text_first=False)
    pdfs.append(("pdf-blank.pdf", f"reportlab {reportlab.Version}: one page, nothing drawn",
                 {"outcome": "refused", "page_error": "Blank"}))
    run("qpdf", "--encrypt", "user-secret", "owner-secret", "256", "--", HERE / "pdf-text-standard14.pdf",
        HERE / "pdf-encrypted-user-password.pdf")
    pdfs.append(("pdf-encrypted-user-password.pdf", f"{qpdf_version()}: --encrypt user-secret owner-secret 256 "
                 "(AES-256) of pdf-text-standard14.pdf", {"outcome": "refused", "page_error": "Encrypted",
                                                          "note": "needs the user password 'user-secret' to open"}))
    run("qpdf", "--encrypt", "", "owner-secret", "256", "--", HERE / "pdf-text-standard14.pdf",
        HERE / "pdf-encrypted-owner-only.pdf")
    pdfs.append(("pdf-encrypted-owner-only.pdf", f"{qpdf_version()}: --encrypt '' owner-secret 256 (AES-256, empty user "
                 "password: any reader opens it) of pdf-text-standard14.pdf",
                 {"outcome": "converted", "acceptable": ["converted", "refused"], "page_error_if_refused": "Encrypted",
                  "note": "an empty user password opens it (pdftoppm does); a renderer that cannot decrypt must say Encrypted"}))
    for name, made, outcome in pdfs:
        info = pdfinfo(HERE / name)
        refs = []
        for page in range(1, info["pages"] + 1):
            if outcome.get("outcome") == "refused" and outcome.get("page_error") == "Encrypted":
                break
            refname = name.replace(".pdf", f".p{page}.ref.png")
            run("pdftoppm", "-png", "-scale-to", PDF_REF_SIDE, "-f", page, "-l", page, "-singlefile", HERE / name,
                HERE / refname[:-4])
            gsout = TMP / f"{name}.{page}.gs.png"
            long_pt = max(info["page_size_pt"])
            run("gs", "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=png16m", f"-r{PDF_REF_SIDE * 72 / long_pt:.4f}",
                "-dTextAlphaBits=4", "-dGraphicsAlphaBits=4", f"-dFirstPage={page}", f"-dLastPage={page}",
                f"-sOutputFile={gsout}", HERE / name)
            r = Image.open(HERE / refname)
            g = Image.open(gsout)
            note = ""
            if g.size != r.size:
                note = f" (its {g.width}x{g.height} resized to the reference's size)"
                g = g.resize(r.size, Image.LANCZOS)
            refs.append(ref(refname, f"{pdftoppm_version()}: pdftoppm -png -scale-to {PDF_REF_SIDE} -f {page} -l {page} "
                            "(white paper)", f"Ghostscript {run('gs', '--version').stdout.decode().strip()} png16m at the same "
                            f"scale{note}", psnr(r, g), page=page))
        entry(name, "pdf", "application/pdf", made, outcome, refs, pages=info["pages"],
              page_size_pt=info["page_size_pt"], encrypted=info["encrypted"])

    # ---- HEIC / AVIF: refused, only the signature matters
    pillow_heif.register_heif_opener()
    photo.resize((64, 48), Image.LANCZOS).save(HERE / "heic-tiny.heic", quality=60)
    entry("heic-tiny.heic", "heic", "image/heic", f"pillow-heif {pillow_heif.__version__} (libheif, x265): save(.heic) "
          "of a 64x48 photo", {"outcome": "refused", "reason": "mime_unsupported",
                               "note": "the words name HEIC and what to do (convert to JPEG/PNG first)"})
    photo.resize((64, 48), Image.LANCZOS).save(HERE / "avif-tiny.avif", quality=60)
    entry("avif-tiny.avif", "avif", "image/avif", f"{pil} (libavif {features.version('avif')}): save(.avif) of a "
          "64x48 photo", {"outcome": "refused", "reason": "mime_unsupported",
                          "note": "the words name AVIF and what to do (convert to JPEG/PNG first)"})

    hostile()

    manifest.sort(key=lambda e: e["file"])
    doc = {
        "about": "the conversion fixtures; see README.md. expected.outcome: converted | refused | admitted. "
                 "references[].psnr_vs_second_tool: PSNR (dB, RGB composited over white, 100 = identical) between "
                 "the reference and a second independent tool's rendering: how close independent decoders come, "
                 "not a floor for mediagate. PDF references: longer side 1000 px (pdftoppm -scale-to 1000), white "
                 "paper; SVG references: the SVG's size fitted into 512x512 (up or down), transparent background.",
        "tools": {"pillow": Image.__version__, "imagemagick": im_version, "chromium": chrome,
                  "reportlab": reportlab.Version, "pillow_heif": pillow_heif.__version__, "qpdf": qpdf_version(),
                  "pdftoppm": pdftoppm_version(), "ghostscript": run("gs", "--version").stdout.decode().strip(),
                  "rsvg-convert": run("rsvg-convert", "--version").stdout.decode().strip()},
        "files": manifest,
    }
    (HERE / "manifest.json").write_text(json.dumps(doc, indent=1) + "\n")
    readme_table()
    shutil.rmtree(TMP)
    total = sum(f.stat().st_size for f in HERE.iterdir())
    print(f"{len(manifest)} files described, {len(list(HERE.iterdir()))} in the folder, {total / 1e6:.2f} MB")


# ---------------------------------------------------------------- helpers per format
def top_down(src, dst):
    b = bytearray(src.read_bytes())
    off = struct.unpack_from("<I", b, 10)[0]
    w, h = struct.unpack_from("<ii", b, 18)
    bpp = struct.unpack_from("<H", b, 28)[0]
    stride = (w * bpp // 8 + 3) & ~3
    rows = [bytes(b[off + i * stride: off + (i + 1) * stride]) for i in range(h)]
    b[off: off + stride * h] = b"".join(reversed(rows))
    struct.pack_into("<i", b, 22, -h)
    dst.write_bytes(bytes(b))


def largest_ico_index(path):
    b = path.read_bytes()
    n = struct.unpack_from("<H", b, 4)[0]
    best, idx = -1, 0
    for i in range(n):
        w = b[6 + 16 * i] or 256
        if w > best:
            best, idx = w, i
    return idx


def gif_pillow(path):
    frames = []
    for i in range(6):
        im = Image.new("P", (160, 120), 0)
        pal = [255, 255, 255, 220, 38, 38, 37, 99, 235, 22, 163, 74, 234, 179, 8, 15, 23, 42]
        im.putpalette(pal + [0] * (768 - len(pal)))
        d = ImageDraw.Draw(im)
        d.rectangle([0, 0, 159, 119], fill=0)  # index 0: transparent
        d.ellipse([10 + i * 20, 20, 60 + i * 20, 70], fill=1 + i % 4)
        d.rectangle([5, 90, 155, 110], fill=5)
        d.text((8, 92), f"frame {i + 1}", fill=4)
        frames.append(im)
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=120, loop=0, transparency=0,
                   disposal=[2, 1, 3, 0, 2, 1])


def gif_magick(path):
    parts = []
    for i, color in enumerate(["#dc2626", "#2563eb", "#16a34a", "#eab308"]):
        f = TMP / f"gf{i}.png"
        im = Image.new("RGBA", (80, 60), (0, 0, 0, 0))
        d = ImageDraw.Draw(im)
        d.ellipse([5, 5, 75, 55], fill=color)
        d.rectangle([30 + i * 5, 20, 50 + i * 5, 40], fill=(0, 0, 0, 0))
        im.save(f)
        parts += ["-page", "160x120+40+30" if i == 0 else f"160x120+{i * 20}+{i * 10}", f]
    run(MAGICK, "-dispose", "Background", "-delay", "20", *parts, "-loop", "0", path)


CHROMIUM_PDF_HTML = f"""<!doctype html><html><head><style>
body {{ font-family: '{FONT}'; margin: 24px; color: #0f172a; }}
h1 {{ font-size: 26px; border-bottom: 3px solid #2563eb; }}
table {{ border-collapse: collapse; margin: 12px 0; }} td, th {{ border: 1px solid #64748b; padding: 4px 10px; }}
th {{ background: #dbeafe; }}
</style></head><body>
<h1>Admission report</h1>
<p>This page was printed by Chromium. Its text is set in DejaVu Sans, embedded in the PDF as a subset.
The gate renders PDF pages inside the sandbox, with a pure-Rust renderer.</p>
<table><tr><th>format</th><th>converted</th></tr><tr><td>SVG</td><td>yes</td></tr><tr><td>TIFF</td><td>page 1</td></tr>
<tr><td>HEIC</td><td>no</td></tr></table>
<svg width="300" height="120" viewBox="0 0 300 120"><rect x="5" y="5" width="120" height="60" rx="8" fill="#fde68a"
stroke="#92400e" stroke-width="3"/><circle cx="220" cy="60" r="50" fill="#60a5fa" fill-opacity="0.7"/></svg>
</body></html>"""


def reportlab_text(path):
    c = rl_canvas.Canvas(str(path), pagesize=(420, 595), invariant=1)
    c.setFont("Helvetica-Bold", 22)
    c.drawString(40, 530, "Standard 14 fonts")
    c.setFont("Helvetica", 12)
    y = 495
    for line in ["The quick brown fox jumps over the lazy dog.", "Helvetica is one of the 14 standard PDF fonts:",
                 "a reader supplies it; this file does not embed it."]:
        c.drawString(40, y, line)
        y -= 18
    c.setFont("Times-Roman", 14)
    c.drawString(40, y - 10, "Times-Roman: 0123456789 ABCDEFGHIJ abcdefghij")
    c.setFont("Courier", 12)
    c.drawString(40, y - 40, "Courier: mediagate --convert")
    c.setStrokeColorRGB(0.1, 0.3, 0.8)
    c.setLineWidth(3)
    c.rect(40, 200, 340, 150)
    c.setFillColorRGB(0.9, 0.5, 0.1)
    c.circle(210, 275, 50, fill=1, stroke=0)
    c.showPage()
    c.save()


def reportlab_pages(path):
    c = rl_canvas.Canvas(str(path), pagesize=(420, 595), invariant=1)
    colors = [(0.86, 0.15, 0.15), (0.15, 0.39, 0.92), (0.09, 0.64, 0.29)]
    for i, (r, g, b) in enumerate(colors, start=1):
        c.setFillColorRGB(r, g, b)
        c.setFont("Helvetica-Bold", 160)
        c.drawCentredString(210, 330, str(i))
        c.setFont("Helvetica", 18)
        c.drawCentredString(210, 260, f"page {i} of 3")
        for k in range(i):
            c.rect(60 + k * 110, 100, 80, 80, fill=1, stroke=0)
        c.showPage()
    c.save()


def reportlab_blank(path, text_first):
    c = rl_canvas.Canvas(str(path), pagesize=(420, 595), invariant=1)
    if text_first:
        c.setFont("Helvetica", 24)
        c.drawString(40, 500, "Page 1 has text; page 2 is blank.")
        c.showPage()
    c.showPage()  # a page with nothing drawn
    c.save()


def pdfinfo(path):
    out = run("pdfinfo", "-opw", "owner-secret", path).stdout.decode()  # the owner password of the encrypted ones
    info = {"pages": 0, "page_size_pt": None, "encrypted": False}
    for line in out.splitlines():
        k, _, v = line.partition(":")
        v = v.strip()
        if k == "Pages":
            info["pages"] = int(v)
        elif k == "Page size":
            w, _, rest = v.partition(" x ")
            info["page_size_pt"] = [float(w), float(rest.split()[0])]
        elif k == "Encrypted":
            info["encrypted"] = v.startswith("yes")
    return info


def qpdf_version():
    return run("qpdf", "--version").stdout.decode().splitlines()[0].strip()


def pdftoppm_version():
    return run("pdftoppm", "-v").stderr.decode().splitlines()[0].strip()


# ---------------------------------------------------------------- hostile files (hand-made here)
def png_bytes(im):
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def tiff_gray4(next_ifd, strip_offset=None):
    """A little-endian 4x4 8-bit greyscale TIFF; IFD at 8, pixel data after it."""
    n = 9
    ifd_size = 2 + n * 12 + 4
    data_at = 8 + ifd_size
    so = data_at if strip_offset is None else strip_offset
    tags = [(256, 3, 1, 4), (257, 3, 1, 4), (258, 3, 1, 8), (259, 3, 1, 1), (262, 3, 1, 1), (273, 4, 1, so),
            (277, 3, 1, 1), (278, 3, 1, 4), (279, 4, 1, 16)]
    b = b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", n)
    for tag, typ, cnt, val in tags:
        b += struct.pack("<HHI", tag, typ, cnt) + (struct.pack("<HH", val, 0) if typ == 3 else struct.pack("<I", val))
    b += struct.pack("<I", next_ifd)
    return b + bytes(range(0, 256, 16))


def hostile():
    H = []

    def h(name, fmt, mime, what, outcome, tools):
        tried = {k: try_run(v) for k, v in tools.items()}
        entry(name, fmt, mime, "make.py (hand-made bytes)", outcome, [], hostile=what, other_tools=tried)

    # BMP
    b = b"BM" + struct.pack("<IHHI", 14 + 40 + 100, 0, 0, 54)
    b += struct.pack("<IiiHHIIiiII", 40, 100000, 100000, 1, 24, 0, 0, 2835, 2835, 0, 0) + bytes(100)
    (HERE / "hostile-bmp-huge-dims.bmp").write_bytes(b)
    h("hostile-bmp-huge-dims.bmp", "bmp", "image/bmp", "header says 100000 x 100000 24-bit (30 GB of pixels), 100 bytes follow",
      {"outcome": "refused", "reason": "dimensions_too_large", "acceptable_reasons": ["dimensions_too_large", "undecodable"]},
      {"pillow": [sys.executable, "-c", "import sys;from PIL import Image;Image.open(sys.argv[1]).load()",
                  HERE / "hostile-bmp-huge-dims.bmp"],
       "imagemagick": [MAGICK, HERE / "hostile-bmp-huge-dims.bmp", "null:"]})
    b = bytearray((HERE / "bmp-24bit-bottom-up.bmp").read_bytes()[:54]) + bytes(4 * 4 * 3)
    struct.pack_into("<I", b, 2, len(b))
    struct.pack_into("<ii", b, 18, 4, 4)
    struct.pack_into("<I", b, 34, 0)
    struct.pack_into("<I", b, 10, 0xFFFFFF00)
    (HERE / "hostile-bmp-bad-offset.bmp").write_bytes(bytes(b))
    h("hostile-bmp-bad-offset.bmp", "bmp", "image/bmp", "a 4x4 24-bit BMP whose pixel-data offset is 0xFFFFFF00 (past the end)",
      {"outcome": "refused", "reason": "undecodable"},
      {"pillow": [sys.executable, "-c", "import sys;from PIL import Image;Image.open(sys.argv[1]).load()",
                  HERE / "hostile-bmp-bad-offset.bmp"],
       "imagemagick": [MAGICK, HERE / "hostile-bmp-bad-offset.bmp", "null:"]})

    # TIFF
    (HERE / "hostile-tiff-ifd-loop.tif").write_bytes(tiff_gray4(next_ifd=8))
    h("hostile-tiff-ifd-loop.tif", "tiff", "image/tiff", "a valid 4x4 grey page whose next-IFD pointer is itself (IFD loop)",
      {"outcome": "refused", "reason": "undecodable", "acceptable": ["refused", "converted"],
       "note": "page 1 is whole: a decoder that reads only IFD 0 may convert it; walking the IFD chain must stop (no hang)"},
      {"pillow": [sys.executable, "-c", "import sys;from PIL import Image;im=Image.open(sys.argv[1]);im.load();print(im.n_frames)",
                  HERE / "hostile-tiff-ifd-loop.tif"],
       "imagemagick": [MAGICK, HERE / "hostile-tiff-ifd-loop.tif", "null:"]})
    (HERE / "hostile-tiff-strip-past-end.tif").write_bytes(tiff_gray4(next_ifd=0, strip_offset=0x7FFFFFF0))
    h("hostile-tiff-strip-past-end.tif", "tiff", "image/tiff", "a 4x4 grey TIFF whose strip offset is 0x7FFFFFF0 (past the end)",
      {"outcome": "refused", "reason": "undecodable"},
      {"pillow": [sys.executable, "-c", "import sys;from PIL import Image;Image.open(sys.argv[1]).load()",
                  HERE / "hostile-tiff-strip-past-end.tif"],
       "imagemagick": [MAGICK, HERE / "hostile-tiff-strip-past-end.tif", "null:"]})

    # ICO
    png16 = png_bytes(Image.new("RGBA", (16, 16), (200, 30, 30, 255)))
    b = struct.pack("<HHH", 0, 1, 1) + struct.pack("<BBBBHHII", 16, 16, 0, 0, 1, 32, len(png16), 100000) + png16
    (HERE / "hostile-ico-entry-outside.ico").write_bytes(b)
    h("hostile-ico-entry-outside.ico", "ico", "image/vnd.microsoft.icon", "one entry whose data offset (100000) is outside the file",
      {"outcome": "refused", "reason": "undecodable"},
      {"pillow": [sys.executable, "-c", "import sys;from PIL import Image;Image.open(sys.argv[1]).load()",
                  HERE / "hostile-ico-entry-outside.ico"],
       "imagemagick": [MAGICK, HERE / "hostile-ico-entry-outside.ico", "null:"]})
    b = struct.pack("<HHH", 0, 1, 65535) + struct.pack("<BBBBHHII", 16, 16, 0, 0, 1, 32, len(png16), 22) + png16
    (HERE / "hostile-ico-65535-entries.ico").write_bytes(b)
    h("hostile-ico-65535-entries.ico", "ico", "image/vnd.microsoft.icon",
      "the header claims 65535 entries (a 1 MB directory); the file holds one entry and its 16x16 PNG",
      {"outcome": "refused", "reason": "undecodable", "acceptable": ["refused", "converted"],
       "note": "the directory runs past the end of the file; a decoder reading only the entries present might convert the one 16x16 entry"},
      {"pillow": [sys.executable, "-c", "import sys;from PIL import Image;Image.open(sys.argv[1]).load()",
                  HERE / "hostile-ico-65535-entries.ico"],
       "imagemagick": [MAGICK, HERE / "hostile-ico-65535-entries.ico", "null:"]})

    # SVG
    ents = ['<!ENTITY lol "lol">'] + [f'<!ENTITY lol{i} "{("&lol%s;" % ("" if i == 1 else i - 1)) * 10}">' for i in range(1, 10)]
    svg = ('<?xml version="1.0"?>\n<!DOCTYPE svg [\n ' + "\n ".join(ents) + '\n]>\n'
           '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><text x="0" y="20">&lol9;</text></svg>\n')
    (HERE / "hostile-svg-billion-laughs.svg").write_text(svg)
    svg_h("hostile-svg-billion-laughs.svg", "billion laughs: 9 levels of entities, 10 each (10^9 'lol's)", h)
    svg = """<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="100">
  <defs>
    <g id="a"><use xlink:href="#b"/><rect width="10" height="10"/></g>
    <g id="b"><use xlink:href="#a"/></g>
    <g id="self"><use xlink:href="#self"/></g>
  </defs>
  <use xlink:href="#a"/>
  <use xlink:href="#self"/>
  <use xlink:href="#loop" id="loop"/>
</svg>
"""
    (HERE / "hostile-svg-recursive-use.svg").write_text(svg)
    svg_h("hostile-svg-recursive-use.svg", "<use> cycles: a->b->a, a group using itself, a <use> referencing itself", h,
          outcome={"outcome": "refused", "reason": "undecodable", "acceptable": ["refused", "converted"],
                   "note": "the conversion rules ask for a refusal; rsvg-convert drops the cyclic <use>s and renders the rest; "
                           "either way it must end"})
    levels = ['<g id="l0"><rect width="1" height="1" fill="#000"/></g>'] + [
        f'<g id="l{i}"><use xlink:href="#l{i - 1}"/><use xlink:href="#l{i - 1}" x="1"/></g>' for i in range(1, 31)]
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="100">\n'
           '<defs>\n' + "\n".join(levels) + '\n</defs>\n<use xlink:href="#l30"/>\n</svg>\n')
    (HERE / "hostile-svg-use-fanout.svg").write_text(svg)
    svg_h("hostile-svg-use-fanout.svg", "no cycle, but 30 levels each using the level below twice: 2^30 rectangles", h)
    svg = """<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="120" height="60">
  <rect width="120" height="60" fill="#e0f2fe"/>
  <image x="0" y="0" width="60" height="60" href="file:///etc/passwd"/>
  <image x="60" y="0" width="60" height="60" xlink:href="http://127.0.0.1:9/x.png"/>
  <image x="0" y="0" width="10" height="10" href="../../../../etc/hostname"/>
  <use xlink:href="http://127.0.0.1:9/sprite.svg#icon"/>
  <style>@import url("http://127.0.0.1:9/style.css"); rect { fill: url("http://127.0.0.1:9/p.svg#g"); }</style>
  <text x="5" y="55" font-family="{FONT}" font-size="10">external refs</text>
</svg>
""".replace("{FONT}", FONT)
    (HERE / "hostile-svg-external-refs.svg").write_text(svg)
    svg_h("hostile-svg-external-refs.svg", "external references: file:///etc/passwd, http://127.0.0.1:9/x.png, a relative "
          "path, an external <use>, a CSS @import; none may be opened", h,
          outcome={"outcome": "converted", "acceptable": ["converted", "refused"],
                   "note": "never resolved: no file opened, no connection made; rendered without them (the light-blue "
                           "rectangle and the text) or refused"})
    svg = """<svg xmlns="http://www.w3.org/2000/svg" width="2000" height="2000">
  <filter id="f" x="-1000%" y="-1000%" width="2100%" height="2100%" filterUnits="objectBoundingBox">
    <feGaussianBlur stdDeviation="100000"/>
    <feMorphology radius="100000"/>
    <feTurbulence baseFrequency="0.9" numOctaves="100000"/>
  </filter>
  <rect width="2000" height="2000" fill="#ff0000" filter="url(#f)"/>
</svg>
"""
    (HERE / "hostile-svg-huge-blur.svg").write_text(svg)
    svg_h("hostile-svg-huge-blur.svg", "a 2000x2000 canvas with feGaussianBlur stdDeviation=100000, feMorphology "
          "radius=100000, feTurbulence numOctaves=100000 on a 21x filter region", h)

    # PDF
    src = (HERE / "pdf-3-pages.pdf").read_bytes()
    (HERE / "hostile-pdf-truncated.pdf").write_bytes(src[: len(src) * 2 // 5])
    pdf_h("hostile-pdf-truncated.pdf", "pdf-3-pages.pdf cut after 40% of its bytes (no xref, no trailer, page 1's "
          "content stream cut)", h, {"outcome": "refused", "reason": "undecodable", "acceptable": ["refused", "converted"],
                                     "note": "a repairing parser may recover objects; it must end, and a page it cannot "
                                             "draw is refused"})
    objs = ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 3 0 R] /Count 1 >>"]
    pdf = b"%PDF-1.7\n"
    offs = []
    for i, o in enumerate(objs, start=1):
        offs.append(len(pdf))
        pdf += f"{i} 0 obj\n{o}\nendobj\n".encode()
    xref = len(pdf)
    pdf += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    pdf += "".join(f"{o:010d} 00000 n \n" for o in offs).encode()
    pdf += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    (HERE / "hostile-pdf-cyclic-page-tree.pdf").write_bytes(pdf)
    pdf_h("hostile-pdf-cyclic-page-tree.pdf", "a page tree whose only kid (a /Pages node) lists its parent and itself "
          "as kids: no page, a cycle", h, {"outcome": "refused", "reason": "undecodable",
                                            "note": "no page can be reached; a page-tree walk must stop"})

    # GIF
    g = b"GIF89a" + struct.pack("<HHBBB", 64, 64, 0x80, 0, 0) + bytes([0, 0, 0, 255, 255, 255])
    g += b"\x2c" + struct.pack("<HHHHB", 0, 0, 65535, 65535, 0) + bytes([2, 2, 0x4C, 0x01, 0]) + b"\x3b"
    (HERE / "hostile-gif-huge-frame.gif").write_bytes(g)
    h("hostile-gif-huge-frame.gif", "gif", "image/gif", "a 64x64 logical screen with one frame declared 65535 x 65535 "
      "(4.3 G pixels) and 2 bytes of LZW data",
      {"outcome": "refused", "reason": "dimensions_too_large", "acceptable_reasons": ["dimensions_too_large", "undecodable"]},
      {"pillow": [sys.executable, "-c", "import sys;from PIL import Image;Image.open(sys.argv[1]).load()",
                  HERE / "hostile-gif-huge-frame.gif"],
       "imagemagick": [MAGICK, HERE / "hostile-gif-huge-frame.gif", "null:"]})


def readme_table():
    """Writes the table of files into README.md, between its two markers, from the manifest."""
    rows = ["| file | made by (tool, version, how) | expected | reference(s): size; PSNR of a second independent tool vs it |",
            "|---|---|---|---|"]
    for e in manifest:
        ex = e["expected"]
        o = ex["outcome"] + (f" `{ex['reason']}`" if "reason" in ex else "")
        o += f" (PageError::{ex['page_error']})" if "page_error" in ex else ""
        o += f"; page 2: {ex['page_2']['outcome']} (PageError::{ex['page_2']['page_error']})" if "page_2" in ex else ""
        o += f"; also acceptable: {' / '.join(a for a in ex['acceptable'] if a != ex['outcome'])}" if "acceptable" in ex else ""
        refs = []
        for r in e["references"]:
            p = f"`{r['path']}` {r['width']}×{r['height']}"
            if "psnr_vs_second_tool" in r:
                db = r["psnr_vs_second_tool"]["db"]
                tool = r["psnr_vs_second_tool"]["tool"].split(" at ")[0].split(" png16m")[0].split(" decode")[0]
                p += f" ({'identical' if db == 100.0 else f'{db} dB'} vs {tool})"
            refs.append(p)
        made = ("hand-made by make.py: " + e["hostile"]) if e.get("hostile") else e["made_by"]
        rows.append(f"| `{e['file']}` | {made.replace('|', '/')} | {o} | {'<br>'.join(refs) or '—'} |")
    readme = (HERE / "README.md").read_text()
    start, end = "<!-- files: written by make.py -->", "<!-- end of files -->"
    head, _, rest = readme.partition(start)
    _, _, tail = rest.partition(end)
    (HERE / "README.md").write_text(head + start + "\n" + "\n".join(rows) + "\n" + end + tail)


def svg_h(name, what, h, outcome=None):
    h(name, "svg", "image/svg+xml", what,
      outcome or {"outcome": "refused", "reason": "undecodable",
                  "note": "must end in a refusal, not a hang, within the sandbox's memory and CPU limits"},
      {"rsvg-convert": ["rsvg-convert", "-o", TMP / "h.png", HERE / name]})


def pdf_h(name, what, h, outcome):
    h(name, "pdf", "application/pdf", what, outcome,
      {"pdftoppm": ["pdftoppm", "-png", "-r", "50", "-f", "1", "-l", "1", HERE / name, TMP / "h"],
       "ghostscript": ["gs", "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=png16m", "-r50",
                       f"-sOutputFile={TMP / 'hg.png'}", HERE / name]})


if __name__ == "__main__":
    main()
