//! The planes against jpeg-decoder's decode of the same files (the path the fit took before),
//! upsampled and converted here, at every scale (see `check`).

use super::*;

fn corpus(path: &str) -> Vec<u8> {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus").join(path);
    std::fs::read(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// jpeg-decoder's decode at the scale whose size is `target`: its pixels (RGB or grey) and size.
fn reference(bytes: &[u8], target: (u32, u32)) -> (Vec<u8>, u32, u32, usize) {
    let mut decoder = jpeg_decoder::Decoder::new(bytes);
    let (w, h) = decoder.scale(target.0 as u16, target.1 as u16).unwrap();
    let pixels = decoder.decode().unwrap();
    let channels = match decoder.info().unwrap().pixel_format {
        jpeg_decoder::PixelFormat::L8 => 1,
        jpeg_decoder::PixelFormat::RGB24 => 3,
        other => panic!("{other:?}"),
    };
    (pixels, u32::from(w), u32::from(h), channels)
}

/// A plane brought to the image's size as jpeg-decoder brings it: at 2:1 each sample at its
/// centre, bilinear between centres (libjpeg's "fancy" upsampling), edges repeated; at other
/// ratios each sample repeated.
fn upsampled(plane: &Plane, hmax: u32, vmax: u32, width: u32, height: u32) -> Vec<f64> {
    let fancy = matches!((hmax / plane.h, vmax / plane.v), (1, 1) | (2, 1) | (1, 2) | (2, 2));
    if !fancy {
        let (hr, vr) = (hmax / plane.h, vmax / plane.v);
        let at = |x: u32, y: u32| {
            let (x, y) = ((x / hr).min(plane.width - 1), (y / vr).min(plane.height - 1));
            f64::from(plane.samples[(y * plane.width + x) as usize])
        };
        return (0..height).flat_map(|y| (0..width).map(move |x| at(x, y))).collect();
    }
    let at = |x: i64, y: i64| {
        let x = x.clamp(0, i64::from(plane.width) - 1) as usize;
        let y = y.clamp(0, i64::from(plane.height) - 1) as usize;
        f64::from(plane.samples[y * plane.width as usize + x])
    };
    let mut out = Vec::with_capacity((width * height) as usize);
    for y in 0..height {
        let sy = (f64::from(y) + 0.5) * f64::from(plane.v) / f64::from(vmax) - 0.5;
        let (y0, fy) = (sy.floor() as i64, sy - sy.floor());
        for x in 0..width {
            let sx = (f64::from(x) + 0.5) * f64::from(plane.h) / f64::from(hmax) - 0.5;
            let (x0, fx) = (sx.floor() as i64, sx - sx.floor());
            let top = at(x0, y0) * (1.0 - fx) + at(x0 + 1, y0) * fx;
            let bottom = at(x0, y0 + 1) * (1.0 - fx) + at(x0 + 1, y0 + 1) * fx;
            out.push(top * (1.0 - fy) + bottom * fy);
        }
    }
    out
}

/// The planes as the reference's pixels: grey as it is, YCbCr converted (JFIF's equations).
fn as_pixels(p: &Planes) -> Vec<u8> {
    let hmax = p.planes.iter().map(|c| c.h).max().unwrap();
    let vmax = p.planes.iter().map(|c| c.v).max().unwrap();
    let full: Vec<Vec<f64>> = p.planes.iter().map(|c| upsampled(c, hmax, vmax, p.width, p.height)).collect();
    let byte = |v: f64| v.round().clamp(0.0, 255.0) as u8;
    if full.len() == 1 {
        return full[0].iter().map(|&v| byte(v)).collect();
    }
    let mut rgb = Vec::with_capacity(full[0].len() * 3);
    for ((&y, &cb), &cr) in full[0].iter().zip(&full[1]).zip(&full[2]) {
        let (cb, cr) = (cb - 128.0, cr - 128.0);
        rgb.extend([byte(y + 1.402 * cr), byte(y - 0.344136 * cb - 0.714136 * cr), byte(y + 1.772 * cb)]);
    }
    rgb
}

fn psnr(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let mse = a.iter().zip(b).map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2)).sum::<f64>() / a.len() as f64;
    if mse == 0.0 { f64::INFINITY } else { 10.0 * (255.0f64 * 255.0 / mse).log10() }
}

