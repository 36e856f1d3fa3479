//! The `read_image` tool: workspace file → sniff → gate → VLM, streamed to the output sink.
//! Capabilities are traits so the logic is tested natively; the component supplies them from its
//! imports (the WASI preopen, the host's VLM and output interfaces).

pub mod reply;
pub mod workspace_path;

use crate::convert::PageError;
use crate::limits::RAW_CAP_DOWNSAMPLE;
use crate::options::{Options, Verify};
use crate::profile::Provider;
use crate::repairs::repair_note;
use crate::signature::{PDF_MIME, sniff};
use reply::{ANSWER_CAP_CHARS, ChunkKind, CutBuffer, HEAD_CHARS, ThinkSplitter};
use workspace_path::{PathError, confine};

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
    let repaired = admitted.repaired();
    let data = admitted.into_bytes(bytes);

    let prompt = match question.map(str::trim) {
        Some(q) if !q.is_empty() => q,
        _ => DESCRIBE_PROMPT,
    };
    // A repaired image is not what its author made: both models are told, the one that looks and
    // the one that reads its answer.
    let prompt = match &repaired {
        Some(words) => format!("{prompt}\n\n{}", repair_note("The image", words)),
        None => prompt.to_string(),
    };
    let mut reply = vlm.ask(&prompt, mime, data).map_err(vlm_error)?;

    let mut live = Live::new(sink);
    let mut think = ThinkSplitter::default();
    let mut read = 0usize;
    let ending = loop {
        match reply.next_chunk() {
            Ok(Some(chunk)) => {
                // The read bound counts the reply as it streams, reasoning and tags included.
                let room = READ_BOUND_CHARS - read;
                let (text, whole) = match chunk.text.char_indices().nth(room) {
                    None => (chunk.text.as_str(), true),
                    Some((at, _)) => (&chunk.text[..at], false),
                };
                read += text.chars().count();
                match chunk.kind {
                    ChunkKind::Reasoning => live.emit(ChunkKind::Reasoning, text),
                    ChunkKind::Content => {
                        for (kind, text) in think.split(text) {
                            live.emit(kind, &text);
                        }
                    }
                }
                if !whole {
                    break Ending::Runaway;
                }
            }
            Ok(None) => break Ending::Ended,
            Err(e) => break Ending::Failed(e),
        }
    };
    // Past the read bound the rest of the reply is not read: dropping it closes the stream.
    drop(reply);
    for (kind, text) in think.finish() {
        live.emit(kind, &text);
    }
    let incomplete = match &ending {
        Ending::Ended => None,
        Ending::Runaway => Some(incomplete_note(&format!(
            "it did not end within {READ_BOUND_CHARS} characters, and mediagate stopped reading it"
        ))),
        Ending::Failed(e) => Some(incomplete_note(&e.to_string())),
    };
    let repair = repaired.map(|words| format!("\n\n{}", repair_note(path, &words)));
    let note = match (incomplete, repair) {
        (None, None) => None,
        (a, b) => Some(format!("{}{}", a.unwrap_or_default(), b.unwrap_or_default())),
    };
    if !live.answer.is_empty() {
        return Ok(live.finish(note.as_deref()));
    }
    live.finish(None);
    Err(match ending {
        Ending::Ended => ToolError::new(ToolErrorCode::VlmFailed, "the vision model returned an empty answer"),
        Ending::Runaway => ToolError::new(
            ToolErrorCode::VlmFailed,
            format!(
                "the vision model reasoned for more than {READ_BOUND_CHARS} characters without answering; \
                 mediagate stopped reading its reply"
            ),
        ),
        Ending::Failed(e) => vlm_error(e),
    })
}

/// How many characters of a reply are read (answer, reasoning and `<think>` tags together). A
/// reply that ends within it is answered whole or cut in the middle; one that goes on past it is
/// a runaway, hung up on. Time is bounded by the host's reply deadline, whichever comes first.
pub const READ_BOUND_CHARS: usize = 1_000_000;

enum Ending {
    Ended,
    /// The reply went on past [`READ_BOUND_CHARS`].
    Runaway,
    Failed(VlmError),
}

/// Ends an answer whose reply did not end: the reason is clipped, so the note stays short.
pub fn incomplete_note(why: &str) -> String {
    let why: String = why.chars().take(1_000).collect();
    format!("\n\n[mediagate: the reply was cut off ({why}); the answer above is incomplete]")
}

/// What the sink is told when a kind's live output pauses at [`HEAD_CHARS`].
pub fn pause_notice(kind: ChunkKind) -> String {
    format!(
        "\n\n[… mediagate: the live {} pauses here at {HEAD_CHARS} characters; the rest follows when the reply ends …]\n\n",
        kind_name(kind)
    )
}

/// What the sink is told once a kind goes past [`ANSWER_CAP_CHARS`]: it will be cut.
pub fn will_cut_notice(kind: ChunkKind) -> String {
    format!(
        "[… mediagate: the {} is longer than {ANSWER_CAP_CHARS} characters, so it will be cut in the middle: \
         its last characters follow when the reply ends …]\n\n",
        kind_name(kind)
    )
}

fn kind_name(kind: ChunkKind) -> &'static str {
    match kind {
        ChunkKind::Content => "answer",
        ChunkKind::Reasoning => "reasoning",
    }
}

/// The reply as it streams. Each kind (answer, reasoning) is kept for a middle cut; its first
/// [`HEAD_CHARS`] go to the sink live, then a notice that live output paused (and another once it
/// is sure to be cut), and when the reply ends the rest of what is kept: the sink's text, notices
/// taken out, is exactly the answer (or the reasoning, cut the same way).
struct Live<'a> {
    sink: &'a dyn Sink,
    answer: CutBuffer,
    reasoning: CutBuffer,
}

impl<'a> Live<'a> {
    fn new(sink: &'a dyn Sink) -> Self {
        Live { sink, answer: CutBuffer::answer(), reasoning: CutBuffer::answer() }
    }

    fn emit(&mut self, kind: ChunkKind, text: &str) {
        if text.is_empty() {
            return;
        }
        let buffer = match kind {
            ChunkKind::Content => &mut self.answer,
            ChunkKind::Reasoning => &mut self.reasoning,
        };
        let before = buffer.total();
        buffer.push_str(text);
        let after = buffer.total();
        if before < HEAD_CHARS {
            let live = match text.char_indices().nth(HEAD_CHARS - before) {
                None => text,
                Some((at, _)) => &text[..at],
            };
            self.sink.write(kind, live);
        }
        if before <= HEAD_CHARS && after > HEAD_CHARS {
            self.sink.write(kind, &pause_notice(kind));
        }
        if before <= ANSWER_CAP_CHARS && after > ANSWER_CAP_CHARS {
            self.sink.write(kind, &will_cut_notice(kind));
        }
    }

    /// Writes what the sink has not seen of the reasoning and the answer; returns the answer.
    fn finish(self, note: Option<&str>) -> String {
        let sink = self.sink;
        let rest = |kind, buffer: CutBuffer, note| {
            let shown = buffer.total().min(HEAD_CHARS);
            let kept = buffer.finish(note);
            let at = kept.char_indices().nth(shown).map_or(kept.len(), |(at, _)| at);
            if at < kept.len() {
                sink.write(kind, &kept[at..]);
            }
            kept
        };
        rest(ChunkKind::Reasoning, self.reasoning, None);
        rest(ChunkKind::Content, self.answer, note)
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
