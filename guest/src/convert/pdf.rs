//! PDF pages rendered to pixels with `hayro` (pure Rust: parser, interpreter, CPU rasteriser).
//!
//! - Pages are numbered from 1; the page tree is resolved once (hayro walks it iteratively with a
//!   visited set, so cyclic `/Kids`/`/Parent` end; `/Count` is not trusted, the pages found are).
//! - Scale: the page is fitted into `max_side`² and never rendered above [`MAX_DPI`] (200 dpi:
//!   an A4 page is 1654x2339 at 200 dpi, so at 2000² it comes out at ~171 dpi, 1414x2000).
//! - Background white (paper is opaque): the result has no transparency.
//! - Encrypted PDFs: hayro opens those whose user password is empty (the common "no copying"
//!   protection) and those are rendered; one that needs a password is refused in words.
//! - Hostile input is bounded before hayro sees a page ([`check_streams`]): every stream of the
//!   file is looked at once — an image larger than [`crate::limits::DECODE_MAX_PIXELS`] (by its
//!   dictionary, and a JPEG's by its frame header) is refused, and Flate / RunLength data are
//!   inflated into a counter (not kept) up to a per-stream and a per-file cap, so a zlib bomb is
//!   refused instead of exhausting the sandbox's memory. Form XObject recursion is bounded by
//!   hayro (depth 50), as is its page-tree walk.

use std::sync::Arc;

use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_interpret::util::TransformExt;
use hayro::hayro_syntax::Filter;
use hayro::hayro_syntax::Pdf;
use hayro::hayro_syntax::object::{Name, Object, Stream};
use hayro::hayro_syntax::page::Page;
use hayro::hayro_syntax::{DecryptionError, LoadPdfError};
use hayro::kurbo::Affine;
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::vello_cpu::{Pixmap, RasterizerSettings, RenderContext, Resources, TargetInit};
use hayro::{RenderCache, RenderSettings, render_into};
use image::RgbaImage;

use super::PageError;
use crate::limits::{DECODE_MAX_ALLOC, DECODE_MAX_PIXELS, PDF_RAW_CAP};
use crate::signature::{PDF_MIME, is_pdf, sniff};
use crate::verdict::{Reason, Refusal};

/// The finest a page is rendered: 200 dpi reads 6 pt footnotes; finer only costs tokens.
pub const MAX_DPI: f32 = 200.0;

/// Bytes one stream may decode to (Flate / RunLength), checked before rendering.
pub const STREAM_DECODED_MAX: u64 = DECODE_MAX_ALLOC;

/// Bytes all the streams of one file may decode to together (the check's CPU is bounded too).
pub const FILE_DECODED_MAX: u64 = 512 * 1024 * 1024;

/// How many pages the PDF has.
pub fn page_count(bytes: &[u8]) -> Result<u32, PageError> {
    let pdf = open(bytes)?;
    Ok(u32::try_from(pdf.pages().len()).unwrap_or(u32::MAX))
}

/// Render page `page` (1-based) fitted into `max_side`², at most [`MAX_DPI`], on white. The note
/// says what was rendered: "page 2 of 5 at 150 dpi, 1240x1754".
pub fn render_page(bytes: &[u8], page: u32, max_side: u32) -> Result<(RgbaImage, String), PageError> {
    let pdf = open(bytes)?;
    let pages = pdf.pages();
    let count = u32::try_from(pages.len()).unwrap_or(u32::MAX);
    if page == 0 || page > count {
        return Err(PageError::NoSuchPage { requested: page, count });
    }
    check_streams(&pdf, bytes.len() as u64)?;
    let p = &pages[(page - 1) as usize];
    let (image, dpi) = render(p, page, max_side.clamp(1, u32::from(u16::MAX)), bytes.len() as u64)?;
    if image.pixels().all(|px| px.0 == [255, 255, 255, 255]) {
        return Err(PageError::Blank { page });
    }
    let dpi = if dpi == 0 { "under 1".to_string() } else { dpi.to_string() };
    let note = format!("page {page} of {count} at {dpi} dpi, {}x{}", image.width(), image.height());
    Ok((image, note))
}

fn refused(reason: Reason, raw: u64, limit: Option<u64>, message: impl Into<String>) -> PageError {
    PageError::Refused(Refusal::new(reason, raw, limit, message))
}

