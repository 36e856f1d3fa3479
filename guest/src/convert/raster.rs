//! BMP, TIFF (its first page), ICO (its largest entry, BMP or PNG inside) and a GIF's first frame
//! decoded with the image crate under the gate's decoder limits, and any made image (these, an
//! SVG or a PDF page) fitted into 2000², written as a PNG and admitted by the gate's PNG rules.
//!
//! The header is read before any pixel is decoded: a file that declares more than the decoder's
//! limits (side, pixels, bytes, the caller's pixel budget) is refused before the allocation.

use std::borrow::Cow;
use std::io::Cursor;

use image::codecs::gif::GifDecoder;
use image::{
    AnimationDecoder, ColorType, DynamicImage, ExtendedColorType, ImageBuffer, ImageDecoder, ImageError, ImageFormat,
    ImageReader, RgbaImage,
};

use super::bmp::{self, Dib};
use super::{GIF_MIME, Source};
use crate::gate::decode::{Budget, decode_limits, gif_frames};
use crate::gate::downsample::{encode_png_fast, fit_inside, resize_to_fit};
use crate::gate::image::admit_png_written_from;
use crate::gate::row_resize::RowResizer;
use crate::limits::{DECODE_MAX_ALLOC, DECODE_MAX_PIXELS, DECODE_MAX_SIDE, FIT_SIDE};
use crate::options::Options;
use crate::signature::ImageType;
use crate::verdict::{Admitted, Conversion, Data, Dimensions, Reason, Refusal, Verdict};

/// An image a converter made, before it is written as PNG and admitted.
pub struct Made {
    pub image: DynamicImage,
    /// The size of the image as the source gave it (before any fit).
    pub source_dimensions: Dimensions,
    pub from: &'static str,
    /// What was done, in words.
    pub note: String,
}

/// Decode a BMP, TIFF or ICO.
pub fn decode(bytes: &[u8], source: Source, budget: &mut Budget) -> Result<Made, Refusal> {
    let raw = bytes.len() as u64;
    let name = source.name();
    let format = match source {
        Source::Bmp => ImageFormat::Bmp,
        Source::Tiff => ImageFormat::Tiff,
        Source::Ico => ImageFormat::Ico,
        _ => unreachable!("only raster sources are decoded here"),
    };
    if let Some((width, height)) = declared_bmp_size(bytes, source) {
        check_side(raw, name, width, height)?;
    }
    if source == Source::Bmp
        && let Some(dib) = bytes.get(14..).and_then(Dib::parse)
    {
        if let Some(why) = dib.not_converted() {
            return Err(Refusal::new(Reason::Undecodable, raw, None, why));
        }
        if dib.is_ours() {
            return decode_bmp_layout(bytes, &dib, budget);
        }
    }
    let normalised = match source {
        Source::Bmp => bmp::normalised(bytes),
        Source::Tiff => super::tiff_layouts::first_page_only(bytes),
        _ => Cow::Borrowed(bytes),
    };
    let bytes = &*normalised;
    if source == Source::Tiff && super::tiff_layouts::is_ours(bytes) {
        return decode_tiff_layout(bytes, budget);
    }
    if source == Source::Ico
        && let Some(entry) = ico_chosen_entry(bytes)
    {
        // Decoded here, not by the image crate's ICO decoder: it would choose an entry of its
        // own, and takes only 8-bit RGBA PNG entries though icon writers (Pillow, for one) store
        // RGB, grey and palette PNGs, and refuses a BMP entry whose AND mask is short.
        return if entry.data.starts_with(b"\x89PNG\r\n\x1a\n") {
            decode_ico_png_entry(bytes, &entry, budget)
        } else {
            decode_ico_bmp_entry(bytes, &entry, budget)
        };
    }
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(decode_limits());
    let decoder = reader.into_decoder().map_err(|e| header_refusal(raw, name, e))?;
    let (width, height) = decoder.dimensions();
    let decoded = decoder.total_bytes();
    check_header(raw, name, width, height, decoded, budget)?;
    let one_buffer = source == Source::Tiff && tiff_in_one_buffer(decoder.color_type(), decoder.original_color_type());
    let image = if one_buffer {
        drop(decoder);
        match tiff_fitted_by_strips(bytes, width, height, decoded) {
            Ok(Some(fitted)) => Ok(fitted),
            Ok(None) => decode_tiff_in_one_buffer(bytes, width, height, decoded),
            Err(e) => Err(e),
        }
    } else {
        DynamicImage::from_decoder(decoder)
    }
    .map_err(|e| decode_refusal(raw, name, e))?;
    let image = eight_bit(image);
    let (image, (width, height), turned) = if source == Source::Tiff {
        upright(image, (width, height), bytes)
    } else {
        (image, (width, height), String::new())
    };
    let note = match source {
        Source::Tiff => format!("decoded from TIFF {width}x{height} (its first page){turned}"),
        Source::Ico => {
            let entries = u16::from_le_bytes([bytes[4], bytes[5]]);
            format!("decoded from ICO {width}x{height}, the largest of its {entries} entries")
        }
        _ => format!("decoded from {name} {width}x{height}"),
    };
    Ok(Made { image, source_dimensions: Dimensions { width, height }, from: source.mime(), note })
}

