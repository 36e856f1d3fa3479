//! A PNG written at a zlib level straight from the pixels: each row filtered as the png crate's
//! adaptive filter filters it (the least sum of the filtered bytes read as signed, over Up, Sub,
//! Avg and Paeth; a tie goes to the later), then deflated once by miniz_oxide. The png crate
//! filters rows only while its own fast compressor writes them, so without this the slower levels
//! had to write the whole fast pass first only to inflate its rows again; the bytes are the same
//! (unit test), the fast pass is not written.

use image::{DynamicImage, ImageError};

/// The PNG of an 8-bit grey, grey + alpha, RGB or RGBA image at zlib `level`; `None` for any other
/// colour type (the caller writes those through the png crate).
pub(crate) fn png_at_level(img: &DynamicImage, level: u8) -> Option<Result<Vec<u8>, ImageError>> {
    let (colour_type, channels) = match img {
        DynamicImage::ImageLuma8(_) => (0u8, 1usize),
        DynamicImage::ImageLumaA8(_) => (4, 2),
        DynamicImage::ImageRgb8(_) => (2, 3),
        DynamicImage::ImageRgba8(_) => (6, 4),
        _ => return None,
    };
    let (width, height) = (img.width(), img.height());
    let row_len = width as usize * channels;
    let pixels = img.as_bytes();
    if width == 0 || height == 0 || pixels.len() != row_len * height as usize {
        return Some(Err(ImageError::Encoding(image::error::EncodingError::new(
            image::ImageFormat::Png.into(),
            format!("a {width}x{height} image's pixels do not fill it"),
        ))));
    }
    let mut filtered = Vec::with_capacity((row_len + 1) * height as usize);
    let zeros = vec![0u8; row_len];
    let mut scratch = vec![0u8; row_len];
    let mut previous: &[u8] = &zeros;
    for row in pixels.chunks_exact(row_len) {
        let kind = filter_row(channels, previous, row, &mut scratch);
        filtered.push(kind as u8);
        filtered.extend_from_slice(&scratch);
        previous = row;
    }
    let data = miniz_oxide::deflate::compress_to_vec_zlib(&filtered, level);
    drop(filtered);
    let mut ihdr = [0u8; 13];
    ihdr[..4].copy_from_slice(&width.to_be_bytes());
    ihdr[4..8].copy_from_slice(&height.to_be_bytes());
    ihdr[8] = 8;
    ihdr[9] = colour_type;
    let mut out = Vec::with_capacity(8 + 25 + data.len() + 24);
    out.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    for (kind, body) in [(&b"IHDR"[..], &ihdr[..]), (b"IDAT", &data), (b"IEND", &[])] {
        push_chunk(&mut out, kind, body);
    }
    Some(Ok(out))
}

/// A chunk appended to `png`: length, type, data, CRC of type and data.
pub(crate) fn push_chunk(png: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32fast::hash(&png[start..]);
    png.extend_from_slice(&crc.to_be_bytes());
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Filter {
    Sub = 1,
    Up = 2,
    Avg = 3,
    Paeth = 4,
}

/// `current` filtered into `out` by the filter whose output sums least (the png crate's
/// `adaptive_filter` with `sum_buffer`: it stops at a sum of 0, a later filter wins a tie).
fn filter_row(bpp: usize, previous: &[u8], current: &[u8], out: &mut [u8]) -> Filter {
    let mut best = (u64::MAX, Filter::Up);
    for filter in [Filter::Up, Filter::Sub, Filter::Avg, Filter::Paeth] {
        apply(filter, bpp, previous, current, out);
        let cost = out.iter().map(|&b| u64::from((b as i8).unsigned_abs())).sum::<u64>();
        if cost <= best.0 {
            best = (cost, filter);
            if cost == 0 {
                return filter;
            }
        }
    }
    if best.1 != Filter::Paeth {
        apply(best.1, bpp, previous, current, out);
    }
    best.1
}

fn apply(filter: Filter, bpp: usize, previous: &[u8], current: &[u8], out: &mut [u8]) {
    let left = |i: usize| if i >= bpp { current[i - bpp] } else { 0 };
    let up_left = |i: usize| if i >= bpp { previous[i - bpp] } else { 0 };
    match filter {
        Filter::Sub => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = current[i].wrapping_sub(left(i));
            }
        }
        Filter::Up => {
            for ((o, &c), &p) in out.iter_mut().zip(current).zip(previous) {
                *o = c.wrapping_sub(p);
            }
        }
        Filter::Avg => {
            for (i, o) in out.iter_mut().enumerate() {
                let average = ((u16::from(left(i)) + u16::from(previous[i])) / 2) as u8;
                *o = current[i].wrapping_sub(average);
            }
        }
        Filter::Paeth => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = current[i].wrapping_sub(paeth(left(i), previous[i], up_left(i)));
            }
        }
    }
}

/// The PNG specification's Paeth predictor of a byte from its left, upper and upper-left ones.
fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let (a16, b16, c16) = (i16::from(a), i16::from(b), i16::from(c));
    let p = a16 + b16 - c16;
    let (pa, pb, pc) = ((p - a16).abs(), (p - b16).abs(), (p - c16).abs());
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(name: &str) -> DynamicImage {
        image::open(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/photos").join(name)).unwrap()
    }

    /// The bytes the ladder wrote before: the fast pass, its rows inflated and deflated again.
    fn through_the_fast_pass(img: &DynamicImage, level: u8) -> Vec<u8> {
        use crate::gate::downsample::{encode_png_fast, redeflate_png};
        redeflate_png(&encode_png_fast(img).unwrap(), level).unwrap()
    }

    #[test]
    fn the_rows_are_the_png_crates_and_the_file_the_fast_pass_redeflated() {
        for (name, level) in [("lorem_ipsum_screenshot.png", 1), ("kodim23.png", 1), ("kodim23.png", 6)] {
            let img = corpus(name);
            let ours = png_at_level(&img, level).unwrap().unwrap();
            assert!(ours == through_the_fast_pass(&img, level), "{name} at level {level}");
        }
        let img = corpus("kodim23.png");
        for converted in [
            DynamicImage::ImageLuma8(img.to_luma8()),
            DynamicImage::ImageLumaA8(img.to_luma_alpha8()),
            DynamicImage::ImageRgba8(img.to_rgba8()),
        ] {
            let ours = png_at_level(&converted, 1).unwrap().unwrap();
            assert!(ours == through_the_fast_pass(&converted, 1), "{:?}", converted.color());
            let back = image::load_from_memory(&ours).unwrap();
            assert_eq!(back.as_bytes(), converted.as_bytes());
        }
    }

    #[test]
    fn a_one_pixel_image_and_sixteen_bit_ones() {
        let one = DynamicImage::ImageRgb8(image::RgbImage::from_pixel(1, 1, image::Rgb([9, 200, 31])));
        let png = png_at_level(&one, 1).unwrap().unwrap();
        assert_eq!(image::load_from_memory(&png).unwrap().as_bytes(), one.as_bytes());
        assert!(png_at_level(&DynamicImage::new_rgb16(2, 2), 1).is_none());
    }
}
