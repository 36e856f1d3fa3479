//! The long-running commands, `mcp` and `proxy`: their arguments, made into the servers'
//! configurations (`crate::servers`), which [`serve`] starts.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::read_image::VlmArgs;
use super::{Calls, GateArgs, gate};
use crate::servers::mcp::{McpConfig, mcp};
use crate::servers::proxy::{ProxyConfig, proxy};

#[derive(Subcommand)]
pub enum ServerCommand {
    /// Serve the read_image and view_image tools to MCP clients (agent hosts) over stdio.
    #[command(after_help = help_footer!(
        "    mediagate mcp --workspace .\n    \
         mediagate mcp --vlm-url http://127.0.0.1:11434/v1 --vlm-model qwen2.5vl:7b",
        "0 the client closed the session, 2 the server could not start or the session broke (usage, workspace, \
         sandbox, protocol)."
    ))]
    Mcp(McpArgs),
    /// Run an MCP server behind the gate: every image or PDF in what it sends (tool results,
    /// resources, prompts) is admitted, downsampled or replaced by the reason before the client sees it.
    #[command(after_help = help_footer!(
        "    mediagate proxy -- npx -y @modelcontextprotocol/server-filesystem .\n    \
         mediagate proxy --convert --profile openai -- python my_server.py",
        "0 the client ended the session, 1 the server ended it (closed its output, or sent what the proxy cannot \
         relay), 2 the server could not be started (usage, sandbox)."
    ))]
    Proxy(ProxyArgs),
}

#[derive(Args)]
pub struct McpArgs {
    /// The directory the tools may read; nothing outside it is reachable. Without it: the roots the
    /// client offers, else the directory the server starts in — never `/` or the home directory.
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    #[command(flatten)]
    pub vlm: VlmArgs,
    /// Memory for all calls' sandboxes together, in MiB. Calls run at once up to this divided by
    /// one call's memory limit (512 MiB); more wait their turn.
    #[arg(long, value_name = "MIB", default_value_t = (mediagate::facts::MEMORY_BUDGET_BYTES >> 20) as u64)]
    pub memory_budget: u64,
    /// Calls that may wait for their turn; past this a call is answered at once that the server is busy.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_queued: usize,
    /// view_image admits the file's metadata (EXIF, XMP, comments, text chunks) as given instead
    /// of dropping it from the gate's canonical form.
    #[arg(long)]
    pub keep_metadata: bool,
}

#[derive(Args)]
pub struct ProxyArgs {
    #[command(flatten)]
    pub gate: GateArgs,
    /// Answer a request the server has not answered within this many seconds with an error, and
    /// cancel it downstream (0: wait for ever).
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
    /// The largest message, in bytes, either side may send; larger ones are answered with an error.
    #[arg(long, default_value_t = 64 * 1024 * 1024)]
    pub max_message: usize,
    /// The MCP server to start, and its arguments (after `--`).
    #[arg(last = true, required = true, num_args = 1..)]
    pub command: Vec<OsString>,
}

/// Starts the server `command` asks for; its exit code.
pub async fn serve(command: ServerCommand) -> u8 {
    match command {
        ServerCommand::Mcp(args) => {
            mcp(McpConfig {
                workspace: args.workspace,
                vlm: args.vlm.resolve(),
                memory_budget_mib: args.memory_budget,
                max_queued: args.max_queued,
                keep_metadata: args.keep_metadata,
            })
            .await
        }
        ServerCommand::Proxy(args) => {
            // One gate call at a time: the proxy gates answers in order, in one loop.
            let gate = match gate(Calls::Many { instances: 1 }) {
                Ok(g) => g,
                Err(code) => return code,
            };
            let config = ProxyConfig {
                options: args.gate.options(),
                convert: args.gate.convert,
                timeout: (args.timeout > 0).then(|| std::time::Duration::from_secs(args.timeout)),
                max_message: args.max_message,
                command: args.command,
            };
            proxy(gate, config).await
        }
    }
}
