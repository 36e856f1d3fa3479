use crate::test_deadline::{HOSTILE, within};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use image::metadata::Orientation;
use image::{DynamicImage, ImageFormat};

use super::*;
use crate::profile::Provider;
use crate::test_images::*;

fn opts(downsample: bool, provider: Provider) -> Options {
    Options { downsample, provider, verify: Verify::Header, side_rule: None, convert: false, keep_metadata: false }
}

fn refused(v: Verdict) -> Refusal {
    v.expect_err("expected a refusal")
}

#[test]
fn step1_the_claimed_type_must_be_accepted() {
    let png = png(4, 4);
    let r = refused(admit_image(&png, "image/svg+xml", &Options::default()));
    assert_eq!((r.reason, r.limit), (Reason::MimeUnsupported, None));
    let r = refused(admit_image(&png, "", &Options::default()));
    assert_eq!(r.reason, Reason::MimeUnsupported);
    // Gemini and Ollama take no GIF at all.
    let gif = encode(&gradient(4, 4), ImageFormat::Gif);
    assert!(admit_image(&gif, "image/gif", &Options::default()).is_ok());
    assert_eq!(refused(admit_image(&gif, "image/gif", &opts(true, Provider::Gemini))).reason, Reason::MimeUnsupported);
    assert_eq!(refused(admit_image(&gif, "image/gif", &opts(true, Provider::Ollama))).reason, Reason::MimeUnsupported);
}

#[test]
fn step1_comes_before_the_signature() {
    // An SVG claimed as SVG is refused for its type, not its bytes.
    let r = refused(admit_image(b"<svg/>", "image/svg+xml", &Options::default()));
    assert_eq!(r.reason, Reason::MimeUnsupported);
}

#[test]
fn step2_raw_cap_without_downsampler_is_inclusive() {
    // OpenAI's 20 MB base64 limit lets the 5 MiB read cap itself be the bound under test.
    let at_cap = png_of_len(RAW_CAP as usize);
    assert!(admit_image(&at_cap, "image/png", &opts(false, Provider::OpenAi)).is_ok());
    let over = png_of_len(RAW_CAP as usize + 1);
    let r = refused(admit_image(&over, "image/png", &opts(false, Provider::OpenAi)));
    assert_eq!((r.reason, r.raw_bytes, r.limit), (Reason::RawTooLarge, RAW_CAP + 1, Some(RAW_CAP)));
}

#[test]
fn step2_raw_cap_with_downsampler_is_64_mib() {
    let over = png_of_len(RAW_CAP_DOWNSAMPLE as usize + 1);
    let r = refused(admit_image(&over, "image/png", &opts(true, Provider::Anthropic)));
    assert_eq!((r.reason, r.limit), (Reason::RawTooLarge, Some(RAW_CAP_DOWNSAMPLE)));
}

#[test]
fn step3_the_bytes_must_carry_the_claimed_signature() {
    for (bytes, mime) in [
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>".to_vec(), "image/png"),
        (b"<!DOCTYPE html><html></html>".to_vec(), "image/png"),
        (Vec::new(), "image/png"),
        (png(4, 4), "image/jpeg"),
        (encode(&gradient(4, 4), ImageFormat::Jpeg), "image/png"),
        (b"RIFX\x10\0\0\0WEBPVP8 ".to_vec(), "image/webp"),
    ] {
        let r = refused(admit_image(&bytes, mime, &Options::default()));
        assert_eq!(r.reason, Reason::MagicMismatch, "{mime} {:?}", &bytes[..bytes.len().min(8)]);
    }
}

#[test]
fn each_type_is_admitted_with_its_measured_dimensions() {
    for (format, mime) in [
        (ImageFormat::Png, "image/png"),
        (ImageFormat::Jpeg, "image/jpeg"),
        (ImageFormat::Gif, "image/gif"),
        (ImageFormat::WebP, "image/webp"),
    ] {
        let bytes = encode(&gradient(33, 17), format);
        let a = admit_image(&bytes, mime, &Options::default()).unwrap();
        assert_eq!(a.mime, mime);
        assert_eq!(a.dimensions, Some(Dimensions { width: 33, height: 17 }));
        assert_eq!((a.resized, a.reencoded), (false, false));
        assert_eq!(a.original_size, bytes.len() as u64);
        assert_eq!(a.data, Data::Unchanged, "small images pass through byte for byte");
        assert_eq!(a.base64(&bytes), STANDARD.encode(&bytes));
    }
}

