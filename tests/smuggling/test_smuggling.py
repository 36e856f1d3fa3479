"""Nothing is smuggled through the canonical form: for each carrier (carriers.py) an image hiding a
unique marker text goes through `mediagate admit --json --out`, and the marker must be nowhere in
what the gate wrote (search.py), the pixels unchanged and the drop named in the verdict's
`dropped`. A carrier the gate does not close yet is listed in KNOWN_OPEN with the reason; its test
then asserts that the marker still passes, so the list fails the run the day it goes stale.

Run by test.sh; MEDIAGATE_BIN names the CLI (default: the release build of this clone).
"""

from __future__ import annotations

import io
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from PIL import Image, ImageFile

import search
from carriers import CARRIERS, Carrier

REPO = Path(__file__).resolve().parents[2]
BIN = os.environ.get("MEDIAGATE_BIN") or str(REPO / "target" / "release" / "mediagate")

# Carriers that smuggle the marker through the gate today, and why. Each must still smuggle: when
# the gate closes one, its test fails until the entry goes.
_ICC = (
    "the gate keeps a whole ICC profile, which decoders need, and a profile's tags may hold anything: "
    "a private tag (as here), the desc and cprt text, bytes no tag points at. The gate should write the "
    "profile anew from the tags colour engines read (header, wtpt, colorants, TRCs, chad, LUTs), without "
    "private tags or unreferenced bytes and with desc and cprt of its own"
)
_PALETTE = (
    "is copied whole; entries no pixel uses are bytes no decoder shows. The gate, which decodes every "
    "pixel anyway, should zero the entries no pixel uses (and cut the table after the highest index "
    "in use where the format allows)"
)
KNOWN_OPEN: dict[str, str] = {
    "jpeg-icc-private-tag": "APP2 ICC profile: " + _ICC,
    "png-icc-private-tag": "iCCP: the profile is written anew under one name, but as it inflates: " + _ICC,
    "webp-icc-private-tag": "ICCP chunk: " + _ICC,
    "jpeg-unused-huffman-table": (
        "DHT segments are copied whole, and a table no scan names is read by no decoder (libjpeg checks "
        "only the codes of the tables in use). The gate should keep only the Huffman tables the scans "
        "after each definition name, naming the rest other-metadata"
    ),
    "jpeg-unused-quant-table": (
        "DQT segments are copied whole, and a table no component of the frame names is read by no "
        "decoder. The gate should keep only the quantization tables the frame header names"
    ),
    "png-palette-unused": "PLTE " + _PALETTE,
    "gif-palette-unused": "the global colour table " + _PALETTE,
    "gif-lzw-after-end": (
        "a frame whose LZW data decode whole is copied sub-block for sub-block, so sub-blocks after the "
        "end-of-information code pass. The gate should write the data only up to the end code (re-blocked), "
        "or re-encode the indices it decoded, naming the rest stray-bytes"
    ),
    "webp-anmf-unknown-chunk": (
        "ANMF chunks are copied whole, and inside a frame, after its image, an unknown chunk passes "
        "(decoders skip it). The gate should walk each ANMF's chunks and keep the frame header, ALPH and "
        "VP8/VP8L only, naming the rest other-metadata"
    ),
    "webp-vp8l-trailing": (
        "VP8L (and VP8) chunks are copied whole, so bytes after the bitstream inside the chunk pass "
        "(libwebp reads only the bits it needs). The gate should cut the chunk where the bitstream ends "
        "(VP8: the frame header's partition sizes; VP8L: where its decoder stopped reading), naming the "
        "rest stray-bytes"
    ),
}

RESULTS: dict[str, str] = {}


def _binary() -> str:
    # Another engineer may be rebuilding the binary: a short absence is waited out.
    for _ in range(24):
        if os.access(BIN, os.X_OK):
            return BIN
        time.sleep(5)
    raise AssertionError(f"no mediagate binary at {BIN} (set MEDIAGATE_BIN)")


