//! PDF pages → pixels (engineer "pdf" writes this file; a placeholder until their branch lands).

use super::PageError;
use crate::verdict::{Reason, Refusal};

fn not_built(bytes: &[u8]) -> PageError {
    PageError::Refused(Refusal::new(
        Reason::MimeUnsupported,
        bytes.len() as u64,
        None,
        "the PDF renderer is not built yet",
    ))
}

/// The number of pages.
pub fn page_count(bytes: &[u8]) -> Result<u32, PageError> {
    Err(not_built(bytes))
}

/// Page `page` (1-based) fitted into `max_side`², and a note in words.
pub fn render_page(bytes: &[u8], page: u32, max_side: u32) -> Result<(image::RgbaImage, String), PageError> {
    let _ = (page, max_side);
    Err(not_built(bytes))
}
