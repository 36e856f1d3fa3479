//! The TIFF layouts the image crate does not take, decoded chunk by chunk with the `tiff` crate:
//! unsigned samples of every width up to 31 bits but 8 and 16 (grey or colour; uncompressed ones
//! unpacked here), grey with alpha and any number of other extra samples, palette (1–8 bits),
//! YCbCr (JPEG-compressed, old-style JPEG (`old_jpeg`), or subsampled LZW/uncompressed strips),
//! LogLuv and LogL under SGILog compression (`log_luv`),
//! planar pages (strips or tiles, any colour type), signed, 32/64-bit and floating-point samples, WebP- and Zstandard-compressed
//! chunks, CCITT Group 3 and 4 (with `hayro-ccitt`, which the PDF renderer carries anyway).
//!
//! Samples that are not unsigned integers of up to 16 bits become 8-bit levels as Pillow and
//! libvips make them: each value is read as a level on the 0..255 scale, truncated and clipped
//! (Pillow's `I`/`F` → `L` conversion clips; libvips' cast to uchar, which sharp applies to a
//! signed, 32-bit or float sRGB or CMYK page, clips). So a negative level is black, one over 255
//! white, and a float page scaled 0..1 comes out black in all three; both read an unsigned
//! 32-bit sample as a signed one. The two differ only on a
//! signed grey page: Pillow keeps an 8-bit one's bytes as unsigned, libvips shifts a 16-bit one
//! down by 8 bits; the clip is the rule both apply to every other signed layout.
//!
//! Each chunk (strip or tile) of each plane is decoded on its own and its samples are placed,
//! scaled to 8 bits, into one interleaved buffer of the page; colour is converted at the end.
//! The image crate reads planar tiles through the `tiff` crate's whole-image reader, which slices
//! past its buffer on a planar page whose last tiles are padded (a panic: a trap in the sandbox);
//! here the padding is cut from each tile by its place in the page, so every layout has a bound.
//! LZW chunks are inflated here in one piece: the `tiff` crate reads a cut tile row by row, in
//! pieces as small as the cut, and its LZW reader then stops short of the stream's end ("no lzw
//! end code found") on tiles Pillow and libtiff decode.

use std::borrow::Cow;
use std::io::Cursor;

use image::{DynamicImage, GrayImage, RgbImage, RgbaImage};
use tiff::ColorType;
use tiff::decoder::{Decoder, DecodingResult, Limits};
use tiff::tags::Tag;

use crate::limits::DECODE_MAX_ALLOC;

mod log_luv;
mod old_jpeg;

/// What the layout is, read before decoding (for the header check and the way to take).
pub(super) struct Header {
    pub width: u32,
    pub height: u32,
    /// Bytes the decoded page holds (8 bits per output channel).
    pub decoded: u64,
}

const PHOTOMETRIC_WHITE_IS_ZERO: u16 = 0;
const PHOTOMETRIC_BLACK_IS_ZERO: u16 = 1;
const PHOTOMETRIC_PALETTE: u16 = 3;
const PHOTOMETRIC_YCBCR: u16 = 6;
const COMPRESSION_CCITT_RLE: u16 = 2;
const COMPRESSION_FAX3: u16 = 3;
const COMPRESSION_FAX4: u16 = 4;
const COMPRESSION_LZW: u16 = 5;
const COMPRESSION_OLD_JPEG: u16 = 6;
const COMPRESSION_NONE: u16 = 1;
const COMPRESSION_JPEG: u16 = 7;
const COMPRESSION_WEBP: u16 = 50001;
const COMPRESSION_ZSTD: u16 = 50000;
const SAMPLE_FORMAT_UNSIGNED: u16 = 1;
const SAMPLE_FORMAT_SIGNED: u16 = 2;
const SAMPLE_FORMAT_FLOAT: u16 = 3;
const PREDICTOR_HORIZONTAL: u16 = 2;
const EXTRA_SAMPLE_UNSPECIFIED: u16 = 0;
const T4_OPTIONS: u16 = 292;

/// Whether the first page is a layout this module decodes (the image crate refuses it or, for
/// planar pages, traps on it). `false` when the tags cannot be read: the image crate says why.
pub(super) fn is_ours(bytes: &[u8]) -> bool {
    if log_luv::photometric(bytes).is_some() {
        return true;
    }
    let Ok(mut decoder) = open(bytes) else { return false };
    let sample_format = first_value(&mut decoder, Tag::SampleFormat).unwrap_or(SAMPLE_FORMAT_UNSIGNED);
    let bits = first_value(&mut decoder, Tag::BitsPerSample);
    let mut tag = |t| decoder.find_tag_unsigned::<u16>(t).ok().flatten();
    let planar = tag(Tag::PlanarConfiguration) == Some(2);
    let compression = tag(Tag::Compression);
    let photometric = tag(Tag::PhotometricInterpretation);
    // Grey and alpha (or other extra samples): the `tiff` crate calls more than one grey sample
    // `Multiband`, which the image crate refuses whatever the compression. (WhiteIsZero with
    // extra samples is left to it: the `tiff` crate cannot invert a `Multiband` page.)
    let grey_and_extra =
        photometric == Some(PHOTOMETRIC_BLACK_IS_ZERO) && tag(Tag::SamplesPerPixel).is_some_and(|n| n >= 2);
    planar
        || grey_and_extra
        || matches!(
            compression,
            Some(
                COMPRESSION_FAX3
                    | COMPRESSION_CCITT_RLE
                    | COMPRESSION_FAX4
                    | COMPRESSION_OLD_JPEG
                    | COMPRESSION_WEBP
                    | COMPRESSION_ZSTD
            )
        )
        || matches!(photometric, Some(PHOTOMETRIC_PALETTE | PHOTOMETRIC_YCBCR))
        || bits.is_some_and(|b| !matches!(b, 1 | 8 | 16))
        || sample_format != SAMPLE_FORMAT_UNSIGNED
}

/// The first value of a tag that holds one per sample (BitsPerSample, SampleFormat).
fn first_value(decoder: &mut Decoder<Cursor<&[u8]>>, tag: Tag) -> Option<u16> {
    decoder.find_tag_unsigned_vec::<u16>(tag).ok().flatten()?.first().copied()
}

/// The page's size and decoded bytes, from its first IFD.
pub(super) fn header(bytes: &[u8]) -> Result<Header, String> {
    if let Some(luv) = log_luv::photometric(bytes) {
        let (width, height) = open(&log_luv::openable(bytes)?)?.dimensions().map_err(words)?;
        let channels = if luv == log_luv::PHOTOMETRIC_LOG_LUV { 3 } else { 1 };
        return Ok(Header { width, height, decoded: u64::from(width) * u64::from(height) * channels });
    }
    let mut decoder = open(bytes)?;
    let (width, height) = decoder.dimensions().map_err(words)?;
    let samples = decoder.find_tag_unsigned::<u16>(Tag::SamplesPerPixel).map_err(words)?.unwrap_or(1);
    let photometric = decoder.find_tag_unsigned::<u16>(Tag::PhotometricInterpretation).map_err(words)?;
    // Grey with extra samples is read whole before its first sample is kept.
    let channels = if photometric == Some(PHOTOMETRIC_PALETTE) { 3 } else { u64::from(samples.max(1)) };
    Ok(Header { width, height, decoded: u64::from(width) * u64::from(height) * channels })
}

