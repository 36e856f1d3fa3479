//! Every PNG the gate writes, straight from the pixels: each row filtered as the png crate's
//! adaptive filter filters it (the least sum of the filtered bytes read as signed, over Up, Sub,
//! Avg and Paeth; a tie goes to the later), then deflated by fdeflate's fast pass, row by row as
//! the png crate feeds it, or by miniz_oxide at a zlib level. The fast pass is the png crate's
//! `CompressionType::Fast` byte for byte (unit test); the slower levels are deflated from the same
//! filtered rows, and the ladder's row sample is those of a few bands, filtered against the rows
//! above them: no image is copied, no PNG inflated again to find its rows.

use std::borrow::Cow;

use image::{DynamicImage, ImageError};

use crate::remux::png_chunk;

/// An 8- or 16-bit grey, grey + alpha, RGB or RGBA image's rows as PNG stores them (16-bit samples
/// big-endian) and its IHDR.
pub(crate) struct PngRows<'a> {
    pixels: Cow<'a, [u8]>,
    row_len: usize,
    bpp: usize,
    ihdr: [u8; 13],
}

/// Rows filtered and each led by its filter type byte, ready to deflate.
pub(crate) struct Filtered {
    bytes: Vec<u8>,
    row_len: usize,
}

impl<'a> PngRows<'a> {
    /// Refused as the png crate's encoder refuses them: a 32-bit float image has no PNG form.
    pub(crate) fn of(img: &'a DynamicImage) -> Result<Self, ImageError> {
        let (colour_type, channels, sixteen) = match img {
            DynamicImage::ImageLuma8(_) => (0u8, 1usize, false),
            DynamicImage::ImageLumaA8(_) => (4, 2, false),
            DynamicImage::ImageRgb8(_) => (2, 3, false),
            DynamicImage::ImageRgba8(_) => (6, 4, false),
            DynamicImage::ImageLuma16(_) => (0, 1, true),
            DynamicImage::ImageLumaA16(_) => (4, 2, true),
            DynamicImage::ImageRgb16(_) => (2, 3, true),
            DynamicImage::ImageRgba16(_) => (6, 4, true),
            other => {
                return Err(ImageError::Unsupported(image::error::UnsupportedError::from_format_and_kind(
                    image::ImageFormat::Png.into(),
                    image::error::UnsupportedErrorKind::Color(other.color().into()),
                )));
            }
        };
        let (width, height) = (img.width(), img.height());
        let bpp = channels * if sixteen { 2 } else { 1 };
        let row_len = width as usize * bpp;
        if width == 0 || height == 0 || img.as_bytes().len() != row_len * height as usize {
            return Err(ImageError::Encoding(image::error::EncodingError::new(
                image::ImageFormat::Png.into(),
                format!("a {width}x{height} image's pixels do not fill it"),
            )));
        }
        let pixels = if sixteen {
            let mut big_endian = img.as_bytes().to_vec();
            for sample in big_endian.chunks_exact_mut(2) {
                let value = u16::from_ne_bytes([sample[0], sample[1]]);
                sample.copy_from_slice(&value.to_be_bytes());
            }
            Cow::Owned(big_endian)
        } else {
            Cow::Borrowed(img.as_bytes())
        };
        let mut ihdr = [0u8; 13];
        ihdr[..4].copy_from_slice(&width.to_be_bytes());
        ihdr[4..8].copy_from_slice(&height.to_be_bytes());
        ihdr[8] = if sixteen { 16 } else { 8 };
        ihdr[9] = colour_type;
        Ok(PngRows { pixels, row_len, bpp, ihdr })
    }

    pub(crate) fn height(&self) -> u32 {
        (self.pixels.len() / self.row_len) as u32
    }

    /// Rows `ys` (rising), each filtered against the image's row above it, handed to `sink` with
    /// its filter type byte in front.
    fn each_filtered<E>(
        &self,
        ys: impl Iterator<Item = u32>,
        mut sink: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let zeros = vec![0u8; self.row_len];
        let mut filtered = vec![0u8; self.row_len + 1];
        let row = |y: u32| &self.pixels[y as usize * self.row_len..][..self.row_len];
        for y in ys {
            let previous = if y == 0 { &zeros[..] } else { row(y - 1) };
            filtered[0] = filter_row(self.bpp, previous, row(y), &mut filtered[1..]) as u8;
            sink(&filtered)?;
        }
        Ok(())
    }

