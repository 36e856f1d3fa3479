//! `mediagate read-image`: the tool from a terminal; the reply streams to stdout as it arrives.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use mediagate::tool::{Sink, ToolErrorCode};
use mediagate::vlm::{Api, ChunkKind, VlmConfig};
use mediagate::{ReadImageTool, facts};

use super::{Exit, fail, runtime, terminal_text};

#[derive(Args)]
pub struct ReadImageArgs {
    /// The image, relative to the workspace (or absolute inside it).
    path: String,
    /// What to ask about the image; without it the model transcribes and describes it.
    #[arg(long)]
    question: Option<String>,
    /// The page (1-based) of a PDF to render and show the model [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    page: Option<u32>,
    /// The directory the tool may read; nothing outside it is reachable.
    #[arg(long, default_value = ".")]
    workspace: PathBuf,
    #[command(flatten)]
    vlm: VlmArgs,
    /// Also print the model's reasoning (to stderr; dimmed on a terminal unless NO_COLOR is set); it
    /// never enters the answer.
    #[arg(long)]
    show_reasoning: bool,
}

#[derive(Args, Clone)]
pub struct VlmArgs {
    /// Base URL of the VLM API, e.g. http://127.0.0.1:11434/v1 or https://api.anthropic.com.
    #[arg(long, env = facts::env::VLM_URL)]
    pub vlm_url: Option<String>,
    /// Model name.
    #[arg(long, env = facts::env::VLM_MODEL)]
    pub vlm_model: Option<String>,
    /// API dialect (default openai; its environment variable is named as --vlm-url's, ending _API).
    #[arg(long, value_enum)]
    pub vlm_api: Option<ApiArg>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ApiArg {
    Openai,
    Anthropic,
}

impl VlmArgs {
    /// The configured VLM, or `None` when the deployment has none. The key comes only from the
    /// environment (`facts::env::VLM_API_KEY`, else the vendor's own variable at that vendor's API:
    /// `VlmConfig::resolve`), never a flag, so it stays out of shell history and process listings.
    pub fn resolve(&self) -> Result<Option<VlmConfig>, String> {
        let api = self.vlm_api.map(|a| match a {
            ApiArg::Openai => Api::OpenAi,
            ApiArg::Anthropic => Api::Anthropic,
        });
        VlmConfig::resolve(self.vlm_url.clone(), self.vlm_model.clone(), api, |k| std::env::var(k).ok())
    }
}

pub async fn read_image(args: ReadImageArgs) -> u8 {
    let vlm = match args.vlm.resolve() {
        Ok(v) => v,
        Err(e) => return fail(e),
    };
    let runtime = match runtime(super::Calls::One) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let tool = match ReadImageTool::new(runtime, vlm) {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot load the tool: {e:#}")),
    };
    let show_reasoning = args.show_reasoning;
    let dim = show_reasoning && styled(std::io::stderr().is_terminal(), std::env::var_os("NO_COLOR"));
    // The model's text is escaped before it is written, to a terminal or not: a reply piped to a
    // file reaches a terminal later (`cat`, `tail -f`), and a model's answer has no use for control
    // sequences. Newlines and tabs pass.
    let sink: Sink = Arc::new(move |kind, text| match kind {
        ChunkKind::Content => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(terminal_text(text).as_bytes());
            let _ = out.flush();
        }
        ChunkKind::Reasoning if show_reasoning => {
            let mut err = std::io::stderr().lock();
            let text = terminal_text(text);
            let _ = if dim { write!(err, "\x1b[2m{text}\x1b[0m") } else { write!(err, "{text}") };
            let _ = err.flush();
        }
        ChunkKind::Reasoning => {}
    });
    let answer = tool.read_image(&args.workspace, &args.path, args.question.as_deref(), args.page, sink).await;
    match answer.map(|a| a.answer) {
        Ok(Ok(_answer)) => {
            // The answer already streamed; end the line.
            println!();
            Exit::Done.code()
        }
        Ok(Err(tool_error)) => {
            eprintln!("{}", terminal_text(&tool_error.message));
            tool_exit(tool_error.code).code()
        }
        Err(e) => fail(e),
    }
}

/// The tool's error under the one exit rule: the image refused is a refusal; a file that cannot be
/// read, no vision model or a model that failed leave the image unjudged.
fn tool_exit(code: ToolErrorCode) -> Exit {
    match code {
        ToolErrorCode::TooLarge | ToolErrorCode::NotAnImage | ToolErrorCode::Refused => Exit::Refused,
        ToolErrorCode::NotFound
        | ToolErrorCode::NotAFile
        | ToolErrorCode::OutsideWorkspace
        | ToolErrorCode::Io
        | ToolErrorCode::NoVlm
        | ToolErrorCode::VlmFailed => Exit::Unjudged,
    }
}

/// Whether the reasoning is dimmed: only on a terminal, and never when `NO_COLOR` is set to
/// anything but the empty string (https://no-color.org).
fn styled(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_is_styled_only_on_a_terminal_without_no_color() {
        assert!(styled(true, None));
        assert!(styled(true, Some("".into())), "an empty NO_COLOR is unset");
        assert!(!styled(true, Some("1".into())));
        assert!(!styled(false, None));
    }
}
