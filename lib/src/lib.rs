//! mediagate's library: runs the guest component once per call in a wasmtime sandbox. The
//! `mediagate` command, its MCP server and its proxy are the `mediagate-cli` crate, built on this
//! one's public API.
//!
//! - [`gate::Gate`]: the admission gate (the `preflight` component).
//! - [`tool::ReadImageTool`]: the `read_image` tool (the `agent-tool` component).
//! - [`vlm`]: the streaming VLM client the tool's imports use.
//! - [`runtime::Runtime`]: the engine, the compiled-component cache and per-call limits.
//!
//! # The first build is long
//!
//! A first build of this crate (`cargo install mediagate-cli`, or a project that depends on it)
//! compiles wasmtime and Cranelift, and its build script precompiles the four components it
//! embeds to native code: 16 minutes on a 2-core machine. Cargo compiles wasmtime twice there: once
//! optimised for the library, once unoptimised for the build script (cargo's default
//! `[profile.release.build-override]`); this repository's workspace `Cargo.toml` sets that profile
//! equal to the release one, so its builds compile wasmtime once. Later builds reuse everything.
//! The examples and the guide: `docs/embedding.md`.

mod bindings;
pub mod cache;
pub mod component;
mod engine_config;
pub mod error;
pub mod facts;
pub mod gate;
#[cfg(target_os = "linux")]
pub mod huge_pages;
pub mod runtime;
pub mod tool;
pub mod vlm;

pub use error::CallError;
pub use gate::Gate;
pub use runtime::{Answered, CallStats, Limits, Runtime, RuntimeConfig};
pub use tool::ReadImageTool;
pub use vlm::{Api, VlmConfig};
