//! Decompression bombs end to end, through the real component and host: tiny files that declare
//! huge canvases (PNG, JPEG, GIF, WebP), a GIF with thousands of frames, PNGs whose zlib streams
//! inflate to tens of megabytes and to a gigabyte. Each is refused, or bounded by the call's
//! memory limit and CPU deadline, and the host's resident memory stays bounded.
//!
//! The tests of this file run one at a time (a shared lock), and the one that measures the host's
//! RSS runs alone in a child process (`common::isolated`): the figures would otherwise measure the
//! tests running beside it.

use std::io::Write;
use std::time::Duration;

use crate::common::process::{mib, peak_rss, reset_peak_rss, rss};
use crate::common::*;
use mediagate::gate::{AdmitOptions, Provider, RefusalReason, Verdict, Verify};
use mediagate::{CallError, Gate, Limits, Runtime, RuntimeConfig};

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A hang guard, not a performance assertion.
const HANG_GUARD: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------------------
// Crafting the files.

fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = flate2::Crc::new();
    crc.update(kind);
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_be_bytes());
}

/// A PNG with the given IHDR (8-bit, colour type `color`) and one IDAT of `zlib` bytes.
fn png(width: u32, height: u32, color: u8, zlib: &[u8]) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, color, 0, 0, 0]);
    png_chunk(&mut out, b"IHDR", &ihdr);
    png_chunk(&mut out, b"IDAT", zlib);
    png_chunk(&mut out, b"IEND", b"");
    out
}

/// A zlib stream of `n` zero bytes, compressed as far as deflate goes (≈ 1:1000).
fn zlib_zeros(n: u64) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let block = vec![0u8; 1 << 20];
    let mut left = n;
    while left > 0 {
        let k = left.min(block.len() as u64) as usize;
        z.write_all(&block[..k]).unwrap();
        left -= k as u64;
    }
    z.finish().unwrap()
}

/// A 7000×7000 grey PNG (49 MP, inside the decoder's 50 MP bound) whose IDAT is ~49 MB of zeros
/// compressed to a few tens of kilobytes.
fn png_zlib_bomb_within_bounds() -> Vec<u8> {
    let side = 7000u32;
    png(side, side, 0, &zlib_zeros(u64::from(side) * u64::from(side + 1)))
}

/// A 16×16 grey PNG whose IDAT inflates to 1 GiB: the decoder needs 272 bytes of it.
fn png_zlib_overlong() -> Vec<u8> {
    png(16, 16, 0, &zlib_zeros(1 << 30))
}

fn tiny(format: image::ImageFormat) -> Vec<u8> {
    let img = image::DynamicImage::ImageRgb8(image::RgbImage::from_fn(8, 8, |x, y| {
        image::Rgb([x as u8 * 30, y as u8 * 30, 0])
    }));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, format).unwrap();
    out.into_inner()
}

/// A valid 8×8 baseline JPEG whose SOF0 is edited to declare `width`×`height`.
fn jpeg_declaring(width: u16, height: u16) -> Vec<u8> {
    let mut jpeg = tiny(image::ImageFormat::Jpeg);
    let sof = jpeg.windows(2).position(|w| w == [0xFF, 0xC0]).expect("a baseline SOF0");
    jpeg[sof + 5..sof + 7].copy_from_slice(&height.to_be_bytes());
    jpeg[sof + 7..sof + 9].copy_from_slice(&width.to_be_bytes());
    jpeg
}

/// A GIF with a `width`×`height` logical screen and `frames` 1×1 frames.
fn gif(width: u16, height: u16, frames: usize) -> Vec<u8> {
    let mut out = b"GIF89a".to_vec();
    out.extend_from_slice(&width.to_le_bytes());
    out.extend_from_slice(&height.to_le_bytes());
    out.extend_from_slice(&[0x80, 0, 0]); // a global colour table of 2 entries
    out.extend_from_slice(&[0, 0, 0, 255, 255, 255]);
    for _ in 0..frames {
        // Graphic control (10 ms delay), then a 1×1 frame: LZW min code 2, clear, 0, end.
        out.extend_from_slice(&[0x21, 0xF9, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00]);
        out.extend_from_slice(&[0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0]);
        out.extend_from_slice(&[0x02, 0x02, 0x44, 0x01, 0x00]);
    }
    out.push(0x3B);
    out
}