#[test]
fn step4_base64_limit_is_exact() {
    // 3,932,160 raw bytes are exactly 5,242,880 base64 bytes: admitted; one more is over.
    // The limit counts the admitted bytes: the padding is kept only when metadata is.
    let keeping = Options { keep_metadata: true, ..opts(false, Provider::Anthropic) };
    let at = png_of_len(3_932_160);
    let a = admit_image(&at, "image/png", &keeping).unwrap();
    assert_eq!(a.base64_len(), 5_242_880);
    let over = png_of_len(3_932_161);
    let r = refused(admit_image(&over, "image/png", &keeping));
    assert_eq!((r.reason, r.limit), (Reason::Base64TooLarge, Some(5_242_880)));
    let a = admit_image(&over, "image/png", &opts(false, Provider::Anthropic)).unwrap();
    assert_eq!((a.data, a.dropped), (Data::Bytes(png(8, 8)), vec!["other-metadata"]));
}

#[test]
fn the_downsampler_passes_through_at_the_threshold_and_works_one_byte_over() {
    let at = png_of_len(PASS_THROUGH_RAW as usize);
    let a = admit_image(&at, "image/png", &Options::default()).unwrap();
    assert!(!a.reencoded && a.data == Data::Bytes(png(8, 8)), "re-muxed, not re-encoded");
    let over = png_of_len(PASS_THROUGH_RAW as usize + 1);
    let a = admit_image(&over, "image/png", &Options::default()).unwrap();
    assert!(a.reencoded && !a.resized, "re-encoded at the same size");
    assert!(a.base64_len() < 1000);
}

#[test]
fn large_images_are_fit_inside_2000_keeping_aspect() {
    let bytes = encode(&gradient(4000, 1000), ImageFormat::Png);
    let a = admit_image(&bytes, "image/png", &Options::default()).unwrap();
    assert_eq!(a.dimensions, Some(Dimensions { width: 2000, height: 500 }));
    assert!(a.resized && a.reencoded);
    assert_eq!(a.mime, "image/png", "the format is kept when it fits");
}

#[test]
fn without_downsampler_a_side_over_the_profile_is_refused() {
    let bytes = png(8001, 10);
    let r = refused(admit_image(&bytes, "image/png", &opts(false, Provider::Anthropic)));
    assert_eq!((r.reason, r.limit), (Reason::DimensionsTooLarge, Some(8000)));
    let bytes = png(8000, 10);
    assert!(admit_image(&bytes, "image/png", &opts(false, Provider::Anthropic)).is_ok());
}

#[test]
fn bombs_are_refused_from_the_header_without_decoding() {
    let bomb = png_header_only(100_000, 100_000);
    assert!(bomb.len() < 100);
    for downsample in [true, false] {
        let r = refused(admit_image(&bomb, "image/png", &opts(downsample, Provider::Anthropic)));
        assert_eq!(r.reason, Reason::DimensionsTooLarge);
    }
    let wide = png_header_only(20_000, 20_000); // sides within bounds, 400 MP over the pixel bound
    let r = refused(admit_image(&wide, "image/png", &Options::default()));
    assert_eq!((r.reason, r.limit), (Reason::DimensionsTooLarge, Some(DECODE_MAX_PIXELS)));
}

#[test]
fn an_unreadable_header_is_undecodable() {
    let mut bytes = png(16, 16);
    bytes.truncate(20);
    assert_eq!(refused(admit_image(&bytes, "image/png", &Options::default())).reason, Reason::Undecodable);
}

#[test]
fn a_cut_image_is_refused_at_every_depth() {
    // A PNG cut before a whole row arrived (one cut later is repaired: `remux::png_cut`).
    let png_bytes = png_header_only_with(64, 64, 8, 2);
    // A JPEG cut before its end: libjpeg-turbo waits for more data, Pillow and Chromium refuse it.
    let mut jpeg = encode(&gradient(64, 64), ImageFormat::Jpeg);
    jpeg.truncate(jpeg.len() - 30);
    for verify in [Verify::Header, Verify::Full] {
        for downsample in [true, false] {
            let o = Options { verify, downsample, ..Options::default() };
            assert_eq!(refused(admit_image(&png_bytes, "image/png", &o)).reason, Reason::Undecodable);
            assert_eq!(refused(admit_image(&jpeg, "image/jpeg", &o)).reason, Reason::Undecodable);
        }
    }
}

#[test]
fn verify_full_decodes_every_pixel() {
    // Whole containers, corrupt image data: only a decode finds it.
    let mut png_bytes = png(64, 64);
    let idat = png_bytes.windows(4).position(|w| w == b"IDAT").unwrap();
    for b in &mut png_bytes[idat + 10..idat + 40] {
        *b ^= 0x5A;
    }
    // With its CRC made to match: a wrong CRC would send the re-mux to check the data itself.
    let len = u32::from_be_bytes(png_bytes[idat - 4..idat].try_into().unwrap()) as usize;
    let crc = crc32fast::hash(&png_bytes[idat..idat + 4 + len]);
    png_bytes[idat + 4 + len..idat + 8 + len].copy_from_slice(&crc.to_be_bytes());
    let header_only = Options { verify: Verify::Header, downsample: false, ..Options::default() };
    assert!(admit_image(&png_bytes, "image/png", &header_only).is_ok(), "the header alone is intact");
    let full = Options { verify: Verify::Full, ..header_only };
    assert_eq!(refused(admit_image(&png_bytes, "image/png", &full)).reason, Reason::Undecodable);
    assert_eq!(Options::default().verify, Verify::Full, "decoding every pixel is the default");
}

