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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub downsample: bool,
    pub provider: Provider,
    pub verify: Verify,
}

impl Default for Options {
    fn default() -> Self {
        Options { downsample: true, provider: Provider::Anthropic, verify: Verify::Full }
    }
}
