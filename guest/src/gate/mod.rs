//! The gate's rules for one input, as plain Rust: an image (`image`: claimed type, raw size,
//! signature, header, the downsample and the provider's base64 limit, in that order) read through
//! `decode` under the decoder limits and fitted by `downsample` (with `row_resize`; a baseline
//! JPEG's planes from `crate::remux::jpeg_planes`; PNGs at the slower levels written by `png_rows`), and a
//! PDF (`document`, its structure walked by `pdf_structure`). What no provider takes is converted
//! first, above these rules (`crate::image_admission`); the re-mux to the canonical form is
//! `crate::remux`, the container walk both use `crate::container`.

pub mod decode;
pub mod document;
pub mod downsample;
pub mod image;
pub mod pdf_structure;
pub(crate) mod planar_jpeg;
pub(crate) mod png_rows;
pub(crate) mod row_resize;