#[test]
fn a_failed_downsample_is_refused_not_passed_at_its_declared_size() {
    // Large dims ask for a downsample, but the pixel data is missing: what cannot be decoded
    // cannot be measured, and the declared size is no proof.
    let bytes = png_declaring(20_000, 100);
    for verify in [Verify::Header, Verify::Full] {
        let r = refused(admit_image(&bytes, "image/png", &Options { verify, ..Options::default() }));
        assert_eq!(r.reason, Reason::Undecodable, "{verify:?}: {}", r.message);
    }
}

#[test]
fn sideways_jpegs_are_reencoded_upright() {
    let bytes = jpeg_with_orientation(30, 60, 6);
    let a = admit_image(&bytes, "image/jpeg", &Options::default()).unwrap();
    assert_eq!(a.dimensions, Some(Dimensions { width: 60, height: 30 }));
    assert!(a.reencoded && !a.resized, "rotated, not resized");
    // Orientation 1 is not re-encoded; its EXIF segment is left out of the canonical form.
    let upright = jpeg_with_orientation(30, 60, 1);
    let a = admit_image(&upright, "image/jpeg", &Options::default()).unwrap();
    assert!(!a.reencoded);
    assert_eq!((a.data, a.dropped), (Data::Bytes(encode(&gradient(30, 60), ImageFormat::Jpeg)), vec!["exif"]));
}

#[test]
fn a_sideways_png_is_rotated_upright_or_keeps_its_orientation_alone() {
    // eXIf with orientation 6 (rotate 90°) and nothing else; built as jpeg_with_orientation's.
    let jpeg = jpeg_with_orientation(1, 1, 6);
    let exif = &jpeg[2 + 4 + 6..2 + 4 + 6 + 26];
    let bytes = png_with_chunk_after_ihdr(b"eXIf", exif);
    let a = admit_image(&bytes, "image/png", &Options::default()).unwrap();
    assert_eq!(a.dimensions, Some(Dimensions { width: 8, height: 8 }));
    assert!(a.reencoded, "rotated upright by the ladder");
    let Data::Bytes(out) = &a.data else { panic!() };
    assert_eq!(read_header(out, ImageType::Png).unwrap().orientation, Orientation::NoTransforms);
    // Downsampling off: no re-encode; the orientation alone stays, in the gate's own EXIF block.
    let a = admit_image(&bytes, "image/png", &opts(false, Provider::Anthropic)).unwrap();
    assert_eq!((a.reencoded, a.dropped.as_slice()), (false, &["exif"][..]));
    let Data::Bytes(out) = &a.data else { panic!() };
    assert_eq!(read_header(out, ImageType::Png).unwrap().orientation, Orientation::Rotate90);
}

#[test]
fn a_png_whose_idat_crc_alone_is_wrong_is_admitted_with_a_fresh_crc() {
    // The decoders read the canonical form, whose CRC the re-mux wrote: the full decode passes.
    let full = Options { verify: Verify::Full, ..Options::default() };
    let good = png(16, 16);
    let idat = good.windows(4).position(|w| w == b"IDAT").unwrap() - 4;
    let crc = idat + 8 + u32::from_be_bytes(good[idat..idat + 4].try_into().unwrap()) as usize;
    let mut wrong_crc = good.clone();
    wrong_crc[crc] ^= 0x80;
    let a = admit_image(&wrong_crc, "image/png", &full).unwrap();
    assert_eq!((a.data, a.dropped), (Data::Bytes(good), vec!["bad-crc"]));
    // Damaged rows under the wrong CRC are refused, in words.
    wrong_crc[idat + 20] ^= 0x08;
    let r = refused(admit_image(&wrong_crc, "image/png", &full));
    assert_eq!(r.reason, Reason::Undecodable);
    assert!(r.message.contains("fails its CRC"), "{}", r.message);
}

