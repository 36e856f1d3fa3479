//! What a caller asks of the gate.

use crate::profile::Provider;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Verify {
    /// Read the declared dimensions from the header; decode no pixels.
    #[default]
    Header,
    /// Decode every pixel in the sandbox.
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
        Options { downsample: true, provider: Provider::Anthropic, verify: Verify::Header }
    }
}
