"""The suite's judge on made-up verdicts: each rule fails when it should (test.sh runs this first)."""

import unittest

import conform


def case(name, gate, refs, out_refs=None, fmt="png"):
    c = {"name": name, "format": fmt, "gate": gate, "references": {r: {"ok": ok} for r, ok in refs.items()}}
    if out_refs is not None:
        c["out_format"] = fmt
        c["out_references"] = {r: {"ok": ok, "error": "" if ok else "bad"} for r, ok in out_refs.items()}
    return c


ADMITTED = {"ok": True, "out": "x"}
ALL_DECODE = {"pillow": True, "sharp": True, "chromium": True, "pngcheck": True}
NONE_DECODE = {"pillow": False, "sharp": False, "chromium": False, "pngcheck": False}


def refused(reason):
    return {"ok": False, "reason": reason, "message": "m"}


class Judge(unittest.TestCase):
    def test_agreement_passes(self):
        report = conform.judge(
            [
                case("a", ADMITTED, ALL_DECODE, ALL_DECODE),
                case("b", refused("undecodable"), NONE_DECODE),
            ],
            [],
        )
        self.assertTrue(report["ok"], report["problems"])
        self.assertEqual((report["counts"]["admitted"], report["counts"]["refused"]), (1, 1))

    def test_an_output_one_reference_rejects_is_fail_open(self):
        report = conform.judge([case("a", ADMITTED, ALL_DECODE, {**ALL_DECODE, "pngcheck": False})], [])
        self.assertFalse(report["ok"])
        self.assertEqual(report["counts"]["fail_open"], 1)

    def test_a_trap_fails_and_cannot_be_listed(self):
        allow = [{"pattern": "a", "rule": "false-refusal", "reason": "x", "used": 0}]
        report = conform.judge([case("a", {"trap": "exit 2"}, ALL_DECODE)], allow)
        self.assertFalse(report["ok"])
        self.assertEqual(report["counts"]["traps"], 1)

    def test_a_false_refusal_fails_unless_listed(self):
        cases = [case("a", refused("undecodable"), {"pillow": True, "sharp": True, "chromium": False, "pngcheck": False})]
        self.assertEqual(conform.judge(cases, [])["counts"]["false_refusals"], 1)
        allow = [{"pattern": "a", "rule": "false-refusal", "reason": "x", "used": 0}]
        report = conform.judge(cases, allow)
        self.assertTrue(report["ok"], report["problems"])
        self.assertEqual(report["counts"]["false_refusals_listed"], 1)

    def test_a_limit_refusal_is_counted_apart(self):
        report = conform.judge([case("a", refused("dimensions_too_large"), ALL_DECODE)], [])
        self.assertTrue(report["ok"], report["problems"])
        self.assertEqual(report["counts"]["limit_refusals"], 1)

    def test_broken_needs_two_failing_references(self):
        # Two references decode it: a false refusal.
        refs = {"pillow": True, "chromium": False, "bmptopnm": True}
        self.assertEqual(conform.judge([case("a", refused("undecodable"), refs, fmt="bmp")], [])["counts"]["false_refusals"], 1)
        # One decodes, one fails: not a false refusal, but "broken" is not shared by two.
        refs = {"pillow": True, "chromium": False}
        report = conform.judge([case("a", refused("undecodable"), refs, fmt="bmp")], [])
        self.assertEqual(report["counts"]["broken_unshared"], 1)

    def test_a_stale_allow_list_row_fails(self):
        allow = [{"pattern": "gone", "rule": "false-refusal", "reason": "x", "used": 0}]
        report = conform.judge([case("a", ADMITTED, ALL_DECODE, ALL_DECODE)], allow)
        self.assertFalse(report["ok"])
        self.assertTrue(report["problems"][0].startswith("STALE"))

    def test_the_readme_allow_list_reads(self):
        entries = conform.read_allow_list()
        self.assertTrue(entries)
        self.assertTrue(all(e["reason"] and e["rule"] in ("fail-open", "false-refusal", "broken-unshared") for e in entries))


def palette_png(index, entries):
    """A 1x1 8-bit palette PNG whose one pixel is `index` into a PLTE of `entries` colours."""
    import struct
    import zlib

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 3, 0, 0, 0)
    plte = bytes([255, 0, 0]) * entries
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"PLTE", plte)
            + chunk(b"IDAT", zlib.compress(bytes([0, index]))) + chunk(b"IEND", b""))


class ImageMagick(unittest.TestCase):
    def test_a_warning_fails_unless_it_is_about_metadata(self):
        xmp = "convert: CorruptImageProfile `a.webp' (XMP) @ warning/profile.c/ValidateXMPProfile/1728."
        tag = "convert: Unknown field with tag 317 (0x13d) encountered. `TIFFReadDirectory' @ warning/tiff.c/TIFFWarnings/981."
        index = "convert: invalid colormap index `a.png' @ error/colormap-private.h/ConstrainColormapIndex/35."
        libjpeg = "convert: Corrupt JPEG data: 3 extraneous bytes before marker 0xd9 `a.jpg' @ warning/jpeg.c/JPEGWarningHandler/389."
        self.assertTrue(conform.imagemagick_decodes(0, ""))
        self.assertTrue(conform.imagemagick_decodes(1, f"{xmp}\n{tag}\n"))
        self.assertFalse(conform.imagemagick_decodes(1, index))
        self.assertFalse(conform.imagemagick_decodes(1, libjpeg))
        self.assertFalse(conform.imagemagick_decodes(1, f"{tag}\n{index}"))
        self.assertFalse(conform.imagemagick_decodes(1, ""))

    def test_a_palette_index_past_plte_fails_and_one_inside_decodes(self):
        # Runs the real /usr/bin/convert (test.sh installs imagemagick): the reason it is a reference.
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as scratch:
            answers = []
            for index in (0, 5):
                path = Path(scratch) / f"index{index}.png"
                path.write_bytes(palette_png(index, 2))
                answers.append(conform.tool_decode("imagemagick", str(path), scratch, "png"))
        self.assertTrue(answers[0]["ok"], answers[0])
        self.assertFalse(answers[1]["ok"])
        self.assertIn("invalid colormap index", answers[1]["error"])


class Mutations(unittest.TestCase):
    def test_the_mutations_are_fixed(self):
        data = bytes(range(256)) * 4
        first = conform.mutations("x", "gif", data)
        self.assertEqual(first, conform.mutations("x", "gif", data))
        self.assertEqual([k for k, _ in first], ["trunc-half", "trunc-end", "bitflip-s1", "bitflip-s2"])
        self.assertTrue(all(m[:16] == data[:16] for _, m in first))

    def test_a_png_reorder_moves_a_chunk_after_idat(self):
        import struct
        import zlib

        def chunk(kind, body):
            return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

        png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", b"\0" * 13) + chunk(b"gAMA", b"\0\0\xb1\x8f") + chunk(b"IDAT", b"x") + chunk(b"IEND", b"")
        kinds = [c[4:8] for c in conform.png_chunks(conform.reorder("png", png))]
        self.assertEqual(kinds, [b"IHDR", b"IDAT", b"gAMA", b"IEND"])


if __name__ == "__main__":
    unittest.main()