/// The first page's Orientation tag (274), when it has one that can be read.
pub(super) fn orientation(bytes: &[u8]) -> Option<u16> {
    let copy = log_luv::photometric(bytes).and_then(|_| log_luv::openable(bytes).ok());
    open(copy.as_deref().unwrap_or(bytes)).ok()?.find_tag_unsigned::<u16>(Tag::Orientation).ok().flatten()
}

/// The decoded page, and what was left out of it in words (a damaged fax strip's rest).
pub(super) struct Page {
    pub image: DynamicImage,
    pub damage: Option<String>,
}

/// Decode the first page. The caller has checked [`header`] against the decoder's limits.
pub(super) fn decode(bytes: &[u8]) -> Result<Page, String> {
    if let Some(luv) = log_luv::photometric(bytes) {
        return log_luv::decode(bytes, luv).map(|image| Page { image, damage: None });
    }
    let mut decoder = open(bytes)?;
    let compression = decoder.find_tag_unsigned::<u16>(Tag::Compression).map_err(words)?.unwrap_or(1);
    if matches!(compression, COMPRESSION_FAX3 | COMPRESSION_CCITT_RLE | COMPRESSION_FAX4) {
        return decode_fax(&mut decoder, compression);
    }
    decode_samples(bytes, decoder, compression).map(|image| Page { image, damage: None })
}

fn decode_samples(bytes: &[u8], mut decoder: Decoder<Cursor<&[u8]>>, compression: u16) -> Result<DynamicImage, String> {
    if compression == COMPRESSION_OLD_JPEG {
        let (width, height) = decoder.dimensions().map_err(words)?;
        return old_jpeg::decode(&mut decoder, width, height);
    }
    let photometric = decoder.find_tag_unsigned::<u16>(Tag::PhotometricInterpretation).map_err(words)?;
    if photometric == Some(PHOTOMETRIC_YCBCR) && compression != COMPRESSION_JPEG {
        return decode_ycbcr_strips(&mut decoder, compression);
    }
    if photometric == Some(PHOTOMETRIC_PALETTE) {
        // The `tiff` crate decodes no palette; the same samples read as grey (photometric
        // BlackIsZero, no inversion) are the indices, looked up in the colour map here.
        let colormap = decoder.get_tag_u16_vec(Tag::ColorMap).map_err(words)?;
        let patched = with_photometric(bytes, 1).ok_or("the TIFF's palette tag cannot be read")?;
        let mut grey = open(&patched)?;
        let (width, height, samples) = read_samples(&mut grey, true)?;
        return palette(width, height, &samples, &colormap);
    }
    let color = decoder.colortype().map_err(words)?;
    let extra_samples = decoder.find_tag_unsigned_vec::<u16>(Tag::ExtraSamples).map_err(words)?;
    let (width, height, samples) = read_samples(&mut decoder, false)?;
    let raw = |channels: u32| {
        (samples.len() as u64 == u64::from(width) * u64::from(height) * u64::from(channels))
            .then_some(())
            .ok_or_else(|| format!("the TIFF's samples do not fill its {width}x{height} page"))
    };
    match color {
        ColorType::Gray(_) => {
            raw(1)?;
            GrayImage::from_raw(width, height, samples).map(DynamicImage::ImageLuma8).ok_or_else(short)
        }
        // Grey and extra samples: the first extra is alpha unless ExtraSamples calls it
        // unspecified (0), and any other is dropped, as Pillow drops an RGB page's unspecified
        // extras (its `RGBX`, `RGBAX`); a page without ExtraSamples has alpha, as Pillow reads
        // RGBA without it.
        ColorType::Multiband { num_samples, .. } if num_samples >= 2 => {
            let n = usize::from(num_samples);
            raw(u32::from(num_samples))?;
            if extra_samples.as_deref().and_then(|e| e.first()) == Some(&EXTRA_SAMPLE_UNSPECIFIED) {
                let grey = samples.chunks_exact(n).map(|p| p[0]).collect();
                return GrayImage::from_raw(width, height, grey).map(DynamicImage::ImageLuma8).ok_or_else(short);
            }
            let grey_alpha =
                if n == 2 { samples } else { samples.chunks_exact(n).flat_map(|p| [p[0], p[1]]).collect() };
            image::GrayAlphaImage::from_raw(width, height, grey_alpha).map(DynamicImage::ImageLumaA8).ok_or_else(short)
        }
        ColorType::RGB(_) => {
            raw(3)?;
            RgbImage::from_raw(width, height, samples).map(DynamicImage::ImageRgb8).ok_or_else(short)
        }
        ColorType::RGBA(_) => {
            raw(4)?;
            RgbaImage::from_raw(width, height, samples).map(DynamicImage::ImageRgba8).ok_or_else(short)
        }
        ColorType::YCbCr(8) if compression == COMPRESSION_JPEG => {
            raw(3)?;
            let mut rgb = samples;
            for px in rgb.chunks_exact_mut(3) {
                px.copy_from_slice(&ycbcr_to_rgb(px[0], px[1], px[2]));
            }
            RgbImage::from_raw(width, height, rgb).map(DynamicImage::ImageRgb8).ok_or_else(short)
        }
        ColorType::CMYK(_) => {
            raw(4)?;
            let rgb = samples.chunks_exact(4).flat_map(|p| cmyk_to_rgb(p[0], p[1], p[2], p[3])).collect();
            RgbImage::from_raw(width, height, rgb).map(DynamicImage::ImageRgb8).ok_or_else(short)
        }
        other => Err(format!("the TIFF's colour type {other:?} (compression {compression}) is not converted")),
    }
}

fn short() -> String {
    "the TIFF's pixels are shorter than its size".into()
}

fn words(e: tiff::TiffError) -> String {
    match e {
        tiff::TiffError::LimitsExceeded => "the TIFF needs more than the decoder's limits allow".into(),
        e => e.to_string(),
    }
}

fn open(bytes: &[u8]) -> Result<Decoder<Cursor<&[u8]>>, String> {
    let mut limits = Limits::default();
    let cap = usize::try_from(DECODE_MAX_ALLOC).unwrap_or(usize::MAX);
    limits.decoding_buffer_size = cap;
    limits.intermediate_buffer_size = cap;
    limits.ifd_value_size = cap;
    Ok(Decoder::new(Cursor::new(bytes)).map_err(words)?.with_limits(limits))
}

/// Where a TIFF's first IFD is, read from the file's header.
struct FirstIfd<'a> {
    bytes: &'a [u8],
    little_endian: bool,
    big: bool,
    /// Its entry count, and where its first entry starts.
    count: usize,
    entries_at: usize,
}

impl<'a> FirstIfd<'a> {
    fn of(bytes: &'a [u8]) -> Option<Self> {
        let mut ifd = FirstIfd { bytes, little_endian: bytes.get(..2)? == b"II", big: false, count: 0, entries_at: 0 };
        ifd.big = ifd.u16_at(2)? == 43;
        if ifd.big {
            let at = usize::try_from(ifd.uint_at(8, 8)?).ok()?;
            (ifd.count, ifd.entries_at) = (usize::try_from(ifd.uint_at(at, 8)?).ok()?, at.checked_add(8)?);
        } else {
            let at = usize::try_from(ifd.uint_at(4, 4)?).ok()?;
            (ifd.count, ifd.entries_at) = (usize::from(ifd.u16_at(at)?), at.checked_add(2)?);
        }
        Some(ifd)
    }

    /// An unsigned integer of `len` bytes at `at`, in the file's byte order.
    fn uint_at(&self, at: usize, len: usize) -> Option<u64> {
        let b = self.bytes.get(at..at.checked_add(len)?)?;
        let order = |(i, &x): (usize, &u8)| u64::from(x) << (8 * if self.little_endian { i } else { len - 1 - i });
        Some(b.iter().enumerate().map(order).sum())
    }

