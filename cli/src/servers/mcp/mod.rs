//! `mediagate mcp`: the `read_image` and `view_image` tools as a Model Context Protocol server over stdio, on the
//! official Rust SDK (`rmcp`).
//!
//! - The tool's name, description and input schema are the ones the component publishes.
//! - Every failure of a call (not found, not an image, no VLM, VLM failed, bad arguments, a guest
//!   trap) is a tool result with `isError: true` and the error text, never a protocol error; only an
//!   unknown tool name is a protocol error (`-32602`), as the specification asks.
//! - When the request carries a `progressToken`, `notifications/progress` follow the reply as it
//!   streams: `progress` counts the chunks received, `message` is the answer so far; at most one
//!   per [`PROGRESS_INTERVAL`] and [`MAX_PROGRESS_NOTIFICATIONS`] per call.
//! - Calls run at most `--memory-budget` / (one call's memory limit) at a time; up to
//!   `--max-queued` more wait for a turn; past that a call is answered at once, as an error, that
//!   the server is busy.
//! - Every line the client writes gets an answer or reaches rmcp exactly once (`framing`).
//! - Stdout carries only protocol messages; the one status line goes to stderr.

mod framing;
mod roots;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mediagate::ReadImageTool;
use mediagate::gate::{AdmitOptions, BlockKind, Payload, Verdict};
use mediagate::tool::{AdmittedData, Sink, ToolDefinition, WorkspaceDir, WorkspaceFile};
use mediagate::vlm::ChunkKind;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeRequestParams,
    InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, ResourceContents, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use tokio::sync::{Semaphore, mpsc};
use tokio::time::Instant;

use roots::{Unresolved, Workspace};

use crate::process::{Calls, fail, runtime};

/// A progress message holds at most this many characters of the answer (its end, when longer).
const PROGRESS_MESSAGE_CHARS: usize = 4_000;

/// At most one progress notification per call in this time; chunks in between are batched.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);

/// At most this many progress notifications per call (the last one included).
const MAX_PROGRESS_NOTIFICATIONS: u64 = 1_000;

/// What `mediagate mcp` serves, and within what.
pub struct McpConfig {
    /// The directory the tools may read; `None`: the client's roots, else the directory the server
    /// starts in.
    pub workspace: Option<std::path::PathBuf>,
    /// The vision model, none, or why the one configured cannot be used.
    pub vlm: Result<Option<mediagate::vlm::VlmConfig>, String>,
    /// Memory for all calls' sandboxes together, in MiB.
    pub memory_budget_mib: u64,
    /// Calls that may wait for their turn.
    pub max_queued: usize,
    /// view_image admits the file's metadata as given.
    pub keep_metadata: bool,
}

