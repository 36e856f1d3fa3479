//! Conversion of what no provider takes into what it does, inside the sandbox: SVG (rendered),
//! BMP, TIFF (first page), ICO (largest entry), a GIF's first frame (for profiles that refuse
//! animation, or GIF), a PDF page (rendered). The result is handed to the gate as a PNG, so it is
//! admitted by exactly the rules any PNG is (fit, ladder, provider limits); only its pixels are
//! not decoded again, the gate is given the ones it was written from.
//!
//! The decoders and renderers are behind the `convert` cargo feature: the `preflight` component
//! that browsers download does not carry them, and refuses a conversion in words that say which
//! component does. HEIC and AVIF are never converted (no pure-Rust decoder fits the sandbox): they
//! are refused, with or without `convert`, in words that say what the user can do.
//!
//! Order, as the gate's: claimed type → raw size (the read caps) → signature → header (a bomb is
//! refused before any allocation, under [`crate::gate::decode::decode_limits`] and the caller's
//! pixel budget) → decode or render, fitted into 2000² → PNG (lossless, alpha kept) → the gate.

#[cfg(feature = "convert")]
mod bmp;
#[cfg(feature = "convert")]
pub mod pdf;
#[cfg(feature = "convert")]
mod raster;
#[cfg(feature = "convert")]
pub mod svg;
#[cfg(feature = "convert")]
mod tiff_layouts;

use crate::gate::decode::Budget;
#[cfg(feature = "convert")]
use crate::limits::FIT_SIDE;
use crate::limits::{PDF_RAW_CAP, RAW_CAP, RAW_CAP_DOWNSAMPLE};
use crate::options::Options;
use crate::signature::{self, Heif, ImageType, PDF_MIME, normalize_mime, sniff};
#[cfg(feature = "convert")]
use crate::verdict::Dimensions;
use crate::verdict::{Admitted, Reason, Refusal, Verdict};

/// The canonical media types this module converts from (what `conversion.convertible-types`
/// answers), when the feature is built.
pub const SVG_MIME: &str = "image/svg+xml";
pub const BMP_MIME: &str = "image/bmp";
pub const TIFF_MIME: &str = "image/tiff";
pub const ICO_MIME: &str = "image/vnd.microsoft.icon";
pub const GIF_MIME: &str = "image/gif";
pub const HEIC_MIME: &str = "image/heic";
pub const AVIF_MIME: &str = "image/avif";

/// Whether this build carries the converters.
pub const AVAILABLE: bool = cfg!(feature = "convert");

/// What `conversion.convertible-types` answers: the types converted from (a GIF only for the
/// profiles that refuse it or its animation; a PDF page through `admit_pdf_page`). Empty when
/// the build carries no converters.
pub fn convertible_types() -> &'static [&'static str] {
    if AVAILABLE { &[SVG_MIME, BMP_MIME, TIFF_MIME, ICO_MIME, GIF_MIME, PDF_MIME] } else { &[] }
}

/// A source type the gate can convert (or names in a refusal: HEIC, AVIF).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Svg,
    Bmp,
    Tiff,
    Ico,
    /// Never converted: no pure-Rust decoder fits the sandbox. Named so the refusal can say what
    /// the user can do.
    Heic,
    Avif,
}

impl Source {
    /// The canonical media type.
    pub fn mime(self) -> &'static str {
        match self {
            Source::Svg => SVG_MIME,
            Source::Bmp => BMP_MIME,
            Source::Tiff => TIFF_MIME,
            Source::Ico => ICO_MIME,
            Source::Heic => HEIC_MIME,
            Source::Avif => AVIF_MIME,
        }
    }

    /// The name people use for it.
    pub fn name(self) -> &'static str {
        match self {
            Source::Svg => "SVG",
            Source::Bmp => "BMP",
            Source::Tiff => "TIFF",
            Source::Ico => "ICO",
            Source::Heic => "HEIC",
            Source::Avif => "AVIF",
        }
    }

    /// The bytes carry this type's signature (strict, as the four image types').
    pub fn matches(self, bytes: &[u8]) -> bool {
        match self {
            Source::Svg => signature::is_svg(bytes),
            Source::Bmp => signature::is_bmp(bytes),
            Source::Tiff => signature::is_tiff(bytes),
            Source::Ico => signature::is_ico(bytes),
            Source::Heic => signature::heif_kind(bytes) == Some(Heif::Heic),
            Source::Avif => signature::heif_kind(bytes) == Some(Heif::Avif),
        }
    }
}