/// A TIFF page turned upright as its Orientation tag (274) says: the image, its upright size and
/// what to add to the note (nothing for a page stored upright). The tag's eight values are EXIF's
/// (EXIF took them from TIFF). Pillow leaves a TIFF as stored until `ImageOps.exif_transpose`,
/// which applies them; ImageMagick applies them with `-auto-orient`; netpbm's `tifftopnm -byrow`
/// applies all eight (its default, libtiff's RGBA reader, leaves 5-8 untransposed and warns);
/// the image crate reports the tag and leaves the pixels. A model shown the page sideways reads
/// it sideways, so it is turned here. A value outside 1-8 is ignored, as `exif_transpose` does.
fn upright(image: DynamicImage, (width, height): (u32, u32), bytes: &[u8]) -> (DynamicImage, (u32, u32), String) {
    use image::metadata::Orientation;
    let tag = super::tiff_layouts::orientation(bytes);
    let orientation = tag.and_then(|v| Orientation::from_exif(u8::try_from(v).ok()?));
    let Some(orientation) = orientation.filter(|&o| o != Orientation::NoTransforms) else {
        return (image, (width, height), String::new());
    };
    let quarter_turn = matches!(
        orientation,
        Orientation::Rotate90 | Orientation::Rotate270 | Orientation::Rotate90FlipH | Orientation::Rotate270FlipH
    );
    // A quarter turn copies the image: fitted first (the fit is a square, so this is the same
    // fit turned), the copy is of the fitted image, not of the page.
    let mut image = if quarter_turn { resize_to_fit(image, FIT_SIDE) } else { image };
    image.apply_orientation(orientation);
    let turned = format!(", turned upright (Orientation {}; stored as {width}x{height})", orientation.to_exif());
    (image, if quarter_turn { (height, width) } else { (width, height) }, turned)
}

/// The entry of an ICO to convert: the one with the most pixels, then the most bits per pixel,
/// then the first in the directory; each judged by its own header (a PNG entry's IHDR, a BMP
/// entry's DIB header), not by the directory, whose bit count is 0 for most PNG entries and whose
/// sizes may lie. So the entry converted is the one the note calls the largest. Pillow also
/// takes the largest, but by the directory's sizes (ties: the lowest colour depth), and reads a
/// PNG's real size only after it has chosen; ImageMagick reads every entry as a frame, in
/// directory order; the image crate's decoder takes the most directory bits, then pixels.
/// An entry outside the file or whose header cannot be read is passed over; `None` when no entry
/// is left (the image crate's decoder then says what is wrong). An entry the file's end cuts
/// short is taken only when no whole one is left (then cut at the file's end, and refused as cut
/// when its pixels are): Pillow falls back to a whole entry so, where Chromium refuses the file.
fn ico_chosen_entry(bytes: &[u8]) -> Option<IcoEntry<'_>> {
    let count = usize::from(u16::from_le_bytes(bytes.get(4..6)?.try_into().ok()?));
    let mut best: Option<(EntryRank, &[u8])> = None;
    let mut largest_cut = None;
    for i in 0..count {
        let e = bytes.get(6 + 16 * i..6 + 16 * (i + 1))?;
        let size = u32::from_le_bytes(e[8..12].try_into().ok()?) as usize;
        let offset = u32::from_le_bytes(e[12..16].try_into().ok()?) as usize;
        let Some(rest) = bytes.get(offset..) else { continue };
        let data = rest.get(..size).unwrap_or(rest);
        let Some((pixels, bits)) = ico_entry_size(data) else { continue };
        let whole = data.len() == size;
        if best.is_none_or(|(s, _)| (whole, pixels, bits) > s) {
            best = Some(((whole, pixels, bits), data));
        }
        if !whole {
            largest_cut = largest_cut.max(Some((pixels, bits)));
        }
    }
    let ((whole, pixels, bits), data) = best?;
    Some(IcoEntry { data, cut_larger: whole && largest_cut > Some((pixels, bits)) })
}

