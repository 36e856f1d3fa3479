#!/usr/bin/env python3
"""The differential conformance suite: the gate's verdicts judged by independent decoders.

Every file of the corpora (tests/corpus/pngsuite, tests/corpus/conformance/<format>) and the
mutations this script makes of them goes through the CLI (`mediagate admit FILE --json --convert
--out OUT`; a PDF with `--page 1`), then every reference that reads its format decodes the original
and the admitted output. The rules (README.md, "Rules") are checked on every file; a difference is
allowed only when README.md's allow-list names it with its reason. Exit 0 when every rule holds.
"""

import argparse
import concurrent.futures as cf
import fnmatch
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = ROOT / "tests" / "corpus"
README = HERE / "README.md"

# The gate's time per file: every input gets a verdict within 2 s of CPU; the wall clock on a busy
# machine is given far more room, and running past it counts as a trap (no verdict).
GATE_TIMEOUT_S = 60
TOOL_TIMEOUT_S = 30

MIME = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "bmp": "image/bmp",
    "ico": "image/vnd.microsoft.icon",
    "tiff": "image/tiff",
    "pdf": "application/pdf",
}
EXTENSION = {"png": "png", "jpeg": "jpg", "gif": "gif", "webp": "webp", "bmp": "bmp", "ico": "ico", "tiff": "tif", "pdf": "pdf"}

# The references that read each format (each one's own documentation; tools from Debian).
REFERENCES = {
    "png": ["pillow", "sharp", "chromium", "pngcheck", "imagemagick"],
    "jpeg": ["pillow", "sharp", "chromium", "djpeg", "imagemagick"],
    "gif": ["pillow", "sharp", "chromium", "giftext", "imagemagick"],
    "webp": ["pillow", "sharp", "chromium", "dwebp", "imagemagick"],
    "bmp": ["pillow", "chromium", "bmptopnm", "imagemagick"],
    "ico": ["pillow", "chromium", "winicontopam", "imagemagick"],
    "tiff": ["pillow", "sharp", "tifftopnm", "imagemagick"],
    "pdf": ["pdftoppm", "mutool"],
}

# ImageMagick by absolute path: a `convert` earlier on PATH may be something else (on the build
# machines /usr/local/bin/convert is a stand-in that only prints PNGs, for the sandbox client).
IMAGEMAGICK = "/usr/bin/convert"
# pngcheck 4.0.1 as test.sh compiles it from the source carried in pngcheck/ (Debian's 3.0.3
# predates PNG's third edition and calls its chunks unknown); a pngcheck on PATH otherwise.
PNGCHECK = os.environ.get("MEDIAGATE_PNGCHECK", "pngcheck")
# ImageMagick's coder for each format, named so that it does not pick one by the file's extension.
IMAGEMAGICK_CODER = {"png": "PNG", "jpeg": "JPEG", "gif": "GIF", "webp": "WEBP", "bmp": "BMP", "ico": "ICO", "tiff": "TIFF"}
# With -regard-warnings every warning fails the read, and most warnings are about the image's data
# (a libjpeg "Corrupt JPEG data", an "invalid colormap index"). These few are about metadata the
# pixels do not need, and ImageMagick still decodes the image in full after them: an XMP packet it
# cannot parse, a TIFF tag libtiff does not know, libtiff's notice on every old-style JPEG TIFF.
IMAGEMAGICK_METADATA_WARNINGS = re.compile(
    r"CorruptImageProfile .*\(XMP\)|ParseError .*@ warning/xml-tree\.c|Unknown field with tag \d+ .* encountered"
    r"|Deprecated and troublesome old-style JPEG compression mode"
)

# Refusals that say the file is broken: each must be shared by at least two references.
BROKEN_REASONS = {"undecodable", "magic_mismatch"}
# Refusals by a size limit of the gate or a provider, not by a decoder: a reference decoding the
# file does not make them false; counted apart.
LIMIT_REASONS = {"dimensions_too_large", "raw_too_large", "base64_too_large"}


def sniff(data: bytes):
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8"):
        return "jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    if data.startswith(b"%PDF-"):
        return "pdf"
    if data.startswith(b"BM"):
        return "bmp"
    if data[:4] == b"\0\0\1\0":
        return "ico"
    if data[:4] in (b"II*\0", b"MM\0*", b"II+\0", b"MM\0+"):
        return "tiff"
    return None


# ---- the corpus and its mutations -----------------------------------------------------------


