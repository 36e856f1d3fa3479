//! The planar writer against `jpeg-encoder` fed the same planes row by row (the path it
//! replaced): the same bytes.

use super::*;

/// The planes written by `jpeg-encoder`: grey as grey, YCbCr 4:2:0 with each chroma sample the
/// plane's own ([`PlaneRows`]).
fn encode_jpeg_planes(planes: &Planes, quality: u8) -> Option<Vec<u8>> {
    let (width, height) = (u16::try_from(planes.width).ok()?, u16::try_from(planes.height).ok()?);
    let mut out = Vec::new();
    let mut encoder = jpeg_encoder::Encoder::new(&mut out, quality);
    encoder.set_sampling_factor(jpeg_encoder::SamplingFactor::F_2_2);
    encoder.set_chroma_subsampling_method(jpeg_encoder::ChromaSubsamplingMethod::Nearest);
    encoder.encode_image(PlaneRows { planes, width, height }).ok()?;
    Some(out)
}

/// Planes handed to `jpeg-encoder` row by row: the luma row as it is, each chroma sample
/// repeated over its two columns, so that `ChromaSubsamplingMethod::Nearest` (the top-left of each
/// 2x2 block) takes exactly the plane's sample: no conversion, no averaging.
struct PlaneRows<'a> {
    planes: &'a Planes,
    width: u16,
    height: u16,
}

impl jpeg_encoder::ImageBuffer for PlaneRows<'_> {
    fn get_jpeg_color_type(&self) -> jpeg_encoder::JpegColorType {
        if self.planes.planes.len() == 1 {
            jpeg_encoder::JpegColorType::Luma
        } else {
            jpeg_encoder::JpegColorType::Ycbcr
        }
    }

    fn width(&self) -> u16 {
        self.width
    }

    fn height(&self) -> u16 {
        self.height
    }

    fn fill_buffers(&self, y: u16, buffers: &mut [Vec<u8>; 4]) {
        let (w, y) = (usize::from(self.width), u32::from(y));
        for (i, (plane, buffer)) in self.planes.planes.iter().zip(buffers.iter_mut()).enumerate() {
            let start = buffer.len();
            if i == 0 {
                let luma = row_of(plane, y);
                buffer.extend_from_slice(&luma[..w.min(luma.len())]);
                buffer.resize(start + w, luma.last().copied().unwrap_or(0));
            } else {
                let chroma = row_of(plane, y / 2);
                buffer.extend(chroma.iter().flat_map(|&c| [c, c]).take(w));
                buffer.resize(start + w, chroma.last().copied().unwrap_or(128));
            }
        }
    }
}

/// A plane of a smooth gradient with a sharp edge and noise: every coefficient band used.
fn plane(width: u32, height: u32, seed: u32) -> Plane {
    let mut state = seed.wrapping_mul(2_654_435_761) | 1;
    let samples = (0..width * height)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let (x, y) = (i % width, i / width);
            let ramp = (x * 255 / width.max(1) + y * 97 / height.max(1)) as i32;
            let edge = if (x / 5 + y / 3) % 7 == 0 { 90 } else { 0 };
            (ramp + edge + (state % 23) as i32 - 11).clamp(0, 255) as u8
        })
        .collect();
    Plane { width, height, h: 1, v: 1, samples }
}

fn planes(width: u32, height: u32, chroma: Option<(u32, u32)>) -> Planes {
    let mut list = vec![plane(width, height, 1)];
    if let Some((cw, ch)) = chroma {
        list.push(plane(cw, ch, 2));
        list.push(plane(cw, ch, 3));
    }
    Planes { width, height, block: 4, planes: list }
}

#[test]
fn the_planar_writer_writes_what_jpeg_encoder_writes() {
    let sizes: [(u32, u32); 9] = [(1, 1), (2, 3), (8, 8), (15, 17), (16, 16), (17, 9), (33, 64), (100, 75), (203, 151)];
    for (width, height) in sizes {
        let half = (width.div_ceil(2), height.div_ceil(2));
        // Colour with the chroma a fit writes; one plane for grey; chroma planes smaller than the
        // image's half, whose last row and column the rows handed to jpeg-encoder repeat.
        let cases = [Some(half), None, Some((half.0.saturating_sub(1).max(1), half.1.saturating_sub(2).max(1)))];
        for chroma in cases {
            let p = planes(width, height, chroma);
            for quality in [1, 20, 40, 60, 80, 95, 100] {
                let ours = encode(&p, quality).unwrap();
                let theirs = encode_jpeg_planes(&p, quality).unwrap();
                assert!(
                    ours == theirs,
                    "{width}x{height}, chroma {chroma:?}, quality {quality}: {} vs {} bytes",
                    ours.len(),
                    theirs.len()
                );
            }
        }
    }
}

#[test]
fn the_benchmark_photos_planes_are_written_as_jpeg_encoder_writes_them() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus/bench/photo-12mp.jpg");
    let bytes = std::fs::read(path).unwrap();
    let decoded = crate::remux::jpeg_planes::decode(&bytes, (2000, 1500)).unwrap();
    let fitted = crate::gate::downsample::fitted_planes(decoded, 2000).unwrap();
    assert_eq!(encode(&fitted, 80).unwrap(), encode_jpeg_planes(&fitted, 80).unwrap());
}

#[test]
fn sizes_jpeg_cannot_hold_are_none() {
    assert!(encode(&planes(70_000, 1, None), 80).is_none());
    let mut two = planes(8, 8, None);
    two.planes.push(plane(4, 4, 9));
    assert!(encode(&two, 80).is_none());
}

/// The colour conversion is `jpeg-encoder`'s, for every RGB triple.
#[test]
fn the_colour_conversion_is_jpeg_encoders() {
    for r in 0..=255 {
        for g in 0..=255 {
            for b in 0..=255 {
                assert_eq!(rgb_to_ycbcr(r, g, b), jpeg_encoder::rgb_to_ycbcr(r, g, b), "({r}, {g}, {b})");
            }
        }
    }
}

/// The block coder as the wasm build runs it and as this machine's native build takes it (with
/// AVX2 where the CPU has it): the same bytes for blocks of every kind.
#[test]
fn the_block_coder_writes_the_same_bytes_in_either_form() {
    let mut next = crate::test_images::xorshift(0x1234_5678);
    for quality in [5, 20, 50, 80, 95, 100] {
        let q = Quantiser::new(&ANNEX_K_LUMA, quality);
        let huffman = (Codes::new(&LUMA_DC), Codes::new(&LUMA_AC));
        let (mut ours, mut as_built) = (HuffmanWriter::new(Vec::new()), HuffmanWriter::new(Vec::new()));
        let (mut dc, mut dc_as_built) = (0, 0);
        for block in 0..300 {
            // Flat, smooth and noisy blocks, at the extremes too.
            let spread = [0, 4, 40, 256][block % 4];
            let base = (next() % 256) as i32 - 128;
            let samples: [i32; 64] = std::array::from_fn(|_| {
                if spread == 0 { base } else { (base + (next() % spread) as i32 - spread as i32 / 2).clamp(-128, 127) }
            });
            code_block(&samples, &q, &huffman, &mut dc, &mut ours);
            code_block_as_built(&samples, &q, &huffman, &mut dc_as_built, &mut as_built);
        }
        assert_eq!(dc, dc_as_built);
        assert!(ours.finish() == as_built.finish(), "quality {quality}");
    }
}
