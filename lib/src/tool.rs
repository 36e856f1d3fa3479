//! The `read_image` tool as a host API: one fresh instance of the `agent-tool` component per call,
//! the workspace as its only preopen (read-only), the VLM and the output sink as its imports.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use wasmtime::component::{HasData, HasSelf, Linker, Resource, ResourceTable};
use wasmtime_wasi::clocks::WasiClocksView;
use wasmtime_wasi::filesystem::{WasiFilesystemCtx, WasiFilesystemView};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::bindings::exports::mediagate::gate::tool as wit_tool;
use crate::bindings::mediagate::gate::{output, vlm as wit_vlm};
use crate::bindings::{AgentTool, AgentToolPre};
use crate::cache::Origin;
use crate::component::World;
use crate::error::CallError;
use crate::gate::{Admission, AdmitOptions};
use crate::runtime::{Answered, CallState, CallStats, Runtime};
use crate::vlm::{ChunkKind, ReplyStream, VlmClient, VlmConfig, VlmError};
use wasmtime::Store;

pub use crate::bindings::exports::mediagate::gate::workspace_admission::{
    AdmittedData, FileError, FileErrorCode, WorkspaceFile,
};
pub use wit_tool::{ToolDefinition, ToolError, ToolErrorCode};

/// A workspace that could not be opened, as the 0.3.0 workspace entry says it.
fn file_error_code(code: ToolErrorCode) -> FileErrorCode {
    match code {
        ToolErrorCode::NotFound => FileErrorCode::NotFound,
        ToolErrorCode::NotAFile => FileErrorCode::NotAFile,
        ToolErrorCode::OutsideWorkspace => FileErrorCode::OutsideWorkspace,
        ToolErrorCode::TooLarge => FileErrorCode::TooLarge,
        _ => FileErrorCode::Io,
    }
}

/// Receives the tool's live output as it arrives.
pub type Sink = Arc<dyn Fn(ChunkKind, &str) + Send + Sync>;

/// What one call's store holds: the WASI context (the workspace preopen and nothing else), the VLM
/// and the sink.
pub struct ToolCtx {
    wasi: WasiCtx,
    vlm: Option<Arc<VlmClient>>,
    sink: Sink,
    budget: SinkBudget,
    asks: AskBudget,
}

/// `vlm.ask` calls one tool call may make: `read_image` shows the model one image once. A guest
/// that asks again (a bug, or a loop gone wild) gets an error in words and no request is sent, so
/// one call never costs more than one model request.
pub const ASKS_PER_CALL: u32 = 1;

#[derive(Default)]
struct AskBudget {
    asked: u32,
}

impl AskBudget {
    fn take(&mut self) -> Result<(), wit_vlm::VlmError> {
        if self.asked >= ASKS_PER_CALL {
            return Err(wit_vlm::VlmError::Unreachable(format!(
                "this call already asked the vision model {ASKS_PER_CALL} time(s), as many as one call may; \
                 nothing was sent"
            )));
        }
        self.asked += 1;
        Ok(())
    }
}

/// A workspace directory resolved and opened once: its canonical path (the guest sees it under
/// that name) and the open directory every call's preopen shares. A call on it never looks the
/// path up again, so a directory renamed, or replaced by a symlink, after it was opened is not
/// followed: the calls keep reading the directory that was opened.
#[derive(Clone)]
pub struct WorkspaceDir {
    root: PathBuf,
    filesystem: WasiFilesystemCtx,
}

impl std::fmt::Debug for WorkspaceDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("WorkspaceDir").field(&self.root).finish()
    }
}

