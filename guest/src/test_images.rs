//! Small images and documents made on the fly for the unit tests, and for the end-to-end tests
//! (`tests/e2e/common` includes this file), so that each is written once.

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, RgbImage, RgbaImage};

pub fn encode(img: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, format).unwrap();
    out.into_inner()
}

/// A gradient, so encoders cannot compress it to nothing.
pub fn gradient(w: u32, h: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x * 255 / w.max(1)) as u8, (y * 255 / h.max(1)) as u8, ((x ^ y) & 0xff) as u8])
    }))
}

/// Marsaglia's xorshift32 from `seed` (not 0): pseudo-random test inputs, the same each run.
pub fn xorshift(mut seed: u32) -> impl FnMut() -> u32 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    }
}

/// Noise: incompressible, for images that must stay large after encoding.
pub fn noise(w: u32, h: u32) -> DynamicImage {
    let mut state = 0x2545_f491_u32;
    DynamicImage::ImageRgba8(RgbaImage::from_fn(w, h, |_, _| {
        let mut px = [0u8; 4];
        for c in &mut px {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            *c = state as u8;
        }
        px[3] = 255;
        image::Rgba(px)
    }))
}

pub fn png(w: u32, h: u32) -> Vec<u8> {
    encode(&gradient(w, h), ImageFormat::Png)
}

/// A palette PNG of `w`×`h` at `depth`, its `palette` (RGB triples) and its packed `rows` as
/// given, whether or not the indices stay inside the palette (the png crate does not check).
pub fn indexed_png(w: u32, h: u32, depth: png::BitDepth, palette: Vec<u8>, rows: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Indexed);
    encoder.set_depth(depth);
    encoder.set_palette(palette);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(rows).unwrap();
    writer.finish().unwrap();
    out
}

/// A `w`×`h` noise PNG cut in the middle of its image data: the gate repairs it (`cut-data`).
pub fn cut_png(w: u32, h: u32) -> Vec<u8> {
    let whole = encode(&noise(w, h), ImageFormat::Png);
    let idat = whole.windows(4).position(|k| k == b"IDAT").expect("an IDAT chunk") - 4;
    let len = u32::from_be_bytes(whole[idat..idat + 4].try_into().unwrap()) as usize;
    whole[..idat + 8 + len / 2].to_vec()
}

/// A valid PNG padded to exactly `len` bytes by a private ancillary chunk (`paDd`, which decoders
/// skip); its canonical form without the padding is `png(8, 8)`.
pub fn png_of_len(len: usize) -> Vec<u8> {
    let good = png(8, 8);
    assert!(good.len() + 12 <= len);
    png_with_chunk_after_ihdr(b"paDd", &vec![0; len - good.len() - 12])
}

/// A PNG header (signature + IHDR with a valid CRC) declaring `w`×`h`, with no pixel data.
pub fn png_header_only(w: u32, h: u32) -> Vec<u8> {
    png_header_only_with(w, h, 8, 2)
}

/// The same with the bit depth and colour type given (2 RGB, 6 RGBA, 0 grey).
pub fn png_header_only_with(w: u32, h: u32, bit_depth: u8, color_type: u8) -> Vec<u8> {
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(b"IHDR");
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[bit_depth, color_type, 0, 0, 0]);
    let crc = crc32(&ihdr);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend_from_slice(&13u32.to_be_bytes());
    out.extend_from_slice(&ihdr);
    out.extend_from_slice(&crc.to_be_bytes());
    // An empty IDAT so the header reader finds the start of the image data.
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(b"IDAT");
    out.extend_from_slice(&crc32(b"IDAT").to_be_bytes());
    out
}

/// A PNG whose chunks are all there (IHDR, an empty IDAT, IEND) but whose pixels are not.
pub fn png_declaring(w: u32, h: u32) -> Vec<u8> {
    let mut out = png_header_only(w, h);
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(b"IEND");
    out.extend_from_slice(&crc32(b"IEND").to_be_bytes());
    out
}

/// A valid PNG with one more chunk (`kind`, `data`, correct CRC) right after IHDR.
pub fn png_with_chunk_after_ihdr(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    with_chunk_after_ihdr(&png(8, 8), kind, data)
}

/// The PNG `good` with one more chunk (`kind`, `data`, correct CRC) right after IHDR.
pub fn with_chunk_after_ihdr(good: &[u8], kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let after_ihdr = 8 + 8 + 13 + 4;
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    let mut out = good[..after_ihdr].to_vec();
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32(&body).to_be_bytes());
    out.extend_from_slice(&good[after_ihdr..]);
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// A JPEG with an EXIF APP1 segment carrying `orientation`.
pub fn jpeg_with_orientation(w: u32, h: u32, orientation: u16) -> Vec<u8> {
    let jpeg = encode(&gradient(w, h), ImageFormat::Jpeg);
    // TIFF header (little endian), one IFD entry: Orientation (0x0112), SHORT, count 1.
    let mut tiff = b"II*\0\x08\0\0\0".to_vec();
    tiff.extend_from_slice(&1u16.to_le_bytes());
    tiff.extend_from_slice(&0x0112u16.to_le_bytes());
    tiff.extend_from_slice(&3u16.to_le_bytes());
    tiff.extend_from_slice(&1u32.to_le_bytes());
    tiff.extend_from_slice(&orientation.to_le_bytes());
    tiff.extend_from_slice(&[0, 0]);
    tiff.extend_from_slice(&0u32.to_le_bytes());
    let mut app1 = b"Exif\0\0".to_vec();
    app1.extend_from_slice(&tiff);
    let mut out = jpeg[..2].to_vec(); // SOI
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&((app1.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(&app1);
    out.extend_from_slice(&jpeg[2..]);
    out
}

/// A whole one-page PDF (header, catalog, page tree, page, xref table, trailer, `%%EOF`) whose
/// header line is followed by a comment of `filler` bytes, so tests can make it any size (the
/// `startxref` offset is written with leading zeros: the size grows by `filler` exactly).
pub fn pdf(filler: usize) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    if filler > 0 {
        out.push(b'%');
        out.extend(std::iter::repeat_n(b'x', filler.saturating_sub(2)));
        out.push(b'\n');
    }
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
    ];
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref:010}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    out
}

/// A PDF of `objects`' bodies (object `i + 1` is `objects[i]`; the catalog is object 1), with its
/// xref table and a trailer that names the catalog and carries `extra_trailer`. (The converters'
/// tests and the e2e tests use it; the guest built without `convert` does not.)
#[allow(dead_code)]
pub fn pdf_of_objects(objects: &[Vec<u8>], extra_trailer: &str) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R {extra_trailer}>>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1)
            .as_bytes(),
    );
    out
}

/// A PDF stream object's body: `dict`'s entries with the `/Length` of `data`, then `data`.
#[allow(dead_code)]
pub fn pdf_stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut v = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    v.extend_from_slice(data);
    v.extend_from_slice(b"\nendstream");
    v
}
