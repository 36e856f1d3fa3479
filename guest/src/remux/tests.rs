use std::io::Write;

use image::{DynamicImage, ImageFormat};

use super::*;
use crate::test_images::{encode, gradient, png, png_with_chunk_after_ihdr, with_chunk_after_ihdr};

fn made(bytes: &[u8], t: ImageType) -> (Vec<u8>, Vec<&'static str>) {
    let c = canonical(bytes, t, false).expect("a canonical form");
    (c.bytes.expect("a changed form"), c.dropped)
}

fn decoded(bytes: &[u8], format: ImageFormat) -> DynamicImage {
    image::load_from_memory_with_format(bytes, format).expect("decodes")
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(data).unwrap();
    z.finish().unwrap()
}

/// A TIFF-structured EXIF block with the orientation and a GPS-looking ASCII value (a camera
/// serial, a place) that must not leave.
fn exif_tiff(orientation: u16) -> Vec<u8> {
    let mut tiff = b"II*\0\x08\0\0\0".to_vec();
    tiff.extend_from_slice(&2u16.to_le_bytes());
    tiff.extend_from_slice(&0x0112u16.to_le_bytes());
    tiff.extend_from_slice(&3u16.to_le_bytes());
    tiff.extend_from_slice(&1u32.to_le_bytes());
    tiff.extend_from_slice(&orientation.to_le_bytes());
    tiff.extend_from_slice(&[0, 0]);
    // BodySerialNumber (0xA431), ASCII, at offset 38.
    let secret = b"SERIAL-48.8584N-2.2945E\0";
    tiff.extend_from_slice(&0xA431u16.to_le_bytes());
    tiff.extend_from_slice(&2u16.to_le_bytes());
    tiff.extend_from_slice(&(secret.len() as u32).to_le_bytes());
    tiff.extend_from_slice(&38u32.to_le_bytes());
    tiff.extend_from_slice(&0u32.to_le_bytes());
    tiff.extend_from_slice(secret);
    tiff
}

const SECRET: &[u8] = b"48.8584N";

/// A JPEG segment: marker, length, payload.
fn segment(marker: u8, payload: &[u8]) -> Vec<u8> {
    let mut s = vec![0xFF, marker];
    s.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
    s.extend_from_slice(payload);
    s
}

fn jpeg_plain() -> Vec<u8> {
    encode(&gradient(64, 48), ImageFormat::Jpeg)
}

/// `segments` inserted right after SOI (and the JFIF APP0 the encoder writes, if any).
fn jpeg_with(segments: &[Vec<u8>]) -> Vec<u8> {
    let plain = jpeg_plain();
    let at = if plain[2..4] == [0xFF, 0xE0] { 4 + usize::from(u16::from_be_bytes([plain[4], plain[5]])) } else { 2 };
    let mut out = plain[..at].to_vec();
    for s in segments {
        out.extend_from_slice(s);
    }
    out.extend_from_slice(&plain[at..]);
    out
}

fn icc_profile(len: usize) -> Vec<u8> {
    let mut p = vec![0x5Au8; len];
    p[..4].copy_from_slice(&(len as u32).to_be_bytes());
    p
}

#[test]
fn a_png_without_metadata_is_its_own_canonical_form() {
    let bytes = png(16, 16);
    assert_eq!(canonical(&bytes, ImageType::Png, false), Ok(Canonical::default()));
}

#[test]
fn png_metadata_is_dropped_and_the_pixels_kept() {
    let mut exif = b"".to_vec();
    exif.extend_from_slice(&exif_tiff(1));
    let with_exif = png_with_chunk_after_ihdr(b"eXIf", &exif);
    let mut text = b"Comment\0".to_vec();
    text.extend_from_slice(SECRET);
    let bytes = insert_png_chunk(&with_exif, b"tEXt", &text);
    let bytes = insert_png_chunk(&bytes, b"prIv", b"unknown ancillary");
    let mut trailing = bytes.clone();
    trailing.extend_from_slice(b"after IEND");
    let (out, dropped) = made(&trailing, ImageType::Png);
    assert!(!contains(&out, SECRET) && !contains(&out, b"eXIf") && !contains(&out, b"prIv"));
    assert!(!contains(&out, b"after IEND"));
    assert_eq!(dropped, ["exif", "text", "other-metadata", "trailing-bytes"]);
    assert_eq!(decoded(&out, ImageFormat::Png), decoded(&bytes, ImageFormat::Png));
    assert_eq!(crate::container::check(&out, ImageType::Png), Ok(()));
    // Kept when asked; only what lies outside the structure still goes.
    let kept = canonical(&trailing, ImageType::Png, true).unwrap();
    assert_eq!((kept.bytes.as_deref(), kept.dropped), (Some(&bytes[..]), vec!["trailing-bytes"]));
}

/// `bytes` with one more chunk before its last (IEND).
fn insert_png_chunk(bytes: &[u8], kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = bytes[..bytes.len() - 12].to_vec();
    png_chunk(&mut out, kind, data);
    out.extend_from_slice(&bytes[bytes.len() - 12..]);
    out
}

#[test]
fn a_png_orientation_outlives_its_exif() {
    let bytes = png_with_chunk_after_ihdr(b"eXIf", &exif_tiff(6));
    let (out, dropped) = made(&bytes, ImageType::Png);
    assert_eq!(dropped, ["exif"]);
    assert!(!contains(&out, SECRET));
    let header = crate::gate::decode::read_header(&out, ImageType::Png).unwrap();
    assert_eq!(header.orientation, Orientation::Rotate90);
}

#[test]
fn colour_information_is_kept_and_a_bad_profile_dropped() {
    let mut iccp = b"sRGB IEC61966-2.1\0\0".to_vec();
    iccp.extend_from_slice(&zlib(&icc_profile(3000)));
    let good = png_with_chunk_after_ihdr(b"iCCP", &iccp);
    // Kept, under the one name the gate writes (its own form stands as it is).
    let (out, dropped) = made(&good, ImageType::Png);
    assert_eq!(
        (out.clone(), dropped),
        (png_with_chunk_after_ihdr(b"iCCP", &iccp_data(&icc_profile(3000))), vec!["other-metadata"])
    );
    assert_eq!(canonical(&out, ImageType::Png, false), Ok(Canonical::default()));
    let gamma = png_with_chunk_after_ihdr(b"gAMA", &45455u32.to_be_bytes());
    assert_eq!(canonical(&gamma, ImageType::Png, false), Ok(Canonical::default()));
    // A profile whose stream is corrupt, or whose compression method is unknown: libpng warns and
    // goes on without it; so does the canonical form.
    let mut corrupt = iccp.clone();
    let last = corrupt.len() - 1;
    corrupt[last] ^= 0xFF;
    let mut unknown_method = iccp.clone();
    unknown_method[18] = 1;
    for data in [corrupt, unknown_method] {
        let (out, dropped) = made(&png_with_chunk_after_ihdr(b"iCCP", &data), ImageType::Png);
        assert_eq!((out, dropped), (png(8, 8), vec!["icc-profile"]));
    }
}