    /// Rows `ys` (rising) filtered, held together (in room made for just them: a sample's rows
    /// are an eighth of the image's).
    pub(crate) fn filtered(&self, ys: impl Iterator<Item = u32> + Clone) -> Filtered {
        let mut bytes = Vec::with_capacity((self.row_len + 1) * ys.clone().count());
        let _ = self.each_filtered(ys, |row| {
            bytes.extend_from_slice(row);
            Ok::<(), ()>(())
        });
        Filtered { bytes, row_len: self.row_len + 1 }
    }

    /// The PNG by fdeflate's fast pass, written as the rows are filtered: the whole filtered image
    /// is never held.
    pub(crate) fn fast_pass(&self) -> Vec<u8> {
        let capacity = self.pixels.len() + self.pixels.len() / 256 + self.height() as usize + 1024;
        let mut compressor = fdeflate::Compressor::new(Vec::with_capacity(capacity)).expect(WRITE_TO_VEC);
        self.each_filtered(0..self.height(), |row| compressor.write_data(row)).expect(WRITE_TO_VEC);
        let zlib = compressor.finish().expect(WRITE_TO_VEC);
        let zlib = if zlib.len() > stored_size(self.pixels.len() + self.height() as usize) {
            drop(zlib);
            self.filtered(0..self.height()).stored()
        } else {
            zlib
        };
        self.png(&zlib)
    }

    /// The PNG of this image with its rows deflated at zlib `level` as they are filtered: the
    /// filtered image, as large as the pixels, is never held.
    pub(crate) fn at_level(&self, level: u8) -> Vec<u8> {
        let mut deflater = RowDeflater::new(level, Vec::with_capacity(self.pixels.len() / 2));
        let _ = self.each_filtered(0..self.height(), |row| {
            deflater.write(row);
            Ok::<(), ()>(())
        });
        self.png(&deflater.finish())
    }

    fn png(&self, zlib: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + 25 + zlib.len() + 24);
        out.extend_from_slice(b"\x89PNG\r\n\x1a\n");
        png_chunk(&mut out, b"IHDR", &self.ihdr);
        png_chunk(&mut out, b"IDAT", zlib);
        png_chunk(&mut out, b"IEND", &[]);
        out
    }
}

/// A `Vec`, or a [`CountingSink`], takes every write.
const WRITE_TO_VEC: &str = "writing to a Vec cannot fail";

/// The size of `len` bytes in stored deflate blocks, zlib-wrapped.
fn stored_size(len: usize) -> usize {
    fdeflate::StoredOnlyCompressor::<()>::compressed_size(len)
}

impl Filtered {
    pub(crate) fn rows(&self) -> usize {
        self.bytes.len() / self.row_len
    }

    /// The first band of `band_rows` rows of these, the third, and so on.
    pub(crate) fn alternate_bands(&self, band_rows: usize) -> Filtered {
        let mut bytes = Vec::with_capacity(self.bytes.len() / 2 + band_rows * self.row_len);
        for band in self.bytes.chunks(band_rows * self.row_len).step_by(2) {
            bytes.extend_from_slice(band);
        }
        Filtered { bytes, row_len: self.row_len }
    }

    /// The zlib size of fdeflate's fast pass over these rows, row by row as [`PngRows::fast_pass`]
    /// writes them (no larger than stored, as there).
    pub(crate) fn fast_len(&self) -> usize {
        let mut counted = CountingSink::default();
        let mut compressor = fdeflate::Compressor::new(&mut counted).expect(WRITE_TO_VEC);
        for row in self.bytes.chunks(self.row_len) {
            compressor.write_data(row).expect(WRITE_TO_VEC);
        }
        compressor.finish().expect(WRITE_TO_VEC);
        counted.0.min(stored_size(self.bytes.len()))
    }

    /// The zlib size of these rows at `level`, deflated row by row as [`PngRows::at_level`]
    /// deflates them (the size it writes for the same rows, to the byte).
    pub(crate) fn level_len(&self, level: u8) -> usize {
        let mut deflater = RowDeflater::new(level, CountingSink::default());
        for row in self.bytes.chunks(self.row_len) {
            deflater.write(row);
        }
        deflater.finish().0
    }

    /// The rows in stored deflate blocks: the png crate's fallback where the fast pass comes out
    /// larger (it stores the rows unfiltered; the size is the same).
    fn stored(&self) -> Vec<u8> {
        let mut compressor = fdeflate::StoredOnlyCompressor::new(std::io::Cursor::new(Vec::with_capacity(
            stored_size(self.bytes.len()),
        )))
        .expect(WRITE_TO_VEC);
        compressor.write_data(&self.bytes).expect(WRITE_TO_VEC);
        compressor.finish().expect(WRITE_TO_VEC).into_inner()
    }
}

