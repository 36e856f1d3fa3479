//! LogLuv and LogL pages (photometric 32845 and 32844 under SGILog compression, 34676): Greg
//! Ward Larson's high-dynamic-range encodings, which libtiff reads (so ImageMagick and libvips do)
//! and Pillow does not. A LogLuv pixel is 32 bits, a 16-bit log luminance (a sign and 15 bits)
//! and 8 bits each of the CIE u' and v' chromaticity; a LogL pixel is the luminance alone. Each
//! row is stored as byte planes, most significant first, each run-length coded on its own.
//!
//! The page is rendered as libtiff renders it for an 8-bit reader (`TIFFReadRGBAImage`, which
//! ImageMagick uses): luminance 1.0 is white, CCIR-709 primaries, a 2.0 gamma. No tone mapping:
//! what the file calls brighter than white is white, as it is in every 8-bit reference.
//!
//! SGILog24 (34677, a 10-bit luminance and a 14-bit index into libtiff's chromaticity table) is
//! not read here.

use image::{DynamicImage, GrayImage, RgbImage};
use tiff::tags::Tag;

use super::{ChunkPlaces, PHOTOMETRIC_BLACK_IS_ZERO, open, photometric_in_file, with_photometric, words};

pub(super) const PHOTOMETRIC_LOG_L: u16 = 32844;
pub(super) const PHOTOMETRIC_LOG_LUV: u16 = 32845;
const COMPRESSION_SGILOG: u16 = 34676;

/// libtiff's `UVSCALE`: u' and v' are stored as `floor(410 × value)`.
const UV_SCALE: f64 = 410.0;

/// The first page's photometric interpretation when it is LogL or LogLuv.
pub(super) fn photometric(bytes: &[u8]) -> Option<u16> {
    photometric_in_file(bytes).filter(|&p| matches!(p, PHOTOMETRIC_LOG_L | PHOTOMETRIC_LOG_LUV))
}

/// A copy of the file that calls the page BlackIsZero, for the `tiff` crate's decoder: it opens
/// no file of an interpretation it does not know, and its tag and chunk readers are all this
/// module uses of it.
pub(super) fn openable(bytes: &[u8]) -> Result<Vec<u8>, String> {
    with_photometric(bytes, PHOTOMETRIC_BLACK_IS_ZERO).ok_or_else(|| "the TIFF's photometric tag cannot be read".into())
}

