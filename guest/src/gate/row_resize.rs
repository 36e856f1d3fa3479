//! The Lanczos3 fit of the downsample ladder, fed rows as a decoder yields them: a band of output
//! rows is made as soon as the source rows under its filter window have arrived, and source rows
//! no later band needs are dropped. A 4000×3000 decode is then never held whole: the guest holds
//! the window (tens of rows) and the fitted image, instead of the decode (36 MB of RGB for 12 MP),
//! fast_image_resize's intermediate pass (4000×1500, 18 MB) and the fitted image.
//!
//! Each band is one `fast_image_resize` call on the window with a fractional crop box that puts its
//! output rows exactly where the whole-image resize puts them, so the arithmetic is the same
//! (same filter, same SIMD kernels, vertical pass then horizontal for 8-bit pixels); only the
//! fixed-point rounding of a band's coefficients may differ (BENCHMARKS.md: PSNR against the
//! whole-image resize in `tests`).

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};
use image::{ColorType, DynamicImage};

/// Output rows made per band. Each band is one resize call, and each call computes the horizontal
/// filter's coefficients again (two sines per tap, ~52,000 for 4000 → 2000 columns: slow in wasm,
/// where `sin` is software): with 16-row bands the fits took 22–31% longer in V8 than the
/// whole-image resize. 256 rows make a 2000-row fit eight calls; the window is then ~530 source
/// rows (6 MB for a 4000-wide RGB image), still far under the whole decode.
pub(crate) const BAND_ROWS: u32 = 256;
/// Lanczos3's support, in source pixels at scale 1 (fast_image_resize widens it by the scale).
const LANCZOS3_SUPPORT: f64 = 3.0;

pub(crate) struct RowResizer {
    src: (u32, u32),
    dst: (u32, u32),
    color: ColorType,
    pixel: PixelType,
    row_bytes: usize,
    /// Source rows `window_top..window_top + window_rows`, at the front of a buffer sized once
    /// for the most rows a band reads.
    window: Vec<u8>,
    window_top: u32,
    window_rows: usize,
    rows_in: u32,
    /// Output rows `0..next_out` are made.
    next_out: u32,
    out: Vec<u8>,
    resizer: Resizer,
}

/// fast_image_resize's pixel type for the 8-bit layouts the decoders stream; others go whole.
fn pixel_type(color: ColorType) -> Option<PixelType> {
    Some(match color {
        ColorType::L8 => PixelType::U8,
        ColorType::La8 => PixelType::U8x2,
        ColorType::Rgb8 => PixelType::U8x3,
        ColorType::Rgba8 => PixelType::U8x4,
        _ => return None,
    })
}

impl RowResizer {
    /// `None` when the layout is not one this resizer takes (16-bit, float) or nothing shrinks.
    pub(crate) fn new(src: (u32, u32), dst: (u32, u32), color: ColorType) -> Option<Self> {
        let pixel = pixel_type(color)?;
        if src == dst || dst.0 == 0 || dst.1 == 0 || dst.0 > src.0 || dst.1 > src.1 {
            return None;
        }
        let row_bytes = src.0 as usize * pixel.size();
        let out = vec![0; dst.0 as usize * dst.1 as usize * pixel.size()];
        // The most rows a band reads, allocated once so that the window never grows by doubling.
        let scale = f64::from(src.1) / f64::from(dst.1);
        let most_rows = (f64::from(BAND_ROWS) * scale + 2.0 * LANCZOS3_SUPPORT * scale.max(1.0)).ceil() as usize + 2;
        Some(RowResizer {
            src,
            dst,
            color,
            pixel,
            row_bytes,
            window: vec![0; most_rows.min(src.1 as usize) * row_bytes],
            window_top: 0,
            window_rows: 0,
            rows_in: 0,
            next_out: 0,
            out,
            resizer: Resizer::new(),
        })
    }

    /// Source rows `[first, end)` under the filter of output rows `[j0, j1)`, as fast_image_resize
    /// computes them (centre `(j + 0.5) × scale`, radius `3 × scale`).
    fn source_rows(&self, j0: u32, j1: u32) -> (u32, u32) {
        let scale = self.scale();
        let radius = LANCZOS3_SUPPORT * scale.max(1.0);
        let first = ((f64::from(j0) + 0.5) * scale - radius).floor().max(0.0) as u32;
        let end = ((f64::from(j1) - 0.5) * scale + radius).ceil().min(f64::from(self.src.1)) as u32;
        (first, end)
    }