/// miniz_oxide's zlib stream at a level, fed a row at a time: within 11 bytes of what
/// `compress_to_vec_zlib` gives the rows held together on the test images (a unit test holds it
/// within 0.1%), and the same size for the same rows, whole image or sample.
struct RowDeflater<W> {
    compressor: miniz_oxide::deflate::core::CompressorOxide,
    out: W,
}

impl<W: std::io::Write> RowDeflater<W> {
    fn new(level: u8, out: W) -> Self {
        let flags = miniz_oxide::deflate::core::create_comp_flags_from_zip_params(level.into(), 1, 0);
        RowDeflater { compressor: miniz_oxide::deflate::core::CompressorOxide::new(flags), out }
    }

    fn write(&mut self, row: &[u8]) {
        self.deflate(row, miniz_oxide::deflate::core::TDEFLFlush::None);
    }

    fn finish(mut self) -> W {
        self.deflate(&[], miniz_oxide::deflate::core::TDEFLFlush::Finish);
        self.out
    }

    fn deflate(&mut self, mut input: &[u8], flush: miniz_oxide::deflate::core::TDEFLFlush) {
        use miniz_oxide::deflate::core::{TDEFLFlush, TDEFLStatus, compress_to_output};
        loop {
            let out = &mut self.out;
            let (status, taken) = compress_to_output(&mut self.compressor, input, flush, |bytes| {
                out.write_all(bytes).expect(WRITE_TO_VEC);
                true
            });
            input = &input[taken.min(input.len())..];
            match status {
                TDEFLStatus::Done => return,
                TDEFLStatus::Okay if input.is_empty() && flush == TDEFLFlush::None => return,
                TDEFLStatus::Okay if taken > 0 || flush != TDEFLFlush::None => {}
                _ => unreachable!("miniz_oxide took no input it was given ({status:?})"),
            }
        }
    }
}

/// Counts what is written, keeps nothing: a size without the bytes.
#[derive(Default)]
struct CountingSink(usize);

impl std::io::Write for CountingSink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0 += data.len();
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Filter {
    Sub = 1,
    Up = 2,
    Avg = 3,
    Paeth = 4,
}

/// `current` filtered into `out` by the filter whose output sums least (the png crate's
/// `adaptive_filter` with `sum_buffer`: it stops at a sum of 0, a later filter wins a tie). The
/// four sums come from one pass that writes nothing ([`filter_costs`]); only the winner is written.
fn filter_row(bpp: usize, previous: &[u8], current: &[u8], out: &mut [u8]) -> Filter {
    let mut best = (u64::MAX, Filter::Up);
    for (filter, cost) in
        [Filter::Up, Filter::Sub, Filter::Avg, Filter::Paeth].into_iter().zip(filter_costs(bpp, previous, current))
    {
        if cost <= best.0 {
            best = (cost, filter);
            if cost == 0 {
                break;
            }
        }
    }
    apply(best.1, bpp, previous, current, out);
    best.1
}

/// The sums of the bytes, read as signed, that Up, Sub, Avg and Paeth would write for `current`,
/// in that order: one read of each byte and its three neighbours for all four, where filtering
/// each in turn read and wrote the row four times.
fn filter_costs(bpp: usize, previous: &[u8], current: &[u8]) -> [u64; 4] {
    let bpp = bpp.min(current.len());
    let mut sums = [0u64; 4];
    // The first pixel's bytes have no left neighbours: the filters read zeros there.
    for (&c, &b) in current[..bpp].iter().zip(&previous[..bpp]) {
        add_costs(&mut sums, c, 0, b, 0);
    }
    let len = current.len() - bpp;
    let neighbours = [&current[bpp..], &current[..len], &previous[bpp..], &previous[..len]];
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    let done = simd128::add_costs(neighbours, &mut sums);
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    let done = 0;
    let [cur, left, up, up_left] = neighbours.map(|bytes| &bytes[done..]);
    for (((&c, &a), &b), &ul) in cur.iter().zip(left).zip(up).zip(up_left) {
        add_costs(&mut sums, c, a, b, ul);
    }
    sums
}

