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
/// `adaptive_filter` with `sum_buffer`: it stops at a sum of 0, a later filter wins a tie). The
/// four sums come from one pass that writes nothing ([`filter_costs`]); only the winner is written.
fn filter_row(bpp: usize, previous: &[u8], current: &[u8], out: &mut [u8]) -> Filter {
    let mut best = (u64::MAX, Filter::Up);
    for (filter, cost) in
        [Filter::Up, Filter::Sub, Filter::Avg, Filter::Paeth].into_iter().zip(filter_costs(bpp, previous, current))
    {
        if cost <= best.0 {
            best = (cost, filter);
            if cost == 0 {
                break;
            }
        }
    }
    apply(best.1, bpp, previous, current, out);
    best.1
}

/// The sums of the bytes, read as signed, that Up, Sub, Avg and Paeth would write for `current`,
/// in that order: one read of each byte and its three neighbours for all four, where filtering
/// each in turn read and wrote the row four times. Sums run per 32 bytes in 16-bit lanes (at
/// most 32 · 128), so the loop vectorises.
fn filter_costs(bpp: usize, previous: &[u8], current: &[u8]) -> [u64; 4] {
    const CHUNK: usize = 32;
    let cost = |byte: u8| u16::from((byte as i8).unsigned_abs());
    let bpp = bpp.min(current.len());
    let mut sums = [0u64; 4];
    for (&c, &b) in current[..bpp].iter().zip(&previous[..bpp]) {
        let costs =
            [cost(c.wrapping_sub(b)), cost(c), cost(c.wrapping_sub(b / 2)), cost(c.wrapping_sub(paeth(0, b, 0)))];
        for (sum, cost) in sums.iter_mut().zip(costs) {
            *sum += u64::from(cost);
        }
    }
    let len = current.len() - bpp;
    let (cur, left) = (&current[bpp..], &current[..len]);
    let (up, up_left) = (&previous[bpp..], &previous[..len]);
    let mut at = 0;
    while at < len {
        let end = (at + CHUNK).min(len);
        let mut chunk = [0u16; 4];
        for (((&c, &a), &b), &ul) in cur[at..end].iter().zip(&left[at..end]).zip(&up[at..end]).zip(&up_left[at..end]) {
            chunk[0] += cost(c.wrapping_sub(b));
            chunk[1] += cost(c.wrapping_sub(a));
            chunk[2] += cost(c.wrapping_sub((a & b) + ((a ^ b) >> 1)));
            chunk[3] += cost(c.wrapping_sub(paeth(a, b, ul)));
        }
        for (sum, chunk) in sums.iter_mut().zip(chunk) {
            *sum += u64::from(chunk);
        }
        at = end;
    }
    sums
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
/// upper-left (`c`) ones: the one nearest `a + b - c`, ties to `a`, then `b`. In FPNGE's form
/// (the png crate's filter uses it too), all in bytes, so that it vectorises: where `c` is not
/// between `a` and `b`, `|a + b - 2c|` exceeds both other distances and never wins.
#[inline]
fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let pa = b.abs_diff(c);
    let pb = a.abs_diff(c);
    let pc = if (a < c) == (c < b) { pa.abs_diff(pb) } else { u8::MAX };
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

    /// The specification's Paeth predictor, as written there.
    fn spec_paeth(a: u8, b: u8, c: u8) -> u8 {
        let p = i16::from(a) + i16::from(b) - i16::from(c);
        let (pa, pb, pc) = ((p - i16::from(a)).abs(), (p - i16::from(b)).abs(), (p - i16::from(c)).abs());
        if pa <= pb && pa <= pc {
            a
        } else if pb <= pc {
            b
        } else {
            c
        }
    }

    #[test]
    fn the_paeth_predictor_is_the_specifications_for_every_triple() {
        for a in 0..=255 {
            for b in 0..=255 {
                for c in 0..=255 {
                    assert_eq!(paeth(a, b, c), spec_paeth(a, b, c), "a {a} b {b} c {c}");
                }
            }
        }
    }

    /// The one-pass sums are what filtering the row by each filter and summing its bytes gives.
    #[test]
    fn the_filter_costs_are_the_sums_of_each_filters_output() {
        let mut state = 0x2545_f491_u32;
        let mut byte = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 24) as u8
        };
        for bpp in 1..=4 {
            for len in [bpp, bpp + 1, 31, 32 + bpp, 97, 1000] {
                let len = len - len % bpp;
                let previous: Vec<u8> = (0..len).map(|_| byte()).collect();
                // Smooth rows too, where small sums and ties decide.
                let current: Vec<u8> =
                    (0..len).map(|i| if len > 40 { previous[i].wrapping_add(byte() % 3) } else { byte() }).collect();
                let mut out = vec![0u8; len];
                let expected = [Filter::Up, Filter::Sub, Filter::Avg, Filter::Paeth].map(|filter| {
                    apply(filter, bpp, &previous, &current, &mut out);
                    out.iter().map(|&b| u64::from((b as i8).unsigned_abs())).sum::<u64>()
                });
                assert_eq!(filter_costs(bpp, &previous, &current), expected, "bpp {bpp}, {len} bytes");
            }
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
