//! The converters themselves (the `convert` feature): files made here with the image crate's
//! encoders, and hostile ones written by hand.

use image::codecs::ico::{IcoEncoder, IcoFrame};
use image::{DynamicImage, ImageFormat, Rgba, RgbaImage};

use super::*;
use crate::options::Verify;
use crate::test_deadline::{HOSTILE, within};
use crate::test_images::{encode, gradient};
use crate::verdict::{Conversion, Data, Kind};

fn png_pixels(a: &Admitted) -> RgbaImage {
    assert_eq!(a.mime, "image/png");
    let Data::Bytes(b) = &a.data else { panic!("a conversion holds its bytes") };
    image::load_from_memory_with_format(b, ImageFormat::Png).unwrap().to_rgba8()
}

fn admitted(bytes: &[u8], mime: &str, options: &Options) -> Admitted {
    admit_image(bytes, mime, options).unwrap_or_else(|r| panic!("{mime}: {r:?}"))
}

fn refused(bytes: &[u8], mime: &str, options: &Options) -> Refusal {
    admit_image(bytes, mime, options).expect_err("expected a refusal")
}

#[test]
fn a_bmp_becomes_the_same_pixels_as_png() {
    let source = gradient(64, 48);
    let bmp = encode(&source, ImageFormat::Bmp);
    for mime in ["image/bmp", "image/x-ms-bmp"] {
        let a = admitted(&bmp, mime, &converting(Provider::Anthropic));
        assert_eq!(a.kind, Kind::Image);
        assert_eq!(a.original_size, bmp.len() as u64);
        assert_eq!(a.dimensions, Some(Dimensions { width: 64, height: 48 }));
        assert_eq!(a.original_dimensions, a.dimensions);
        assert!(a.reencoded && !a.resized);
        assert_eq!(a.converted, Some(Conversion { from: BMP_MIME, note: "decoded from BMP 64x48".into() }));
        assert_eq!(png_pixels(&a), source.to_rgba8());
    }
    // The same through the public entry point, without the gate's dispatch.
    let v = admit_converting(&bmp, "image/bmp", &converting(Provider::Anthropic)).expect("a conversion case");
    assert_eq!(v.unwrap().converted.unwrap().from, BMP_MIME);
}

#[test]
fn alpha_is_kept() {
    let source = RgbaImage::from_fn(20, 10, |x, _| Rgba([255, 0, 0, (x * 12) as u8]));
    let tiff = encode(&DynamicImage::ImageRgba8(source.clone()), ImageFormat::Tiff);
    let a = admitted(&tiff, "image/tiff", &converting(Provider::Anthropic));
    assert_eq!(png_pixels(&a), source);
    assert_eq!(a.converted.unwrap().note, "decoded from TIFF 20x10 (its first page)");
}

#[test]
fn a_16_bit_tiff_is_written_as_8_bits() {
    let source = DynamicImage::ImageRgb16(gradient(16, 16).to_rgb16());
    let tiff = encode(&source, ImageFormat::Tiff);
    let a = admitted(&tiff, "image/tiff", &converting(Provider::Anthropic));
    assert_eq!(png_pixels(&a), gradient(16, 16).to_rgba8());
}

#[test]
fn a_large_bmp_is_fitted_into_2000_square() {
    let bmp = encode(&gradient(2500, 500), ImageFormat::Bmp);
    let a = admitted(&bmp, "image/bmp", &converting(Provider::Anthropic));
    assert_eq!(a.dimensions, Some(Dimensions { width: 2000, height: 400 }));
    assert_eq!(a.original_dimensions, Some(Dimensions { width: 2500, height: 500 }));
    assert!(a.resized && a.reencoded);
    assert_eq!(a.converted.unwrap().note, "decoded from BMP 2500x500, fitted to 2000x400");
    // Without the downsampler the converted image must still fit as it is: it does (fitted).
    let plain = Options { downsample: false, ..converting(Provider::Anthropic) };
    assert!(admit_image(&bmp, "image/bmp", &plain).is_ok());
}

#[test]
fn an_icon_gives_its_largest_entry() {
    let small = RgbaImage::from_pixel(16, 16, Rgba([0, 0, 255, 255]));
    let large = RgbaImage::from_fn(48, 48, |x, y| Rgba([x as u8 * 5, y as u8 * 5, 0, 200]));
    let frames = [
        IcoFrame::as_png(small.as_raw(), 16, 16, image::ExtendedColorType::Rgba8).unwrap(),
        IcoFrame::as_png(large.as_raw(), 48, 48, image::ExtendedColorType::Rgba8).unwrap(),
    ];
    let mut ico = Vec::new();
    IcoEncoder::new(&mut ico).encode_images(&frames).unwrap();
    for mime in ["image/vnd.microsoft.icon", "image/x-icon"] {
        let a = admitted(&ico, mime, &converting(Provider::Anthropic));
        assert_eq!(png_pixels(&a), large);
        assert_eq!(a.converted.as_ref().unwrap().from, ICO_MIME);
        assert_eq!(a.converted.unwrap().note, "decoded from ICO 48x48, the largest of its 2 entries");
    }
}

#[test]
fn an_icon_cut_inside_its_largest_entry_gives_its_largest_whole_one() {
    let bmp = |side, colour| bmp_icon_entry(side, colour);
    let (small, large) = (bmp(16, [255, 0, 0, 255]), bmp(48, [0, 0, 255, 255]));
    let note = |a: &Admitted| a.converted.as_ref().unwrap().note.clone();
    // The 48² entry last, the file cut inside its colour rows: Pillow falls back to a whole
    // entry, and so does the gate, saying so.
    let ico = ico_by_hand(&[(16, 16, 32, &small), (48, 48, 32, &large)]);
    let cut = &ico[..ico.len() - large.len() / 2];
    let a = admitted(cut, "image/x-icon", &converting(Provider::Anthropic));
    assert_eq!(note(&a), "decoded from ICO 16x16, the largest whole one of its 2 entries (a larger one is cut short)");
    assert_eq!(png_pixels(&a).get_pixel(0, 0).0, [255, 0, 0, 255]);
    // With no whole entry left, the cut one is read, and refused as cut.
    let only = ico_by_hand(&[(48, 48, 32, &large)]);
    let e = admit_image(&only[..only.len() - large.len() / 2], "image/x-icon", &converting(Provider::Anthropic))
        .unwrap_err();
    assert_eq!(e.reason, Reason::Undecodable, "{}", e.message);
}

