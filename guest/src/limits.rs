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
/// A PDF whose page objects sit in compressed object streams is looked into by inflating those
/// streams, at most this many bytes in all (object streams hold dictionaries: kilobytes to a few
/// MB in real files; a zlib bomb is refused, not inflated).
pub const PDF_OBJECT_STREAMS_INFLATE_MAX: usize = 32 * 1024 * 1024;

/// Strict decoder limits, checked from the header before any pixel is decoded, so a small file
/// that declares a huge canvas is refused instead of decoded.
pub const DECODE_MAX_SIDE: u32 = 30_000;
pub const DECODE_MAX_PIXELS: u64 = 50_000_000;
/// Bound on what one decode may allocate: the decoded pixels (width × height × bytes per pixel)
/// must fit, with room left in a 512 MiB instance for the input, the resize and the output.
/// 50 MP of 8-bit RGBA fits; a 16-bit 7071² PNG (300 MB) does not.
pub const DECODE_MAX_ALLOC: u64 = 200_000_000;
/// The GIF re-mux decodes every frame's LZW data (so no frame a strict decoder stops on is
/// admitted): at most this many frame pixels in all, a few hundred milliseconds of the guest's
/// CPU. A long animation is tens of millions; more is a decoding-time bomb.
pub const GIF_FRAMES_MAX_PIXELS: u64 = 400_000_000;

/// PNG metadata chunks that are zlib-compressed (`iCCP`, `zTXt`, `iTXt`) may inflate to at most
/// this many bytes in all: an ICC profile or a comment is kilobytes, a bomb is gigabytes.
pub const ANCILLARY_INFLATE_MAX: usize = 8 * 1024 * 1024;
/// A progressive JPEG has about ten scans; each scan is a pass of the decoder over the image.
pub const JPEG_MAX_SCANS: usize = 100;

/// The tool-result seat reads at most this much JSON text (a request to Anthropic is at most
/// 32 MB; an over-large result is refused whole, unread).
pub const TOOL_RESULT_MAX_BYTES: u64 = 48 * 1024 * 1024;
/// JSON nesting the seat follows; deeper content is refused whole.
pub const TOOL_RESULT_MAX_DEPTH: usize = 128;
/// Base64 the admitted media of one tool result may carry in all (a whole request to Anthropic
/// is at most 32 MB); blocks past it are refused in their slots.
pub const TOOL_RESULT_BASE64_BUDGET: u64 = 32 * 1024 * 1024;
/// Pixels one tool result may have decoded in all (about twenty 12 MP photos): the CPU bound of
/// a result with many large images, reached as refusals, not as the sandbox's deadline.
pub const TOOL_RESULT_PIXEL_BUDGET: u64 = 250_000_000;
/// Images (inline or by URL) one tool result may carry; the ones past it are refused in their
/// slots. A tool result reaches the model inside one request, and Anthropic takes at most 100
/// images per request (`profile::ANTHROPIC_REQUEST`, the fewest of the APIs): a result with more
/// could never be sent whole, and each block is work for the gate.
pub const TOOL_RESULT_MAX_IMAGES: u32 = 100;

/// The largest size inside `side`×`side` with the same aspect; never larger than the original.
pub fn fit_inside(width: u32, height: u32, side: u32) -> (u32, u32) {
    if width <= side && height <= side {
        return (width, height);
    }
    let scale = f64::from(side) / f64::from(width.max(height));
    let w = ((f64::from(width) * scale).round() as u32).clamp(1, side);
    let h = ((f64::from(height) * scale).round() as u32).clamp(1, side);
    (w, h)
}