/// The frame's size, from jpeg-decoder's header.
fn size(bytes: &[u8]) -> (u32, u32) {
    let mut decoder = jpeg_decoder::Decoder::new(bytes);
    decoder.read_info().unwrap();
    let info = decoder.info().unwrap();
    (u32::from(info.width), u32::from(info.height))
}

/// `full` (`channels` a pixel, `width` wide) box-averaged over `f`x`f` pixels to `w`x`h`: what a
/// reduced IDCT approximates.
fn boxed(full: &[u8], (width, height): (u32, u32), channels: usize, f: u32, (w, h): (u32, u32)) -> Vec<u8> {
    let mut out = Vec::with_capacity((w * h) as usize * channels);
    for y in 0..h {
        for x in 0..w {
            for c in 0..channels {
                let (mut sum, mut n) = (0.0, 0.0);
                for (sx, sy) in (0..f * f).map(|i| (x * f + i % f, y * f + i / f)) {
                    if sx < width && sy < height {
                        sum += f64::from(full[(sy * width + sx) as usize * channels + c]);
                        n += 1.0;
                    }
                }
                out.push((sum / n).round() as u8);
            }
        }
    }
    out
}

/// Every scale of `path` against jpeg-decoder. At 1/1 both are islow-like IDCTs: within 40 dB.
/// Below, jpeg-decoder keeps the low 4x4 or 2x2 coefficients and transforms them as a smaller
/// block's, where libjpeg's reduced IDCTs (these) average the full transform over each box of
/// pixels: they differ by 35-45 dB on detailed photos. There each is measured against the full
/// decode averaged over the scale's boxes (inside the image), and these must come within 3 dB of
/// jpeg-decoder's: on the photos they come closer, on the small synthetic `jpg-size-*` files up to
/// 2 dB further (chroma upsampled twice and clamped colours weigh more there), and on a grey frame
/// sampled 2x2 jpeg-decoder's reduced decode is 23 dB off it, these 57 dB.
fn check(path: &str) {
    let bytes = corpus(path);
    let (width, height) = size(&bytes);
    let (full, ..) = reference(&bytes, (width, height));
    for block in [8, 4, 2, 1] {
        let target = ((width * block).div_ceil(8), (height * block).div_ceil(8));
        let planes = decode(&bytes, target).unwrap_or_else(|| panic!("{path}: not decoded to planes"));
        let (pixels, w, h, channels) = reference(&bytes, target);
        assert_eq!((planes.width, planes.height), (w, h), "{path} at {block}/8");
        assert_eq!(planes.planes.len(), channels, "{path}");
        let ours = as_pixels(&planes);
        let db = psnr(&ours, &pixels);
        if block == 8 {
            eprintln!("{path} at 8/8 ({w}x{h}): {db:.1} dB");
            assert!(db >= 40.0, "{path} at 8/8: {db:.1} dB");
            continue;
        }
        // Only the pixels whose box lies inside the image: an edge pixel's block also covers the
        // encoder's padding.
        let f = 8 / block;
        let (iw, ih) = (width / f, height / f);
        if iw == 0 || ih == 0 {
            assert!(db >= 30.0, "{path} at {block}/8: {db:.1} dB");
            continue;
        }
        let inner = |px: &[u8]| -> Vec<u8> {
            (0..ih as usize).flat_map(|y| px[y * w as usize * channels..][..iw as usize * channels].to_vec()).collect()
        };
        let averaged = boxed(&full, (width, height), channels, f, (iw, ih));
        let (ours_db, theirs_db) = (psnr(&inner(&ours), &averaged), psnr(&inner(&pixels), &averaged));
        eprintln!(
            "{path} at {block}/8 ({w}x{h}): {db:.1} dB; to the box average {ours_db:.1} dB, jpeg-decoder {theirs_db:.1} dB"
        );
        assert!(ours_db + 3.0 >= theirs_db, "{path} at {block}/8: {ours_db:.1} dB, jpeg-decoder {theirs_db:.1} dB");
        assert!(db >= 30.0 || ours_db >= theirs_db + 10.0, "{path} at {block}/8: {db:.1} dB");
    }
}

