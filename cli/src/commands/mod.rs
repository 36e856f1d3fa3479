//! The command line: parsing (clap), the commands that run once (one module each) and their output;
//! the long-running servers' arguments (`server_args`), made into the servers' configurations
//! there and handed to `crate::servers`.

mod admit;
mod batch;
mod bulk;
mod input;
mod progress;
mod read_image;
mod report;
mod request;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use mediagate::gate::{AdmitOptions, Provider, Verify};

pub use crate::process::{
    Calls, Code, Exit, Report, fail, gate, gate_for_jobs, gate_reporting, runtime, terminal_text,
};

/// The end of every subcommand's `--help`: examples, the exit status in words, where the docs are.
/// One macro so the wording of the shared parts is written once (clap takes `concat!` literals).
macro_rules! help_footer {
    ($examples:literal, $($exit:tt)+) => {
        concat!(
            "Examples:\n\n",
            $examples,
            "\n\nExit status: ",
            $($exit)+,
            "\n\nDocs: docs/cli.md (every option) and docs/usage.md (the guide) in the mediagate repository."
        )
    };
}

/// [`Exit`] in words, the same for every command's `--help`; `$refused` says what "refused" is for
/// that command.
macro_rules! exit_rule {
    ($refused:literal) => {
        concat!(
            "0 done, nothing refused (downsampled or converted counts as admitted), 1 ",
            $refused,
            ", 2 could not be judged (usage, unreadable or unusable input, an output not written, the \
             sandbox failed)."
        )
    };
}

#[derive(Parser)]
#[command(
    name = "mediagate",
    version,
    about = "The gate an image or PDF passes before it reaches a model",
    after_help = help_footer!(
        "    mediagate admit shot.png\n    mediagate admit -r shots/ --jsonl | head\n    \
         mediagate admit-tool-result --tool shot result.json\n    mediagate COMMAND -h",
        exit_rule!("something refused")
    )
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// After the macros above, which its help texts use.
pub mod server_args;

pub use server_args::{ServerCommand, serve};

/// What the command line asks for: a command that runs once and exits ([`run`]), or one of the
/// long-running servers, which `main` starts (`crate::servers`).
#[derive(Subcommand)]
pub enum Command {
    #[command(flatten)]
    Once(OneShot),
    #[command(flatten)]
    Server(ServerCommand),
}

#[derive(Subcommand)]
pub enum OneShot {
    /// Admit image or PDF files (or stdin with `-`): one, many, or whole directories with -r;
    /// print each verdict (with many: in input order, a summary on stderr).
    #[command(after_help = help_footer!(
        "    mediagate admit shot.png\n    mediagate admit photo.jpg --json --out fitted.jpg\n    \
         cat diagram.svg | mediagate admit - --convert\n    mediagate admit report.pdf --page 2 --out page2.png\n    \
         mediagate admit -r shots/ --jobs 2 --jsonl --out-dir admitted/ > verdicts.jsonl\n    \
         find . -name '*.png' | mediagate admit --files-from - --jsonl",
        exit_rule!("a file refused")
    ))]
    Admit(admit::AdmitArgs),
    /// Admit every media block of a tool's result (JSON from FILE or stdin); print the result with
    /// each refused block replaced in its slot by a text block saying why.
    #[command(after_help = help_footer!(
        "    mediagate admit-tool-result --tool browser_screenshot result.json\n    \
         some-tool | mediagate admit-tool-result --tool some_tool --convert",
        exit_rule!("a block refused (the result is not JSON: 2)")
    ))]
    AdmitToolResult(admit::ToolResultArgs),
    /// Admit every image and document of a whole provider request (JSON from FILE or stdin) and
    /// the API's request-level rules; print the admitted request (changes on stderr).
    #[command(after_help = help_footer!(
        "    mediagate admit-request --api anthropic request.json > admitted.json\n    \
         mediagate admit-request --api openai --profile ollama --json < request.json",
        exit_rule!("a block or the request refused (not a request of that API: 2)")
    ))]
    AdmitRequest(request::RequestArgs),
    /// Admit every request of a Batch API file (OpenAI Batch JSON lines, Anthropic Message
    /// Batches), streamed: the same file out, each request's media admitted in place.
    #[command(after_help = help_footer!(
        "    mediagate admit-batch --api openai batch.jsonl -o admitted.jsonl --report report.jsonl\n    \
         mediagate admit-batch --api anthropic requests.json -o admitted.json --on-refusal drop",
        exit_rule!(
            "a request or block refused (a line that is not a request is refused in its place), a Batch \
             API file rule broken, or stopped by --on-refusal fail"
        )
    ))]
    AdmitBatch(batch::BatchArgs),
    /// Ask a vision model about a workspace image; the reply streams to stdout.
    #[command(after_help = help_footer!(
        "    mediagate read-image shots/error.png --question \"What does the dialog say?\" \\\n      \
         --vlm-url http://127.0.0.1:11434/v1 --vlm-model qwen2.5vl:7b\n    \
         ANTHROPIC_API_KEY=… mediagate read-image chart.png --vlm-api anthropic \\\n      \
         --vlm-url https://api.anthropic.com --vlm-model MODEL",
        exit_rule!(
            "the image refused (not an image, too large, refused by the gate; no file or no vision model, \
             or the model failed: 2)"
        )
    ))]
    ReadImage(read_image::ReadImageArgs),
    /// Write one of the embedded components to a file (for jco, wasmtime-py and other hosts).
    #[command(after_help = help_footer!(
        "    mediagate component --world preflight --out mediagate.wasm\n    \
         mediagate component --world http-gate --out mediagate-http-gate.wasm",
        exit_rule!("(never: nothing is judged)")
    ))]
    Component(ComponentArgs),
}