/// Why a PDF page did not become an image. Each has its own words (`message`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageError {
    /// Pages are numbered from 1.
    NoSuchPage { requested: u32, count: u32 },
    /// The PDF is encrypted (the words say what to do).
    Encrypted(String),
    /// The page rendered to nothing: every pixel the background.
    Blank { page: u32 },
    /// The PDF (or the rendered page) was refused by the gate's rules.
    Refused(Refusal),
}

impl PageError {
    pub fn message(&self) -> String {
        match self {
            PageError::NoSuchPage { requested, count } => {
                format!("page {requested} does not exist: the PDF has {count} page(s), numbered from 1")
            }
            PageError::Encrypted(words) => words.clone(),
            PageError::Blank { page } => format!("page {page} of the PDF renders to nothing (every pixel is white)"),
            PageError::Refused(r) => r.message.clone(),
        }
    }
}

/// The source type a claimed media type names, if this module knows it. Parameters and case are
/// ignored; the common aliases are taken (`image/svg`, `image/x-ms-bmp`, `image/x-bmp`,
/// `image/tif`, `image/x-icon`, `image/ico`, `image/heif`, `image/heic-sequence`, …).
pub fn source_of(claimed_mime: &str) -> Option<Source> {
    match normalize_mime(claimed_mime).as_str() {
        "image/svg+xml" | "image/svg" => Some(Source::Svg),
        "image/bmp" | "image/x-ms-bmp" | "image/x-bmp" => Some(Source::Bmp),
        "image/tiff" | "image/tif" | "image/x-tiff" => Some(Source::Tiff),
        "image/vnd.microsoft.icon" | "image/x-icon" | "image/ico" | "image/icon" => Some(Source::Ico),
        "image/heic" | "image/heif" | "image/heic-sequence" | "image/heif-sequence" => Some(Source::Heic),
        "image/avif" | "image/avif-sequence" => Some(Source::Avif),
        _ => None,
    }
}

/// Admit `bytes`, converting first when `options.convert` is set and the claimed type is one
/// the module converts (or a GIF with frames for a profile that refuses animation). `None`: not
/// a conversion case; the caller goes on with the plain gate. HEIC and AVIF are refused here
/// with or without `convert`.
pub fn admit_converting(bytes: &[u8], claimed_mime: &str, options: &Options) -> Option<Verdict> {
    let mut budget = Budget::UNLIMITED;
    admit_converting_within(bytes, claimed_mime, options, &mut budget)
}

/// [`admit_converting`], charging the pixels it decodes to `budget` (the walks share one).
pub fn admit_converting_within(
    bytes: &[u8],
    claimed_mime: &str,
    options: &Options,
    budget: &mut Budget,
) -> Option<Verdict> {
    let raw = bytes.len() as u64;
    let source = source_of(claimed_mime);
    if let Some(source @ (Source::Heic | Source::Avif)) = source {
        return Some(Err(heif_refusal(source, raw)));
    }
    if !options.convert {
        return None;
    }
    let gif = ImageType::from_mime(claimed_mime) == Some(ImageType::Gif);
    if source.is_none() && !gif {
        return None;
    }
    let from = source.map(Source::mime).unwrap_or(GIF_MIME);
    if gif {
        // A GIF the profile takes is converted only when the profile refuses animation and this
        // one is animated (known from its bytes, below); without the converters the plain gate
        // refuses an animated one as it always did.
        let profile = options.provider.profile();
        let takes_gif = profile.accepts(ImageType::Gif);
        if takes_gif && !(profile.still_gif_only && AVAILABLE) {
            return None;
        }
    }
    if !AVAILABLE {
        return Some(Err(Refusal::new(
            Reason::MimeUnsupported,
            raw,
            None,
            format!(
                "{from} is converted only by the `convert` component (and `agent-tool`); this build (the `preflight` \
                 component) carries no converters"
            ),
        )));
    }
    let cap = if options.downsample { RAW_CAP_DOWNSAMPLE } else { RAW_CAP };
    if let Some(r) = Refusal::over_raw_cap(raw, cap, "the read cap") {
        return Some(Err(r));
    }
    let signed = match source {
        Some(s) => s.matches(bytes),
        None => ImageType::Gif.matches(bytes),
    };
    if !signed {
        return Some(Err(Refusal::new(
            Reason::MagicMismatch,
            raw,
            None,
            format!("the bytes are not {from} (they look like {})", sniff(bytes)),
        )));
    }
    converted(bytes, source, options, budget)
}