/// Adds to `sums` what each filter writes for byte `c` with left neighbour `a`, upper `b` and
/// upper-left `ul`.
#[inline(always)]
fn add_costs(sums: &mut [u64; 4], c: u8, a: u8, b: u8, ul: u8) {
    let filtered =
        [c.wrapping_sub(b), c.wrapping_sub(a), c.wrapping_sub(average(a, b)), c.wrapping_sub(paeth(a, b, ul))];
    for (sum, filtered) in sums.iter_mut().zip(filtered) {
        *sum += cost(filtered);
    }
}

/// A filtered byte's part of its row's sum: the byte read as signed, its magnitude.
#[inline(always)]
fn cost(filtered: u8) -> u64 {
    u64::from((filtered as i8).unsigned_abs())
}

/// `(a + b) / 2` without leaving a byte.
#[inline(always)]
fn average(a: u8, b: u8) -> u8 {
    (a & b) + ((a ^ b) >> 1)
}

/// [`filter_costs`] sixteen bytes at a time in the wasm build: written out, because the compiler
/// left the scalar loop's Paeth and the widening sums to shuffles and scalar steps (9% of the
/// screenshot fit's samples). The same arithmetic as the scalar loop in 8-bit lanes; the host's
/// test that the sandbox and a native build write the same PNG holds the two to the same choices.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use core::arch::wasm32::*;

    /// Adds the costs of the first whole sixteens of bytes (current, left, up, upper-left) to
    /// `sums`; returns how many bytes that was.
    pub(super) fn add_costs([cur, left, up, up_left]: [&[u8]; 4], sums: &mut [u64; 4]) -> usize {
        let whole = cur.len().min(left.len()).min(up.len()).min(up_left.len()) / 16 * 16;
        let absolute_difference = |x: v128, y: v128| u8x16_sub(u8x16_max(x, y), u8x16_min(x, y));
        let mut at = 0;
        while at < whole {
            // Each step adds at most 2 x 128 to a 16-bit lane: 255 steps fit.
            let stop = (at + 16 * 255).min(whole);
            let mut lanes = [u16x8_splat(0); 4];
            while at < stop {
                // SAFETY: `at + 16 <= whole`, which is within every slice; wasm loads need no
                // alignment.
                let [c, a, b, ul] =
                    [cur, left, up, up_left].map(|bytes| unsafe { v128_load(bytes.as_ptr().add(at).cast::<v128>()) });
                let average = u8x16_add(v128_and(a, b), u8x16_shr(v128_xor(a, b), 1));
                let (pa, pb) = (absolute_difference(b, ul), absolute_difference(a, ul));
                let between = v128_not(v128_xor(u8x16_lt(a, ul), u8x16_lt(ul, b)));
                let pc = v128_bitselect(absolute_difference(pa, pb), u8x16_splat(255), between);
                let to_a = v128_and(u8x16_le(pa, pb), u8x16_le(pa, pc));
                let paeth = v128_bitselect(a, v128_bitselect(b, ul, u8x16_le(pb, pc)), to_a);
                let filtered = [u8x16_sub(c, b), u8x16_sub(c, a), u8x16_sub(c, average), u8x16_sub(c, paeth)];
                for (lane, filtered) in lanes.iter_mut().zip(filtered) {
                    *lane = i16x8_add(*lane, u16x8_extadd_pairwise_u8x16(i8x16_abs(filtered)));
                }
                at += 16;
            }
            for (sum, lane) in sums.iter_mut().zip(lanes) {
                let wide = u32x4_extadd_pairwise_u16x8(lane);
                *sum += u64::from(u32x4_extract_lane::<0>(wide))
                    + u64::from(u32x4_extract_lane::<1>(wide))
                    + u64::from(u32x4_extract_lane::<2>(wide))
                    + u64::from(u32x4_extract_lane::<3>(wide));
            }
        }
        whole
    }
}