/// An icon written by hand: its directory says what `entries` say (width and height bytes, 0
/// for 256; bit count), whatever the data that follows holds.
fn ico_by_hand(entries: &[(u8, u8, u16, &[u8])]) -> Vec<u8> {
    let mut ico = vec![0, 0, 1, 0];
    ico.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    let mut offset = 6 + 16 * entries.len();
    for (width, height, bits, data) in entries {
        ico.extend_from_slice(&[*width, *height, 0, 0, 1, 0]);
        ico.extend_from_slice(&bits.to_le_bytes());
        ico.extend_from_slice(&(data.len() as u32).to_le_bytes());
        ico.extend_from_slice(&(offset as u32).to_le_bytes());
        offset += data.len();
    }
    for (.., data) in entries {
        ico.extend_from_slice(data);
    }
    ico
}

/// A 32-bit BMP icon entry of `side`² (DIB header, colour rows, an all-clear AND mask).
fn bmp_icon_entry(side: u32, colour: [u8; 4]) -> Vec<u8> {
    let mut dib = 40u32.to_le_bytes().to_vec();
    dib.extend_from_slice(&side.to_le_bytes());
    dib.extend_from_slice(&(2 * side).to_le_bytes());
    dib.extend_from_slice(&1u16.to_le_bytes());
    dib.extend_from_slice(&32u16.to_le_bytes());
    dib.extend_from_slice(&[0; 24]);
    let [r, g, b, a] = colour;
    dib.extend([b, g, r, a].repeat((side * side) as usize));
    dib.extend(vec![0; side.div_ceil(32) as usize * 4 * side as usize]);
    dib
}

#[test]
fn an_icon_gives_its_truly_largest_entry_whatever_its_directory_says() {
    let png = |side: u32, colour: [u8; 4]| {
        encode(&DynamicImage::ImageRgba8(RgbaImage::from_pixel(side, side, Rgba(colour))), ImageFormat::Png)
    };
    let (small, large) = (png(128, [255, 0, 0, 255]), png(256, [0, 0, 255, 255]));
    let note = |a: &Admitted| a.converted.as_ref().unwrap().note.clone();
    // A PNG entry's directory says bit count 0, as icon writers leave it.
    let ico = ico_by_hand(&[(128, 128, 32, &small), (0, 0, 0, &large)]);
    let a = admitted(&ico, "image/x-icon", &converting(Provider::Anthropic));
    assert_eq!(a.dimensions, Some(Dimensions { width: 256, height: 256 }));
    assert_eq!(note(&a), "decoded from ICO 256x256, the largest of its 2 entries");
    assert_eq!(png_pixels(&a).get_pixel(9, 9).0, [0, 0, 255, 255]);
    // A directory that says the 256² entry is 16².
    let ico = ico_by_hand(&[(16, 16, 32, &large), (128, 128, 32, &small)]);
    let a = admitted(&ico, "image/x-icon", &converting(Provider::Anthropic));
    assert_eq!(note(&a), "decoded from ICO 256x256, the largest of its 2 entries");
    // A BMP entry judged by its DIB header: 48² though the directory says 16² of 0 bits.
    let bmp = bmp_icon_entry(48, [0, 255, 0, 255]);
    let ico = ico_by_hand(&[(32, 32, 32, &png(32, [255, 0, 0, 255])), (16, 16, 0, &bmp)]);
    let a = admitted(&ico, "image/x-icon", &converting(Provider::Anthropic));
    assert_eq!(note(&a), "decoded from ICO 48x48, the largest of its 2 entries");
    assert_eq!(png_pixels(&a).get_pixel(0, 0).0, [0, 255, 0, 255]);
    // Of two entries the same size, the one of more bits per pixel (an RGBA PNG over a grey one).
    let grey =
        encode(&DynamicImage::ImageLuma8(image::GrayImage::from_pixel(64, 64, image::Luma([90]))), ImageFormat::Png);
    let rgba = png(64, [0, 0, 255, 128]);
    for ico in
        [ico_by_hand(&[(64, 64, 0, &grey), (64, 64, 0, &rgba)]), ico_by_hand(&[(64, 64, 0, &rgba), (64, 64, 8, &grey)])]
    {
        let a = admitted(&ico, "image/x-icon", &converting(Provider::Anthropic));
        assert_eq!(png_pixels(&a).get_pixel(0, 0).0, [0, 0, 255, 128]);
    }
}

#[test]
fn the_claimed_type_must_be_what_the_bytes_are() {
    let png = encode(&gradient(4, 4), ImageFormat::Png);
    for mime in ["image/bmp", "image/tiff", "image/x-icon", "image/svg+xml"] {
        let r = refused(&png, mime, &converting(Provider::Anthropic));
        assert_eq!(r.reason, Reason::MagicMismatch, "{mime}");
        assert!(r.message.contains("they look like image/png"), "{}", r.message);
    }
    // HTML with an inline SVG is not an SVG.
    let r = refused(b"<html><svg/></html>", "image/svg+xml", &converting(Provider::Anthropic));
    assert_eq!(r.reason, Reason::MagicMismatch);
}

#[test]
fn the_read_cap_comes_before_any_decoding() {
    let mut bmp = bmp_by_hand(8, 8);
    bmp.resize(crate::limits::RAW_CAP as usize + 1, 0);
    let plain = Options { downsample: false, ..converting(Provider::Anthropic) };
    let r = refused(&bmp, "image/bmp", &plain);
    assert_eq!((r.reason, r.limit), (Reason::RawTooLarge, Some(crate::limits::RAW_CAP)));
}

#[test]
fn a_huge_bmp_header_is_refused_before_allocation() {
    // 100000x100000 declared in 60 bytes.
    let mut bmp = bmp_by_hand(1, 1);
    bmp[18..22].copy_from_slice(&100_000u32.to_le_bytes());
    bmp[22..26].copy_from_slice(&100_000u32.to_le_bytes());
    let r = refused(&bmp, "image/bmp", &converting(Provider::Anthropic));
    assert_eq!(r.reason, Reason::DimensionsTooLarge, "{}", r.message);
    // Within the side limit but over the pixel limit.
    bmp[18..22].copy_from_slice(&20_000u32.to_le_bytes());
    bmp[22..26].copy_from_slice(&20_000u32.to_le_bytes());
    let r = refused(&bmp, "image/bmp", &converting(Provider::Anthropic));
    assert_eq!(r.reason, Reason::DimensionsTooLarge, "{}", r.message);
}

