//! The `read_image` tool: workspace file → sniff → gate → VLM, streamed to the output sink.
//! Capabilities are traits so the logic is tested natively; the component supplies them from its
//! imports (the WASI preopen, the host's VLM and output interfaces).

use crate::answer::{AnswerBuffer, ThinkSplitter};
use crate::convert::PageError;
use crate::limits::RAW_CAP_DOWNSAMPLE;
use crate::options::{Options, Verify};
use crate::profile::Provider;
use crate::signature::{PDF_MIME, sniff};
use crate::workspace_path::{PathError, confine};

pub const TOOL_NAME: &str = "read_image";

pub const TOOL_DESCRIPTION: &str = "Look at an image file in the workspace with a vision model and return what it sees. \
Without a question, the model transcribes all visible text verbatim and describes the layout, charts and UI. \
With a question, the model answers that question about the image. Accepts PNG, JPEG, GIF and WebP; \
large images are downsampled first. A PDF is read one page at a time: the page (default 1) is rendered to an image. \
The file type is detected from its bytes, not its name.";

pub const PARAMETERS_SCHEMA: &str = r#"{"type":"object","properties":{"path":{"type":"string","description":"Path of the image file, relative to the workspace root (an absolute path must lie inside the workspace)."},"question":{"type":"string","description":"What to ask about the image. Omit to get a full transcription and description."},"page":{"type":"integer","minimum":1,"description":"For a PDF: the page to render and read, numbered from 1 (default 1). Only for PDFs."}},"required":["path"],"additionalProperties":false}"#;

pub const DESCRIBE_PROMPT: &str = "Describe this image for someone who cannot see it.\n\
1. Transcribe all visible text verbatim, in reading order, keeping line breaks, code and numbers exactly as shown.\n\
2. Describe the layout: regions, panels, UI elements (buttons, menus, fields, dialogs) and their states.\n\
3. For charts, plots and tables give the title, axes and units, legends, and the numbers: values, ranges and trends as read from the image.\n\
4. Describe any photos, diagrams or illustrations and what they show.\n\
Say plainly when something is unreadable, cut off or ambiguous instead of guessing.";

/// The answer is capped at this many characters: [`STREAM_CAP_CHARS`] of the reply and a marker.
pub const ANSWER_CAP_CHARS: usize = 200_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkKind {
    Content,
    Reasoning,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub kind: ChunkKind,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VlmError {
    NotConfigured,
    Unreachable(String),
    Refused {
        status: u16,
        message: String,
    },
    TimedOut(String),
    MalformedStream(String),
    /// The model stopped before its reply was complete (its output limit, a filter).
    StoppedEarly(String),
}

impl std::fmt::Display for VlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VlmError::NotConfigured => write!(f, "no vision model is configured"),
            VlmError::Unreachable(m) => write!(f, "the vision model could not be reached: {m}"),
            VlmError::Refused { status, message } => {
                write!(f, "the vision model's provider refused the request (HTTP {status}): {message}")
            }
            VlmError::TimedOut(m) => write!(f, "the vision model timed out: {m}"),
            VlmError::MalformedStream(m) => write!(f, "the vision model's reply stream was malformed: {m}"),
            VlmError::StoppedEarly(m) => write!(f, "the vision model stopped before its reply was complete: {m}"),
        }
    }
}

/// What the workspace says about a path, without following it out of the workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryType {
    File,
    Directory,
    Other(&'static str),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FsError {
    NotFound,
    /// The path resolves outside the workspace (a symlink out, for example).
    Escapes,
    Other(String),
}

pub trait Workspace {
    /// Type and size of a workspace-relative path (symlinks inside the workspace followed).
    fn stat(&self, rel: &str) -> Result<(EntryType, u64), FsError>;
    /// Up to `max` bytes of the file.
    fn read(&self, rel: &str, max: u64) -> Result<Vec<u8>, FsError>;
    /// The workspace root as the guest sees it (absolute paths must lie under it).
    fn root(&self) -> &str;
}

pub trait Reply {
    fn next_chunk(&mut self) -> Result<Option<Chunk>, VlmError>;
}

pub trait Vlm {
    fn configured(&self) -> bool;
    /// The provider whose API the model speaks: the image is admitted under its profile.
    fn provider(&self) -> Provider;
    fn ask(&self, prompt: &str, mime: &str, data: Vec<u8>) -> Result<Box<dyn Reply + '_>, VlmError>;
}

