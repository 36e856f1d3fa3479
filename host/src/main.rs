//! `mediagate`: check an image or document before it reaches a model, admit a tool's result, and
//! run the `read_image` tool; serve it over MCP, or put the gate in front of an MCP server.

mod cli;
mod servers;

use cli::{Command, ServerCommand};

fn main() -> std::process::ExitCode {
    let command = match cli::parse() {
        Ok(command) => command,
        Err(code) => return code.into(),
    };
    // A command that judges many inputs at once runs its calls on that many worker threads; the
    // others (one call, or servers whose calls yield to each other) on this thread alone.
    let workers = match &command {
        Command::Once(once) => once.worker_threads(),
        Command::Server(_) => None,
    };
    let rt = match workers {
        Some(n) => tokio::runtime::Builder::new_multi_thread().worker_threads(n).enable_all().build(),
        None => tokio::runtime::Builder::new_current_thread().enable_all().build(),
    }
    .expect("tokio runtime");
    let code = rt.block_on(async {
        match command {
            Command::Once(command) => cli::run(command).await,
            Command::Server(ServerCommand::Mcp(args)) => servers::mcp::mcp(args).await,
            Command::Server(ServerCommand::Proxy(args)) => servers::proxy::proxy(args).await,
        }
    });
    code.into()
}