#[test]
fn an_icc_profile_carries_nothing_but_the_profile() {
    let profile = icc_profile(3000);
    // Text in the profile's name, and after its zlib stream.
    let mut named = SECRET.to_vec();
    named.extend_from_slice(b"\0\0");
    named.extend_from_slice(&zlib(&profile));
    let mut trailing = ICCP_NAME.to_vec();
    trailing.extend_from_slice(&zlib(&profile));
    trailing.extend_from_slice(SECRET);
    for data in [named, trailing] {
        let bytes = png_with_chunk_after_ihdr(b"iCCP", &data);
        let (out, dropped) = made(&bytes, ImageType::Png);
        assert!(!contains(&out, SECRET));
        assert_eq!(dropped, ["other-metadata"]);
        // The profile decoders read is the same, and so are the pixels.
        let iccp = &out[33 + 8..33 + 8 + u32::from_be_bytes(out[33..37].try_into().unwrap()) as usize];
        assert_eq!(iccp_data(&profile), iccp);
        assert_eq!(decoded(&out, ImageFormat::Png), decoded(&bytes, ImageFormat::Png));
        // Kept whole when metadata is kept.
        assert_eq!(canonical(&bytes, ImageType::Png, true).unwrap().bytes, None);
    }
}

#[test]
fn colour_chunks_libpng_ignores_do_not_go_on() {
    let gamma = 45455u32.to_be_bytes();
    let with = |chunks: &[(&[u8; 4], &[u8])]| {
        let mut bytes = png(8, 8);
        for (kind, data) in chunks.iter().rev() {
            bytes = with_chunk_after_ihdr(&bytes, kind, data);
        }
        bytes
    };
    // Empty and repeated, as a fuzzed file has them: the first well-formed one of each stays.
    let bytes = with(&[
        (b"cHRM", b""),
        (b"gAMA", b""),
        (b"sRGB", b""),
        (b"cHRM", b""),
        (b"gAMA", &gamma),
        (b"gAMA", &[0, 0, 0, 1]),
    ]);
    let (out, dropped) = made(&bytes, ImageType::Png);
    assert_eq!((out, dropped), (with(&[(b"gAMA", &gamma)]), vec!["other-metadata"]));
    // A tRNS that does not fit the colour type (8-bit RGB takes 6 bytes).
    let (out, dropped) = made(&with(&[(b"tRNS", &[0, 1])]), ImageType::Png);
    assert_eq!((out, dropped), (png(8, 8), vec!["other-metadata"]));
    assert_eq!(canonical(&with(&[(b"tRNS", &[0, 1, 0, 2, 0, 3])]), ImageType::Png, false), Ok(Canonical::default()));
    // What Pillow read of the original is what it reads now.
    let pixels = decoded(&png(8, 8), ImageFormat::Png);
    assert_eq!(decoded(&made(&bytes, ImageType::Png).0, ImageFormat::Png), pixels);
}

#[test]
fn an_iccp_zlib_bomb_is_refused_without_inflating_it_whole() {
    let mut iccp = b"icc\0\0".to_vec();
    iccp.extend_from_slice(&zlib(&vec![0u8; 64 * 1024 * 1024]));
    let bomb = png_with_chunk_after_ihdr(b"iCCP", &iccp);
    let (refused, peak) = crate::alloc_meter::peak_during(|| canonical(&bomb, ImageType::Png, false));
    let err = refused.unwrap_err();
    assert!(err.0.contains("zlib bomb"), "{}", err.0);
    assert!(peak < 4 * ANCILLARY_INFLATE_MAX, "the bomb took {peak} bytes to refuse");
}

#[test]
fn compressed_text_is_dropped_unread_or_checked_when_kept() {
    let mut bomb = b"Comment\0\0".to_vec();
    bomb.extend_from_slice(&zlib(&vec![b'a'; ANCILLARY_INFLATE_MAX + 1]));
    let mut unknown_method = b"Comment\0\x07".to_vec();
    unknown_method.extend_from_slice(&zlib(b"hello"));
    let mut itxt_unknown = b"Comment\0\x01\x05\0\0".to_vec();
    itxt_unknown.extend_from_slice(b"whatever");
    for (kind, data, why) in [
        (b"zTXt", bomb, "zlib bomb"),
        (b"zTXt", unknown_method, "unknown compression method 7"),
        (b"iTXt", itxt_unknown, "unknown compression method 5"),
    ] {
        let bytes = png_with_chunk_after_ihdr(kind, &data);
        let (out, dropped) = made(&bytes, ImageType::Png);
        assert_eq!((out, dropped), (png(8, 8), vec!["text"]));
        let err = canonical(&bytes, ImageType::Png, true).unwrap_err();
        assert!(err.0.contains(why), "{}", err.0);
    }
}

/// An APNG: acTL declaring `declared` frames, then fcTL/fdAT chunks numbered as `sequence` says
/// (the default image is the first frame).
fn apng(declared: u32, chunks: &[(&[u8; 4], u32)]) -> Vec<u8> {
    let base = png(8, 8);
    let after_ihdr = 8 + 25;
    let mut out = base[..after_ihdr].to_vec();
    let mut actl = declared.to_be_bytes().to_vec();
    actl.extend_from_slice(&0u32.to_be_bytes());
    png_chunk(&mut out, b"acTL", &actl);
    for (kind, n) in chunks {
        let mut data = n.to_be_bytes().to_vec();
        if *kind == b"fcTL" {
            for v in [8u32, 8, 0, 0] {
                data.extend_from_slice(&v.to_be_bytes());
            }
            data.extend_from_slice(&[0, 1, 0, 1, 0, 0]);
        } else {
            data.extend_from_slice(b"frame data");
        }
        png_chunk(&mut out, kind, &data);
    }
    out.extend_from_slice(&base[after_ihdr..]);
    out
}

#[test]
fn a_well_formed_apng_loses_its_animation_chunks() {
    let bytes = apng(2, &[(b"fcTL", 0), (b"fcTL", 1), (b"fdAT", 2)]);
    let (out, dropped) = made(&bytes, ImageType::Png);
    assert_eq!((out, dropped), (png(8, 8), vec!["animation"]));
    assert_eq!(canonical(&bytes, ImageType::Png, true).unwrap().bytes, None);
}

#[test]
fn a_broken_apng_is_refused_as_strict_decoders_refuse_it() {
    for (declared, chunks, why) in [
        (2, &[(b"fcTL", 0), (b"fcTL", 2), (b"fdAT", 1)][..], "out of sequence"),
        (2, &[(b"fcTL", 0), (b"fcTL", 1), (b"fdAT", 1)][..], "out of sequence"),
        (2, &[(b"fcTL", 1), (b"fcTL", 2)][..], "out of sequence"),
        (5, &[(b"fcTL", 0), (b"fcTL", 1), (b"fdAT", 2)][..], "declares 5 frames"),
        (1, &[(b"fdAT", 0)][..], "before any frame control"),
    ] {
        let bytes = apng(declared, chunks);
        for keep in [false, true] {
            let err = canonical(&bytes, ImageType::Png, keep).unwrap_err();
            assert!(err.0.contains(why), "{why}: {}", err.0);
        }
    }
}

