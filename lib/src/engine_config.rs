//! The engine settings that decide what compiled code looks like, in one place: `runtime.rs`
//! builds the process's `Engine` from them and `build.rs` (which includes this file with
//! `#[path]`) precompiles the carried components with them. Settings that only change how
//! instances are allocated (the pooling allocator, its sizes) do not change the compiled code
//! and stay in `runtime.rs`.
//!
//! This file may use only `wasmtime`: the build script compiles it too.

/// The code-shaping settings: epoch interruption (the CPU deadline), the component model, a 1 MiB
/// wasm stack.
pub fn code_config() -> wasmtime::Config {
    let mut config = wasmtime::Config::new();
    config.epoch_interruption(true);
    config.wasm_component_model(true);
    config.max_wasm_stack(1 << 20);
    config
}
