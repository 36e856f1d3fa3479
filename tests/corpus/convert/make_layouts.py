#!/usr/bin/env python3
"""Makes the layout fixtures (`layout-*`): TIFFs of every layout users have, PDFs whose page is an
image under each filter, ICOs whose PNG entries are not RGBA. Each is made by a real tool (Pillow,
libtiff-tools, ImageMagick, img2pdf, reportlab), tiny, with a reference decoded or rendered by an
independent tool (Pillow with libtiff; pdftoppm) and the PSNR of a second one (ImageMagick;
Ghostscript). Adds (or replaces) their entries in manifest.json; make.py's files are not touched.

    apt-get install -y libtiff-tools imagemagick poppler-utils ghostscript img2pdf
    python3 -m venv /tmp/fx-venv && /tmp/fx-venv/bin/pip install pillow numpy reportlab
    /tmp/fx-venv/bin/python tests/corpus/convert/make_layouts.py [FILE ...]

With file names, only those fixtures are made (the others keep their bytes and entries).
"""
import io
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter, __version__ as PIL_VERSION

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent
TMP = Path(tempfile.mkdtemp(prefix="mg-layouts-"))
MAGICK = "/usr/bin/convert"  # ImageMagick itself, not a wrapper earlier on PATH
ONLY = set(sys.argv[1:])  # the fixtures to make; none named: all
PDF_REF_SIDE = 170  # not make.py's 1000: the 120x170 image fills its page at 170 px, one pixel per pixel


def run(*args, **kw):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, **kw)


def version(*args):
    return run(*args).stdout.decode().splitlines()[0].strip() if args else ""


def flat_rgb(img):
    img = img.convert("RGBA")
    a = np.asarray(img, dtype=np.float64)
    alpha = a[..., 3:4] / 255.0
    return a[..., :3] * alpha + 255.0 * (1.0 - alpha)


def psnr(a, b):
    """make.py's definition: RGB over white, over the common area (renderers differ by 1 px)."""
    x, y = flat_rgb(a), flat_rgb(b)
    h, w = min(x.shape[0], y.shape[0]), min(x.shape[1], y.shape[1])
    mse = float(np.mean((x[:h, :w] - y[:h, :w]) ** 2))
    return 100.0 if mse == 0 else round(10 * math.log10(255.0**2 / mse), 2)


def magick_decode(path, index=0):
    return Image.open(io.BytesIO(run(MAGICK, f"{path}[{index}]", "-depth", "8", "PNG32:-").stdout))