#[test]
fn a_png_the_ladder_reencodes_leaves_its_idat_crcs_to_the_decode() {
    // Wider than the fit: the ladder re-encodes each from its decoded pixels, so the re-mux
    // computes no IDAT CRC. A wrong one over intact data changes nothing but the `bad-crc` entry:
    // the same bytes pass, by the row-by-row fit (8-bit) and by the whole decode (16-bit, sideways).
    let wide = gradient(FIT_SIDE + 100, 24);
    let jpeg = jpeg_with_orientation(1, 1, 6);
    let sideways_exif = &jpeg[2 + 4 + 6..2 + 4 + 6 + 26];
    let cases = [
        ("8-bit", encode(&wide, ImageFormat::Png)),
        ("16-bit", encode(&DynamicImage::ImageRgb16(wide.to_rgb16()), ImageFormat::Png)),
        ("sideways", with_chunk_after_ihdr(&encode(&wide, ImageFormat::Png), b"eXIf", sideways_exif)),
    ];
    for (name, good) in cases {
        let idat = good.windows(4).position(|w| w == b"IDAT").unwrap() - 4;
        let crc = idat + 8 + u32::from_be_bytes(good[idat..idat + 4].try_into().unwrap()) as usize;
        let mut wrong_crc = good.clone();
        wrong_crc[crc] ^= 0x80;
        let full = Options { verify: Verify::Full, ..Options::default() };
        let passed = admit_image(&good, "image/png", &full).unwrap();
        let repaired = admit_image(&wrong_crc, "image/png", &full).unwrap();
        assert!(passed.resized, "{name}: fitted");
        assert_eq!((&repaired.data, &repaired.dropped), (&passed.data, &passed.dropped), "{name}");
        assert!(!repaired.dropped.contains(&"bad-crc"), "{name}: {:?}", repaired.dropped);
        // Damaged data under the wrong CRC: the decode's own checks refuse them.
        wrong_crc[idat + 40] ^= 0x08;
        let r = refused(admit_image(&wrong_crc, "image/png", &full));
        assert_eq!(r.reason, Reason::Undecodable, "{name}: {}", r.message);
    }
    // A wrong Adler-32 (the zlib stream's last four bytes) under a wrong CRC: refused too.
    let good = encode(&wide, ImageFormat::Png);
    let idat = good.windows(4).position(|w| w == b"IDAT").unwrap() - 4;
    let crc = idat + 8 + u32::from_be_bytes(good[idat..idat + 4].try_into().unwrap()) as usize;
    let mut wrong_adler = good.clone();
    wrong_adler[crc - 1] ^= 0x01;
    wrong_adler[crc] ^= 0x80;
    let r = refused(admit_image(&wrong_adler, "image/png", &Options { verify: Verify::Full, ..Options::default() }));
    assert_eq!(r.reason, Reason::Undecodable, "{}", r.message);
    // Downsampling off, nothing is re-encoded: the CRC is checked and the repair listed.
    let good = encode(&wide, ImageFormat::Png);
    let idat = good.windows(4).position(|w| w == b"IDAT").unwrap() - 4;
    let mut wrong_crc = good.clone();
    wrong_crc[idat + 8 + u32::from_be_bytes(good[idat..idat + 4].try_into().unwrap()) as usize] ^= 0x80;
    let a = admit_image(&wrong_crc, "image/png", &opts(false, Provider::Anthropic)).unwrap();
    assert!(a.dropped.contains(&"bad-crc"), "{:?}", a.dropped);
}

#[test]
fn bytes_after_a_pngs_image_data_go_when_its_pixels_are_read() {
    // Text after the zlib stream in the last IDAT chunk, CRC right: no decoder shows it.
    let good = png(16, 16);
    let idat = good.windows(4).position(|w| w == b"IDAT").unwrap() - 4;
    let len = u32::from_be_bytes(good[idat..idat + 4].try_into().unwrap()) as usize;
    let data = [&good[idat + 8..idat + 8 + len], &b"SMUGGLED"[..]].concat();
    let mut tailed = good[..idat].to_vec();
    let mut chunk = (data.len() as u32).to_be_bytes().to_vec();
    chunk.extend_from_slice(b"IDAT");
    chunk.extend_from_slice(&data);
    chunk.extend_from_slice(&crc32fast::hash(&chunk[4..]).to_be_bytes());
    tailed.extend_from_slice(&chunk);
    tailed.extend_from_slice(&good[idat + 12 + len..]);
    let full = Options { verify: Verify::Full, ..Options::default() };
    let a = admit_image(&tailed, "image/png", &full).unwrap();
    assert_eq!((a.data, a.dropped, a.reencoded), (Data::Bytes(good.clone()), vec!["stray-bytes"], false));
    // Kept metadata or not, a repair.
    let a = admit_image(&tailed, "image/png", &Options { keep_metadata: true, ..full }).unwrap();
    assert_eq!((a.data, a.dropped), (Data::Bytes(good), vec!["stray-bytes"]));
    // Damaged image data are refused in the words of every other decode failure.
    let mut damaged = tailed.clone();
    damaged[idat + 12] ^= 0xFF;
    let crc_at = idat + 8 + data.len();
    let crc = crc32fast::hash(&damaged[idat + 4..crc_at]).to_be_bytes();
    damaged[crc_at..crc_at + 4].copy_from_slice(&crc);
    let r = refused(admit_image(&damaged, "image/png", &full));
    assert_eq!(r.reason, Reason::Undecodable);
    assert!(r.message.starts_with("the image/png pixels cannot be decoded: the PNG's image data"), "{}", r.message);
    // Read for the header alone, the image data are not read, and nothing is cut.
    let header_only = Options { verify: Verify::Header, ..full };
    assert_eq!(admit_image(&tailed, "image/png", &header_only).unwrap().data, Data::Unchanged);
}

