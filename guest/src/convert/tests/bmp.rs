//! The BMP layouts and ICO entries decoded here: bmpsuite's and the image crate's test files
//! (`tests/corpus/conformance/`), cut copies of them, and files written by hand.

use std::path::{Path, PathBuf};

use image::{ImageFormat, RgbaImage};

use super::*;

fn corpus(file: &str) -> Vec<u8> {
    let dir: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/conformance");
    std::fs::read(dir.join(file)).unwrap()
}

fn ours(bytes: &[u8]) -> Result<RgbaImage, String> {
    let dib = Dib::parse(&bytes[14..]).unwrap();
    assert!(dib.is_ours());
    decode_file(bytes, &dib)
}

fn by_the_crate(bytes: &[u8]) -> RgbaImage {
    image::load_from_memory_with_format(bytes, ImageFormat::Bmp).unwrap().to_rgba8()
}

/// An 8-bit RLE BMP of `width`x`height` with a grey ramp palette and `data` as its pixels.
fn rle8(width: i32, height: i32, data: &[u8]) -> Vec<u8> {
    let offset = 14 + 40 + 256 * 4;
    let mut b = b"BM".to_vec();
    b.extend_from_slice(&((offset + data.len()) as u32).to_le_bytes());
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&(offset as u32).to_le_bytes());
    b.extend_from_slice(&40u32.to_le_bytes());
    b.extend_from_slice(&width.to_le_bytes());
    b.extend_from_slice(&height.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&8u16.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&[0; 20]);
    for i in 0..=255u8 {
        b.extend_from_slice(&[i, i, i, 0]);
    }
    b.extend_from_slice(data);
    b
}

#[test]
fn rle_decodes_to_the_pixels_of_the_same_picture_uncompressed() {
    // bmpsuite draws one picture in every layout: its RLE8 copy, bottom-up and top-down, gives
    // the pixels the image crate reads from its uncompressed 8-bit copy.
    let plain = by_the_crate(&corpus("bmp/pal8v4.bmp"));
    assert_eq!(ours(&corpus("bmp/pal8rle.bmp")).unwrap(), plain);
    assert_eq!(ours(&corpus("bmp/rletopdown.bmp")).unwrap(), plain);
}

#[test]
fn corrupt_rle_is_read_as_chromium_and_pillow_read_it() {
    // badrle.bmp: runs that reach past their row's end and past the last row; both clip them.
    let image = ours(&corpus("bmp/badrle.bmp")).unwrap();
    assert_eq!(image.dimensions(), (127, 64));
    // Runs past a row's end are cut there; a pixel nothing sets is transparent.
    let runs = rle8(4, 2, &[6, 9, 0, 0, 1, 7, 0, 1]);
    let image = ours(&runs).unwrap();
    let row = |y: u32| (0..4).map(|x| image.get_pixel(x, y).0).collect::<Vec<_>>();
    assert_eq!(row(1), vec![[9, 9, 9, 255]; 4]);
    assert_eq!(row(0), vec![[7, 7, 7, 255], [0; 4], [0; 4], [0; 4]]);
}

#[test]
fn rle_cut_before_its_last_row_is_refused_in_words() {
    let whole = corpus("bmp/pal8rle.bmp");
    let e = ours(&whole[..whole.len() - whole.len() / 50]).unwrap_err();
    assert!(e.starts_with("its RLE data ends before its last row ("), "{e}");
    // An absolute run longer than the data, a delta without its bytes.
    assert!(ours(&rle8(4, 2, &[0, 4, 1, 2])).unwrap_err().contains("0 of 2 rows"));
    assert!(ours(&rle8(4, 2, &[0, 2, 1])).is_err());
    // A delta past the last row ends the bitmap.
    assert!(ours(&rle8(4, 2, &[2, 5, 0, 2, 0, 9])).is_ok());
}

#[test]
fn a_zero_bitfield_mask_gives_that_channel_zero() {
    // rgb16-880.bmp: 8 bits red, 8 green, no blue (the image crate refuses the missing mask).
    let bytes = corpus("bmp/rgb16-880.bmp");
    let image = ours(&bytes).unwrap();
    assert_eq!(image.dimensions(), (127, 64));
    assert!(image.pixels().all(|p| p.0[2] == 0 && p.0[3] == 255));
    // Red and green are the high and low bytes of each 16-bit pixel (bottom-up rows).
    let first = u16::from_le_bytes([bytes[66], bytes[67]]);
    assert_eq!(image.get_pixel(0, 63).0[..2], [(first >> 8) as u8, first as u8]);
    let e = ours(&bytes[..bytes.len() - 1]).unwrap_err();
    assert!(e.contains("short of the 16384"), "{e}");
}

