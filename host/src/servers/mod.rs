//! The long-running commands: `mediagate mcp`, the MCP server on stdio (`mcp`: the tools, the
//! workspace from the client's roots, the stdio framing in front of rmcp), and `mediagate proxy`,
//! the gate in front of any stdio MCP server (`proxy`: the relay, and the one-pass inspection of
//! each server message). Their arguments and exit codes are the command line's (`crate::cli`).

pub mod mcp;
pub mod proxy;