#[test]
fn an_arithmetic_jpeg_is_admitted_transcoded_to_huffman_coding() {
    // libjpeg-turbo's test image: SOF9 with a DAC segment, which the gate's decoder cannot read.
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus");
    let ari = std::fs::read(format!("{corpus}/conformance/jpeg/testimgari.jpg")).unwrap();
    let twin = std::fs::read(format!("{corpus}/jpeg-arithmetic/testimgari.huffman.jpg")).unwrap();
    let full = Options { verify: Verify::Full, ..Options::default() };
    let a = admit_image(&ari, "image/jpeg", &full).expect("admitted");
    assert_eq!(a.dimensions, Some(Dimensions { width: 227, height: 149 }));
    assert!(!a.reencoded && !a.resized && a.dropped.is_empty(), "{:?}", a.dropped);
    let Data::Bytes(passed) = a.data else { panic!("the transcoded bytes are passed, not the input") };
    let pixels = |b: &[u8]| image::load_from_memory_with_format(b, ImageFormat::Jpeg).unwrap();
    assert_eq!(pixels(&passed), pixels(&twin));
}

#[test]
fn the_decoders_judge_the_repaired_canonical_form() {
    let full = Options { verify: Verify::Full, ..Options::default() };
    // Stray bytes before a marker: libjpeg skips them, so does the gate.
    let plain = encode(&gradient(40, 30), ImageFormat::Jpeg);
    let sos = plain.windows(2).position(|w| w == [0xFF, 0xDA]).unwrap();
    let stray = [&plain[..sos], &b"\x00\x13\x37"[..], &plain[sos..]].concat();
    let a = admit_image(&stray, "image/jpeg", &full).unwrap();
    assert_eq!((a.data, a.dropped), (Data::Bytes(plain), vec!["stray-bytes"]));
    // A GIF with no colour table at all: a grey ramp, as Pillow shows it.
    let mut with_table = Vec::new();
    {
        let mut encoder = gif::Encoder::new(&mut with_table, 2, 1, &[0; 12]).unwrap();
        let frame = gif::Frame { width: 2, height: 1, buffer: vec![1, 2].into(), ..Default::default() };
        encoder.write_frame(&frame).unwrap();
    }
    let mut no_table = with_table[..13].to_vec();
    no_table[10] &= 0x70;
    no_table.extend_from_slice(&with_table[13 + 12..]);
    let a = admit_image(&no_table, "image/gif", &full).unwrap();
    assert!(matches!(a.data, Data::Bytes(_)) && a.dimensions == Some(Dimensions { width: 2, height: 1 }));
}

#[test]
fn a_gif_frame_past_its_screen_is_refused_not_admitted_at_the_screen_size() {
    let mut bytes = encode(&gradient(10, 10), ImageFormat::Gif);
    let at = bytes.iter().position(|&b| b == 0x2C).unwrap();
    bytes[at + 5..at + 9].copy_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF]);
    for verify in [Verify::Header, Verify::Full] {
        let r = refused(admit_image(&bytes, "image/gif", &Options { verify, ..Options::default() }));
        assert_eq!(r.reason, Reason::Undecodable);
        assert!(r.message.contains("logical screen"), "{}", r.message);
    }
}

#[test]
fn the_ladder_falls_to_jpeg_when_the_kept_format_does_not_fit() {
    // 2000x2000 of noise as PNG is ~16 MB: far over 5 MiB of base64 even after the fit.
    let bytes = encode(&noise(2000, 2000), ImageFormat::Png);
    let a = admit_image(&bytes, "image/png", &Options::default()).unwrap();
    assert_eq!(a.mime, "image/jpeg");
    assert!(a.base64_len() <= 5_242_880);
    assert!(a.reencoded);
}