#[test]
fn a_planes_field_other_than_one_is_normalised() {
    let bytes = corpus("bmp/badplanes.bmp");
    assert!(image::load_from_memory_with_format(&bytes, ImageFormat::Bmp).is_err());
    let fixed = normalised(&bytes);
    assert_eq!(fixed.len(), bytes.len());
    let image = by_the_crate(&fixed);
    assert_eq!(image.dimensions(), (127, 64));
    assert!(image.pixels().any(|p| p.0[..3] == [0; 3]) && image.pixels().any(|p| p.0[..3] == [255; 3]));
    let good = corpus("bmp/rgb24.bmp");
    assert!(matches!(normalised(&good), Cow::Borrowed(_)));
}

fn icon_entry(file: &str) -> (Vec<u8>, usize) {
    let bytes = corpus(file);
    let offset = u32::from_le_bytes(bytes[18..22].try_into().unwrap()) as usize;
    (bytes, offset)
}

/// The alpha an entry's 32-bit pixels carry (the fourth byte of each, bottom-up rows).
fn alpha_bytes(entry: &[u8], width: u32, height: u32) -> Vec<u8> {
    let mut alpha = vec![0; (width * height) as usize];
    for y in 0..height {
        for x in 0..width {
            alpha[(y * width + x) as usize] = entry[40 + (((height - 1 - y) * width + x) * 4 + 3) as usize];
        }
    }
    alpha
}

#[test]
fn a_32_bit_icon_with_alpha_keeps_its_alpha_whatever_its_mask() {
    // A mask cut short, a file cut inside its mask, a mask that says the opposite of the alpha.
    let (bytes, at) = icon_entry("ico/truncated_mask_32bpp.ico");
    let dib = Dib::parse(&bytes[at..]).unwrap();
    let image = decode_icon(&bytes[at..], &dib).unwrap();
    assert_eq!(image.dimensions(), (64, 64));
    assert_eq!(image.pixels().map(|p| p.0[3]).collect::<Vec<_>>(), alpha_bytes(&bytes[at..], 64, 64));
    for file in ["ico/bmp-32bpp-alpha.ico", "ico/bmp-32bpp-conflicting-and-mask.ico"] {
        let (bytes, at) = icon_entry(file);
        let dib = Dib::parse(&bytes[at..]).unwrap();
        let whole = decode_icon(&bytes[at..], &dib).unwrap();
        let cut = &bytes[at..bytes.len() - bytes.len() / 50];
        assert_eq!(decode_icon(cut, &dib).unwrap(), whole, "{file}");
        let (w, h) = whole.dimensions();
        assert_eq!(whole.pixels().map(|p| p.0[3]).collect::<Vec<_>>(), alpha_bytes(&bytes[at..], w, h), "{file}");
    }
}

#[test]
fn an_icon_without_alpha_takes_its_mask_and_a_cut_mask_is_refused() {
    let (bytes, at) = icon_entry("ico/bmp-24bpp-mask.ico");
    let entry = &bytes[at..];
    let dib = Dib::parse(entry).unwrap();
    let image = decode_icon(entry, &dib).unwrap();
    assert!(image.pixels().any(|p| p.0[3] == 0) && image.pixels().any(|p| p.0[3] == 255));
    // No mask at all: opaque.
    let colour_end = 40 + (dib.stride() * u64::from(dib.height / 2)) as usize;
    assert!(decode_icon(&entry[..colour_end], &dib).unwrap().pixels().all(|p| p.0[3] == 255));
    let e = decode_icon(&entry[..colour_end + 1], &dib).unwrap_err();
    assert!(e.starts_with("its AND mask is cut short (1 of"), "{e}");
}