def corpus_files():
    """(name, path, format): PngSuite and tests/corpus/conformance/<format>/*; the format is the folder's."""
    files = [(f"pngsuite/{p.name}", p, "png") for p in sorted((CORPUS / "pngsuite").glob("*.png"))]
    base = CORPUS / "conformance"
    for fmt in sorted(REFERENCES):
        folder = base / fmt
        if folder.is_dir():
            # The format the bytes carry (a PNG named .jpg is a PNG, as every reference reads it), else the folder's.
            files += [
                (f"conformance/{fmt}/{p.name}", p, sniff(p.read_bytes()[:16]) or fmt)
                for p in sorted(folder.iterdir())
                if p.is_file()
            ]
    return files


def png_chunks(data):
    chunks, pos = [], 8
    while pos + 12 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        end = pos + 12 + length
        if end > len(data):
            return None
        chunks.append(data[pos:end])
        pos = end
    return chunks if pos == len(data) else None


def jpeg_segments(data):
    """SOI, the marker segments before SOS, and the rest (SOS onwards)."""
    pos, segments = 2, []
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        if marker == 0xDA:
            return segments, data[pos:]
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        segments.append(data[pos : pos + 2 + length])
        pos += 2 + length
    return None


def riff_chunks(data):
    chunks, pos = [], 12
    while pos + 8 <= len(data):
        (length,) = struct.unpack("<I", data[pos + 4 : pos + 8])
        end = pos + 8 + length + (length & 1)
        if end > len(data):
            return None
        chunks.append(data[pos:end])
        pos = end
    return chunks


def reorder(fmt, data):
    """A structural reorder a strict decoder notices, or None for formats without one here."""
    if fmt == "png":
        chunks = png_chunks(data)
        # The first chunk after IHDR swapped with the last before IEND (e.g. gAMA after IDAT).
        if not chunks or len(chunks) < 4 or chunks[1][4:8] == chunks[-2][4:8]:
            return None
        chunks[1], chunks[-2] = chunks[-2], chunks[1]
        return data[:8] + b"".join(chunks)
    if fmt == "jpeg":
        found = jpeg_segments(data)
        if not found or len(found[0]) < 2:
            return None
        segments, rest = found
        return data[:2] + b"".join(reversed(segments)) + rest  # the tables and frame header in reverse
    if fmt == "webp":
        chunks = riff_chunks(data)
        if not chunks or len(chunks) < 2:
            return None
        chunks[0], chunks[1] = chunks[1], chunks[0]  # VP8X no longer first
        return data[:12] + b"".join(chunks)
    return None