#[test]
fn jpeg_metadata_is_dropped_and_what_a_decoder_needs_kept() {
    let mut exif = b"Exif\0\0".to_vec();
    exif.extend_from_slice(&exif_tiff(1));
    let mut xmp = b"http://ns.adobe.com/xap/1.0/\0<x:xmpmeta>".to_vec();
    xmp.extend_from_slice(SECRET);
    let adobe = b"Adobe\0\x64\0\0\0\0\x01".to_vec();
    let bytes = jpeg_with(&[
        segment(0xE1, &exif),
        segment(0xE1, &xmp),
        segment(0xED, b"Photoshop 3.0\0 8BIM iptc"),
        segment(0xFE, SECRET),
        segment(0xEE, &adobe),
    ]);
    let (out, dropped) = made(&bytes, ImageType::Jpeg);
    assert!(!contains(&out, SECRET) && !contains(&out, b"Exif") && !contains(&out, b"8BIM"));
    assert!(contains(&out, &segment(0xEE, &adobe)), "the Adobe segment decides the colour transform");
    assert_eq!(dropped, ["exif", "xmp", "iptc", "comment"]);
    assert_eq!(out, jpeg_with(&[segment(0xEE, &adobe)]));
    assert_eq!(decoded(&out, ImageFormat::Jpeg), decoded(&bytes, ImageFormat::Jpeg));
    assert_eq!(canonical(&jpeg_plain(), ImageType::Jpeg, false), Ok(Canonical::default()));
    assert_eq!(canonical(&bytes, ImageType::Jpeg, true), Ok(Canonical::default()));
}

#[test]
fn an_arithmetic_jpeg_is_transcoded_to_huffman_coding_and_walked() {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus");
    let ari = std::fs::read(format!("{corpus}/conformance/jpeg/testimgari.jpg")).unwrap();
    let twin = std::fs::read(format!("{corpus}/jpeg-arithmetic/testimgari.huffman.jpg")).unwrap();
    let c = canonical(&ari, ImageType::Jpeg, false).expect("transcoded");
    assert!(!c.reencoded && c.repair.is_none());
    let out = c.bytes.expect("the transcoded file");
    assert_eq!(decoded(&out, ImageFormat::Jpeg), decoded(&twin, ImageFormat::Jpeg));
    // The transcoded file is canonical as it is: the walk found nothing to change in it.
    assert_eq!(canonical(&out, ImageType::Jpeg, false), Ok(Canonical::default()));
    // The metadata rules apply to the transcoded file.
    let commented = [&ari[..2], &segment(0xFE, SECRET), &ari[2..]].concat();
    let c = canonical(&commented, ImageType::Jpeg, false).expect("transcoded");
    assert_eq!(c.dropped, ["comment"]);
    assert_eq!(c.bytes.as_deref(), Some(&out[..]));
    let kept = canonical(&commented, ImageType::Jpeg, true).expect("transcoded").bytes.expect("the transcoded file");
    assert!(contains(&kept, SECRET) && decoded(&kept, ImageFormat::Jpeg) == decoded(&out, ImageFormat::Jpeg));
}

#[test]
fn a_jpeg_orientation_outlives_its_exif() {
    let mut exif = b"Exif\0\0".to_vec();
    exif.extend_from_slice(&exif_tiff(8));
    let (out, _) = made(&jpeg_with(&[segment(0xE1, &exif)]), ImageType::Jpeg);
    assert!(!contains(&out, SECRET));
    let header = crate::gate::decode::read_header(&out, ImageType::Jpeg).unwrap();
    assert_eq!(header.orientation, Orientation::Rotate270);
}

#[test]
fn a_whole_icc_profile_is_kept_a_broken_one_dropped() {
    let profile = icc_profile(70_000);
    let (a, b) = profile.split_at(60_000);
    let chunk = |seq: u8, count: u8, data: &[u8]| {
        let mut p = b"ICC_PROFILE\0".to_vec();
        p.extend_from_slice(&[seq, count]);
        p.extend_from_slice(data);
        segment(0xE2, &p)
    };
    let whole = jpeg_with(&[chunk(1, 2, a), chunk(2, 2, b)]);
    assert_eq!(canonical(&whole, ImageType::Jpeg, false), Ok(Canonical::default()));
    let missing = jpeg_with(&[chunk(1, 2, a)]);
    let (out, dropped) = made(&missing, ImageType::Jpeg);
    assert_eq!((out, dropped), (jpeg_plain(), vec!["icc-profile"]));
}

#[test]
fn what_libjpeg_repairs_is_repaired() {
    let plain = jpeg_plain();
    // Stray bytes before a marker, an APP14 too short to be Adobe's, bytes after EOI.
    let sos = plain.windows(2).position(|w| w == [0xFF, 0xDA]).unwrap();
    let mut stray = plain[..sos].to_vec();
    stray.extend_from_slice(b"\x00\x13\x37");
    stray.extend_from_slice(&plain[sos..]);
    let (out, dropped) = made(&stray, ImageType::Jpeg);
    assert_eq!((out, dropped), (plain.clone(), vec!["stray-bytes"]));
    let (out, dropped) = made(&jpeg_with(&[segment(0xEE, b"Adobe")]), ImageType::Jpeg);
    assert_eq!((out, dropped), (plain.clone(), vec!["other-metadata"]));
    let mut trailing = plain.clone();
    trailing.extend_from_slice(b"maker notes");
    let (out, dropped) = made(&trailing, ImageType::Jpeg);
    assert_eq!((out, dropped), (plain.clone(), vec!["trailing-bytes"]));
    // Restart and TEM markers between segments before the first scan: libjpeg passes over them
    // (parameterless), the image crate's decoder cannot read the header after one that follows SOI.
    let mut parameterless = plain[..2].to_vec();
    parameterless.extend_from_slice(&[0xFF, 0xD5, 0xFF, 0x01]);
    parameterless.extend_from_slice(&plain[2..sos]);
    parameterless.extend_from_slice(&[0xFF, 0xD0]);
    parameterless.extend_from_slice(&plain[sos..]);
    let (out, dropped) = made(&parameterless, ImageType::Jpeg);
    assert_eq!((out, dropped), (plain, vec!["stray-bytes"]));
}