#[derive(Args, Clone)]
pub struct GateArgs {
    /// Do not downsample: the read cap drops to 5 MiB and oversized images are refused.
    #[arg(long)]
    no_downsample: bool,
    /// The provider whose limits apply [default: the gate's own, anthropic].
    #[arg(long, value_enum)]
    profile: Option<ProfileArg>,
    /// full: decode every pixel in the sandbox; header: read the header and walk the container
    /// only (faster, for bytes that are checked again before they reach a model) [default: the
    /// gate's own, full].
    #[arg(long, value_enum)]
    verify: Option<VerifyArg>,
    /// Convert what no provider takes (SVG, BMP, TIFF, ICO, an animated GIF for a profile that
    /// refuses animation) instead of refusing it as mime_unsupported; the result says so. Runs the
    /// convert component. Off by default: the admission rules stay exact.
    #[arg(long)]
    pub convert: bool,
    /// Admit an image's metadata (EXIF, XMP, IPTC, comments, text chunks, APNG animation) as
    /// given instead of the gate's canonical re-mux without it.
    #[arg(long)]
    pub keep_metadata: bool,
}

impl GateArgs {
    /// The flags as the gate's options: what no flag sets is left to the gate's own defaults (in
    /// the component), so nothing is read from it first.
    pub fn options(&self) -> AdmitOptions {
        flag_options(self.no_downsample, self.profile, self.verify, self.keep_metadata)
    }
}

/// The gate's flags as its options, for either set of them: what no flag sets is left to the gate's
/// own defaults (in the component).
fn flag_options(
    no_downsample: bool,
    profile: Option<ProfileArg>,
    verify: Option<VerifyArg>,
    keep_metadata: bool,
) -> AdmitOptions {
    AdmitOptions {
        downsample: no_downsample.then_some(false),
        provider: profile.map(ProfileArg::provider),
        verify: verify.map(VerifyArg::verify),
        keep_metadata: keep_metadata.then_some(true),
    }
}

/// The gate's flags for whole requests (`admit-request`, `admit-batch`): as [`GateArgs`], but the
/// profile defaults to the request API's own.
#[derive(Args)]
pub struct RequestGateArgs {
    /// The provider whose per-image limits apply; by default the API's own (e.g. `ollama` for an
    /// OpenAI-style request to Ollama).
    #[arg(long, value_enum)]
    profile: Option<ProfileArg>,
    /// full: decode every pixel in the sandbox; header: read the header and walk the container only
    /// [default: the gate's own, full].
    #[arg(long, value_enum)]
    verify: Option<VerifyArg>,
    /// Do not downsample: oversized images are refused (in their slots) instead of fitted.
    #[arg(long)]
    no_downsample: bool,
    /// Admit the images' metadata (EXIF, XMP, comments, text chunks) as given.
    #[arg(long)]
    keep_metadata: bool,
    /// Convert the blocks no provider takes (SVG, BMP, TIFF, ICO, …) instead of refusing them;
    /// the report says so (`conversions`). Runs the convert component.
    #[arg(long)]
    pub convert: bool,
}

