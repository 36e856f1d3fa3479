//! PDF pages rendered to pixels with `hayro` (pure Rust: parser, interpreter, CPU rasteriser).
//!
//! - Pages are numbered from 1; the page tree is resolved once (hayro walks it iteratively with a
//!   visited set, so cyclic `/Kids`/`/Parent` end; `/Count` is not trusted, the pages found are).
//! - Scale: the page is fitted into `max_side`² and never rendered above [`MAX_DPI`] (200 dpi:
//!   an A4 page is 1654x2339 at 200 dpi, so at 2000² it comes out at ~171 dpi, 1414x2000).
//! - A page smaller than the fit that draws an image is drawn 2 or 4 times over in each direction
//!   and box-reduced ([`supersampling`]), so each pixel shows what the page covers of it: an image
//!   drawn a few times up (a 72 dpi image at 200 dpi) has its pixels' edges where the page puts
//!   them, not snapped to the nearest pixel. Never more pixels than a page at the whole fit.
//! - Background white (paper is opaque): the result has no transparency.
//! - Encrypted PDFs: hayro opens those whose user password is empty (the common "no copying"
//!   protection) and those are rendered; one that needs a password is refused in words.
//! - Hostile input is bounded before hayro sees a page ([`check_streams`]): every stream of the
//!   file is looked at once — an image larger than [`crate::limits::DECODE_MAX_PIXELS`] (by its
//!   dictionary, and by the size its data declares: a JPEG's frame header, JBIG2 segments, a JPEG
//!   2000 header, CCITT's parameters) is refused, and each filter chain (Flate, LZW, RunLength,
//!   ASCIIHex, ASCII85) is decoded stage by stage within a per-stream cap, the last stage counted
//!   and not kept, and a per-file cap, so a decompression bomb is refused instead of exhausting
//!   the sandbox's memory. Then the page's content is walked ([`check_page_work`]): operators,
//!   painting operators and form draws counted with each form's work multiplied by the times it is
//!   drawn (fan-out), a form cycle refused, inline images' sizes checked.

use std::sync::Arc;

use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_interpret::util::TransformExt;
use hayro::hayro_syntax::Filter;
use hayro::hayro_syntax::Pdf;
use hayro::hayro_syntax::object::{Name, Object, Stream};
use hayro::hayro_syntax::page::{Page, Rotation};
use hayro::hayro_syntax::{DecryptionError, LoadPdfError};
use hayro::kurbo::Affine;
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::vello_cpu::{Pixmap, RasterizerSettings, RenderContext, Resources, TargetInit};
use hayro::{RenderCache, RenderSettings, render_into};
use image::RgbaImage;
use zune_jpeg::zune_core::bytestream::ZCursor;

use super::PageError;
use crate::limits::{DECODE_MAX_ALLOC, DECODE_MAX_PIXELS, PDF_RAW_CAP};
use crate::signature::{PDF_MIME, is_pdf, sniff};
use crate::verdict::{Reason, Refusal};

/// The finest a page is rendered: 200 dpi reads 6 pt footnotes; finer only costs tokens.
pub const MAX_DPI: f32 = 200.0;

/// Bytes one image stream may decode to (Flate / RunLength), checked before rendering (the
/// image's samples are bounded by [`IMAGE_MEMORY_MAX`] too).
pub const STREAM_DECODED_MAX: u64 = DECODE_MAX_ALLOC;

/// Bytes any other stream (page content, forms, fonts, colour profiles) may decode to. hayro
/// decodes a content stream more than once and grows its buffer by doubling, so a page of 190 MB
/// of zeros inside two Flate stages (under the image cap) ran the convert component out of its
/// 512 MiB; the largest fonts (CJK, ~30 MB) and the densest pages the operator limit allows fit
/// well under this.
pub const OTHER_STREAM_DECODED_MAX: u64 = 64 * 1024 * 1024;

/// Bytes all the streams of one file may decode to together (the check's CPU is bounded too).
pub const FILE_DECODED_MAX: u64 = 512 * 1024 * 1024;