pub trait Sink {
    fn write(&self, kind: ChunkKind, text: &str);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolErrorCode {
    NotFound,
    NotAFile,
    OutsideWorkspace,
    TooLarge,
    NotAnImage,
    Refused,
    NoVlm,
    VlmFailed,
    Io,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    pub code: ToolErrorCode,
    pub message: String,
}

impl ToolError {
    fn new(code: ToolErrorCode, message: impl std::fmt::Display) -> Self {
        ToolError { code, message: format!("error: {message}") }
    }
}

pub const NO_VLM_MESSAGE: &str = "this deployment has no vision model (VLM) registered, so read_image cannot look at images here. Do not retry; tell the user that image reading is not configured.";

/// Reads `path` from the workspace, admits it and asks the VLM, streaming to `sink`.
pub fn read_image(
    workspace: &dyn Workspace,
    vlm: &dyn Vlm,
    sink: &dyn Sink,
    path: &str,
    question: Option<&str>,
    page: Option<u32>,
) -> Result<String, ToolError> {
    if !vlm.configured() {
        return Err(ToolError::new(ToolErrorCode::NoVlm, NO_VLM_MESSAGE));
    }
    let bytes = read_workspace_file(workspace, path)?;

    let detected = sniff(&bytes);
    // Every pixel is decoded: a truncated file caught here costs milliseconds; one that reaches
    // the provider poisons the session. The rules are those of the API the model speaks. The
    // tool's purpose is that the model sees the file, so what converts is converted.
    let options = Options { verify: Verify::Full, provider: vlm.provider(), convert: true, ..Options::default() };
    let admitted = if detected == PDF_MIME {
        crate::convert::admit_pdf_page(&bytes, page.unwrap_or(1), &options).map_err(|e| page_error(&e, path))?
    } else {
        if let Some(page) = page {
            return Err(ToolError::new(
                ToolErrorCode::Refused,
                format!("page {page} was asked for, but page applies to PDFs only; {path} is {detected}, not a PDF"),
            ));
        }
        if !detected.starts_with("image/") {
            return Err(ToolError::new(
                ToolErrorCode::NotAnImage,
                format!("not an image (detected {detected}): {path}"),
            ));
        }
        crate::admit_image(&bytes, &detected, &options).map_err(|r| {
            ToolError::new(
                ToolErrorCode::Refused,
                format!("the image {path} cannot be sent to the model: {} — {}", r.reason.as_str(), r.message),
            )
        })?
    };
    let mime = admitted.mime;
    let data = admitted.into_bytes(bytes);

    let prompt = match question.map(str::trim) {
        Some(q) if !q.is_empty() => q,
        _ => DESCRIBE_PROMPT,
    };
    let mut reply = vlm.ask(prompt, mime, data).map_err(vlm_error)?;

    let mut live = Live::new(sink);
    let mut think = ThinkSplitter::default();
    let cut = 'read: loop {
        match reply.next_chunk() {
            Ok(Some(chunk)) => match chunk.kind {
                ChunkKind::Reasoning => {
                    if !live.emit(ChunkKind::Reasoning, &chunk.text) {
                        break 'read Some(ChunkKind::Reasoning);
                    }
                }
                ChunkKind::Content => {
                    for (kind, text) in think.split(&chunk.text) {
                        if !live.emit(kind, &text) {
                            break 'read Some(kind);
                        }
                    }
                }
            },
            Ok(None) => break None,
            Err(e) => {
                for (kind, text) in think.finish() {
                    live.emit(kind, &text);
                }
                if live.answer.is_empty() {
                    return Err(vlm_error(e));
                }
                // What arrived is worth more to the model than nothing; it is marked incomplete.
                let marker = format!("\n\n[mediagate: the reply was cut off ({e}); the answer above is incomplete]");
                sink.write(ChunkKind::Content, &marker);
                live.answer.push_str(&marker);
                return Ok(live.answer.finish());
            }
        }
    };
    // Past a bound the rest of the reply is not read: dropping it closes the stream.
    drop(reply);
    match cut {
        None => {
            for (kind, text) in think.finish() {
                live.emit(kind, &text);
            }
        }
        Some(ChunkKind::Reasoning) if live.answer.is_empty() => {
            return Err(ToolError::new(
                ToolErrorCode::VlmFailed,
                format!(
                    "the vision model reasoned for more than {STREAM_CAP_CHARS} characters without answering; \
                     mediagate stopped reading its reply"
                ),
            ));
        }
        Some(_) => {
            let marker = cut_marker();
            sink.write(ChunkKind::Content, &marker);
            live.answer.push_str(&marker);
            return Ok(live.answer.finish());
        }
    }
    if live.answer.is_empty() {
        return Err(ToolError::new(ToolErrorCode::VlmFailed, "the vision model returned an empty answer"));
    }
    Ok(live.answer.finish())
}

/// At most this many characters of the answer (and as many of reasoning) are streamed and
/// kept; a reply that goes on past it is not read further. With the marker that says so, the
/// answer stays within [`ANSWER_CAP_CHARS`].
pub const STREAM_CAP_CHARS: usize = 199_900;