/// How an ICO entry ranks: whole before cut short, then pixels, then bits per pixel.
type EntryRank = (bool, u64, u16);

/// The ICO entry converted, and whether a larger one was passed over because the file cuts it.
struct IcoEntry<'a> {
    data: &'a [u8],
    cut_larger: bool,
}

/// What a converted ICO's note says of the entry taken.
fn ico_note(bytes: &[u8], entry: &IcoEntry<'_>, width: u32, height: u32) -> String {
    let entries = u16::from_le_bytes([bytes[4], bytes[5]]);
    if entry.cut_larger {
        format!(
            "decoded from ICO {width}x{height}, the largest whole one of its {entries} entries (a larger one is cut short)"
        )
    } else {
        format!("decoded from ICO {width}x{height}, the largest of its {entries} entries")
    }
}

/// An ICO entry's pixels and bits per pixel, from its own header.
fn ico_entry_size(data: &[u8]) -> Option<(u64, u16)> {
    if let Some(png) = data.strip_prefix(b"\x89PNG\r\n\x1a\n") {
        // The IHDR chunk comes first: length, type, width, height, depth, colour type.
        if png.get(4..8)? != b"IHDR" {
            return None;
        }
        let width = u32::from_be_bytes(png.get(8..12)?.try_into().ok()?);
        let height = u32::from_be_bytes(png.get(12..16)?.try_into().ok()?);
        let channels = match *png.get(17)? {
            0 | 3 => 1,
            4 => 2,
            2 => 3,
            6 => 4,
            _ => return None,
        };
        return Some((u64::from(width) * u64::from(height), u16::from(*png.get(16)?) * channels));
    }
    let dib = Dib::parse(data)?;
    Some((u64::from(dib.width) * u64::from(dib.height / 2), dib.bits))
}

/// A BMP entry of an ICO (`bmp::decode_icon`), under the same header checks.
fn decode_ico_bmp_entry(bytes: &[u8], chosen: &IcoEntry<'_>, budget: &mut Budget) -> Result<Made, Refusal> {
    let (raw, entry) = (bytes.len() as u64, chosen.data);
    let undecodable =
        |e: String| Refusal::new(Reason::Undecodable, raw, None, format!("the ICO's BMP entry cannot be decoded: {e}"));
    let dib = Dib::parse(entry).ok_or_else(|| undecodable("its header cannot be read".into()))?;
    let (width, height) = (dib.width, dib.height / 2);
    check_side(raw, "ICO", width, height)?;
    check_header(raw, "ICO", width, height, u64::from(width) * u64::from(height) * 4, budget)?;
    let image = bmp::decode_icon(entry, &dib).map_err(undecodable)?;
    let note = ico_note(bytes, chosen, width, height);
    Ok(Made {
        image: DynamicImage::ImageRgba8(image),
        source_dimensions: Dimensions { width, height },
        from: Source::Ico.mime(),
        note,
    })
}

/// A BMP layout the image crate refuses (`bmp`), under the same header checks.
fn decode_bmp_layout(bytes: &[u8], dib: &Dib, budget: &mut Budget) -> Result<Made, Refusal> {
    let raw = bytes.len() as u64;
    let (width, height) = (dib.width, dib.height);
    check_header(raw, "BMP", width, height, u64::from(width) * u64::from(height) * 4, budget)?;
    let image = bmp::decode_file(bytes, dib)
        .map_err(|e| Refusal::new(Reason::Undecodable, raw, None, format!("the BMP cannot be decoded: {e}")))?;
    Ok(Made {
        image: DynamicImage::ImageRgba8(image),
        source_dimensions: Dimensions { width, height },
        from: Source::Bmp.mime(),
        note: format!("decoded from BMP {width}x{height}"),
    })
}