#[test]
fn a_jfif_thumbnail_and_an_adobe_tail_carry_nothing_through() {
    let plain = jpeg_plain();
    // A JFIF APP0 with a 2x1 thumbnail whose pixels spell the secret, as the first segment.
    let mut jfif = b"JFIF\0\x01\x02\x01\x00\x48\x00\x48\x02\x01".to_vec();
    jfif.extend_from_slice(&SECRET[..6]);
    let own_app0 =
        if plain[2..4] == [0xFF, 0xE0] { 4 + usize::from(u16::from_be_bytes([plain[4], plain[5]])) } else { 2 };
    let mut thumbnailed = plain[..2].to_vec();
    thumbnailed.extend_from_slice(&segment(0xE0, &jfif));
    thumbnailed.extend_from_slice(&plain[own_app0..]);
    let (out, dropped) = made(&thumbnailed, ImageType::Jpeg);
    assert!(!contains(&out, &SECRET[..6]), "the thumbnail's bytes are gone");
    assert_eq!(dropped, ["other-metadata"]);
    let mut expected = plain[..2].to_vec();
    expected.extend_from_slice(&segment(0xE0, b"JFIF\0\x01\x02\x01\x00\x48\x00\x48\x00\x00"));
    expected.extend_from_slice(&plain[own_app0..]);
    assert_eq!(out, expected, "the JFIF header kept (version, density), the thumbnail size zero");
    assert_eq!(decoded(&out, ImageFormat::Jpeg), decoded(&plain, ImageFormat::Jpeg));
    // The thumbnail is metadata: kept when asked.
    assert_eq!(canonical(&thumbnailed, ImageType::Jpeg, true).unwrap().bytes, None);
    // A JFIF segment too short to be read as one decides nothing and goes.
    let mut short = plain[..2].to_vec();
    short.extend_from_slice(&segment(0xE0, b"JFIF\0\x01"));
    short.extend_from_slice(&plain[own_app0..]);
    let (out, dropped) = made(&short, ImageType::Jpeg);
    assert_eq!((out, dropped), ([&plain[..2], &plain[own_app0..]].concat(), vec!["other-metadata"]));

    // An Adobe APP14 is 12 bytes; what follows them is read by no decoder and goes, asked or not.
    let adobe = b"Adobe\0\x64\0\0\0\0\x01".to_vec();
    let mut long = adobe.clone();
    long.extend_from_slice(SECRET);
    for keep in [false, true] {
        let c = canonical(&jpeg_with(&[segment(0xEE, &long)]), ImageType::Jpeg, keep).unwrap();
        assert_eq!(c.bytes, Some(jpeg_with(&[segment(0xEE, &adobe)])));
        assert_eq!(c.dropped, ["other-metadata"]);
    }
}

fn gif_plain() -> Vec<u8> {
    encode(&gradient(16, 8), ImageFormat::Gif)
}

/// `block` inserted before the GIF's first image descriptor (after the screen and any table).
fn gif_with(block: &[u8]) -> Vec<u8> {
    let plain = gif_plain();
    let at = 13 + if plain[10] & 0x80 != 0 { 3 * (2usize << (plain[10] & 7)) } else { 0 };
    let mut out = plain[..at].to_vec();
    out.extend_from_slice(block);
    out.extend_from_slice(&plain[at..]);
    out
}

#[test]
fn gif_comments_and_unknown_extensions_are_dropped() {
    let mut comment = vec![0x21, 0xFE, SECRET.len() as u8];
    comment.extend_from_slice(SECRET);
    comment.push(0);
    let (out, dropped) = made(&gif_with(&comment), ImageType::Gif);
    assert_eq!((out, dropped), (gif_plain(), vec!["comment"]));
    assert_eq!(canonical(&gif_plain(), ImageType::Gif, false), Ok(Canonical::default()));
}

#[test]
fn a_gif_looping_extension_keeps_its_loop_count_alone() {
    let looping = |sub_blocks: &[&[u8]]| {
        let mut b = b"\x21\xFF\x0BNETSCAPE2.0".to_vec();
        for sub in sub_blocks {
            b.push(sub.len() as u8);
            b.extend_from_slice(sub);
        }
        b.push(0);
        b
    };
    let plain = looping(&[b"\x01\x05\x00"]);
    assert_eq!(canonical(&gif_with(&plain), ImageType::Gif, false), Ok(Canonical::default()));
    // More sub-blocks (a buffering size, any text), or a loop sub-block longer than its 3 bytes.
    let mut secret_sub = b"\x02".to_vec();
    secret_sub.extend_from_slice(SECRET);
    let mut long_loop = b"\x01\x05\x00".to_vec();
    long_loop.extend_from_slice(SECRET);
    for smuggling in
        [looping(&[b"\x01\x05\x00", &secret_sub]), looping(&[&secret_sub, b"\x01\x05\x00"]), looping(&[&long_loop])]
    {
        for keep in [false, true] {
            let c = canonical(&gif_with(&smuggling), ImageType::Gif, keep).unwrap();
            assert_eq!(c.bytes, Some(gif_with(&plain)));
            assert_eq!(c.dropped, ["other-metadata"]);
        }
    }
    // No loop count in it: nothing a decoder reads is left, and it goes whole.
    let (out, dropped) = made(&gif_with(&looping(&[&secret_sub])), ImageType::Gif);
    assert_eq!((out, dropped), (gif_plain(), vec!["other-metadata"]));
    // An identifier sub-block longer than the name: the name kept, the rest of it not.
    let mut long_name = plain.clone();
    long_name[2] = 12;
    long_name.insert(14, b'X');
    let c = canonical(&gif_with(&long_name), ImageType::Gif, false).unwrap();
    assert_eq!((c.bytes, c.dropped), (Some(gif_with(&plain)), vec!["other-metadata"]));
    // A shorter one whose next sub-block completes the name (its size byte is the '2') is no
    // looping extension.
    let mut short_name = b"\x21\xFF\x08NETSCAPE2.0".to_vec();
    short_name.extend_from_slice(&[0x5A; b'2' as usize - 2]);
    short_name.extend_from_slice(b"\x03\x01\x05\x00\x00");
    let (out, dropped) = made(&gif_with(&short_name), ImageType::Gif);
    assert_eq!((out, dropped), (gif_plain(), vec!["other-metadata"]));
}

#[test]
fn a_gif_frame_declaring_gigapixels_is_refused_undecoded() {
    let mut bytes = gif_plain();
    let at = bytes.iter().position(|&b| b == 0x2C).unwrap();
    bytes[at + 5..at + 9].copy_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF]);
    let err = canonical(&bytes, ImageType::Gif, false).unwrap_err();
    assert!(err.0.contains("65535x65535") && err.0.contains("16x8 logical screen"), "{}", err.0);
}

