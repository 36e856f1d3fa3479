//! The end-to-end tests: the real component through the real host, the real `mediagate` binary,
//! real loopback servers. One test binary (wasmtime and Cranelift linked once), one module per
//! subject; run one module with a filter, e.g. `cargo test --release -p mediagate-cli --test e2e cli::`.
//!
//! Tests that measure this process (resident memory, open file descriptors) run alone in a child
//! process of this binary (`common::isolated`), so the tests running beside them do not count.

mod common;

mod bombs;
mod bulk;
mod cli;
mod cli_hygiene;
mod cli_inputs;
mod cli_walks;
mod convert;
mod convert_bounds;
mod docs;
mod embedding;
mod entry;
mod gate;
mod hostile_workspace;
mod load;
mod mcp_server;
mod module_graph;
mod mutation;
mod read_image;
mod runaway_vlm;
mod vlm_faults;