/// That PNG entry decoded with the gate's PNG decoder, under the same header checks.
fn decode_ico_png_entry(bytes: &[u8], chosen: &IcoEntry<'_>, budget: &mut Budget) -> Result<Made, Refusal> {
    let raw = bytes.len() as u64;
    let mut reader = ImageReader::with_format(Cursor::new(chosen.data), ImageFormat::Png);
    reader.limits(decode_limits());
    let decoder = reader.into_decoder().map_err(|e| header_refusal(raw, "ICO", e))?;
    let (width, height) = decoder.dimensions();
    check_header(raw, "ICO", width, height, decoder.total_bytes(), budget)?;
    let image = DynamicImage::from_decoder(decoder).map_err(|e| decode_refusal(raw, "ICO", e))?;
    let note = ico_note(bytes, chosen, width, height);
    Ok(Made {
        image: eight_bit(image),
        source_dimensions: Dimensions { width, height },
        from: Source::Ico.mime(),
        note,
    })
}

/// A TIFF layout the image crate does not take (`tiff_layouts`), under the same header checks.
fn decode_tiff_layout(bytes: &[u8], budget: &mut Budget) -> Result<Made, Refusal> {
    use super::tiff_layouts;
    let raw = bytes.len() as u64;
    let undecodable =
        |e: String| Refusal::new(Reason::Undecodable, raw, None, format!("the TIFF cannot be decoded: {e}"));
    let header = tiff_layouts::header(bytes).map_err(undecodable)?;
    let (width, height) = (header.width, header.height);
    check_side(raw, "TIFF", width, height)?;
    check_header(raw, "TIFF", width, height, header.decoded, budget)?;
    let page = tiff_layouts::decode(bytes).map_err(undecodable)?;
    let (image, (width, height), turned) = upright(eight_bit(page.image), (width, height), bytes);
    let mut note = format!("decoded from TIFF {width}x{height} (its first page){turned}");
    if let Some(damage) = page.damage {
        note.push_str(&format!("; {damage}"));
    }
    Ok(Made { image, source_dimensions: Dimensions { width, height }, from: Source::Tiff.mime(), note })
}

/// Pixel layouts a TIFF decodes to unchanged (8 or 16 bits per sample, integer, no CMYK or 1-bit
/// expansion): those the image crate would copy as they are.
pub(super) fn tiff_in_one_buffer(color: ColorType, original: ExtendedColorType) -> bool {
    use ColorType::*;
    original == color.into() && matches!(color, L8 | La8 | Rgb8 | Rgba8 | L16 | La16 | Rgb16 | Rgba16)
}

/// A TIFF's first page decoded strip by strip straight into the fit ([`RowResizer`]): a 12 MP
/// page (36 MB) is never held, only a strip, the rows under the filter and the fitted image. The
/// strips are the ones the whole decode reads, through the same `tiff` calls and limits.
/// `Ok(None)`: a page this path does not take (tiles, planar, not 8-bit, nothing to shrink),
/// decoded whole instead.
pub(super) fn tiff_fitted_by_strips(
    bytes: &[u8],
    width: u32,
    height: u32,
    decoded: u64,
) -> Result<Option<DynamicImage>, ImageError> {
    use tiff::decoder::{ChunkType, DecodingResult};
    let mut decoder = tiff_decoder(bytes, decoded)?;
    let planar = decoder.find_tag_unsigned::<u16>(tiff::tags::Tag::PlanarConfiguration).map_err(tiff_error)?;
    if decoder.get_chunk_type() != ChunkType::Strip || planar.is_some_and(|p| p != 1) {
        return Ok(None);
    }
    let color = match decoder.colortype().map_err(tiff_error)? {
        tiff::ColorType::Gray(8) => ColorType::L8,
        tiff::ColorType::GrayA(8) => ColorType::La8,
        tiff::ColorType::RGB(8) => ColorType::Rgb8,
        tiff::ColorType::RGBA(8) => ColorType::Rgba8,
        _ => return Ok(None),
    };
    let Some(mut rows) = RowResizer::new((width, height), fit_inside(width, height, FIT_SIDE), color) else {
        return Ok(None);
    };
    let broken = |e: String| ImageError::Decoding(image::error::DecodingError::new(ImageFormat::Tiff.into(), e));
    let row_bytes = width as usize * usize::from(color.bytes_per_pixel());
    for strip in 0..decoder.strip_count().map_err(tiff_error)? {
        let DecodingResult::U8(pixels) = decoder.read_chunk(strip).map_err(tiff_error)? else {
            return Err(broken("a strip's samples are not 8-bit".into()));
        };
        for row in pixels.chunks_exact(row_bytes) {
            rows.push_row(row).map_err(broken)?;
        }
    }
    rows.finish().map(Some).map_err(broken)
}

