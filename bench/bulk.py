#!/usr/bin/env python3
"""The bulk figures of BENCHMARKS.md ("From one file to a million"), from one command:

    python3 bench/bulk.py [--images 10000] [--loop 500] [--batch-lines 100000] [--batch-bytes 1000000000]

It builds nothing: run `bash scripts/build.sh` and
`cargo build --release --locked -p mediagate-bench --bin bulk_inputs` first. It writes its inputs
with `bulk_inputs` (the same bytes every run) into a temporary folder, and measures the CLI:

- `mediagate admit DIR -r --jsonl --out-dir` at --jobs 1 and --jobs 2, and a shell-style loop of one
  `mediagate admit FILE --json` process per file (on the first --loop files): files/s, peak RSS
  (the kernel's ru_maxrss of the child), and the summary's counts against the JSON lines';
- `mediagate admit-batch` on a generated OpenAI Batch file and an Anthropic Message Batches file:
  requests/s, peak RSS, the output's line count and order against the input's, and every line the
  report does not name byte for byte the input's.

Each check that fails fails the script (exit 1); the figures are printed as Markdown rows.
"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(os.environ.get("MEDIAGATE_BIN", ROOT / "target/release/mediagate"))
INPUTS = ROOT / "target/release/bulk_inputs"


def measure(cmd, stdout_path=None):
    """`cmd` in a fresh Python process, so its peak RSS is its own: (exit code, seconds, MiB, stderr)."""
    probe = (
        "import resource,subprocess,sys,time,json;"
        "out=open(sys.argv[1],'wb') if sys.argv[1] else subprocess.DEVNULL;"
        "t=time.monotonic();p=subprocess.run(sys.argv[2:],stdout=out,stderr=subprocess.PIPE);"
        "s=time.monotonic()-t;"
        "print(json.dumps([p.returncode,s,resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,"
        "p.stderr.decode(errors='replace')]))"
    )
    out = subprocess.run([sys.executable, "-c", probe, str(stdout_path or ""), *map(str, cmd)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def check(ok, what):
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        sys.exit(1)


def images(tmp, count, loop):
    tree = tmp / "images"
    subprocess.run([INPUTS, "images", tree, str(count)], check=True)
    files = sorted(p for p in tree.rglob("*") if p.is_file())
    rows = []
    rates = {}
    for jobs in (1, 2):
        out_dir = tmp / f"out-{jobs}"
        jsonl = tmp / f"verdicts-{jobs}.jsonl"
        code, seconds, mib, stderr = measure(
            [BIN, "admit", tree, "-r", "--jobs", jobs, "--jsonl", "--out-dir", out_dir], jsonl)
        check(code == 1, f"--jobs {jobs}: exit 1 (some files are refused), got {code}: {stderr[-300:]}")
        lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
        check([l["path"] for l in lines] == [str(f) for f in files], f"--jobs {jobs}: one line per file, in order")
        summary = re.search(r"(\d+) files in .*?: (\d+) admitted \((\d+) downsampled, (\d+) re-encoded, (\d+) "
                            r"converted\), (\d+) refused.*?, (\d+) could not be judged", stderr)
        check(summary is not None, f"--jobs {jobs}: the summary is printed: {stderr[-300:]}")
        n, admitted, downsampled, _re, _conv, refused, errors = map(int, summary.groups())
        counted = (len(lines), sum(1 for l in lines if l.get("ok") is True), sum(1 for l in lines if l.get("resized")),
                   sum(1 for l in lines if l.get("ok") is False), sum(1 for l in lines if "error" in l))
        check((n, admitted, downsampled, refused, errors) == counted,
              f"--jobs {jobs}: the summary's counts {(n, admitted, downsampled, refused, errors)} are the lines' {counted}")
        written = sum(1 for p in out_dir.rglob("*") if p.is_file())
        check(written == admitted, f"--jobs {jobs}: --out-dir holds the {admitted} admitted files ({written})")
        rates[jobs] = count / seconds
        rows.append(f"| `admit DIR -r --jobs {jobs} --jsonl --out-dir` | {count} | {seconds:.1f} s | "
                    f"{rates[jobs]:.1f} files/s | {mib:.0f} MiB |")
        shutil.rmtree(out_dir)
    sample = files[:loop]
    script = "for f in \"$@\"; do \"$0\" admit \"$f\" --json >/dev/null; done"
    code, seconds, mib, _ = measure(["bash", "-c", script, BIN, *sample])
    rates["loop"] = len(sample) / seconds
    rows.append(f"| a loop of `admit FILE --json`, one process per file | {len(sample)} | {seconds:.1f} s | "
                f"{rates['loop']:.1f} files/s | {mib:.0f} MiB |")
    print("\n".join(rows))
    print(f"--jobs 2 / --jobs 1: {rates[2] / rates[1]:.2f}x; --jobs 2 / one process per file: "
          f"{rates[2] / rates['loop']:.2f}x")
    shutil.rmtree(tree)
    return rates


def batch(tmp, api, lines, size):
    source = tmp / f"batch-{api}.jsonl"
    subprocess.run([INPUTS, "batch", source, api, str(lines), str(size)], check=True)
    out, report = tmp / f"admitted-{api}.jsonl", tmp / f"report-{api}.jsonl"
    code, seconds, mib, stderr = measure(
        [BIN, "admit-batch", "--api", api, source, "-o", out, "--report", report, "--jobs", 2])
    check(code == 1, f"{api}: exit 1 (some requests have refused blocks, the file is over the API's size), got {code}: "
          f"{stderr[-300:]}")
    reported = {}
    summary = None
    with report.open() as f:
        for line in f:
            obj = json.loads(line)
            if "summary" in obj:
                summary = obj["summary"]
            else:
                reported[obj["number"]] = obj["outcome"]
    same = 0
    with source.open("rb") as a, out.open("rb") as b:
        n = 0
        for n, (x, y) in enumerate(zip(a, b), start=1):
            if n not in reported:
                if x != y:
                    check(False, f"{api}: line {n}, not in the report, is byte for byte the input's")
                same += 1
            elif x == y:
                check(False, f"{api}: line {n}, reported {reported[n]}, differs from the input")
            else:
                xi, yi = json.loads(x), json.loads(y)
                check(xi["custom_id"] == yi["custom_id"], f"{api}: line {n} keeps its custom_id")
        check(a.read(1) == b"" and b.read(1) == b"", f"{api}: the output has the input's {n} lines")
    check(n == lines and summary["requests"] == lines and summary["left_out"] == 0,
          f"{api}: {lines} requests judged, none left out ({summary})")
    size_in = source.stat().st_size
    row = (f"| `admit-batch --api {api} --jobs 2` | {lines} requests, {size_in / 1e6:.0f} MB | {seconds:.1f} s | "
           f"{lines / seconds:.0f} requests/s, {size_in / 1e6 / seconds:.1f} MB/s | {mib:.0f} MiB | "
           f"{summary['changed']} changed, {summary['refused_blocks']} with a refused block, {same} byte for byte |")
    print(row)
    for p in (source, out, report):
        p.unlink()
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=int, default=10000)
    parser.add_argument("--loop", type=int, default=500)
    parser.add_argument("--batch-lines", type=int, default=100000)
    parser.add_argument("--batch-bytes", type=int, default=1_000_000_000)
    parser.add_argument("--skip-images", action="store_true")
    parser.add_argument("--skip-batch", action="store_true")
    args = parser.parse_args()
    for tool in (BIN, INPUTS):
        check(tool.exists(), f"{tool} is built")
    with tempfile.TemporaryDirectory(prefix="mediagate-bulk-") as tmp:
        tmp = Path(tmp)
        if not args.skip_images:
            images(tmp, args.images, args.loop)
        if not args.skip_batch:
            for api in ("openai", "anthropic"):
                batch(tmp, api, args.batch_lines, args.batch_bytes)


if __name__ == "__main__":
    main()