def admit(path: Path, out: Path, *options: str) -> dict:
    run = subprocess.run(
        [_binary(), "admit", str(path), "--json", "--out", str(out), *options],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    try:
        verdict = json.loads(run.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"mediagate exited {run.returncode} without a verdict: {run.stdout!r} {run.stderr!r}")
    if run.returncode != 0 or not verdict.get("ok"):
        raise AssertionError(f"the gate did not admit {path.name} (exit {run.returncode}): {verdict}")
    return verdict


def rgba(data: bytes, lenient: bool = False) -> tuple[tuple[int, int], bytes]:
    ImageFile.LOAD_TRUNCATED_IMAGES = lenient
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            return im.size, im.convert("RGBA").tobytes()
    finally:
        ImageFile.LOAD_TRUNCATED_IMAGES = False


def marker_for(carrier: Carrier) -> bytes:
    return f"SMUGGLED-{carrier.name}-{secrets.token_hex(6)}".encode()


class Run:
    """One carrier made, checked to carry its marker, and admitted."""

    def __init__(self, test: unittest.TestCase, carrier: Carrier, tmp: Path, *options: str):
        self.marker = marker_for(carrier)
        self.input = tmp / f"in.{carrier.ext}"
        self.output = tmp / f"out.{carrier.ext}"
        data = carrier.make(self.marker)
        self.input.write_bytes(data)
        carried = search.find(str(self.input), self.marker)
        # Without this the test could pass on a carrier that never held the marker.
        test.assertTrue(carried, f"{carrier.name}: the input does not carry {self.marker!r}")
        self.verdict = admit(self.input, self.output, *options)
        test.assertTrue(self.output.exists(), f"{carrier.name}: --out wrote nothing")
        self.found = search.find(str(self.output), self.marker)
        test.assertEqual(
            rgba(data, carrier.lenient), rgba(self.output.read_bytes()), f"{carrier.name}: the admitted pixels differ from the input's"
        )

    def where(self) -> str:
        return "; ".join(self.found)


class Smuggling(unittest.TestCase):
    def check(self, carrier: Carrier) -> None:
        with tempfile.TemporaryDirectory(prefix=f"smuggling-{carrier.name}-") as tmp:
            run = Run(self, carrier, Path(tmp))
            dropped = run.verdict.get("dropped", [])
            if carrier.name in KNOWN_OPEN:
                RESULTS[carrier.name] = f"SMUGGLES (known open): {run.where() or '-'}"
                self.assertTrue(
                    run.found,
                    f"{carrier.name} no longer smuggles (dropped {dropped}): take it out of KNOWN_OPEN "
                    "and the README's open list",
                )
                return
            RESULTS[carrier.name] = f"dropped {dropped}" if not run.found else f"SMUGGLES: {run.where()}"
            self.assertEqual(run.found, [], f"{carrier.name}: {run.marker!r} passed the gate")
            self.assertTrue(dropped, f"{carrier.name}: the drop is not reported (verdict {run.verdict})")
            self.assertIn(carrier.kind, dropped, f"{carrier.name}: `dropped` does not name {carrier.kind}")

    def test_known_open_names_carriers(self) -> None:
        self.assertLessEqual(set(KNOWN_OPEN), {c.name for c in CARRIERS})

    def test_keep_metadata_keeps_metadata(self) -> None:
        """With --keep-metadata the metadata carriers pass: the drops above are the gate choosing,
        not a gate that strips everything (and the search can see each carrier's marker in an
        output)."""
        carriers = [c for c in CARRIERS if c.metadata]
        self.assertTrue(carriers)
        for carrier in carriers:
            with self.subTest(carrier=carrier.name), tempfile.TemporaryDirectory() as tmp:
                run = Run(self, carrier, Path(tmp), "--keep-metadata")
                self.assertTrue(run.found, f"{carrier.name}: --keep-metadata did not keep {run.marker!r}")
                self.assertNotIn(carrier.kind, run.verdict.get("dropped", []))

    def test_keep_metadata_still_repairs(self) -> None:
        """Stray and trailing bytes are repairs, not metadata: dropped with --keep-metadata too."""
        carriers = [c for c in CARRIERS if c.kind in ("stray-bytes", "trailing-bytes") and c.name not in KNOWN_OPEN]
        self.assertTrue(carriers)
        for carrier in carriers:
            with self.subTest(carrier=carrier.name), tempfile.TemporaryDirectory() as tmp:
                run = Run(self, carrier, Path(tmp), "--keep-metadata")
                self.assertEqual(run.found, [], f"{carrier.name}: {run.marker!r} passed with --keep-metadata")
                self.assertIn(carrier.kind, run.verdict.get("dropped", []))


def _carrier_test(carrier: Carrier):
    return lambda self: self.check(carrier)


for _c in CARRIERS:
    setattr(Smuggling, "test_carrier_" + _c.name.replace("-", "_"), _carrier_test(_c))


def tearDownModule() -> None:
    width = max(map(len, RESULTS), default=0)
    print("\ncarrier results:", file=sys.stderr)
    for c in CARRIERS:
        if c.name in RESULTS:
            print(f"  {c.name:<{width}}  {RESULTS[c.name]}", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
