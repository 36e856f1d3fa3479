//! The BMP and ICO-entry layouts the image crate's BMP decoder refuses though Chromium and Pillow
//! read them: RLE4/RLE8 data (top-down too, runs past a row's end clamped as both clamp them,
//! pixels the data never reaches left transparent as Chromium leaves them), 16/32-bit bitfields
//! with a channel's mask zero (that channel 0), a `planes` field other than 1 (ignored by both),
//! an OS/2 2.x header (read as the BITMAPINFOHEADER it begins with, as Pillow reads it; OS/2's
//! own Huffman 1D and RLE24 refused in words); and an ICO's BMP entry: the colour rows, then the
//! AND mask, unless the entry is 32-bit with alpha data (then the alpha channel decides and a
//! short or conflicting mask is ignored).
//!
//! Every size is read from the header and bounded by the caller ([`super::raster`]'s header
//! checks) before any allocation; every read of the data is checked, so a cut or corrupt file is
//! refused in words, never a trap. RLE data cut before its last row is refused: Pillow and
//! Chromium fail on it too.

use std::borrow::Cow;
use std::io::Cursor;

use image::codecs::bmp::BmpDecoder;
use image::{DynamicImage, ImageDecoder, RgbaImage};

use crate::gate::decode::decode_limits;

/// What a DIB header says (BITMAPCOREHEADER, BITMAPINFOHEADER and its V2-V5 extensions, or
/// OS/2 2.x's BITMAPCOREHEADER2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Dib {
    header_size: usize,
    /// An OS/2 2.x header (16 to 64 bytes, other than the Windows sizes 40, 52 and 56).
    os2: bool,
    pub width: u32,
    /// |height|: the rows of the bitmap (an ICO entry's counts its AND mask's rows too).
    pub height: u32,
    top_down: bool,
    planes: u16,
    pub bits: u16,
    compression: u32,
    /// The red, green, blue and alpha masks of a bitfields bitmap.
    masks: Option<[u32; 4]>,
    /// Where the colour table starts, from the DIB's start; its entries; bytes per entry.
    palette_at: usize,
    palette_len: usize,
    palette_entry: usize,
}

const BI_RGB: u32 = 0;
const BI_RLE8: u32 = 1;
const BI_RLE4: u32 = 2;
const BI_BITFIELDS: u32 = 3;

impl Dib {
    /// The header at the start of `dib` (an ICO entry's data, or a BMP file past its 14 bytes).
    pub fn parse(dib: &[u8]) -> Option<Dib> {
        let u16_at = |i: usize| Some(u16::from_le_bytes(dib.get(i..i + 2)?.try_into().ok()?));
        let u32_at = |i: usize| Some(u32::from_le_bytes(dib.get(i..i + 4)?.try_into().ok()?));
        let header_size = u32_at(0)? as usize;
        let os2 = matches!(header_size, 16..=64) && !matches!(header_size, 40 | 52 | 56);
        // OS/2 2.x's header is BITMAPINFOHEADER's first 40 bytes, then fields of its own (units,
        // halftoning, colour encoding) that change nothing drawn. It may stop early, after the
        // bit count at the soonest (16 bytes, a common size), and a field it leaves out is 0.
        // Pillow reads only the whole 64-byte header; the shorter ones are read here the same.
        let field = |i: usize| if i + 4 <= header_size { u32_at(i) } else { Some(0) };
        let (width, height, top_down, planes, bits, compression, colors_used) = match header_size {
            12 => (u32::from(u16_at(4)?), u32::from(u16_at(6)?), false, u16_at(8)?, u16_at(10)?, BI_RGB, 0),
            16..=64 | 108 | 124 => {
                let width = i32::from_le_bytes(u32_at(4)?.to_le_bytes());
                let height = i32::from_le_bytes(u32_at(8)?.to_le_bytes());
                if width <= 0 || height == 0 || height == i32::MIN {
                    return None;
                }
                (
                    width.unsigned_abs(),
                    height.unsigned_abs(),
                    height < 0,
                    u16_at(12)?,
                    u16_at(14)?,
                    field(16)?,
                    field(32)?,
                )
            }
            _ => return None,
        };
        let mut palette_at = header_size;
        // OS/2's compression 3 is Huffman 1D, not bitfields.
        let masks = if compression == BI_BITFIELDS && !os2 {
            // An INFO header's masks follow it; the larger headers hold them (and alpha from V3 on).
            let at = 40;
            if header_size == 40 {
                palette_at += 12;
            }
            let alpha = if header_size >= 56 { u32_at(52)? } else { 0 };
            Some([u32_at(at)?, u32_at(at + 4)?, u32_at(at + 8)?, alpha])
        } else {
            None
        };
        let palette_len = match bits {
            1 | 2 | 4 | 8 if colors_used == 0 || colors_used > 1 << bits => 1 << bits,
            1 | 2 | 4 | 8 => colors_used as usize,
            _ => 0,
        };
        let palette_entry = if header_size == 12 { 3 } else { 4 };
        Some(Dib {
            header_size,
            os2,
            width,
            height,
            top_down,
            planes,
            bits,
            compression,
            masks,
            palette_at,
            palette_len,
            palette_entry,
        })
    }