#[test]
fn animated_gifs_are_refused_for_openai_only() {
    use image::codecs::gif::GifEncoder;
    use image::{Delay, Frame};
    let mut bytes = Vec::new();
    {
        let mut enc = GifEncoder::new(&mut bytes);
        for _ in 0..2 {
            let frame = Frame::from_parts(gradient(8, 8).to_rgba8(), 0, 0, Delay::from_numer_denom_ms(100, 1));
            enc.encode_frame(frame).unwrap();
        }
    }
    assert!(admit_image(&bytes, "image/gif", &Options::default()).is_ok());
    let r = refused(admit_image(&bytes, "image/gif", &opts(true, Provider::OpenAi)));
    assert_eq!(r.reason, Reason::MimeUnsupported);
    let still = encode(&gradient(8, 8), ImageFormat::Gif);
    assert!(admit_image(&still, "image/gif", &opts(true, Provider::OpenAi)).is_ok());
    assert!(is_animated_gif(&bytes).unwrap());
    assert!(!is_animated_gif(&still).unwrap());
    // Counted from the block structure: a still 7000x7000 screen is not composited to be counted.
    let mut big = b"GIF89a".to_vec();
    big.extend_from_slice(&7000u16.to_le_bytes());
    big.extend_from_slice(&7000u16.to_le_bytes());
    big.extend_from_slice(&[0x80, 0, 0, 0, 0, 0, 255, 255, 255]);
    big.extend_from_slice(&[0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0]);
    big.extend_from_slice(&[0x02, 0x02, 0x44, 0x01, 0x00, 0x3B]);
    assert!(!is_animated_gif(&big).unwrap());
    assert!(is_animated_gif(&big[..big.len() - 3]).is_err(), "cut inside a block");
}

/// The still-GIF check counts frame descriptors and decodes no frame: on a 7000x7000 canvas it held
/// two RGBA frames (376 MiB); now a few KiB, whatever the canvas.
#[test]
fn the_still_gif_check_holds_no_frame() {
    let mut bytes = Vec::new();
    {
        let mut encoder = gif::Encoder::new(&mut bytes, 7000, 7000, &[0, 0, 0, 255, 255, 255]).unwrap();
        for _ in 0..2 {
            let frame =
                gif::Frame { width: 1, height: 1, buffer: std::borrow::Cow::Borrowed(&[1]), ..Default::default() };
            encoder.write_frame(&frame).unwrap();
        }
    }
    let (animated, peak) = crate::alloc_meter::peak_during(|| super::is_animated_gif(&bytes));
    assert!(animated.unwrap());
    assert!(peak < 1 << 20, "the check held {peak} bytes");
}

/// The quality guard of the speed work, on a small image: the fitted output (shrink-on-load,
/// Lanczos3, JPEG q80) stays within 32 dB PSNR of a full-decode float Lanczos3 reference.
#[test]
fn the_fit_keeps_quality_against_a_float_reference() {
    let photo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/photos/kodim23.png");
    let photo = image::open(photo).expect("tests/corpus/photos/kodim23.png");
    // 768x512 upscaled to 4608x3072 and stored as JPEG: fitted to 2000x1333 at a 1/2 DCT scale.
    let big = photo.resize_exact(4608, 3072, image::imageops::FilterType::CatmullRom);
    let jpeg = {
        let mut out = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 95).encode_image(&big.to_rgb8()).unwrap();
        out
    };
    let a = admit_image(&jpeg, "image/jpeg", &Options::default()).unwrap();
    assert_eq!(a.dimensions, Some(Dimensions { width: 2000, height: 1333 }));
    let ours = image::load_from_memory(a.bytes(&[])).unwrap().to_rgb32f();
    let reference = DynamicImage::ImageRgb32F(image::load_from_memory(&jpeg).unwrap().to_rgb32f())
        .resize_exact(2000, 1333, image::imageops::FilterType::Lanczos3)
        .to_rgb32f();
    let mse: f64 = ours
        .as_raw()
        .iter()
        .zip(reference.as_raw())
        .map(|(x, y)| f64::from(x.clamp(0.0, 1.0) - y.clamp(0.0, 1.0)).powi(2))
        .sum::<f64>()
        / ours.as_raw().len() as f64;
    let psnr = 10.0 * (1.0 / mse).log10();
    assert!(psnr >= 32.0, "PSNR {psnr:.1} dB");
}

#[test]
fn a_webp_canvas_larger_than_its_frame_is_not_admitted_at_the_declared_size() {
    // VP8X declaring 20000x2500 around a 1x1 lossless frame.
    let one = encode(&gradient(1, 1), ImageFormat::WebP);
    let frame = &one[12..]; // the VP8L chunk
    let mut vp8x = b"VP8X".to_vec();
    vp8x.extend_from_slice(&10u32.to_le_bytes());
    vp8x.extend_from_slice(&[0, 0, 0, 0]);
    vp8x.extend_from_slice(&(20_000u32 - 1).to_le_bytes()[..3]);
    vp8x.extend_from_slice(&(2_500u32 - 1).to_le_bytes()[..3]);
    let mut bytes = b"RIFF".to_vec();
    bytes.extend_from_slice(&((4 + vp8x.len() + frame.len()) as u32).to_le_bytes());
    bytes.extend_from_slice(b"WEBP");
    bytes.extend_from_slice(&vp8x);
    bytes.extend_from_slice(frame);
    for verify in [Verify::Header, Verify::Full] {
        match admit_image(&bytes, "image/webp", &Options { verify, ..Options::default() }) {
            Ok(a) => panic!("{verify:?}: admitted at {:?}", a.dimensions),
            Err(r) => assert_eq!(r.reason, Reason::Undecodable, "{verify:?}: {}", r.message),
        }
    }
}

