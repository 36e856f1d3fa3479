//! The guest components, built by `build.rs` and embedded so the binary is self-contained.

/// The pure `preflight` world: the admission gate.
pub const PREFLIGHT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mediagate-preflight.wasm"));

/// The `convert` world: the gate plus the `conversion` interface (the converters); imports nothing.
/// Loaded only when a caller converts, so the preflight path never compiles or instantiates it.
pub const CONVERT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mediagate-convert.wasm"));

/// The `agent-tool` world: the gate plus `read_image`, with the workspace, VLM and output imports.
pub const AGENT_TOOL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mediagate-agent-tool.wasm"));

/// The `http-gate` world: the gate as a `wasi:http/proxy` service. The host does not run it (no
/// precompiled code); `mediagate component --world http-gate` writes it for an HTTP engine.
pub const HTTP_GATE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mediagate-http-gate.wasm"));

/// The three components compiled to native code at build time (`build.rs`) with this binary's engine
/// settings for a baseline CPU of its target; empty when the build could not precompile them.
/// `Runtime::load` deserialises these instead of compiling.
const PREFLIGHT_PRECOMPILED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mediagate-preflight.cwasm"));
const CONVERT_PRECOMPILED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mediagate-convert.cwasm"));
const AGENT_TOOL_PRECOMPILED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/mediagate-agent-tool.cwasm"));

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum World {
    Preflight,
    Convert,
    AgentTool,
}

impl World {
    pub fn bytes(self) -> &'static [u8] {
        match self {
            World::Preflight => PREFLIGHT,
            World::Convert => CONVERT,
            World::AgentTool => AGENT_TOOL,
        }
    }

    /// The world whose embedded component `wasm` is, if it is one the host runs.
    pub fn of(wasm: &[u8]) -> Option<World> {
        [World::Preflight, World::Convert, World::AgentTool].into_iter().find(|world| {
            let own = world.bytes();
            (std::ptr::eq(own.as_ptr(), wasm.as_ptr()) && own.len() == wasm.len()) || own == wasm
        })
    }

    /// This world's precompiled code as carried in the binary (empty if the build made none).
    pub fn precompiled(self) -> &'static [u8] {
        match self {
            World::Preflight => PREFLIGHT_PRECOMPILED,
            World::Convert => CONVERT_PRECOMPILED,
            World::AgentTool => AGENT_TOOL_PRECOMPILED,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            World::Preflight => "preflight",
            World::Convert => "convert",
            World::AgentTool => "agent-tool",
        }
    }
}
