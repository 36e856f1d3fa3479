//! The admission gate as a host API: one fresh instance of the `preflight` component per call.

use std::sync::Arc;

use anyhow::Result;
use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre};

use crate::bindings::exports::mediagate::gate::admission::{self, GuestIndices};
use crate::cache::Origin;
use crate::component::World;
use crate::error::CallError;
use crate::runtime::{CallState, Runtime};

pub use crate::runtime::{Answered, CallStats};
pub use admission::{
    Admission, AdmitOptions, Admitted, AdmittedRequest, BatchApi, BatchFileRule, BatchLineAdmission, BatchLineInput,
    BatchLineOutcome, BlockKind, ChangeKind, ConversionMade, Dimensions, InputError, InputMedia, MediaFacts, PageCount,
    Payload, Provider, Refusal, RefusalReason, RefusedBlock, RequestAdmission, RequestApi, RequestChange, RequestInput,
    RequestRefusal, RequestVerdict, ToolResultAdmission, ToolResultInput, Verdict, Verify,
};

impl Admitted {
    /// The admitted bytes; `input` is what the gate was given (the bytes when `unchanged`).
    pub fn bytes<'a>(&'a self, input: &'a [u8]) -> &'a [u8] {
        match &self.payload {
            Payload::Unchanged => input,
            Payload::Bytes(b) => b,
        }
    }

    /// The block's `data`: base64 (standard alphabet, padded) of the admitted bytes, encoded with
    /// SIMD; `input` is what the gate was given.
    pub fn base64(&self, input: &[u8]) -> String {
        base64(self.bytes(input))
    }

    /// The admitted bytes, owned (`input` moved, not copied, when `unchanged`).
    pub fn into_bytes(self, input: Vec<u8>) -> Vec<u8> {
        match self.payload {
            Payload::Unchanged => input,
            Payload::Bytes(b) => b,
        }
    }
}

impl InputMedia {
    /// Bytes with the type the caller claims for them; no name, no conversion, no page.
    pub fn new(bytes: Vec<u8>, claimed_mime: Option<&str>) -> InputMedia {
        InputMedia { bytes, claimed_mime: claimed_mime.map(str::to_owned), name: None, convert: false, page: None }
    }

    /// The file name whose extension is the type hint.
    pub fn named(self, name: &str) -> InputMedia {
        InputMedia { name: Some(name.to_owned()), ..self }
    }

    /// Convert what no provider takes instead of refusing it.
    pub fn converting(self) -> InputMedia {
        InputMedia { convert: true, ..self }
    }

    /// Render this page (1-based) of a PDF and admit it as an image.
    pub fn page(self, page: u32) -> InputMedia {
        InputMedia { page: Some(page), ..self }
    }
}

impl AdmitOptions {
    /// Every option left to the gate's default.
    pub const UNSET: AdmitOptions =
        AdmitOptions { downsample: None, provider: None, verify: None, keep_metadata: None };
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

wit_names! {
    /// The name users see (JSON `reason`): the WIT case name with `_` for `-` (`no_such_page`).
    RefusalReason => |name: String| name.replace('-', "_"),
    /// The name users see (JSON `what`): the WIT case name (`re-encoded`).
    ChangeKind => |name: String| name,
}

/// Standard, padded base64 (SIMD where the CPU has it): what a block's `data` is.
pub fn base64(bytes: &[u8]) -> String {
    base64_simd::STANDARD.encode_to_string(bytes)
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
    /// Read from the component on first use: a call that names its options in full (each one is
    /// optional) never pays an instantiation for them.
    defaults: Arc<std::sync::OnceLock<AdmitOptions>>,
    converter: Arc<std::sync::OnceLock<Converter>>,
}

/// The `convert` component, ready to instantiate.
struct Converter {
    pre: InstancePre<CallState<()>>,
    indices: Arc<GuestIndices>,
}

impl Gate {
    pub fn new(runtime: Arc<Runtime>) -> Result<Self> {
        let (component, origin) = runtime.load(World::Preflight.bytes())?;
        // The preflight component imports nothing: an empty linker, and no WASI context per call.
        let linker = wasmtime::component::Linker::new(runtime.engine());
        let pre = linker.instantiate_pre(&component)?;
        let indices = Arc::new(GuestIndices::new(&pre)?);
        Ok(Gate { runtime, pre, indices, origin, defaults: Arc::default(), converter: Arc::default() })
    }

    /// Whether the compiled component came from the disk cache or was compiled now.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// The options a caller that names none gets, every field set, as the component defines them
    /// (read once, on first use): downsample, Anthropic's limits, every pixel decoded.
    ///
    /// # Panics
    /// When the component cannot answer `default-options` (a function of no argument): a build
    /// whose component cannot do that cannot admit anything either.
    pub fn default_options(&self) -> AdmitOptions {
        *self.defaults.get_or_init(|| {
            let store = self.runtime.store(());
            self.runtime
                .call_blocking(&self.pre, store, async |store, instance| {
                    self.indices.load(&mut *store, &instance)?.call_default_options(store).await
                })
                .expect("the component answers default-options")
                .answer
        })
    }

    /// Admit one input: the gate sniffs, picks the type (the claimed one, else the bytes' when it
    /// admits them, else the name's extension) and dispatches (image, document, conversion, PDF
    /// page). One instantiation: of `preflight`, or of `convert` when the input asks to convert or
    /// for a page. An admitted block's `payload` is `unchanged` when the admitted bytes are the
    /// input's own ([`Admitted::base64`] gives its `data` either way); the answer carries the
    /// verdict's JSON, the one to print, and what the call cost the sandbox.
    pub async fn admit(
        &self,
        input: &InputMedia,
        options: AdmitOptions,
    ) -> Result<Answered<Result<Admission, InputError>>, CallError> {
        let converting = input.convert || input.page.is_some();
        self.call(converting, async |gate, store| gate.call_admit(store, input, options).await).await
    }

