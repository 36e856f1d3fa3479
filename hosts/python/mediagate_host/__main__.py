"""`python -m mediagate_host COMMAND`: the host's own commands.

    warm-up        compile the component into the cache now, rather than on the first call
    admit-batch    a Batch API file through the gate (as `mediagate admit-batch`)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import List, Optional

from .batch import BatchInputError, admit_batch, exit_code, summary_words, words
from .host import (ENV_CACHE_DIR, Mediagate, MediagateError, _open_cache_dir, cache_file, default_cache_dir,
                   default_wasm_path)


def warm_up(args: argparse.Namespace) -> int:
    wasm_path = args.wasm or default_wasm_path()
    cache = default_cache_dir()
    # A cache this user may not trust is never used (host.py): compiling now would be paid again
    # by every process, so say so at once instead.
    fd = _open_cache_dir(cache)
    if fd is None:
        print(f"warm-up: the cache {cache} could not be used (the warning above says why): every process would "
              f"compile the component again; set {ENV_CACHE_DIR} to a directory of your own", file=sys.stderr)
        return 1
    os.close(fd)
    started = time.monotonic()
    try:
        gate = Mediagate(wasm_path=wasm_path, vlm=False, cache_dir=cache)
    except MediagateError as e:
        print(f"warm-up: {e}", file=sys.stderr)
        return 2
    took = time.monotonic() - started
    if gate.origin == "cache":
        print(f"already compiled: loaded {gate.wasm_path} from the cache {cache} in {took:.2f} s")
        return 0
    if not cache_file(gate.wasm_path.read_bytes(), cache).is_file():
        print(f"warm-up: compiled {gate.wasm_path} in {took:.1f} s, but could not write it to the cache {cache} "
              "(the warning above says why)", file=sys.stderr)
        return 1
    print(f"compiled {gate.wasm_path} in {took:.1f} s into the cache {cache}; a process now loads it in a fraction "
          "of a second")
    return 0


def batch(args: argparse.Namespace) -> int:
    try:
        gate = Mediagate(vlm=False)
    except MediagateError as e:
        print(f"admit-batch: {e}", file=sys.stderr)
        return 2
    if not gate.batch_supported:
        print(f"admit-batch: {gate.wasm_path} has no batch entries; use the mediagate-agent-tool.wasm of this "
              "release", file=sys.stderr)
        return 2
    source = sys.stdin.buffer if args.file == "-" else args.file
    output = sys.stdout.buffer if args.output is None else args.output
    said = None if args.report else (lambda line: print(words(line), file=sys.stderr))
    started = time.monotonic()
    try:
        summary = admit_batch(gate, source, output, api=args.api, report=args.report, on_refusal=args.on_refusal,
                              jobs=args.jobs, provider=args.profile, verify=args.verify,
                              downsample=False if args.no_downsample else None,
                              keep_metadata=True if args.keep_metadata else None, convert=args.convert,
                              on_refused=said)
    except (BatchInputError, OSError, ValueError) as e:
        print(f"admit-batch: {e}", file=sys.stderr)
        return 2
    for line in summary_words(summary, time.monotonic() - started):
        print(line, file=sys.stderr)
    return exit_code(summary)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mediagate_host", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("warm-up", help="compile the component into the cache (once per machine and release)")
    p.add_argument("--wasm", help="the component (default: the one Mediagate() loads)")
    p.set_defaults(run=warm_up)

    p = commands.add_parser("admit-batch", help="admit every request of a Batch API file",
                            description="Exit 0: nothing refused and no file rule broken; 1: something refused, a "
                                        "file rule broken, or stopped (--on-refusal fail); 2: the input could not "
                                        "be read.")
    p.add_argument("file", help="the batch file (JSON lines, or an Anthropic {\"requests\": [...]} document); - for stdin")
    p.add_argument("--api", required=True, choices=("openai", "anthropic"))
    p.add_argument("-o", "--output", help="the admitted file (default: stdout)")
    p.add_argument("--report", help="the report: a JSON line per request that is not unchanged, then the summary")
    p.add_argument("--on-refusal", default="placeholder", choices=("placeholder", "drop", "fail"))
    p.add_argument("--jobs", type=int, default=1, help="requests judged at once")
    p.add_argument("--profile", help="the provider profile for each image (default: the API's own)")
    p.add_argument("--verify", help="full (every pixel decoded) or header")
    p.add_argument("--no-downsample", action="store_true", help="refuse what is too large instead of fitting it")
    p.add_argument("--keep-metadata", action="store_true")
    p.add_argument("--convert", action="store_true", help="convert the types no provider takes instead of refusing")
    p.set_defaults(run=batch)

    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
