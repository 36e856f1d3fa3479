//! Reading an image under the gate's decoder limits: its header without decoding pixels, its
//! pixels, a GIF's frame count from its block structure, and the pixel budget a caller spends.
//! Below the image rules, the downsample and the converters, which all read images this way.

use std::io::Cursor;

use image::{DynamicImage, ImageDecoder, ImageReader, metadata::Orientation};

use crate::limits::*;
use crate::signature::ImageType;
use crate::verdict::{Dimensions, Reason, Refusal};

/// What the header declares, read without decoding pixels.
#[derive(Clone, Copy, Debug)]
pub struct Header {
    pub width: u32,
    pub height: u32,
    pub orientation: Orientation,
    /// Bytes the decoded pixels take (width × height × bytes per pixel of the stored colour type).
    pub decoded_bytes: u64,
}

impl Header {
    /// Dimensions as a person sees the image (EXIF rotations by 90° swap the sides).
    pub fn upright(&self) -> Dimensions {
        if swaps_sides(self.orientation) {
            Dimensions { width: self.height, height: self.width }
        } else {
            Dimensions { width: self.width, height: self.height }
        }
    }
}

fn swaps_sides(o: Orientation) -> bool {
    matches!(
        o,
        Orientation::Rotate90 | Orientation::Rotate270 | Orientation::Rotate90FlipH | Orientation::Rotate270FlipH
    )
}

pub fn decode_limits() -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(DECODE_MAX_SIDE);
    limits.max_image_height = Some(DECODE_MAX_SIDE);
    limits.max_alloc = Some(DECODE_MAX_ALLOC);
    limits
}

fn reader(bytes: &[u8], t: ImageType) -> ImageReader<Cursor<&[u8]>> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), t.format());
    reader.limits(decode_limits());
    reader
}

pub fn read_header(bytes: &[u8], t: ImageType) -> Result<Header, image::ImageError> {
    let mut decoder = reader(bytes, t).into_decoder()?;
    let (width, height) = decoder.dimensions();
    // A broken EXIF block is no reason to refuse an image; it then has no orientation to honour.
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    Ok(Header { width, height, orientation, decoded_bytes: decoder.total_bytes() })
}

/// A PNG's header from its IHDR chunk alone, without a decoder: for a PNG whose chunks after IHDR
/// the re-mux refused (a metadata bomb a decoder would inflate while reading its header). The
/// decoded size counts what the decoder makes of each colour type (palette → RGB, grey below 8
/// bits → 8 bits).
pub(crate) fn png_ihdr(bytes: &[u8]) -> Result<Header, image::ImageError> {
    let unreadable = || {
        image::ImageError::Decoding(image::error::DecodingError::new(
            image::ImageFormat::Png.into(),
            "the PNG has no whole IHDR chunk",
        ))
    };
    let ihdr = bytes.get(8..8 + 8 + 13).filter(|h| &h[4..8] == b"IHDR").ok_or_else(unreadable)?;
    let be = |at: usize| u32::from_be_bytes([ihdr[at], ihdr[at + 1], ihdr[at + 2], ihdr[at + 3]]);
    let (width, height, depth, colour) = (be(8), be(12), ihdr[16], ihdr[17]);
    if width > DECODE_MAX_SIDE || height > DECODE_MAX_SIDE {
        return Err(image::ImageError::Limits(image::error::LimitError::from_kind(
            image::error::LimitErrorKind::DimensionError,
        )));
    }
    let channels: u64 = match colour {
        0 => 1,
        2 | 3 => 3,
        4 => 2,
        6 => 4,
        _ => return Err(unreadable()),
    };
    let sample: u64 = if depth == 16 { 2 } else { 1 };
    let decoded_bytes = u64::from(width) * u64::from(height) * channels * sample;
    Ok(Header { width, height, orientation: Orientation::NoTransforms, decoded_bytes })
}

pub fn decode(bytes: &[u8], t: ImageType) -> Result<DynamicImage, image::ImageError> {
    let decoder = reader(bytes, t).into_decoder()?;
    DynamicImage::from_decoder(decoder)
}

/// More than one frame, told from the frame descriptors alone: the LZW data is skipped, never
/// decoded, so the check holds no frame whatever the GIF's size (it held two RGBA frames, 376 MiB
/// for a 7000x7000 GIF).
pub(crate) fn is_animated_gif(bytes: &[u8]) -> Result<bool, image::ImageError> {
    Ok(gif_frames(bytes, 2)? > 1)
}

/// The GIF's frames, counted from their descriptors up to `at_most` (the LZW data skipped, never
/// decoded).
pub(crate) fn gif_frames(bytes: &[u8], at_most: u64) -> Result<u64, image::ImageError> {
    let as_image_error = |e: gif::DecodingError| {
        image::ImageError::Decoding(image::error::DecodingError::new(image::ImageFormat::Gif.into(), e))
    };
    let mut options = gif::DecodeOptions::new();
    options.skip_frame_decoding(true);
    let mut decoder = options.read_info(Cursor::new(bytes)).map_err(as_image_error)?;
    let mut frames = 0;
    while frames < at_most && decoder.next_frame_info().map_err(as_image_error)?.is_some() {
        frames += 1;
    }
    Ok(frames)
}

/// What one caller may still spend on decoding: a tool result shares one budget among its blocks.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub pixels: u64,
}

impl Budget {
    pub const UNLIMITED: Budget = Budget { pixels: u64::MAX };

    /// Charges the decode of `width`×`height` pixels, or refuses it in words when it would exceed
    /// what is left (of an input of `raw` bytes); nothing is charged then.
    pub fn spend(&mut self, raw: u64, width: u32, height: u32) -> Result<(), Refusal> {
        let pixels = u64::from(width) * u64::from(height);
        if pixels > self.pixels {
            return Err(Refusal::new(
                Reason::DimensionsTooLarge,
                raw,
                Some(self.pixels),
                format!(
                    "{width}x{height} px would exceed what is left of this call's decoding budget ({} pixels); not decoded",
                    self.pixels
                ),
            ));
        }
        self.pixels -= pixels;
        Ok(())
    }
}