/// Bytes one image of a page may take to draw: its decoded samples and the RGBA copy hayro paints
/// from. In the convert component a 7000x7000 grey image (49 MB of samples, 245 MB by this count)
/// drew; the same in RGB (147 MB of samples) ran out of the 512 MiB memory.
pub const IMAGE_MEMORY_MAX: u64 = 256 * 1024 * 1024;

/// Operators one page executes, its form XObjects counted each time they are drawn (a form drawn
/// ten times from a form drawn ten times counts a hundred times). In the convert component a
/// million operators filling small rectangles rendered in 0.42 s.
pub const MAX_PAGE_OPERATORS: u64 = 1_000_000;
/// Painting operators (fills, strokes, shadings, text shows, images and forms drawn) one page
/// executes, forms counted as above. hayro records each painted shape's coverage before it
/// rasterises: in the convert component 4,000 strokes across an A4 page took 0.63 s and 290 MB
/// of the host's RSS, 10,000 ran out of the 512 MiB memory; 6,000 leaves room for the page.
pub const MAX_PAGE_PAINTS: u64 = 6_000;
/// Form XObjects one page draws, each time counted: drawing one costs about 0.1 ms in the convert
/// component (10,000 single-rectangle forms, 1.14 s).
pub const MAX_PAGE_FORMS: u64 = 5_000;
/// How deep form XObjects may draw each other (hayro stops at 50).
const MAX_FORM_DEPTH: u32 = 50;

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
    let work = check_page_work(p, page, bytes.len() as u64)?;
    let max_side = max_side.clamp(1, u32::from(u16::MAX));
    let (image, dpi) = render(p, page, max_side, work.images > 0, bytes.len() as u64)?;
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
    if let Some(r) = Refusal::over_raw_cap(raw, PDF_RAW_CAP, "the document cap") {
        return Err(PageError::Refused(r));
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
        let cap = if is_image(&stream) {
            check_image_size(&stream, raw)?;
            STREAM_DECODED_MAX
        } else {
            OTHER_STREAM_DECODED_MAX
        };
        total = total.saturating_add(decoded_len(&stream, raw, cap)?);
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

fn is_image(stream: &Stream<'_>) -> bool {
    stream.dict().get::<Name<'_>>(b"Subtype").is_some_and(|n| n.as_ref() == b"Image")
}

/// An image stream's size by its dictionary and, for the image codecs, by the header its data
/// carries — what the decoder allocates for, whatever the dictionary says: a JPEG's frame header,
/// a JBIG2 page-information or region segment, a JPEG 2000 `ihdr` box or SIZ marker, and the
/// CCITT parameters' columns and rows. Inline images (abbreviated keys) too.
fn check_image_size(stream: &Stream<'_>, raw: u64) -> Result<(), PageError> {
    let dict = stream.dict();
    let side = |long: &[u8], short: &[u8]| dict.get::<u32>(long).or_else(|| dict.get::<u32>(short)).unwrap_or(0);
    let mut dims = vec![(side(b"Width", b"W"), side(b"Height", b"H"))];
    let filters = stream.filters();
    let data = stream.raw_data();
    for filter in &filters {
        match filter {
            Filter::DctDecode => {
                // The frame header, not the dictionary, is what the JPEG decoder allocates for;
                // read by the decoder hayro draws with (zune-jpeg), allowed every side it allows.
                let options = zune_jpeg::zune_core::options::DecoderOptions::default()
                    .set_max_width(usize::from(u16::MAX))
                    .set_max_height(usize::from(u16::MAX));
                let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(&data[..]), options);
                if decoder.decode_headers().is_ok()
                    && let Some((w, h)) = decoder.dimensions()
                {
                    dims.push((w as u32, h as u32));
                }
            }
            Filter::Jbig2Decode => {
                dims.extend(jbig2_sizes(&data));
                let globals = dict
                    .get::<hayro::hayro_syntax::object::Dict<'_>>(b"DecodeParms")
                    .or_else(|| dict.get::<hayro::hayro_syntax::object::Dict<'_>>(b"DP"))
                    .and_then(|p| p.get::<Stream<'_>>(b"JBIG2Globals"));
                if let Some(globals) = globals {
                    dims.extend(jbig2_sizes(&globals.raw_data()));
                }
            }
            Filter::JpxDecode => dims.extend(jpx_sizes(&data)),
            Filter::CcittFaxDecode => {
                let params = dict
                    .get::<hayro::hayro_syntax::object::Dict<'_>>(b"DecodeParms")
                    .or_else(|| dict.get::<hayro::hayro_syntax::object::Dict<'_>>(b"DP"))
                    .unwrap_or_default();
                let columns = params.get::<u32>(b"Columns").unwrap_or(1728);
                let rows = params.get::<u32>(b"Rows").unwrap_or(0);
                dims.push((columns, rows.max(dims[0].1)));
            }
            _ => {}
        }
    }
    let sample_bits = image_sample_bits(dict);
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
        let bytes = pixels.saturating_mul(sample_bits).div_ceil(8).saturating_add(pixels.saturating_mul(4));
        if bytes > IMAGE_MEMORY_MAX {
            return Err(refused(
                Reason::DimensionsTooLarge,
                raw,
                Some(IMAGE_MEMORY_MAX),
                format!(
                    "the PDF holds a {w}x{h} image that needs about {bytes} bytes to draw (its samples and their \
                     RGBA copy), over the gate's {IMAGE_MEMORY_MAX}"
                ),
            ));
        }
    }
    Ok(())
}

/// Bits per pixel of an image's decoded samples: components × bits per component, by its
/// colour space (an ICC profile's `N`); what the dictionary does not say counts as 4 × 8.
fn image_sample_bits(dict: &hayro::hayro_syntax::object::Dict<'_>) -> u64 {
    let name = |n: &[u8]| -> Option<u64> {
        match n {
            b"DeviceGray" | b"G" | b"CalGray" | b"Indexed" | b"I" | b"Separation" | b"Pattern" => Some(1),
            b"DeviceRGB" | b"RGB" | b"CalRGB" | b"Lab" => Some(3),
            b"DeviceCMYK" | b"CMYK" => Some(4),
            _ => None,
        }
    };
    if dict.get::<bool>(b"ImageMask").or_else(|| dict.get::<bool>(b"IM")) == Some(true) {
        return 1;
    }
    let space = dict.get::<Object<'_>>(b"ColorSpace").or_else(|| dict.get::<Object<'_>>(b"CS"));
    let components = match space {
        Some(Object::Name(n)) => name(n.as_ref()),
        Some(Object::Array(a)) => {
            let mut items = a.iter::<Object<'_>>();
            match items.next() {
                Some(Object::Name(n)) if n.as_ref() == b"ICCBased" => match items.next() {
                    Some(Object::Stream(icc)) => icc.dict().get::<u32>(b"N").map(u64::from),
                    _ => None,
                },
                Some(Object::Name(n)) => name(n.as_ref()),
                _ => None,
            }
        }
        _ => None,
    };
    let bits = dict.get::<u32>(b"BitsPerComponent").or_else(|| dict.get::<u32>(b"BPC")).map_or(8, u64::from);
    components.unwrap_or(4).clamp(1, 32) * bits.clamp(1, 16)
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The sizes JBIG2 data (the embedded organisation PDF uses: segments without a file header)
/// declares: each page-information segment's page and each region segment's region. A segment
/// whose length is unknown ends the walk (what came before is what can be read).
fn jbig2_sizes(data: &[u8]) -> Vec<(u32, u32)> {
    let mut sizes = Vec::new();
    let mut at = 0usize;
    while at + 11 <= data.len() && sizes.len() < 10_000 {
        let number = be32(data, at).unwrap_or(0);
        let flags = data[at + 4];
        let kind = flags & 0x3f;
        let mut p = at + 5;
        let Some(&count_byte) = data.get(p) else { break };
        let referred = if count_byte >> 5 == 7 {
            let Some(long) = be32(data, p) else { break };
            let n = (long & 0x1fff_ffff) as usize;
            // The long form: a 29-bit count, then a retention bit per referred segment and one more.
            p += 4 + (n + 1).div_ceil(8).min(data.len());
            n
        } else {
            p += 1;
            usize::from(count_byte >> 5)
        };
        let ref_size = if number <= 256 {
            1
        } else if number <= 65_536 {
            2
        } else {
            4
        };
        p = p.saturating_add(referred.saturating_mul(ref_size));
        p += if flags & 0x40 != 0 { 4 } else { 1 };
        let Some(length) = be32(data, p) else { break };
        p += 4;
        // Page information (48) and the region segments (text 4-7, halftone 20-23, generic 36-39,
        // refinement 40-43) begin with width and height.
        if matches!(kind, 48 | 4..=7 | 20..=23 | 36..=39 | 40..=43)
            && let (Some(w), Some(h)) = (be32(data, p), be32(data, p + 4))
        {
            // A page of unknown height (striped) says 0xffffffff: its stripes' regions bound it.
            sizes.push((w, if kind == 48 && h == u32::MAX { 0 } else { h }));
        }
        if length == u32::MAX {
            break;
        }
        at = p.saturating_add(length as usize);
    }
    sizes
}

/// The sizes JPEG 2000 data declares: a JP2 file's `ihdr` box (height, width) and a codestream's
/// SIZ marker (the image area less its offset).
fn jpx_sizes(data: &[u8]) -> Vec<(u32, u32)> {
    let mut sizes = Vec::new();
    let head = &data[..data.len().min(64 * 1024)];
    if let Some(i) = head.windows(4).position(|w| w == b"ihdr")
        && let (Some(h), Some(w)) = (be32(head, i + 4), be32(head, i + 8))
    {
        sizes.push((w, h));
    }
    if let Some(i) = head.windows(4).position(|w| w == [0xff, 0x4f, 0xff, 0x51])
        && let (Some(x), Some(y), Some(xo), Some(yo)) =
            (be32(head, i + 8), be32(head, i + 12), be32(head, i + 16), be32(head, i + 20))
    {
        sizes.push((x.saturating_sub(xo), y.saturating_sub(yo)));
    }
    sizes
}

/// What a stream decodes to over its whole filter chain (Flate inside Flate, ASCIIHex then Flate,
/// LZW, RunLength, ASCII85), each stage decoded within `cap` and the last only counted (not
/// kept); an image codec ends the chain (its size is [`check_image_size`]'s). Past the cap: refused.
fn decoded_len(stream: &Stream<'_>, raw: u64, cap: u64) -> Result<u64, PageError> {
    let filters = stream.filters();
    let dict = stream.dict();
    let params: Vec<Option<hayro::hayro_syntax::object::Dict<'_>>> = match dict
        .get::<hayro::hayro_syntax::object::Array<'_>>(b"DecodeParms")
        .or_else(|| dict.get::<hayro::hayro_syntax::object::Array<'_>>(b"DP"))
    {
        Some(array) => array.iter::<Object<'_>>().map(|o| o.into_dict()).collect(),
        None => vec![
            dict.get::<hayro::hayro_syntax::object::Dict<'_>>(b"DecodeParms")
                .or_else(|| dict.get::<hayro::hayro_syntax::object::Dict<'_>>(b"DP")),
        ],
    };
    let mut data = stream.raw_data();
    let mut len = 0u64;
    for (i, filter) in filters.iter().enumerate() {
        let last = i + 1 == filters.len();
        let early_change = params.get(i).and_then(|p| p.as_ref()).and_then(|p| p.get::<i32>(b"EarlyChange")) != Some(0);
        let mut out = Sink { kept: (!last).then(Vec::new), len: 0, cap: cap + 1 };
        match filter {
            Filter::FlateDecode => inflate(&data, &mut out),
            Filter::LzwDecode => lzw(&data, early_change, &mut out),
            Filter::RunLengthDecode => run_length(&data, &mut out),
            Filter::AsciiHexDecode => ascii_hex(&data, &mut out),
            Filter::Ascii85Decode => ascii85(&data, &mut out),
            Filter::Crypt => continue,
            _ => break,
        }
        len = out.len;
        if len > cap {
            return Err(refused(
                Reason::DimensionsTooLarge,
                raw,
                Some(cap),
                format!("a stream of the PDF decodes to more than {cap} bytes (a decompression bomb?)"),
            ));
        }
        if let Some(kept) = out.kept {
            data = std::borrow::Cow::Owned(kept);
        }
    }
    Ok(len)
}

/// Where a filter stage's output goes: counted, kept only if another stage follows, stopped at
/// `cap` bytes.
struct Sink {
    kept: Option<Vec<u8>>,
    len: u64,
    cap: u64,
}

impl Sink {
    /// Take `bytes`; false once the cap is reached (the stage stops).
    fn put(&mut self, bytes: &[u8]) -> bool {
        let room = self.cap.saturating_sub(self.len).min(bytes.len() as u64) as usize;
        if let Some(kept) = &mut self.kept {
            kept.extend_from_slice(&bytes[..room]);
        }
        self.len += room as u64;
        self.len < self.cap
    }
}

/// A zlib (or raw deflate) stream inflated into `out`. Corrupt data gives what came out before
/// the error (hayro keeps the same prefix).
fn inflate(data: &[u8], out: &mut Sink) {
    use miniz_oxide::inflate::TINFLStatus;
    use miniz_oxide::inflate::core::{DecompressorOxide, decompress, inflate_flags};
    let zlib = data.len() >= 2 && data[0] & 0x0f == 8 && (u16::from(data[0]) << 8 | u16::from(data[1])) % 31 == 0;
    let mut flags = 0;
    if zlib {
        flags |= inflate_flags::TINFL_FLAG_PARSE_ZLIB_HEADER;
    }
    let mut decomp = DecompressorOxide::new();
    let mut window = vec![0u8; 32 * 1024];
    let (mut pos_in, mut pos_out) = (0usize, 0usize);
    loop {
        let (status, used_in, used_out) = decompress(
            &mut decomp,
            &data[pos_in..],
            &mut window,
            pos_out,
            flags | inflate_flags::TINFL_FLAG_IGNORE_ADLER32,
        );
        pos_in += used_in;
        if !out.put(&window[pos_out..pos_out + used_out]) {
            return;
        }
        pos_out = (pos_out + used_out) % window.len();
        match status {
            TINFLStatus::HasMoreOutput => continue,
            _ => return,
        }
    }
}

/// PDF's LZW (MSB first, 8-bit symbols; `EarlyChange` 1 unless the parameters say 0) into `out`.
fn lzw(data: &[u8], early_change: bool, out: &mut Sink) {
    let mut decoder = if early_change {
        weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
    } else {
        weezl::decode::Decoder::new(weezl::BitOrder::Msb, 8)
    };
    let mut buffer = vec![0u8; 32 * 1024];
    let mut input = data;
    loop {
        let result = decoder.decode_bytes(input, &mut buffer);
        input = &input[result.consumed_in..];
        if !out.put(&buffer[..result.consumed_out]) {
            return;
        }
        match result.status {
            Ok(weezl::LzwStatus::Ok) if result.consumed_in + result.consumed_out > 0 => continue,
            _ => return,
        }
    }
}

fn run_length(data: &[u8], out: &mut Sink) {
    let mut i = 0usize;
    while let Some(&n) = data.get(i) {
        let more = match n {
            128 => break,
            0..=127 => {
                let end = (i + usize::from(n) + 2).min(data.len());
                let more = out.put(&data[(i + 1).min(end)..end]);
                i += usize::from(n) + 2;
                more
            }
            _ => {
                let byte = data.get(i + 1).copied().unwrap_or(0);
                i += 2;
                out.put(&[byte; 257][..257 - usize::from(n)])
            }
        };
        if !more {
            return;
        }
    }
}

fn ascii_hex(data: &[u8], out: &mut Sink) {
    let mut decoded = Vec::with_capacity(data.len() / 2 + 1);
    let mut high = None;
    for &c in data {
        let v = match c {
            b'>' => break,
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => continue,
        };
        match high.take() {
            None => high = Some(v),
            Some(h) => decoded.push(h << 4 | v),
        }
    }
    if let Some(h) = high {
        decoded.push(h << 4);
    }
    out.put(&decoded);
}

fn ascii85(data: &[u8], out: &mut Sink) {
    let mut decoded = Vec::with_capacity(data.len());
    let (mut group, mut n) = (0u64, 0usize);
    for &c in data {
        match c {
            b'~' => break,
            b'z' if n == 0 => decoded.extend_from_slice(&[0; 4]),
            b'!'..=b'u' => {
                group = group * 85 + u64::from(c - b'!');
                n += 1;
                if n == 5 {
                    decoded.extend_from_slice(&(group as u32).to_be_bytes());
                    (group, n) = (0, 0);
                }
            }
            _ => {}
        }
        if decoded.len() as u64 >= out.cap {
            break;
        }
    }
    if n > 1 {
        for _ in n..5 {
            group = group * 85 + 84;
        }
        decoded.extend_from_slice(&(group as u32).to_be_bytes()[..n - 1]);
    }
    out.put(&decoded);
}

/// What one page executes, forms counted each time they are drawn, and the inline images it
/// holds, before hayro runs it (see [`MAX_PAGE_OPERATORS`], [`MAX_PAGE_PAINTS`], [`MAX_PAGE_FORMS`]);
/// the work it counted.
fn check_page_work(page: &Page<'_>, number: u32, raw: u64) -> Result<Work, PageError> {
    let mut walk = PageWork { raw, memo: std::collections::HashMap::new(), open: Vec::new() };
    let content = page.page_stream().unwrap_or(&[]);
    let work = walk.stream(content, page.resources(), 0)?;
    let over = |what: &str, n: u64, limit: u64| {
        refused(
            Reason::DimensionsTooLarge,
            raw,
            Some(limit),
            format!("page {number} is too costly to render: it executes {n} {what}; the limit is {limit}"),
        )
    };
    if work.operators > MAX_PAGE_OPERATORS {
        return Err(over("operators (forms counted each time they are drawn)", work.operators, MAX_PAGE_OPERATORS));
    }
    if work.paints > MAX_PAGE_PAINTS {
        return Err(over(
            "painting operators (fills, strokes, text, images; forms counted each time they are drawn)",
            work.paints,
            MAX_PAGE_PAINTS,
        ));
    }
    if work.forms > MAX_PAGE_FORMS {
        return Err(over("form XObject draws", work.forms, MAX_PAGE_FORMS));
    }
    Ok(work)
}

#[derive(Clone, Copy, Default)]
struct Work {
    operators: u64,
    paints: u64,
    forms: u64,
    /// Image XObjects and inline images drawn (those in patterns, soft masks and Type 3 glyphs
    /// are not counted).
    images: u64,
}

impl Work {
    fn add(&mut self, other: Work, times: u64) {
        self.operators = self.operators.saturating_add(other.operators.saturating_mul(times));
        self.paints = self.paints.saturating_add(other.paints.saturating_mul(times));
        self.forms = self.forms.saturating_add(other.forms.saturating_mul(times));
        self.images = self.images.saturating_add(other.images.saturating_mul(times));
    }
}

struct PageWork {
    raw: u64,
    /// A form's work, by object: counted once however often it is drawn.
    memo: std::collections::HashMap<(u32, i32), Work>,
    /// The forms being counted (a form that draws itself is refused).
    open: Vec<(u32, i32)>,
}

impl PageWork {
    fn stream(
        &mut self,
        content: &[u8],
        resources: &hayro::hayro_syntax::page::Resources<'_>,
        depth: u32,
    ) -> Result<Work, PageError> {
        use hayro::hayro_syntax::content::UntypedIter;
        let mut work = Work::default();
        let mut draws: std::collections::HashMap<Vec<u8>, u64> = std::collections::HashMap::new();
        let mut ops = UntypedIter::new(content);
        while let Some(op) = ops.next() {
            work.operators += 1;
            let name: &[u8] = op.operator.as_ref();
            match name {
                b"S" | b"s" | b"f" | b"F" | b"f*" | b"B" | b"B*" | b"b" | b"b*" | b"sh" | b"Tj" | b"TJ" | b"'"
                | b"\"" => work.paints += 1,
                b"BI" => {
                    work.paints += 1;
                    work.images += 1;
                    for operand in op.operands() {
                        if let Object::Stream(image) = operand {
                            check_image_size(image, self.raw)?;
                        }
                    }
                }
                b"Do" => {
                    if let Some(Object::Name(n)) = op.operands().next() {
                        *draws.entry(n.as_ref().to_vec()).or_default() += 1;
                    }
                }
                _ => {}
            }
            if work.operators > MAX_PAGE_OPERATORS {
                return Ok(work);
            }
        }
        for (name, times) in draws {
            work.paints = work.paints.saturating_add(times);
            let Some(xobject) = resources.get_x_object(&Name::new_unescaped(&name)) else { continue };
            match xobject.dict().get::<Name<'_>>(b"Subtype") {
                Some(n) if n.as_ref() == b"Form" => {}
                Some(n) if n.as_ref() == b"Image" => {
                    work.images = work.images.saturating_add(times);
                    continue;
                }
                _ => continue,
            }
            work.forms = work.forms.saturating_add(times);
            let inner = self.form(&xobject, resources, depth + 1)?;
            work.add(inner, times);
        }
        Ok(work)
    }

    fn form(
        &mut self,
        form: &Stream<'_>,
        parent: &hayro::hayro_syntax::page::Resources<'_>,
        depth: u32,
    ) -> Result<Work, PageError> {
        let id = form.obj_id();
        let key = (id.obj_number, id.gen_number);
        if let Some(work) = self.memo.get(&key) {
            return Ok(*work);
        }
        if self.open.contains(&key) || depth > MAX_FORM_DEPTH {
            return Err(refused(
                Reason::DimensionsTooLarge,
                self.raw,
                None,
                format!(
                    "the PDF's form XObjects draw each other in a cycle or more than {MAX_FORM_DEPTH} deep; the \
                     page cannot be rendered"
                ),
            ));
        }
        // hayro decodes the form with the same bound; what does not decode draws nothing.
        let Ok(content) = form.decoded() else { return Ok(Work::default()) };
        let own = form.dict().get::<hayro::hayro_syntax::object::Dict<'_>>(b"Resources");
        self.open.push(key);
        let work = match own {
            Some(dict) => self.stream(&content, &hayro::hayro_syntax::page::Resources::new(dict), depth),
            None => self.stream(&content, parent, depth),
        };
        self.open.pop();
        let work = work?;
        self.memo.insert(key, work);
        Ok(work)
    }
}

/// Render `page` fitted into `max_side`² at most [`MAX_DPI`], drawn finer where it `draws_images`
/// ([`supersampling`]); the image and the dpi used.
fn render(
    page: &Page<'_>,
    number: u32,
    max_side: u32,
    draws_images: bool,
    raw: u64,
) -> Result<(RgbaImage, u32), PageError> {
    let (w_pt, h_pt) = page.render_dimensions();
    if !(w_pt.is_finite() && h_pt.is_finite() && w_pt > 0.0 && h_pt > 0.0) {
        return Err(refused(
            Reason::Undecodable,
            raw,
            None,
            format!("page {number} has no usable size (its MediaBox/CropBox is {w_pt}x{h_pt} pt)"),
        ));
    }
    // hayro takes a side under 1 pt as 1 pt and flips the content about that height: a 0.36 pt
    // page came out 3 px, its content in the bottom-left pixel. An unrotated page is sized by
    // its crop box, and its content lifted back to the top below.
    let (true_w, true_h) = match page.rotation() {
        Rotation::None => {
            let crop = page.intersected_crop_box();
            (crop.width() as f32, crop.height() as f32)
        }
        _ => (w_pt, h_pt),
    };
    let (true_w, true_h) = if true_w.is_finite() && true_h.is_finite() && true_w > 0.0 && true_h > 0.0 {
        (true_w.min(w_pt), true_h.min(h_pt))
    } else {
        (w_pt, h_pt)
    };
    let fit = max_side as f32 / true_w.max(true_h);
    let scale = fit.min(MAX_DPI / 72.0);
    let px = |pt: f32| ((pt * scale).round() as u32).clamp(1, max_side) as u16;
    let (width, height) = (px(true_w), px(true_h));

    let k = if draws_images { supersampling(width, height, max_side) } else { 1 };
    let cache = RenderCache::new();
    let interpreter = InterpreterSettings::default();
    let settings = RenderSettings::default();
    let mut ctx = RenderContext::new(width * k, height * k);
    // An unrotated page under 1 pt: hayro's flip about 1 pt put its content that far too low.
    let lift = Affine::translate((0.0, -f64::from(h_pt - true_h)));
    let transform = Affine::scale(f64::from(scale * f32::from(k))) * lift * page.initial_transform(true).to_kurbo();
    render_into(page, &cache, &interpreter, &settings, &mut ctx, transform);
    ctx.flush();
    let mut pixmap = Pixmap::new(width * k, height * k);
    ctx.render_with(
        &mut pixmap,
        &mut Resources::default(),
        RasterizerSettings { target_init: TargetInit::Clear(WHITE), ..Default::default() },
    );
    // Opaque white under everything: premultiplied equals straight alpha.
    let data = match k {
        1 => pixmap.data_as_u8_slice().to_vec(),
        k => box_reduced(pixmap.data_as_u8_slice(), usize::from(width) * usize::from(k), usize::from(k)),
    };
    let image = RgbaImage::from_raw(u32::from(width), u32::from(height), data).ok_or_else(|| {
        refused(Reason::Undecodable, raw, None, format!("page {number} did not render to a whole image"))
    })?;
    let dpi = (scale * 72.0).round() as u32;
    Ok((image, dpi))
}

/// How many times over in each direction a `width`×`height` page that draws an image is drawn
/// before it is reduced to its size: 4 or 2 while the drawing has no more pixels than a page at
/// the whole fit (`max_side`²), else 1. hayro draws an image without `/Interpolate` by its nearest
/// pixel, so at a scale that is not whole (a 72 dpi image on a 200 dpi page: 2.78 pixels each)
/// every few pixels one image pixel's colour stands where two meet. Drawn finer and box-reduced,
/// each pixel is what the page covers of it, as poppler and Ghostscript show it when they draw it
/// finer (a 17×9 image at 72 dpi: 28.7 → 35.8 dB against pdftoppm, tests/pdf-grid). A page of
/// paths and text only is drawn once: hayro anti-aliases their edges by area already (the cairo
/// chart of bench/: 31.7 dB against pdftoppm drawn once, 32.1 drawn twice over, at 2.8× the time).
/// The bound keeps a small page's work and memory within those of a large one.
fn supersampling(width: u16, height: u16, max_side: u32) -> u16 {
    let budget = u64::from(max_side) * u64::from(max_side);
    [4u16, 2]
        .into_iter()
        .find(|&k| {
            let (w, h) = (u32::from(width) * u32::from(k), u32::from(height) * u32::from(k));
            w <= u32::from(u16::MAX) && h <= u32::from(u16::MAX) && u64::from(w) * u64::from(h) <= budget
        })
        .unwrap_or(1)
}

/// An RGBA drawing `row_pixels` wide reduced `k` times in each direction, each pixel the mean of
/// its k×k block (the drawing is opaque: no alpha weighting).
fn box_reduced(drawing: &[u8], row_pixels: usize, k: usize) -> Vec<u8> {
    let out_row = row_pixels / k * 4;
    let block = (k * k) as u32;
    let mut sums = vec![0u32; out_row];
    let mut out = Vec::with_capacity(drawing.len() / (k * k));
    for band in drawing.chunks_exact(row_pixels * 4 * k) {
        sums.fill(0);
        for row in band.chunks_exact(row_pixels * 4) {
            for (sum, pixels) in sums.chunks_exact_mut(4).zip(row.chunks_exact(4 * k)) {
                for pixel in pixels.chunks_exact(4) {
                    for (s, &v) in sum.iter_mut().zip(pixel) {
                        *s += u32::from(v);
                    }
                }
            }
        }
        out.extend(sums.iter().map(|&s| ((s + block / 2) / block) as u8));
    }
    out
}

#[cfg(test)]
mod tests;
