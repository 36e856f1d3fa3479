//! The layout fixtures (`tests/corpus/convert/layout-*`, made by real tools: libtiff-tools,
//! ImageMagick, Pillow, img2pdf, Ghostscript): every one converts, and its pixels match the
//! independent reference beside it (Pillow with libtiff for TIFF and ICO, pdftoppm for PDF pages).
//!
//! The floors: 40 dB for decoded images (lossless layouts come out identical; JPEG-in-TIFF differs
//! only by the IDCT), 30 dB for PDF pages (two independent renderers scale an image with different
//! filters: pdftoppm and Ghostscript come 30-34 dB apart on these pages).

use std::path::{Path, PathBuf};

use image::RgbaImage;

use super::*;
use crate::verdict::Data;

const IMAGE_FLOOR_DB: f64 = 40.0;
const PAGE_FLOOR_DB: f64 = 30.0;
/// Old-style JPEG TIFFs: lossy, and Pillow's reading (libtiff's RGBA reader) repeats each chroma
/// sample over its 2x2 block where the gate's JPEG decoder interpolates (39.6 and 43.5 dB).
const OLD_JPEG_FLOOR_DB: f64 = 38.0;
const OLD_JPEG_TIFFS: [&str; 2] = ["smallliz", "zackthecat"];

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/convert")
}

/// RGB composited over white, PSNR over the common area (renderers' page sizes differ by 1 px);
/// `tests/corpus/convert/make.py`'s definition.
fn psnr(a: &RgbaImage, b: &RgbaImage) -> f64 {
    let (w, h) = (a.width().min(b.width()), a.height().min(b.height()));
    let flat = |p: &image::Rgba<u8>, c: usize| {
        let alpha = f64::from(p.0[3]) / 255.0;
        f64::from(p.0[c]) * alpha + 255.0 * (1.0 - alpha)
    };
    let mut sum = 0.0;
    for y in 0..h {
        for x in 0..w {
            let (p, q) = (a.get_pixel(x, y), b.get_pixel(x, y));
            for c in 0..3 {
                sum += (flat(p, c) - flat(q, c)).powi(2);
            }
        }
    }
    let mse = sum / f64::from(w * h * 3);
    if mse == 0.0 { 100.0 } else { 10.0 * (255.0f64.powi(2) / mse).log10() }
}

fn png_of(a: &crate::verdict::Admitted) -> RgbaImage {
    let Data::Bytes(b) = &a.data else { panic!("a conversion holds its bytes") };
    image::load_from_memory(b).unwrap().to_rgba8()
}

fn layout_entries() -> Vec<serde_json::Value> {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(corpus().join("manifest.json")).unwrap()).unwrap();
    let files = manifest["files"].as_array().unwrap();
    files.iter().filter(|f| f["file"].as_str().unwrap().starts_with("layout-")).cloned().collect()
}

fn reference(entry: &serde_json::Value) -> RgbaImage {
    let path = entry["references"][0]["path"].as_str().unwrap();
    image::open(corpus().join(path)).unwrap().to_rgba8()
}

#[test]
fn every_tiff_and_icon_layout_converts_to_the_references_pixels() {
    let mut seen = 0;
    for entry in layout_entries().iter().filter(|e| e["format"] != "pdf") {
        let file = entry["file"].as_str().unwrap();
        let bytes = std::fs::read(corpus().join(file)).unwrap();
        let options = Options { provider: Provider::Anthropic, convert: true, ..Options::default() };
        let admitted = admit_image(&bytes, entry["mime"].as_str().unwrap(), &options)
            .unwrap_or_else(|r| panic!("{file}: refused: {}", r.message));
        let (ours, theirs) = (png_of(&admitted), reference(entry));
        assert_eq!(ours.dimensions(), theirs.dimensions(), "{file}");
        let db = psnr(&ours, &theirs);
        eprintln!("{file}: {db:.2} dB vs the reference");
        assert!(db >= IMAGE_FLOOR_DB, "{file}: {db:.2} dB vs the reference, under {IMAGE_FLOOR_DB}");
        seen += 1;
    }
    assert!(seen >= 19, "{seen} layout files");
}