fn open(bytes: &[u8]) -> Result<Pdf, PageError> {
    let raw = bytes.len() as u64;
    if raw > PDF_RAW_CAP {
        return Err(refused(
            Reason::RawTooLarge,
            raw,
            Some(PDF_RAW_CAP),
            format!("{raw} bytes exceed the document cap of {PDF_RAW_CAP} bytes"),
        ));
    }
    if !is_pdf(bytes) {
        return Err(refused(
            Reason::MagicMismatch,
            raw,
            None,
            format!("the bytes are not {PDF_MIME} (they look like {})", sniff(bytes)),
        ));
    }
    Pdf::new(Arc::new(bytes.to_vec())).map_err(|e| match e {
        LoadPdfError::Decryption(d) => PageError::Encrypted(encrypted_words(d)),
        LoadPdfError::Invalid => refused(
            Reason::Undecodable,
            raw,
            None,
            "the PDF cannot be read: its structure (cross-reference table, trailer or page tree) is broken",
        ),
    })
}

fn encrypted_words(e: DecryptionError) -> String {
    const FIX: &str = "Save an unencrypted copy (e.g. `qpdf --decrypt --password=PASSWORD in.pdf out.pdf`, or \
                       print it to a new PDF) and read that instead.";
    match e {
        DecryptionError::PasswordProtected => {
            format!("the PDF is encrypted with a password; the gate cannot read it. {FIX}")
        }
        DecryptionError::UnsupportedAlgorithm => {
            format!("the PDF is encrypted with an algorithm the gate does not support. {FIX}")
        }
        DecryptionError::MissingIDEntry | DecryptionError::InvalidEncryption => {
            format!("the PDF is encrypted and its encryption dictionary is broken; the gate cannot read it. {FIX}")
        }
    }
}

/// Look at every stream once before rendering: images over the pixel cap and streams that
/// decode past the caps are refused (fail closed: what the check cannot bound is refused).
fn check_streams(pdf: &Pdf, raw: u64) -> Result<(), PageError> {
    let mut total = 0u64;
    for object in pdf.objects() {
        let Object::Stream(stream) = object else { continue };
        check_image(&stream, raw)?;
        total = total.saturating_add(decoded_len(&stream, raw)?);
        if total > FILE_DECODED_MAX {
            return Err(refused(
                Reason::DimensionsTooLarge,
                raw,
                Some(FILE_DECODED_MAX),
                format!("the PDF's streams decode to more than {FILE_DECODED_MAX} bytes (a decompression bomb?)"),
            ));
        }
    }
    Ok(())
}

fn check_image(stream: &Stream<'_>, raw: u64) -> Result<(), PageError> {
    let dict = stream.dict();
    let is_image = dict.get::<Name<'_>>(b"Subtype").is_some_and(|n| n.as_ref() == b"Image");
    if !is_image {
        return Ok(());
    }
    let side = |long: &[u8], short: &[u8]| dict.get::<u32>(long).or_else(|| dict.get::<u32>(short)).unwrap_or(0);
    let mut dims = vec![(side(b"Width", b"W"), side(b"Height", b"H"))];
    if stream.filters().iter().any(|f| matches!(f, Filter::DctDecode)) {
        // The frame header, not the dictionary, is what the JPEG decoder allocates for.
        let data = stream.raw_data();
        let mut decoder = jpeg_decoder::Decoder::new(&data[..]);
        if decoder.read_info().is_ok()
            && let Some(info) = decoder.info()
        {
            dims.push((u32::from(info.width), u32::from(info.height)));
        }
    }
    for (w, h) in dims {
        let pixels = u64::from(w) * u64::from(h);
        if pixels > DECODE_MAX_PIXELS {
            return Err(refused(
                Reason::DimensionsTooLarge,
                raw,
                Some(DECODE_MAX_PIXELS),
                format!("the PDF holds a {w}x{h} image, over the gate's decode limit of {DECODE_MAX_PIXELS} pixels"),
            ));
        }
    }
    Ok(())
}

/// What a stream's first decompressing filter expands to, counted without keeping it (Flate,
/// RunLength; the text encodings only shrink). Past [`STREAM_DECODED_MAX`]: refused.
fn decoded_len(stream: &Stream<'_>, raw: u64) -> Result<u64, PageError> {
    let filters = stream.filters();
    let Some(first) = filters.first() else { return Ok(0) };
    let data = stream.raw_data();
    let len = match first {
        Filter::FlateDecode => inflated_len(&data, STREAM_DECODED_MAX + 1),
        Filter::RunLengthDecode => run_length_len(&data),
        _ => 0,
    };
    if len > STREAM_DECODED_MAX {
        return Err(refused(
            Reason::DimensionsTooLarge,
            raw,
            Some(STREAM_DECODED_MAX),
            format!("a stream of the PDF decodes to more than {STREAM_DECODED_MAX} bytes (a decompression bomb?)"),
        ));
    }
    Ok(len)
}