fn riff_webp(chunks: &[(&[u8; 4], Vec<u8>)]) -> Vec<u8> {
    let mut body = b"WEBP".to_vec();
    for (kind, data) in chunks {
        body.extend_from_slice(*kind);
        body.extend_from_slice(&(data.len() as u32).to_le_bytes());
        body.extend_from_slice(data);
        if data.len() % 2 == 1 {
            body.push(0);
        }
    }
    let mut out = b"RIFF".to_vec();
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend(body);
    out
}

/// The VP8L chunk of a valid 8×8 lossless WebP.
fn vp8l_chunk() -> Vec<u8> {
    let webp = tiny(image::ImageFormat::WebP);
    let at = webp.windows(4).position(|w| w == b"VP8L").expect("a lossless WebP");
    let len = u32::from_le_bytes(webp[at + 4..at + 8].try_into().unwrap()) as usize;
    webp[at + 8..at + 8 + len].to_vec()
}

/// A lossless WebP whose VP8L header declares `side`×`side` (at most 16384, its 14-bit maximum).
fn webp_vp8l_declaring(side: u32) -> Vec<u8> {
    let mut vp8l = vp8l_chunk();
    // Signature 0x2f, then 14 bits width-1, 14 bits height-1, 1 bit alpha, 3 bits version.
    let bits: u32 = (side - 1) | ((side - 1) << 14);
    vp8l[1..5].copy_from_slice(&bits.to_le_bytes());
    riff_webp(&[(b"VP8L", vp8l)])
}

/// An extended WebP whose VP8X canvas is `side`×`side` (at most 2^24, its 24-bit maximum).
fn webp_vp8x_declaring(side: u32) -> Vec<u8> {
    let mut vp8x = vec![0u8; 10];
    vp8x[4..7].copy_from_slice(&(side - 1).to_le_bytes()[..3]);
    vp8x[7..10].copy_from_slice(&(side - 1).to_le_bytes()[..3]);
    riff_webp(&[(b"VP8X", vp8x), (b"VP8L", vp8l_chunk())])
}

// ---------------------------------------------------------------------------------------------

fn opts(verify: Verify, downsample: bool, provider: Provider) -> AdmitOptions {
    AdmitOptions {
        verify: Some(verify),
        downsample: Some(downsample),
        provider: Some(provider),
        keep_metadata: Some(false),
    }
}

fn header() -> AdmitOptions {
    opts(Verify::Header, true, Provider::Anthropic)
}

fn full() -> AdmitOptions {
    opts(Verify::Full, true, Provider::Anthropic)
}

#[derive(Debug)]
enum Expect {
    Refused(RefusalReason),
    Admitted {
        width: u32,
        height: u32,
    },
    /// Admitted or refused, but a verdict (never a trap): its cost is what is asserted.
    AnyVerdict,
}

async fn admit(gate: &Gate, bytes: &[u8], mime: &str, options: AdmitOptions) -> (Result<Verdict, CallError>, usize) {
    let call = admit_claimed_answered(gate, bytes, mime, options);
    match tokio::time::timeout(HANG_GUARD, call).await.expect("a bomb must not hang the call") {
        Ok(answered) => (Ok(answered.answer), answered.stats.peak_memory),
        Err(e) => (Err(e), 0),
    }
}

fn small_png() -> Vec<u8> {
    std::fs::read(corpus().join("pngsuite/basn0g01.png")).unwrap()
}

async fn assert_next_call_succeeds(gate: &Gate) {
    let v = admit_claimed(gate, &small_png(), "image/png", gate.default_options()).await.unwrap();
    assert!(matches!(v, Verdict::Admitted(_)), "the next call on the same gate succeeds: {v:?}");
}