pub async fn mcp(args: McpConfig) -> u8 {
    // A VLM configured by half (a URL but no model, an unknown dialect) does not stop the server: a
    // host would show only "connection closed". Every call answers what is missing instead.
    let (vlm, vlm_error) = match args.vlm {
        Ok(v) => (v, None),
        Err(e) => (None, Some(Arc::new(e))),
    };
    let workspace = match Workspace::new(args.workspace.as_deref()) {
        Ok(w) => w,
        Err(e) => return fail(e),
    };
    let vlm_line = match (&vlm, &vlm_error) {
        (Some(c), _) => format!("{} at {}", c.model, mediagate::vlm::shown_url(&c.base_url)),
        (None, Some(e)) => format!("misconfigured, read_image answers with this error: {e}"),
        (None, None) => "none (read_image answers that no vision model is configured)".to_string(),
    };
    let per_call = mediagate::Limits::default().memory_bytes as u64;
    let instances = (args.memory_budget_mib << 20) / per_call;
    if instances == 0 {
        return fail(format!(
            "--memory-budget {} MiB is less than one call's memory limit ({} MiB)",
            args.memory_budget_mib,
            per_call >> 20
        ));
    }
    let instances = instances.min(u64::from(mediagate::Limits::default().max_concurrent_calls)) as u32;
    let runtime = match runtime(Calls::Many { instances }) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let tool = match ReadImageTool::new(runtime, vlm) {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot load the tool: {e:#}")),
    };
    let definition = match tool.definition().await {
        Ok(d) => d,
        Err(e) => return fail(format!("cannot read the tool's definition: {e}")),
    };
    let published = match published_tool(&definition) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let server = McpServer {
        tool,
        definition: Arc::new(published),
        view: Arc::new(view_image_tool()),
        workspace: Arc::new(workspace),
        refusal: Arc::new(std::sync::Mutex::new(None)),
        vlm_error,
        turns: Arc::new(Turns::new(instances as usize, args.max_queued)),
        keep_metadata: args.keep_metadata,
    };
    eprintln!(
        "mediagate mcp: serving {} and {} over stdio; workspace {}; vision model: {vlm_line}; \
         {instances} calls at once ({} MiB each), {} more queued",
        definition.name,
        server.view.name,
        server.workspace.describe(),
        per_call >> 20,
        args.max_queued
    );
    let refusal = Arc::clone(&server.refusal);
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let framing = framing::framing(tokio::io::BufReader::with_capacity(64 << 10, stdin), stdout);
    let code = match server.serve(framing.transport).await {
        Ok(running) => match running.waiting().await {
            Ok(_) => 0,
            Err(e) => fail(format!("the MCP session ended abnormally: {e}")),
        },
        Err(e) => match refusal.lock().map(|mut r| r.take()) {
            Ok(Some(why)) => fail(format!("refusing to start: {why}")),
            _ => fail(format!("the MCP session did not start: {e}")),
        },
    };
    // Every answer queued is written before the process ends (bounded: a client that stopped
    // reading must not keep the process alive).
    let _ = tokio::time::timeout(Duration::from_secs(10), framing.writer).await;
    code
}

/// Who runs now and who waits: `running` permits, one per call whose sandbox exists, and at most
/// `max_queued` calls waiting for one.
struct Turns {
    running: Arc<Semaphore>,
    instances: usize,
    waiting: AtomicUsize,
    max_queued: usize,
}

/// A call's place in the queue; leaving it (with a turn, cancelled or dropped) frees the place.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Turns {
    fn new(instances: usize, max_queued: usize) -> Self {
        Turns { running: Arc::new(Semaphore::new(instances)), instances, waiting: AtomicUsize::new(0), max_queued }
    }

    /// A turn to run, at once or after waiting; `Err` with the words of the busy answer when the
    /// queue is full.
    async fn take(&self) -> Result<tokio::sync::OwnedSemaphorePermit, String> {
        if let Ok(permit) = self.running.clone().try_acquire_owned() {
            return Ok(permit);
        }
        let queued = self.waiting.fetch_add(1, Ordering::SeqCst);
        let place = Waiting(&self.waiting);
        if queued >= self.max_queued {
            drop(place);
            return Err(format!(
                "error: the server is busy: {} calls are running and {} are waiting, the most it takes; \
                 try again shortly",
                self.instances, self.max_queued
            ));
        }
        let permit = self.running.clone().acquire_owned().await.expect("the semaphore is never closed");
        drop(place);
        Ok(permit)
    }
}

/// The MCP tool as the component defines it; the schema is the component's JSON, parsed, not
/// restated.
fn published_tool(definition: &ToolDefinition) -> Result<Tool, String> {
    let schema: JsonObject = serde_json::from_str(&definition.parameters_schema)
        .map_err(|e| format!("the component's parameter schema is not a JSON object: {e}"))?;
    // Hints only: it reads workspace files, changes nothing, and talks to a vision model.
    let hints = ToolAnnotations::new().read_only(true).destructive(false).idempotent(true).open_world(true);
    Ok(Tool::new(definition.name.clone(), definition.description.clone(), schema).annotate(hints))
}