    fn u16_at(&self, at: usize) -> Option<u16> {
        self.uint_at(at, 2).map(|v| v as u16)
    }

    fn entry_size(&self) -> usize {
        if self.big { 20 } else { 12 }
    }

    /// Where the IFD's next-IFD offset is, and its width.
    fn next_at(&self) -> Option<(usize, usize)> {
        let at = self.entries_at.checked_add(self.count.checked_mul(self.entry_size())?)?;
        Some((at, if self.big { 8 } else { 4 }))
    }
}

/// Where the first IFD's PhotometricInterpretation value (a SHORT held in its entry) is, and the
/// IFD. `None`: no such entry where the header says.
fn photometric_place(bytes: &[u8]) -> Option<(FirstIfd<'_>, usize)> {
    let ifd = FirstIfd::of(bytes)?;
    let at = (0..ifd.count).map(|i| ifd.entries_at + i * ifd.entry_size()).find(|&e| ifd.u16_at(e) == Some(262))?;
    if ifd.u16_at(at + 2)? != 3 {
        return None;
    }
    let value_at = at + if ifd.big { 12 } else { 8 };
    Some((ifd, value_at))
}

/// The first IFD's PhotometricInterpretation as the file holds it: the `tiff` crate does not open
/// a file whose interpretation it does not know (LogLuv), so this is read before it is.
fn photometric_in_file(bytes: &[u8]) -> Option<u16> {
    let (ifd, value_at) = photometric_place(bytes)?;
    ifd.u16_at(value_at)
}

/// The bytes with the first IFD's PhotometricInterpretation set to `value`.
fn with_photometric(bytes: &[u8], value: u16) -> Option<Vec<u8>> {
    let (ifd, value_at) = photometric_place(bytes)?;
    let mut out = bytes.to_vec();
    let v = if ifd.little_endian { value.to_le_bytes() } else { value.to_be_bytes() };
    out.get_mut(value_at..value_at + 2)?.copy_from_slice(&v);
    Some(out)
}

/// The bytes a TIFF's first page is decoded from: a copy whose first IFD ends the IFD list when
/// its next-IFD offset points back at that IFD, else the bytes as they are. The `tiff` crate
/// (under the image crate's decoder too) refuses that list as a cycle when it opens the file,
/// before any page is read; only the first page is converted, so where the list goes after it
/// does not matter. libtiff reads the pages before the loop and warns of it (`tifftopnm` and
/// ImageMagick convert such a file). A longer loop back is never followed: nothing here reads
/// past the first IFD.
pub(super) fn first_page_only(bytes: &[u8]) -> Cow<'_, [u8]> {
    let Some(ifd) = FirstIfd::of(bytes) else { return Cow::Borrowed(bytes) };
    let first = ifd.entries_at - if ifd.big { 8 } else { 2 };
    let Some((next_at, width)) = ifd.next_at() else { return Cow::Borrowed(bytes) };
    if ifd.uint_at(next_at, width) != Some(first as u64) {
        return Cow::Borrowed(bytes);
    }
    let mut copy = bytes.to_vec();
    copy[next_at..next_at + width].fill(0);
    Cow::Owned(copy)
}

/// Every sample of the first page, interleaved, 8 bits each (16-bit unsigned samples keep their
/// high byte; other unsigned widths up to 31 bits are scaled to 0..255, rounded, unless
/// `indices`, which keeps them as they are; signed, 32/64-bit and float ones as [`level`] makes
/// them).
fn read_samples(decoder: &mut Decoder<Cursor<&[u8]>>, indices: bool) -> Result<(u32, u32, Vec<u8>), String> {
    let (width, height) = decoder.dimensions().map_err(words)?;
    let color = decoder.colortype().map_err(words)?;
    let (bits, spp) = match color {
        ColorType::Gray(b) => (b, 1u16),
        ColorType::RGB(b) | ColorType::YCbCr(b) => (b, 3),
        ColorType::RGBA(b) | ColorType::CMYK(b) => (b, 4),
        ColorType::Multiband { bit_depth, num_samples } => (bit_depth, num_samples),
        other => return Err(format!("the TIFF's colour type {other:?} is not converted")),
    };
    let sample_format = first_value(decoder, Tag::SampleFormat).unwrap_or(SAMPLE_FORMAT_UNSIGNED);
    let unsigned = sample_format == SAMPLE_FORMAT_UNSIGNED;
    let known_bits = if unsigned { matches!(bits, 1..=32 | 64) } else { matches!(bits, 8 | 16 | 32 | 64) };
    // Grey with extra samples (`Multiband`) keeps only its first one or two, so it may have any
    // number; [`header`] counted them all in the page's bytes.
    let known_samples = spp >= 1 && (spp <= 4 || matches!(color, ColorType::Multiband { .. }));
    if !known_bits || !known_samples {
        return Err(format!("the TIFF has {spp} samples of {bits} bits per pixel, which is not converted"));
    }
    if indices && bits > 8 {
        return Err(format!("a palette TIFF of {bits}-bit indices is not converted"));
    }
    // Unsigned samples of every width but 8, 16 and 32 arrive packed, most significant bit first
    // (TIFF's bit order for every width, whatever the byte order), each row padded to a byte.
    // The `tiff` crate unpacks none of them but 1/2/4-bit grey: the rest are read here.
    let packed = unsigned && bits < 32 && !matches!(bits, 8 | 16);
    let crate_unpacks = matches!(bits, 1 | 2 | 4) && matches!(color, ColorType::Gray(_) | ColorType::Multiband { .. });
    let planar = decoder.find_tag_unsigned::<u16>(Tag::PlanarConfiguration).map_err(words)? == Some(2);
    let planes = if planar { u32::from(spp) } else { 1 };
    let per_chunk = if planar { 1 } else { usize::from(spp) };
    let (cw, ch) = decoder.chunk_dimensions();
    if cw == 0 || ch == 0 {
        return Err("the TIFF's strips or tiles are empty".into());
    }
    let across = width.div_ceil(cw);
    let per_plane = across * height.div_ceil(ch);
    let spp = usize::from(spp);
    let total = (width as usize).checked_mul(height as usize).and_then(|n| n.checked_mul(spp));
    let mut out = vec![0u8; total.ok_or("the TIFF is too large")?];
    let predictor = decoder.find_tag_unsigned::<u16>(Tag::Predictor).map_err(words)?.unwrap_or(1);
    let compression = decoder.find_tag_unsigned::<u16>(Tag::Compression).map_err(words)?.unwrap_or(COMPRESSION_NONE);
    let reader = match compression {
        COMPRESSION_LZW if unsigned && bits < 32 && predictor <= PREDICTOR_HORIZONTAL => {
            Chunks::Lzw(LzwChunks::new(decoder, bits, per_chunk)?)
        }
        COMPRESSION_WEBP => Chunks::WebP(WebPChunks::new(decoder, per_chunk)?),
        COMPRESSION_ZSTD => Chunks::Zstd(ZstdChunks::new(decoder, bits, sample_format, per_chunk)?),
        COMPRESSION_NONE if packed && !crate_unpacks => Chunks::Raw(RawChunks::new(decoder)?),
        _ if packed && !crate_unpacks => {
            return Err(format!("a TIFF of {bits}-bit samples under compression {compression} is not converted"));
        }
        _ => Chunks::Tiff,
    };
    // What a chunk's values come as: packed samples of their own width, else one byte each.
    let bits = if packed { bits } else { 8 };
    let max = (1u64 << bits) - 1;
    // libtiff keeps 24-bit samples, alone among the odd widths, in the file's byte order (it swaps
    // them as it swaps 16- and 32-bit ones); the others are a bit stream.
    let swap_24 = bits == 24 && decoder.inner().get_ref().starts_with(b"II");
    for plane in 0..planes {
        for chunk in 0..per_plane {
            let (x0, y0) = ((chunk % across) * cw, (chunk / across) * ch);
            let (dw, dh) = ((width - x0).min(cw) as usize, (height - y0).min(ch) as usize);
            let index = plane * per_plane + chunk;
            let mut values: Vec<u8> = match &reader {
                Chunks::Lzw(lzw) => lzw.rows(index as usize, cw as usize, dh)?,
                Chunks::WebP(webp) => webp.chunk(index as usize, (cw, ch), dh)?,
                Chunks::Zstd(zstd) => zstd.rows(index as usize, cw as usize, dh)?,
                Chunks::Raw(raw) => raw.rows(index as usize, cw as usize * per_chunk * usize::from(bits), dh)?,
                Chunks::Tiff => eight_bit_levels(decoder.read_chunk(index).map_err(words)?),
            };
            if swap_24 {
                values.chunks_exact_mut(3).for_each(|sample| sample.reverse());
            }
            // A chunk comes out as wide as its data or, for a padded tile the reader did not
            // cut (planes after the first), as wide as the tile: told apart by its length.
            let row_bytes = |w: usize| (w * per_chunk * usize::from(bits)).div_ceil(8);
            let stride = if dw != cw as usize && values.len() >= row_bytes(cw as usize) * dh {
                row_bytes(cw as usize)
            } else {
                row_bytes(dw)
            };
            if values.len() < stride * (dh - 1) + row_bytes(dw) {
                return Err(format!("a strip or tile of the TIFF holds fewer rows than its place ({dh})"));
            }
            for y in 0..dh {
                let line = values.get(y * stride..).ok_or_else(short)?;
                let out_row = (y0 as usize + y) * width as usize;
                for x in 0..dw {
                    for s in 0..per_chunk {
                        let i = x * per_chunk + s;
                        let v = if bits == 8 {
                            *line.get(i).ok_or_else(short)?
                        } else {
                            let raw = packed_sample(line, i, bits).ok_or_else(short)?;
                            // Rounded to the nearest level, as libtiff's readers scale (exact
                            // for 1, 2 and 4 bits).
                            if indices { raw as u8 } else { ((raw * 510 + max) / (2 * max)) as u8 }
                        };
                        let channel = if planar { plane as usize } else { s };
                        out[(out_row + x0 as usize + x) * spp + channel] = v;
                    }
                }
            }
        }
    }
    Ok((width, height, out))
}

