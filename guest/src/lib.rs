//! mediagate's guest: the admission gate (and, with the `agent-tool` feature, the `read_image`
//! tool) as plain Rust, unit-tested natively. `bindings` is the thin wit-bindgen layer that makes
//! it a WASI component.

pub mod container;
pub mod convert;
pub mod entry;
pub mod gate;
pub mod http_gate;
pub mod image_admission;
pub mod judged_type;
pub mod limits;
pub mod options;
pub mod profile;
pub mod remux;
pub mod repairs;
pub mod signature;
pub mod tool;
pub mod verdict;
pub mod verdict_json;
pub mod walks;

#[cfg(test)]
mod alloc_meter;
#[cfg(all(target_arch = "wasm32", not(feature = "http-gate")))]
mod bindings;
mod cpu_kernels;
#[cfg(target_arch = "wasm32")]
mod heap;
/// The `http-gate` world exports no admission interface: its binding is the `wasi:http` handler alone.
#[cfg(all(target_arch = "wasm32", feature = "http-gate"))]
#[path = "bindings/http_gate.rs"]
mod http_bindings;
#[cfg(test)]
mod test_deadline;
#[cfg(test)]
mod test_images;
#[cfg(test)]
mod test_oracles;

/// See `heap`: a small call runs in the memory the module starts with.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static HEAP: heap::Heap = heap::Heap::new();

pub use gate::document::admit_document;
pub use image_admission::admit_image;
pub use options::{Options, Verify};
pub use profile::{Api, Provider};
pub use signature::sniff;
pub use walks::admit_request;
pub use walks::tool_result::admit_tool_result;