#[derive(Clone)]
struct McpServer {
    tool: ReadImageTool,
    definition: Arc<Tool>,
    /// `view_image`: the file through the gate, as a block the calling model sees itself.
    view: Arc<Tool>,
    workspace: Arc<Workspace>,
    /// Why `initialize` was refused (no workspace may be served), for the exit message.
    refusal: Arc<std::sync::Mutex<Option<String>>>,
    /// Why the configured vision model cannot be used; every call answers with it.
    vlm_error: Option<Arc<String>>,
    turns: Arc<Turns>,
    /// `--keep-metadata`, for view_image.
    keep_metadata: bool,
}

/// The arguments of `read_image`, as its published schema describes them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadImageArguments {
    path: String,
    #[serde(default)]
    question: Option<String>,
    /// The page (1-based) of a PDF to render; `None`: page 1.
    #[serde(default)]
    page: Option<u32>,
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mediagate", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "`{}` looks at an image file with a vision model and `{}` shows it to you. Paths are relative \
                 to the workspace ({}); nothing outside it is readable.",
                self.definition.name,
                self.view.name,
                self.workspace.describe()
            ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        if let Err(why) = self.workspace.on_initialize(request.capabilities.roots.is_some()) {
            if let Ok(mut refusal) = self.refusal.lock() {
                *refusal = Some(why.clone());
            }
            return Err(ErrorData::invalid_request(format!("mediagate mcp refuses to start: {why}"), None));
        }
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.workspace.refresh(context.peer);
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.workspace.refresh(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![(*self.definition).clone(), (*self.view).clone()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        if name == self.view.name {
            return Some((*self.view).clone());
        }
        (name == self.definition.name).then(|| (*self.definition).clone())
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != self.view.name && request.name != self.definition.name {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; this server has only `{}` and `{}`",
                    request.name, self.definition.name, self.view.name
                ),
                None,
            ));
        }
        // While a call waits for the client's roots it holds its arguments as JSON text, counted
        // against what waiting calls may hold, not as a parsed tree (many times the text's size).
        let arguments = request.arguments.take().unwrap_or_default();
        let path = arguments.get("path").and_then(|p| p.as_str()).unwrap_or("").to_string();
        let held = serde_json::Value::Object(arguments).to_string();
        let workspace = match self.workspace_for(&path, held.len(), &request, &context).await {
            Ok(dir) => dir,
            Err(Unresolved::AskForRoots(ask)) => return Ok(ask.into()),
            Err(Unresolved::Refused(why)) => return Ok(tool_error(why).into()),
        };
        let arguments: JsonObject = match serde_json::from_str(&held) {
            Ok(a) => a,
            Err(e) => return Ok(tool_error(format!("error: the call's arguments cannot be read back: {e}")).into()),
        };
        drop(held);
        if request.name == self.view.name {
            return Ok(self.view_image_call(&workspace, arguments, &context).await.into());
        }
        if let Some(e) = &self.vlm_error {
            return Ok(tool_error(format!(
                "error: the vision model (VLM) of this MCP server is misconfigured: {e} (in the server's `args`, or \
                 its `env` block in the MCP host's configuration). Do not retry; tell the user to fix the configuration."
            ))
            .into());
        }
        let arguments: ReadImageArguments = match serde_json::from_value(serde_json::Value::Object(arguments)) {
            Ok(a) => a,
            Err(e) => {
                return Ok(tool_error(format!("error: invalid arguments for {}: {e}", self.definition.name)).into());
            }
        };
        let progress = context.meta.get_progress_token().map(|token| Progress::new(token, context.peer.clone()));
        let call = async {
            // The sandbox, and its memory, exists only with a turn.
            let _turn = match self.turns.take().await {
                Ok(turn) => turn,
                Err(busy) => return tool_error(busy),
            };
            self.read_image(&workspace, arguments, progress).await
        };
        tokio::select! {
            result = call => Ok(result.into()),
            // The client cancelled: dropping the call stops the guest and the VLM stream. No response
            // is read after a cancellation; this one only ends the request.
            () = context.ct.cancelled() => Ok(tool_error("error: the call was cancelled".to_string()).into()),
        }
    }
}