/// An OS/2 2.x bitmap (BITMAPCOREHEADER2) of 3x2 pixels with a header of `header_size` bytes (16
/// to 64; the fields it is too short for left out), `bits` 8 (a 256-colour table of 4-byte
/// entries, index `i` being BGR `[i, 255 - i, i / 2]`) or 24, and `compression`. The OS/2 fields
/// past the first 40 bytes hold values that must change nothing.
fn os2_v2(header_size: usize, bits: u16, compression: u32) -> Vec<u8> {
    let mut header = 64u32.to_le_bytes().to_vec();
    header.extend_from_slice(&3i32.to_le_bytes());
    header.extend_from_slice(&2i32.to_le_bytes());
    header.extend_from_slice(&1u16.to_le_bytes());
    header.extend_from_slice(&bits.to_le_bytes());
    header.extend_from_slice(&compression.to_le_bytes());
    header.extend_from_slice(&[0; 16]); // image size, resolution, colours used: 0
    header.extend_from_slice(&0u32.to_le_bytes()); // colours important
    header.extend_from_slice(&[0; 2]); // units
    header.extend_from_slice(&[0; 2]); // reserved
    header.extend_from_slice(&[0; 2]); // recording: bottom-up
    header.extend_from_slice(&2u16.to_le_bytes()); // rendering: error diffusion
    header.extend_from_slice(&[7; 8]); // halftoning sizes
    header.extend_from_slice(&[0; 4]); // colour encoding: RGB
    header.extend_from_slice(&0xDEAD_BEEFu32.to_le_bytes()); // the application's identifier
    assert_eq!(header.len(), 64);
    header.truncate(header_size);
    header[..4].copy_from_slice(&(header_size as u32).to_le_bytes());
    let palette: Vec<u8> = if bits == 8 { (0..=255u8).flat_map(|i| [i, 255 - i, i / 2, 0]).collect() } else { vec![] };
    // Bottom-up rows padded to 4 bytes: indices 1 2 3 below, 4 5 6 above (or those as grey).
    let rows: Vec<u8> = [[1u8, 2, 3], [4, 5, 6]]
        .iter()
        .flat_map(|row| {
            let mut r: Vec<u8> = if bits == 8 { row.to_vec() } else { row.iter().flat_map(|&v| [v; 3]).collect() };
            r.resize(r.len().div_ceil(4) * 4, 0);
            r
        })
        .collect();
    let offset = 14 + header.len() + palette.len();
    let mut b = b"BM".to_vec();
    b.extend_from_slice(&((offset + rows.len()) as u32).to_le_bytes());
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&(offset as u32).to_le_bytes());
    b.extend(header);
    b.extend(palette);
    b.extend(rows);
    b
}

#[test]
fn an_os2_v2_bitmap_is_read_as_its_info_header_fields() {
    use crate::verdict::Dimensions;
    let colour = |i: u8| [i / 2, 255 - i, i, 255];
    let options = crate::options::Options { convert: true, ..Default::default() };
    let admit = |bytes: &[u8]| crate::image_admission::admit_image(bytes, "image/bmp", &options);
    for header_size in [64, 48, 36, 20, 16] {
        let image = by_the_crate(&normalised(&os2_v2(header_size, 8, 0)));
        assert_eq!(image.dimensions(), (3, 2), "{header_size}");
        assert_eq!(image.get_pixel(0, 0).0, colour(4), "{header_size}");
        assert_eq!(image.get_pixel(2, 1).0, colour(3), "{header_size}");
        let image = by_the_crate(&normalised(&os2_v2(header_size, 24, 0)));
        assert_eq!(image.get_pixel(1, 0).0, [5, 5, 5, 255], "{header_size}");
        let a = admit(&os2_v2(header_size, 8, 0)).unwrap_or_else(|r| panic!("{header_size}: {}", r.message));
        assert_eq!(a.dimensions, Some(Dimensions { width: 3, height: 2 }));
    }
    // RLE8 (compression 1 in OS/2 too), decoded here from the bytes as they are.
    let mut rle = os2_v2(64, 8, 1);
    let offset = u32::from_le_bytes(rle[10..14].try_into().unwrap()) as usize;
    rle.truncate(offset);
    rle.extend_from_slice(&[3, 9, 0, 0, 3, 8, 0, 1]);
    let image = ours(&rle).unwrap();
    assert_eq!((image.get_pixel(0, 1).0, image.get_pixel(2, 0).0), (colour(9), colour(8)));
    // OS/2's own compressions (3: Huffman 1D, not bitfields; 4: RLE24) are named, not misread.
    for (compression, name) in [(3, "Huffman 1D"), (4, "RLE24")] {
        let bytes = os2_v2(64, 24, compression);
        assert_eq!(Dib::parse(&bytes[14..]).unwrap().masks, None);
        let r = admit(&bytes).unwrap_err();
        assert!(r.message.contains(&format!("OS/2 2.x bitmap compressed with {name}")), "{}", r.message);
    }
}