#[test]
fn the_planes_decode_as_jpeg_decoder_at_every_scale() {
    for path in [
        "conformance/jpeg/testorig.jpg",
        "conformance/jpeg/peacock.default.jpeg",
        "conformance/jpeg/peacock.s1x3.jpeg",
        "conformance/jpeg/peacock.s2x1-422.jpeg",
        "conformance/jpeg/peacock.s1x1-444.jpeg",
        "conformance/jpeg/peacock.q99.jpeg",
        "conformance/jpeg/restarts.jpg",
        "conformance/jpeg/mona-lisa.21x32.q50.jpeg",
        "conformance/jpeg/jpg-size-1x1.jpg",
        "conformance/jpeg/jpg-size-15x15.jpg",
        "conformance/jpeg/jpg-size-17x17.jpg",
        "conformance/jpeg/jpg-size-33x33.jpg",
    ] {
        check(path);
    }
}

/// Grey frames, among them one whose only component is sampled 2x2 (blocks in its own grid).
#[test]
fn grey_planes_decode_as_jpeg_decoder_at_every_scale() {
    for path in [
        "conformance/jpeg/grayscale_16x24_sampling2x2.jpg",
        "conformance/jpeg/grayscale_24x16_sampling2x2.jpg",
        "conformance/jpeg/grayscale_square.jpg",
        "conformance/jpeg/peacock.grayscale.jpeg",
        "conformance/jpeg/jpg-gray.jpg",
    ] {
        check(path);
    }
}

#[test]
fn the_benchmark_photo_decodes_as_jpeg_decoder_at_every_scale() {
    check("bench/photo-12mp.jpg");
}

/// At 1/2, the 4:2:0 photo's planes are Y at the fit's size and each chroma at half of it.
#[test]
fn the_benchmark_photo_at_half_scale_keeps_its_chroma_subsampled() {
    let planes = decode(&corpus("bench/photo-12mp.jpg"), (2000, 1500)).unwrap();
    let sizes: Vec<_> = planes.planes.iter().map(|p| (p.width, p.height, p.samples.len())).collect();
    assert_eq!(sizes, [(2000, 1500, 3_000_000), (1000, 750, 750_000), (1000, 750, 750_000)]);
    assert_eq!(planes.block, 4);
}

/// What this does not decode is left to the caller's path: progressive, CMYK, cut or damaged.
#[test]
fn other_jpegs_are_not_decoded_to_planes() {
    for path in [
        "conformance/jpeg/jpg-progressive.jpg",
        "conformance/jpeg/non-interleaved-mcu.jpg",
        "conformance/jpeg/peacock.progressive.jpeg",
        "conformance/jpeg/jpg-cmyk-1.jpg",
        "conformance/jpeg/peacock.default.truncated.jpeg",
        "conformance/jpeg/testimgari.jpg",
    ] {
        assert!(decode(&corpus(path), (16, 16)).is_none(), "{path}");
    }
    let mut cut = corpus("conformance/jpeg/testorig.jpg");
    cut.truncate(cut.len() * 2 / 3);
    cut.extend_from_slice(&[0xFF, 0xD9]);
    assert!(decode(&cut, (16, 16)).is_none(), "a scan cut short");
}

/// Each inverse transform of a block holding only its DC term is flat at DC/8 + 128, and one with
/// a single AC term is not.
#[test]
fn a_dc_only_block_is_flat_at_every_scale() {
    let mut c = [0i32; 64];
    c[0] = 80;
    let mut out = [0u8; 64];
    idct_8x8(&c, &mut out);
    assert!(out.iter().all(|&v| v == 138), "{out:?}");
    for f in [idct_4x4, idct_2x2] {
        out = [0; 64];
        f(&c, &mut out);
        assert!(out[..4].iter().all(|&v| v == 138), "{out:?}");
    }
    c[1] = 100;
    idct_4x4(&c, &mut out);
    assert!(out[0] > out[3], "{out:?}");
}

/// The 8x8 block's inverse DCT at pixel (x, y), level-shifted, in floating point. jidctred.c's
/// reduced IDCTs are its average over each 2x2 or 4x4 box of pixels: a box average of cosine `u`
/// over 2 pixels is `cos(u pi/8) cos(u pi/16)`, the weights its 4x4 transform gives (and over 4
/// pixels the even ones vanish, the columns its 2x2 skips).
fn continuous_idct(c: &[i32; 64], x: f64, y: f64) -> f64 {
    let mut sum = 0.0;
    for v in 0..8 {
        for u in 0..8 {
            let cu = if u == 0 { std::f64::consts::FRAC_1_SQRT_2 } else { 1.0 };
            let cv = if v == 0 { std::f64::consts::FRAC_1_SQRT_2 } else { 1.0 };
            let angle = |p: f64, k: usize| ((2.0 * p + 1.0) * k as f64 * std::f64::consts::PI / 16.0).cos();
            sum += cu * cv * f64::from(c[v * 8 + u]) * angle(x, u) * angle(y, v);
        }
    }
    sum / 4.0 + 128.0
}