#[test]
fn every_image_pdf_page_renders_to_pdftoppms_pixels() {
    let mut seen = 0;
    for entry in layout_entries().iter().filter(|e| e["format"] == "pdf") {
        let file = entry["file"].as_str().unwrap();
        let bytes = std::fs::read(corpus().join(file)).unwrap();
        let side = u32::try_from(entry["reference_side"].as_u64().unwrap()).unwrap();
        let (page, _) = super::pdf::render_page(&bytes, 1, side).unwrap_or_else(|e| panic!("{file}: {}", e.message()));
        let theirs = reference(entry);
        assert!(page.width().abs_diff(theirs.width()) <= 1 && page.height().abs_diff(theirs.height()) <= 1, "{file}");
        let db = psnr(&page, &theirs);
        eprintln!("{file}: {db:.2} dB vs pdftoppm");
        assert!(db >= PAGE_FLOOR_DB, "{file}: {db:.2} dB vs pdftoppm, under {PAGE_FLOOR_DB}");
        // And the whole way: rendered at the fit, admitted as a PNG.
        let admitted =
            admit_pdf_page(&bytes, 1, &Options::default()).unwrap_or_else(|e| panic!("{file}: {}", e.message()));
        assert_eq!(admitted.mime, "image/png", "{file}");
        seen += 1;
    }
    assert!(seen >= 5, "{seen} layout PDFs");
}

/// The conformance corpus's TIFFs of signed, 32-bit, float and odd-width samples, of grey with
/// extra samples and of YCbCr LZW strips (`tests/corpus/conformance/tiff/`), against Pillow's,
/// libvips' or (for the odd widths) ImageMagick's 8-bit rendering of each
/// (`tests/corpus/convert/make_sample_formats.py`): the levels clipped as both references clip
/// them. Lossless, so the floor is the images' own; YCbCr differs from libtiff's by the rounding
/// of the colour conversion, odd widths by ImageMagick's scaling through 16 bits; old-style JPEG
/// is lossy ([`OLD_JPEG_FLOOR_DB`]).
#[test]
fn sample_formats_convert_to_the_references_levels() {
    let conformance = corpus().join("../conformance/tiff");
    let mut seen = 0;
    for reference in std::fs::read_dir(corpus()).unwrap().map(|e| e.unwrap().path()) {
        let name = reference.file_name().unwrap().to_str().unwrap().to_owned();
        let Some(stem) = name.strip_prefix("sample-").and_then(|n| n.strip_suffix(".ref.png")) else { continue };
        let source = ["tif", "tiff"].iter().map(|ext| conformance.join(format!("{stem}.{ext}"))).find(|p| p.exists());
        let bytes = std::fs::read(source.unwrap_or_else(|| panic!("{stem}: no TIFF"))).unwrap();
        assert!(super::tiff_layouts::is_ours(&bytes), "{stem}: the image crate's path would take it");
        let page = super::tiff_layouts::decode(&bytes).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert!(page.damage.is_none(), "{stem}");
        let (ours, theirs) = (page.image.to_rgba8(), image::open(&reference).unwrap().to_rgba8());
        assert_eq!(ours.dimensions(), theirs.dimensions(), "{stem}");
        let db = psnr(&ours, &theirs);
        eprintln!("{stem}: {db:.2} dB vs the reference");
        let floor = if OLD_JPEG_TIFFS.contains(&stem) { OLD_JPEG_FLOOR_DB } else { IMAGE_FLOOR_DB };
        assert!(db >= floor, "{stem}: {db:.2} dB vs the reference, under {floor}");
        seen += 1;
    }
    assert!(seen >= 30, "{seen} references");
}