/// The first page of a LogLuv or LogL TIFF (`photometric`).
pub(super) fn decode(bytes: &[u8], photometric: u16) -> Result<DynamicImage, String> {
    let copy = openable(bytes)?;
    let mut decoder = open(&copy)?;
    let (width, height) = decoder.dimensions().map_err(words)?;
    let compression = decoder.find_tag_unsigned::<u16>(Tag::Compression).map_err(words)?.unwrap_or(1);
    if compression != COMPRESSION_SGILOG {
        return Err(format!("a LogLuv TIFF under compression {compression} is not converted (only SGILog, 34676)"));
    }
    let planar = decoder.find_tag_unsigned::<u16>(Tag::PlanarConfiguration).map_err(words)? == Some(2);
    if planar {
        return Err("a planar LogLuv TIFF is not converted".into());
    }
    let luv = photometric == PHOTOMETRIC_LOG_LUV;
    let (byte_planes, channels) = if luv { (4, 3) } else { (2, 1) };
    let (cw, ch) = decoder.chunk_dimensions();
    if cw == 0 || ch == 0 {
        return Err("the TIFF's strips or tiles are empty".into());
    }
    let tiled = decoder.find_tag(Tag::TileWidth).map_err(words)?.is_some();
    let places = ChunkPlaces::of(&mut decoder)?;
    let across = width.div_ceil(cw);
    let chunks = across * height.div_ceil(ch);
    let total = (width as usize).checked_mul(height as usize).and_then(|n| n.checked_mul(channels));
    let mut out = vec![0u8; total.ok_or("the TIFF is too large")?];
    let mut row = vec![0u32; cw as usize];
    for chunk in 0..chunks {
        let (x0, y0) = ((chunk % across) * cw, (chunk / across) * ch);
        let (dw, dh) = ((width - x0).min(cw) as usize, (height - y0).min(ch) as usize);
        // A strip holds its own rows only; a tile is whole, padding included.
        let rows = if tiled { ch as usize } else { dh };
        let mut data = Runs { bytes: places.bytes(chunk as usize)?, at: 0 };
        for y in 0..rows {
            if !data.row(&mut row, byte_planes) {
                return Err(format!("the LogLuv TIFF's data end before row {} of its strip or tile {chunk}", y + 1));
            }
            if y >= dh {
                continue;
            }
            let start = ((y0 as usize + y) * width as usize + x0 as usize) * channels;
            let line = &mut out[start..start + dw * channels];
            if luv {
                for (px, &p) in line.chunks_exact_mut(3).zip(&row) {
                    px.copy_from_slice(&xyz_to_rgb24(log_luv32_to_xyz(p)));
                }
            } else {
                for (px, &p) in line.iter_mut().zip(&row) {
                    *px = gamma_2(log_l16_to_y(p as u16));
                }
            }
        }
    }
    let short = || "the TIFF's pixels are shorter than its size".to_string();
    if luv {
        RgbImage::from_raw(width, height, out).map(DynamicImage::ImageRgb8).ok_or_else(short)
    } else {
        GrayImage::from_raw(width, height, out).map(DynamicImage::ImageLuma8).ok_or_else(short)
    }
}

/// A chunk's run-length coded bytes, read row after row.
struct Runs<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Runs<'_> {
    /// The next row of `row.len()` pixels, `planes` bytes each (`false`: the data end first).
    ///
    /// As libtiff's `LogLuvDecode32`/`LogLuvDecode16`: a control byte of 128 or more is a run of
    /// (byte − 126) copies of the next byte; a smaller one is that many literal bytes. A run or a
    /// literal string may pass the row's end; what passes it is dropped, and a literal string cut
    /// by the row's end leaves its remaining bytes to be read as control bytes, as libtiff reads
    /// them.
    fn row(&mut self, row: &mut [u32], planes: u32) -> bool {
        row.fill(0);
        let n = row.len();
        for plane in (0..planes).rev() {
            let shift = 8 * plane;
            let mut i = 0;
            while i < n && self.at < self.bytes.len() {
                let control = self.bytes[self.at];
                if control >= 128 {
                    let Some(&value) = self.bytes.get(self.at + 1) else { break };
                    self.at += 2;
                    let run = usize::from(control) - 126;
                    let end = (i + run).min(n);
                    row[i..end].iter_mut().for_each(|p| *p |= u32::from(value) << shift);
                    i = end;
                } else {
                    self.at += 1;
                    let literal = usize::from(control).min(n - i).min(self.bytes.len() - self.at);
                    for &value in &self.bytes[self.at..self.at + literal] {
                        row[i] |= u32::from(value) << shift;
                        i += 1;
                    }
                    self.at += literal;
                }
            }
            if i != n {
                return false;
            }
        }
        true
    }
}

/// libtiff's `LogL16toY`: luminance from a sign bit and 15 bits of log₂ in 256ths, offset by 64.
fn log_l16_to_y(p16: u16) -> f64 {
    let le = p16 & 0x7FFF;
    if le == 0 {
        return 0.0;
    }
    let y = (std::f64::consts::LN_2 / 256.0 * (f64::from(le) + 0.5) - std::f64::consts::LN_2 * 64.0).exp();
    if p16 & 0x8000 == 0 { y } else { -y }
}