/// Sample `i` of a row of `bits`-wide samples (up to 31) packed most significant bit first.
fn packed_sample(row: &[u8], i: usize, bits: u8) -> Option<u64> {
    let bits = usize::from(bits);
    let first = i.checked_mul(bits)?;
    let last = first + bits - 1;
    let word = row.get(first / 8..=last / 8)?.iter().fold(0u64, |w, &b| w << 8 | u64::from(b));
    Some((word >> (7 - last % 8)) & ((1 << bits) - 1))
}

/// Where a page's chunks come from: the `tiff` crate's reader, or one of those kept here.
enum Chunks<'a> {
    Tiff,
    Raw(RawChunks<'a>),
    Lzw(LzwChunks<'a>),
    WebP(WebPChunks<'a>),
    Zstd(ZstdChunks<'a>),
}

/// A chunk's samples as 8-bit levels: unsigned 8-bit (and packed 1/2/4-bit) bytes as they are,
/// unsigned 16-bit ones by their high byte, every other kind through [`level`].
fn eight_bit_levels(samples: DecodingResult) -> Vec<u8> {
    match samples {
        DecodingResult::U8(v) => v,
        DecodingResult::U16(v) => v.iter().map(|s| (s >> 8) as u8).collect(),
        // Pillow (mode I) and libvips both hold an unsigned 32-bit sample as a signed one: from
        // 2^31 up it is negative, so black in both.
        DecodingResult::U32(v) => v.iter().map(|&s| level(f64::from(s as i32))).collect(),
        DecodingResult::U64(v) => v.iter().map(|&s| level(s as f64)).collect(),
        DecodingResult::I8(v) => v.iter().map(|&s| level(f64::from(s))).collect(),
        DecodingResult::I16(v) => v.iter().map(|&s| level(f64::from(s))).collect(),
        DecodingResult::I32(v) => v.iter().map(|&s| level(f64::from(s))).collect(),
        DecodingResult::I64(v) => v.iter().map(|&s| level(s as f64)).collect(),
        DecodingResult::F16(v) => v.iter().map(|&s| level(f64::from(s.to_f32()))).collect(),
        DecodingResult::F32(v) => v.iter().map(|&s| level(f64::from(s))).collect(),
        DecodingResult::F64(v) => v.iter().map(|&s| level(s)).collect(),
    }
}

/// A sample read as a level on the 8-bit scale, its fraction dropped and clipped to 0..255 (NaN
/// is 0): what Pillow's conversion to `L` and libvips' cast to uchar do (the module's header).
fn level(value: f64) -> u8 {
    // `as` truncates toward zero and saturates; NaN becomes 0.
    value.clamp(0.0, 255.0) as u8
}

/// The WebP-compressed chunks of a page (compression 50001, as GDAL writes them): each chunk is a
/// WebP image of the chunk's size, its header read and checked against the chunk before its
/// pixels are decoded (the `tiff` crate's own reader allocates whatever a chunk's header says).
struct WebPChunks<'a> {
    places: ChunkPlaces<'a>,
    samples: usize,
}

impl<'a> WebPChunks<'a> {
    fn new(decoder: &mut Decoder<Cursor<&'a [u8]>>, samples: usize) -> Result<Self, String> {
        if !matches!(samples, 3 | 4) {
            return Err(format!("a WebP-compressed TIFF with {samples} samples per chunk is not converted"));
        }
        Ok(WebPChunks { places: ChunkPlaces::of(decoder)?, samples })
    }

    /// Chunk `index`'s samples, rows as wide as the chunk; at least `rows` rows.
    fn chunk(&self, index: usize, (cw, ch): (u32, u32), rows: usize) -> Result<Vec<u8>, String> {
        let data = self.places.bytes(index)?;
        let broken = |e: image_webp::DecodingError| format!("chunk {index} of the TIFF cannot be decoded (WebP): {e}");
        let mut webp = image_webp::WebPDecoder::new(Cursor::new(data)).map_err(broken)?;
        let (w, h) = webp.dimensions();
        if w != cw || h > ch || (h as usize) < rows {
            return Err(format!("chunk {index} of the TIFF is a {w}x{h} WebP image in a {cw}x{ch} place"));
        }
        if self.samples == 3 && webp.has_alpha() {
            return Err(format!("chunk {index} of the TIFF holds alpha its three samples have no room for"));
        }
        let mut pixels = vec![0u8; webp.output_buffer_size().ok_or("a WebP chunk of the TIFF is too large")?];
        webp.read_image(&mut pixels).map_err(broken)?;
        if self.samples == 4 && !webp.has_alpha() {
            return Ok(pixels.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect());
        }
        Ok(pixels)
    }
}

/// Where a page's chunks (tiles, else strips) are in the file, and the file's byte order.
struct ChunkPlaces<'a> {
    file: &'a [u8],
    offsets: Vec<u64>,
    counts: Vec<u64>,
}

impl<'a> ChunkPlaces<'a> {
    fn of(decoder: &mut Decoder<Cursor<&'a [u8]>>) -> Result<Self, String> {
        let tiled = decoder.find_tag(Tag::TileWidth).map_err(words)?.is_some();
        let (offsets, counts) =
            if tiled { (Tag::TileOffsets, Tag::TileByteCounts) } else { (Tag::StripOffsets, Tag::StripByteCounts) };
        let offsets = decoder.get_tag_u64_vec(offsets).map_err(words)?;
        let counts = decoder.get_tag_u64_vec(counts).map_err(words)?;
        let &file = decoder.inner().get_ref();
        Ok(ChunkPlaces { file, offsets, counts })
    }

    /// Chunk `index`'s bytes in the file.
    fn bytes(&self, index: usize) -> Result<&'a [u8], String> {
        let outside = || format!("chunk {index} of the TIFF is outside the file");
        let (&offset, &count) = self.offsets.get(index).zip(self.counts.get(index)).ok_or_else(outside)?;
        let start = usize::try_from(offset).map_err(|_| outside())?;
        let end = start.checked_add(usize::try_from(count).map_err(|_| outside())?).ok_or_else(outside)?;
        self.file.get(start..end).ok_or_else(outside)
    }

    fn little_endian(&self) -> bool {
        self.file.starts_with(b"II")
    }
}

