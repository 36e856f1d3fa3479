//! The gate's fixed numbers (docs/design.md §2). Provider-specific numbers live in `profile`.

/// Read cap without a downsampler: 5 MiB.
pub const RAW_CAP: u64 = 5 * 1024 * 1024;
/// Read cap with a downsampler: a sanity bound against memory exhaustion.
pub const RAW_CAP_DOWNSAMPLE: u64 = 64 * 1024 * 1024;
/// Images at most this large (and within `FIT_SIDE`) pass through the downsampler unchanged.
pub const PASS_THROUGH_RAW: u64 = 3_932_160; // 3.75 MiB
/// The downsampler fits images inside this square.
pub const FIT_SIDE: u32 = 2000;
/// The last rung of the ladder fits inside this square.
pub const LAST_RESORT_SIDE: u32 = 1000;
/// JPEG qualities tried in turn when the kept format does not fit.
pub const JPEG_LADDER: [u8; 4] = [80, 60, 40, 20];
/// PDF documents: 20 MiB raw (≈ 27 MiB base64, under a 32 MB request).
pub const PDF_RAW_CAP: u64 = 20 * 1024 * 1024;

/// Strict decoder limits, checked from the header before any pixel is decoded, so a small file
/// that declares a huge canvas is refused instead of decoded.
pub const DECODE_MAX_SIDE: u32 = 30_000;
pub const DECODE_MAX_PIXELS: u64 = 50_000_000;
/// Bound on what one decode may allocate.
pub const DECODE_MAX_ALLOC: u64 = 512 * 1024 * 1024;