/// libtiff's `LogLuv32toXYZ` (its results stored as `float`, as libtiff stores them).
fn log_luv32_to_xyz(p: u32) -> [f32; 3] {
    let l = log_l16_to_y((p >> 16) as u16);
    if l <= 0.0 {
        return [0.0; 3];
    }
    let u = (f64::from(p >> 8 & 0xFF) + 0.5) / UV_SCALE;
    let v = (f64::from(p & 0xFF) + 0.5) / UV_SCALE;
    let s = 1.0 / (6.0 * u - 16.0 * v + 12.0);
    let (x, y) = (9.0 * u * s, 4.0 * v * s);
    [(x / y * l) as f32, l as f32, ((1.0 - x - y) / y * l) as f32]
}

/// libtiff's `XYZtoRGB24`: CCIR-709 primaries, then [`gamma_2`].
fn xyz_to_rgb24([x, y, z]: [f32; 3]) -> [u8; 3] {
    let (x, y, z) = (f64::from(x), f64::from(y), f64::from(z));
    let r = 2.690 * x + -1.276 * y + -0.414 * z;
    let g = -1.022 * x + 1.978 * y + 0.044 * z;
    let b = 0.061 * x + -0.224 * y + 1.163 * z;
    [gamma_2(r), gamma_2(g), gamma_2(b)]
}

/// libtiff's 8-bit level of a linear value: a 2.0 gamma, 1.0 and over white (its `L16toGry`).
fn gamma_2(linear: f64) -> u8 {
    if linear <= 0.0 {
        0
    } else if linear >= 1.0 {
        255
    } else {
        (256.0 * linear.sqrt()) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luminance_is_libtiffs_log_scale_and_levels_its_square_root() {
        // Le = 256 × (log₂ Y + 64): 64 × 256 is Y = 1 (less half a step, as libtiff adds .5).
        assert_eq!(log_l16_to_y(0), 0.0);
        let one = log_l16_to_y(64 * 256);
        assert!((one - 1.0).abs() < 0.003, "{one}");
        let quarter = log_l16_to_y(62 * 256);
        assert!((quarter - 0.25).abs() < 0.001, "{quarter}");
        assert_eq!(gamma_2(quarter), 128);
        assert!(log_l16_to_y(0x8000 | (62 * 256)) < 0.0, "the sign bit");
        assert_eq!(gamma_2(-0.5), 0);
        assert_eq!(gamma_2(7.0), 255);
    }

    #[test]
    fn a_row_is_byte_planes_of_runs_and_literals_as_libtiff_reads_them() {
        // Three pixels, two planes: a run of 3 (129 = 3 + 126); then 2 literals and a run of 2
        // (128) that the row's end cuts to 1.
        let mut runs = Runs { bytes: &[129, 0x12, 2, 0x34, 0x56, 128, 0x78, 0x9A], at: 0 };
        let mut row = [0u32; 3];
        assert!(runs.row(&mut row, 2));
        assert_eq!(row, [0x1234, 0x1256, 0x1278]);
        // What is left (0x9A, a run with no byte to repeat) cannot fill a row.
        assert!(!runs.row(&mut row, 2));
        // A literal string cut by the row's end leaves its tail to be read as control bytes.
        let mut runs = Runs { bytes: &[3, 1, 2, 3, 128, 9], at: 0 };
        let mut row = [0u32; 2];
        assert!(runs.row(&mut row, 1));
        assert_eq!(row, [1, 2]);
        assert!(runs.row(&mut row, 1));
        assert_eq!(row, [128, 9], "the 3 left over is read as a count of literals");
        assert!(!runs.row(&mut row, 1));
    }

    #[test]
    fn libtiffs_neutral_chromaticity_at_luminance_one_is_white() {
        // libtiff's primaries put white at equal energy (u' 4/19, v' 9/19, its U_NEU and V_NEU).
        let code = |c: f64| (c * UV_SCALE) as u32;
        let p = (64u32 * 256) << 16 | code(4.0 / 19.0) << 8 | code(9.0 / 19.0);
        let rgb = xyz_to_rgb24(log_luv32_to_xyz(p));
        assert!(rgb.iter().all(|&c| c >= 250), "{rgb:?}");
    }
}