impl WorkspaceDir {
    /// Resolves `path` (symlinks followed, made absolute) and opens it read-only.
    pub fn open(path: &Path) -> Result<WorkspaceDir, ToolError> {
        let io = |message: String| ToolError { code: ToolErrorCode::Io, message: format!("error: {message}") };
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(io(format!("the workspace {} is not a directory", path.display()))),
            Err(e) => return Err(io(format!("the workspace {} cannot be opened: {e}", path.display()))),
        }
        let root = std::fs::canonicalize(path)
            .map_err(|e| io(format!("the workspace {} cannot be opened: {e}", path.display())))?;
        let guest_root = root.to_str().ok_or_else(|| io("the workspace path must be UTF-8".into()))?.to_string();
        let mut wasi = WasiCtxBuilder::new();
        // Mounted at its own absolute path, so an agent's absolute paths inside it work.
        wasi.preopened_dir(&root, guest_root, FsPerms::ReadOnly)
            .map_err(|e| io(format!("cannot open the workspace {}: {e:#}", root.display())))?;
        let filesystem = wasi.build().filesystem().clone();
        Ok(WorkspaceDir { root, filesystem })
    }

    /// The canonical path it was opened at.
    pub fn path(&self) -> &Path {
        &self.root
    }
}

/// What names a workspace for a call: a path (resolved and opened for that call) or a
/// [`WorkspaceDir`] opened before (used as it is: a long-running server opens it once).
pub trait AsWorkspace {
    fn workspace(&self) -> Result<Cow<'_, WorkspaceDir>, ToolError>;
}

impl AsWorkspace for WorkspaceDir {
    fn workspace(&self) -> Result<Cow<'_, WorkspaceDir>, ToolError> {
        Ok(Cow::Borrowed(self))
    }
}

impl AsWorkspace for Path {
    fn workspace(&self) -> Result<Cow<'_, WorkspaceDir>, ToolError> {
        WorkspaceDir::open(self).map(Cow::Owned)
    }
}

impl AsWorkspace for PathBuf {
    fn workspace(&self) -> Result<Cow<'_, WorkspaceDir>, ToolError> {
        self.as_path().workspace()
    }
}

impl<T: AsWorkspace + ?Sized> AsWorkspace for &T {
    fn workspace(&self) -> Result<Cow<'_, WorkspaceDir>, ToolError> {
        (**self).workspace()
    }
}

/// Characters of each kind the host passes from one call to its sink. The guest writes at most
/// the answer cap and two short notices of each kind (`Live` in guest/src/tool.rs); this bounds a
/// guest that does not (a decoder bug gone wild, say), whose writes past it are dropped.
pub const SINK_CAP_CHARS: usize = 200_000 + 4_096;

/// What one call has written to its sink so far, per kind.
#[derive(Default)]
struct SinkBudget {
    written: [usize; 2],
}

impl SinkBudget {
    /// The part of `text` still within [`SINK_CAP_CHARS`] for its kind (possibly empty).
    fn take<'t>(&mut self, kind: ChunkKind, text: &'t str) -> &'t str {
        let used = &mut self.written[match kind {
            ChunkKind::Content => 0,
            ChunkKind::Reasoning => 1,
        }];
        let room = SINK_CAP_CHARS - *used;
        let fits = match text.char_indices().nth(room) {
            None => text,
            Some((at, _)) => &text[..at],
        };
        *used += fits.chars().count();
        fits
    }
}

/// `read_image`, ready to call: compiled once, instantiated per call.
#[derive(Clone)]
pub struct ReadImageTool {
    runtime: Arc<Runtime>,
    pre: AgentToolPre<CallState<ToolCtx>>,
    vlm: Option<Arc<VlmClient>>,
    origin: Origin,
    defaults: AdmitOptions,
}