impl RequestGateArgs {
    /// The flags as the gate's options; what no flag sets is the gate's default, the profile the
    /// API's own.
    pub fn options(&self) -> AdmitOptions {
        flag_options(self.no_downsample, self.profile, self.verify, self.keep_metadata)
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ProfileArg {
    Anthropic,
    Openai,
    Gemini,
    Ollama,
}

impl ProfileArg {
    pub fn provider(self) -> Provider {
        match self {
            ProfileArg::Anthropic => Provider::Anthropic,
            ProfileArg::Openai => Provider::Openai,
            ProfileArg::Gemini => Provider::Gemini,
            ProfileArg::Ollama => Provider::Ollama,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum VerifyArg {
    Header,
    Full,
}

impl VerifyArg {
    pub fn verify(self) -> Verify {
        match self {
            VerifyArg::Header => Verify::Header,
            VerifyArg::Full => Verify::Full,
        }
    }
}

#[derive(Args)]
pub struct ComponentArgs {
    /// Which world's component.
    #[arg(long, value_enum, default_value_t = WorldArg::Preflight)]
    world: WorldArg,
    /// Where to write the .wasm file.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
enum WorldArg {
    Preflight,
    /// The pure gate with the converters (SVG, BMP, TIFF, ICO, GIF frames, PDF pages); imports nothing.
    Convert,
    AgentTool,
    /// The gate as a `wasi:http/proxy` service (`wasmtime serve`, `jco serve`, Spin, wasmCloud).
    HttpGate,
}

/// The command line, parsed; `Err` is the exit code of a usage error, already reported.
pub fn parse() -> Result<Command, u8> {
    Cli::try_parse().map(|cli| cli.command).map_err(usage_error)
}

/// Runs a command that runs once; its exit code.
pub async fn run(command: OneShot) -> u8 {
    match command {
        OneShot::Admit(args) => admit::admit(args).await,
        OneShot::AdmitToolResult(args) => admit::admit_tool_result(args).await,
        OneShot::AdmitRequest(args) => request::admit_request(args).await,
        OneShot::AdmitBatch(args) => batch::admit_batch(args).await,
        OneShot::ReadImage(args) => read_image::read_image(args).await,
        OneShot::Component(args) => write_component(&args),
    }
}

impl OneShot {
    /// The worker threads a command's calls run on, when it runs many at once (`admit` over many
    /// files, `admit-batch`); `None`: one thread, the calls one after another.
    pub fn worker_threads(&self) -> Option<usize> {
        match self {
            OneShot::Admit(args) => args.worker_threads(),
            OneShot::AdmitBatch(args) => Some(args.worker_threads()),
            _ => None,
        }
    }
}

/// A command line clap cannot parse: clap's own report, or with `--json` among the arguments the
/// JSON error object (help and version print as usual).
fn usage_error(e: clap::Error) -> u8 {
    use clap::error::ErrorKind;
    let json = std::env::args_os().skip(1).any(|a| a == "--json");
    if !json || matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit();
    }
    let text = e.render().to_string();
    let message = text.lines().next().unwrap_or("").trim_start_matches("error: ").trim().to_string();
    Report::Json.fail(Code::Usage, message)
}

fn write_component(args: &ComponentArgs) -> u8 {
    let bytes = match args.world {
        WorldArg::Preflight => mediagate::component::World::Preflight.bytes(),
        WorldArg::Convert => mediagate::component::World::Convert.bytes(),
        WorldArg::AgentTool => mediagate::component::World::AgentTool.bytes(),
        WorldArg::HttpGate => mediagate::component::HTTP_GATE,
    };
    match std::fs::write(&args.out, bytes) {
        Ok(()) => Exit::Done.code(),
        Err(e) => fail(format!("cannot write {}: {e}", args.out.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/cli.md is the reference clap-markdown writes from these definitions; a flag, help text
    /// or example changed here and not there fails this test.
    #[test]
    fn the_cli_reference_in_docs_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cli.md");
        let options = clap_markdown::MarkdownOptions::new()
            .title("mediagate command-line reference".to_string())
            .show_footer(false);
        let generated = format!(
            "<!-- Generated from cli/src/commands by clap-markdown; do not edit. Regenerate: \
             MEDIAGATE_WRITE_CLI_DOCS=1 cargo test --release --locked -p mediagate-cli --bin mediagate cli_reference -->\n\n{}",
            clap_markdown::help_markdown_custom::<Cli>(&options)
        );
        if std::env::var_os("MEDIAGATE_WRITE_CLI_DOCS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            current == generated,
            "docs/cli.md is not the reference the clap definitions give. Regenerate it with:\n  \
             MEDIAGATE_WRITE_CLI_DOCS=1 cargo test --release --locked -p mediagate-cli --bin mediagate cli_reference"
        );
    }

    #[test]
    fn terminal_text_escapes_every_control_sequence_but_keeps_lines_and_tabs() {
        assert_eq!(terminal_text("plain\ttext\nnext"), "plain\ttext\nnext");
        assert_eq!(terminal_text("\x1b]0;pwned\x07"), "\\u{1b}]0;pwned\\u{7}");
        assert_eq!(terminal_text("\x1b[2Jclear"), "\\u{1b}[2Jclear");
        assert_eq!(terminal_text("line\r\nnext\rover"), "line\nnext\\u{d}over");
        assert_eq!(terminal_text("\u{9b}31m \u{7f} \u{202e}txt"), "\\u{9b}31m \\u{7f} \\u{202e}txt");
        assert_eq!(terminal_text("café ☃"), "café ☃");
    }
}
