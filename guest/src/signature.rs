//! Media types by signature: the strict checks of the gate and the sniffer of the tool.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageType {
    Png,
    Jpeg,
    Gif,
    WebP,
}

impl ImageType {
    /// The image type a claimed media type names. Parameters and case are ignored; `image/jpg`,
    /// a common misspelling, names JPEG (the admitted block always carries the canonical name).
    pub fn from_mime(mime: &str) -> Option<ImageType> {
        match normalize_mime(mime).as_str() {
            "image/png" => Some(ImageType::Png),
            "image/jpeg" | "image/jpg" => Some(ImageType::Jpeg),
            "image/gif" => Some(ImageType::Gif),
            "image/webp" => Some(ImageType::WebP),
            _ => None,
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            ImageType::Png => "image/png",
            ImageType::Jpeg => "image/jpeg",
            ImageType::Gif => "image/gif",
            ImageType::WebP => "image/webp",
        }
    }

    pub fn format(self) -> image::ImageFormat {
        match self {
            ImageType::Png => image::ImageFormat::Png,
            ImageType::Jpeg => image::ImageFormat::Jpeg,
            ImageType::Gif => image::ImageFormat::Gif,
            ImageType::WebP => image::ImageFormat::WebP,
        }
    }

    /// The bytes carry this type's magic. WebP checks both `RIFF` and `WEBP`.
    pub fn matches(self, bytes: &[u8]) -> bool {
        match self {
            ImageType::Png => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            ImageType::Jpeg => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
            ImageType::Gif => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
            ImageType::WebP => bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        }
    }
}

pub const PDF_MIME: &str = "application/pdf";

pub fn is_pdf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"%PDF-")
}

/// A Windows bitmap: `BM`, then a DIB header of one of the sizes the format defines (so a text
/// file that starts with "BM" is not called a bitmap): Windows' 12, 40, 52, 56, 108 and 124, and
/// OS/2 2.x's, which may stop after any field from 16 bytes to 64.
pub fn is_bmp(bytes: &[u8]) -> bool {
    bytes.len() >= 26
        && bytes.starts_with(b"BM")
        && matches!(u32::from_le_bytes([bytes[14], bytes[15], bytes[16], bytes[17]]), 12 | 16..=64 | 108 | 124)
}

/// TIFF, either byte order, classic (`*`) or BigTIFF (`+`).
pub fn is_tiff(bytes: &[u8]) -> bool {
    bytes.len() >= 8
        && (bytes.starts_with(b"II*\0")
            || bytes.starts_with(b"MM\0*")
            || bytes.starts_with(b"II+\0")
            || bytes.starts_with(b"MM\0+"))
}

/// A Windows icon: reserved 0, type 1 (2 is a cursor), at least one directory entry present.
pub fn is_ico(bytes: &[u8]) -> bool {
    bytes.len() >= 6 + 16 && bytes.starts_with(&[0, 0, 1, 0]) && u16::from_le_bytes([bytes[4], bytes[5]]) >= 1
}

/// The HEIF family by its `ftyp` box: AVIF when any brand names it, else HEIC for the HEVC and
/// generic HEIF brands. `None`: not an ISO-BMFF image file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heif {
    Heic,
    Avif,
}

pub fn heif_kind(bytes: &[u8]) -> Option<Heif> {
    if bytes.len() < 16 || &bytes[4..8] != b"ftyp" {
        return None;
    }
    let size = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
    let end = size.clamp(16, bytes.len().min(4096));
    // The major brand (8..12), then the compatible brands after the minor version (16..).
    let brands = std::iter::once(&bytes[8..12]).chain(bytes[16..end].chunks_exact(4));
    let mut heic = false;
    for brand in brands {
        match brand {
            b"avif" | b"avis" => return Some(Heif::Avif),
            b"heic" | b"heix" | b"hevc" | b"hevx" | b"heim" | b"heis" | b"mif1" | b"msf1" => heic = true,
            _ => {}
        }
    }
    heic.then_some(Heif::Heic)
}

