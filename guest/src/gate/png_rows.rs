//! A PNG written at a zlib level straight from the pixels: each row filtered as the png crate's
//! adaptive filter filters it (the least sum of the filtered bytes read as signed, over Up, Sub,
//! Avg and Paeth; a tie goes to the later), then deflated once by miniz_oxide. The png crate
//! filters rows only while its own fast compressor writes them, so without this the slower levels
//! had to write the whole fast pass first only to inflate its rows again; the bytes are the same
//! (unit test), the fast pass is not written.

use image::{DynamicImage, ImageError};

use crate::remux::png_chunk;

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
    png_chunk(&mut out, b"IHDR", &ihdr);
    png_chunk(&mut out, b"IDAT", &data);
    png_chunk(&mut out, b"IEND", &[]);
    Some(Ok(out))
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

/// Each filter over whole slices zipped together (the first `bpp` bytes, which have no left
/// neighbour, apart), so the loops carry no bounds checks and vectorise, as the png crate's do:
/// this runs four times over every row.
fn apply(filter: Filter, bpp: usize, previous: &[u8], current: &[u8], out: &mut [u8]) {
    let bpp = bpp.min(current.len());
    let (out_head, out_rest) = out.split_at_mut(bpp);
    let (cur_head, cur_rest) = current.split_at(bpp);
    let (prev_head, prev_rest) = previous.split_at(bpp);
    let left = &current[..current.len() - bpp];
    let up_left = &previous[..previous.len() - bpp];
    match filter {
        Filter::Sub => {
            out_head.copy_from_slice(cur_head);
            for ((o, &c), &a) in out_rest.iter_mut().zip(cur_rest).zip(left) {
                *o = c.wrapping_sub(a);
            }
        }
        Filter::Up => {
            for ((o, &c), &b) in out.iter_mut().zip(current).zip(previous) {
                *o = c.wrapping_sub(b);
            }
        }
        Filter::Avg => {
            for ((o, &c), &b) in out_head.iter_mut().zip(cur_head).zip(prev_head) {
                *o = c.wrapping_sub(b / 2);
            }
            for (((o, &c), &a), &b) in out_rest.iter_mut().zip(cur_rest).zip(left).zip(prev_rest) {
                *o = c.wrapping_sub(((u16::from(a) + u16::from(b)) / 2) as u8);
            }
        }
        Filter::Paeth => {
            for ((o, &c), &b) in out_head.iter_mut().zip(cur_head).zip(prev_head) {
                *o = c.wrapping_sub(paeth(0, b, 0));
            }
            for ((((o, &c), &a), &b), &ul) in out_rest.iter_mut().zip(cur_rest).zip(left).zip(prev_rest).zip(up_left) {
                *o = c.wrapping_sub(paeth(a, b, ul));
            }
        }
    }
}

/// The PNG specification's Paeth predictor of a byte from its left (`a`), upper (`b`) and
/// upper-left (`c`) ones: the one nearest `a + b - c`, ties to `a`, then `b`.
#[inline]
fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let pa = b.abs_diff(c);
    let pb = a.abs_diff(c);
    let pc = (i16::from(a) + i16::from(b) - 2 * i16::from(c)).unsigned_abs();
    if u16::from(pa) <= u16::from(pb) && u16::from(pa) <= pc {
        a
    } else if u16::from(pb) <= pc {
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