#[test]
fn logluv_pages_are_libtiffs_8_bit_rendering() {
    // The converter's own reading of the file (make_logluv.py writes both), pixel for pixel:
    // libtiff's arithmetic, carried over in double precision, lands on the same levels.
    let bytes = std::fs::read(corpus().join("logluv-rle.tif")).unwrap();
    assert!(super::tiff_layouts::is_ours(&bytes));
    let ours = super::tiff_layouts::decode(&bytes).unwrap().image.to_rgba8();
    let theirs = image::open(corpus().join("logluv-rle.ref.png")).unwrap().to_rgba8();
    assert_eq!(ours.dimensions(), theirs.dimensions());
    let off: Vec<_> = ours.enumerate_pixels().filter(|(x, y, p)| *p != theirs.get_pixel(*x, *y)).collect();
    assert!(off.is_empty(), "pixels unlike ImageMagick's: {off:?}");

    // LogL: each level is 256 × sqrt(Y) of the luminance the code means, white from 1.0 on,
    // black at and under 0 (the rows make_logluv.py writes).
    let bytes = std::fs::read(corpus().join("logl-rle.tif")).unwrap();
    let page = super::tiff_layouts::decode(&bytes).unwrap().image.to_luma8();
    let meant = [[0.01, 0.1, 0.25, 0.5, 0.5, 0.5], [0.75, 1.0, 3.0, 0.0, -0.5, 0.0625], [0.5; 6]];
    for (y, row) in meant.iter().enumerate() {
        for (x, &luminance) in row.iter().enumerate() {
            let level = if luminance >= 1.0 { 255.0 } else { 256.0 * f64::max(luminance, 0.0).sqrt() };
            let got = f64::from(page.get_pixel(x as u32, y as u32)[0]);
            assert!((got - level.min(255.0)).abs() <= 1.0, "({x}, {y}): {got} for Y {luminance}");
        }
    }

    // A last strip whose data end before its row is refused in words: its byte count (the
    // third of StripByteCounts' LONGs) cut to 1.
    let mut cut = bytes.clone();
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    let ifd = u32_at(&cut, 4);
    let entries = u16::from_le_bytes([cut[ifd], cut[ifd + 1]]) as usize;
    let counts = (0..entries).map(|i| ifd + 2 + 12 * i).find(|&e| cut[e..e + 2] == 279u16.to_le_bytes()).unwrap();
    let last = u32_at(&cut, counts + 8) + 8;
    cut[last..last + 4].copy_from_slice(&1u32.to_le_bytes());
    let refused = super::tiff_layouts::decode(&cut).map(|p| (p.image.width(), p.image.height())).unwrap_err();
    assert!(refused.contains("end before row 1 of its strip or tile 2"), "{refused}");
}

/// A one-strip big-endian grey TIFF (`MM`), its strip Zstandard-compressed; `tags` are
/// (tag, SHORT value) pairs beyond the layout's own, in ascending order with them.
fn zstd_tiff(width: u16, height: u16, bits: u16, tags: &[(u16, u16)], strip: &[u8]) -> Vec<u8> {
    let data = ruzstd::encoding::compress_to_vec(strip, ruzstd::encoding::CompressionLevel::Fastest);
    let mut entries: Vec<(u16, u16, u32)> = vec![
        (256, 3, u32::from(width)),
        (257, 3, u32::from(height)),
        (258, 3, u32::from(bits)),
        (259, 3, 50000),
        (262, 3, 1),
        (273, 4, 0), // the strip's offset, set below
        (277, 3, 1),
        (278, 3, u32::from(height)),
        (279, 4, data.len() as u32),
    ];
    entries.extend(tags.iter().map(|&(tag, v)| (tag, 3, u32::from(v))));
    entries.sort_by_key(|e| e.0);
    let strip_at = 8 + 2 + 12 * entries.len() as u32 + 4;
    let mut tiff = b"MM\0\x2a\0\0\0\x08".to_vec();
    tiff.extend_from_slice(&(entries.len() as u16).to_be_bytes());
    for (tag, kind, value) in entries {
        let value = if tag == 273 { strip_at } else { value };
        tiff.extend_from_slice(&tag.to_be_bytes());
        tiff.extend_from_slice(&kind.to_be_bytes());
        tiff.extend_from_slice(&1u32.to_be_bytes());
        // A SHORT sits in the first two bytes of the value field.
        tiff.extend_from_slice(&if kind == 3 { value << 16 } else { value }.to_be_bytes());
    }
    tiff.extend_from_slice(&[0; 4]);
    tiff.extend_from_slice(&data);
    tiff
}