impl McpServer {
    /// The directory this call reads from: `--workspace`, or the client's roots (the root holding an
    /// absolute `path`, else the first), or the start directory.
    async fn workspace_for(
        &self,
        path: &str,
        held: usize,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<WorkspaceDir, Unresolved> {
        // From 2026-07-28 a server may not send requests; it asks for input in its result instead.
        let stateless = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let offers_roots = context.client_capabilities().is_some_and(|c| c.roots.is_some());
        self.workspace.for_call(path, held, stateless, offers_roots, request.input_responses.as_ref()).await
    }

    async fn read_image(
        &self,
        workspace: &WorkspaceDir,
        arguments: ReadImageArguments,
        progress: Option<Progress>,
    ) -> CallToolResult {
        let (tx, mut chunks) = mpsc::unbounded_channel();
        let sink: Sink = match progress {
            Some(_) => Arc::new(move |kind, text| {
                let _ = tx.send((kind, text.to_string()));
            }),
            None => Arc::new(|_, _| {}),
        };
        let call =
            self.tool.read_image(workspace, &arguments.path, arguments.question.as_deref(), arguments.page, sink);
        let result = match progress {
            None => call.await,
            Some(mut progress) => {
                let mut call = std::pin::pin!(call);
                let result = loop {
                    let due = progress.due();
                    tokio::select! {
                        result = &mut call => break result,
                        Some(chunk) = chunks.recv() => {
                            progress.take(chunk);
                            while let Ok(chunk) = chunks.try_recv() {
                                progress.take(chunk);
                            }
                        }
                        () = tokio::time::sleep_until(due.unwrap_or_else(Instant::now)), if due.is_some() => {
                            progress.send().await;
                        }
                    }
                };
                // Chunks not yet told: one last notification before the result.
                while let Ok(chunk) = chunks.try_recv() {
                    progress.take(chunk);
                }
                if progress.unsent {
                    progress.send().await;
                }
                result
            }
        };
        match result.map(|a| a.answer) {
            Ok(Ok(answer)) => CallToolResult::success(vec![ContentBlock::text(answer)]),
            Ok(Err(refusal)) => tool_error(refusal.message),
            Err(call_error) => {
                // The sandbox failed (trap, limit): the call ends, the server carries on.
                eprintln!("mediagate mcp: read_image({:?}) failed in the sandbox: {call_error}", arguments.path);
                tool_error(format!("error: {call_error}"))
            }
        }
    }
}

/// The arguments of `view_image`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ViewImageArguments {
    path: String,
    /// The page (1-based) of a PDF to show as an image; without it a PDF is shown as the document.
    #[serde(default)]
    page: Option<u32>,
}

/// `view_image(path)`: no vision model involved; the gate's admitted block is the answer.
fn view_image_tool() -> Tool {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "The image (PNG, JPEG, GIF, WebP; SVG, BMP, TIFF and ICO are converted to PNG) or PDF file, relative to the workspace."
            },
            "page": {
                "type": "integer",
                "minimum": 1,
                "description": "For a PDF: the page (1-based) to show as an image. Omit to get the whole PDF as a document."
            }
        },
        "required": ["path"],
        "additionalProperties": false
    });
    let serde_json::Value::Object(schema) = schema else { unreachable!("a JSON object literal") };
    let hints = ToolAnnotations::new().read_only(true).destructive(false).idempotent(true).open_world(false);
    Tool::new(
        "view_image",
        "Show a workspace image (or PDF) to you, the calling model, checked and downsampled so the provider \
         accepts it. A file that is not what its name claims, is corrupt or too large is refused with the reason.",
        schema,
    )
    .annotate(hints)
}