#[test]
fn truncated_and_misplaced_bmps_are_undecodable() {
    let bmp = encode(&gradient(32, 32), ImageFormat::Bmp);
    let r = refused(&bmp[..bmp.len() / 2], "image/bmp", &converting(Provider::Anthropic));
    assert_eq!(r.reason, Reason::Undecodable, "{}", r.message);
    let mut bad_offset = bmp.clone();
    bad_offset[10..14].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
    let r = refused(&bad_offset, "image/bmp", &converting(Provider::Anthropic));
    assert_eq!(r.reason, Reason::Undecodable, "{}", r.message);
}

/// A little-endian TIFF: one 8-bit grey strip of `w`x`h` at offset 8, then IFDs.
fn tiff_by_hand(w: u32, h: u32, strip_bytes: u32, extra_ifds: u32) -> Vec<u8> {
    let mut t = b"II*\0".to_vec();
    let pixels = w * h;
    let ifd_at = 8 + pixels;
    t.extend_from_slice(&ifd_at.to_le_bytes());
    t.extend((0..pixels).map(|i| (i % 256) as u8));
    let entries: [(u16, u16, u32); 8] = [
        (256, 4, w),           // width
        (257, 4, h),           // height
        (258, 3, 8),           // bits per sample
        (259, 3, 1),           // no compression
        (262, 3, 1),           // black is zero
        (273, 4, 8),           // strip offset
        (278, 4, h),           // rows per strip
        (279, 4, strip_bytes), // strip byte count
    ];
    t.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    for (tag, kind, value) in entries {
        t.extend_from_slice(&tag.to_le_bytes());
        t.extend_from_slice(&kind.to_le_bytes());
        t.extend_from_slice(&1u32.to_le_bytes());
        t.extend_from_slice(&value.to_le_bytes());
    }
    // Then a chain of empty IFDs (0 entries, a pointer to the next).
    let mut next = t.len() as u32 + 4;
    for i in 0..extra_ifds {
        t.extend_from_slice(&next.to_le_bytes());
        t.extend_from_slice(&0u16.to_le_bytes());
        next += 6;
        if i + 1 == extra_ifds {
            t.extend_from_slice(&0u32.to_le_bytes());
        }
    }
    if extra_ifds == 0 {
        t.extend_from_slice(&0u32.to_le_bytes());
    }
    t
}

/// The `tiff` crate's one-buffer decode against the image crate's decoder, on a TIFF's bytes:
/// the same pixels in the same layout, or both refuse.
fn one_buffer_decode_matches_the_image_crate(name: &str, bytes: &[u8]) -> bool {
    use image::ImageDecoder;
    if super::tiff_layouts::is_ours(bytes) {
        return false; // planar, palette, 2/4-bit, YCbCr, Group 3: never the one-buffer way
    }
    let Ok(decoder) = image::codecs::tiff::TiffDecoder::new(std::io::Cursor::new(bytes)) else { return false };
    if !super::raster::tiff_in_one_buffer(decoder.color_type(), decoder.original_color_type()) {
        return false;
    }
    let ((w, h), decoded) = (decoder.dimensions(), decoder.total_bytes());
    let theirs = DynamicImage::from_decoder(decoder);
    let ours = super::raster::decode_tiff_in_one_buffer(bytes, w, h, decoded);
    match (ours, theirs) {
        (Ok(ours), Ok(theirs)) => {
            assert_eq!(ours.color(), theirs.color(), "{name}");
            assert!(ours.as_bytes() == theirs.as_bytes(), "{name}: other pixels");
        }
        (Err(_), Err(_)) => {}
        (ours, theirs) => panic!("{name}: ours {:?}, the image crate's {:?}", ours.err(), theirs.err()),
    }
    true
}

#[test]
fn a_tiff_is_decoded_in_one_buffer_to_the_image_crates_pixels() {
    let g = gradient(37, 23);
    let layouts = [
        DynamicImage::ImageLuma8(g.to_luma8()),
        DynamicImage::ImageRgb8(g.to_rgb8()),
        DynamicImage::ImageRgba8(g.to_rgba8()),
        DynamicImage::ImageLuma16(g.to_luma16()),
        DynamicImage::ImageRgb16(g.to_rgb16()),
        DynamicImage::ImageRgba16(g.to_rgba16()),
    ];
    for image in layouts {
        let tiff = encode(&image, ImageFormat::Tiff);
        assert!(one_buffer_decode_matches_the_image_crate(&format!("{:?}", image.color()), &tiff));
    }
    // A strip shorter than the rows it holds, and one that claims 4 GB.
    for (name, t) in [("short strip", tiff_by_hand(16, 4, 32, 0)), ("4 GB strip", tiff_by_hand(16, 4, u32::MAX, 0))] {
        one_buffer_decode_matches_the_image_crate(name, &t);
    }
    // The real files (Pillow, ImageMagick): LZW, Deflate, raw, 16-bit, RGBA; CMYK and JPEG-in-TIFF
    // go the image crate's way.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/convert");
    let mut taken = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "tif") && !path.to_string_lossy().contains("hostile") {
            let bytes = std::fs::read(&path).unwrap();
            taken += usize::from(one_buffer_decode_matches_the_image_crate(&path.display().to_string(), &bytes));
        }
    }
    assert!(taken >= 5, "{taken} corpus TIFFs took the one-buffer way");
}

#[test]
fn a_planar_tiff_is_interleaved_plane_by_plane() {
    let t = planar_tiff_by_hand(5, 3, 3, 2, &[]); // RGB
    // The one-buffer way takes chunky pages only; a planar one is `tiff_layouts`'s.
    assert!(super::raster::decode_tiff_in_one_buffer(&t, 5, 3, 45).is_err());
    let a = admitted(&t, "image/tiff", &converting(Provider::Anthropic));
    assert_eq!(a.dimensions, Some(Dimensions { width: 5, height: 3 }));
    // Pixel (1, 0): R from the first plane, G from the second, B from the third (sample p of
    // pixel i is 60 * p + i + 1).
    assert_eq!(png_pixels(&a).get_pixel(1, 0).0, [2, 62, 122, 255]);
}

