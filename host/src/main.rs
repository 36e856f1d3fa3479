//! `mediagate`: check an image or document before it reaches a model, admit a tool's result, and
//! run the `read_image` tool.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