impl McpServer {
    async fn view_image_call(
        &self,
        workspace: &WorkspaceDir,
        arguments: JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let arguments: ViewImageArguments = match serde_json::from_value(serde_json::Value::Object(arguments)) {
            Ok(a) => a,
            Err(e) => return tool_error(format!("error: invalid arguments for view_image: {e}")),
        };
        let call = async {
            let _turn = match self.turns.take().await {
                Ok(turn) => turn,
                Err(busy) => return tool_error(busy),
            };
            // Only what the server was told; the rest are the gate's defaults.
            let options = AdmitOptions { keep_metadata: Some(self.keep_metadata), ..AdmitOptions::UNSET };
            // The one entry `mediagate admit --convert FILE` calls, with the file read through the
            // preopen. Converting by default: the purpose of view_image is that the model sees the
            // image.
            let file = WorkspaceFile {
                path: arguments.path.clone(),
                claimed_mime: None,
                convert: true,
                page: arguments.page,
                data: AdmittedData::Payload,
            };
            match self.tool.admit_workspace_file(workspace, &file, options).await.map(|a| a.answer) {
                Ok(Ok(answer)) => {
                    // A repaired image is not what its author made: the model is told, beside it.
                    let repaired = match &answer.verdict {
                        Verdict::Admitted(a) => a.repaired.clone(),
                        Verdict::Refused(_) => None,
                    };
                    let mut result = view_image_result(&arguments.path, answer.verdict);
                    if let Some(words) = repaired.filter(|_| result.is_error != Some(true)) {
                        result.content.push(ContentBlock::text(format!(
                            "[mediagate] {} was repaired before the model saw it: {words}.",
                            arguments.path
                        )));
                    }
                    if let Some(c) = answer.conversion {
                        result.content.push(ContentBlock::text(format!(
                            "{} was converted from {} to {}: {}",
                            arguments.path, c.from, c.to, c.note
                        )));
                    }
                    result
                }
                Ok(Err(e)) => tool_error(e.message),
                Err(call_error) => {
                    eprintln!("mediagate mcp: view_image({:?}) failed in the sandbox: {call_error}", arguments.path);
                    tool_error(format!("error: {call_error}"))
                }
            }
        };
        tokio::select! {
            result = call => result,
            () = context.ct.cancelled() => tool_error("error: the call was cancelled".to_string()),
        }
    }
}

/// An admitted image is an `image` block, a PDF an embedded `resource` (`blob`); a refusal is
/// `isError` with the reason in words and no bytes. The payload is the admitted bytes
/// (`AdmittedData::Payload`: the server has none of its own).
fn view_image_result(path: &str, verdict: Verdict) -> CallToolResult {
    match verdict {
        Verdict::Admitted(a) if a.payload == Payload::Unchanged => {
            tool_error(format!("error: the gate admitted {path} but handed back no bytes; nothing is shown"))
        }
        Verdict::Admitted(a) if a.kind == BlockKind::Document => {
            let uri = format!("file:///{}", path.trim_start_matches('/'));
            CallToolResult::success(vec![ContentBlock::resource(
                ResourceContents::blob(a.base64(&[]), uri).with_mime_type(a.mime),
            )])
        }
        Verdict::Admitted(a) => CallToolResult::success(vec![ContentBlock::image(a.base64(&[]), a.mime)]),
        Verdict::Refused(r) => tool_error(format!(
            "error: {path} was refused: {} — {} ({} bytes{})",
            r.reason.as_str(),
            r.message,
            r.raw_bytes,
            r.limit.map(|l| format!(", limit {l}")).unwrap_or_default()
        )),
    }
}