/// A TIFF of `stored` (written as its rows are stored) with `tags` in its IFD: the `tiff`
/// crate's encoder, uncompressed strips.
fn tiff_with_tags<C: tiff::encoder::colortype::ColorType>(
    (width, height): (u32, u32),
    stored: &[C::Inner],
    tags: &[(tiff::tags::Tag, u16)],
) -> Vec<u8>
where
    [C::Inner]: tiff::encoder::TiffValue,
{
    let mut out = std::io::Cursor::new(Vec::new());
    let mut encoder = tiff::encoder::TiffEncoder::new(&mut out).unwrap();
    let mut image = encoder.new_image::<C>(width, height).unwrap();
    for &(tag, value) in tags {
        image.encoder().write_tag(tag, value).unwrap();
    }
    image.write_data(stored).unwrap();
    out.into_inner()
}

#[test]
fn a_tiff_is_turned_upright_as_its_orientation_tag_says() {
    use tiff::encoder::colortype::{Gray8, GrayI8, RGB8};
    use tiff::tags::Tag;
    // 3x2 stored; pixel (x, y) is grey 10 * y + x + 1. Where the stored (0, 0) and (1, 0) land
    // upright, for each EXIF orientation (TIFF's are the same eight), on a page of `w`x`h`.
    let places = |orientation: u16, (w, h): (u32, u32)| match orientation {
        1 => [(0, 0), (1, 0)],
        2 => [(w - 1, 0), (w - 2, 0)],
        3 => [(w - 1, h - 1), (w - 2, h - 1)],
        4 => [(0, h - 1), (1, h - 1)],
        5 => [(0, 0), (0, 1)],
        6 => [(w - 1, 0), (w - 1, 1)],
        7 => [(w - 1, h - 1), (w - 1, h - 2)],
        _ => [(0, h - 1), (0, h - 2)],
    };
    let grey: Vec<u8> = (0..2).flat_map(|y| (0..3).map(move |x| 10 * y + x + 1)).collect();
    let rgb: Vec<u8> = grey.iter().flat_map(|&v| [v, v, v]).collect();
    let signed: Vec<i8> = grey.iter().map(|&v| v as i8).collect();
    for orientation in 1..=8u16 {
        let tags = [(Tag::Orientation, orientation)];
        let upright = if orientation >= 5 { (2, 3) } else { (3, 2) };
        // RGB (the one-buffer way), signed grey (`tiff_layouts`).
        for tiff in [tiff_with_tags::<RGB8>((3, 2), &rgb, &tags), tiff_with_tags::<GrayI8>((3, 2), &signed, &tags)] {
            let a = admitted(&tiff, "image/tiff", &converting(Provider::Anthropic));
            let dimensions = Some(Dimensions { width: upright.0, height: upright.1 });
            assert_eq!((a.dimensions, a.original_dimensions), (dimensions, dimensions), "orientation {orientation}");
            let note = &a.converted.as_ref().unwrap().note;
            let (w, h) = upright;
            assert!(note.starts_with(&format!("decoded from TIFF {w}x{h} (its first page)")), "{note}");
            assert_eq!(note.contains("turned upright"), orientation != 1, "{note}");
            let pixels = png_pixels(&a);
            let [first, second] = places(orientation, upright);
            assert_eq!(pixels.get_pixel(first.0, first.1).0[..3], [1; 3], "orientation {orientation}");
            assert_eq!(pixels.get_pixel(second.0, second.1).0[..3], [2; 3], "orientation {orientation}");
        }
    }
    // A page fitted strip by strip, then turned: 2400x10 stored, 10x2400 upright, fitted 8x2000.
    let long: Vec<u8> = (0..2400 * 10).map(|i| (i % 2400 / 10) as u8).collect();
    let tiff = tiff_with_tags::<Gray8>((2400, 10), &long, &[(Tag::Orientation, 8)]);
    let a = admitted(&tiff, "image/tiff", &converting(Provider::Anthropic));
    assert_eq!(a.original_dimensions, Some(Dimensions { width: 10, height: 2400 }));
    assert_eq!(a.dimensions, Some(Dimensions { width: 8, height: 2000 }));
    // Orientation 8: the stored row runs up the left column, so its start is at the bottom.
    let pixels = png_pixels(&a);
    assert!(pixels.get_pixel(0, 1999).0[0] < 5 && pixels.get_pixel(0, 0).0[0] > 230);
}

#[test]
fn a_tiff_whose_ifds_form_a_cycle_is_read_to_its_first_page() {
    // The first IFD's next-IFD offset points at itself; then a second IFD points back at the
    // first. The page is the first IFD's either way.
    let ifd = 8 + 64u32;
    for extra_ifds in [0, 1] {
        let mut t = tiff_by_hand(16, 4, 64, extra_ifds);
        let end = t.len();
        t[end - 4..].copy_from_slice(&ifd.to_le_bytes());
        let a = admitted(&t, "image/tiff", &converting(Provider::Anthropic));
        assert_eq!(a.dimensions, Some(Dimensions { width: 16, height: 4 }), "{extra_ifds} more IFDs");
        assert_eq!(png_pixels(&a).get_pixel(5, 1).0, [21, 21, 21, 255]);
    }
}

/// Grey and alpha, 8 bits each (SamplesPerPixel 2, ExtraSamples unassociated alpha), as Pillow
/// writes mode `LA`.
struct GreyAlpha8;

impl tiff::encoder::colortype::ColorType for GreyAlpha8 {
    type Inner = u8;
    const TIFF_VALUE: tiff::tags::PhotometricInterpretation = tiff::tags::PhotometricInterpretation::BlackIsZero;
    const BITS_PER_SAMPLE: &'static [u16] = &[8, 8];
    const SAMPLE_FORMAT: &'static [tiff::tags::SampleFormat] =
        &[tiff::tags::SampleFormat::Uint, tiff::tags::SampleFormat::Uint];

    fn horizontal_predict(row: &[u8], result: &mut Vec<u8>) {
        result.extend(row.iter().enumerate().map(|(i, &v)| if i < 2 { v } else { v.wrapping_sub(row[i - 2]) }));
    }
}