impl ReadImageTool {
    /// `vlm: None` — the deployment has no VLM; the tool then answers so at once.
    pub fn new(runtime: Arc<Runtime>, vlm: Option<VlmConfig>) -> Result<Self> {
        // The VLM configuration first: one that is refused (a key over plain http) costs no compile.
        let vlm = match vlm {
            Some(config) => {
                Some(Arc::new(VlmClient::new(config).map_err(|e| anyhow::anyhow!("configuring the VLM client: {e}"))?))
            }
            None => None,
        };
        let (component, origin) = runtime.load(World::AgentTool.bytes())?;
        let mut linker = Linker::new(runtime.engine());
        // The world's imports and nothing else: the filesystem preopen and the interfaces its types
        // use (tests/e2e/gate.rs checks the component's list), the VLM and the output sink.
        add_declared_wasi_to_linker(&mut linker).map_err(anyhow::Error::from)?;
        wit_vlm::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s).map_err(anyhow::Error::from)?;
        output::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s).map_err(anyhow::Error::from)?;
        let pre = AgentToolPre::new(linker.instantiate_pre(&component).map_err(anyhow::Error::from)?)
            .map_err(anyhow::Error::from)?;
        let store = runtime.store(ToolCtx::new(WasiCtxBuilder::new().build(), None, noop_sink()));
        let defaults = runtime
            .call_blocking(pre.instance_pre(), store, async |store, instance| {
                AgentTool::new(&mut *store, &instance)?.mediagate_gate_admission().call_default_options(store).await
            })?
            .answer;
        Ok(ReadImageTool { runtime, pre, vlm, origin, defaults })
    }

    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// The options a caller that names none gets, as the component defines them.
    pub fn default_options(&self) -> AdmitOptions {
        self.defaults
    }

    /// The tool's name, description and JSON schema, as the component publishes them.
    pub async fn definition(&self) -> Result<ToolDefinition, CallError> {
        let store = self.store(None, noop_sink());
        self.call(store, async |tool, store| tool.mediagate_gate_tool().call_definition(store).await)
            .await
            .map(|a| a.answer)
    }

    /// Runs `read_image(path, question, page)` against `workspace`, streaming to `sink`. `page` is
    /// the tool's `page` argument: the page (1-based, default 1) of a PDF to render; a type no
    /// provider takes is converted before the model sees it.
    /// `Ok` answers `Err(ToolError)` for the tool's own failure (not found, not an image, VLM
    /// failed…), with what the call cost the sandbox (nothing when no instance was made);
    /// `Err(CallError)` means the sandbox itself failed (trap, limit).
    pub async fn read_image(
        &self,
        workspace: &(impl AsWorkspace + ?Sized),
        path: &str,
        question: Option<&str>,
        page: Option<u32>,
        sink: Sink,
    ) -> Result<Answered<Result<String, ToolError>>, CallError> {
        // Without a VLM the tool answers so at once: no workspace is opened.
        let workspace = match self.vlm.is_some().then(|| workspace.workspace()).transpose() {
            Ok(w) => w,
            Err(e) => return Ok(Answered { answer: Err(e), stats: CallStats { peak_memory: 0 } }),
        };
        let store = self.store(workspace.as_deref(), sink);
        self.call(store, async |tool, store| {
            tool.mediagate_gate_tool().call_read_image(store, path, question, page).await
        })
        .await
    }

    /// The gate on a workspace file: read through the preopen and judged by the one entry
    /// `Gate::admit` calls, with its path for a name. The answer carries the JSON every host
    /// prints; with [`AdmittedData::Payload`] an admitted block's payload is always its bytes.
    /// The seat exists for hosts that lower a `list<u8>` value by value (wasmtime-py).
    pub async fn admit_workspace_file(
        &self,
        workspace: &(impl AsWorkspace + ?Sized),
        file: &WorkspaceFile,
        options: AdmitOptions,
    ) -> Result<Answered<Result<Admission, FileError>>, CallError> {
        let answered = self
            .call_in_workspace(workspace, async |tool, store| {
                tool.mediagate_gate_workspace_admission().call_admit_file(store, file, options).await
            })
            .await?;
        Ok(answered.map(|answer| {
            answer.map_err(|e| FileError { code: file_error_code(e.code), message: e.message }).flatten()
        }))
    }

    /// One export of the `agent-tool` component with `workspace` opened as its one preopen; a
    /// workspace that cannot be opened is the tool error, and no instance is made (nor memory used).
    async fn call_in_workspace<R>(
        &self,
        workspace: &(impl AsWorkspace + ?Sized),
        call: impl AsyncFnOnce(AgentTool, &mut Store<CallState<ToolCtx>>) -> wasmtime::Result<R>,
    ) -> Result<Answered<Result<R, ToolError>>, CallError> {
        let workspace = match workspace.workspace() {
            Ok(w) => w,
            Err(e) => return Ok(Answered { answer: Err(e), stats: CallStats { peak_memory: 0 } }),
        };
        let store = self.store(Some(&workspace), noop_sink());
        self.call(store, call).await.map(|answered| answered.map(Ok))
    }

    /// A store whose one preopen, if any, is the workspace's directory as it was opened.
    fn store(&self, workspace: Option<&WorkspaceDir>, sink: Sink) -> wasmtime::Store<CallState<ToolCtx>> {
        let mut wasi = WasiCtxBuilder::new().build();
        if let Some(ws) = workspace {
            *wasi.filesystem() = ws.filesystem.clone();
        }
        self.runtime.store(ToolCtx::new(wasi, self.vlm.clone(), sink))
    }

    /// One export of the `agent-tool` component through [`Runtime::call`].
    async fn call<R>(
        &self,
        store: Store<CallState<ToolCtx>>,
        call: impl AsyncFnOnce(AgentTool, &mut Store<CallState<ToolCtx>>) -> wasmtime::Result<R>,
    ) -> Result<Answered<R>, CallError> {
        let pre = self.pre.instance_pre();
        self.runtime
            .call(pre, store, async |store, instance| {
                let tool = AgentTool::new(&mut *store, &instance)?;
                call(tool, store).await
            })
            .await
    }
}

