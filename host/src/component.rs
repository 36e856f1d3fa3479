//! The guest components, built by `build.rs` and embedded so the binary is self-contained.

/// The pure `preflight` world: the admission gate.
pub const PREFLIGHT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mediagate-preflight.wasm"));

/// The `agent-tool` world: the gate plus `read_image`, with the workspace, VLM and output imports.
pub const AGENT_TOOL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mediagate-agent-tool.wasm"));

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum World {
    Preflight,
    AgentTool,
}

impl World {
    pub fn bytes(self) -> &'static [u8] {
        match self {
            World::Preflight => PREFLIGHT,
            World::AgentTool => AGENT_TOOL,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            World::Preflight => "preflight",
            World::AgentTool => "agent-tool",
        }
    }
}