/// Ends an answer whose reply went on past [`STREAM_CAP_CHARS`].
pub fn cut_marker() -> String {
    format!(
        "\n\n[… mediagate cut the reply here: it went on past {STREAM_CAP_CHARS} characters and the rest was not read …]"
    )
}

/// The reply as it streams: written to the sink and kept as the answer, each kind within
/// [`STREAM_CAP_CHARS`].
struct Live<'a> {
    sink: &'a dyn Sink,
    answer: AnswerBuffer,
    content: usize,
    reasoning: usize,
}

impl<'a> Live<'a> {
    fn new(sink: &'a dyn Sink) -> Self {
        Live { sink, answer: AnswerBuffer::new(ANSWER_CAP_CHARS), content: 0, reasoning: 0 }
    }

    /// Writes `text` to the sink (and the answer, for content). `false` when it went past the
    /// bound: what fitted was written, the rest dropped.
    fn emit(&mut self, kind: ChunkKind, text: &str) -> bool {
        if text.is_empty() {
            return true;
        }
        let used = match kind {
            ChunkKind::Content => &mut self.content,
            ChunkKind::Reasoning => &mut self.reasoning,
        };
        let room = STREAM_CAP_CHARS - *used;
        let (fits, whole) = match text.char_indices().nth(room) {
            None => (text, true),
            Some((at, _)) => (&text[..at], false),
        };
        *used += fits.chars().count();
        if !fits.is_empty() {
            self.sink.write(kind, fits);
            if kind == ChunkKind::Content {
                self.answer.push_str(fits);
            }
        }
        whole
    }
}

/// Reads a workspace file for the gate: confined, a regular file, within the read cap.
pub fn read_workspace_file(workspace: &dyn Workspace, path: &str) -> Result<Vec<u8>, ToolError> {
    let rel = confine(workspace.root(), path).map_err(|e| match e {
        PathError::Empty => ToolError::new(ToolErrorCode::NotFound, "file not found (the path is empty)"),
        PathError::Nul => ToolError::new(ToolErrorCode::NotFound, "file not found (the path contains a NUL byte)"),
        PathError::Outside => outside(path),
    })?;
    if rel.is_empty() {
        return Err(ToolError::new(ToolErrorCode::NotAFile, format!("{path} is the workspace directory, not a file")));
    }
    let (entry, size) = workspace.stat(&rel).map_err(|e| fs_error(e, path))?;
    match entry {
        EntryType::File => {}
        EntryType::Directory => {
            return Err(ToolError::new(ToolErrorCode::NotAFile, format!("{path} is a directory, not a file")));
        }
        EntryType::Other(what) => {
            return Err(ToolError::new(
                ToolErrorCode::NotAFile,
                format!("{path} is not a regular file ({what}); it was not opened"),
            ));
        }
    }
    if size > RAW_CAP_DOWNSAMPLE {
        return Err(too_large(path, size));
    }
    let bytes = workspace.read(&rel, RAW_CAP_DOWNSAMPLE + 1).map_err(|e| fs_error(e, path))?;
    if bytes.len() as u64 > RAW_CAP_DOWNSAMPLE {
        return Err(too_large(path, bytes.len() as u64)); // it grew while being read
    }
    Ok(bytes)
}

fn too_large(path: &str, size: u64) -> ToolError {
    ToolError::new(
        ToolErrorCode::TooLarge,
        format!("{path} is {size} bytes; the read cap is {RAW_CAP_DOWNSAMPLE} bytes, so it was not read"),
    )
}

fn outside(path: &str) -> ToolError {
    ToolError::new(
        ToolErrorCode::OutsideWorkspace,
        format!("{path} is outside the workspace; only files inside the workspace can be read"),
    )
}

fn fs_error(e: FsError, path: &str) -> ToolError {
    match e {
        FsError::NotFound => ToolError::new(ToolErrorCode::NotFound, format!("file not found: {path}")),
        FsError::Escapes => outside(path),
        FsError::Other(m) => ToolError::new(ToolErrorCode::Io, format!("cannot read {path}: {m}")),
    }
}

/// A PDF page that did not become an image, in words that name the file.
fn page_error(e: &PageError, path: &str) -> ToolError {
    let why = match e {
        PageError::Refused(r) => format!("{} — {}", r.reason.as_str(), r.message),
        other => other.message(),
    };
    ToolError::new(ToolErrorCode::Refused, format!("the PDF {path} cannot be shown to the model: {why}"))
}

fn vlm_error(e: VlmError) -> ToolError {
    match e {
        VlmError::NotConfigured => ToolError::new(ToolErrorCode::NoVlm, NO_VLM_MESSAGE),
        other => ToolError::new(ToolErrorCode::VlmFailed, other),
    }
}

#[cfg(test)]
mod tests;