/// Each integer IDCT against the floating-point one (box-averaged for the reduced sizes) on
/// pseudo-random blocks decaying with frequency, as quantised photos are: within 1.
#[test]
fn each_idct_samples_the_continuous_transform() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..500 {
        let mut c = [0i32; 64];
        for (i, v) in c.iter_mut().enumerate() {
            let range = 600 / (1 + (i / 8 + i % 8) as i64);
            *v = (next() % (2 * range as u64 + 1)) as i32 - range as i32;
        }
        for (side, f) in [(8, idct_8x8 as fn(&[i32; 64], &mut [u8; 64])), (4, idct_4x4), (2, idct_2x2)] {
            let mut out = [0u8; 64];
            f(&c, &mut out);
            let step = 8 / side;
            for r in 0..side {
                for col in 0..side {
                    let pixels =
                        (0..step * step).map(|i| ((col * step + i % step) as f64, (r * step + i / step) as f64));
                    let mean = pixels.map(|(x, y)| continuous_idct(&c, x, y)).sum::<f64>() / (step * step) as f64;
                    let want = mean.round().clamp(0.0, 255.0);
                    let got = f64::from(out[r * side + col]);
                    assert!((got - want).abs() <= 1.0, "{side}x{side} at ({col}, {r}): {got} for {want} ({c:?})");
                }
            }
        }
    }
}

fn same_planes(a: &Planes, b: &Planes) -> bool {
    (a.width, a.height, a.block) == (b.width, b.height, b.block)
        && a.planes.len() == b.planes.len()
        && a.planes
            .iter()
            .zip(&b.planes)
            .all(|(p, q)| (p.width, p.height, p.h, p.v) == (q.width, q.height, q.h, q.v) && p.samples == q.samples)
}

