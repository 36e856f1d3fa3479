//! mediagate's host: runs the guest component once per call in a wasmtime sandbox.
//!
//! - [`gate::Gate`]: the admission gate (the `preflight` component).
//! - [`tool::ReadImageTool`]: the `read_image` tool (the `agent-tool` component).
//! - [`vlm`]: the streaming VLM client the tool's imports use.
//! - [`runtime::Runtime`]: the engine, the compiled-component cache and per-call limits.

mod bindings;
pub mod cache;
pub mod component;
mod engine_config;
pub mod error;
pub mod gate;
pub mod runtime;
pub mod tool;
pub mod vlm;

pub use error::CallError;
pub use gate::Gate;
pub use runtime::{Limits, Runtime, RuntimeConfig};
pub use tool::ReadImageTool;
pub use vlm::{Api, VlmConfig};