    fn scale(&self) -> f64 {
        f64::from(self.src.1) / f64::from(self.dst.1)
    }

    /// One source row (`src.0` pixels of the layout given to `new`), top to bottom.
    pub(crate) fn push_row(&mut self, row: &[u8]) -> Result<(), String> {
        if row.len() != self.row_bytes {
            return Err("a decoded row does not match the image's declared size".into());
        }
        self.next_row()?.copy_from_slice(row);
        self.row_written()
    }

    /// Whether source rows are still to come.
    pub(crate) fn wants_rows(&self) -> bool {
        self.rows_in < self.src.1
    }

    /// Where the next source row goes in the window, for a decoder to write it there itself (the
    /// row is then not copied again); [`RowResizer::row_written`] takes it once written.
    pub(crate) fn next_row(&mut self) -> Result<&mut [u8], String> {
        if !self.wants_rows() {
            return Err("a decoder gave more rows than the image's declared size".into());
        }
        let end = (self.window_rows + 1) * self.row_bytes;
        if end > self.window.len() {
            self.window.resize(end, 0);
        }
        Ok(&mut self.window[end - self.row_bytes..end])
    }

    /// The row [`RowResizer::next_row`] gave is written: every band whose source rows have all
    /// come is made.
    pub(crate) fn row_written(&mut self) -> Result<(), String> {
        if !self.wants_rows() {
            return Err("a decoder gave more rows than the image's declared size".into());
        }
        self.window_rows += 1;
        self.rows_in += 1;
        while self.next_out < self.dst.1 {
            let j1 = (self.next_out + BAND_ROWS).min(self.dst.1);
            let (_, end) = self.source_rows(self.next_out, j1);
            if self.rows_in < end {
                break;
            }
            self.make_band(j1)?;
        }
        Ok(())
    }

    /// Output rows `next_out..j1` from the window, then the window trimmed to what the next band reads.
    fn make_band(&mut self, j1: u32) -> Result<(), String> {
        let j0 = self.next_out;
        let (first, end) = self.source_rows(j0, j1);
        let scale = self.scale();
        let rows = end - first;
        let at = (first - self.window_top) as usize * self.row_bytes;
        let src = ImageRef::new(self.src.0, rows, &self.window[at..at + rows as usize * self.row_bytes], self.pixel)
            .map_err(|e| e.to_string())?;
        let out_row = self.dst.0 as usize * self.pixel.size();
        let dst_bytes = &mut self.out[j0 as usize * out_row..j1 as usize * out_row];
        let mut dst = Image::from_slice_u8(self.dst.0, j1 - j0, dst_bytes, self.pixel).map_err(|e| e.to_string())?;
        // The band's rows in window coordinates: where the whole-image resize centres them.
        let top = f64::from(j0) * scale - f64::from(first);
        let height = (f64::from(j1 - j0) * scale).min(f64::from(rows) - top);
        let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3)).crop(
            0.0,
            top,
            f64::from(self.src.0),
            height,
        );
        self.resizer.resize(&src, &mut dst, &options).map_err(|e| e.to_string())?;
        self.next_out = j1;
        let keep_from = if j1 < self.dst.1 { self.source_rows(j1, (j1 + BAND_ROWS).min(self.dst.1)).0 } else { end };
        let drop_rows = (keep_from.saturating_sub(self.window_top) as usize).min(self.window_rows);
        self.window.copy_within(drop_rows * self.row_bytes..self.window_rows * self.row_bytes, 0);
        self.window_rows -= drop_rows;
        self.window_top += drop_rows as u32;
        Ok(())
    }

    /// The fitted image, once every source row has come.
    pub(crate) fn finish(self) -> Result<DynamicImage, String> {
        if self.rows_in != self.src.1 || self.next_out != self.dst.1 {
            return Err(format!("the decoder gave {} of the image's {} rows", self.rows_in, self.src.1));
        }
        let (w, h) = self.dst;
        let img = match self.color {
            ColorType::L8 => image::GrayImage::from_raw(w, h, self.out).map(DynamicImage::ImageLuma8),
            ColorType::La8 => image::GrayAlphaImage::from_raw(w, h, self.out).map(DynamicImage::ImageLumaA8),
            ColorType::Rgb8 => image::RgbImage::from_raw(w, h, self.out).map(DynamicImage::ImageRgb8),
            _ => image::RgbaImage::from_raw(w, h, self.out).map(DynamicImage::ImageRgba8),
        };
        img.ok_or_else(|| "the fitted image's buffer does not match its size".into())
    }
}

#[cfg(test)]
mod tests;
