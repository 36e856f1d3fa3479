//! Host-side bindings of the two worlds in `wit/`.

pub mod preflight {
    wasmtime::component::bindgen!({
        world: "preflight",
        path: "../wit",
        exports: { default: async },
    });
}

pub mod agent_tool {
    wasmtime::component::bindgen!({
        world: "agent-tool",
        path: "../wit",
        imports: { default: async },
        exports: { default: async },
        with: {
            "mediagate:gate/vlm.reply": crate::vlm::ReplyStream,
        },
    });
}