fn tiff_error(e: tiff::TiffError) -> ImageError {
    match e {
        tiff::TiffError::LimitsExceeded => {
            ImageError::Limits(image::error::LimitError::from_kind(image::error::LimitErrorKind::InsufficientMemory))
        }
        e => ImageError::Decoding(image::error::DecodingError::new(ImageFormat::Tiff.into(), e)),
    }
}

/// The `tiff` decoder under the gate's bounds: the decode's bytes for pixels, the rest of the
/// decoder's bound for the compressed strips and tags.
fn tiff_decoder(bytes: &[u8], decoded: u64) -> Result<tiff::decoder::Decoder<Cursor<&[u8]>>, ImageError> {
    let mut limits = tiff::decoder::Limits::default();
    limits.decoding_buffer_size = usize::try_from(decoded).unwrap_or(usize::MAX);
    limits.intermediate_buffer_size = usize::try_from(DECODE_MAX_ALLOC.saturating_sub(decoded)).unwrap_or(usize::MAX);
    limits.ifd_value_size = limits.intermediate_buffer_size;
    Ok(tiff::decoder::Decoder::new(Cursor::new(bytes)).map_err(tiff_error)?.with_limits(limits))
}

/// A TIFF's first page decoded by the `tiff` crate into one buffer that becomes the image: the
/// image crate's decoder decodes into a buffer of its own and copies it whole, so a 12 MP page
/// would be held twice (72 MB instead of 36). Same limits (the decode's bytes, the rest of the
/// decoder's bound for the compressed strips and tags), same pixels. Chunky pages only: a planar
/// one (one plane per channel) is `tiff_layouts`'s, and is refused here.
pub(super) fn decode_tiff_in_one_buffer(
    bytes: &[u8],
    width: u32,
    height: u32,
    decoded: u64,
) -> Result<DynamicImage, ImageError> {
    use tiff::decoder::DecodingResult;
    let mut decoder = tiff_decoder(bytes, decoded)?;
    let color = decoder.colortype().map_err(tiff_error)?;
    let mut buffer = DecodingResult::U8(Vec::new());
    let layout = decoder.read_image_to_buffer(&mut buffer).map_err(tiff_error)?;
    let short = || {
        ImageError::Decoding(image::error::DecodingError::new(
            ImageFormat::Tiff.into(),
            "the TIFF's pixels are shorter than its size",
        ))
    };
    if layout.planes != 1 || buffer.as_buffer(0).as_bytes().len() < layout.complete_len {
        return Err(short());
    }
    use tiff::ColorType as T;
    let image = match (color, buffer) {
        (T::Gray(8), DecodingResult::U8(v)) => ImageBuffer::from_raw(width, height, v).map(DynamicImage::ImageLuma8),
        (T::GrayA(8), DecodingResult::U8(v)) => ImageBuffer::from_raw(width, height, v).map(DynamicImage::ImageLumaA8),
        (T::RGB(8), DecodingResult::U8(v)) => ImageBuffer::from_raw(width, height, v).map(DynamicImage::ImageRgb8),
        (T::RGBA(8), DecodingResult::U8(v)) => ImageBuffer::from_raw(width, height, v).map(DynamicImage::ImageRgba8),
        (T::Gray(16), DecodingResult::U16(v)) => ImageBuffer::from_raw(width, height, v).map(DynamicImage::ImageLuma16),
        (T::GrayA(16), DecodingResult::U16(v)) => {
            ImageBuffer::from_raw(width, height, v).map(DynamicImage::ImageLumaA16)
        }
        (T::RGB(16), DecodingResult::U16(v)) => ImageBuffer::from_raw(width, height, v).map(DynamicImage::ImageRgb16),
        (T::RGBA(16), DecodingResult::U16(v)) => ImageBuffer::from_raw(width, height, v).map(DynamicImage::ImageRgba16),
        (color, _) => {
            return Err(ImageError::Decoding(image::error::DecodingError::new(
                ImageFormat::Tiff.into(),
                format!("the TIFF's samples do not match its colour type {color:?}"),
            )));
        }
    };
    image.ok_or_else(short)
}

