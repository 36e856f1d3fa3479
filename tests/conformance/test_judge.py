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