fn tool_error(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// `notifications/progress` for one call whose request carried a progress token: the chunks that
/// arrived since the last one, batched, at most one per [`PROGRESS_INTERVAL`] and
/// [`MAX_PROGRESS_NOTIFICATIONS`] in all; `progress` is the number of chunks so far (content and
/// reasoning), `message` the answer so far (its last [`PROGRESS_MESSAGE_CHARS`] characters when
/// longer). Reasoning text is never sent.
struct Progress {
    token: ProgressToken,
    peer: Peer<RoleServer>,
    chunks: u64,
    answer: AnswerTail,
    client_gone: bool,
    /// Chunks arrived that no notification told yet.
    unsent: bool,
    sent: u64,
    last_sent: Option<Instant>,
}

impl Progress {
    fn new(token: ProgressToken, peer: Peer<RoleServer>) -> Self {
        Progress {
            token,
            peer,
            chunks: 0,
            answer: AnswerTail::default(),
            client_gone: false,
            unsent: false,
            sent: 0,
            last_sent: None,
        }
    }

    fn take(&mut self, (kind, text): (ChunkKind, String)) {
        self.chunks += 1;
        self.unsent = true;
        if kind == ChunkKind::Content {
            self.answer.push(&text);
        }
    }

    /// When the next notification may go, if there is something to tell and it may.
    fn due(&self) -> Option<Instant> {
        if !self.unsent || self.client_gone || self.sent >= MAX_PROGRESS_NOTIFICATIONS {
            return None;
        }
        Some(self.last_sent.map_or_else(Instant::now, |at| at + PROGRESS_INTERVAL))
    }

    async fn send(&mut self) {
        if self.client_gone || self.sent >= MAX_PROGRESS_NOTIFICATIONS {
            return;
        }
        self.unsent = false;
        self.sent += 1;
        self.last_sent = Some(Instant::now());
        let message =
            if self.answer.is_empty() { "the model is reasoning…".to_string() } else { self.answer.message() };
        let notification = ProgressNotificationParam::new(self.token.clone(), self.chunks as f64).with_message(message);
        // A failure means the transport is closed; the call itself still ends normally.
        self.client_gone = self.peer.notify_progress(notification).await.is_err();
    }
}

/// The end of the answer received so far, bounded in memory.
#[derive(Default)]
struct AnswerTail {
    text: String,
    chars: usize,
    cut: bool,
}

impl AnswerTail {
    fn push(&mut self, text: &str) {
        self.text.push_str(text);
        self.chars += text.chars().count();
        if self.chars > 2 * PROGRESS_MESSAGE_CHARS {
            let drop = self.chars - PROGRESS_MESSAGE_CHARS;
            let at = self.text.char_indices().nth(drop).map_or(self.text.len(), |(i, _)| i);
            self.text.drain(..at);
            self.chars = PROGRESS_MESSAGE_CHARS;
            self.cut = true;
        }
    }

    fn is_empty(&self) -> bool {
        self.text.is_empty() && !self.cut
    }

    fn message(&self) -> String {
        if !self.cut && self.chars <= PROGRESS_MESSAGE_CHARS {
            return self.text.clone();
        }
        let skip = self.chars.saturating_sub(PROGRESS_MESSAGE_CHARS);
        let at = self.text.char_indices().nth(skip).map_or(self.text.len(), |(i, _)| i);
        format!("…{}", &self.text[at..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_message_is_the_answer_so_far_then_its_end() {
        let mut tail = AnswerTail::default();
        assert!(tail.is_empty());
        tail.push("Snow");
        tail.push("man ☃");
        assert_eq!(tail.message(), "Snowman ☃");
        let long = "日".repeat(3 * PROGRESS_MESSAGE_CHARS);
        tail.push(&long);
        tail.push("end");
        let message = tail.message();
        assert_eq!(message.chars().count(), PROGRESS_MESSAGE_CHARS + 1);
        assert!(message.starts_with('…') && message.ends_with("日日end"), "{message}");
        assert!(tail.text.chars().count() <= 2 * PROGRESS_MESSAGE_CHARS);
    }
}