/// A GIF's first frame, composited onto its logical screen (transparent where the frame does not
/// cover it), when the profile takes no GIF or this one is animated and the profile takes only
/// still ones. `None`: a GIF the profile takes as it is.
pub fn gif_first_frame(bytes: &[u8], options: &Options, budget: &mut Budget) -> Result<Option<Made>, Refusal> {
    let raw = bytes.len() as u64;
    let profile = options.provider.profile();
    let provider = profile.provider.name();
    let frames = gif_frames(bytes, u64::MAX).map_err(|e| decode_refusal(raw, "GIF", e))?;
    let takes_gif = profile.accepts(ImageType::Gif);
    if takes_gif && frames <= 1 {
        return Ok(None);
    }
    let mut decoder = GifDecoder::new(Cursor::new(bytes)).map_err(|e| header_refusal(raw, "GIF", e))?;
    decoder.set_limits(decode_limits()).map_err(|e| header_refusal(raw, "GIF", e))?;
    let (width, height) = decoder.dimensions();
    check_header(raw, "GIF", width, height, u64::from(width) * u64::from(height) * 4, budget)?;
    let frame = decoder
        .into_frames()
        .next()
        .ok_or_else(|| Refusal::new(Reason::Undecodable, raw, None, "the GIF has no frame"))?
        .map_err(|e| decode_refusal(raw, "GIF", e))?;
    let why =
        if takes_gif { format!("{provider} accepts only still GIFs") } else { format!("{provider} takes no GIF") };
    let note = if frames > 1 {
        format!("the first of {frames} frames, {width}x{height} ({why})")
    } else {
        format!("its one frame, {width}x{height} ({why})")
    };
    Ok(Some(Made {
        image: DynamicImage::ImageRgba8(frame.into_buffer()),
        source_dimensions: Dimensions { width, height },
        from: GIF_MIME,
        note,
    }))
}

/// The made image fitted into 2000², written as PNG (lossless, alpha kept: the ladder flattens on
/// white if it must go JPEG) and admitted by the gate's PNG rules. `raw` is the input's size.
pub fn admit_made(made: Made, raw: u64, options: &Options, budget: &mut Budget) -> Verdict {
    let Made { image, source_dimensions, from, mut note } = made;
    let image = resize_to_fit(image, FIT_SIDE);
    let (w, h) = (image.width(), image.height());
    if (w, h) != (source_dimensions.width, source_dimensions.height) && from != super::SVG_MIME {
        note.push_str(&format!(", fitted to {w}x{h}"));
    }
    let png = encode_png_fast(&image).map_err(|e| {
        Refusal::new(Reason::Undecodable, raw, None, format!("the image converted from {from} cannot be written: {e}"))
    })?;
    let plain = Options { convert: false, ..*options };
    match admit_png_written_from(&png, image, &plain, budget) {
        Ok(admitted) => Ok(marked(admitted, png, raw, Conversion { from, note }, source_dimensions)),
        Err(refusal) => Err(Refusal {
            raw_bytes: raw,
            message: format!("converted from {from} ({note}), then refused: {}", refusal.message),
            ..refusal
        }),
    }
}

/// Every pixel the page's white ground (what the renderer clears to): a page that renders to
/// nothing. A page of one other colour shows that colour: a 1x1 image on a 1x1 page is one pixel.
pub fn is_blank(image: &RgbaImage) -> bool {
    image.pixels().all(|p| p.0 == [255; 4])
}

/// 16-bit and float pixels (TIFF) to 8 bits: the PNG the gate judges, and the model sees, is 8-bit.
fn eight_bit(image: DynamicImage) -> DynamicImage {
    match image {
        DynamicImage::ImageLuma8(_)
        | DynamicImage::ImageLumaA8(_)
        | DynamicImage::ImageRgb8(_)
        | DynamicImage::ImageRgba8(_) => image,
        other if other.color().has_alpha() => DynamicImage::ImageRgba8(other.to_rgba8()),
        other => DynamicImage::ImageRgb8(other.to_rgb8()),
    }
}