/// Bytes a zlib (or raw deflate) stream inflates to, up to `cap` (then `cap`). Corrupt data
/// counts what came out before the error (hayro keeps the same prefix).
fn inflated_len(data: &[u8], cap: u64) -> u64 {
    use miniz_oxide::inflate::TINFLStatus;
    use miniz_oxide::inflate::core::{DecompressorOxide, decompress, inflate_flags};
    let zlib = data.len() >= 2 && data[0] & 0x0f == 8 && (u16::from(data[0]) << 8 | u16::from(data[1])) % 31 == 0;
    let mut flags = 0;
    if zlib {
        flags |= inflate_flags::TINFL_FLAG_PARSE_ZLIB_HEADER;
    }
    let mut decomp = DecompressorOxide::new();
    let mut window = vec![0u8; 32 * 1024];
    let (mut pos_in, mut pos_out, mut total) = (0usize, 0usize, 0u64);
    loop {
        let (status, used_in, used_out) = decompress(
            &mut decomp,
            &data[pos_in..],
            &mut window,
            pos_out,
            flags | inflate_flags::TINFL_FLAG_IGNORE_ADLER32,
        );
        pos_in += used_in;
        total += used_out as u64;
        pos_out = (pos_out + used_out) % window.len();
        if total >= cap {
            return cap;
        }
        match status {
            TINFLStatus::HasMoreOutput => continue,
            _ => return total,
        }
    }
}

/// Bytes RunLengthDecode data expands to (PDF 7.4.5), without expanding it.
fn run_length_len(data: &[u8]) -> u64 {
    let (mut i, mut total) = (0usize, 0u64);
    while let Some(&n) = data.get(i) {
        match n {
            128 => break,
            0..=127 => {
                total += u64::from(n) + 1;
                i += usize::from(n) + 2;
            }
            _ => {
                total += 257 - u64::from(n);
                i += 2;
            }
        }
    }
    total
}

/// Render `page` fitted into `max_side`² at most [`MAX_DPI`]; the image and the dpi used.
fn render(page: &Page<'_>, number: u32, max_side: u32, raw: u64) -> Result<(RgbaImage, u32), PageError> {
    let (w_pt, h_pt) = page.render_dimensions();
    if !(w_pt.is_finite() && h_pt.is_finite() && w_pt > 0.0 && h_pt > 0.0) {
        return Err(refused(
            Reason::Undecodable,
            raw,
            None,
            format!("page {number} has no usable size (its MediaBox/CropBox is {w_pt}x{h_pt} pt)"),
        ));
    }
    let fit = max_side as f32 / w_pt.max(h_pt);
    let scale = fit.min(MAX_DPI / 72.0);
    let px = |pt: f32| ((pt * scale).round() as u32).clamp(1, max_side) as u16;
    let (width, height) = (px(w_pt), px(h_pt));

    let cache = RenderCache::new();
    let interpreter = InterpreterSettings::default();
    let settings = RenderSettings::default();
    let mut ctx = RenderContext::new(width, height);
    let transform = Affine::scale(f64::from(scale)) * page.initial_transform(true).to_kurbo();
    render_into(page, &cache, &interpreter, &settings, &mut ctx, transform);
    ctx.flush();
    let mut pixmap = Pixmap::new(width, height);
    ctx.render_with(
        &mut pixmap,
        &mut Resources::default(),
        RasterizerSettings { target_init: TargetInit::Clear(WHITE), ..Default::default() },
    );
    // Opaque white under everything: premultiplied equals straight alpha.
    let data = pixmap.data_as_u8_slice().to_vec();
    let image = RgbaImage::from_raw(u32::from(width), u32::from(height), data).ok_or_else(|| {
        refused(Reason::Undecodable, raw, None, format!("page {number} did not render to a whole image"))
    })?;
    let dpi = (scale * 72.0).round() as u32;
    Ok((image, dpi))
}

#[cfg(test)]
mod tests;