#[test]
fn an_8_bit_grey_and_alpha_tiff_converts_whatever_its_compression() {
    use tiff::encoder::{Compression, DeflateLevel, TiffEncoder};
    use tiff::tags::Predictor;
    let (w, h) = (7u32, 5u32);
    let stored: Vec<u8> = (0..w * h).flat_map(|i| [(i * 7) as u8, (255 - i * 3) as u8]).collect();
    let expected = RgbaImage::from_fn(w, h, |x, y| {
        let i = y * w + x;
        Rgba([(i * 7) as u8, (i * 7) as u8, (i * 7) as u8, (255 - i * 3) as u8])
    });
    let deflate = Compression::Deflate(DeflateLevel::Balanced);
    for (name, compression, predictor) in [
        ("Deflate", deflate, Predictor::None),
        ("Deflate", deflate, Predictor::Horizontal),
        ("LZW", Compression::Lzw, Predictor::None),
        ("uncompressed", Compression::Uncompressed, Predictor::None),
    ] {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut encoder = TiffEncoder::new(&mut out).unwrap().with_compression(compression).with_predictor(predictor);
        let mut image = encoder.new_image::<GreyAlpha8>(w, h).unwrap();
        image.encoder().write_tag(tiff::tags::Tag::ExtraSamples, 2u16).unwrap();
        image.write_data(&stored).unwrap();
        let tiff = out.into_inner();
        let a = admit_image(&tiff, "image/tiff", &converting(Provider::Anthropic))
            .unwrap_or_else(|r| panic!("{name}, {predictor:?}: {}", r.message));
        assert_eq!(png_pixels(&a), expected, "{name}, {predictor:?}");
    }
}

/// A planar TIFF of `spp` 8-bit planes (one strip each), uncompressed, with `photometric` and
/// `extra` as its ExtraSamples; sample `p` of pixel `i` (in row order) is `60 * p + i + 1`.
fn planar_tiff_by_hand(w: u32, h: u32, spp: u32, photometric: u32, extra: &[u16]) -> Vec<u8> {
    let plane = w * h;
    // A value of up to 4 bytes is held in its entry, a longer one after the header.
    let inline = |v: &[u16]| u32::from(v[0]) | v.get(1).map_or(0, |&x| u32::from(x) << 16);
    let mut t = b"II*\0".to_vec();
    let bits_at = 8u32;
    let offsets_at = bits_at + 2 * spp;
    let counts_at = offsets_at + 4 * spp;
    let extra_at = counts_at + 4 * spp;
    let data_at = extra_at + 2 * extra.len() as u32;
    t.extend_from_slice(&(data_at + spp * plane).to_le_bytes());
    t.extend((0..spp).flat_map(|_| 8u16.to_le_bytes()));
    t.extend((0..spp).flat_map(|p| (data_at + p * plane).to_le_bytes()));
    t.extend((0..spp).flat_map(|_| plane.to_le_bytes()));
    t.extend(extra.iter().flat_map(|e| e.to_le_bytes()));
    t.extend((0..spp * plane).map(|i| (i / plane * 60 + i % plane + 1) as u8));
    let bits = if spp <= 2 { inline(&vec![8; spp as usize]) } else { bits_at };
    let mut entries: Vec<(u16, u16, u32, u32)> = vec![
        (256, 4, 1, w),
        (257, 4, 1, h),
        (258, 3, spp, bits),
        (259, 3, 1, 1),
        (262, 3, 1, photometric),
        (273, 4, spp, offsets_at),
        (277, 3, 1, spp),
        (278, 4, 1, h),
        (279, 4, spp, counts_at),
        (284, 3, 1, 2), // planar
    ];
    if !extra.is_empty() {
        entries.push((338, 3, extra.len() as u32, if extra.len() <= 2 { inline(extra) } else { extra_at }));
    }
    t.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    for (tag, kind, count, value) in entries {
        t.extend_from_slice(&tag.to_le_bytes());
        t.extend_from_slice(&kind.to_le_bytes());
        t.extend_from_slice(&count.to_le_bytes());
        t.extend_from_slice(&value.to_le_bytes());
    }
    t.extend_from_slice(&0u32.to_le_bytes());
    t
}

/// Grey and two extra samples, 8 bits each.
struct GreyAndTwoExtra8;

impl tiff::encoder::colortype::ColorType for GreyAndTwoExtra8 {
    type Inner = u8;
    const TIFF_VALUE: tiff::tags::PhotometricInterpretation = tiff::tags::PhotometricInterpretation::BlackIsZero;
    const BITS_PER_SAMPLE: &'static [u16] = &[8, 8, 8];
    const SAMPLE_FORMAT: &'static [tiff::tags::SampleFormat] = &[tiff::tags::SampleFormat::Uint; 3];

    fn horizontal_predict(row: &[u8], result: &mut Vec<u8>) {
        result.extend_from_slice(row);
    }
}

#[test]
fn grey_with_extra_samples_keeps_its_alpha_and_drops_what_is_unspecified() {
    use tiff::encoder::TiffEncoder;
    use tiff::encoder::colortype::ColorType;
    use tiff::tags::Tag;
    /// Chunky: pixel `i`'s sample `s` is `60 * s + i + 1`, as the planar pages have them.
    fn chunky<C: ColorType<Inner = u8>>(extra: &[u16]) -> Vec<u8> {
        let spp = C::BITS_PER_SAMPLE.len() as u32;
        let stored: Vec<u8> = (0..6).flat_map(|i| (0..spp).map(move |s| (60 * s + i + 1) as u8)).collect();
        let mut out = std::io::Cursor::new(Vec::new());
        let mut encoder = TiffEncoder::new(&mut out).unwrap();
        let mut image = encoder.new_image::<C>(3, 2).unwrap();
        if !extra.is_empty() {
            image.encoder().write_tag(Tag::ExtraSamples, extra).unwrap();
        }
        image.write_data(&stored).unwrap();
        out.into_inner()
    }
    // Pixel 4 is (1, 1): grey 5, alpha (the second sample) 65, a third sample 125.
    let cases: [(&str, Vec<u8>, [u8; 4]); 7] = [
        ("grey, alpha", chunky::<GreyAlpha8>(&[2]), [5, 5, 5, 65]),
        ("grey, alpha (no ExtraSamples)", chunky::<GreyAlpha8>(&[]), [5, 5, 5, 65]),
        ("grey, unspecified", chunky::<GreyAlpha8>(&[0]), [5, 5, 5, 255]),
        ("grey, alpha, unspecified", chunky::<GreyAndTwoExtra8>(&[2, 0]), [5, 5, 5, 65]),
        ("planar grey, alpha", planar_tiff_by_hand(3, 2, 2, 1, &[2]), [5, 5, 5, 65]),
        ("planar grey, alpha, unspecified", planar_tiff_by_hand(3, 2, 3, 1, &[2, 0]), [5, 5, 5, 65]),
        ("planar RGB, alpha, unspecified", planar_tiff_by_hand(3, 2, 5, 2, &[2, 0]), [5, 65, 125, 185]),
    ];
    for (name, tiff, pixel) in cases {
        let a = admit_image(&tiff, "image/tiff", &converting(Provider::Anthropic))
            .unwrap_or_else(|r| panic!("{name}: {}", r.message));
        assert_eq!(png_pixels(&a).get_pixel(1, 1).0, pixel, "{name}");
    }
}

