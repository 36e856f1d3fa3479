//! What the command line and the servers share about the process: its sandbox (the runtime and
//! the gate, sized by how many calls it makes), how an error is reported, and the exit codes.

use std::sync::Arc;

use mediagate::{Runtime, RuntimeConfig};

/// The one exit rule of every command that runs once (`admit` with one input or many,
/// `admit-tool-result`, `admit-request`, `admit-batch`, `read-image`, `component`), as `--help`
/// states it (`exit_rule!`) and docs/usage.md tabulates it. Every exit code a command returns comes
/// from here: a command says what happened, this says which number that is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: done and nothing refused (a downsampled, re-encoded or converted block counts as
    /// admitted; the model answered; the component was written).
    Done,
    /// 1: the gate refused something: a file, a block, a request, a Batch API file rule; or the
    /// tool refused the image.
    Refused,
    /// 2: what was asked could not be judged: a usage error, input that cannot be read or is not
    /// what the command reads (not JSON, not a request of that API, over a read cap, not a
    /// regular file), an output that cannot be written, the sandbox or the vision model failed.
    Unjudged,
}

impl Exit {
    /// One input judged: refused or not.
    pub fn judged(refused: bool) -> Exit {
        if refused { Exit::Refused } else { Exit::Done }
    }

    /// Many inputs in one run: what could not be judged outweighs a refusal, which outweighs the
    /// rest.
    pub fn worst(self, other: Exit) -> Exit {
        self.max(other)
    }

    pub fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Refused => 1,
            Exit::Unjudged => 2,
        }
    }
}

/// The gate for a command that judges `jobs` inputs at once: that many guests running at a time
/// (each on its own worker thread). The pool holds twice as many instances: a call gives its turn
/// back before its store (and the instance in it) is dropped, so the next call may instantiate
/// while the last one's instance still holds its slot.
pub fn gate_for_jobs(jobs: u32) -> Result<mediagate::Gate, u8> {
    let mut config = RuntimeConfig { pooling: true, ..RuntimeConfig::default() };
    config.limits.max_concurrent_calls = jobs * 2 + 2;
    config.limits.max_running_calls = jobs;
    let runtime = Runtime::new(config)
        .map_err(|e| Report::Text.fail(Code::Sandbox, format!("cannot start the sandbox: {e:#}")))?;
    mediagate::Gate::new(runtime).map_err(|e| Report::Text.fail(Code::Sandbox, format!("cannot load the gate: {e:#}")))
}

/// How many calls a command makes: a one-shot command skips the pooling allocator, whose
/// up-front reservation only pays off over many calls (the MCP server).
/// `Many` sizes the pool for that many instances at once.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Calls {
    One,
    Many { instances: u32 },
}

/// The process's runtime: the default limits and the on-disk compiled-component cache.
pub fn runtime(calls: Calls) -> Result<Arc<Runtime>, u8> {
    runtime_reporting(calls, Report::Text)
}

/// [`runtime`], its errors printed as `report` says.
fn runtime_reporting(calls: Calls, report: Report) -> Result<Arc<Runtime>, u8> {
    let mut config = RuntimeConfig { pooling: calls != Calls::One, ..RuntimeConfig::default() };
    if let Calls::Many { instances } = calls {
        config.limits.max_concurrent_calls = instances;
    }
    Runtime::new(config).map_err(|e| report.fail(Code::Sandbox, format!("cannot start the sandbox: {e:#}")))
}

/// The gate on the process's runtime; `Err` is the exit code, the error already printed.
pub fn gate(calls: Calls) -> Result<mediagate::Gate, u8> {
    gate_reporting(calls, Report::Text)
}

/// [`gate`], its errors printed as `report` says.
pub fn gate_reporting(calls: Calls, report: Report) -> Result<mediagate::Gate, u8> {
    let runtime = runtime_reporting(calls, report)?;
    mediagate::Gate::new(runtime).map_err(|e| report.fail(Code::Sandbox, format!("cannot load the gate: {e:#}")))
}

/// Prints `error: …` to stderr and gives the usage/I/O exit code.
pub fn fail(message: impl std::fmt::Display) -> u8 {
    Report::Text.fail(Code::Io, message)
}

/// How a command reports an error: `error: …` on stderr for a person, or, with `--json`, one
/// object `{"error": {"code", "message"}}` on stdout for a script. The exit code is the same.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Report {
    Text,
    Json,
}

/// What kind of error a `--json` error object names.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// The command line cannot be parsed.
    Usage,
    /// A file could not be read or written.
    Io,
    /// The sandbox could not start, or the call in it failed (deadline, memory, trap).
    Sandbox,
    /// The component answered with something the host cannot use (a malformed value).
    GuestOutput,
}

impl Code {
    fn as_str(self) -> &'static str {
        match self {
            Code::Usage => "usage",
            Code::Io => "io",
            Code::Sandbox => "sandbox",
            Code::GuestOutput => "guest_output",
        }
    }
}

impl Report {
    pub fn json(json: bool) -> Report {
        if json { Report::Json } else { Report::Text }
    }

    /// Prints the error and gives the usage/I/O exit code.
    pub fn fail(self, code: Code, message: impl std::fmt::Display) -> u8 {
        let message = message.to_string();
        match self {
            Report::Text => eprintln!("error: {}", terminal_text(&message)),
            Report::Json => {
                println!("{}", serde_json::json!({"error": {"code": code.as_str(), "message": message}}))
            }
        }
        Exit::Unjudged.code()
    }
}

/// Text from elsewhere (a model, a provider, a file name) made safe for a terminal: every control
/// character but newline and tab, and the bidirectional overrides, is shown escaped (`\u{1b}`), so
/// no escape sequence reaches the terminal (titles, clears, cursor moves, hyperlinks) and no line is
/// overwritten by a carriage return. A carriage return before a newline is dropped.
pub fn terminal_text(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.contains(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}
