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
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let code = rt.block_on(async {
        match command {
            Command::Once(command) => cli::run(command).await,
            Command::Server(ServerCommand::Mcp(args)) => servers::mcp::mcp(args).await,
            Command::Server(ServerCommand::Proxy(args)) => servers::proxy::proxy(args).await,
        }
    });
    code.into()
}