/// The uncompressed chunks of a page whose samples arrive packed ([`read_samples`]): each chunk's
/// bytes as the file holds them, WhiteIsZero turned to BlackIsZero. A Predictor tag is ignored,
/// as libtiff ignores it on uncompressed data (Pillow and ImageMagick read such a file so).
struct RawChunks<'a> {
    places: ChunkPlaces<'a>,
    white_is_zero: bool,
}

impl<'a> RawChunks<'a> {
    fn new(decoder: &mut Decoder<Cursor<&'a [u8]>>) -> Result<Self, String> {
        let photometric = decoder.find_tag_unsigned::<u16>(Tag::PhotometricInterpretation).map_err(words)?;
        Ok(RawChunks {
            places: ChunkPlaces::of(decoder)?,
            white_is_zero: photometric == Some(PHOTOMETRIC_WHITE_IS_ZERO),
        })
    }

    /// The first `rows` rows of chunk `index`, each `row_bits` wide (fewer when the chunk is cut:
    /// the caller checks the length).
    fn rows(&self, index: usize, row_bits: usize, rows: usize) -> Result<Vec<u8>, String> {
        let data = self.places.bytes(index)?;
        let wanted = row_bits.div_ceil(8).saturating_mul(rows);
        let mut out = data[..data.len().min(wanted)].to_vec();
        if self.white_is_zero {
            out.iter_mut().for_each(|b| *b = !*b);
        }
        Ok(out)
    }
}

/// The LZW-compressed chunks of a page, inflated as the `tiff` crate would give them: rows as
/// wide as the chunk, the horizontal predictor undone, WhiteIsZero turned to BlackIsZero, 16-bit
/// samples cut to their high byte.
struct LzwChunks<'a> {
    places: ChunkPlaces<'a>,
    predictor: bool,
    white_is_zero: bool,
    bits: u8,
    per_chunk: usize,
}

/// The place a chunk decodes into: `wanted` bytes (`None`: more than a usize holds), within the
/// decoder's limits.
fn chunk_place(wanted: Option<usize>) -> Result<Vec<u8>, String> {
    let wanted = wanted.filter(|&n| n as u64 <= DECODE_MAX_ALLOC);
    Ok(vec![0u8; wanted.ok_or("a chunk of the TIFF is larger than the decoder's limits")?])
}

/// `out` when the chunk's data filled it (`filled` bytes): a chunk that decodes to less than its
/// place is broken.
fn filled_place(out: Vec<u8>, filled: usize, index: usize, verb: &str) -> Result<Vec<u8>, String> {
    if filled < out.len() {
        return Err(format!("chunk {index} of the TIFF {verb} to {filled} of the {} bytes of its place", out.len()));
    }
    Ok(out)
}

impl<'a> LzwChunks<'a> {
    fn new(decoder: &mut Decoder<Cursor<&'a [u8]>>, bits: u8, per_chunk: usize) -> Result<Self, String> {
        let places = ChunkPlaces::of(decoder)?;
        let predictor = match decoder.find_tag_unsigned::<u16>(Tag::Predictor).map_err(words)?.unwrap_or(1) {
            1 => false,
            PREDICTOR_HORIZONTAL if matches!(bits, 8 | 16) => true,
            p => return Err(format!("the TIFF's predictor {p} on {bits}-bit samples is not converted")),
        };
        let photometric = decoder.find_tag_unsigned::<u16>(Tag::PhotometricInterpretation).map_err(words)?;
        Ok(LzwChunks {
            places,
            predictor,
            white_is_zero: photometric == Some(PHOTOMETRIC_WHITE_IS_ZERO),
            bits,
            per_chunk,
        })
    }

    /// The first `wanted` bytes chunk `index` inflates to (`None`: more than a usize holds).
    fn inflate(&self, index: usize, wanted: Option<usize>) -> Result<Vec<u8>, String> {
        let mut input = self.places.bytes(index)?;
        let mut out = chunk_place(wanted)?;
        let mut filled = 0;
        let mut lzw = weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
        while filled < out.len() {
            let step = lzw.decode_bytes(input, &mut out[filled..]);
            input = &input[step.consumed_in..];
            filled += step.consumed_out;
            match step.status {
                Ok(weezl::LzwStatus::Ok) if step.consumed_in + step.consumed_out > 0 => {}
                Ok(_) => break,
                Err(e) => return Err(format!("chunk {index} of the TIFF cannot be decoded (LZW): {e:?}")),
            }
        }
        filled_place(out, filled, index, "inflates")
    }

    /// The first `rows` rows of chunk `index`, each `width` samples wide.
    fn rows(&self, index: usize, width: usize, rows: usize) -> Result<Vec<u8>, String> {
        let row_bytes = (width * self.per_chunk * usize::from(self.bits)).div_ceil(8);
        let mut out = self.inflate(index, row_bytes.checked_mul(rows))?;
        let sample_bytes = if self.bits == 16 { 2 } else { 1 };
        if self.predictor {
            let step = self.per_chunk;
            for row in out.chunks_exact_mut(row_bytes) {
                if sample_bytes == 1 {
                    for i in step..row.len() {
                        row[i] = row[i].wrapping_add(row[i - step]);
                    }
                } else {
                    let get = |r: &[u8], i: usize| {
                        let b = [r[2 * i], r[2 * i + 1]];
                        if self.places.little_endian() { u16::from_le_bytes(b) } else { u16::from_be_bytes(b) }
                    };
                    for i in step..row.len() / 2 {
                        let v = get(row, i).wrapping_add(get(row, i - step));
                        let b = if self.places.little_endian() { v.to_le_bytes() } else { v.to_be_bytes() };
                        row[2 * i..2 * i + 2].copy_from_slice(&b);
                    }
                }
            }
        }
        if self.white_is_zero {
            // max - v for unsigned samples of any width is the bitwise complement.
            out.iter_mut().for_each(|b| *b = !*b);
        }
        if sample_bytes == 2 {
            let high = usize::from(self.places.little_endian());
            out = out.chunks_exact(2).map(|s| s[high]).collect();
        }
        Ok(out)
    }
}

