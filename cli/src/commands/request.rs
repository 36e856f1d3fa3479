//! `mediagate admit-request`: a whole provider request through the gate.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use mediagate::gate::{RequestApi, RequestChange, RequestRefusal, RequestVerdict};

use super::admit::read_json_text;
use super::report::check_json;
use super::{Code, Exit, Report, RequestGateArgs};

/// What the gate reads of a request (its own cap: `TOOL_RESULT_MAX_BYTES` in the guest). Larger
/// input is refused here, unread, as unusable.
const REQUEST_READ_CAP: u64 = 48 * 1024 * 1024;

#[derive(Args)]
pub struct RequestArgs {
    /// The request's dialect; it also picks the request-level rules.
    #[arg(long, value_enum)]
    api: ApiArg,
    /// The request JSON; `-` or nothing reads stdin.
    file: Option<PathBuf>,
    #[command(flatten)]
    gate: RequestGateArgs,
    /// Print a report object (`request`, `changed`, `refused`, `refusal`) instead of the request.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum ApiArg {
    /// Anthropic Messages.
    Anthropic,
    /// OpenAI Chat Completions.
    Openai,
    /// Gemini generateContent.
    Gemini,
    /// Anthropic Message Batches (the body that creates a batch).
    AnthropicBatch,
    /// Any JSON body to an endpoint without a dialect: media judged wherever they sit, no request rules.
    Other,
}

pub async fn admit_request(args: RequestArgs) -> u8 {
    let errors = Report::json(args.json);
    let input = match read_json_text(args.file.as_deref(), REQUEST_READ_CAP) {
        Ok(s) => s,
        Err(e) => return errors.fail(Code::Io, e),
    };
    let api = match args.api {
        ApiArg::Anthropic => RequestApi::Anthropic,
        ApiArg::Openai => RequestApi::Openai,
        ApiArg::Gemini => RequestApi::Gemini,
        ApiArg::AnthropicBatch => RequestApi::AnthropicBatch,
        ApiArg::Other => RequestApi::Other,
    };
    let gate = match super::gate_reporting(super::Calls::One, errors) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let options = args.gate.options();
    let answer = match gate.admit_request(api, &input, args.gate.convert, options).await.map(|a| a.answer) {
        Ok(a) => a,
        Err(e) => return errors.fail(Code::Sandbox, e),
    };
    let verdict = &answer.verdict;
    // The gate's text is printed (or spliced) as it is: it must be JSON.
    if let RequestVerdict::Admitted(a) = verdict
        && let Some(request) = &a.request
        && let Err(e) = check_json(request, "admitted request")
    {
        return errors.fail(Code::GuestOutput, e);
    }
    // A block downsampled or re-encoded is admitted, as with `admit`; input that is not a request
    // of the API could not be judged.
    let code = match verdict {
        RequestVerdict::Admitted(a) => Exit::judged(a.changes.iter().any(|c| c.after.is_none())),
        RequestVerdict::Refused(r) if r.unusable => Exit::Unjudged,
        RequestVerdict::Refused(_) => Exit::Refused,
    }
    .code();
    if args.json {
        if let Err(e) = check_json(&answer.json, "report") {
            return errors.fail(Code::GuestOutput, e);
        }
        println!("{}", answer.json);
        return code;
    }
    for c in &answer.conversions {
        eprintln!("mediagate: {}", super::terminal_text(&format!("{} converted from {}: {}", c.path, c.from, c.note)));
    }
    match verdict {
        RequestVerdict::Admitted(a) => {
            for c in &a.changes {
                eprintln!("mediagate: {}", super::terminal_text(&change_line(c)));
            }
            // The request exactly as admitted: no newline added, nothing reformatted.
            print!("{}", a.request.as_deref().unwrap_or(&input));
        }
        RequestVerdict::Refused(r) => eprintln!("error: {}", super::terminal_text(&refusal_line(r))),
    }
    code
}

fn change_line(c: &RequestChange) -> String {
    let reason = c.reason.map(|r| format!(": {}", r.as_str())).unwrap_or_default();
    let rule = c.rule.as_deref().map(|r| format!(" [{r}]")).unwrap_or_default();
    format!("{} {} {}{reason} — {}{rule}", c.path, c.block_type, c.what.as_str(), c.message)
}

fn refusal_line(r: &RequestRefusal) -> String {
    let rule = r.rule.as_deref().map(|r| format!(" [{r}]")).unwrap_or_default();
    format!("request refused: {} — {}{rule}", r.reason.as_str(), r.message)
}
