//! mediagate's host: runs the guest component once per call in a wasmtime sandbox.
//!
//! - [`gate::Gate`]: the admission gate (the `preflight` component).
//! - [`runtime::Runtime`]: the engine, the compiled-component cache and per-call limits.

mod bindings;
pub mod cache;
pub mod component;
pub mod error;
pub mod gate;
pub mod runtime;
pub mod vlm;

pub use error::CallError;
pub use gate::Gate;
pub use runtime::{Limits, Runtime, RuntimeConfig};