/// Zstandard's largest block: what one decoding step may write past the bytes a chunk's place
/// needs.
const ZSTD_BLOCK_MAX: usize = 128 << 10;

/// The window a Zstandard frame in a chunk is decoded with, and the frame's first bytes rewritten
/// to declare it. Encoders declare the window of their level whatever the data (tifffile: 32 MiB
/// for an 8 KiB strip), and the decoder reserves the whole window before it decodes; but only the
/// chunk's place (`wanted` bytes) is read, so no back reference the read needs reaches further
/// than `wanted` plus one block: a larger declared window is cut to the smallest power of two
/// that holds that. `None` for the header: the frame's own is kept (it declares no more, or it
/// is a single segment, whose window is its declared content size, bounded by the same figure).
fn zstd_window(frame: &[u8], wanted: usize) -> (u64, Option<[u8; 6]>) {
    let needed = (wanted as u64 + ZSTD_BLOCK_MAX as u64).next_power_of_two().max(1 << 10);
    let header = match frame {
        [0x28, 0xB5, 0x2F, 0xFD, descriptor, window, ..] if descriptor & 0x20 == 0 => Some((*descriptor, *window)),
        _ => None,
    };
    let Some((descriptor, window)) = header else { return (needed, None) };
    let base = 1u64 << (10 + (window >> 3));
    let declared = base + (base / 8) * u64::from(window & 7);
    if declared <= needed {
        return (needed, None);
    }
    // needed = 2^(10 + exponent), mantissa 0.
    let exponent = (needed.trailing_zeros() - 10) as u8;
    (needed, Some([0x28, 0xB5, 0x2F, 0xFD, descriptor, exponent << 3]))
}

/// The Zstandard-compressed chunks of a page (compression 50000, as libtiff and tifffile write
/// them), decompressed with `ruzstd` (the `tiff` crate reads them only through C libzstd, which
/// the wasm components do not build) into exactly the bytes of the chunk's place and no more,
/// then given as the `tiff` crate gives a chunk: the horizontal predictor undone, WhiteIsZero
/// turned to BlackIsZero, each sample read in the file's byte order as its SampleFormat says.
struct ZstdChunks<'a> {
    places: ChunkPlaces<'a>,
    predictor: bool,
    white_is_zero: bool,
    bits: u8,
    sample_format: u16,
    per_chunk: usize,
}

impl<'a> ZstdChunks<'a> {
    fn new(
        decoder: &mut Decoder<Cursor<&'a [u8]>>,
        bits: u8,
        sample_format: u16,
        per_chunk: usize,
    ) -> Result<Self, String> {
        let not_converted = |what: String| Err(format!("a Zstandard-compressed TIFF {what} is not converted"));
        let kind_known = match sample_format {
            SAMPLE_FORMAT_UNSIGNED => true,
            SAMPLE_FORMAT_SIGNED => matches!(bits, 8 | 16 | 32 | 64),
            SAMPLE_FORMAT_FLOAT => matches!(bits, 32 | 64),
            _ => false,
        };
        if !kind_known {
            return not_converted(format!("of {bits}-bit samples in sample format {sample_format}"));
        }
        let predictor = match decoder.find_tag_unsigned::<u16>(Tag::Predictor).map_err(words)?.unwrap_or(1) {
            1 => false,
            PREDICTOR_HORIZONTAL if matches!(bits, 8 | 16 | 32 | 64) && sample_format != SAMPLE_FORMAT_FLOAT => true,
            p => return not_converted(format!("with predictor {p} on {bits}-bit samples")),
        };
        let photometric = decoder.find_tag_unsigned::<u16>(Tag::PhotometricInterpretation).map_err(words)?;
        let white_is_zero = photometric == Some(PHOTOMETRIC_WHITE_IS_ZERO);
        if white_is_zero && sample_format != SAMPLE_FORMAT_UNSIGNED {
            return not_converted("of WhiteIsZero samples that are not unsigned".into());
        }
        Ok(ZstdChunks { places: ChunkPlaces::of(decoder)?, predictor, white_is_zero, bits, sample_format, per_chunk })
    }

    /// The first `wanted` bytes chunk `index` decompresses to (`None`: more than a usize holds);
    /// fewer is an error, what follows them is not read.
    fn decompress(&self, index: usize, wanted: Option<usize>) -> Result<Vec<u8>, String> {
        use std::io::Read;
        let input = self.places.bytes(index)?;
        let mut out = chunk_place(wanted)?;
        let broken =
            |e: &dyn std::fmt::Display| format!("chunk {index} of the TIFF cannot be decoded (Zstandard): {e}");
        let (window, header) = zstd_window(input, out.len());
        let source = match &header {
            Some(header) => Read::chain(&header[..], &input[header.len()..]),
            None => Read::chain(&[][..], input),
        };
        let mut zstd =
            ruzstd::decoding::StreamingDecoder::new_with_max_window_size(source, window).map_err(|e| broken(&e))?;
        let mut filled = 0;
        while filled < out.len() {
            match zstd.read(&mut out[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) => return Err(broken(&e)),
            }
        }
        filled_place(out, filled, index, "decompresses")
    }

    /// The first `rows` rows of chunk `index`, each `width` samples wide, as 8-bit levels
    /// ([`eight_bit_levels`]; unsigned samples of widths other than 16 and 32 stay packed).
    fn rows(&self, index: usize, width: usize, rows: usize) -> Result<Vec<u8>, String> {
        let row_bytes = (width * self.per_chunk * usize::from(self.bits)).div_ceil(8);
        let mut raw = self.decompress(index, row_bytes.checked_mul(rows))?;
        let size = usize::from(self.bits).div_ceil(8);
        let le = self.places.little_endian();
        let get = |b: &[u8]| {
            b.iter().enumerate().fold(0u64, |v, (i, &x)| v | u64::from(x) << (8 * if le { i } else { size - 1 - i }))
        };
        if self.predictor {
            let step = self.per_chunk * size;
            for row in raw.chunks_exact_mut(row_bytes) {
                for at in (step..row.len()).step_by(size) {
                    let sum = get(&row[at..at + size]).wrapping_add(get(&row[at - step..at - step + size]));
                    for i in 0..size {
                        row[at + i] = (sum >> (8 * if le { i } else { size - 1 - i })) as u8;
                    }
                }
            }
        }
        if self.white_is_zero {
            // max - v for unsigned samples of any width is the bitwise complement.
            raw.iter_mut().for_each(|b| *b = !*b);
        }
        if self.sample_format == SAMPLE_FORMAT_UNSIGNED && self.bits < 32 && self.bits != 16 {
            return Ok(raw); // packed, as [`read_samples`] reads them
        }
        let values = raw.chunks_exact(size).map(get);
        let samples = match (self.sample_format, self.bits) {
            (SAMPLE_FORMAT_UNSIGNED, 16) => DecodingResult::U16(values.map(|v| v as u16).collect()),
            (SAMPLE_FORMAT_UNSIGNED, 32) => DecodingResult::U32(values.map(|v| v as u32).collect()),
            (SAMPLE_FORMAT_UNSIGNED, _) => DecodingResult::U64(values.collect()),
            (SAMPLE_FORMAT_SIGNED, 8) => DecodingResult::I8(values.map(|v| v as u8 as i8).collect()),
            (SAMPLE_FORMAT_SIGNED, 16) => DecodingResult::I16(values.map(|v| v as u16 as i16).collect()),
            (SAMPLE_FORMAT_SIGNED, 32) => DecodingResult::I32(values.map(|v| v as u32 as i32).collect()),
            (SAMPLE_FORMAT_SIGNED, _) => DecodingResult::I64(values.map(|v| v as i64).collect()),
            (_, 32) => DecodingResult::F32(values.map(|v| f32::from_bits(v as u32)).collect()),
            _ => DecodingResult::F64(values.map(f64::from_bits).collect()),
        };
        Ok(eight_bit_levels(samples))
    }
}

