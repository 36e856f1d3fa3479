//! Conversion of what no provider takes into what it does, inside the sandbox: SVG (rendered),
//! BMP, TIFF (first page), ICO (largest entry), an animated GIF's first frame (for profiles that
//! refuse animation), a PDF page (rendered). The result is handed to the gate as a PNG, so it is
//! admitted by exactly the rules any PNG is (fit, ladder, provider limits).
//!
//! The decoders and renderers are behind the `convert` cargo feature: the `preflight` component
//! that browsers download does not carry them, and refuses a conversion in words that say which
//! component does.
//!
//! SKELETON (issue 15, being filled in): the signatures below are the contract between the parts.

#[cfg(feature = "convert")]
pub mod pdf;

use crate::options::Options;
use crate::verdict::{Admitted, Reason, Refusal, Verdict};

/// The canonical media types this module converts from (what `conversion.convertible-types`
/// answers), when the feature is built.
pub const SVG_MIME: &str = "image/svg+xml";
pub const BMP_MIME: &str = "image/bmp";
pub const TIFF_MIME: &str = "image/tiff";
pub const ICO_MIME: &str = "image/vnd.microsoft.icon";

/// Whether this build carries the converters.
pub const AVAILABLE: bool = cfg!(feature = "convert");

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
            PageError::Blank { page } => format!("page {page} of the PDF renders to nothing (every pixel is blank)"),
            PageError::Refused(r) => r.message.clone(),
        }
    }
}

/// The source type a claimed media type names, if this module knows it.
pub fn source_of(claimed_mime: &str) -> Option<Source> {
    let _ = claimed_mime;
    None
}

/// Admit `bytes`, converting first when `options.convert` is set and the claimed type is one
/// the module converts (or a GIF with frames for a profile that refuses animation). `None`: not
/// a conversion case; the caller goes on with the plain gate.
pub fn admit_converting(bytes: &[u8], claimed_mime: &str, options: &Options) -> Option<Verdict> {
    let _ = (bytes, claimed_mime, options);
    None
}

/// Render page `page` (1-based) of a PDF and admit it as an image under `options`.
pub fn admit_pdf_page(bytes: &[u8], page: u32, options: &Options) -> Result<Admitted, PageError> {
    let _ = (page, options);
    Err(PageError::Refused(Refusal::new(
        Reason::MimeUnsupported,
        bytes.len() as u64,
        None,
        "PDF pages are not rendered by this build",
    )))
}
