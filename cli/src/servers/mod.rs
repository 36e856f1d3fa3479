//! The long-running commands: `mediagate mcp`, the MCP server on stdio (`mcp`: the tools, the
//! workspace from the client's roots, the stdio framing in front of rmcp), and `mediagate proxy`,
//! the gate in front of any stdio MCP server (`proxy`: the relay, and the one-pass inspection of
//! each server message). Both read their peers through one bounded line framing (`lines`). Each
//! takes its configuration as a value (the command line makes it from its flags); the process's
//! sandbox, error reports and exit codes are `crate::process`'s. Nothing here reads the command
//! line.

mod lines;
pub mod mcp;
pub mod proxy;