/// SVG: XML whose root element is `<svg` (after a BOM, whitespace, the XML declaration,
/// processing instructions, comments and a doctype, internal subset included). HTML with an
/// inline `<svg>`, or XML with another root, is not SVG.
pub fn is_svg(bytes: &[u8]) -> bool {
    let mut rest = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    loop {
        rest = rest.trim_ascii_start();
        if rest.starts_with(b"<?") {
            let Some(end) = find(rest, b"?>") else { return false };
            rest = &rest[end + 2..];
        } else if rest.starts_with(b"<!--") {
            let Some(end) = find(&rest[4..], b"-->") else { return false };
            rest = &rest[4 + end + 3..];
        } else if rest.len() >= 9 && rest[..9].eq_ignore_ascii_case(b"<!doctype") {
            let Some(end) = doctype_end(rest) else { return false };
            rest = &rest[end + 1..];
        } else {
            return rest.starts_with(b"<svg")
                && rest.get(4).is_some_and(|&b| b.is_ascii_whitespace() || b == b'>' || b == b'/');
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The index of the `>` that closes a doctype, past quoted strings and an internal subset `[…]`.
fn doctype_end(text: &[u8]) -> Option<usize> {
    let (mut quote, mut depth) = (None::<u8>, 0u32);
    for (i, &b) in text.iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'[') => depth += 1,
            (None, b']') => depth = depth.saturating_sub(1),
            (None, b'>') if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// Lower-case type/subtype without parameters or surrounding space.
pub fn normalize_mime(mime: &str) -> String {
    mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// The type of bytes that start with the signature of a type the gate judges or converts, by
/// checks strict enough that text is never taken for one (`None` otherwise; SVG is text, and is
/// not among them).
pub fn strict_signature(bytes: &[u8]) -> Option<&'static str> {
    // The four image types first, so sniff and gate never disagree on them.
    for t in [ImageType::Png, ImageType::Jpeg, ImageType::Gif, ImageType::WebP] {
        if t.matches(bytes) {
            return Some(t.mime());
        }
    }
    if is_pdf(bytes) {
        return Some(PDF_MIME);
    }
    // The types the converters take, by the same strict checks the converters apply, under their
    // canonical names (infer calls an icon `image/x-icon` and HEIC `image/heif`).
    let convertible = [
        (is_bmp(bytes), "image/bmp"),
        (is_tiff(bytes), "image/tiff"),
        (is_ico(bytes), "image/vnd.microsoft.icon"),
        (heif_kind(bytes) == Some(Heif::Heic), "image/heic"),
        (heif_kind(bytes) == Some(Heif::Avif), "image/avif"),
    ];
    convertible.iter().find(|(hit, _)| *hit).map(|(_, mime)| *mime)
}

/// The media type the bytes carry. Never defaults to an image type: unrecognised UTF-8 text is
/// `text/plain` (or SVG/HTML when it looks like it), anything else `application/octet-stream`.
pub fn sniff(bytes: &[u8]) -> String {
    if let Some(mime) = strict_signature(bytes) {
        return mime.to_string();
    }
    // Before infer: it would try each of its ~200 matchers through a function pointer, and each
    // pointer's table entry is set up lazily on its first call in an instance (wasmtime), a few
    // microseconds a call for nothing (none of them matches no bytes).
    if bytes.is_empty() {
        return "application/x-empty".to_string();
    }
    if let Some(kind) = infer::get(bytes) {
        // infer's matchers for the strictly checked types are looser (WebP: only the second
        // word; PNG: four bytes): what failed the strict check above is not that type. Its text
        // kinds are refined below (SVG is XML).
        let strict_type = ["image/png", "image/jpeg", "image/gif", "image/webp", PDF_MIME].contains(&kind.mime_type());
        if !strict_type && !kind.mime_type().starts_with("text/") {
            return kind.mime_type().to_string();
        }
    }
    let head = &bytes[..bytes.len().min(4096)];
    if head.iter().any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b)) {
        return "application/octet-stream".to_string();
    }
    match std::str::from_utf8(head) {
        Ok(text) => text_kind(text),
        // The cut at 4096 may split a character; judge by what decoded.
        Err(e) if e.valid_up_to() + 4 > head.len() && e.error_len().is_none() => {
            text_kind(std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""))
        }
        Err(_) => "application/octet-stream".to_string(),
    }
}