#[tokio::test]
async fn bombs_are_refused_or_bounded_and_host_rss_stays_bounded() {
    if !isolated(module_path!(), "bombs_are_refused_or_bounded_and_host_rss_stays_bounded") {
        return;
    }
    let _serial = SERIAL.lock().await;
    let gate = gate();
    // Warm up: the compiled component loaded, the pool's first slot touched.
    assert_next_call_succeeds(&gate).await;

    let cases: Vec<(&str, Vec<u8>, &str, AdmitOptions, Expect)> = vec![
        (
            "png 50000x50000",
            png(50_000, 50_000, 0, &zlib_zeros(1024)),
            "image/png",
            full(),
            Expect::Refused(RefusalReason::DimensionsTooLarge),
        ),
        (
            "png 20000x20000 (400 MP)",
            png(20_000, 20_000, 6, &zlib_zeros(1024)),
            "image/png",
            full(),
            Expect::Refused(RefusalReason::DimensionsTooLarge),
        ),
        ("png 0x0", png(0, 0, 0, &zlib_zeros(16)), "image/png", full(), Expect::Refused(RefusalReason::Undecodable)),
        (
            "jpeg 65535x65535",
            jpeg_declaring(65_535, 65_535),
            "image/jpeg",
            full(),
            Expect::Refused(RefusalReason::DimensionsTooLarge),
        ),
        (
            "jpeg 29000x29000 (841 MP)",
            jpeg_declaring(29_000, 29_000),
            "image/jpeg",
            header(),
            Expect::Refused(RefusalReason::DimensionsTooLarge),
        ),
        (
            "gif 65535x65535 screen",
            gif(65_535, 65_535, 1),
            "image/gif",
            full(),
            Expect::Refused(RefusalReason::DimensionsTooLarge),
        ),
        (
            "webp VP8L 16383x16383 (268 MP)",
            webp_vp8l_declaring(16_383),
            "image/webp",
            full(),
            Expect::Refused(RefusalReason::DimensionsTooLarge),
        ),
        // image-webp 0.2.4 computes the side as (1 + bits) & 0x3FFF: 16384 wraps to 0, an empty
        // canvas, refused as undecodable (safe, if not the words one would choose).
        (
            "webp VP8L 16384x16384",
            webp_vp8l_declaring(16_384),
            "image/webp",
            full(),
            Expect::Refused(RefusalReason::Undecodable),
        ),
        (
            "webp VP8X 20000x20000 (400 MP)",
            webp_vp8x_declaring(20_000),
            "image/webp",
            full(),
            Expect::Refused(RefusalReason::DimensionsTooLarge),
        ),
        // image-webp refuses a canvas this size itself ("Image too large", a format error).
        (
            "webp VP8X 2^24 x 2^24",
            webp_vp8x_declaring(1 << 24),
            "image/webp",
            full(),
            Expect::Refused(RefusalReason::Undecodable),
        ),
        // Thousands of frames: the first frame is what a still image is; the animation check
        // stops at the second frame.
        (
            "gif 5000 frames, full decode",
            gif(64, 64, 5000),
            "image/gif",
            full(),
            Expect::Admitted { width: 64, height: 64 },
        ),
        (
            "gif 5000 frames, openai (still only)",
            gif(64, 64, 5000),
            "image/gif",
            opts(Verify::Full, true, Provider::Openai),
            Expect::Refused(RefusalReason::MimeUnsupported),
        ),
        (
            "gif 5000 frames on a 7000x7000 screen",
            gif(7000, 7000, 5000),
            "image/gif",
            opts(Verify::Header, true, Provider::Openai),
            Expect::AnyVerdict,
        ),
        // Inside the pixel bounds: decoded (49 MB of grey) and fit to 2000x2000.
        (
            "png zlib bomb 7000x7000, header + downsample",
            png_zlib_bomb_within_bounds(),
            "image/png",
            header(),
            Expect::Admitted { width: 2000, height: 2000 },
        ),
        (
            "png zlib bomb 7000x7000, full + downsample",
            png_zlib_bomb_within_bounds(),
            "image/png",
            full(),
            Expect::Admitted { width: 2000, height: 2000 },
        ),
        ("png 16x16 with 1 GiB of zlib", png_zlib_overlong(), "image/png", full(), Expect::AnyVerdict),
    ];

    let reset = reset_peak_rss();
    let before = rss();
    let mut largest_guest = 0usize;
    for (name, bytes, mime, options, expect) in &cases {
        let (result, guest_peak) = admit(&gate, bytes, mime, *options).await;
        largest_guest = largest_guest.max(guest_peak);
        let verdict = result.unwrap_or_else(|e| panic!("{name}: a verdict, not a failed call: {e}"));
        eprintln!(
            "{name}: {} bytes -> {} (guest memory peak {:.1} MiB)",
            bytes.len(),
            match &verdict {
                Verdict::Admitted(a) => format!("admitted {:?} {} b64 bytes", a.dimensions, a.base64_len),
                Verdict::Refused(r) => format!("refused {}: {}", r.reason.as_str(), r.message),
            },
            mib(guest_peak as u64)
        );
        match (expect, &verdict) {
            (Expect::Refused(reason), Verdict::Refused(r)) => {
                assert_eq!(r.reason, *reason, "{name}: {}", r.message);
                assert!(!r.message.is_empty());
            }
            (Expect::Admitted { width, height }, Verdict::Admitted(a)) => {
                let d = a.dimensions.expect("measured dimensions");
                assert_eq!((d.width, d.height), (*width, *height), "{name}");
                assert!(a.base64_len <= 5_242_880);
            }
            (Expect::AnyVerdict, _) => {}
            _ => panic!("{name}: expected {expect:?}, got {verdict:?}"),
        }
    }
    assert_next_call_succeeds(&gate).await;

    // Calls ran one at a time, so the host's peak is its baseline plus one call's guest linear
    // memory — which lives in this process and is capped by Limits::memory_bytes (512 MiB by
    // default) — plus the host-side copies of one file and one verdict (a few MiB). The costliest
    // call here is the still-GIF check of the 7000x7000 animation (two RGBA canvases, ~375 MiB):
    // bounded by the limit, far below what the files would cost decoded without the gate (the
    // 20000x20000 RGBA PNG alone: 1.5 GiB; the 16384² WebP: 1 GiB), and given back after the call.
    let limit = Limits::default().memory_bytes as u64;
    let slack = 64 << 20;
    let peak = peak_rss();
    let growth = peak.saturating_sub(before);
    let after = rss();
    eprintln!(
        "host RSS before {:.1} MiB, peak {:.1} MiB{} (growth {:.1} MiB), after {:.1} MiB; largest guest memory {:.1} MiB",
        mib(before),
        mib(peak),
        if reset { "" } else { " (whole-life peak: clear_refs refused)" },
        mib(growth),
        mib(after),
        mib(largest_guest as u64)
    );
    assert!(largest_guest as u64 <= limit, "the memory limit bounds every call");
    if reset {
        assert!(growth < limit + slack, "host RSS grew by {:.1} MiB", mib(growth));
    }
    assert!(after < before + slack, "the guest's memory is given back: {:.1} -> {:.1} MiB", mib(before), mib(after));
}