#[test]
fn a_hand_made_tiff_converts() {
    let t = tiff_by_hand(16, 4, 64, 0);
    let a = admitted(&t, "image/tiff", &converting(Provider::Anthropic));
    assert_eq!(a.dimensions, Some(Dimensions { width: 16, height: 4 }));
}

#[test]
fn a_tiff_with_a_million_ifds_is_judged_by_its_first() {
    let t = tiff_by_hand(16, 4, 64, 1_000_000);
    assert!(t.len() > 6_000_000);
    let a = admitted(&t, "image/tiff", &converting(Provider::Anthropic));
    assert_eq!(a.dimensions, Some(Dimensions { width: 16, height: 4 }));
}

#[test]
fn hostile_tiffs_are_refused() {
    within(HOSTILE, "hostile_tiffs_are_refused", hostile_tiffs_are_refused_body)
}

fn hostile_tiffs_are_refused_body() {
    // A strip that claims 4 GB in a small file.
    let t = tiff_by_hand(16, 4, u32::MAX, 0);
    let r = refused(&t, "image/tiff", &converting(Provider::Anthropic));
    assert!(matches!(r.reason, Reason::Undecodable | Reason::DimensionsTooLarge), "{r:?}");
    // Dimensions over the decoder's limits (and a strip to match), declared in a few bytes.
    let mut huge = tiff_by_hand(16, 4, 64, 0);
    let at = 8 + 64 + 2;
    huge[at + 8..at + 12].copy_from_slice(&50_000u32.to_le_bytes());
    huge[at + 20..at + 24].copy_from_slice(&50_000u32.to_le_bytes());
    huge[at + 80..at + 84].copy_from_slice(&50_000u32.to_le_bytes());
    huge[at + 92..at + 96].copy_from_slice(&2_500_000_000u32.to_le_bytes());
    let r = refused(&huge, "image/tiff", &converting(Provider::Anthropic));
    assert_eq!(r.reason, Reason::DimensionsTooLarge, "{}", r.message);
    // Cut short.
    let t = tiff_by_hand(16, 4, 64, 0);
    let r = refused(&t[..40], "image/tiff", &converting(Provider::Anthropic));
    assert_eq!(r.reason, Reason::Undecodable, "{}", r.message);
    // An IFD offset past the end.
    let mut lost = t.clone();
    lost[4..8].copy_from_slice(&0x00ff_ffffu32.to_le_bytes());
    let r = refused(&lost, "image/tiff", &converting(Provider::Anthropic));
    assert_eq!(r.reason, Reason::Undecodable, "{}", r.message);
}

#[test]
fn hostile_icons_are_refused() {
    within(HOSTILE, "hostile_icons_are_refused", hostile_icons_are_refused_body)
}

fn hostile_icons_are_refused_body() {
    // Icons carry 32-bit PNGs (the image crate refuses others, as Windows does).
    let png = encode(&DynamicImage::ImageRgba8(gradient(16, 16).to_rgba8()), ImageFormat::Png);
    let mut ico = vec![0, 0, 1, 0, 1, 0];
    ico.extend_from_slice(&[16, 16, 0, 0, 1, 0, 32, 0]);
    ico.extend_from_slice(&(png.len() as u32).to_le_bytes());
    ico.extend_from_slice(&22u32.to_le_bytes());
    ico.extend_from_slice(&png);
    admitted(&ico, "image/x-icon", &converting(Provider::Anthropic));
    // The entry points outside the file.
    let mut outside = ico.clone();
    outside[18..22].copy_from_slice(&0x0100_0000u32.to_le_bytes());
    let r = refused(&outside, "image/x-icon", &converting(Provider::Anthropic));
    assert_eq!(r.reason, Reason::Undecodable, "{}", r.message);
    // The entry's size runs past the end, but the PNG it holds is whole: read to its end, no
    // further (nothing is allocated for the declared size).
    let mut long = ico.clone();
    long[14..18].copy_from_slice(&0x0100_0000u32.to_le_bytes());
    assert_eq!(
        admitted(&long, "image/x-icon", &converting(Provider::Anthropic)).dimensions,
        Some(Dimensions { width: 16, height: 16 })
    );
    // ... and a PNG cut short inside it is refused.
    let r = refused(&long[..long.len() - 30], "image/x-icon", &converting(Provider::Anthropic));
    assert_eq!(r.reason, Reason::Undecodable, "{}", r.message);
    // The PNG inside declares 100000x100000.
    let mut bomb = ico.clone();
    bomb[22 + 16..22 + 20].copy_from_slice(&100_000u32.to_be_bytes());
    bomb[22 + 20..22 + 24].copy_from_slice(&100_000u32.to_be_bytes());
    let r = refused(&bomb, "image/x-icon", &converting(Provider::Anthropic));
    assert!(matches!(r.reason, Reason::DimensionsTooLarge | Reason::Undecodable), "{r:?}");
    // Cut inside its directory.
    let r = refused(&ico[..23], "image/x-icon", &converting(Provider::Anthropic));
    assert_eq!(r.reason, Reason::Undecodable, "{}", r.message);
}

/// Three frames on a 20x10 logical screen; the first covers only its right half (at x = 10).
fn animated_gif() -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = gif::Encoder::new(&mut out, 20, 10, &[]).unwrap();
        for (i, colour) in [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255]].into_iter().enumerate() {
            let width = if i == 0 { 10 } else { 20 };
            let mut rgba: Vec<u8> = colour.iter().copied().cycle().take(width * 10 * 4).collect();
            let mut frame = gif::Frame::from_rgba(width as u16, 10, &mut rgba);
            frame.left = if i == 0 { 10 } else { 0 };
            frame.delay = 10;
            encoder.write_frame(&frame).unwrap();
        }
    }
    out
}

