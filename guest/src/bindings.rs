//! The component binding: converts between the WIT types and the gate's own. No logic lives here.
//! `admission.rs` is the `admission` interface (every world), `agent_tool.rs` the `read_image`
//! tool and the workspace entry (the `agent-tool` world), `http_gate.rs` the HTTP service.

#[cfg(not(any(feature = "agent-tool", feature = "convert")))]
wit_bindgen::generate!({ world: "preflight", path: "../wit" });
// `convert` without `agent-tool`: the pure gate with the converters (imports nothing).
#[cfg(all(feature = "convert", not(feature = "agent-tool")))]
wit_bindgen::generate!({ world: "convert", path: "../wit" });
// The WASI interfaces the world imports (the filesystem preopen and the types it uses) are generated
// here from the vendored `wit/deps/`, like the world's own interfaces.
#[cfg(feature = "agent-tool")]
wit_bindgen::generate!({ world: "agent-tool", path: "../wit", generate_all });

struct Component;

mod admission;
#[cfg(feature = "agent-tool")]
mod agent_tool;

export!(Component);