/// The re-mux's walk asked for the planes judges every corpus JPEG as it does unasked (the same
/// canonical form, repair or refusal), and gives the planes `decode` gives, where the fit will
/// re-encode the image (over 2000 px, or over the size passed as it is; upright or stored
/// sideways), nowhere else.
#[test]
fn the_remux_walk_gives_the_planes_and_the_same_verdicts() {
    use crate::remux::{canonical, canonical_with_planes};
    use crate::signature::ImageType;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/conformance/jpeg");
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.push(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/bench/photo-12mp.jpg"));
    let (mut with_planes, mut judged) = (0, 0);
    for path in &paths {
        let bytes = std::fs::read(path).unwrap();
        let name = path.display();
        if !ImageType::Jpeg.matches(&bytes) {
            continue; // the gate re-muxes only what its signature check took for a JPEG
        }
        for reencoded in [false, true] {
            let target = Target::Fit { side: 2000, reencoded };
            let (asked, unasked) = (
                canonical_with_planes(&bytes, ImageType::Jpeg, false, Some(target), false),
                canonical(&bytes, ImageType::Jpeg, false),
            );
            // What the fit reads: the canonical form.
            let (planes, src) = match (asked, unasked) {
                (Ok((a, planes)), Ok(b)) => {
                    assert_eq!(a, b, "{name}");
                    (planes, a.bytes.unwrap_or_else(|| bytes.clone()))
                }
                (Err(a), Err(b)) => {
                    assert_eq!(a.0, b.0, "{name}");
                    (None, Vec::new())
                }
                (a, b) => panic!("{name}: {:?} against {:?}", a.map(|(c, _)| c).map_err(|e| e.0), b.map_err(|e| e.0)),
            };
            judged += 1;
            // jpeg-decoder's header reader refuses a few corpus files the walk reads.
            let mut decoder = jpeg_decoder::Decoder::new(&bytes[..]);
            let Some(info) = decoder.read_info().ok().and_then(|()| decoder.info()) else { continue };
            let (w, h) = (u32::from(info.width), u32::from(info.height));
            let wanted = reencoded || w > 2000 || h > 2000;
            let decoded = if wanted { decode(&src, crate::gate::downsample::fit_inside(w, h, 2000)) } else { None };
            match (&planes, &decoded) {
                (Some(a), Some(b)) => {
                    assert!(same_planes(a, b), "{name}");
                    with_planes += 1;
                }
                (None, None) => {}
                _ => panic!(
                    "{name} (reencoded {reencoded}): planes from the walk {}, from decode {}",
                    planes.is_some(),
                    decoded.is_some()
                ),
            }
        }
    }
    assert!(with_planes >= 20 && judged >= 100, "{with_planes} with planes of {judged}");
}

/// The 12 MP photo admitted with the defaults: the first rung written from its planes.
#[test]
fn the_photo_is_admitted_from_the_walks_planes() {
    let bytes = corpus("bench/photo-12mp.jpg");
    let admitted = crate::admit_image(&bytes, "image/jpeg", &crate::Options::default()).unwrap();
    let out = admitted.bytes(&bytes);
    let fitted = crate::gate::downsample::fitted_planes(decode(&bytes, (2000, 1500)).unwrap(), 2000).unwrap();
    let written = crate::gate::planar_jpeg::encode(&fitted, crate::limits::JPEG_LADDER[0]).unwrap();
    assert!(out == written.as_slice(), "{} bytes admitted, {} written from the planes", out.len(), written.len());
}

/// The 32-bit 4x4 transform gives the 64-bit one's samples for every block within its bound: on
/// pseudo-random blocks of every density, and on the blocks that drive each output to its
/// extreme (every coefficient at the bound, signed as the output's constants are, the worst case
/// for both passes' sums).
#[test]
fn the_32_bit_4x4_transform_matches_the_64_bit_one_within_its_bound() {
    let peak = LANES_PEAK_4X4 as i32;
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut blocks = Vec::new();
    for n in 0..4000 {
        let mut c = [0i32; 64];
        let used = 1 + n % 64;
        for v in c.iter_mut().take(used) {
            *v = (next() % (2 * peak as u64 + 1)) as i32 - peak;
        }
        blocks.push(c);
    }
    // Signs that maximise (or minimise) one output of both passes: the row's and the column's
    // constants multiplied.
    let weights = |k: usize| -> [i32; 8] {
        let unit = |i: usize| {
            let mut z = [0i32; 8];
            z[i] = 1;
            reduced_4_i32(z[0], z[2], z[6], [z[7], z[5], z[3], z[1]])[k]
        };
        std::array::from_fn(unit)
    };
    for y in 0..4 {
        for x in 0..4 {
            for sign in [1, -1] {
                let (wy, wx) = (weights(y), weights(x));
                blocks.push(std::array::from_fn(|i| sign * peak * (wy[i / 8] * wx[i % 8]).signum()));
            }
        }
    }
    for c in blocks {
        let (mut lanes, mut wide) = ([0u8; 64], [0u8; 64]);
        idct_4x4_lanes(&c, &mut lanes);
        idct_4x4_wide(&c, &mut wide);
        assert_eq!(lanes[..16], wide[..16], "{c:?}");
    }
}

/// Dequantisation and the IDCT at each scale as the wasm build runs them and as this machine's
/// native build takes them (with AVX2 where the CPU has it): the same samples, for coefficients
/// under and over the 32-bit lanes' bound.
#[test]
fn the_idct_gives_the_same_samples_in_either_form() {
    let mut next = crate::test_images::xorshift(0x8765_4321);
    for block in 0..3000 {
        let peak = [8, 64, 1024, 32767][block % 4];
        let natural: [i16; 64] = std::array::from_fn(|i| {
            if i > 0 && next().is_multiple_of(3) { 0 } else { (next() % (2 * peak + 1)) as i16 - peak as i16 }
        });
        let q: [i32; 64] = std::array::from_fn(|_| 1 + (next() % 40) as i32);
        for side in [1, 2, 4, 8] {
            let (mut ours, mut as_built) = ([0u8; 64], [0u8; 64]);
            dequantised_idct(&natural, &q, side, &mut ours);
            dequantised_idct_as_built(&natural, &q, side, &mut as_built);
            assert_eq!(ours, as_built, "block {block}, side {side}");
        }
    }
}
