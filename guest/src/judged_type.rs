//! Which type an input is judged as: the types the gate admits and converts, the type a name's
//! extension names, and how a claimed or labelled type meets the type the bytes carry. Apart from
//! `entry` so that the tool-result and request walks, which `entry`'s JSON builds on, use the same
//! rules without importing `entry`.

use crate::convert;
use crate::signature::{PDF_MIME, normalize_mime};

/// The types the gate admits as they are.
pub const ADMISSIBLE: [&str; 5] = ["image/png", "image/jpeg", "image/gif", "image/webp", PDF_MIME];

/// The image types the converting components convert from (`convertible-types`; a GIF is
/// admissible as it is, so it is not named, and a PDF page is asked for by number).
pub const CONVERTIBLE: [&str; 4] = [convert::SVG_MIME, convert::BMP_MIME, convert::TIFF_MIME, convert::ICO_MIME];

/// The type an input without a claimed type is judged as. Converting, the one its bytes carry
/// whenever they are an image or a PDF (so an SVG named `.png` converts through every front end).
/// Otherwise the rules stay exact: the bytes' type when the gate admits it (a PDF named
/// `report.png` is the document it is), else the one the name's extension names (an SVG named
/// `.png` is refused for its signature, with the hint that converting takes it).
pub fn claimed_type(sniffed: &str, name: Option<&str>, converting: bool) -> String {
    let sniffed_wins = ADMISSIBLE.contains(&sniffed) || (converting && sniffed.starts_with("image/"));
    if sniffed_wins { sniffed.to_string() } else { mime_from_extension(name.unwrap_or("")).to_string() }
}

/// Labels that claim no type: what a server writes when it does not know one (the MCP filesystem
/// server sends a PDF as `application/octet-stream`).
const NO_CLAIM: [&str; 2] = ["application/octet-stream", "binary/octet-stream"];

/// The type a tool-result or request block that names one is judged as. A tool that labels a JPEG
/// `image/png` would have the provider refuse the block for the mismatch, so when the label names an
/// image and the bytes are an image the gate admits (converting: also one it converts), the block
/// is judged as — and rewritten with — the bytes' type. A label that claims no type is judged the
/// same way for any type the gate admits (a PDF too). Any other label stands and is checked
/// against the bytes: an SVG labelled `image/png` is refused unless converting, a PDF labelled as
/// an image is refused.
pub fn block_type<'a>(labelled: &'a str, sniffed: &'a str, converting: bool) -> &'a str {
    let label = normalize_mime(labelled);
    let convertible = converting && CONVERTIBLE.contains(&sniffed);
    if NO_CLAIM.contains(&label.as_str()) {
        return if ADMISSIBLE.contains(&sniffed) || convertible { sniffed } else { labelled };
    }
    let bytes_are_image = sniffed.starts_with("image/") && (ADMISSIBLE.contains(&sniffed) || convertible);
    if bytes_are_image && label.starts_with("image/") { sniffed } else { labelled }
}

/// The media type a file name's extension names, as an agent's Read tool infers it.
pub fn mime_from_extension(name: &str) -> &'static str {
    let file = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let ext = match file.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    };
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" | "jpe" | "jfif" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => PDF_MIME,
        "svg" => convert::SVG_MIME,
        "bmp" => convert::BMP_MIME,
        "tif" | "tiff" => convert::TIFF_MIME,
        "ico" => convert::ICO_MIME,
        "heic" => convert::HEIC_MIME,
        "avif" => convert::AVIF_MIME,
        "txt" => "text/plain",
        "html" | "htm" => "text/html",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_that_claims_no_type_is_judged_as_the_bytes() {
        assert_eq!(block_type("application/octet-stream", PDF_MIME, false), PDF_MIME);
        assert_eq!(block_type("Application/Octet-Stream; x=1", "image/png", false), "image/png");
        assert_eq!(block_type("application/octet-stream", "image/bmp", false), "application/octet-stream");
        assert_eq!(block_type("application/octet-stream", "image/bmp", true), "image/bmp");
        assert_eq!(block_type("application/octet-stream", "text/plain", true), "application/octet-stream");
        // A label that claims a type still stands against the bytes.
        assert_eq!(block_type("image/png", PDF_MIME, false), "image/png");
        assert_eq!(block_type("text/plain", PDF_MIME, false), "text/plain");
    }

    #[test]
    fn extension_table() {
        assert_eq!(mime_from_extension("a/b/Photo.JPG"), "image/jpeg");
        assert_eq!(mime_from_extension("x.jfif"), "image/jpeg");
        assert_eq!(mime_from_extension("icon.ico"), "image/vnd.microsoft.icon");
        assert_eq!(mime_from_extension(".png"), "application/octet-stream", "a dot file has no extension");
        assert_eq!(mime_from_extension("dir.png/file"), "application/octet-stream");
        assert_eq!(mime_from_extension(""), "application/octet-stream");
    }
}