fn text_kind(text: &str) -> String {
    let lower = text.trim_start_matches('\u{feff}').trim_start().to_ascii_lowercase();
    if is_svg(text.as_bytes()) || lower.starts_with("<svg") || (lower.starts_with("<?xml") && lower.contains("<svg")) {
        "image/svg+xml".to_string()
    } else if lower.starts_with("<!doctype html") || lower.starts_with("<html") {
        "text/html".to_string()
    } else if lower.starts_with("<?xml") {
        "text/xml".to_string()
    } else {
        "text/plain".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_deadline::{HOSTILE, within};

    #[test]
    fn each_signature_is_strict() {
        assert!(ImageType::Png.matches(b"\x89PNG\r\n\x1a\nrest"));
        assert!(!ImageType::Png.matches(b"\x89PNG\r\n\x1a"));
        assert!(!ImageType::Png.matches(b"\x89PNG\n\x1a\n\x00"));
        assert!(ImageType::Jpeg.matches(&[0xFF, 0xD8, 0xFF, 0xE0]));
        assert!(!ImageType::Jpeg.matches(&[0xFF, 0xD8]));
        assert!(ImageType::Gif.matches(b"GIF87a...."));
        assert!(ImageType::Gif.matches(b"GIF89a...."));
        assert!(!ImageType::Gif.matches(b"GIF88a...."));
        assert!(ImageType::WebP.matches(b"RIFF\x10\0\0\0WEBPVP8 "));
        // infer accepts this (it checks only WEBP); the gate does not.
        assert!(!ImageType::WebP.matches(b"RIFX\x10\0\0\0WEBPVP8 "));
        assert!(!ImageType::WebP.matches(b"RIFF\x10\0\0\0WAVEfmt "));
        for t in [ImageType::Png, ImageType::Jpeg, ImageType::Gif, ImageType::WebP] {
            assert!(!t.matches(b""), "{t:?} must refuse empty bytes");
        }
    }

    #[test]
    fn claimed_types_are_normalised() {
        assert_eq!(ImageType::from_mime("IMAGE/PNG"), Some(ImageType::Png));
        assert_eq!(ImageType::from_mime(" image/jpeg; charset=binary"), Some(ImageType::Jpeg));
        assert_eq!(ImageType::from_mime("image/jpg"), Some(ImageType::Jpeg));
        assert_eq!(ImageType::from_mime("image/svg+xml"), None);
        assert_eq!(ImageType::from_mime("image/heic"), None);
    }

    #[test]
    fn sniff_never_defaults_to_an_image() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), "image/png");
        assert_eq!(sniff(b"%PDF-1.7\n"), "application/pdf");
        assert_eq!(sniff(b"hello world"), "text/plain");
        assert_eq!(sniff(b"<?xml version=\"1.0\"?>\n<svg xmlns=\"x\"/>"), "image/svg+xml");
        assert_eq!(sniff(b"  <svg width=\"1\"/>"), "image/svg+xml");
        assert_eq!(sniff(b"<!DOCTYPE html><html></html>"), "text/html");
        assert_eq!(sniff(b""), "application/x-empty");
        assert_eq!(sniff(&[0u8, 159, 146, 150, 1, 2]), "application/octet-stream");
        assert_eq!(sniff(b"RIFX\x10\0\0\0WEBPVP8 "), "application/octet-stream");
        assert_eq!(sniff(b"PK\x03\x04\x14\0\0\0"), "application/zip");
        // A damaged PNG signature (PngSuite xcrn0g04: CR added) is not called a PNG.
        assert_eq!(sniff(b"\x89PNG\r\r\n\x1a\n\0\0\0\rIHDR"), "application/octet-stream");
    }

    #[test]
    fn the_convertible_types_are_named_by_their_signatures() {
        let mut bmp = b"BM".to_vec();
        bmp.extend_from_slice(&[0; 12]);
        bmp.extend_from_slice(&40u32.to_le_bytes());
        bmp.extend_from_slice(&[0; 16]);
        assert!(is_bmp(&bmp));
        assert_eq!(sniff(&bmp), "image/bmp");
        // "BM" then text is not a bitmap.
        assert!(!is_bmp(b"BMW is a car maker, and this line is text."));
        assert!(is_tiff(b"II*\0\x08\0\0\0") && is_tiff(b"MM\0*\0\0\0\x08") && is_tiff(b"II+\0\x08\0\0\0"));
        assert!(!is_tiff(b"II*\0"));
        assert_eq!(sniff(b"MM\0*\0\0\0\x08rest"), "image/tiff");
        let mut ico = vec![0, 0, 1, 0, 1, 0];
        ico.extend_from_slice(&[0; 16]);
        assert!(is_ico(&ico));
        assert_eq!(sniff(&ico), "image/vnd.microsoft.icon");
        ico[2] = 2; // a cursor
        assert!(!is_ico(&ico));
        ico[2] = 1;
        ico[4] = 0; // no entries
        assert!(!is_ico(&ico));
        let heic = b"\0\0\0\x18ftypheic\0\0\0\0mif1heic";
        assert_eq!(heif_kind(heic), Some(Heif::Heic));
        assert_eq!(sniff(heic), "image/heic");
        let avif = b"\0\0\0\x1cftypavif\0\0\0\0avifmif1miaf";
        assert_eq!(heif_kind(avif), Some(Heif::Avif));
        assert_eq!(sniff(avif), "image/avif");
        // A generic HEIF major brand with AVIF among its compatible brands is AVIF.
        assert_eq!(heif_kind(b"\0\0\0\x18ftypmif1\0\0\0\0mif1avif"), Some(Heif::Avif));
        // An MP4 is not an image.
        assert_eq!(heif_kind(b"\0\0\0\x18ftypisom\0\0\0\0isomavc1"), None);
    }

    #[test]
    fn svg_is_xml_with_an_svg_root() {
        assert!(is_svg(b"<svg xmlns='http://www.w3.org/2000/svg'/>"));
        assert!(is_svg(b"\xef\xbb\xbf\n <?xml version='1.0'?><!-- made by hand --><svg>"));
        assert!(is_svg(
            b"<?xml version='1.0'?>\n<!DOCTYPE svg PUBLIC '-//W3C//DTD SVG 1.1//EN' 'x.dtd' [<!ENTITY a \"]>\">]>\n<svg/>"
        ));
        assert!(!is_svg(b"<html><body><svg/></body></html>"));
        assert!(!is_svg(b"<?xml version='1.0'?><svgfoo/>"));
        assert!(!is_svg(b"<?xml version='1.0'?><rss><svg/></rss>"));
        assert!(!is_svg(b"<!-- never closed <svg/>"));
        assert!(!is_svg(b""));
        assert!(!is_svg(b"hello <svg>"));
    }

    #[test]
    fn sniff_survives_a_character_split_at_the_cut() {
        within(HOSTILE, "sniff_survives_a_character_split_at_the_cut", sniff_survives_a_character_split_at_the_cut_body)
    }

    fn sniff_survives_a_character_split_at_the_cut_body() {
        let mut text = "a".repeat(4095).into_bytes();
        text.extend_from_slice("é".as_bytes());
        assert_eq!(sniff(&text), "text/plain");
    }
}
