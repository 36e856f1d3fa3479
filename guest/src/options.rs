//! What a caller asks of the gate.

use crate::profile::Provider;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Verify {
    /// Read the declared dimensions from the header and walk the container; decode no pixels
    /// (unless the downsampler must).
    Header,
    /// Decode every pixel in the sandbox: the default wherever bytes go to a model.
    #[default]
    Full,
}

/// A bound on an image's largest side tighter than its profile's, set by a rule of the request
/// that carries it (Anthropic: 2000 px when a request carries more than 20 images).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SideRule {
    pub max_side: u32,
    /// The rule in words, for the refusal.
    pub why: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub downsample: bool,
    pub provider: Provider,
    pub verify: Verify,
    /// Set by `admit_request` only; never larger than the downsampler's fit (2000 px).
    pub side_rule: Option<SideRule>,
    /// Convert what no provider takes (SVG, BMP, TIFF, ICO, an animated GIF for a profile that
    /// refuses animation) instead of refusing it as `mime_unsupported` (`convert` module). Off
    /// by default: the admission rules stay exact unless a caller asks.
    pub convert: bool,
    /// Admit the image's metadata (EXIF, XMP, IPTC, comments, text and unknown chunks, APNG
    /// animation) as given instead of dropping it from the canonical form (`remux`). Off by
    /// default: no GPS coordinate, camera serial or comment reaches a provider unless asked.
    pub keep_metadata: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            downsample: true,
            provider: Provider::Anthropic,
            verify: Verify::Full,
            side_rule: None,
            convert: false,
            keep_metadata: false,
        }
    }
}
