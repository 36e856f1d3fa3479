use super::*;
use crate::image_admission::admit_image;
use crate::profile::Provider;

fn converting(provider: Provider) -> Options {
    Options { provider, convert: true, ..Options::default() }
}

/// A 24-bit BMP written by hand (so the tests without the `convert` feature have one too).
fn bmp_by_hand(width: u32, height: u32) -> Vec<u8> {
    let row = (width * 3).div_ceil(4) * 4;
    let data = row * height;
    let mut b = b"BM".to_vec();
    b.extend_from_slice(&(54 + data).to_le_bytes());
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&54u32.to_le_bytes());
    b.extend_from_slice(&40u32.to_le_bytes());
    b.extend_from_slice(&width.to_le_bytes());
    b.extend_from_slice(&height.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&24u16.to_le_bytes());
    b.extend_from_slice(&[0; 24]);
    b.extend((0..data).map(|i| (i % 251) as u8));
    b
}

#[test]
fn claimed_types_and_their_aliases() {
    for (mime, source) in [
        ("image/svg+xml", Source::Svg),
        ("image/svg", Source::Svg),
        ("IMAGE/BMP", Source::Bmp),
        ("image/x-ms-bmp", Source::Bmp),
        ("image/x-bmp", Source::Bmp),
        ("image/tiff", Source::Tiff),
        ("image/vnd.microsoft.icon", Source::Ico),
        ("image/x-icon", Source::Ico),
        ("image/ico", Source::Ico),
        ("image/heic", Source::Heic),
        ("image/heif; codecs=x", Source::Heic),
        ("image/avif", Source::Avif),
    ] {
        assert_eq!(source_of(mime), Some(source), "{mime}");
    }
    assert_eq!(source_of("image/png"), None);
    assert_eq!(source_of("application/pdf"), None);
}

#[test]
fn without_the_option_nothing_changes() {
    let bmp = bmp_by_hand(8, 8);
    assert_eq!(admit_converting(&bmp, "image/bmp", &Options::default()), None);
    let r = admit_image(&bmp, "image/bmp", &Options::default()).unwrap_err();
    assert_eq!(r.reason, Reason::MimeUnsupported);
    assert!(r.message.contains("is not an image type anthropic accepts"), "{}", r.message);
    // A PNG is never a conversion case, with the option or without.
    assert_eq!(admit_converting(b"\x89PNG\r\n\x1a\n", "image/png", &converting(Provider::Anthropic)), None);
}

#[test]
fn heic_and_avif_are_refused_in_words_that_say_what_to_do() {
    let heic = b"\0\0\0\x18ftypheic\0\0\0\0mif1heic".to_vec();
    for options in [Options::default(), converting(Provider::OpenAi)] {
        let r = admit_image(&heic, "image/heic", &options).unwrap_err();
        assert_eq!(r.reason, Reason::MimeUnsupported);
        assert!(r.message.contains("image/heic") && r.message.contains("heif-convert"), "{}", r.message);
        assert!(r.message.contains("Most Compatible"), "{}", r.message);
        let r = admit_image(b"\0\0\0\x1cftypavif", "image/avif", &options).unwrap_err();
        assert_eq!(r.reason, Reason::MimeUnsupported);
        assert!(r.message.contains("image/avif") && r.message.contains("PNG or JPEG"), "{}", r.message);
    }
}

#[test]
fn a_pdf_page_of_bytes_that_are_not_a_pdf_is_refused() {
    let e = admit_pdf_page(b"<html>", 1, &Options::default()).unwrap_err();
    let PageError::Refused(r) = e else { panic!("{e:?}") };
    assert_eq!(r.reason, if AVAILABLE { Reason::MagicMismatch } else { Reason::MimeUnsupported });
}

#[test]
fn page_errors_have_their_own_words() {
    assert_eq!(
        PageError::NoSuchPage { requested: 7, count: 3 }.message(),
        "page 7 does not exist: the PDF has 3 page(s), numbered from 1"
    );
    assert!(PageError::Blank { page: 2 }.message().contains("page 2"));
}

#[cfg(feature = "convert")]
mod converters;

#[cfg(feature = "convert")]
mod layouts;
