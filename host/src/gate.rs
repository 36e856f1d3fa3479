//! The admission gate as a host API: one fresh instance of the `preflight` component per call.

use std::sync::Arc;

use anyhow::Result;
use wasmtime::component::InstancePre;

use crate::bindings::exports::mediagate::gate::admission::{self, GuestIndices};
use crate::cache::Origin;
use crate::component::World;
use crate::error::CallError;
use crate::runtime::{CallState, Runtime};

pub use admission::{
    AdmitOptions, Admitted, AdmittedRequest, BlockKind, ChangeKind, Dimensions, MediaFacts, Provider, Refusal,
    RefusalReason, RefusedBlock, RequestApi, RequestChange, RequestRefusal, RequestVerdict, ToolResultAdmission,
    Verdict, Verify,
};

/// Downsample, Anthropic's limits, every pixel decoded: the options for bytes that go to a model.
impl Default for AdmitOptions {
    fn default() -> Self {
        AdmitOptions { downsample: true, provider: Provider::Anthropic, verify: Verify::Full }
    }
}

impl RefusalReason {
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalReason::Undecodable => "undecodable",
            RefusalReason::MimeUnsupported => "mime_unsupported",
            RefusalReason::RawTooLarge => "raw_too_large",
            RefusalReason::MagicMismatch => "magic_mismatch",
            RefusalReason::Base64TooLarge => "base64_too_large",
            RefusalReason::DimensionsTooLarge => "dimensions_too_large",
            RefusalReason::RequestLimit => "request_limit",
        }
    }
}

impl Provider {
    pub fn parse(name: &str) -> Option<Provider> {
        match name.to_ascii_lowercase().as_str() {
            "anthropic" => Some(Provider::Anthropic),
            "openai" => Some(Provider::Openai),
            "gemini" => Some(Provider::Gemini),
            "ollama" => Some(Provider::Ollama),
            _ => None,
        }
    }
}

impl RequestApi {
    pub fn parse(name: &str) -> Option<RequestApi> {
        match name.to_ascii_lowercase().as_str() {
            "anthropic" => Some(RequestApi::Anthropic),
            "openai" => Some(RequestApi::Openai),
            _ => None,
        }
    }

    /// The provider whose per-image limits apply to this API's requests unless a caller names another.
    pub fn provider(self) -> Provider {
        match self {
            RequestApi::Anthropic => Provider::Anthropic,
            RequestApi::Openai => Provider::Openai,
        }
    }
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Downsampled => "downsampled",
            ChangeKind::Reencoded => "re-encoded",
            ChangeKind::Normalized => "normalized",
            ChangeKind::Refused => "refused",
        }
    }
}

/// What one call cost the sandbox.
#[derive(Clone, Copy, Debug)]
pub struct CallStats {
    /// The largest the guest's linear memory grew to, in bytes.
    pub peak_memory: usize,
}

/// The gate, ready to admit: compiled once, instantiated per call.
#[derive(Clone)]
pub struct Gate {
    runtime: Arc<Runtime>,
    pre: InstancePre<CallState<()>>,
    indices: Arc<GuestIndices>,
    origin: Origin,
}

impl Gate {
    pub fn new(runtime: Arc<Runtime>) -> Result<Self> {
        let (component, origin) = runtime.load(World::Preflight.bytes())?;
        // The preflight component imports nothing: an empty linker, and no WASI context per call.
        let linker = wasmtime::component::Linker::new(runtime.engine());
        let pre = linker.instantiate_pre(&component)?;
        let indices = Arc::new(GuestIndices::new(&pre)?);
        Ok(Gate { runtime, pre, indices, origin })
    }

    /// Whether the compiled component came from the disk cache or was compiled now.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    pub async fn admit_image(
        &self,
        bytes: &[u8],
        claimed_mime: &str,
        options: AdmitOptions,
    ) -> Result<Verdict, CallError> {
        self.admit_image_with_stats(bytes, claimed_mime, options).await.map(|(verdict, _)| verdict)
    }

    /// [`Gate::admit_image`], and what the call cost the sandbox.
    pub async fn admit_image_with_stats(
        &self,
        bytes: &[u8],
        claimed_mime: &str,
        options: AdmitOptions,
    ) -> Result<(Verdict, CallStats), CallError> {
        let mut store = self.store();
        let result = async {
            let gate = self.instantiate(&mut store).await?;
            gate.call_admit_image(&mut store, bytes, claimed_mime, options).await
        };
        let result = self.runtime.bounded(result).await;
        let stats = CallStats { peak_memory: store.data().peak_memory() };
        self.finish(result).map(|v| (v, stats))
    }

    pub async fn admit_document(
        &self,
        bytes: &[u8],
        claimed_mime: &str,
        options: AdmitOptions,
    ) -> Result<Verdict, CallError> {
        let mut store = self.store();
        let result = async {
            let gate = self.instantiate(&mut store).await?;
            gate.call_admit_document(&mut store, bytes, claimed_mime, options).await
        };
        let result = self.runtime.bounded(result).await;
        self.finish(result)
    }

    pub async fn admit_tool_result(
        &self,
        tool: &str,
        content_json: &str,
        options: AdmitOptions,
    ) -> Result<ToolResultAdmission, CallError> {
        let mut store = self.store();
        let result = async {
            let gate = self.instantiate(&mut store).await?;
            gate.call_admit_tool_result(&mut store, tool, content_json, options).await
        };
        let result = self.runtime.bounded(result).await;
        self.finish(result)
    }

    /// Admit a whole provider request (Anthropic Messages or OpenAI Chat Completions JSON): every
    /// image and document block in its messages admitted in place or replaced in its slot, and the
    /// API's request-level rules applied. `options.provider` is the per-image profile (usually
    /// [`RequestApi::provider`]).
    pub async fn admit_request(
        &self,
        api: RequestApi,
        request_json: &str,
        options: AdmitOptions,
    ) -> Result<RequestVerdict, CallError> {
        let mut store = self.store();
        let result = async {
            let gate = self.instantiate(&mut store).await?;
            gate.call_admit_request(&mut store, api, request_json, options).await
        };
        let result = self.runtime.bounded(result).await;
        self.finish(result)
    }

    pub async fn sniff(&self, bytes: &[u8]) -> Result<String, CallError> {
        let mut store = self.store();
        let result = async {
            let gate = self.instantiate(&mut store).await?;
            gate.call_sniff(&mut store, bytes).await
        };
        let result = self.runtime.bounded(result).await;
        self.finish(result)
    }

    async fn instantiate(&self, store: &mut wasmtime::Store<CallState<()>>) -> wasmtime::Result<admission::Guest> {
        let instance = self.pre.instantiate_async(&mut *store).await?;
        self.indices.load(&mut *store, &instance)
    }

    fn store(&self) -> wasmtime::Store<CallState<()>> {
        self.runtime.store(())
    }

    fn finish<R>(&self, result: wasmtime::Result<R>) -> Result<R, CallError> {
        result.map_err(|e| CallError::classify(e, self.runtime.limits().memory_bytes))
    }
}
