//! `mediagate`: check an image or document before it reaches a model, admit a tool's result, and
//! run the `read_image` tool; serve it over MCP, or put the gate in front of an MCP server.

mod commands;
mod process;
mod servers;

use commands::Command;

fn main() -> std::process::ExitCode {
    // Help, and every command that runs once, end as Unix filters do when their reader goes away
    // (`mediagate admit -r shots --jsonl | head -1`): SIGPIPE at the next write ends the process
    // quietly, with the shell's 128+13. Rust ignores SIGPIPE, which turns that write into a
    // `BrokenPipe` error, and `println!`/`eprintln!` into a panic (exit 101); the signal covers
    // every writer at once (stdout, stderr, the progress bar, clap's help) where handling the error
    // would take every print site. The servers keep the error instead: the proxy writes to the MCP
    // server it started and the MCP server to its client, and a peer that goes away is something
    // each reports and survives, not a reason to die.
    closed_pipe_ends_the_process(true);
    let command = match commands::parse() {
        Ok(command) => command,
        Err(code) => return code.into(),
    };
    // A command that judges many inputs at once runs its calls on that many worker threads; the
    // others (one call, or servers whose calls yield to each other) on this thread alone.
    let workers = match &command {
        Command::Once(once) => once.worker_threads(),
        Command::Server(_) => {
            closed_pipe_ends_the_process(false);
            None
        }
    };
    let rt = match workers {
        Some(n) => tokio::runtime::Builder::new_multi_thread().worker_threads(n).enable_all().build(),
        None => tokio::runtime::Builder::new_current_thread().enable_all().build(),
    }
    .expect("tokio runtime");
    let code = rt.block_on(async {
        match command {
            Command::Once(command) => commands::run(command).await,
            Command::Server(command) => commands::serve(command).await,
        }
    });
    code.into()
}

/// SIGPIPE's default action (end the process) when `on`, else ignored (a write to a closed pipe
/// fails with `BrokenPipe`), as Rust's runtime set it before `main`. Set before any other thread
/// starts.
fn closed_pipe_ends_the_process(on: bool) {
    let action = if on { libc::SIG_DFL } else { libc::SIG_IGN };
    // SAFETY: `signal` with SIG_DFL or SIG_IGN installs no handler code; called from the one
    // thread the process has at this point.
    unsafe {
        libc::signal(libc::SIGPIPE, action);
    }
}
