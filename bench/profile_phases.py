#!/usr/bin/env python3
"""The stages of a fit from sampled stacks: BENCHMARKS.md's "Where the time goes" table.

Reads stacks in the folded format (outermost frame first, `;`-joined, then a count), as
`target/release/guest_profile --folded PATH` writes them for the sandbox, or `perf script` output
of a native run (`--perf`), and prints each stage's share of the samples. A sample goes to the first
stage whose rule matches its stack, so the rules run from the most specific to the least.

    python3 bench/profile_phases.py jpeg|png FOLDED          # the sandbox (guest_profile --folded)
    python3 bench/profile_phases.py jpeg|png --perf SCRIPT   # natively (perf script > SCRIPT)
"""

import re
import sys
from collections import Counter

# (stage, pattern on the whole stack, pattern on the innermost frame); None matches anything.
JPEG = [
    # The canonical re-mux walks every Huffman code of every scan before any decoder runs.
    ("canonical re-mux: the scan walk", r"remux::", None),
    ("container walk (structure::check)", r"structure::check|entropy_coded_end", None),
    ("decode: entropy decoding (Huffman)", r"jpeg_decoder", r"decode_scan|[Hh]uffman|read_bits|decode_block|fill_bits"),
    ("decode: scaled IDCT + dequantisation", r"jpeg_decoder", r"idct|append_row_immediate|ImmediateWorker"),
    # In the guest (fat LTO) the scan loop is inlined into `decode_internal`.
    ("decode: decode_internal itself (the inlined scan loop)", r"jpeg_decoder", r"decode_internal"),
    ("decode: upsampling + YCbCr -> RGB", r"jpeg_decoder", r"upsampl|color_convert|ycbcr"),
    ("decode: other (markers, copies)", r"jpeg_decoder", None),
    ("encode: chroma 2x2 averaging", r"jpeg_encoder", r"get_block_averaged"),
    ("encode: FDCT", r"jpeg_encoder", r"fdct"),
    ("encode: Huffman coding", r"jpeg_encoder", r"write_ac_block|write_bits|write_dc|huffman|write_block|JfifWriter"),
    ("encode: blocks (get_block)", r"jpeg_encoder", r"get_block"),
    ("encode: RGB -> YCbCr, row buffers", r"jpeg_encoder|Ycbcr420Rows", None),
    ("resize", r"fast_image_resize|resize", None),
]

PNG = [
    ("canonical re-mux", r"remux::", None),
    # Only the level-1 pass deflates with miniz_oxide (its deep stacks do not always unwind natively).
    ("level-1 pass: deflate (miniz_oxide)", r"redeflate_png|miniz_oxide::deflate", r"miniz_oxide|adler|memcpy|memmove"),
    ("level-1 pass: the fast pass inflated again", r"redeflate_png", None),
    ("size estimate (a sample of rows, both ways)", r"next_png_effort|row_sample", None),
    ("fast PNG pass: row filters", r"encode_as|PngEncoder|png::encoder", r"filter"),
    ("fast PNG pass: fdeflate", r"encode_as|PngEncoder|png::encoder", None),
    ("resize (Lanczos3)", r"fast_image_resize|RowResizer|row_resize", None),
    ("PNG decode: unfiltering (Paeth, ...)", r"png::", r"unfilter|filter|paeth"),
    ("PNG decode: inflate (fdeflate)", r"png::|fdeflate", None),
]


def folded(path):
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if stack:
            yield stack.split(";"), int(n)


def perf_script(path):
    """`perf script` with call graphs: a header line, then one frame per line, innermost first."""
    frames = []
    for line in list(open(path, errors="replace")) + ["\n"]:
        if not line.strip():
            if frames:
                yield list(reversed(frames)), 1
            frames = []
        elif line[0] in " \t":
            m = re.match(r"\s*[0-9a-f]+\s+(.*?)(\+0x[0-9a-f]+)?\s+\(", line)
            frames.append(m.group(1) if m else line.strip())


def main():
    kind, rest = sys.argv[1], sys.argv[2:]
    stacks = perf_script(rest[1]) if rest[0] == "--perf" else folded(rest[0])
    rules = {"jpeg": JPEG, "png": PNG}[kind]
    stages, total = Counter(), 0
    for frames, n in stacks:
        total += n
        whole, leaf = ";".join(frames), frames[-1] if frames else ""
        for stage, on_stack, on_leaf in rules:
            if re.search(on_stack, whole) and (on_leaf is None or re.search(on_leaf, leaf)):
                stages[stage] += n
                break
        else:
            stages["other"] += n
    for stage, _, _ in rules + [("other", None, None)]:
        print(f"{100 * stages[stage] / max(total, 1):5.1f}%  {stage}")
    print(f"{total} samples")


if __name__ == "__main__":
    main()