#[test]
fn an_animated_gif_becomes_its_first_frame_for_openai() {
    let gif = animated_gif();
    // Without convert: refused as always.
    let r = refused(&gif, "image/gif", &Options { provider: Provider::OpenAi, ..Options::default() });
    assert_eq!(r.reason, Reason::MimeUnsupported);
    let a = admitted(&gif, "image/gif", &converting(Provider::OpenAi));
    let c = a.converted.clone().unwrap();
    assert_eq!(c.from, GIF_MIME);
    assert!(c.note.starts_with("the first of 3 frames"), "{}", c.note);
    let pixels = png_pixels(&a);
    assert_eq!(pixels.dimensions(), (20, 10), "the logical screen, not the frame");
    assert_eq!(pixels.get_pixel(15, 5), &Rgba([255, 0, 0, 255]), "the first frame, where it is drawn");
    assert_eq!(pixels.get_pixel(3, 5)[3], 0, "transparent where the first frame does not reach");
    // Anthropic takes animation: the GIF passes as it is.
    let a = admitted(&gif, "image/gif", &converting(Provider::Anthropic));
    assert_eq!((a.mime, a.data, a.converted), ("image/gif", Data::Unchanged, None));
}

#[test]
fn a_still_gif_is_converted_only_where_gif_is_refused() {
    let gif = encode(&gradient(8, 8), ImageFormat::Gif);
    let a = admitted(&gif, "image/gif", &converting(Provider::OpenAi));
    assert_eq!(a.converted, None);
    let a = admitted(&gif, "image/gif", &converting(Provider::Gemini));
    assert_eq!(a.mime, "image/png");
    assert!(a.converted.unwrap().note.contains("gemini takes no GIF"));
}

#[test]
fn a_cut_gif_is_undecodable() {
    let gif = animated_gif();
    let r = refused(&gif[..20], "image/gif", &converting(Provider::OpenAi));
    assert_eq!(r.reason, Reason::Undecodable, "{}", r.message);
}

#[test]
fn the_budget_bounds_the_decoding() {
    let bmp = encode(&gradient(100, 100), ImageFormat::Bmp);
    let mut budget = Budget { pixels: 9_999 };
    let r =
        admit_converting_within(&bmp, "image/bmp", &converting(Provider::Anthropic), &mut budget).unwrap().unwrap_err();
    assert_eq!(r.reason, Reason::DimensionsTooLarge);
    assert_eq!(budget.pixels, 9_999, "nothing decoded, nothing charged");
}

#[test]
fn a_refusal_after_conversion_names_the_input() {
    // No downsampler, and a request's side rule the converted image is over.
    let bmp = encode(&gradient(200, 100), ImageFormat::Bmp);
    let side_rule = Some(crate::options::SideRule { max_side: 100, why: "in this test" });
    let plain = Options { downsample: false, verify: Verify::Header, side_rule, ..converting(Provider::Anthropic) };
    let r = refused(&bmp, "image/bmp", &plain);
    assert_eq!((r.reason, r.raw_bytes), (Reason::DimensionsTooLarge, bmp.len() as u64));
    assert!(
        r.message.starts_with("converted from image/bmp (decoded from BMP 200x100), then refused"),
        "{}",
        r.message
    );
}

#[test]
fn blank_means_every_pixel_white() {
    assert!(raster::is_blank(&RgbaImage::from_pixel(4, 4, Rgba([255; 4]))));
    let mut one = RgbaImage::from_pixel(4, 4, Rgba([255; 4]));
    one.put_pixel(3, 3, Rgba([0, 0, 0, 255]));
    assert!(!raster::is_blank(&one));
    // One colour that is not the ground: a page of one pixel shows it.
    assert!(!raster::is_blank(&RgbaImage::from_pixel(1, 1, Rgba([200, 30, 40, 255]))));
}

#[test]
fn the_feature_build_lists_what_it_converts() {
    const { assert!(AVAILABLE) };
    assert_eq!(convertible_types(), &[SVG_MIME, BMP_MIME, TIFF_MIME, ICO_MIME, GIF_MIME, PDF_MIME]);
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn a_tool_result_converts_its_blocks_and_reports_them() {
    let bmp = encode(&gradient(30, 20), ImageFormat::Bmp);
    let content = serde_json::json!([
        {"type": "image", "data": b64(&bmp), "mimeType": "image/bmp"},
        {"type": "image", "data": b64(&bmp[..40]), "mimeType": "image/x-ms-bmp"},
        {"type": "text", "text": "kept"}
    ])
    .to_string();
    // Without convert: both refused as before, nothing reported.
    let plain = crate::walks::tool_result::admit_tool_result("t", &content, &Options::default());
    assert_eq!(plain.refused.len(), 2);
    assert!(plain.conversions.is_empty());

    let out = crate::walks::tool_result::admit_tool_result("t", &content, &converting(Provider::Anthropic));
    assert_eq!(out.conversions.len(), 1);
    let c = &out.conversions[0];
    assert_eq!((c.path.as_str(), c.from.as_str(), c.to.as_str()), ("/0", BMP_MIME, "image/png"));
    assert_eq!(c.note, "decoded from BMP 30x20");
    // The bad neighbour is refused in its slot; the good one is not sunk by it.
    assert_eq!(out.refused.len(), 1);
    assert_eq!((out.refused[0].path.as_str(), out.refused[0].reason), ("/1", Reason::Undecodable));
    let v: serde_json::Value = serde_json::from_str(&out.content.unwrap()).unwrap();
    assert_eq!(v[0]["mimeType"], "image/png");
    assert_eq!(v[1]["type"], "text");
    assert_eq!(v[2]["text"], "kept");
}

#[test]
fn a_request_converts_its_blocks_and_says_so() {
    let tiff = encode(&gradient(40, 30), ImageFormat::Tiff);
    let anthropic = serde_json::json!({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/tiff", "data": b64(&tiff)}}
    ]}]})
    .to_string();
    let a = crate::walks::request::admit_request(
        crate::profile::Api::Anthropic,
        &anthropic,
        &converting(Provider::Anthropic),
    )
    .unwrap();
    assert_eq!(a.conversions.len(), 1);
    assert_eq!(a.conversions[0].path, "/messages/0/content/0");
    let change = &a.changes[0];
    assert_eq!(change.before.mime.as_deref(), Some(TIFF_MIME));
    assert_eq!(change.after.as_ref().unwrap().mime.as_deref(), Some("image/png"));
    assert!(
        change.message.starts_with("converted from image/tiff to image/png: decoded from TIFF 40x30"),
        "{}",
        change.message
    );
    let v: serde_json::Value = serde_json::from_str(&a.request.unwrap()).unwrap();
    assert_eq!(v["messages"][0]["content"][0]["source"]["media_type"], "image/png");

    let bmp = encode(&gradient(8, 8), ImageFormat::Bmp);
    let openai = serde_json::json!({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": format!("data:image/bmp;base64,{}", b64(&bmp))}}
    ]}]})
    .to_string();
    let a = crate::walks::request::admit_request(crate::profile::Api::OpenAi, &openai, &converting(Provider::OpenAi))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&a.request.unwrap()).unwrap();
    assert!(v["messages"][0]["content"][0]["image_url"]["url"].as_str().unwrap().starts_with("data:image/png;base64,"));
    assert_eq!(a.conversions[0].from, BMP_MIME);
    // Without convert the block is refused, as before.
    let a = crate::walks::request::admit_request(crate::profile::Api::OpenAi, &openai, &Options::default()).unwrap();
    assert!(a.conversions.is_empty());
    assert_eq!(a.changes[0].reason, Some(Reason::MimeUnsupported));
}