/// YCbCr strips that are not JPEG-compressed (LZW or none, 8 bits): each data unit holds a block
/// of luma samples (the subsampling's width × height, row by row) and one Cb and one Cr, as
/// libtiff reads them; chroma is spread over its block (libtiff's RGBA reader does the same) and
/// converted by the page's ReferenceBlackWhite and YCbCrCoefficients ([`YCbCrToRgb`]).
fn decode_ycbcr_strips(decoder: &mut Decoder<Cursor<&[u8]>>, compression: u16) -> Result<DynamicImage, String> {
    let (width, height) = decoder.dimensions().map_err(words)?;
    let not_converted = |what: &str| Err(format!("a YCbCr TIFF {what} is not converted"));
    if decoder.find_tag(Tag::TileWidth).map_err(words)?.is_some() {
        return not_converted("in tiles (not JPEG-compressed)");
    }
    if decoder.find_tag_unsigned::<u16>(Tag::PlanarConfiguration).map_err(words)? == Some(2) {
        return not_converted("in planes (not JPEG-compressed)");
    }
    if decoder.colortype().map_err(words)? != ColorType::YCbCr(8) {
        return not_converted("of other than 8-bit samples");
    }
    if decoder.find_tag_unsigned::<u16>(Tag::Predictor).map_err(words)?.unwrap_or(1) != 1 {
        return not_converted("with a predictor");
    }
    let subsampling = decoder.find_tag_unsigned_vec::<u16>(Tag::ChromaSubsampling).map_err(words)?;
    let (sx, sy) = match subsampling.as_deref() {
        None => (2, 2),
        Some(&[x, y]) if matches!(x, 1 | 2 | 4) && matches!(y, 1 | 2 | 4) && y <= x => (usize::from(x), usize::from(y)),
        Some(other) => return Err(format!("the TIFF's YCbCr subsampling {other:?} is not one TIFF allows")),
    };
    let rows_per_strip = decoder.find_tag_unsigned::<u32>(Tag::RowsPerStrip).map_err(words)?.unwrap_or(height);
    let rows_per_strip = rows_per_strip.clamp(1, height) as usize;
    let lzw = match compression {
        COMPRESSION_LZW => Some(LzwChunks::new(decoder, 8, 3)?),
        COMPRESSION_NONE => None,
        other => return Err(format!("a YCbCr TIFF under compression {other} is not converted")),
    };
    let places = ChunkPlaces::of(decoder)?;
    let to_rgb = YCbCrToRgb::of(decoder)?;
    let (width, height) = (width as usize, height as usize);
    let unit = sx * sy + 2;
    let units_across = width.div_ceil(sx);
    let mut rgb = vec![0u8; width * height * 3];
    for (strip, y0) in (0..height).step_by(rows_per_strip).enumerate() {
        let rows = rows_per_strip.min(height - y0);
        let wanted = units_across.checked_mul(rows.div_ceil(sy)).and_then(|n| n.checked_mul(unit));
        let data = match &lzw {
            Some(lzw) => lzw.inflate(strip, wanted)?,
            None => {
                let bytes = places.bytes(strip)?;
                let wanted = wanted.ok_or_else(short)?;
                bytes
                    .get(..wanted)
                    .ok_or_else(|| format!("strip {strip} of the TIFF is shorter than its rows"))?
                    .to_vec()
            }
        };
        for (n, block) in data.chunks_exact(unit).enumerate() {
            let (bx, by) = ((n % units_across) * sx, y0 + (n / units_across) * sy);
            let (cb, cr) = (block[sx * sy], block[sx * sy + 1]);
            for dy in 0..sy {
                for dx in 0..sx {
                    let (x, y) = (bx + dx, by + dy);
                    if x < width && y < y0 + rows {
                        let at = (y * width + x) * 3;
                        rgb[at..at + 3].copy_from_slice(&to_rgb.convert(block[dy * sx + dx], cb, cr));
                    }
                }
            }
        }
    }
    RgbImage::from_raw(width as u32, height as u32, rgb).map(DynamicImage::ImageRgb8).ok_or_else(short)
}

fn palette(width: u32, height: u32, indices: &[u8], colormap: &[u16]) -> Result<DynamicImage, String> {
    let n = colormap.len() / 3;
    if n == 0 || !colormap.len().is_multiple_of(3) {
        return Err("the TIFF's colour map is empty or not three equal parts".into());
    }
    let mut rgb = Vec::with_capacity(indices.len() * 3);
    for &i in indices {
        let i = usize::from(i);
        if i >= n {
            return Err(format!("a pixel of the TIFF names colour {i} of a {n}-colour map"));
        }
        rgb.extend([colormap[i], colormap[n + i], colormap[2 * n + i]].map(|c| (c >> 8) as u8));
    }
    RgbImage::from_raw(width, height, rgb).map(DynamicImage::ImageRgb8).ok_or_else(short)
}

/// libtiff's YCbCr to RGB (`TIFFYCbCrToRGBInit`): each component brought to full range by
/// ReferenceBlackWhite (luma's black and white onto 0..255, chroma's onto ±127), then the
/// YCbCrCoefficients' luma weights.
pub(super) struct YCbCrToRgb {
    /// Luma's and chroma's black and white code values.
    reference: [f32; 6],
    /// The red, green and blue luma weights.
    luma: [f32; 3],
}

impl YCbCrToRgb {
    pub(super) fn of(decoder: &mut Decoder<Cursor<&[u8]>>) -> Result<Self, String> {
        use tiff::decoder::ifd::Value;
        // RATIONALs, as the specification has them (a zero denominator makes the tag unusable),
        // or the integers some writers put there.
        let rationals = |decoder: &mut Decoder<Cursor<&[u8]>>, tag: Tag| -> Result<Option<Vec<f32>>, String> {
            let Some(value) = decoder.find_tag(tag).map_err(words)? else { return Ok(None) };
            let values = match value {
                Value::List(values) => values,
                one => vec![one],
            };
            let number = |v: &Value| match *v {
                Value::Rational(n, d) if d != 0 => Some(n as f32 / d as f32),
                Value::SRational(n, d) if d != 0 => Some(n as f32 / d as f32),
                Value::Float(f) => Some(f),
                Value::Double(f) => Some(f as f32),
                Value::Byte(n) => Some(f32::from(n)),
                Value::Short(n) => Some(f32::from(n)),
                Value::Unsigned(n) => Some(n as f32),
                _ => None,
            };
            Ok(values.iter().map(number).collect())
        };
        let reference = match rationals(decoder, Tag::Unknown(REFERENCE_BLACK_WHITE))?.as_deref() {
            Some(&[a, b, c, d, e, f]) if b != a && d != c && f != e => [a, b, c, d, e, f],
            _ => JPEG_REFERENCE,
        };
        let luma = match rationals(decoder, Tag::Unknown(YCBCR_COEFFICIENTS))?.as_deref() {
            Some(&[r, g, b]) if g != 0.0 && r != 1.0 && b != 1.0 => [r, g, b],
            _ => JPEG_LUMA,
        };
        Ok(YCbCrToRgb { reference, luma })
    }

