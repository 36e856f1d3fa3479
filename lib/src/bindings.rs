//! Host-side bindings of `wit/`. Generated once, for the `agent-tool` world: the `preflight`
//! component exports the same `admission` interface, so the gate loads it with the same types.
//! The WASI interfaces the world imports (the filesystem preopen and what its types use) are
//! wasmtime-wasi's own bindings, so the tool's linker is wasmtime-wasi's implementation.

wasmtime::component::bindgen!({
    world: "agent-tool",
    path: "wit", // lib/wit -> ../wit in the repository; a copy in the published crate
    // A host failure in an import (the resource table) traps the call instead of posing as a
    // VLM error; the VLM's own errors are the contract's `vlm-error`.
    imports: { default: async | trappable },
    exports: { default: async },
    // Verdicts, options and chunks compare (tests, callers' own checks).
    additional_derives: [PartialEq, Eq],
    // The `reply` resource is left to the generated type: the host keeps a `vlm::ReplyStream` in
    // the call's resource table under the handle's index (`tool.rs`), so these bindings name no
    // host type and every host module can use them without being used back.
    with: {
        "wasi": wasmtime_wasi::p2::bindings,
    },
});