#[test]
fn zstandard_strips_are_decoded_with_their_predictor_and_byte_order() {
    // 16-bit big-endian samples under the horizontal predictor: the strip holds differences.
    let (w, h) = (9u16, 3u16);
    let values: Vec<u16> = (0..w * h).map(|i| i.wrapping_mul(2503)).collect();
    let mut strip = Vec::new();
    for row in values.chunks(usize::from(w)) {
        let mut last = 0u16;
        for &v in row {
            strip.extend_from_slice(&v.wrapping_sub(last).to_be_bytes());
            last = v;
        }
    }
    let tiff = zstd_tiff(w, h, 16, &[(317, 2)], &strip);
    assert!(super::tiff_layouts::is_ours(&tiff));
    let page = super::tiff_layouts::decode(&tiff).unwrap_or_else(|e| panic!("{e}"));
    let high: Vec<u8> = values.iter().map(|v| (v >> 8) as u8).collect();
    assert_eq!(page.image.to_luma8().into_raw(), high);

    // Signed 8-bit samples, as Pillow clips them: negative levels black.
    let signed: Vec<u8> = (0..w * h).map(|i| (i as i8).wrapping_mul(7) as u8).collect();
    let tiff = zstd_tiff(w, h, 8, &[(339, 2)], &signed);
    let page = super::tiff_layouts::decode(&tiff).unwrap_or_else(|e| panic!("{e}"));
    let clipped: Vec<u8> = signed.iter().map(|&s| (s as i8).max(0) as u8).collect();
    assert_eq!(page.image.to_luma8().into_raw(), clipped);
}

#[test]
fn a_zstandard_strip_that_is_short_cut_or_asks_a_huge_window_is_refused_in_words() {
    let (w, h) = (16u16, 8u16);
    let pixels: Vec<u8> = (0..w * h).map(|i| (i * 3) as u8).collect();
    // Fewer bytes than the strip's place.
    let short = zstd_tiff(w, h, 8, &[], &pixels[..pixels.len() - 5]);
    let e = super::tiff_layouts::decode(&short).err().expect("refused");
    assert!(e.contains("decompresses to 123 of the 128 bytes"), "{e}");
    // The frame cut: the file ends inside the strip's data.
    let whole = zstd_tiff(w, h, 8, &[], &pixels);
    let e = super::tiff_layouts::decode(&whole[..whole.len() - 4]).err().expect("refused");
    assert!(e.contains("outside the file"), "{e}");
    // A single-segment frame declaring 64 MiB of content (its window) for a 128-byte strip:
    // refused before the decoder reserves it (ruzstd's own bound is 128 MiB).
    let data_at = 8 + 2 + 12 * 9 + 4;
    let mut huge_window = whole[..data_at].to_vec();
    huge_window.extend_from_slice(&[0x28, 0xB5, 0x2F, 0xFD, 0xA0]);
    huge_window.extend_from_slice(&(64u32 << 20).to_le_bytes());
    huge_window.resize(whole.len(), 0);
    let e = super::tiff_layouts::decode(&huge_window).err().expect("refused");
    assert!(e.contains("Zstandard") && e.contains("window"), "{e}");
    // Damaged data anywhere in the frame: a verdict, never a trap.
    for at in data_at..whole.len() {
        let mut damaged = whole.clone();
        damaged[at] ^= 0x41;
        let _ = super::tiff_layouts::decode(&damaged);
    }
}