def mutations(name, fmt, data):
    """Deterministic mutations: two truncations, bit flips at two fixed seeds, a chunk reorder."""
    if len(data) < 32:
        return []
    out = [("trunc-half", data[: len(data) // 2]), ("trunc-end", data[: len(data) - max(1, len(data) // 50)])]
    for seed in (1, 2):
        rng = random.Random(f"{seed}:{name}")
        flipped = bytearray(data)
        for _ in range(4):
            pos = rng.randrange(16, len(data))  # past the signature: the decoder, not the sniffer, meets it
            flipped[pos] ^= 1 << rng.randrange(8)
        out.append((f"bitflip-s{seed}", bytes(flipped)))
    reordered = reorder(fmt, data)
    if reordered is not None and reordered != data:
        out.append(("reorder", reordered))
    return out


def mutation_seeds(files, per_format):
    """Up to `per_format` files of each format, spread over its sorted list (PngSuite's valid files only)."""
    by_format = {}
    for name, path, fmt in files:
        if name.startswith("pngsuite/x"):
            continue
        by_format.setdefault(fmt, []).append((name, path, fmt))
    seeds = []
    for fmt, group in sorted(by_format.items()):
        step = max(1, len(group) // per_format)
        seeds += group[::step][:per_format]
    return seeds


# ---- the gate ---------------------------------------------------------------------------------


def run_gate(bin_path, path, fmt, out_path):
    if fmt == "pdf":
        args = [bin_path, "admit", str(path), "--json", "--page", "1", "--mime", MIME[fmt], "--out", str(out_path)]
    else:
        args = [bin_path, "admit", str(path), "--json", "--convert", "--mime", MIME[fmt], "--out", str(out_path)]
    try:
        done = subprocess.run(args, capture_output=True, timeout=GATE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"trap": f"no verdict within {GATE_TIMEOUT_S} s"}
    stdout, stderr = done.stdout.decode("utf8", "replace"), done.stderr.decode("utf8", "replace")
    if done.returncode not in (0, 1):
        return {"trap": f"exit {done.returncode}: {(stderr or stdout).strip()[:300]}"}
    try:
        verdict = json.loads(stdout)
    except ValueError:
        return {"trap": f"exit {done.returncode} without a JSON verdict: {stdout[:200]!r} {stderr[:200]!r}"}
    if verdict.get("ok") != (done.returncode == 0):
        return {"trap": f"exit {done.returncode} disagrees with ok={verdict.get('ok')}"}
    if verdict["ok"]:
        if not out_path.is_file():
            return {"trap": "admitted but --out wrote nothing"}
        return {"ok": True, "verdict": verdict, "out": str(out_path)}
    return {"ok": False, "reason": verdict.get("reason"), "message": verdict.get("message", "")}


# ---- the references ---------------------------------------------------------------------------


def pillow_decode(path):
    """Pillow at its defaults: the first frame or page decoded in full."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            image.load()
            return {"ok": True, "width": image.width, "height": image.height}
    except Exception as e:  # noqa: BLE001 — any failure is the reference's "does not decode"
        return {"ok": False, "error": f"{type(e).__name__}: {e}"[:300]}


def pillow_version():
    import PIL

    return PIL.__version__


def imagemagick_decodes(returncode, stderr):
    """convert -regard-warnings exits 1 on an error or a warning; a read whose every message is a
    metadata warning (IMAGEMAGICK_METADATA_WARNINGS) still decoded the pixels."""
    if returncode == 0:
        return True
    messages = [line for line in stderr.splitlines() if line.strip()]
    return returncode == 1 and bool(messages) and all(IMAGEMAGICK_METADATA_WARNINGS.search(m) for m in messages)


def tool_decode(tool, path, scratch, fmt=None):
    """A Debian tool decodes when it exits 0 (a PDF renderer also: nothing on stderr naming an error;
    ImageMagick: imagemagick_decodes)."""
    out = Path(scratch) / f"{os.getpid()}-{threading.get_ident()}"  # a name per thread: the renderers' output
    commands = {
        "pngcheck": [PNGCHECK, "-q", path],
        "djpeg": ["djpeg", "-outfile", os.devnull, path],
        # -r: every frame's raster through giflib's DGifGetLine (gif2rgb also checks the background
        # index against the colour table, which no decoder needs).
        "giftext": ["giftext", "-r", path],
        "dwebp": ["dwebp", path],
        "bmptopnm": ["bmptopnm", path],
        "winicontopam": ["winicontopam", path],
        "tifftopnm": ["tifftopnm", path],
        "pdftoppm": ["pdftoppm", "-f", "1", "-l", "1", "-r", "36", "-png", path, str(out)],
        "mutool": ["mutool", "draw", "-q", "-r", "36", "-o", f"{out}.png", path, "1"],
        # [0]: the first frame or page only; null: decodes every pixel and writes nothing.
        "imagemagick": [IMAGEMAGICK, "-regard-warnings", f"{IMAGEMAGICK_CODER.get(fmt)}:{path}[0]", "null:"],
    }
    # One thread each: the suite runs as many tools at once as there are cores.
    env = {**os.environ, "MAGICK_THREAD_LIMIT": "1"} if tool == "imagemagick" else None
    try:
        # pngcheck says what is wrong on stdout; the others write the image there.
        stdout = subprocess.PIPE if tool == "pngcheck" else subprocess.DEVNULL
        done = subprocess.run(commands[tool], stdout=stdout, stderr=subprocess.PIPE, timeout=TOOL_TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"{tool} ran past {TOOL_TIMEOUT_S} s"}
    finally:
        for leftover in Path(scratch).glob(f"{out.name}*"):
            leftover.unlink(missing_ok=True)
    stderr = ((done.stdout or b"") + done.stderr).decode("utf8", "replace").strip()
    ok = done.returncode == 0
    if ok and tool == "pdftoppm" and "Error" in stderr:
        ok = False
    if ok and tool == "mutool" and re.search(r"^error:", stderr, re.M):
        ok = False
    if tool == "imagemagick":
        ok = imagemagick_decodes(done.returncode, stderr)
        stderr = stderr.replace(path, Path(path).name)  # each message names the file: its words fit in the report
    answer = {"ok": ok}
    if not ok:
        answer["error"] = f"exit {done.returncode}: {stderr[:300]}"
    return answer


def tool_versions():
    def first_line(cmd):
        try:
            done = subprocess.run(cmd, capture_output=True, timeout=10)
            text = (done.stdout + done.stderr).decode("utf8", "replace").strip().splitlines()
            return text[0] if text else ""
        except OSError as e:
            return f"missing: {e}"

    return {
        "djpeg": first_line(["sh", "-c", "djpeg -version 2>&1 </dev/null"]),
        "dwebp": first_line(["dwebp", "-version"]),
        "pngcheck": first_line(["sh", "-c", f"{PNGCHECK} -h 2>&1 | grep -o 'version [0-9.]*' | head -n1"]),
        "pdftoppm": first_line(["pdftoppm", "-v"]),
        "mutool": first_line(["sh", "-c", "mutool -v 2>&1"]),
        "netpbm": first_line(["sh", "-c", "tifftopnm -version 2>&1 | grep -io 'netpbm version.*'"]),
        "giftext": first_line(["sh", "-c", "giftext -h 2>&1 | head -n1 | sed 's/,.*//'"]),
        "imagemagick": first_line(["sh", "-c", f"{IMAGEMAGICK} -version | head -n1 | cut -d' ' -f2-4"]),
    }


def animated_webp(path):
    with open(path, "rb") as f:
        head = f.read(21)
    return head[12:16] == b"VP8X" and bool(head[20] & 0x02)


def applicable(path, fmt):
    """The references that read this file: dwebp 1.2.4 decodes no animation (it says so and stops)."""
    refs = REFERENCES[fmt]
    if fmt == "webp" and animated_webp(path):
        refs = [r for r in refs if r != "dwebp"]
    return refs


def quiet_worker():
    """Pillow's libtiff and libjpeg print warnings on the worker's stderr: the report is the answer."""
    import warnings

    warnings.simplefilter("ignore")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)


def run_references(items, scratch, jobs):
    """items: [(path, format)] → one dict per item: reference → {ok, ...}. All references at once:
    sharp and Chromium in one Node process, Pillow in a process pool, the Debian tools in threads."""
    listing = Path(scratch) / "references.json"
    listing.write_text(json.dumps([{"path": str(p), "format": f} for p, f in items]))
    node = subprocess.Popen(
        ["node", str(HERE / "references.mjs"), str(listing)], cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    results = [dict() for _ in items]
    with cf.ProcessPoolExecutor(max_workers=jobs, initializer=quiet_worker) as pillow_pool, cf.ThreadPoolExecutor(max_workers=jobs) as tools:
        pillow_futures = {
            pillow_pool.submit(pillow_decode, str(p)): i for i, (p, f) in enumerate(items) if "pillow" in applicable(p, f)
        }
        tool_futures = {}
        for i, (p, f) in enumerate(items):
            for ref in applicable(p, f):
                if ref not in ("pillow", "sharp", "chromium"):
                    tool_futures[tools.submit(tool_decode, ref, str(p), scratch, f)] = (i, ref)
        for future, i in pillow_futures.items():
            results[i]["pillow"] = future.result()
        for future, (i, ref) in tool_futures.items():
            results[i][ref] = future.result()
    stdout, stderr = node.communicate()
    if node.returncode != 0:
        raise SystemExit(f"references.mjs failed (exit {node.returncode}):\n{stderr.decode()}")
    js = json.loads(stdout)
    for i, (p, f) in enumerate(items):
        for ref in ("sharp", "chromium"):
            if ref in applicable(p, f):
                answer = js[ref][i]
                if answer is None:
                    raise SystemExit(f"references.mjs gave no {ref} answer for {p}")
                results[i][ref] = answer
    return results, js["versions"]


# ---- the allow-list ---------------------------------------------------------------------------


def read_allow_list():
    """README.md's allow-list: rows `| file | rule | class |` between the two markers, each class
    explained by a `- **class**: why` line of the list between the class markers."""
    text = README.read_text()

    def between(marker):
        return text[text.index(f"<!-- {marker} -->") : text.index(f"<!-- /{marker} -->")]

    classes = dict(re.findall(r"^- \*\*([a-z0-9-]+)\*\*: (.+)$", between("classes"), re.M))
    entries = []
    for line in between("allow-list").splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] == "file" or set(cells[0]) <= set("-: "):
            continue
        pattern, rule, cls = cells
        if rule not in ("fail-open", "false-refusal", "broken-unshared"):
            raise SystemExit(f"README.md allow-list: {pattern}: unknown rule {rule!r}")
        if cls not in classes:
            raise SystemExit(f"README.md allow-list: {pattern}: class {cls!r} has no explanation")
        entries.append({"pattern": pattern, "rule": rule, "reason": f"{cls}: {classes[cls]}", "used": 0})
    return entries


def allowed(entries, name, rule):
    for entry in entries:
        if entry["rule"] == rule and fnmatch.fnmatchcase(name, entry["pattern"]):
            entry["used"] += 1
            return entry
    return None


# ---- the run ----------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.environ.get("MEDIAGATE_BIN") or str(ROOT / "target" / "release" / "mediagate"))
    parser.add_argument("--jobs", type=int, default=max(2, os.cpu_count() or 2))
    parser.add_argument("--seeds-per-format", type=int, default=8, help="files of each format mutated")
    parser.add_argument("--report", help="write every file's verdict and references as JSON here")
    parser.add_argument("--filter", help="only files whose name contains this")
    parser.add_argument("--verbose", action="store_true", help="print the differences the allow-list names")
    args = parser.parse_args()
    started = time.monotonic()
    if not Path(args.bin).is_file():
        raise SystemExit(f"{args.bin} is missing: cargo build --release --locked -p mediagate-cli, or set MEDIAGATE_BIN")

    scratch = Path(tempfile.mkdtemp(prefix="mediagate-conformance-"))
    try:
        files = corpus_files()
        cases = [{"name": n, "path": p, "format": f} for n, p, f in files]
        mutated = scratch / "mutations"
        mutated.mkdir()
        for name, path, fmt in mutation_seeds(files, args.seeds_per_format):
            data = path.read_bytes()
            for kind, bytes_ in mutations(name, fmt, data):
                target = mutated / f"{name.replace('/', '__')}.{kind}.{EXTENSION[fmt]}"
                target.write_bytes(bytes_)
                cases.append({"name": f"mutation/{name}~{kind}", "path": target, "format": fmt})
        if args.filter:
            cases = [c for c in cases if args.filter in c["name"]]

        outputs = scratch / "admitted"
        outputs.mkdir()
        # The CLI spends most of a call's wall time starting (mapping the binary, the precompiled
        # components), not on a core: more calls than cores keep the cores busy.
        with cf.ThreadPoolExecutor(max_workers=4 * args.jobs) as pool:
            futures = [
                pool.submit(run_gate, args.bin, c["path"], c["format"], outputs / f"{i}.out") for i, c in enumerate(cases)
            ]
            for case, future in zip(cases, futures):
                case["gate"] = future.result()
        gate_done = time.monotonic()

        items = [(c["path"], c["format"]) for c in cases]
        out_index = {}
        for i, case in enumerate(cases):
            if case["gate"].get("ok"):
                out_path = Path(case["gate"]["out"])
                out_format = sniff(out_path.read_bytes()[:16])
                case["out_format"] = out_format
                if out_format is None:
                    continue  # the fail-open rule names it below
                out_index[i] = len(items)
                items.append((out_path, out_format))
        decoded, versions = run_references(items, scratch, args.jobs)
        versions["pillow"] = pillow_version()
        versions.update(tool_versions())
        for i, case in enumerate(cases):
            case["references"] = decoded[i]
            if i in out_index:
                case["out_references"] = decoded[out_index[i]]

        # A filtered run cannot tell a stale allow-list row from one whose file was left out.
        report = judge(cases, read_allow_list(), check_stale=not args.filter)
        report["seconds"] = {"gate": round(gate_done - started, 1), "all": round(time.monotonic() - started, 1)}
        report["versions"] = versions
        if args.report:
            Path(args.report).write_text(
                json.dumps({**report, "cases": [{**c, "path": str(c["path"])} for c in cases]}, indent=1, default=str)
            )
        print_report(report, args.verbose)
        return 0 if report["ok"] else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def judge(cases, allow, check_stale=True):
    counts = dict(files=len(cases), admitted=0, refused=0, traps=0, fail_open=0, fail_open_listed=0, decoded_by_two=0,
                  false_refusals=0, false_refusals_listed=0, limit_refusals=0, broken_unshared=0,
                  broken_unshared_listed=0)
    problems, listed = [], []
    for case in cases:
        name, gate = case["name"], case["gate"]
        refs = case.get("references", {})
        decoders = sorted(r for r, a in refs.items() if a["ok"])
        failures = sorted(r for r, a in refs.items() if not a["ok"])
        two_decode = len(decoders) >= 2
        counts["decoded_by_two"] += two_decode
        if "trap" in gate:
            counts["traps"] += 1
            problems.append(f"TRAP {name}: {gate['trap']}")
            continue
        if gate["ok"]:
            counts["admitted"] += 1
            out_refs = case.get("out_references")
            if out_refs is None:
                counts["fail_open"] += 1
                problems.append(f"FAIL-OPEN {name}: the admitted output is no image type the references know")
                continue
            bad = {r: a.get("error", "") for r, a in out_refs.items() if not a["ok"]}
            if bad:
                detail = "; ".join(f"{r}: {e}" for r, e in sorted(bad.items()))
                entry = allowed(allow, name, "fail-open")
                if entry:
                    counts["fail_open_listed"] += 1
                    listed.append(f"fail-open {name}: {detail} [{entry['reason'].split(':')[0]}]")
                else:
                    counts["fail_open"] += 1
                    problems.append(f"FAIL-OPEN {name}: the admitted {case['out_format']} does not decode in {detail}")
            continue
        counts["refused"] += 1
        reason = gate.get("reason")
        if reason in BROKEN_REASONS and len(failures) < 2 and not two_decode:
            entry = allowed(allow, name, "broken-unshared")
            if entry:
                counts["broken_unshared_listed"] += 1
                listed.append(f"broken-unshared {name}: {reason}; decoded by {', '.join(decoders)} [{entry['reason'].split(':')[0]}]")
            else:
                counts["broken_unshared"] += 1
                problems.append(
                    f"BROKEN-UNSHARED {name}: refused {reason} ({gate.get('message', '')}) but only "
                    f"{len(failures)} reference(s) fail ({', '.join(failures) or 'none'}); decoded by {', '.join(decoders)}"
                )
        if two_decode:
            if reason in LIMIT_REASONS:
                counts["limit_refusals"] += 1
                continue
            entry = allowed(allow, name, "false-refusal")
            if entry:
                counts["false_refusals_listed"] += 1
                listed.append(f"false-refusal {name}: {reason}; decoded by {', '.join(decoders)} [{entry['reason'].split(':')[0]}]")
            else:
                counts["false_refusals"] += 1
                problems.append(
                    f"FALSE-REFUSAL {name}: refused {reason} ({gate.get('message', '')}); decoded by {', '.join(decoders)}"
                )
    stale = [
        f"STALE allow-list entry {e['pattern']} ({e['rule']}): matches no difference"
        for e in allow
        if check_stale and not e["used"]
    ]
    problems += stale
    all_false = counts["false_refusals"] + counts["false_refusals_listed"]
    counts["false_refusal_percent"] = round(100 * all_false / max(1, counts["decoded_by_two"]), 2)
    ok = not problems
    return {"ok": ok, "counts": counts, "problems": problems, "listed": listed}


def print_report(report, verbose):
    if verbose:
        for line in report["listed"]:
            print(f"  listed: {line}")
    for line in report["problems"]:
        print(line)
    c = report["counts"]
    print(
        f"conformance: {c['files']} files, {c['admitted']} admitted, {c['refused']} refused; "
        f"{c['decoded_by_two']} decoded by two references or more; "
        f"false refusals {c['false_refusals'] + c['false_refusals_listed']} ({c['false_refusal_percent']} %; "
        f"{c['false_refusals_listed']} listed, {c['false_refusals']} unlisted); "
        f"refused by a size limit {c['limit_refusals']}; "
        f"refused as broken but not by two references {c['broken_unshared'] + c['broken_unshared_listed']} "
        f"({c['broken_unshared_listed']} listed); fail-open {c['fail_open'] + c['fail_open_listed']} "
        f"({c['fail_open_listed']} listed); traps {c['traps']}; "
        f"{report['seconds']['all']} s (gate {report['seconds']['gate']} s)"
    )
    print("references: " + ", ".join(f"{k} {v}" for k, v in sorted(report["versions"].items())))
    print("conformance: " + ("PASS" if report["ok"] else f"FAIL ({len(report['problems'])} problems)"))


if __name__ == "__main__":
    sys.exit(main())