    /// Admit every media block of a tool's result; content the gate cannot read is refused whole.
    /// Converting (each conversion reported) runs the `convert` component. The answer carries the
    /// JSON to print.
    pub async fn admit_tool_result(
        &self,
        tool: &str,
        content_json: &str,
        convert: bool,
        options: AdmitOptions,
    ) -> Result<Answered<ToolResultAdmission>, CallError> {
        let input = ToolResultInput { tool: tool.into(), content_json: content_json.into(), convert };
        self.call(convert, async |gate, store| gate.call_admit_tool_result(store, &input, options).await).await
    }

    /// Admit a whole provider request: every block admitted in place or replaced in its slot, and
    /// the API's request-level rules applied; the answer carries the JSON report.
    pub async fn admit_request(
        &self,
        api: RequestApi,
        request_json: &str,
        convert: bool,
        options: AdmitOptions,
    ) -> Result<Answered<RequestAdmission>, CallError> {
        let input = RequestInput { api, request_json: request_json.into(), convert };
        self.call(convert, async |gate, store| gate.call_admit_request(store, &input, options).await).await
    }

    /// Admit one request of a Batch API file: its body judged by its endpoint's dialect, spliced
    /// back into the line; the answer carries the report line.
    pub async fn admit_batch_line(
        &self,
        input: &BatchLineInput,
        options: AdmitOptions,
    ) -> Result<Answered<BatchLineAdmission>, CallError> {
        self.call(input.convert, async |gate, store| gate.call_admit_batch_line(store, input, options).await).await
    }

    /// The Batch API's rules on a whole file that a file of `requests` requests and `bytes` bytes
    /// breaks; empty when it breaks none.
    pub async fn check_batch_file(
        &self,
        api: BatchApi,
        requests: u64,
        bytes: u64,
    ) -> Result<Vec<BatchFileRule>, CallError> {
        self.call(false, async |gate, store| gate.call_check_batch_file(store, api, requests, bytes).await)
            .await
            .map(|a| a.answer)
    }

    /// Whether the `convert` component has been loaded (by a converting call).
    pub fn converter_loaded(&self) -> bool {
        self.converter.get().is_some()
    }

    /// The media types the converting calls convert from (`image/svg+xml`, `image/bmp`, ...).
    /// Runs the `convert` component.
    pub async fn convertible_types(&self) -> Result<Vec<String>, CallError> {
        self.call(true, async |gate, store| gate.call_convertible_types(store).await).await.map(|a| a.answer)
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
            let indices = Arc::new(GuestIndices::new(&pre)?);
            Ok(Converter { pre, indices })
        };
        let made = load().map_err(|e| CallError::Host(e.context("cannot load the convert component")))?;
        // Two first calls at once may both load; one is kept.
        Ok(self.converter.get_or_init(|| made))
    }

    /// One export of `admission` through [`Runtime::call`], on `convert` when converting.
    async fn call<R>(
        &self,
        converting: bool,
        call: impl AsyncFnOnce(admission::Guest, &mut Store<CallState<()>>) -> wasmtime::Result<R>,
    ) -> Result<Answered<R>, CallError> {
        let (pre, indices) = if converting {
            let c = self.converter()?;
            (&c.pre, &c.indices)
        } else {
            (&self.pre, &self.indices)
        };
        let store = self.runtime.store(());
        self.runtime
            .call(pre, store, async |store, instance: Instance| {
                let gate = indices.load(&mut *store, &instance)?;
                call(gate, store).await
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::RuntimeConfig;

    const SVG: &[u8] = br#"<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>"#;

    /// The preflight component (what browsers download) carries no converter: a converting call
    /// that reaches it anyway (a `Gate` sends those to `convert`; other hosts may not) is refused in
    /// words that name the component that converts. Asked of the built component, not of the guest's
    /// source, which the workspace tests natively with its converters.
    #[test]
    fn the_preflight_component_names_the_component_that_converts() {
        let runtime = Runtime::new(RuntimeConfig::default()).unwrap();
        let gate = Gate::new(runtime.clone()).unwrap();
        let ask = |input: InputMedia| {
            let store = runtime.store(());
            runtime
                .call_blocking(&gate.pre, store, async |store, instance| {
                    gate.indices.load(&mut *store, &instance)?.call_admit(store, &input, AdmitOptions::UNSET).await
                })
                .unwrap()
                .answer
        };
        let refusal = |admission: Result<Admission, InputError>| match admission.unwrap().verdict {
            Verdict::Refused(r) => r,
            Verdict::Admitted(_) => panic!("admitted by the preflight component"),
        };
        let svg = refusal(ask(InputMedia::new(SVG.to_vec(), Some("image/svg+xml")).converting()));
        assert_eq!(svg.reason, RefusalReason::MimeUnsupported);
        assert!(svg.message.contains("`convert` component") && svg.message.contains("preflight"), "{}", svg.message);
        let page = refusal(ask(InputMedia::new(b"%PDF-1.7\n".to_vec(), Some("application/pdf")).page(1)));
        assert!(page.message.contains("`convert` component"), "{}", page.message);
        // Without `convert`, the same SVG gets the plain gate's refusal, which names no component.
        let plain = refusal(ask(InputMedia::new(SVG.to_vec(), Some("image/svg+xml"))));
        assert!(!plain.message.contains("`convert` component"), "{}", plain.message);
    }
}
