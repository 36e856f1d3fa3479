//! The admission gate as a host API: one fresh instance of the `preflight` component per call.

use std::sync::Arc;

use anyhow::Result;
use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

use crate::bindings::exports::mediagate::gate0_2_0::admission::{self, GuestIndices};
use crate::bindings::exports::mediagate::gate0_2_0::conversion;
use crate::bindings::exports::mediagate::gate0_3_0::admission as entry;
use crate::cache::Origin;
use crate::component::World;
use crate::error::CallError;
use crate::runtime::{CallState, Runtime};

pub use crate::runtime::CallStats;
pub use admission::{
    AdmitOptions, Admitted, AdmittedRequest, BlockKind, ChangeKind, Dimensions, MediaFacts, Payload, Provider, Refusal,
    RefusalReason, RefusedBlock, RequestApi, RequestChange, RequestRefusal, RequestVerdict, ToolResultAdmission,
    Verdict, Verify,
};
pub use conversion::{ConversionMade, ConvertedRequest, ConvertedToolResult, ConvertedVerdict, PageCount, PageError};

/// `bytes` and `base64` of a contract version's `Admitted`, whose `payload` is the bytes or
/// `unchanged` (the input's own): one body over each version's generated types.
macro_rules! admitted_payload {
    ($admitted:ty, $payload:ty) => {
        impl $admitted {
            /// The admitted bytes; `input` is what the gate was given (the bytes when `unchanged`).
            pub fn bytes<'a>(&'a self, input: &'a [u8]) -> &'a [u8] {
                type P = $payload;
                match &self.payload {
                    P::Unchanged => input,
                    P::Bytes(b) => b,
                }
            }

            /// The block's `data`: base64 (standard alphabet, padded) of the admitted bytes, encoded
            /// with SIMD; `input` is what the gate was given.
            pub fn base64(&self, input: &[u8]) -> String {
                base64(self.bytes(input))
            }
        }
    };
}

/// `as_str` of generated enums: the name users see, made from the WIT case name by `$shown` (the
/// WIT is the one source of those names) once per case and kept.
macro_rules! wit_names {
    ($($(#[$doc:meta])* $ty:ty => $shown:expr),* $(,)?) => {
        $(
            impl $ty {
                $(#[$doc])*
                pub fn as_str(self) -> &'static str {
                    static NAMES: WitNames = WitNames::new();
                    NAMES.get(self as usize, || ($shown)(wit_case_name(&self)))
                }
            }
        )*
    };
}

/// Contract 0.3.0's types: one entry per input, each answer with the JSON every host prints.
pub mod v3 {
    pub use super::entry::{
        Admission, AdmitOptions, Admitted, BatchApi, BatchFileRule, BatchLineAdmission, BatchLineInput,
        BatchLineOutcome, BlockKind, ChangeKind, InputError, InputMedia, Payload, Provider, RefusalReason,
        RequestAdmission, RequestChange, RequestInput, RequestRefusal, RequestVerdict, ToolResultAdmission,
        ToolResultInput, Verdict, Verify,
    };
}

admitted_payload!(v3::Admitted, v3::Payload);
admitted_payload!(Admitted, Payload);

impl Admitted {
    /// The admitted bytes, owned (`input` moved, not copied, when `unchanged`).
    pub fn into_bytes(self, input: Vec<u8>) -> Vec<u8> {
        match self.payload {
            Payload::Unchanged => input,
            Payload::Bytes(b) => b,
        }
    }
}

wit_names! {
    /// The name users see (JSON `reason`): the WIT case name with `_` for `-` (`no_such_page`).
    v3::RefusalReason => |name: String| name.replace('-', "_"),
    /// The name users see (JSON `reason`): the WIT case name with `_` for `-` (`mime_unsupported`).
    RefusalReason => |name: String| name.replace('-', "_"),
    /// The name users see, as [`RefusalReason::as_str`] (the 0.1.0 verdict of `admit_file`).
    crate::bindings::exports::mediagate::gate0_1_0::admission::RefusalReason => |name: String| name.replace('-', "_"),
    /// The name users see (JSON `what`): the WIT case name (`re-encoded`).
    v3::ChangeKind => |name: String| name,
    /// The name users see (JSON `what`): the WIT case name (`re-encoded`).
    ChangeKind => |name: String| name,
}

impl PageError {
    /// The error in words (each kind its own), for a person or a model.
    pub fn message(&self) -> String {
        match self {
            PageError::NoSuchPage(PageCount { requested, count }) => {
                format!("page {requested} does not exist: the PDF has {count} page(s), numbered from 1")
            }
            PageError::Encrypted(words) => words.clone(),
            PageError::Blank(page) => format!("page {page} of the PDF renders to nothing (every pixel is blank)"),
            PageError::Refused(r) => r.message.clone(),
        }
    }

    /// The name of the kind (JSON `error`): the WIT case name with `_` (`no_such_page`).
    pub fn kind(&self) -> &'static str {
        match self {
            PageError::NoSuchPage(_) => "no_such_page",
            PageError::Encrypted(_) => "encrypted",
            PageError::Blank(_) => "blank",
            PageError::Refused(_) => "refused",
        }
    }
}

/// Standard, padded base64 (SIMD where the CPU has it): what a block's `data` is.
pub fn base64(bytes: &[u8]) -> String {
    base64_simd::STANDARD.encode_to_string(bytes)
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

/// The WIT case name of a value of a generated enum, from its generated `Debug`
/// (`RefusalReason::MimeUnsupported` → `mime-unsupported`): the WIT is the one source of the names
/// users see, no host writes them again.
fn wit_case_name(value: &impl std::fmt::Debug) -> String {
    let debug = format!("{value:?}");
    let case = debug.rsplit("::").next().unwrap_or(&debug);
    let mut name = String::with_capacity(case.len() + 4);
    for (i, c) in case.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                name.push('-');
            }
            name.push(c.to_ascii_lowercase());
        } else {
            name.push(c);
        }
    }
    name
}

