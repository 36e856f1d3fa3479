"""The judge's own tests: that the comparison and the allow-list can fail."""

import unittest

from PIL import Image, ImageOps

import grid


def case(want="DCT-RGB", w=64, h=48, **result):
    c = grid.Case("pillow", want, "RGB", w, h, grid.DPI)
    for k, v in result.items():
        setattr(c, k, v)
    return c


class Psnr(unittest.TestCase):
    def test_identical_is_infinite_and_a_changed_photo_is_under_the_bar(self):
        photo = grid.photo(64, 48, "RGB")
        self.assertEqual(grid.psnr(photo, photo.copy()), float("inf"))
        self.assertLess(grid.psnr(photo, ImageOps.invert(photo)), grid.MIN_PSNR)
        self.assertLess(grid.psnr(photo, Image.new("RGB", photo.size, "white")), grid.MIN_PSNR)
        # A shift by one pixel is what a misplaced page looks like.
        shifted = Image.new("RGB", photo.size, "white")
        shifted.paste(photo, (1, 0))
        self.assertLess(grid.psnr(photo, shifted), grid.MIN_PSNR)

    def test_alpha_is_flattened_on_white(self):
        clear = Image.new("RGBA", (4, 4), (0, 0, 0, 0))
        self.assertEqual(grid.on_white(clear).getpixel((0, 0)), (255, 255, 255))

    def test_the_photo_is_not_flat(self):
        # A flat page is blank to the gate, legitimately: the grid must never draw one.
        for mode in ("RGB", "L", "CMYK", "1", "P", "RGBA"):
            lo, hi = grid.photo(31, 33, mode).convert("L").getextrema()
            self.assertGreater(hi - lo, 100, mode)


class Verdicts(unittest.TestCase):
    def test_refusal_low_psnr_and_a_wrong_reference_fail(self):
        self.assertTrue(grid.verdict(case(error="refused blank: page 1 is blank")))
        self.assertTrue(grid.verdict(case(psnr=29.9, source_psnr=40.0, gate_source_psnr=29.0)))
        self.assertTrue(grid.verdict(case(psnr=50.0, source_psnr=10.0, gate_source_psnr=10.0)))
        self.assertEqual(grid.verdict(case(psnr=30.0, source_psnr=40.0, gate_source_psnr=40.0)), "")

    def test_a_listed_case_that_passes_is_stale(self):
        good = case(psnr=40.0, source_psnr=40.0, gate_source_psnr=40.0)
        bad = case(want="DCT-CMYK", psnr=20.0, source_psnr=40.0, gate_source_psnr=20.0)
        failures, allowed, stale = grid.judge([good, bad], [("pillow/DCT-*", "why", "")], whole_grid=True)
        self.assertEqual((len(failures), len(allowed), len(stale)), (0, 1, 1))
        self.assertIs(stale[0][0], good)

    def test_a_pattern_that_matches_nothing_is_stale_on_the_whole_grid_only(self):
        bad = case(psnr=20.0, source_psnr=40.0, gate_source_psnr=20.0)
        self.assertEqual(len(grid.judge([bad], [("raw/*", "why", "")], whole_grid=True)[2]), 1)
        self.assertEqual(len(grid.judge([bad], [("raw/*", "why", "")], whole_grid=False)[2]), 0)
        self.assertEqual(len(grid.judge([bad], [("raw/*", "why", "")], whole_grid=False)[0]), 1)

    def test_an_allowance_that_names_ghostscript_holds_only_while_ghostscript_agrees(self):
        allowed = [("pillow/DCT-CMYK/*", "colour", "ghostscript")]
        agrees = case(want="DCT-CMYK", psnr=29.0, source_psnr=40.0, gate_source_psnr=25.0, ghostscript_psnr=52.0)
        self.assertEqual([len(x) for x in grid.judge([agrees], allowed, whole_grid=False)], [0, 1, 0])
        for db in (25.0, None):
            disagrees = case(want="DCT-CMYK", psnr=29.0, source_psnr=40.0, gate_source_psnr=25.0, ghostscript_psnr=db)
            failures, listed, _ = grid.judge([disagrees], allowed, whole_grid=False)
            self.assertEqual((len(failures), len(listed)), (1, 0))
            self.assertIn("ghostscript", failures[0][1])

    def test_an_allowance_that_names_the_source_holds_only_while_the_gate_is_nearer_it(self):
        allowed = [("pillow/CCITT-grey/*", "the reference", "source")]
        nearer = case(want="CCITT-grey", psnr=22.0, source_psnr=20.0, gate_source_psnr=25.0)
        self.assertEqual([len(x) for x in grid.judge([nearer], allowed, whole_grid=False)], [0, 1, 0])
        further = case(want="CCITT-grey", psnr=22.0, source_psnr=25.0, gate_source_psnr=20.0)
        failures, listed, _ = grid.judge([further], allowed, whole_grid=False)
        self.assertEqual((len(failures), len(listed)), (1, 0))
        self.assertIn("nearer the source", failures[0][1])

    def test_the_source_is_placed_where_the_page_puts_it(self):
        # 1 px at 200 dpi is 0.36 pt: one pixel of a 3x3 render, top left, the rest white.
        tiny = case(w=1, h=1)
        placed = grid.placed_source(tiny, 3, 3)
        self.assertNotEqual(placed.getpixel((0, 0)), (255, 255, 255))
        self.assertEqual(placed.getpixel((2, 2)), (255, 255, 255))


if __name__ == "__main__":
    unittest.main()