#[test]
fn a_gif_without_a_colour_table_gets_a_grey_ramp() {
    // 2x1, indices 1 and 2, written with a global table that is then taken out.
    let mut with_table = Vec::new();
    {
        let mut encoder = gif::Encoder::new(&mut with_table, 2, 1, &[0; 12]).unwrap();
        let frame = gif::Frame { width: 2, height: 1, buffer: vec![1, 2].into(), ..Default::default() };
        encoder.write_frame(&frame).unwrap();
    }
    let mut bytes = with_table[..13].to_vec();
    bytes[10] &= 0x70;
    bytes.extend_from_slice(&with_table[13 + 12..]);
    assert!(image::load_from_memory_with_format(&bytes, ImageFormat::Gif).is_err());
    let (out, dropped) = made(&bytes, ImageType::Gif);
    assert!(dropped.is_empty());
    let img = decoded(&out, ImageFormat::Gif).to_rgba8();
    assert_eq!(img.get_pixel(0, 0).0, [1, 1, 1, 255]);
    assert_eq!(img.get_pixel(1, 0).0, [2, 2, 2, 255]);
}

/// An extended WebP: VP8X, the lossless image, then EXIF and XMP chunks.
fn webp_with_metadata(orientation: u16) -> Vec<u8> {
    let simple = encode(&gradient(16, 16), ImageFormat::WebP);
    let mut body = b"WEBP".to_vec();
    let mut vp8x = vec![0x08 | 0x04, 0, 0, 0];
    vp8x.extend_from_slice(&15u32.to_le_bytes()[..3]);
    vp8x.extend_from_slice(&15u32.to_le_bytes()[..3]);
    for (kind, data) in [(&b"VP8X"[..], vp8x), (b"EXIF", exif_tiff(orientation)), (b"XMP ", SECRET.to_vec())] {
        body.extend_from_slice(kind);
        body.extend_from_slice(&(data.len() as u32).to_le_bytes());
        body.extend_from_slice(&data);
        if data.len() % 2 == 1 {
            body.push(0);
        }
        if kind == b"VP8X" {
            body.extend_from_slice(&simple[12..]);
        }
    }
    let mut out = b"RIFF".to_vec();
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

#[test]
fn webp_exif_and_xmp_are_dropped() {
    let bytes = webp_with_metadata(1);
    assert_eq!(
        decoded(&bytes, ImageFormat::WebP),
        decoded(&encode(&gradient(16, 16), ImageFormat::WebP), ImageFormat::WebP)
    );
    let (out, dropped) = made(&bytes, ImageType::WebP);
    assert_eq!(dropped, ["exif", "xmp"]);
    assert!(!contains(&out, SECRET) && !contains(&out, b"EXIF"));
    assert_eq!(out[20] & 0x0C, 0, "the VP8X flags say no EXIF, no XMP");
    assert_eq!(decoded(&out, ImageFormat::WebP), decoded(&bytes, ImageFormat::WebP));
    assert_eq!(crate::container::check(&out, ImageType::WebP), Ok(()));
    let simple = encode(&gradient(16, 16), ImageFormat::WebP);
    assert_eq!(canonical(&simple, ImageType::WebP, false), Ok(Canonical::default()));
    // Sideways: the orientation alone stays.
    let (out, _) = made(&webp_with_metadata(3), ImageType::WebP);
    assert!(!contains(&out, SECRET) && out[20] & 0x08 != 0);
    let header = crate::gate::decode::read_header(&out, ImageType::WebP).unwrap();
    assert_eq!(header.orientation, Orientation::Rotate180);
}

#[test]
fn png_colour_chunks_after_the_image_data_are_dropped() {
    // Where libpng ignores them as out of place and pngcheck refuses the file; a public corpus's
    // chunk reorder found the re-mux copying them there.
    let good = png(8, 8);
    let iend = good.len() - 12;
    let mut late = good[..iend].to_vec();
    png_chunk(&mut late, b"gAMA", &45455u32.to_be_bytes());
    png_chunk(&mut late, b"sRGB", &[0]);
    png_chunk(&mut late, b"tRNS", &[0, 0, 0, 0, 0, 0]);
    late.extend_from_slice(&good[iend..]);
    assert_eq!(made(&late, ImageType::Png), (good.clone(), vec!["other-metadata"]));
    // Before the image data they stay.
    let early = png_with_chunk_after_ihdr(b"gAMA", &45455u32.to_be_bytes());
    assert_eq!(canonical(&early, ImageType::Png, false).unwrap(), Canonical::default());
}

#[test]
fn png_iend_is_written_not_copied() {
    // A flipped bit in IEND's CRC: the other references ignore it, libpng and pngcheck refuse it.
    let good = png(8, 8);
    let mut wrong_crc = good.clone();
    let last = wrong_crc.len() - 1;
    wrong_crc[last] ^= 0x20;
    assert_eq!(made(&wrong_crc, ImageType::Png), (good.clone(), vec![]));
    assert_eq!(canonical(&good, ImageType::Png, false).unwrap(), Canonical::default());
}

/// `png` with one bit of the byte `at` flipped.
fn flipped(png: &[u8], at: usize, bit: u8) -> Vec<u8> {
    let mut bytes = png.to_vec();
    bytes[at] ^= 1 << bit;
    bytes
}

/// Where the CRC of a PNG's first chunk of `kind` sits.
fn crc_at(png: &[u8], kind: &[u8; 4]) -> usize {
    let at = chunk_at(png, kind);
    at + 8 + u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize
}

#[test]
fn a_png_idat_with_a_wrong_crc_over_intact_data_gets_a_fresh_crc() {
    // PngSuite's xcsn0g01 case: only the CRC is wrong; Pillow and libvips show the image.
    let good = png(32, 32);
    let wrong_crc = flipped(&good, crc_at(&good, b"IDAT"), 3);
    let c = canonical(&wrong_crc, ImageType::Png, false).expect("repaired");
    assert_eq!((c.bytes.as_deref(), c.dropped.as_slice(), c.reencoded), (Some(&good[..]), &["bad-crc"][..], false));
    // The same chunk split in two, the second's CRC wrong: the stream is checked across chunks.
    let idat = chunk_at(&good, b"IDAT");
    let len = u32::from_be_bytes(good[idat..idat + 4].try_into().unwrap()) as usize;
    let data = &good[idat + 8..idat + 8 + len];
    let mut split = good[..idat].to_vec();
    png_chunk(&mut split, b"IDAT", &data[..len / 2]);
    png_chunk(&mut split, b"IDAT", &data[len / 2..]);
    let fresh = [split.clone(), good[idat + 12 + len..].to_vec()].concat();
    if let Some(b) = split.last_mut() {
        *b ^= 0x10;
    }
    split.extend_from_slice(&good[idat + 12 + len..]);
    assert_eq!(made(&split, ImageType::Png), (fresh, vec!["bad-crc"]));
}

#[test]
fn a_png_idat_whose_data_are_damaged_is_refused() {
    let good = encode(&crate::test_images::noise(32, 32), ImageFormat::Png);
    let idat = chunk_at(&good, b"IDAT");
    let crc = crc_at(&good, b"IDAT");
    // A flipped bit in the compressed rows (its CRC now fails), in the Adler-32 checksum, and
    // bytes after the zlib stream inside the chunk (with a fresh CRC only the last two would
    // pass the CRC; each is written here with the CRC left wrong).
    let mut trailing = good[..crc].to_vec();
    trailing.extend_from_slice(&[0, 0]);
    let len = (crc - idat - 8 + 2) as u32;
    trailing[idat..idat + 4].copy_from_slice(&len.to_be_bytes());
    trailing.extend_from_slice(&good[crc..]);
    for damaged in [flipped(&good, idat + 8 + 40, 5), flipped(&good, crc - 1, 0), trailing] {
        let err = canonical(&damaged, ImageType::Png, false).unwrap_err();
        assert!(err.0.contains("fails its CRC") && err.0.contains("image data"), "{}", err.0);
    }
    // Rows missing: a stream of fewer scanlines than IHDR declares.
    let short = png(32, 31);
    let ihdr_of_32 = &png(32, 32)[..33];
    let mut bytes = ihdr_of_32.to_vec();
    bytes.extend_from_slice(&short[33..]);
    let at = crc_at(&bytes, b"IDAT");
    let err = canonical(&flipped(&bytes, at, 1), ImageType::Png, false).unwrap_err();
    assert!(err.0.contains("before the image is whole"), "{}", err.0);
}

#[test]
fn a_png_header_or_palette_with_a_wrong_crc_is_refused() {
    let good = png(8, 8);
    let err = canonical(&flipped(&good, crc_at(&good, b"IHDR"), 2), ImageType::Png, false).unwrap_err();
    assert!(err.0.contains("IHDR chunk fails its CRC"), "{}", err.0);
    let palette = encode(&crate::test_images::noise(8, 8), ImageFormat::Png);
    let mut with_plte = palette[..33].to_vec();
    png_chunk(&mut with_plte, b"PLTE", &[0; 6]);
    let plte_crc = with_plte.len() - 1;
    with_plte.extend_from_slice(&palette[33..]);
    let err = canonical(&flipped(&with_plte, plte_crc, 7), ImageType::Png, false).unwrap_err();
    assert!(err.0.contains("PLTE chunk fails its CRC"), "{}", err.0);
}

#[test]
fn a_png_ancillary_chunk_with_a_wrong_crc_is_left_out() {
    // As libpng does (warn and skip): its content is not trusted, the image stays.
    let with_gama = png_with_chunk_after_ihdr(b"gAMA", &45455u32.to_be_bytes());
    let bad = flipped(&with_gama, crc_at(&with_gama, b"gAMA"), 4);
    assert_eq!(made(&bad, ImageType::Png), (png(8, 8), vec!["bad-crc"]));
    // Kept metadata with a wrong CRC goes too.
    let with_text = png_with_chunk_after_ihdr(b"tEXt", b"Comment\0hello");
    let bad = flipped(&with_text, crc_at(&with_text, b"tEXt"), 0);
    let c = canonical(&bad, ImageType::Png, true).expect("a canonical form");
    assert_eq!((c.bytes.as_deref(), c.dropped.as_slice()), (Some(&png(8, 8)[..]), &["bad-crc"][..]));
}

/// The byte where a PNG's first chunk of `kind` starts.
fn chunk_at(png: &[u8], kind: &[u8; 4]) -> usize {
    png.windows(4).position(|w| w == kind).expect("the chunk") - 4
}

#[test]
fn a_cut_png_keeps_the_rows_that_arrived_and_gets_its_end() {
    let original = encode(&crate::test_images::noise(64, 64), ImageFormat::Png);
    let idat = chunk_at(&original, b"IDAT");
    let idat_len = u32::from_be_bytes(original[idat..idat + 4].try_into().unwrap()) as usize;
    // Cut in the middle of the image data: the first rows arrived, the last did not.
    let cut = &original[..idat + 8 + idat_len / 2];
    let c = canonical(cut, ImageType::Png, false).expect("repaired");
    assert_eq!((c.dropped.as_slice(), c.reencoded), (&["cut-data"][..], true));
    let (was, now) =
        (decoded(&original, ImageFormat::Png).to_rgb8(), decoded(&c.bytes.unwrap(), ImageFormat::Png).to_rgb8());
    assert_eq!(now.dimensions(), (64, 64));
    assert_eq!(now.get_pixel(5, 0), was.get_pixel(5, 0));
    assert_eq!(now.get_pixel(5, 63).0, [0, 0, 0]);
    assert_ne!(was.get_pixel(5, 63).0, [0, 0, 0]);

    // Cut inside IEND only: the chunks stay as they are, the end is written.
    let c = canonical(&original[..original.len() - 3], ImageType::Png, false).expect("repaired");
    assert_eq!(
        (c.bytes.as_deref(), c.dropped.as_slice(), c.reencoded),
        (Some(&original[..]), &["cut-data"][..], false)
    );

    // Cut before any image data: nothing to show.
    let err = canonical(&original[..idat + 4], ImageType::Png, false).unwrap_err();
    assert!(err.0.contains("before its image data"), "{}", err.0);
}

#[test]
fn a_cut_png_with_a_bad_crc_before_the_cut_is_refused() {
    // Two IDAT chunks, the first with a wrong CRC, the file cut inside the second.
    let original = encode(&crate::test_images::noise(32, 32), ImageFormat::Png);
    let idat = chunk_at(&original, b"IDAT");
    let len = u32::from_be_bytes(original[idat..idat + 4].try_into().unwrap()) as usize;
    let data = &original[idat + 8..idat + 8 + len];
    let mut bytes = original[..idat].to_vec();
    png_chunk(&mut bytes, b"IDAT", &data[..len / 2]);
    let crc_at = bytes.len() - 1;
    bytes[crc_at] ^= 1;
    png_chunk(&mut bytes, b"IDAT", &data[len / 2..]);
    bytes.truncate(bytes.len() - 10);
    let err = canonical(&bytes, ImageType::Png, false).unwrap_err();
    assert!(err.0.contains("CRC"), "{}", err.0);
}

/// The frames a GIF holds, as the `gif` crate reads them (indices, rectangle).
fn gif_frames_of(bytes: &[u8]) -> Vec<(u16, u16, u16, u16, Vec<u8>)> {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let mut decoder = options.read_info(bytes).expect("a GIF");
    let mut frames = Vec::new();
    while let Some(f) = decoder.read_next_frame().expect("every frame decodes") {
        frames.push((f.left, f.top, f.width, f.height, f.buffer.to_vec()));
    }
    frames
}

/// A GIF of 16x8 (a table of 4 colours) with two frames `width` x 4, indices 0..=2 (3 unused), at
/// the given places.
fn two_frame_gif(places: [(u16, u16); 2], width: u16) -> Vec<u8> {
    let mut bytes = Vec::new();
    {
        let mut encoder = gif::Encoder::new(&mut bytes, 16, 8, &[0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255]).unwrap();
        for (left, top) in places {
            let buffer: Vec<u8> = (0..u32::from(width) * 4).map(|i| (i % 3) as u8).collect();
            let frame = gif::Frame { left, top, width, height: 4, buffer: buffer.into(), ..Default::default() };
            encoder.write_frame(&frame).unwrap();
        }
    }
    bytes
}

#[test]
fn a_gif_frame_past_the_screen_is_clipped_to_it() {
    // The second frame is 8 wide at x = 12 of a 16-wide screen: 4 columns show.
    let bytes = two_frame_gif([(0, 0), (12, 4)], 8);
    let c = canonical(&bytes, ImageType::Gif, false).expect("clipped");
    assert_eq!((c.dropped.as_slice(), c.reencoded), (&["off-screen"][..], true));
    let frames = gif_frames_of(&c.bytes.unwrap());
    assert_eq!(frames.len(), 2);
    let (left, top, w, h, indices) = &frames[1];
    assert_eq!((*left, *top, *w, *h), (12, 4, 4, 4));
    // Each row keeps its first 4 indices of 8.
    let kept: Vec<u8> = (0..4u32).flat_map(|row| (0..4).map(move |x| ((row * 8 + x) % 3) as u8)).collect();
    assert_eq!(indices, &kept);
    assert_eq!(frames[0].4, gif_frames_of(&bytes)[0].4, "the frame inside the screen is copied as it was");
}

#[test]
fn a_gif_frame_wholly_off_the_screen_is_dropped() {
    let bytes = two_frame_gif([(0, 0), (0, 40)], 8);
    let c = canonical(&bytes, ImageType::Gif, false).expect("admitted");
    assert_eq!(c.dropped, ["off-screen"]);
    assert_eq!(gif_frames_of(&c.bytes.unwrap()).len(), 1);
    // Its only frame off the screen: one transparent pixel stands for the empty screen.
    let mut only = two_frame_gif([(0, 40), (0, 40)], 8);
    let second = only.len() - 1 - only.iter().rev().position(|&b| b == 0x2C).unwrap();
    only.truncate(second);
    only.push(0x3B);
    let frames = gif_frames_of(&canonical(&only, ImageType::Gif, false).unwrap().bytes.unwrap());
    assert_eq!(frames.iter().map(|f| (f.2, f.3)).collect::<Vec<_>>(), [(1, 1)]);
}

#[test]
fn a_gif_frame_of_no_pixels_is_dropped_as_off_the_screen() {
    // wuffs' zero-width-frame.gif: a 2x2 screen whose one frame is 0x0 with a pixel of LZW data.
    // libvips and Chromium skip the frame and show the empty screen; the `gif` crate fails on
    // it ("odd-sized buffer").
    let mut bytes = b"GIF89a\x02\x00\x02\x00\x81\x00\x00".to_vec();
    bytes.extend_from_slice(&[0x00, 0x00, 0x00, 0xFF, 0x11, 0x00, 0xFF, 0x22, 0x00, 0xFF, 0x33, 0x00]);
    bytes.extend_from_slice(&[0x2C, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0x01, 0x28, 0x00, 0x3B]);
    let c = canonical(&bytes, ImageType::Gif, false).expect("admitted");
    assert_eq!(c.dropped, ["off-screen"]);
    let frames = gif_frames_of(&c.bytes.unwrap());
    assert_eq!(frames.iter().map(|f| (f.2, f.3)).collect::<Vec<_>>(), [(1, 1)], "the empty screen's one pixel");
    // Beside a frame with pixels, that frame stays alone.
    let mut two = two_frame_gif([(0, 0), (0, 0)], 8);
    let second = two.len() - 1 - two.iter().rev().position(|&b| b == 0x2C).unwrap();
    two.truncate(second);
    two.extend_from_slice(&[0x2C, 0, 0, 0, 0, 0, 0, 4, 0, 0x00, 0x02, 0x01, 0x28, 0x00, 0x3B]);
    let c = canonical(&two, ImageType::Gif, false).expect("admitted");
    assert_eq!(c.dropped, ["off-screen"]);
    assert_eq!(gif_frames_of(&c.bytes.unwrap()).len(), 1);
}

#[test]
fn a_cut_gif_keeps_its_whole_frames_and_what_arrived_of_the_last() {
    let bytes = two_frame_gif([(0, 0), (8, 4)], 8);
    // Cut inside the second frame's LZW data.
    let cut = &bytes[..bytes.len() - 6];
    let c = canonical(cut, ImageType::Gif, false).expect("repaired");
    assert_eq!((c.dropped.as_slice(), c.reencoded), (&["cut-data"][..], true));
    let out = c.bytes.unwrap();
    assert_eq!(out.last(), Some(&0x3B));
    let frames = gif_frames_of(&out);
    assert_eq!(frames.len(), 2);
    assert_eq!(frames[0].4, gif_frames_of(&bytes)[0].4);
    // What did not arrive is an index the frame does not use, made transparent.
    let fill = *frames[1].4.last().unwrap();
    assert_eq!(fill, 3);
    assert!(image::load_from_memory_with_format(&out, ImageFormat::Gif).is_ok());
    // Cut before the first frame: nothing to show.
    let first = bytes.iter().position(|&b| b == 0x2C).unwrap();
    assert!(canonical(&bytes[..first], ImageType::Gif, false).is_err());
}

#[test]
fn a_later_gif_frame_whose_data_do_not_decode_is_dropped() {
    let mut bytes = two_frame_gif([(0, 0), (8, 4)], 8);
    let second = bytes.len() - 1 - bytes.iter().rev().position(|&b| b == 0x2C).unwrap();
    // The LZW data after the code size: a code past the table (7 with 6 defined) at once.
    let data = second + 10 + 1;
    let n = usize::from(bytes[data]);
    bytes[data + 1..data + 1 + n].fill(0xFF);
    let c = canonical(&bytes, ImageType::Gif, false).expect("admitted");
    assert_eq!((c.dropped.as_slice(), c.reencoded), (&["broken-frames"][..], false));
    assert_eq!(gif_frames_of(&c.bytes.unwrap()).len(), 1);
}

#[test]
fn an_unknown_gif_extension_is_skipped_even_when_metadata_is_kept() {
    let bytes = gif_with(&[0x21, 0xB9, 2, 1, 2, 0]);
    assert!(image::load_from_memory_with_format(&bytes, ImageFormat::Gif).is_err());
    let c = canonical(&bytes, ImageType::Gif, true).expect("admitted");
    assert_eq!((c.bytes.as_deref(), c.dropped.as_slice()), (Some(&gif_plain()[..]), &["other-metadata"][..]));
}

#[test]
fn the_frames_of_a_gif_are_bounded_in_all() {
    // 7000x7000 frames (49 MP each, under the one-frame bound) but too many of them, refused
    // before any of their data is decoded: the descriptors alone, no LZW data.
    let mut bytes = b"GIF89a".to_vec();
    bytes.extend_from_slice(&[0x58, 0x1B, 0x58, 0x1B, 0x80, 0, 0, 0, 0, 0, 255, 255, 255]);
    for _ in 0..10 {
        bytes.extend_from_slice(&[0x2C, 0, 0, 0, 0, 0x58, 0x1B, 0x58, 0x1B, 0, 2, 0]);
    }
    bytes.push(0x3B);
    let err = canonical(&bytes, ImageType::Gif, false).unwrap_err();
    assert!(err.0.contains("pixels in all"), "{}", err.0);
}

/// The word-wise compare agrees with `==` for every length around a word and a difference at
/// every offset, in the body and in the tail.
#[test]
fn same_bytes_is_slice_equality() {
    for len in [0usize, 1, 15, 16, 17, 31, 32, 33, 100] {
        let a: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
        assert!(same_bytes(&a, &a.clone()));
        assert!(!same_bytes(&a, &a[..len.saturating_sub(1)]) || len == 0);
        for at in 0..len {
            let mut b = a.clone();
            b[at] ^= 0x40;
            assert!(!same_bytes(&a, &b), "len {len}, differs at {at}");
        }
    }
}

/// A 4×2 palette PNG of bit depth 2 whose 2-entry palette the pixels index past (up to 3).
fn png_indexing_past_its_palette() -> Vec<u8> {
    // Indices 0 1 2 3 / 1 1 0 0, four to a byte.
    crate::test_images::indexed_png(
        4,
        2,
        png::BitDepth::Two,
        vec![255, 0, 0, 0, 255, 0],
        &[0b00_01_10_11, 0b01_01_00_00],
    )
}

#[test]
fn a_palette_the_pixels_index_past_is_padded_with_black() {
    let bytes = png_indexing_past_its_palette();
    let (out, _) = made(&bytes, ImageType::Png);
    let plte = chunk_at(&out, b"PLTE");
    assert_eq!(&out[plte..plte + 4], &12u32.to_be_bytes(), "four entries: up to index 3");
    assert_eq!(&out[plte + 8..plte + 20], &[255, 0, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0]);
    let shown = decoded(&out, ImageFormat::Png).to_rgb8();
    assert_eq!(
        [shown.get_pixel(0, 0).0, shown.get_pixel(2, 0).0, shown.get_pixel(3, 0).0],
        [[255, 0, 0], [0; 3], [0; 3]]
    );
    assert_eq!(crate::container::check(&out, ImageType::Png), Ok(()));

    // A palette that covers every index used stays as it is, though shorter than the depth allows.
    let covered = crate::test_images::indexed_png(2, 1, png::BitDepth::Eight, vec![1, 2, 3, 4, 5, 6], &[1, 0]);
    assert_eq!(canonical(&covered, ImageType::Png, false), Ok(Canonical::default()));
}

#[test]
fn a_cut_gif_frame_is_filled_with_an_index_of_its_table_whatever_its_control_says() {
    // Two colours, frames of index 0 only, a control naming transparent index 3: past the table.
    let mut bytes = Vec::new();
    {
        let mut encoder = gif::Encoder::new(&mut bytes, 16, 8, &[0, 0, 0, 255, 255, 255]).unwrap();
        for left in [0, 8] {
            let buffer = vec![0u8; 8 * 4];
            let frame = gif::Frame {
                left,
                width: 8,
                height: 4,
                transparent: Some(3),
                buffer: buffer.into(),
                ..Default::default()
            };
            encoder.write_frame(&frame).unwrap();
        }
    }
    let c = canonical(&bytes[..bytes.len() - 4], ImageType::Gif, false).expect("repaired");
    assert!(c.dropped.contains(&"cut-data"), "{:?}", c.dropped);
    let out = c.bytes.unwrap();
    let frames = gif_frames_of(&out);
    let fill = *frames[1].4.last().unwrap();
    assert_eq!(fill, 1, "the one index of the table the frame does not use");
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let mut decoder = options.read_info(&out[..]).unwrap();
    decoder.read_next_frame().unwrap();
    assert_eq!(decoder.read_next_frame().unwrap().unwrap().transparent, Some(1), "and made transparent");
}

#[test]
fn a_webp_whose_vp8x_is_not_10_bytes_is_refused_as_libwebp_refuses_it() {
    let good = webp_with_metadata(1);
    // VP8X at byte 12: its length, then its 10 bytes; two more bytes inside it.
    let mut bad = good[..16].to_vec();
    bad.extend_from_slice(&12u32.to_le_bytes());
    bad.extend_from_slice(&good[20..30]);
    bad.extend_from_slice(&[0, 0]);
    bad.extend_from_slice(&good[30..]);
    let riff = (bad.len() - 8) as u32;
    bad[4..8].copy_from_slice(&riff.to_le_bytes());
    let err = canonical(&bad, ImageType::WebP, false).unwrap_err();
    assert!(err.0.contains("VP8X chunk is 12 bytes, not 10"), "{}", err.0);
}

/// The output ranges of a RIFF's top-level chunks of `kind`.
fn riff_chunks(webp: &[u8], kind: &[u8; 4]) -> Vec<std::ops::Range<usize>> {
    let (mut at, mut found) = (12, Vec::new());
    while at + 8 <= webp.len() {
        let len = u32::from_le_bytes(webp[at + 4..at + 8].try_into().unwrap()) as usize;
        let end = at + 8 + len + (len & 1);
        if &webp[at..at + 4] == kind {
            found.push(at..end);
        }
        at = end;
    }
    found
}

#[test]
fn an_animated_webp_loses_its_frames_from_the_first_broken_one_on() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus/conformance/webp/anim.webp");
    let whole = std::fs::read(path).unwrap();
    let frames = riff_chunks(&whole, b"ANMF");
    assert_eq!(frames.len(), 6);
    assert_eq!(canonical(&whole, ImageType::WebP, false), Ok(Canonical::default()), "every frame decodes");

    // The fifth frame's image data garbled (past its 16-byte frame header and its chunk header).
    let mut broken = whole.clone();
    let fifth = frames[4].clone();
    broken[fifth.start + 8 + 16 + 8..fifth.end - 2].fill(0xFF);
    let c = canonical(&broken, ImageType::WebP, false).expect("admitted");
    assert_eq!(c.dropped, ["broken-frames"]);
    let out = c.bytes.unwrap();
    assert_eq!(riff_chunks(&out, b"ANMF").len(), 4, "frames 1 to 4 stay");
    assert_eq!(out[8..frames[4].start], whole[8..frames[4].start], "as they were");
    assert_eq!(u32::from_le_bytes(out[4..8].try_into().unwrap()) as usize, out.len() - 8);
    let mut decoder = image_webp::WebPDecoder::new(std::io::Cursor::new(&out)).unwrap();
    assert_eq!(decoder.num_frames(), 4);
    let mut buf = vec![0; decoder.output_buffer_size().unwrap()];
    for _ in 0..4 {
        decoder.read_frame(&mut buf).expect("every frame left decodes");
    }
}