impl ToolCtx {
    fn new(wasi: WasiCtx, vlm: Option<Arc<VlmClient>>, sink: Sink) -> Self {
        ToolCtx { wasi, vlm, sink, budget: SinkBudget::default(), asks: AskBudget::default() }
    }
}

/// The WASI interfaces the `agent-tool` world imports (`wasi:filesystem/preopens` and what its types
/// use: `wasi:filesystem/types`, `wasi:clocks/wall-clock`, `wasi:io/{error,poll,streams}`), with
/// wasmtime-wasi's implementations. No cli, environment, random, sockets or monotonic clock.
fn add_declared_wasi_to_linker(linker: &mut Linker<CallState<ToolCtx>>) -> wasmtime::Result<()> {
    use wasmtime_wasi::clocks::WasiClocks;
    use wasmtime_wasi::filesystem::WasiFilesystem;
    use wasmtime_wasi::p2::bindings::{clocks, filesystem, io};
    type T = CallState<ToolCtx>;
    filesystem::types::add_to_linker::<T, WasiFilesystem>(linker, T::filesystem)?;
    filesystem::preopens::add_to_linker::<T, WasiFilesystem>(linker, T::filesystem)?;
    clocks::wall_clock::add_to_linker::<T, WasiClocks>(linker, T::clocks)?;
    io::error::add_to_linker::<T, HasTable>(linker, |t| t.table())?;
    io::poll::add_to_linker::<T, HasTable>(linker, |t| t.table())?;
    io::streams::add_to_linker::<T, HasTable>(linker, |t| t.table())?;
    Ok(())
}

/// The wasi:io host implementations work on the resource table alone.
struct HasTable;

impl HasData for HasTable {
    type Data<'a> = &'a mut ResourceTable;
}

fn noop_sink() -> Sink {
    Arc::new(|_, _| {})
}

impl WasiView for CallState<ToolCtx> {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let (extra, table) = self.extra_and_table();
        WasiCtxView { ctx: &mut extra.wasi, table }
    }
}