/// A decode that fails after the header passed: the refusal names no dimensions (it used to report
/// the header's `WxH px` as if measured), whether the decoder's limits or corrupt data stopped it.
#[test]
fn no_dimensions_are_reported_for_pixels_that_could_not_be_decoded() {
    use image::error::{LimitError, LimitErrorKind};
    let limits = image::ImageError::Limits(LimitError::from_kind(LimitErrorKind::InsufficientMemory));
    let r = decode_failed(1234, ImageType::Png, &limits);
    assert_eq!((r.reason, r.limit), (Reason::DimensionsTooLarge, Some(crate::limits::DECODE_MAX_PIXELS)));
    assert!(r.message.contains("cannot be decoded within the decoder's strict limits"), "{}", r.message);
    assert!(!r.message.contains(" px decode") && !r.message.contains("declared"), "{}", r.message);
    // Corrupt pixel data through the whole gate: undecodable, and no size in the words.
    let mut bytes = png(64, 48);
    let idat = bytes.windows(4).position(|w| w == b"IDAT").unwrap();
    for b in &mut bytes[idat + 8..idat + 40] {
        *b ^= 0x5a;
    }
    let full = Options { verify: Verify::Full, ..opts(true, Provider::Anthropic) };
    let r = refused(admit_image(&bytes, "image/png", &full));
    assert_eq!(r.reason, Reason::Undecodable, "{r:?}");
    assert!(!r.message.contains("64x48"), "{}", r.message);
}

/// A JPEG whose scan data ends early (libjpeg-turbo: "premature end of data segment"; Pillow and
/// Chromium show the rest grey): admitted as its pixels re-encoded, `broken-scan` named, with or
/// without the downsampler; the output is a whole JPEG the decoders read without complaint.
#[test]
fn a_jpeg_cut_short_is_admitted_reencoded() {
    let plain = encode(&gradient(40, 30), ImageFormat::Jpeg);
    let sos = plain.windows(2).position(|w| w == [0xFF, 0xDA]).unwrap();
    let mut cut = plain[..sos + (plain.len() - sos) / 2].to_vec();
    if cut.last() == Some(&0xFF) {
        cut.pop();
    }
    cut.extend_from_slice(&[0xFF, 0xD9]);
    for downsample in [true, false] {
        let options = Options { downsample, verify: Verify::Full, ..Options::default() };
        let a = admit_image(&cut, "image/jpeg", &options).unwrap();
        assert!(a.reencoded);
        assert_eq!(a.dropped, ["broken-scan"]);
        let Data::Bytes(out) = &a.data else { panic!("re-encoded bytes") };
        assert_eq!(crate::remux::canonical(out, ImageType::Jpeg, false).unwrap(), crate::remux::Canonical::default());
        let back = image::load_from_memory(out).unwrap();
        assert_eq!((back.width(), back.height()), (40, 30));
    }
}

/// A zero in a quantization table: the gate's decoder reads a copy with 1 there (libjpeg-turbo
/// decodes the file as it is); the admitted bytes keep the table.
#[test]
fn a_zero_quantization_entry_is_decoded() {
    let plain = encode(&gradient(40, 30), ImageFormat::Jpeg);
    let dqt = plain.windows(2).position(|w| w == [0xFF, 0xDB]).unwrap();
    let mut zeroed = plain.clone();
    // The last entry of the first table (the highest frequency).
    zeroed[dqt + 4 + 64] = 0;
    assert!(jpeg_decoder::Decoder::new(&zeroed[..]).decode().is_err(), "the decoder refuses a zero entry");
    let a = admit_image(&zeroed, "image/jpeg", &Options { verify: Verify::Full, ..Options::default() }).unwrap();
    assert!(!a.reencoded);
    assert_eq!(a.data, Data::Unchanged);
}

/// The JPEGs of the conformance corpus (`tests/corpus/conformance/jpeg/`), each whole and in the
/// suite's kinds of mutation (cut at half and near its end, bits flipped past the signature at
/// several seeds, the segments before the first scan reversed).
fn conformance_jpegs_and_mutations() -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/conformance/jpeg");
    let mut paths: Vec<_> = std::fs::read_dir(&dir).expect("the JPEG corpus").map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let data = std::fs::read(&path).unwrap();
        if data.len() >= 32 {
            out.push((format!("{name}~trunc-half"), data[..data.len() / 2].to_vec()));
            out.push((format!("{name}~trunc-end"), data[..data.len() - (data.len() / 50).max(1)].to_vec()));
            // A fixed xorshift per file and seed: the same flips every run.
            for seed in 1..=6u64 {
                let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ data.len() as u64;
                let mut next = move || {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state
                };
                let mut flipped = data.clone();
                for _ in 0..4 {
                    let at = 16 + (next() % (data.len() as u64 - 16)) as usize;
                    flipped[at] ^= 1 << (next() % 8);
                }
                out.push((format!("{name}~bitflip-{seed}"), flipped));
            }
            if let Some(reordered) = segments_before_the_scan_reversed(&data) {
                out.push((format!("{name}~reorder"), reordered));
            }
        }
        out.push((name, data));
    }
    out
}

