//! An image's admission as every caller asks for it: what no provider takes converted first when
//! the caller asks (and HEIC/AVIF refused in words that say what to do), else the image rules.
//! It sits above both: the converters judge the PNG they made by the image rules alone.

use crate::gate::decode::Budget;
use crate::options::Options;
use crate::verdict::Verdict;

pub fn admit_image(bytes: &[u8], claimed_mime: &str, options: &Options) -> Verdict {
    let mut budget = Budget::UNLIMITED;
    admit_image_within(bytes, claimed_mime, options, &mut budget)
}

/// The admission, charging the pixels it decodes to `budget`.
pub fn admit_image_within(bytes: &[u8], claimed_mime: &str, options: &Options, budget: &mut Budget) -> Verdict {
    crate::convert::admit_converting_within(bytes, claimed_mime, options, budget)
        .unwrap_or_else(|| crate::gate::image::admit_image_within(bytes, claimed_mime, options, budget))
}