impl wit_vlm::Host for CallState<ToolCtx> {
    async fn configured(&mut self) -> wasmtime::Result<bool> {
        Ok(self.extra.vlm.is_some())
    }

    async fn api(&mut self) -> wasmtime::Result<wit_vlm::ApiDialect> {
        Ok(match self.extra.vlm.as_ref().map(|v| v.config().api) {
            Some(crate::vlm::Api::Anthropic) => wit_vlm::ApiDialect::Anthropic,
            // With no VLM the guest never asks; OpenAI-compatible is the default dialect.
            Some(crate::vlm::Api::OpenAi) | None => wit_vlm::ApiDialect::Openai,
        })
    }

    async fn ask(
        &mut self,
        prompt: String,
        image: wit_vlm::Image,
    ) -> wasmtime::Result<Result<Resource<wit_vlm::Reply>, wit_vlm::VlmError>> {
        let Some(vlm) = self.extra.vlm.clone() else {
            return Ok(Err(wit_vlm::VlmError::NotConfigured));
        };
        if let Err(e) = self.extra.asks.take() {
            return Ok(Err(e));
        }
        let started = Instant::now();
        self.give_turn_back();
        let reply = vlm.ask(&prompt, &image.mime, &image.data).await;
        self.take_turn().await;
        self.host_time += started.elapsed();
        match reply {
            Ok(reply) => Ok(Ok(Resource::new_own(self.table().push(reply)?.rep()))),
            Err(e) => Ok(Err(e.into_kind())),
        }
    }
}

impl wit_vlm::HostReply for CallState<ToolCtx> {
    async fn next_chunk(
        &mut self,
        reply: Resource<wit_vlm::Reply>,
    ) -> wasmtime::Result<Result<Option<wit_vlm::Chunk>, wit_vlm::VlmError>> {
        let started = Instant::now();
        self.give_turn_back();
        let chunk = self.table().get_mut(&reply_stream(&reply))?.next_chunk().await.map_err(VlmError::into_kind);
        self.take_turn().await;
        self.host_time += started.elapsed();
        Ok(chunk)
    }

    async fn drop(&mut self, reply: Resource<wit_vlm::Reply>) -> wasmtime::Result<()> {
        self.table().delete(reply_stream(&reply))?;
        Ok(())
    }
}

/// The stream a guest's `reply` handle stands for: the table entry at its index, which the table
/// hands out only as a `ReplyStream` (any other entry there is an error, not a stream).
fn reply_stream(reply: &Resource<wit_vlm::Reply>) -> Resource<ReplyStream> {
    Resource::new_own(reply.rep())
}

impl output::Host for CallState<ToolCtx> {
    async fn write(&mut self, kind: ChunkKind, text: String) -> wasmtime::Result<()> {
        let text = self.extra.budget.take(kind, &text);
        if !text.is_empty() {
            (self.extra.sink)(kind, text);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_asks_the_model_once() {
        let mut asks = AskBudget::default();
        assert!(asks.take().is_ok());
        let e = VlmError::from(asks.take().unwrap_err()).to_string();
        assert!(e.contains("already asked") && e.contains("nothing was sent"), "{e}");
        assert!(asks.take().is_err());
    }

    #[test]
    fn the_sink_gets_at_most_its_cap_of_each_kind() {
        let mut budget = SinkBudget::default();
        let piece = "é".repeat(100_000);
        assert_eq!(budget.take(ChunkKind::Content, &piece).chars().count(), 100_000);
        assert_eq!(budget.take(ChunkKind::Content, &piece).chars().count(), 100_000);
        assert_eq!(budget.take(ChunkKind::Content, &piece).chars().count(), SINK_CAP_CHARS - 200_000);
        assert_eq!(budget.take(ChunkKind::Content, "more"), "");
        // Reasoning has its own budget.
        assert_eq!(budget.take(ChunkKind::Reasoning, "think"), "think");
    }
}
