//! Host-side bindings of `wit/`. Generated once, for the `agent-tool` world: the `preflight`
//! component exports the same `admission` interface, so the gate loads it with the same types.
//! The WASI interfaces the world imports (the filesystem preopen and what its types use) are
//! wasmtime-wasi's own bindings, so the tool's linker is wasmtime-wasi's implementation.

wasmtime::component::bindgen!({
    world: "agent-tool",
    path: "wit", // host/wit -> ../wit in the repository; a copy in the published crate
    imports: { default: async },
    exports: { default: async },
    with: {
        "mediagate:gate/vlm.reply": crate::vlm::ReplyStream,
        "wasi": wasmtime_wasi::p2::bindings,
    },
});