    /// Whether this is JPEG's own conversion (full range, BT.601 weights).
    pub(super) fn is_jpegs(&self) -> bool {
        self.reference == JPEG_REFERENCE && self.luma == JPEG_LUMA
    }

    pub(super) fn convert(&self, y: u8, cb: u8, cr: u8) -> [u8; 3] {
        if self.is_jpegs() {
            return ycbcr_to_rgb(y, cb, cr);
        }
        let [y0, y1, cb0, cb1, cr0, cr1] = self.reference;
        let [lr, lg, lb] = self.luma;
        let y = (f32::from(y) - y0) * 255.0 / (y1 - y0);
        let cb = (f32::from(cb) - cb0) * 127.0 / (cb1 - cb0);
        let cr = (f32::from(cr) - cr0) * 127.0 / (cr1 - cr0);
        let r = y + cr * (2.0 - 2.0 * lr);
        let b = y + cb * (2.0 - 2.0 * lb);
        let g = (y - lb * b - lr * r) / lg;
        [r, g, b].map(|v| v.round().clamp(0.0, 255.0) as u8)
    }
}

const YCBCR_COEFFICIENTS: u16 = 529;
const REFERENCE_BLACK_WHITE: u16 = 532;
/// The tags' defaults, which are JPEG's YCbCr.
const JPEG_REFERENCE: [f32; 6] = [0.0, 255.0, 128.0, 255.0, 128.0, 255.0];
const JPEG_LUMA: [f32; 3] = [0.299, 0.587, 0.114];

/// JPEG's YCbCr (full range, BT.601), as libjpeg converts it.
fn ycbcr_to_rgb(y: u8, cb: u8, cr: u8) -> [u8; 3] {
    let (y, cb, cr) = (f32::from(y), f32::from(cb) - 128.0, f32::from(cr) - 128.0);
    let clamp = |v: f32| v.round().clamp(0.0, 255.0) as u8;
    [clamp(y + 1.402 * cr), clamp(y - 0.344_136 * cb - 0.714_136 * cr), clamp(y + 1.772 * cb)]
}

/// Naive CMYK (no ICC profile), as the image crate and Pillow convert it.
fn cmyk_to_rgb(c: u8, m: u8, y: u8, k: u8) -> [u8; 3] {
    let kf = 1.0 - f32::from(k) / 255.0;
    [c, m, y].map(|v| ((255.0 - f32::from(v)) * kf) as u8)
}

/// CCITT Group 3 (T.4, 1D or 2D), Group 4 (T.6) and modified Huffman (compression 2), strip by
/// strip. A strip whose data breaks off after some rows keeps those rows and leaves the rest
/// blank (the fax's background), as libtiff does (its fax decoder stops at a bad code word and fails the strip only when
/// no row decoded, and Pillow and netpbm then show the page); a strip that decodes no row is refused.
fn decode_fax(decoder: &mut Decoder<Cursor<&[u8]>>, compression: u16) -> Result<Page, String> {
    use hayro_ccitt::{DecodeSettings, DecoderContext, EncodingMode};
    let (width, height) = decoder.dimensions().map_err(words)?;
    if decoder.find_tag(Tag::TileWidth).map_err(words)?.is_some() {
        return Err("a tiled CCITT TIFF is not converted".into());
    }
    let t4 = decoder.find_tag_unsigned::<u32>(Tag::Unknown(T4_OPTIONS)).map_err(words)?.unwrap_or(0);
    let fill_order = decoder.find_tag_unsigned::<u16>(Tag::FillOrder).map_err(words)?.unwrap_or(1);
    let photometric = decoder.find_tag_unsigned::<u16>(Tag::PhotometricInterpretation).map_err(words)?;
    let rows_per_strip = decoder.find_tag_unsigned::<u32>(Tag::RowsPerStrip).map_err(words)?.unwrap_or(height).max(1);
    let offsets = decoder.get_tag_u64_vec(Tag::StripOffsets).map_err(words)?;
    let counts = decoder.get_tag_u64_vec(Tag::StripByteCounts).map_err(words)?;
    let bytes = decoder.inner().get_ref();
    // A fax row is black runs on white: with WhiteIsZero (the fax default) black is 0 in the
    // luma written here; BlackIsZero turns the meaning of the runs round.
    let (white, black) = if photometric.unwrap_or(PHOTOMETRIC_WHITE_IS_ZERO) == PHOTOMETRIC_WHITE_IS_ZERO {
        (255u8, 0u8)
    } else {
        (0, 255)
    };
    let mut out = vec![white; width as usize * height as usize];
    let mut damage = None;
    let mut row = 0u32;
    for (strip, (&offset, &count)) in offsets.iter().zip(&counts).enumerate() {
        let start = usize::try_from(offset).map_err(|_| "a strip of the TIFF is outside the file")?;
        let end = start.checked_add(usize::try_from(count).unwrap_or(usize::MAX));
        let data = end.and_then(|end| bytes.get(start..end)).ok_or("a strip of the TIFF is outside the file")?;
        let data: Vec<u8> =
            if fill_order == 2 { data.iter().map(|b| b.reverse_bits()).collect() } else { data.to_vec() };
        let rows = rows_per_strip.min(height.saturating_sub(row));
        if rows == 0 {
            break;
        }
        let (encoding, name) = match compression {
            COMPRESSION_FAX4 => (EncodingMode::Group4, "CCITT Group 4"),
            COMPRESSION_FAX3 if t4 & 1 != 0 => (EncodingMode::Group3_2D, "CCITT Group 3"),
            _ => (EncodingMode::Group3_1D, "CCITT Group 3"),
        };
        let settings = DecodeSettings {
            columns: width,
            rows,
            end_of_block: compression == COMPRESSION_FAX4,
            end_of_line: compression == COMPRESSION_FAX3,
            rows_are_byte_aligned: compression == COMPRESSION_CCITT_RLE
                || (compression == COMPRESSION_FAX3 && t4 & 4 != 0),
            encoding,
            strict: false,
        };
        let mut sink = Rows { out: &mut out, width: width as usize, row: row as usize, rows: rows as usize, black };
        let mut ctx = DecoderContext::new(settings);
        if let Err(e) = hayro_ccitt::decode(&data, &mut sink, &mut ctx) {
            let decoded = rows as usize - sink.rows;
            if decoded == 0 {
                return Err(format!("strip {strip} of the TIFF cannot be decoded ({name}): {e:?}"));
            }
            damage.get_or_insert(format!(
                "strip {strip}'s {name} data is damaged after {decoded} of its {rows} rows; the rows after are left blank"
            ));
        }
        row += rows;
    }
    let image = GrayImage::from_raw(width, height, out).map(DynamicImage::ImageLuma8).ok_or_else(short)?;
    Ok(Page { image, damage })
}

struct Rows<'a> {
    out: &'a mut [u8],
    width: usize,
    row: usize,
    rows: usize,
    black: u8,
}

impl hayro_ccitt::Decoder for Rows<'_> {
    fn push_row(&mut self, changes: &[u32]) {
        if self.rows == 0 {
            return;
        }
        let line = &mut self.out[self.row * self.width..][..self.width];
        for pair in changes.chunks(2) {
            let from = (pair[0] as usize).min(self.width);
            let to = pair.get(1).map_or(self.width, |&t| (t as usize).min(self.width));
            line[from..to.max(from)].fill(self.black);
        }
        self.row += 1;
        self.rows -= 1;
    }
}