def main():
    pil = f"Pillow {PIL_VERSION}"
    im = run(MAGICK, "-version").stdout.decode().splitlines()[0].split("Version: ")[-1].split(" https")[0]
    tiffcp = "libtiff-tools " + run("dpkg-query", "-W", "-f=${Version}", "libtiff-tools").stdout.decode()
    img2pdf = "img2pdf " + run("img2pdf", "--version").stdout.decode().split()[-1]
    pdftoppm = subprocess.run(["pdftoppm", "-v"], capture_output=True).stderr.decode().splitlines()[0]
    gs = "Ghostscript " + run("gs", "--version").stdout.decode().strip()
    tools = {"pillow": PIL_VERSION, "imagemagick": im, "libtiff-tools": tiffcp, "img2pdf": img2pdf,
             "pdftoppm": pdftoppm, "ghostscript": gs}

    photo = Image.open(CORPUS / "photos/kodim23.png").convert("RGB").resize((50, 30), Image.LANCZOS)
    photo.save(TMP / "photo.tif")
    photo.convert("L").save(TMP / "grey.tif")
    photo.convert("1").save(TMP / "bw.tif")
    rgba = photo.copy()
    rgba.putalpha(Image.linear_gradient("L").resize((50, 30)))
    rgba.save(TMP / "rgba.tif")
    entries = []

    # ---- TIFF: (file, how it is made, made_by)
    def tif(name, made_by, make):
        if ONLY and name not in ONLY:
            return
        make(HERE / name)
        pim = Image.open(HERE / name)
        pim.load()
        ref = name.replace(".tif", ".ref.png")
        if pim.mode.startswith("I;16"):  # 16-bit grey: the high byte, as Pillow gives 16-bit RGB
            dec = Image.fromarray((np.asarray(pim, dtype=np.uint16) >> 8).astype(np.uint8), "L")
        else:
            dec = pim if pim.mode in ("RGB", "RGBA") else pim.convert("RGBA" if "A" in pim.mode else "RGB")
        dec.save(HERE / ref, optimize=True)
        db = psnr(Image.open(HERE / ref), magick_decode(HERE / name))
        entries.append({"file": name, "format": "tiff", "mime": "image/tiff", "made_by": made_by,
                        "expected": {"outcome": "converted"},
                        "references": [{"page": None, "path": ref, "made_by": f"{pil} (libtiff) decode, saved as PNG",
                                        "psnr_vs_second_tool": {"tool": f"{im} decode", "db": db}}],
                        "pillow_reads": {"mode": pim.mode, "compression": pim.info.get("compression")}})

    bw, grey, ph, rg = TMP / "bw.tif", TMP / "grey.tif", TMP / "photo.tif", TMP / "rgba.tif"
    tif("layout-tiff-bilevel-g3.tif", f"{tiffcp}: tiffcp -c g3 (CCITT Group 3 1D, EOLs) of a {pil} 1-bit page",
        lambda o: run("tiffcp", "-c", "g3", bw, o))
    tif("layout-tiff-bilevel-g3-2d.tif", f"{tiffcp}: tiffcp -c g3:2d:fill (Group 3 2D, byte-aligned EOLs)",
        lambda o: run("tiffcp", "-c", "g3:2d:fill", bw, o))
    tif("layout-tiff-bilevel-g4.tif", f"{pil} (libtiff): save(compression='group4')",
        lambda o: Image.open(bw).save(o, compression="group4"))
    tif("layout-tiff-bilevel-packbits.tif", f"{tiffcp}: tiffcp -c packbits of a 1-bit page",
        lambda o: run("tiffcp", "-c", "packbits", bw, o))
    tif("layout-tiff-grey2.tif", f"{im}: convert grey.tif -depth 2 (2-bit grey)",
        lambda o: run(MAGICK, grey, "-depth", "2", o))
    tif("layout-tiff-grey4-deflate.tif", f"{im}: convert grey.tif -depth 4 -compress Zip (4-bit grey)",
        lambda o: run(MAGICK, grey, "-depth", "4", "-compress", "Zip", o))
    tif("layout-tiff-grey16.tif", f"{im}: convert grey.tif -depth 16 (16-bit grey)",
        lambda o: run(MAGICK, grey, "-depth", "16", o))
    tif("layout-tiff-palette8-lzw.tif", f"{pil}: convert('P', 32 colours).save(compression='tiff_lzw') (8-bit palette)",
        lambda o: photo.convert("P", palette=Image.ADAPTIVE, colors=32).save(o, compression="tiff_lzw"))
    tif("layout-tiff-palette4.tif", f"{im}: convert photo.tif -colors 16 -type Palette -depth 4 (4-bit palette)",
        lambda o: run(MAGICK, ph, "-colors", "16", "-type", "Palette", "-depth", "4", o))
    tif("layout-tiff-ycbcr-jpeg.tif", f"{tiffcp}: tiffcp -c jpeg (YCbCr, 2x2 subsampled, JPEG-compressed strips)",
        lambda o: run("tiffcp", "-c", "jpeg", ph, o))
    tif("layout-tiff-tiled-lzw.tif", f"{tiffcp}: tiffcp -t -w 16 -l 16 -c lzw (16x16 tiles, the last ones padded)",
        lambda o: run("tiffcp", "-t", "-w", "16", "-l", "16", "-c", "lzw", ph, o))
    tif("layout-tiff-planar-strips.tif", f"{tiffcp}: tiffcp -p separate -r 7 -c zip (planar RGB, 7-row strips)",
        lambda o: run("tiffcp", "-p", "separate", "-r", "7", "-c", "zip", ph, o))
    tif("layout-tiff-planar-tiles.tif", f"{tiffcp}: tiffcp -t -w 16 -l 16 -p separate (planar RGB in padded tiles)",
        lambda o: run("tiffcp", "-t", "-w", "16", "-l", "16", "-p", "separate", ph, o))
    tif("layout-tiff-planar-rgba-lzw-tiles.tif",
        f"{tiffcp}: tiffcp -t -w 16 -l 16 -p separate -c lzw (planar RGBA in padded LZW tiles)",
        lambda o: run("tiffcp", "-t", "-w", "16", "-l", "16", "-p", "separate", "-c", "lzw", rg, o))
    tif("layout-tiff-planar-lzw-predictor.tif",
        f"{tiffcp}: tiffcp -p separate -r 7 -c lzw:2 (planar RGB, LZW strips, horizontal predictor)",
        lambda o: run("tiffcp", "-p", "separate", "-r", "7", "-c", "lzw:2", ph, o))
    tif("layout-tiff-tiled-palette.tif", f"{tiffcp}: tiffcp -t -w 16 -l 16 of the 8-bit palette page",
        lambda o: run("tiffcp", "-t", "-w", "16", "-l", "16", HERE / "layout-tiff-palette8-lzw.tif", o))

    # ---- ICO: PNG entries of other colour types, BMP entries with AND masks
    def ico(name, made_by, image, **save):
        if ONLY and name not in ONLY:
            return
        image.save(HERE / name, **save)
        pim = Image.open(HERE / name)
        pim.size = max(pim.info["sizes"])
        pim.load()
        ref = name.replace(".ico", ".ref.png")
        pim.convert("RGBA").save(HERE / ref, optimize=True)
        db = psnr(Image.open(HERE / ref), magick_decode(HERE / name, len(pim.info["sizes"]) - 1))
        entries.append({"file": name, "format": "ico", "mime": "image/vnd.microsoft.icon",
                        "also_claimed_as": ["image/x-icon"], "made_by": made_by,
                        "expected": {"outcome": "converted"},
                        "references": [{"page": None, "path": ref, "made_by": f"{pil} decode of the largest entry, RGBA",
                                        "psnr_vs_second_tool": {"tool": f"{im} decode", "db": db}}]})

    icon = Image.open(CORPUS / "photos/Transparency.png").convert("RGBA").resize((32, 32), Image.LANCZOS)
    ico("layout-ico-png-rgb.ico", f"{pil}: save(.ico) of an RGB image (PNG entries, colour type 2)",
        icon.convert("RGB"), sizes=[(16, 16), (32, 32)])
    ico("layout-ico-png-grey.ico", f"{pil}: save(.ico) of an L image (PNG entries, colour type 0)",
        icon.convert("L"), sizes=[(16, 16), (32, 32)])
    ico("layout-ico-png-palette.ico", f"{pil}: save(.ico) of a P image (PNG entries, colour type 3)",
        icon.convert("RGB").convert("P", palette=Image.ADAPTIVE, colors=16), sizes=[(32, 32)])

    # ---- PDF: one page whose content is one image, under each filter
    # Softened (a scan is): independent renderers scale an image with different filters, and on
    # sharp detail that difference alone is 25-29 dB; the test is whether the image is drawn.
    big = Image.open(CORPUS / "photos/kodim23.png").convert("RGB").resize((120, 170), Image.LANCZOS)
    big = big.filter(ImageFilter.GaussianBlur(1.5))
    big.save(TMP / "scan.jpg", quality=85)
    big.save(TMP / "scan.png")
    big.save(TMP / "scan.jp2")
    big.convert("1").save(TMP / "scan-g4.tif", compression="group4")

    def pdf(name, made_by, make):
        if ONLY and name not in ONLY:
            return
        make(HERE / name)
        pages = 1
        ref = name.replace(".pdf", ".p1.ref.png")
        run("pdftoppm", "-png", "-scale-to", PDF_REF_SIDE, "-f", 1, "-l", 1, "-singlefile", HERE / name,
            HERE / ref.removesuffix(".png"))
        ours = Image.open(HERE / ref)
        gs_out = TMP / (name + ".gs.png")
        info = run("pdfinfo", HERE / name).stdout.decode()
        size = [float(v) for v in info.split("Page size:")[1].split("pts")[0].replace("x", " ").split()]
        dpi = PDF_REF_SIDE / max(size) * 72
        run("gs", "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=png16m", f"-r{dpi:.4f}",
            "-dTextAlphaBits=4", "-dGraphicsAlphaBits=4", f"-sOutputFile={gs_out}", HERE / name)
        db = psnr(ours, Image.open(gs_out))
        entries.append({"file": name, "format": "pdf", "mime": "application/pdf", "made_by": made_by,
                        "expected": {"outcome": "converted"}, "pages": pages, "page_size_pt": size,
                        "reference_side": PDF_REF_SIDE,
                        "references": [{"page": 1, "path": ref,
                                        "made_by": f"{pdftoppm}: pdftoppm -png -scale-to {PDF_REF_SIDE} -f 1 -l 1 (white paper)",
                                        "psnr_vs_second_tool": {"tool": f"{gs} png16m at the same scale", "db": db}}]})

    pdf("layout-pdf-scan-jpeg.pdf", f"{img2pdf}: --pagesize A5 of a 120x170 JPEG (a scanned page: DCTDecode)",
        lambda o: run("img2pdf", "--pagesize", "A5", TMP / "scan.jpg", "-o", o))
    pdf("layout-pdf-flate-image.pdf", f"{img2pdf}: --pagesize A5 of a 120x170 PNG (FlateDecode, PNG predictors)",
        lambda o: run("img2pdf", "--pagesize", "A5", TMP / "scan.png", "-o", o))
    pdf("layout-pdf-jpx-image.pdf", f"{img2pdf}: --pagesize A5 of a 120x170 JPEG 2000 made by {pil} (JPXDecode)",
        lambda o: run("img2pdf", "--pagesize", "A5", TMP / "scan.jp2", "-o", o))
    pdf("layout-pdf-ccitt-image.pdf", f"{img2pdf}: --pagesize A5 of a 1-bit Group 4 TIFF made by {pil} (CCITTFaxDecode)",
        lambda o: run("img2pdf", "--pagesize", "A5", TMP / "scan-g4.tif", "-o", o))
    def reportlab_image(source, o):
        from reportlab.lib.pagesizes import A5
        from reportlab.pdfgen import canvas
        c = canvas.Canvas(str(o), pagesize=A5, invariant=1)  # useA85 (reportlab's default) is on
        c.drawImage(str(source), 0, 0, width=A5[0], height=A5[1])
        c.showPage()
        c.save()

    import reportlab
    pdf("layout-pdf-ascii85-jpeg.pdf", f"reportlab {reportlab.Version}: drawImage of the JPEG filling an A5 page "
        "(ASCII85Decode over DCTDecode)", lambda o: reportlab_image(TMP / "scan.jpg", o))
    pdf("layout-pdf-ascii85-flate.pdf", f"reportlab {reportlab.Version}: drawImage of the PNG filling an A5 page "
        "(ASCII85Decode over FlateDecode)", lambda o: reportlab_image(TMP / "scan.png", o))

    for e in entries:
        e["bytes"] = (HERE / e["file"]).stat().st_size
        for r in e["references"]:
            w, h = Image.open(HERE / r["path"]).size
            r["width"], r["height"] = w, h
    manifest = json.loads((HERE / "manifest.json").read_text())
    names = {e["file"] for e in entries}
    manifest["files"] = [f for f in manifest["files"] if f["file"] not in names] + entries
    manifest.setdefault("layout_tools", {}).update(tools)
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    for e in entries:
        r = e["references"][0]
        print(f"| `{e['file']}` | {e['made_by']} | `{r['path']}` {r['width']}×{r['height']} "
              f"({r['psnr_vs_second_tool']['db']} dB vs {r['psnr_vs_second_tool']['tool']}) |")


if __name__ == "__main__":
    main()
