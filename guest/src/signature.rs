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

/// Lower-case type/subtype without parameters or surrounding space.
pub fn normalize_mime(mime: &str) -> String {
    mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// The media type the bytes carry. Never defaults to an image type: unrecognised UTF-8 text is
/// `text/plain` (or SVG/HTML when it looks like it), anything else `application/octet-stream`.
pub fn sniff(bytes: &[u8]) -> String {
    // The strict signatures first, so sniff and gate never disagree on the four image types.
    for t in [ImageType::Png, ImageType::Jpeg, ImageType::Gif, ImageType::WebP] {
        if t.matches(bytes) {
            return t.mime().to_string();
        }
    }
    if is_pdf(bytes) {
        return PDF_MIME.to_string();
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
    if bytes.is_empty() {
        return "application/x-empty".to_string();
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
    if lower.starts_with("<svg") || (lower.starts_with("<?xml") && lower.contains("<svg")) {
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
    fn sniff_survives_a_character_split_at_the_cut() {
        let mut text = "a".repeat(4095).into_bytes();
        text.extend_from_slice("é".as_bytes());
        assert_eq!(sniff(&text), "text/plain");
    }
}