    /// Whether this module decodes the colour rows: RLE (the image crate refuses corrupt, cut
    /// short or top-down RLE, and fills skipped pixels black where Chromium leaves them
    /// transparent) and bitfields with a channel's mask zero (the crate refuses those).
    pub fn is_ours(&self) -> bool {
        self.is_rle() || self.masks.is_some_and(|m| m[..3].contains(&0) && matches!(self.bits, 16 | 32))
    }

    /// Why the bitmap is not converted, when its compression is one of OS/2 2.x's own (Huffman
    /// 1D, RLE24): Pillow refuses both too.
    pub fn not_converted(&self) -> Option<String> {
        let name = match (self.os2, self.compression) {
            (true, 3) => "Huffman 1D",
            (true, 4) => "RLE24",
            _ => return None,
        };
        Some(format!("the BMP is an OS/2 2.x bitmap compressed with {name}, which is not converted"))
    }

    fn is_rle(&self) -> bool {
        matches!((self.compression, self.bits), (BI_RLE8, 8) | (BI_RLE4, 4))
    }

    /// Where the colour rows start when nothing says otherwise (an ICO entry): past the table.
    fn pixels_after_palette(&self) -> usize {
        self.palette_at + self.palette_len * self.palette_entry
    }

    /// Bytes per uncompressed row (rows are padded to 4 bytes).
    fn stride(&self) -> u64 {
        (u64::from(self.bits) * u64::from(self.width)).div_ceil(32) * 4
    }

    fn palette(&self, dib: &[u8]) -> Vec<[u8; 3]> {
        (0..256)
            .map(|i| {
                let at = self.palette_at + i * self.palette_entry;
                match dib.get(at..at + 3) {
                    Some(bgr) if i < self.palette_len => [bgr[2], bgr[1], bgr[0]],
                    // An index past the table is black, as the image crate's decoder has it.
                    _ => [0, 0, 0],
                }
            })
            .collect()
    }

    /// The row of the image that the `n`th row in the data is.
    fn row(&self, n: u32) -> u32 {
        if self.top_down { n } else { self.height - 1 - n }
    }
}

/// A BMP file with its harmless header quirks normalised for the image crate: a `planes` field
/// other than 1 (Chromium and Pillow ignore it) set to 1; an OS/2 2.x header, which the crate
/// does not read, rewritten as the BITMAPINFOHEADER it begins with (`with_info_header`).
pub(super) fn normalised(bytes: &[u8]) -> Cow<'_, [u8]> {
    let Some(dib) = bytes.get(14..).and_then(Dib::parse) else { return Cow::Borrowed(bytes) };
    if dib.os2 {
        return with_info_header(bytes, &dib).map_or(Cow::Borrowed(bytes), Cow::Owned);
    }
    if dib.planes == 1 {
        return Cow::Borrowed(bytes);
    }
    let at = 14 + if dib.header_size == 12 { 8 } else { 12 };
    let mut copy = bytes.to_vec();
    copy[at..at + 2].copy_from_slice(&1u16.to_le_bytes());
    Cow::Owned(copy)
}

