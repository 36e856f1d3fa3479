//! SVG → pixels (engineer "svg" writes this file; a placeholder until their branch lands).

use crate::verdict::{Reason, Refusal};

/// Render `bytes` fitted into `max_side`² (aspect kept).
pub fn render(bytes: &[u8], max_side: u32) -> Result<image::RgbaImage, Refusal> {
    let _ = max_side;
    Err(Refusal::new(Reason::MimeUnsupported, bytes.len() as u64, None, "the SVG renderer is not built yet"))
}