/// A 2400×1600 RGB TIFF (the image crate's encoder: uncompressed strips) of an upscaled corpus photo.
fn large_tiff() -> (Vec<u8>, DynamicImage) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/photos/kodim23.png");
    let photo = image::open(path).expect("tests/corpus/photos/kodim23.png");
    let big = DynamicImage::ImageRgb8(photo.resize_exact(2400, 1600, image::imageops::FilterType::Triangle).to_rgb8());
    (crate::test_images::encode(&big, image::ImageFormat::Tiff), big)
}

/// A TIFF fitted strip by strip is the whole page fitted (fast_image_resize on the whole decode,
/// what the converter did before): ≥ 50 dB PSNR, the bar for this change, and it holds less than
/// the page: the fitted image and a window of rows, not the 11.5 MB decode.
#[test]
fn a_tiff_fitted_by_strips_matches_the_whole_page_fitted() {
    use fast_image_resize::{FilterType, ResizeAlg, ResizeOptions, Resizer};
    let (tiff, big) = large_tiff();
    let decoded = 2400 * 1600 * 3;
    let (fitted, peak) = crate::alloc_meter::peak_during(|| {
        super::raster::tiff_fitted_by_strips(&tiff, 2400, 1600, decoded).unwrap().expect("8-bit RGB strips")
    });
    let mut whole = DynamicImage::new(2000, 1333, big.color());
    let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3));
    Resizer::new().resize(&big, &mut whole, &options).unwrap();
    let (a, b) = (fitted.as_bytes(), whole.as_bytes());
    assert_eq!(a.len(), b.len());
    let mse = a.iter().zip(b).map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2)).sum::<f64>() / a.len() as f64;
    let db = 10.0 * (255.0f64.powi(2) / mse).log10();
    assert!(db >= 50.0, "{db:.1} dB");
    assert!(peak < a.len() + decoded as usize / 2, "held {peak} bytes (fitted image {}, page {decoded})", a.len());
}

/// A TIFF cut inside its strips fails strip by strip as it fails whole.
#[test]
fn a_cut_tiff_fails_by_strips() {
    let (tiff, _) = large_tiff();
    let cut = &tiff[..tiff.len() / 2];
    let decoded = 2400 * 1600 * 3;
    assert!(super::raster::tiff_fitted_by_strips(cut, 2400, 1600, decoded).is_err());
}

/// A conversion is admitted as the plain gate admits the PNG it writes (same verdict, same bytes):
/// the gate takes the pixels the PNG was written from instead of decoding it, and over the limit
/// does not write that PNG a second time, so it holds less.
#[test]
fn a_conversion_is_admitted_as_the_plain_gate_admits_its_png() {
    use crate::gate::downsample::{encode_png_fast, resize_to_fit};
    // The large TIFF with grain (a fixed pseudo-random walk), so that its fitted PNG is over
    // Anthropic's 5 MiB of base64 and the ladder goes on to JPEG.
    let (_, big) = large_tiff();
    let mut grainy = big.to_rgb8();
    let mut state = 0x9e37_79b9_u32;
    for v in grainy.iter_mut() {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        *v = v.saturating_add((state >> 27) as u8);
    }
    let tiff = encode(&DynamicImage::ImageRgb8(grainy), ImageFormat::Tiff);
    let small = encode(&gradient(192, 128), ImageFormat::Tiff);
    for (input, over_the_limit) in [(&tiff, true), (&small, false)] {
        let options = Options { convert: true, ..Options::default() };
        let made = || {
            let mut budget = Budget::UNLIMITED;
            super::raster::decode(input, Source::Tiff, &mut budget).unwrap()
        };
        let raw = input.len() as u64;
        let ((png, plain), before) = crate::alloc_meter::peak_during(|| {
            let png = encode_png_fast(&resize_to_fit(made().image, FIT_SIDE)).unwrap();
            let plain = Options { convert: false, ..options };
            let mut budget = Budget::UNLIMITED;
            let verdict = crate::gate::image::admit_image_within(&png, "image/png", &plain, &mut budget);
            (png, verdict.unwrap())
        });
        let (ours, after) = crate::alloc_meter::peak_during(|| {
            let mut budget = Budget::UNLIMITED;
            super::raster::admit_made(made(), raw, &options, &mut budget).unwrap()
        });
        let bytes = |a: &Admitted| match &a.data {
            Data::Bytes(b) => b.clone(),
            _ => png.clone(),
        };
        assert_eq!((ours.mime, ours.dimensions), (plain.mime, plain.dimensions));
        assert!(bytes(&ours) == bytes(&plain), "the admitted bytes differ");
        assert_eq!(ours.mime != "image/png", over_the_limit, "{}", ours.mime);
        eprintln!("{} bytes in: held {before} bytes through the plain gate, {after} now", input.len());
        if over_the_limit {
            // Not held again: the PNG's decode (the fitted pixels). The plain gate no longer writes
            // a second fast PNG either (its row sample predicts no PNG fits), and the two peaks
            // come out within the conversion's note (23.7 MB, 72 bytes apart): the conversion
            // holds no more than the plain gate but its few words.
            assert!(after <= before + 1024, "held {after} bytes, {before} before");
        }
    }
}