/// Each case's name made once and kept for the process (an enum has a handful of cases).
struct WitNames(std::sync::Mutex<[Option<&'static str>; 32]>);

impl WitNames {
    const fn new() -> Self {
        WitNames(std::sync::Mutex::new([None; 32]))
    }

    fn get(&self, case: usize, make: impl FnOnce() -> String) -> &'static str {
        let mut names = self.0.lock().unwrap_or_else(|e| e.into_inner());
        names[case].get_or_insert_with(|| Box::leak(make().into_boxed_str()))
    }
}

/// The gate, ready to admit: compiled once, instantiated per call. The converting calls run the
/// `convert` component, loaded on their first use (the preflight path never loads it).
#[derive(Clone)]
pub struct Gate {
    runtime: Arc<Runtime>,
    pre: InstancePre<CallState<()>>,
    indices: Arc<GuestIndices>,
    origin: Origin,
    entry: Arc<entry::GuestIndices>,
    /// Read from the component on first use: a call that names its options in full (the 0.3.0
    /// entries take each one as optional) never pays an instantiation for them.
    defaults: Arc<std::sync::OnceLock<AdmitOptions>>,
    converter: Arc<std::sync::OnceLock<Converter>>,
}

/// The `convert` component, ready to instantiate.
struct Converter {
    pre: InstancePre<CallState<()>>,
    indices: Arc<conversion::GuestIndices>,
    entry: Arc<entry::GuestIndices>,
}

impl Gate {
    pub fn new(runtime: Arc<Runtime>) -> Result<Self> {
        let (component, origin) = runtime.load(World::Preflight.bytes())?;
        // The preflight component imports nothing: an empty linker, and no WASI context per call.
        let linker = wasmtime::component::Linker::new(runtime.engine());
        let pre = linker.instantiate_pre(&component)?;
        let indices = Arc::new(GuestIndices::new(&pre)?);
        let entry = Arc::new(entry::GuestIndices::new(&pre)?);
        Ok(Gate { runtime, pre, indices, entry, origin, defaults: Arc::default(), converter: Arc::default() })
    }

    /// Whether the compiled component came from the disk cache or was compiled now.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// The options a caller that names none gets, as the component defines them (read once, on
    /// first use): downsample, Anthropic's limits, every pixel decoded.
    ///
    /// # Panics
    /// When the component cannot answer `default-options` (a function of no argument): a build
    /// whose component cannot do that cannot admit anything either.
    pub fn default_options(&self) -> AdmitOptions {
        *self.defaults.get_or_init(|| {
            let store = self.runtime.store(());
            let (defaults, _) = self
                .runtime
                .call_blocking(&self.pre, store, async |store, instance| {
                    self.indices.load(&mut *store, &instance)?.call_default_options(store).await
                })
                .expect("the component answers default-options");
            defaults
        })
    }

    /// Admit one input (contract 0.3.0): the gate sniffs, picks the type (the claimed one, else
    /// the bytes' when it admits them, else the name's extension) and dispatches (image, document,
    /// conversion, PDF page). One instantiation: of `preflight`, or of `convert` when the input
    /// asks to convert or for a page. The answer carries the verdict's JSON, the one to print.
    pub async fn admit(
        &self,
        input: &entry::InputMedia,
        options: entry::AdmitOptions,
    ) -> Result<Result<entry::Admission, entry::InputError>, CallError> {
        self.admit_with_stats(input, options).await.map(|(answer, _)| answer)
    }

    /// [`Gate::admit`], and what the call cost the sandbox.
    pub async fn admit_with_stats(
        &self,
        input: &entry::InputMedia,
        options: entry::AdmitOptions,
    ) -> Result<(Result<entry::Admission, entry::InputError>, CallStats), CallError> {
        let converting = input.convert || input.page.is_some();
        self.entry_call(converting, async |gate, store| gate.call_admit(store, input, options).await).await
    }

    /// Admit every media block of a tool's result (contract 0.3.0); the answer carries the JSON
    /// to print. Converting runs the `convert` component.
    pub async fn tool_result_admission(
        &self,
        tool: &str,
        content_json: &str,
        convert: bool,
        options: entry::AdmitOptions,
    ) -> Result<entry::ToolResultAdmission, CallError> {
        let input = entry::ToolResultInput { tool: tool.into(), content_json: content_json.into(), convert };
        self.entry_call(convert, async |gate, store| gate.call_admit_tool_result(store, &input, options).await)
            .await
            .map(|(v, _)| v)
    }

    /// Admit a whole provider request (contract 0.3.0); the answer carries the JSON report.
    pub async fn request_admission(
        &self,
        api: RequestApi,
        request_json: &str,
        convert: bool,
        options: entry::AdmitOptions,
    ) -> Result<entry::RequestAdmission, CallError> {
        let api = match api {
            RequestApi::Anthropic => entry::RequestApi::Anthropic,
            RequestApi::Openai => entry::RequestApi::Openai,
        };
        let input = entry::RequestInput { api, request_json: request_json.into(), convert };
        self.entry_call(convert, async |gate, store| gate.call_admit_request(store, &input, options).await)
            .await
            .map(|(v, _)| v)
    }

    /// Admit one request of a Batch API file (contract 0.3.0): its body judged by its endpoint's
    /// dialect, spliced back into the line; the answer carries the report line.
    pub async fn batch_line_admission(
        &self,
        input: &entry::BatchLineInput,
        options: entry::AdmitOptions,
    ) -> Result<entry::BatchLineAdmission, CallError> {
        self.entry_call(input.convert, async |gate, store| gate.call_admit_batch_line(store, input, options).await)
            .await
            .map(|(v, _)| v)
    }

    /// The Batch API's rules on a whole file that a file of `requests` requests and `bytes` bytes
    /// breaks (contract 0.3.0).
    pub async fn batch_file_rules(
        &self,
        api: entry::BatchApi,
        requests: u64,
        bytes: u64,
    ) -> Result<Vec<entry::BatchFileRule>, CallError> {
        self.entry_call(false, async |gate, store| gate.call_check_batch_file(store, api, requests, bytes).await)
            .await
            .map(|(v, _)| v)
    }

    /// One export of 0.3.0's `admission` through [`Runtime::call`], on `convert` when converting.
    async fn entry_call<R>(
        &self,
        converting: bool,
        call: impl AsyncFnOnce(entry::Guest, &mut Store<CallState<()>>) -> wasmtime::Result<R>,
    ) -> Result<(R, CallStats), CallError> {
        let (pre, indices) = if converting {
            let c = self.converter()?;
            (&c.pre, &c.entry)
        } else {
            (&self.pre, &self.entry)
        };
        let store = self.runtime.store(());
        self.runtime
            .call(pre, store, async |store, instance: Instance| {
                let gate = indices.load(&mut *store, &instance)?;
                call(gate, store).await
            })
            .await
    }

    /// Admit an image. An admitted block's `payload` is `unchanged` when the admitted bytes are
    /// `bytes` themselves; [`Admitted::base64`] gives its `data` either way.
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
        self.call(async |gate, store| gate.call_admit_image(store, bytes, claimed_mime, options).await).await
    }

    pub async fn admit_document(
        &self,
        bytes: &[u8],
        claimed_mime: &str,
        options: AdmitOptions,
    ) -> Result<Verdict, CallError> {
        self.call(async |gate, store| gate.call_admit_document(store, bytes, claimed_mime, options).await)
            .await
            .map(|(v, _)| v)
    }

    pub async fn admit_tool_result(
        &self,
        tool: &str,
        content_json: &str,
        options: AdmitOptions,
    ) -> Result<ToolResultAdmission, CallError> {
        self.call(async |gate, store| gate.call_admit_tool_result(store, tool, content_json, options).await)
            .await
            .map(|(v, _)| v)
    }

    pub async fn sniff(&self, bytes: &[u8]) -> Result<String, CallError> {
        self.call(async |gate, store| gate.call_sniff(store, bytes).await).await.map(|(v, _)| v)
    }

    /// Whether the `convert` component has been loaded (by a converting call).
    pub fn converter_loaded(&self) -> bool {
        self.converter.get().is_some()
    }

    /// The media types the converting calls convert from (`image/svg+xml`, `image/bmp`, ...).
    pub async fn convertible_types(&self) -> Result<Vec<String>, CallError> {
        self.convert_call(async |c, store| c.call_convertible_types(store).await).await.map(|(v, _)| v)
    }

    /// [`Gate::admit_image`], converting a type no provider takes (SVG, BMP, TIFF, ICO, an animated
    /// GIF for a profile that refuses animation) instead of refusing it; the conversion made, if
    /// any, is reported beside the verdict. Runs the `convert` component.
    pub async fn admit_image_converting(
        &self,
        bytes: &[u8],
        claimed_mime: &str,
        options: AdmitOptions,
    ) -> Result<ConvertedVerdict, CallError> {
        self.admit_image_converting_with_stats(bytes, claimed_mime, options).await.map(|(v, _)| v)
    }

    /// [`Gate::admit_image_converting`], and what the call cost the sandbox.
    pub async fn admit_image_converting_with_stats(
        &self,
        bytes: &[u8],
        claimed_mime: &str,
        options: AdmitOptions,
    ) -> Result<(ConvertedVerdict, CallStats), CallError> {
        self.convert_call(async |c, store| c.call_admit_image(store, bytes, claimed_mime, options).await).await
    }

    /// Render page `page` (1-based) of a PDF and admit it as an image. Runs the `convert` component.
    pub async fn admit_pdf_page(
        &self,
        bytes: &[u8],
        page: u32,
        options: AdmitOptions,
    ) -> Result<Result<ConvertedVerdict, PageError>, CallError> {
        self.admit_pdf_page_with_stats(bytes, page, options).await.map(|(v, _)| v)
    }

    /// [`Gate::admit_pdf_page`], and what the call cost the sandbox.
    pub async fn admit_pdf_page_with_stats(
        &self,
        bytes: &[u8],
        page: u32,
        options: AdmitOptions,
    ) -> Result<(Result<ConvertedVerdict, PageError>, CallStats), CallError> {
        self.convert_call(async |c, store| c.call_admit_pdf_page(store, bytes, page, options).await).await
    }

    /// [`Gate::admit_tool_result`], converting the blocks no provider takes (each reported).
    pub async fn admit_tool_result_converting(
        &self,
        tool: &str,
        content_json: &str,
        options: AdmitOptions,
    ) -> Result<ConvertedToolResult, CallError> {
        self.convert_call(async |c, store| c.call_admit_tool_result(store, tool, content_json, options).await)
            .await
            .map(|(v, _)| v)
    }

    /// The `convert` component, loaded now if no call has yet.
    fn converter(&self) -> Result<&Converter, CallError> {
        if let Some(c) = self.converter.get() {
            return Ok(c);
        }
        let load = || -> Result<Converter> {
            let (component, _) = self.runtime.load(World::Convert.bytes())?;
            // Like preflight, the convert component imports nothing.
            let linker = wasmtime::component::Linker::new(self.runtime.engine());
            let pre = linker.instantiate_pre(&component)?;
            let indices = Arc::new(conversion::GuestIndices::new(&pre)?);
            let entry = Arc::new(entry::GuestIndices::new(&pre)?);
            Ok(Converter { pre, indices, entry })
        };
        let made = load().map_err(|e| CallError::Host(e.context("cannot load the convert component")))?;
        // Two first calls at once may both load; one is kept.
        Ok(self.converter.get_or_init(|| made))
    }

    /// One export of `conversion` through [`Runtime::call`].
    async fn convert_call<R>(
        &self,
        call: impl AsyncFnOnce(conversion::Guest, &mut Store<CallState<()>>) -> wasmtime::Result<R>,
    ) -> Result<(R, CallStats), CallError> {
        let converter = self.converter()?;
        let store = self.runtime.store(());
        self.runtime
            .call(&converter.pre, store, async |store, instance: Instance| {
                let c = converter.indices.load(&mut *store, &instance)?;
                call(c, store).await
            })
            .await
    }

    /// One export of `admission` through [`Runtime::call`].
    async fn call<R>(
        &self,
        call: impl AsyncFnOnce(admission::Guest, &mut Store<CallState<()>>) -> wasmtime::Result<R>,
    ) -> Result<(R, CallStats), CallError> {
        let store = self.runtime.store(());
        self.runtime
            .call(&self.pre, store, async |store, instance: Instance| {
                let gate = self.indices.load(&mut *store, &instance)?;
                call(gate, store).await
            })
            .await
    }
}