fn segments_before_the_scan_reversed(data: &[u8]) -> Option<Vec<u8>> {
    let (mut at, mut segments) = (2, Vec::new());
    while at + 4 <= data.len() && data[at] == 0xFF {
        if data[at + 1] == 0xDA {
            segments.reverse();
            let mut out = data[..2].to_vec();
            segments.iter().for_each(|s: &&[u8]| out.extend_from_slice(s));
            out.extend_from_slice(&data[at..]);
            return (segments.len() >= 2).then_some(out);
        }
        let len = usize::from(u16::from_be_bytes([data[at + 2], data[at + 3]]));
        segments.push(data.get(at..at + 2 + len)?);
        at += 2 + len;
    }
    None
}

/// Every one of them gets a verdict: no panic (in the component, a trap that sinks the whole
/// call) on any of them, with the downsampler on and off.
#[test]
fn every_conformance_jpeg_and_its_mutations_gets_a_verdict() {
    within(
        HOSTILE,
        "every_conformance_jpeg_and_its_mutations_gets_a_verdict",
        every_conformance_jpeg_and_its_mutations_gets_a_verdict_body,
    )
}

fn every_conformance_jpeg_and_its_mutations_gets_a_verdict_body() {
    let mut panicked = Vec::new();
    for (name, bytes) in conformance_jpegs_and_mutations() {
        for downsample in [true, false] {
            let options = Options { downsample, ..Options::default() };
            if std::panic::catch_unwind(|| admit_image(&bytes, "image/jpeg", &options)).is_err() {
                panicked.push(format!("{name} (downsample {downsample})"));
            }
        }
    }
    assert!(panicked.is_empty(), "panicked on: {panicked:#?}");
}

/// `png` with its image data's Adler-32 checksum (the zlib stream's last 4 bytes, at the end of
/// its one IDAT chunk) flipped, under a right CRC.
fn png_with_wrong_adler(png: &[u8]) -> Vec<u8> {
    let idat = png.windows(4).position(|w| w == b"IDAT").unwrap() - 4;
    let len = u32::from_be_bytes(png[idat..idat + 4].try_into().unwrap()) as usize;
    let mut out = png.to_vec();
    out[idat + 8 + len - 1] ^= 0xFF;
    let crc = crc32fast::hash(&out[idat + 4..idat + 8 + len]);
    out[idat + 8 + len..idat + 12 + len].copy_from_slice(&crc.to_be_bytes());
    out
}

#[test]
fn a_png_whose_zlib_checksum_fails_is_refused_as_libpng_refuses_it() {
    let good = png(64, 48);
    assert!(admit_image(&good, "image/png", &Options::default()).is_ok());
    let bad = png_with_wrong_adler(&good);
    let r = refused(admit_image(&bad, "image/png", &Options::default()));
    assert_eq!(r.reason, Reason::Undecodable, "{}", r.message);
    // A palette image whose PLTE comes after its image data: read as stored the indices need none.
    let encoded = indexed_png(2, 1, png::BitDepth::Eight, vec![1, 2, 3, 4, 5, 6], &[1, 0]);
    let (plte, idat) = (33, 33 + 12 + 6);
    let idat_len = u32::from_be_bytes(encoded[idat..idat + 4].try_into().unwrap()) as usize;
    let mut reordered = encoded[..plte].to_vec();
    reordered.extend_from_slice(&encoded[idat..idat + 12 + idat_len]);
    reordered.extend_from_slice(&encoded[plte..idat]);
    reordered.extend_from_slice(&encoded[idat + 12 + idat_len..]);
    assert_eq!(&reordered[37..41], b"IDAT");
    assert!(admit_image(&encoded, "image/png", &Options::default()).is_ok());
    let r = refused(admit_image(&reordered, "image/png", &Options::default()));
    assert!(r.message.contains("no PLTE chunk before its image data"), "{}", r.message);
    // The fit decodes it too, and refuses it alike.
    let big = png_with_wrong_adler(&encode(&noise(2400, 1200), ImageFormat::Png));
    assert_eq!(refused(admit_image(&big, "image/png", &Options::default())).reason, Reason::Undecodable);
}