/// Each filter over whole slices zipped together (the first `bpp` bytes, which have no left
/// neighbour, apart), so the loops carry no bounds checks and vectorise, as the png crate's do:
/// this runs four times over every row.
fn apply(filter: Filter, bpp: usize, previous: &[u8], current: &[u8], out: &mut [u8]) {
    let bpp = bpp.min(current.len());
    let (out_head, out_rest) = out.split_at_mut(bpp);
    let (cur_head, cur_rest) = current.split_at(bpp);
    let (prev_head, prev_rest) = previous.split_at(bpp);
    let left = &current[..current.len() - bpp];
    let up_left = &previous[..previous.len() - bpp];
    match filter {
        Filter::Sub => {
            out_head.copy_from_slice(cur_head);
            for ((o, &c), &a) in out_rest.iter_mut().zip(cur_rest).zip(left) {
                *o = c.wrapping_sub(a);
            }
        }
        Filter::Up => {
            for ((o, &c), &b) in out.iter_mut().zip(current).zip(previous) {
                *o = c.wrapping_sub(b);
            }
        }
        Filter::Avg => {
            for ((o, &c), &b) in out_head.iter_mut().zip(cur_head).zip(prev_head) {
                *o = c.wrapping_sub(b / 2);
            }
            for (((o, &c), &a), &b) in out_rest.iter_mut().zip(cur_rest).zip(left).zip(prev_rest) {
                *o = c.wrapping_sub(average(a, b));
            }
        }
        Filter::Paeth => {
            for ((o, &c), &b) in out_head.iter_mut().zip(cur_head).zip(prev_head) {
                *o = c.wrapping_sub(paeth(0, b, 0));
            }
            for ((((o, &c), &a), &b), &ul) in out_rest.iter_mut().zip(cur_rest).zip(left).zip(prev_rest).zip(up_left) {
                *o = c.wrapping_sub(paeth(a, b, ul));
            }
        }
    }
}