#[cfg(feature = "convert")]
fn converted(bytes: &[u8], source: Option<Source>, options: &Options, budget: &mut Budget) -> Option<Verdict> {
    let raw = bytes.len() as u64;
    let made = match source {
        Some(Source::Svg) => svg::render(bytes, FIT_SIDE).map(|img| {
            let (w, h) = img.dimensions();
            raster::Made {
                image: image::DynamicImage::ImageRgba8(img),
                source_dimensions: Dimensions { width: w, height: h },
                from: SVG_MIME,
                note: format!("rendered at {w}x{h}"),
            }
        }),
        Some(s) => raster::decode(bytes, s, budget),
        None => match raster::gif_first_frame(bytes, options, budget) {
            Ok(None) => return None, // a still GIF the profile takes: the plain gate
            Ok(Some(made)) => Ok(made),
            Err(r) => Err(r),
        },
    };
    Some(made.and_then(|made| raster::admit_made(made, raw, options, budget)))
}

#[cfg(not(feature = "convert"))]
fn converted(_: &[u8], _: Option<Source>, _: &Options, _: &mut Budget) -> Option<Verdict> {
    None // unreachable: refused above when the build carries no converters
}

/// HEIC and AVIF: named, and what the user can do, with or without `convert`.
fn heif_refusal(source: Source, raw: u64) -> Refusal {
    let how = match source {
        Source::Avif => "`magick x.avif x.png` or `avifdec x.avif x.png`",
        _ => "`heif-convert x.heic x.png` or `magick x.heic x.png`, or set the phone's camera to \"Most Compatible\"",
    };
    Refusal::new(
        Reason::MimeUnsupported,
        raw,
        None,
        format!(
            "{} is not converted: no decoder of it fits the sandbox (it needs a native HEVC/AV1 library); convert \
             it to PNG or JPEG first, e.g. {how}",
            source.mime()
        ),
    )
}

/// Render page `page` (1-based) of a PDF and admit it as an image under `options`.
pub fn admit_pdf_page(bytes: &[u8], page: u32, options: &Options) -> Result<Admitted, PageError> {
    let raw = bytes.len() as u64;
    if !AVAILABLE {
        return Err(PageError::Refused(Refusal::new(
            Reason::MimeUnsupported,
            raw,
            None,
            "PDF pages are rendered only by the `convert` component (and `agent-tool`); this build (the `preflight` \
             component) carries no renderer",
        )));
    }
    if let Some(r) = Refusal::over_raw_cap(raw, PDF_RAW_CAP, "the PDF cap") {
        return Err(PageError::Refused(r));
    }
    if !signature::is_pdf(bytes) {
        return Err(PageError::Refused(Refusal::new(
            Reason::MagicMismatch,
            raw,
            None,
            format!("the bytes are not {PDF_MIME} (they look like {})", sniff(bytes)),
        )));
    }
    if page == 0 {
        return Err(PageError::NoSuchPage { requested: 0, count: pdf_page_count(bytes)? });
    }
    rendered_page(bytes, page, options)
}

#[cfg(feature = "convert")]
fn pdf_page_count(bytes: &[u8]) -> Result<u32, PageError> {
    pdf::page_count(bytes)
}

#[cfg(not(feature = "convert"))]
fn pdf_page_count(_: &[u8]) -> Result<u32, PageError> {
    Ok(0)
}

#[cfg(feature = "convert")]
fn rendered_page(bytes: &[u8], page: u32, options: &Options) -> Result<Admitted, PageError> {
    let (img, note) = pdf::render_page(bytes, page, FIT_SIDE)?;
    if raster::is_blank(&img) {
        return Err(PageError::Blank { page });
    }
    let (w, h) = img.dimensions();
    let made = raster::Made {
        image: image::DynamicImage::ImageRgba8(img),
        source_dimensions: Dimensions { width: w, height: h },
        from: PDF_MIME,
        note,
    };
    let mut budget = Budget::UNLIMITED;
    raster::admit_made(made, bytes.len() as u64, options, &mut budget).map_err(PageError::Refused)
}

#[cfg(not(feature = "convert"))]
fn rendered_page(_: &[u8], _: u32, _: &Options) -> Result<Admitted, PageError> {
    unreachable!("refused above when the build carries no converters")
}

#[cfg(test)]
mod tests;