fn gate_with(limits: Limits) -> Gate {
    let runtime = Runtime::new(RuntimeConfig { limits, ..runtime_config() }).unwrap();
    Gate::new(runtime).unwrap()
}

#[tokio::test]
async fn a_bomb_over_the_memory_limit_traps_that_call_only() {
    let _serial = SERIAL.lock().await;
    // The fit decodes a canvas row by row, holding a window of rows and the fitted image: 16 MiB
    // cannot hold the fitted 2000² RGBA image (15.3 MiB) and its encoding, so the guest traps out
    // of memory.
    let gate = gate_with(Limits { memory_bytes: 16 << 20, ..Limits::default() });
    let side = 7000u32;
    let bomb = png(side, side, 6, &zlib_zeros(u64::from(side) * u64::from(4 * side + 1)));
    let (result, _) = admit(&gate, &bomb, "image/png", full()).await;
    let err = result.expect_err("the fit cannot fit in 16 MiB");
    assert!(matches!(err, CallError::OutOfMemory { limit_mib: 16 }), "{err}");
    assert!(err.to_string().contains("out of memory"), "{err}");
    assert_next_call_succeeds(&gate).await;
}

#[tokio::test]
async fn a_bomb_that_outruns_the_deadline_is_interrupted() {
    let _serial = SERIAL.lock().await;
    let gate = gate_with(Limits { cpu_deadline: Duration::from_millis(30), ..Limits::default() });
    let bomb = png_zlib_bomb_within_bounds();
    let (result, _) = admit(&gate, &bomb, "image/png", full()).await;
    let err = result.expect_err("inflating 49 MB and resizing it takes longer than 30 ms");
    assert!(matches!(err, CallError::DeadlineExceeded(_)), "{err}");
    assert!(err.to_string().contains("CPU deadline"), "{err}");
    assert_next_call_succeeds(&gate).await;
}