/// The PNG specification's Paeth predictor of a byte from its left (`a`), upper (`b`) and
/// upper-left (`c`) ones: the one nearest `a + b - c`, ties to `a`, then `b`. In FPNGE's form
/// (the png crate's filter uses it too), all in bytes, so that it vectorises: where `c` is not
/// between `a` and `b`, `|a + b - 2c|` exceeds both other distances and never wins.
#[inline]
fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let pa = b.abs_diff(c);
    let pb = a.abs_diff(c);
    let pc = if (a < c) == (c < b) { pa.abs_diff(pb) } else { u8::MAX };
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(name: &str) -> DynamicImage {
        image::open(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/photos").join(name)).unwrap()
    }

    /// The png crate's fast pass (through the image crate's encoder), the reference.
    fn png_crates_fast_pass(img: &DynamicImage) -> Vec<u8> {
        use image::codecs::png::{CompressionType, FilterType, PngEncoder};
        let mut out = Vec::new();
        img.write_with_encoder(PngEncoder::new_with_quality(&mut out, CompressionType::Fast, FilterType::Adaptive))
            .unwrap();
        out
    }

    /// A PNG's image data, inflated: its filtered rows.
    fn inflated_rows(png: &[u8]) -> Vec<u8> {
        let mut zlib = Vec::new();
        let mut at = 8;
        while at + 12 <= png.len() {
            let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            if &png[at + 4..at + 8] == b"IDAT" {
                zlib.extend_from_slice(&png[at + 8..at + 8 + len]);
            }
            at += 12 + len;
        }
        miniz_oxide::inflate::decompress_to_vec_zlib(&zlib).unwrap()
    }

    fn every_colour_type() -> Vec<DynamicImage> {
        let img = corpus("kodim23.png");
        vec![
            corpus("lorem_ipsum_screenshot.png"),
            DynamicImage::ImageLuma8(img.to_luma8()),
            DynamicImage::ImageLumaA8(img.to_luma_alpha8()),
            DynamicImage::ImageRgba8(img.to_rgba8()),
            DynamicImage::ImageLuma16(img.to_luma16()),
            DynamicImage::ImageLumaA16(img.to_luma_alpha16()),
            DynamicImage::ImageRgb16(img.to_rgb16()),
            DynamicImage::ImageRgba16(img.to_rgba16()),
            img,
        ]
    }

    #[test]
    fn the_fast_pass_is_the_png_crates_byte_for_byte() {
        for img in every_colour_type() {
            let ours = PngRows::of(&img).unwrap().fast_pass();
            assert!(ours == png_crates_fast_pass(&img), "{:?}", img.color());
            assert_eq!(image::load_from_memory(&ours).unwrap().as_bytes(), img.as_bytes());
        }
    }

    /// The rows every level deflates are the png crate's filtered rows; a sample's rows are the
    /// whole image's rows of those bands.
    #[test]
    fn the_filtered_rows_are_the_png_crates_and_a_samples_rows_the_images() {
        for img in every_colour_type() {
            let rows = PngRows::of(&img).unwrap();
            let all = rows.filtered(0..rows.height());
            assert!(all.bytes == inflated_rows(&png_crates_fast_pass(&img)), "{:?}", img.color());
            let at_level = rows.at_level(1);
            let held = miniz_oxide::deflate::compress_to_vec_zlib(&all.bytes, 1).len() + 8 + 25 + 12 + 12;
            assert!(
                at_level.len().abs_diff(held) <= held / 1000,
                "{:?}: {} against {held}",
                img.color(),
                at_level.len()
            );
            assert_eq!(image::load_from_memory(&at_level).unwrap().as_bytes(), img.as_bytes());
            assert_eq!(inflated_rows(&at_level), all.bytes);
            let ys = [0, 5, 6, 40, rows.height() - 1];
            let sample = rows.filtered(ys.into_iter());
            for (row, y) in sample.bytes.chunks(all.row_len).zip(ys) {
                assert!(row == &all.bytes[y as usize * all.row_len..][..all.row_len], "row {y}");
            }
        }
    }

    /// Noise: the fast pass would be larger than stored blocks, so stored blocks are written, as
    /// the png crate does (it stores the rows unfiltered, the same size).
    #[test]
    fn noise_is_stored() {
        let noise = DynamicImage::ImageRgb8(crate::test_images::noise(300, 200).to_rgb8());
        let rows = PngRows::of(&noise).unwrap();
        let ours = rows.fast_pass();
        assert_eq!(ours.len(), png_crates_fast_pass(&noise).len());
        assert_eq!(ours.len(), 8 + 25 + 12 + stored_size(300 * 3 * 200 + 200) + 12);
        assert_eq!(image::load_from_memory(&ours).unwrap().as_bytes(), noise.as_bytes());
        assert_eq!(rows.filtered(0..200).fast_len(), stored_size(300 * 3 * 200 + 200));
    }

    #[test]
    fn a_sample_measures_what_the_whole_writes() {
        let img = corpus("lorem_ipsum_screenshot.png");
        let rows = PngRows::of(&img).unwrap();
        let all = rows.filtered(0..rows.height());
        assert_eq!(all.fast_len() + 8 + 25 + 12 + 12, rows.fast_pass().len());
        assert_eq!(all.level_len(1) + 8 + 25 + 12 + 12, rows.at_level(1).len());
    }

    /// The specification's Paeth predictor, as written there.
    fn spec_paeth(a: u8, b: u8, c: u8) -> u8 {
        let p = i16::from(a) + i16::from(b) - i16::from(c);
        let (pa, pb, pc) = ((p - i16::from(a)).abs(), (p - i16::from(b)).abs(), (p - i16::from(c)).abs());
        if pa <= pb && pa <= pc {
            a
        } else if pb <= pc {
            b
        } else {
            c
        }
    }

    #[test]
    fn the_paeth_predictor_is_the_specifications_for_every_triple() {
        for a in 0..=255 {
            for b in 0..=255 {
                for c in 0..=255 {
                    assert_eq!(paeth(a, b, c), spec_paeth(a, b, c), "a {a} b {b} c {c}");
                }
            }
        }
    }

    /// The one-pass sums are what filtering the row by each filter and summing its bytes gives.
    #[test]
    fn the_filter_costs_are_the_sums_of_each_filters_output() {
        let mut next = crate::test_images::xorshift(0x2545_f491);
        let mut byte = || (next() >> 24) as u8;
        for bpp in 1..=4 {
            for len in [bpp, bpp + 1, 31, 32 + bpp, 97, 1000] {
                let len = len - len % bpp;
                let previous: Vec<u8> = (0..len).map(|_| byte()).collect();
                // Smooth rows too, where small sums and ties decide.
                let current: Vec<u8> =
                    (0..len).map(|i| if len > 40 { previous[i].wrapping_add(byte() % 3) } else { byte() }).collect();
                let mut out = vec![0u8; len];
                let expected = [Filter::Up, Filter::Sub, Filter::Avg, Filter::Paeth].map(|filter| {
                    apply(filter, bpp, &previous, &current, &mut out);
                    out.iter().map(|&b| u64::from((b as i8).unsigned_abs())).sum::<u64>()
                });
                assert_eq!(filter_costs(bpp, &previous, &current), expected, "bpp {bpp}, {len} bytes");
            }
        }
    }

    #[test]
    fn a_one_pixel_image_and_a_float_one() {
        let one = DynamicImage::ImageRgb8(image::RgbImage::from_pixel(1, 1, image::Rgb([9, 200, 31])));
        let png = PngRows::of(&one).unwrap().fast_pass();
        assert_eq!(image::load_from_memory(&png).unwrap().as_bytes(), one.as_bytes());
        assert!(matches!(PngRows::of(&DynamicImage::new_rgb32f(2, 2)), Err(ImageError::Unsupported(_))));
    }
}