/// An OS/2 2.x bitmap with a BITMAPINFOHEADER in place of its own: the first 40 bytes of its
/// header (the fields it leaves out 0, planes 1), then its colour table and pixels, the pixel
/// offset moved with them. Pillow reads a 64-byte OS/2 header the same way, as the INFO header's
/// fields and no further. `None`: pixels that start inside the header (left to the crate to refuse).
fn with_info_header(bytes: &[u8], dib: &Dib) -> Option<Vec<u8>> {
    let offset = u32::from_le_bytes(bytes.get(10..14)?.try_into().ok()?) as usize;
    let after_header = 14 + dib.header_size;
    if offset < after_header || bytes.len() < after_header {
        return None;
    }
    let mut header = [0u8; 40];
    let kept = dib.header_size.min(40);
    header[..kept].copy_from_slice(&bytes[14..14 + kept]);
    header[..4].copy_from_slice(&40u32.to_le_bytes());
    header[12..14].copy_from_slice(&1u16.to_le_bytes());
    let mut out = Vec::with_capacity(bytes.len() + 40 - kept);
    out.extend_from_slice(&bytes[..10]);
    // The pixels start at or past the header's end: the subtraction cannot go below 0.
    out.extend_from_slice(&u32::try_from((offset - dib.header_size).checked_add(40)?).ok()?.to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(&bytes[after_header..]);
    let size = u32::try_from(out.len()).ok()?;
    out[2..6].copy_from_slice(&size.to_le_bytes());
    Some(out)
}

/// A BMP file's colour rows decoded here ([`Dib::is_ours`]); the caller has bounded the size.
pub(super) fn decode_file(bytes: &[u8], dib: &Dib) -> Result<RgbaImage, String> {
    let offset = bytes.get(10..14).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let pixels = bytes.get(offset..).filter(|_| offset >= 14).ok_or("its pixel data offset is past its end")?;
    decode_ours(dib, &bytes[14..], pixels)
}

fn decode_ours(dib: &Dib, header: &[u8], pixels: &[u8]) -> Result<RgbaImage, String> {
    if dib.is_rle() { rle(dib, &dib.palette(header), pixels) } else { bitfields(dib, pixels) }
}

/// RLE8/RLE4 as Chromium and Pillow read it: a run or an absolute run past the row's end is cut at
/// the row's end; end-of-line, delta and end-of-bitmap move on; a delta past the last row ends the
/// bitmap; a pixel nothing sets stays transparent. Data that stops before the last row (no
/// end-of-bitmap) is refused.
fn rle(dib: &Dib, palette: &[[u8; 3]], data: &[u8]) -> Result<RgbaImage, String> {
    let four = dib.bits == 4;
    let (width, height) = (dib.width, dib.height);
    let mut image = RgbaImage::new(width, height);
    let (mut x, mut y) = (0u32, 0u32);
    let mut i = 0usize;
    let put = |image: &mut RgbaImage, x: u32, y: u32, index: u8| {
        if x < width && y < height {
            let [r, g, b] = palette[usize::from(index)];
            image.put_pixel(x, dib.row(y), image::Rgba([r, g, b, 255]));
        }
    };
    let cut = |y: u32| format!("its RLE data ends before its last row ({y} of {height} rows decoded)");
    while y < height && !(y == height - 1 && x >= width) {
        let (Some(&count), Some(&code)) = (data.get(i), data.get(i + 1)) else { return Err(cut(y)) };
        i += 2;
        if count > 0 {
            for k in 0..u32::from(count) {
                let index = if !four {
                    code
                } else if k % 2 == 0 {
                    code >> 4
                } else {
                    code & 0x0f
                };
                put(&mut image, x.saturating_add(k), y, index);
            }
            x = x.saturating_add(u32::from(count)).min(width);
            continue;
        }
        match code {
            0 => (x, y) = (0, y + 1),
            1 => break,
            2 => {
                let (Some(&dx), Some(&dy)) = (data.get(i), data.get(i + 1)) else { return Err(cut(y)) };
                i += 2;
                (x, y) = (x.saturating_add(u32::from(dx)).min(width), y.saturating_add(u32::from(dy)));
            }
            n => {
                let n = usize::from(n);
                let len = if four { n.div_ceil(2) } else { n };
                let run = data.get(i..i + len).ok_or_else(|| cut(y))?;
                for k in 0..n {
                    let index = if !four {
                        run[k]
                    } else if k % 2 == 0 {
                        run[k / 2] >> 4
                    } else {
                        run[k / 2] & 0x0f
                    };
                    put(&mut image, x.saturating_add(k as u32), y, index);
                }
                // Absolute runs are padded to a 16-bit boundary.
                i += len + len % 2;
                x = x.saturating_add(n as u32).min(width);
            }
        }
    }
    Ok(image)
}

/// 16/32-bit bitfields with any masks: each channel scaled from its mask's width to 8 bits, a
/// zero mask giving 0 (alpha: 255).
fn bitfields(dib: &Dib, data: &[u8]) -> Result<RgbaImage, String> {
    let masks = dib.masks.ok_or("it has no bitfield masks")?;
    let stride = usize::try_from(dib.stride()).map_err(|_| "its rows are too long")?;
    let need = stride.saturating_mul(dib.height as usize);
    if data.len() < need {
        return Err(format!("its pixel data is {} bytes, short of the {need} its size needs", data.len()));
    }
    let channel = |value: u32, mask: u32, absent: u8| -> u8 {
        if mask == 0 {
            return absent;
        }
        let shift = mask.trailing_zeros();
        let bits = (mask >> shift).trailing_ones();
        let max = (1u64 << bits) - 1;
        let v = u64::from((value & mask) >> shift) & max;
        if bits >= 8 { (v >> (bits - 8)) as u8 } else { ((v * 255 + max / 2) / max) as u8 }
    };
    let bytes = usize::from(dib.bits / 8);
    let mut image = RgbaImage::new(dib.width, dib.height);
    for n in 0..dib.height {
        let row = &data[n as usize * stride..][..stride];
        for x in 0..dib.width {
            let p = &row[x as usize * bytes..][..bytes];
            let v = if bytes == 2 {
                u32::from(u16::from_le_bytes([p[0], p[1]]))
            } else {
                u32::from_le_bytes([p[0], p[1], p[2], p[3]])
            };
            let [r, g, b, a] = masks;
            image.put_pixel(
                x,
                dib.row(n),
                image::Rgba([channel(v, r, 0), channel(v, g, 0), channel(v, b, 0), channel(v, a, 255)]),
            );
        }
    }
    Ok(image)
}

/// An ICO entry's BMP (its DIB, cut at the file's end if the file is cut): the colour rows (by
/// this module or the image crate's BMP decoder), then transparency: a 32-bit entry with any
/// alpha data keeps its alpha channel (its AND mask, short or conflicting, is ignored, as Chromium
/// and Pillow ignore it); any other takes its AND mask, opaque where the entry has none; a mask cut
/// short is refused. `dib` is the header already read; its height counts the mask's rows.
pub(super) fn decode_icon(data: &[u8], entry: &Dib) -> Result<RgbaImage, String> {
    let colour = Dib { height: entry.height / 2, ..entry.clone() };
    let pixels_at = colour.pixels_after_palette();
    let pixels = data.get(pixels_at..).ok_or("its colour table runs past its end")?;
    let mut image = if colour.is_ours() { decode_ours(&colour, data, pixels)? } else { crate_decode(data, &colour)? };
    let stride = colour.stride() as usize;
    let rows = colour.height as usize;
    let alpha_data = colour.bits == 32 && (colour.compression == BI_RGB || colour.masks.is_some_and(|m| m[3] != 0));
    if colour.bits == 32 && colour.compression == BI_RGB {
        // The crate read these as RGB: the fourth byte of each pixel is alpha.
        let colour_rows = pixels.get(..stride.saturating_mul(rows)).ok_or("its pixel data is cut short")?;
        for (n, row) in colour_rows.chunks_exact(stride).enumerate() {
            let y = colour.row(n as u32);
            for x in 0..colour.width {
                image.get_pixel_mut(x, y).0[3] = row[x as usize * 4 + 3];
            }
        }
    }
    if alpha_data && image.pixels().any(|p| p.0[3] != 0) {
        return Ok(image);
    }
    if alpha_data {
        image.pixels_mut().for_each(|p| p.0[3] = 255);
    }
    if colour.is_rle() {
        // Where RLE colour rows end is not known; an RLE entry is drawn without a mask.
        return Ok(image);
    }
    let mask_stride = colour.width.div_ceil(32) as usize * 4;
    let mask = pixels.get(stride.saturating_mul(rows)..).unwrap_or_default();
    if mask.is_empty() {
        return Ok(image);
    }
    let mask = mask
        .get(..mask_stride * rows)
        .ok_or_else(|| format!("its AND mask is cut short ({} of {} bytes)", mask.len(), mask_stride * rows))?;
    for (n, row) in mask.chunks_exact(mask_stride).enumerate() {
        let y = colour.row(n as u32);
        for x in 0..colour.width {
            if row[x as usize / 8] & (0x80 >> (x % 8)) != 0 {
                image.get_pixel_mut(x, y).0[3] = 0;
            }
        }
    }
    Ok(image)
}

/// The image crate's BMP decoder on an entry's DIB, its height halved (the colour rows only) and
/// its planes set to 1.
fn crate_decode(data: &[u8], colour: &Dib) -> Result<RgbaImage, String> {
    let mut dib = data.to_vec();
    let (height_at, planes_at) = if colour.header_size == 12 { (6, 8) } else { (8, 12) };
    if colour.header_size == 12 {
        dib[height_at..height_at + 2].copy_from_slice(&(colour.height as u16).to_le_bytes());
    } else {
        let signed = if colour.top_down { -(colour.height as i32) } else { colour.height as i32 };
        dib[height_at..height_at + 4].copy_from_slice(&signed.to_le_bytes());
    }
    dib[planes_at..planes_at + 2].copy_from_slice(&1u16.to_le_bytes());
    let mut decoder = BmpDecoder::new_without_file_header(Cursor::new(&dib[..])).map_err(|e| e.to_string())?;
    decoder.set_limits(decode_limits()).map_err(|e| e.to_string())?;
    Ok(DynamicImage::from_decoder(decoder).map_err(|e| e.to_string())?.to_rgba8())
}

#[cfg(test)]
#[path = "tests/bmp.rs"]
mod tests;