/// A BMP's declared size from its DIB header (the decoder's own soft limit would otherwise
/// answer first, as a format error): width and |height| (negative heights are top-down rows).
fn declared_bmp_size(bytes: &[u8], source: Source) -> Option<(u32, u32)> {
    if source != Source::Bmp {
        return None;
    }
    let u16_at = |i: usize| Some(u16::from_le_bytes(bytes.get(i..i + 2)?.try_into().ok()?));
    let i32_at = |i: usize| Some(i32::from_le_bytes(bytes.get(i..i + 4)?.try_into().ok()?));
    let dib = i32_at(14)?;
    if dib == 12 {
        return Some((u32::from(u16_at(18)?), u32::from(u16_at(20)?)));
    }
    Some((i32_at(18)?.unsigned_abs(), i32_at(22)?.unsigned_abs()))
}

/// A side over the decoder's limit, refused before the decoder is asked.
fn check_side(raw: u64, name: &str, width: u32, height: u32) -> Result<(), Refusal> {
    if width > DECODE_MAX_SIDE || height > DECODE_MAX_SIDE {
        return Err(Refusal::new(
            Reason::DimensionsTooLarge,
            raw,
            Some(u64::from(DECODE_MAX_SIDE)),
            format!("the {name} declares {width}x{height} px, over the decoder's limit of {DECODE_MAX_SIDE} px per side; not decoded"),
        )
        .in_unit(crate::verdict::Unit::PixelsPerSide));
    }
    Ok(())
}

/// The declared size, judged before any pixel is decoded.
fn check_header(
    raw: u64,
    name: &str,
    width: u32,
    height: u32,
    decoded: u64,
    budget: &mut Budget,
) -> Result<(), Refusal> {
    let pixels = u64::from(width) * u64::from(height);
    if pixels > DECODE_MAX_PIXELS {
        return Err(Refusal::new(
            Reason::DimensionsTooLarge,
            raw,
            Some(DECODE_MAX_PIXELS),
            format!(
                "the {name} declares {width}x{height} px, over the decoder's limit of {DECODE_MAX_PIXELS} pixels; not decoded"
            ),
        ));
    }
    if pixels == 0 {
        return Err(Refusal::new(
            Reason::Undecodable,
            raw,
            None,
            format!("the {name} header declares an empty canvas ({width}x{height})"),
        ));
    }
    if decoded > DECODE_MAX_ALLOC {
        return Err(Refusal::new(
            Reason::DimensionsTooLarge,
            raw,
            None,
            format!(
                "{width}x{height} px decode to {decoded} bytes, over the decoder's bound of {DECODE_MAX_ALLOC} bytes; not decoded"
            ),
        ));
    }
    budget.spend(raw, width, height)
}

fn header_refusal(raw: u64, name: &str, e: ImageError) -> Refusal {
    match e {
        ImageError::Limits(_) => Refusal::new(
            Reason::DimensionsTooLarge,
            raw,
            None,
            format!("the {name} declares a size over the decoder's limits; not decoded ({e})"),
        ),
        e => Refusal::new(Reason::Undecodable, raw, None, format!("the {name} header cannot be read: {e}")),
    }
}

fn decode_refusal(raw: u64, name: &str, e: ImageError) -> Refusal {
    match e {
        ImageError::Limits(_) => Refusal::new(
            Reason::DimensionsTooLarge,
            raw,
            None,
            format!("the {name} needs more than the decoder's limits allow; not decoded ({e})"),
        ),
        e => Refusal::new(Reason::Undecodable, raw, None, format!("the {name} cannot be decoded: {e}")),
    }
}

/// The block holding the converted bytes, marked as made by a conversion.
fn marked(mut admitted: Admitted, png: Vec<u8>, raw: u64, conversion: Conversion, source: Dimensions) -> Admitted {
    if admitted.data == Data::Unchanged {
        admitted.data = Data::Bytes(png);
    }
    admitted.original_size = raw;
    admitted.resized = admitted.dimensions.is_some_and(|d| d != source);
    admitted.original_dimensions = Some(source);
    admitted.reencoded = true;
    admitted.converted = Some(conversion);
    admitted
}
