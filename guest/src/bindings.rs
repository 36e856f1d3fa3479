//! The component binding: converts between the WIT types and the gate's own. No logic lives here.
//!
//! The component exports the current contract (`mediagate:gate/admission@0.3.0`, `bindings/v0_3.rs`),
//! the frozen 0.2.0 one and the frozen 0.1.0 one (`wit/deps/mediagate-gate-0.1.0/`) for hosts that pinned it: the same conversions
//! (`to_wit!`) over each version's generated types; only the admitted block's bytes differ
//! (0.2.0 and 0.3.0: `payload`, the bytes themselves or `unchanged`, `payload_to_wit!`; 0.1.0:
//! `data`, base64 built here). The 0.1.0 and 0.2.0 exports are one body too (`conversions!`).

#[cfg(not(any(feature = "agent-tool", feature = "convert")))]
wit_bindgen::generate!({ world: "preflight", path: "../wit" });
// `convert` without `agent-tool`: the pure gate with the converters (imports nothing).
#[cfg(all(feature = "convert", not(feature = "agent-tool")))]
wit_bindgen::generate!({ world: "convert", path: "../wit" });
// The WASI interfaces the world imports (the filesystem preopen and the types it uses) are generated
// here from the vendored `wit/deps/`, like the world's own interfaces.
#[cfg(feature = "agent-tool")]
wit_bindgen::generate!({ world: "agent-tool", path: "../wit", generate_all });

use exports::mediagate::gate0_2_0::admission as wit;

use crate::Options;
use crate::verdict::Admitted;

struct Component;

/// The conversions from the gate's types to one contract version's (`wit`, in scope at the call
/// site) that every version spells alike: a block's kind, refusal reasons, dimensions, a request's
/// changes and its verdict, a tool result's refused blocks, the provider and verify depth asked.
/// `$reencoded`: the `change-kind` case spelt `reencoded` in 0.1.0 and `re-encoded` since 0.2.0.
macro_rules! to_wit {
    ($reencoded:ident) => {
        fn kind(k: crate::verdict::Kind) -> wit::BlockKind {
            match k {
                crate::verdict::Kind::Image => wit::BlockKind::Image,
                crate::verdict::Kind::Document => wit::BlockKind::Document,
            }
        }

        fn dimensions(d: crate::verdict::Dimensions) -> wit::Dimensions {
            wit::Dimensions { width: d.width, height: d.height }
        }

        fn reason(r: crate::verdict::Reason) -> wit::RefusalReason {
            use crate::verdict::Reason;
            match r {
                Reason::Undecodable => wit::RefusalReason::Undecodable,
                Reason::MimeUnsupported => wit::RefusalReason::MimeUnsupported,
                Reason::RawTooLarge => wit::RefusalReason::RawTooLarge,
                Reason::MagicMismatch => wit::RefusalReason::MagicMismatch,
                Reason::Base64TooLarge => wit::RefusalReason::Base64TooLarge,
                Reason::DimensionsTooLarge => wit::RefusalReason::DimensionsTooLarge,
                Reason::RequestLimit => wit::RefusalReason::RequestLimit,
            }
        }

        fn facts(f: crate::walks::request::MediaFacts) -> wit::MediaFacts {
            wit::MediaFacts { mime: f.mime, bytes: f.bytes, dimensions: f.dimensions.map(dimensions) }
        }

        fn change(c: crate::walks::request::Change) -> wit::RequestChange {
            use crate::walks::request::ChangeKind;
            wit::RequestChange {
                path: c.path,
                block_type: c.block_type,
                what: match c.what {
                    ChangeKind::Downsampled => wit::ChangeKind::Downsampled,
                    ChangeKind::Reencoded => wit::ChangeKind::$reencoded,
                    ChangeKind::Normalized => wit::ChangeKind::Normalized,
                    ChangeKind::Refused => wit::ChangeKind::Refused,
                },
                before: facts(c.before),
                after: c.after.map(facts),
                reason: c.reason.map(reason),
                limit: c.limit,
                message: c.message,
                rule: c.rule.map(str::to_string),
            }
        }

        fn refused_block(r: crate::walks::tool_result::RefusedBlock) -> wit::RefusedBlock {
            wit::RefusedBlock {
                index: r.index,
                path: r.path,
                block_type: r.block_type,
                mime: r.mime,
                reason: reason(r.reason),
                raw_bytes: r.raw_bytes,
                limit: r.limit,
            }
        }

        fn request_verdict(v: crate::walks::request::RequestVerdict) -> wit::RequestVerdict {
            match v {
                Ok(a) => wit::RequestVerdict::Admitted(wit::AdmittedRequest {
                    request: a.request,
                    changes: a.changes.into_iter().map(change).collect(),
                }),
                Err(r) => wit::RequestVerdict::Refused(wit::RequestRefusal {
                    unusable: r.unusable,
                    reason: reason(r.reason),
                    bytes: r.bytes,
                    limit: r.limit,
                    rule: r.rule.map(str::to_string),
                    message: r.message,
                }),
            }
        }

        fn api_of(api: wit::RequestApi) -> crate::Api {
            match api {
                wit::RequestApi::Anthropic => crate::Api::Anthropic,
                wit::RequestApi::Openai => crate::Api::OpenAi,
            }
        }

        fn provider(p: wit::Provider) -> crate::Provider {
            match p {
                wit::Provider::Anthropic => crate::Provider::Anthropic,
                wit::Provider::Openai => crate::Provider::OpenAi,
                wit::Provider::Gemini => crate::Provider::Gemini,
                wit::Provider::Ollama => crate::Provider::Ollama,
            }
        }

        fn verify(v: wit::Verify) -> crate::Verify {
            match v {
                wit::Verify::Header => crate::Verify::Header,
                wit::Verify::Full => crate::Verify::Full,
            }
        }
    };
}

/// The payload versions' (0.2.0, 0.3.0) own conversions, alike in both: the admitted block with
/// its bytes (or `unchanged`), and the gate's default provider and verify depth as the contract
/// spells them (`default-options`).
macro_rules! payload_to_wit {
    () => {
        /// `_input`: what the gate was given; the payload says `unchanged` rather than carry it again.
        fn admitted(a: crate::verdict::Admitted, _input: &[u8]) -> wit::Admitted {
            let base64_len = a.base64_len();
            wit::Admitted {
                kind: kind(a.kind),
                mime: a.mime.to_string(),
                payload: match a.data {
                    crate::verdict::Data::Unchanged => wit::Payload::Unchanged,
                    crate::verdict::Data::Bytes(b) => wit::Payload::Bytes(b),
                },
                original_size: a.original_size,
                dimensions: a.dimensions.map(dimensions),
                resized: a.resized,
                reencoded: a.reencoded,
                base64_len,
                dropped: a.dropped.iter().map(|d| d.to_string()).collect(),
            }
        }

        fn wit_provider(p: crate::Provider) -> wit::Provider {
            match p {
                crate::Provider::Anthropic => wit::Provider::Anthropic,
                crate::Provider::OpenAi => wit::Provider::Openai,
                crate::Provider::Gemini => wit::Provider::Gemini,
                crate::Provider::Ollama => wit::Provider::Ollama,
            }
        }

        fn wit_verify(v: crate::Verify) -> wit::Verify {
            match v {
                crate::Verify::Header => wit::Verify::Header,
                crate::Verify::Full => wit::Verify::Full,
            }
        }
    };
}

/// The 0.1.0 and 0.2.0 exports over one version's generated types (`wit`, in scope at the call
/// site), and the conversions they share.
macro_rules! conversions {
    // `$keep_metadata`: how a version's options say whether to keep metadata (0.1.0 has no such
    // option: never).
    ($reencoded:ident, $keep_metadata:expr; $($extra:tt)*) => {
        use crate::verdict::{Refusal, Verdict};

        to_wit!($reencoded);

        pub(super) fn options(o: wit::AdmitOptions) -> Options {
            Options {
                downsample: o.downsample,
                provider: provider(o.provider),
                verify: verify(o.verify),
                side_rule: None,
                convert: false,
                keep_metadata: $keep_metadata(&o),
            }
        }

        pub(super) fn verdict(v: Verdict, input: &[u8]) -> wit::Verdict {
            match v {
                Ok(a) => wit::Verdict::Admitted(admitted(a, input)),
                Err(r) => wit::Verdict::Refused(refusal(r)),
            }
        }

        fn refusal(r: Refusal) -> wit::Refusal {
            wit::Refusal { reason: reason(r.reason), raw_bytes: r.raw_bytes, limit: r.limit, message: r.message }
        }

        fn tool_result(admission: crate::walks::tool_result::ToolResultAdmission) -> wit::ToolResultAdmission {
            wit::ToolResultAdmission {
                content: admission.content,
                refused: admission.refused.into_iter().map(refused_block).collect(),
            }
        }

        impl wit::Guest for super::Component {
            fn admit_image(bytes: Vec<u8>, claimed_mime: String, options: wit::AdmitOptions) -> wit::Verdict {
                verdict(crate::admit_image(&bytes, &claimed_mime, &self::options(options)), &bytes)
            }

            fn admit_document(bytes: Vec<u8>, claimed_mime: String, _options: wit::AdmitOptions) -> wit::Verdict {
                verdict(crate::admit_document(&bytes, &claimed_mime), &bytes)
            }

            fn admit_tool_result(
                tool: String,
                content_json: String,
                options: wit::AdmitOptions,
            ) -> wit::ToolResultAdmission {
                tool_result(crate::admit_tool_result(&tool, &content_json, &self::options(options)))
            }

            fn admit_request(
                api: wit::RequestApi,
                request_json: String,
                options: wit::AdmitOptions,
            ) -> wit::RequestVerdict {
                request_verdict(crate::admit_request(api_of(api), &request_json, &self::options(options)))
            }

            fn sniff(bytes: Vec<u8>) -> String {
                crate::sniff(&bytes)
            }

            $($extra)*
        }
    };
}

/// Contract 0.2.0 (frozen): the admitted bytes cross as they are (or as `unchanged`); the host encodes base64.
mod v0_2 {
    use super::wit;
    use super::*;

    conversions! {
        ReEncoded, |o: &wit::AdmitOptions| o.keep_metadata;
        /// `default-options`: the gate's [`Options::default`], the one place every host reads.
        fn default_options() -> wit::AdmitOptions {
            default_options()
        }
    }

    #[cfg(feature = "convert")]
    pub(super) fn refusal_of(r: Refusal) -> wit::Refusal {
        refusal(r)
    }

    #[cfg(feature = "convert")]
    pub(super) fn tool_result_of(a: crate::walks::tool_result::ToolResultAdmission) -> wit::ToolResultAdmission {
        tool_result(a)
    }

    #[cfg(feature = "convert")]
    pub(super) fn request_verdict_of(v: crate::walks::request::RequestVerdict) -> wit::RequestVerdict {
        request_verdict(v)
    }

    #[cfg(feature = "convert")]
    pub(super) fn api(a: wit::RequestApi) -> crate::Api {
        api_of(a)
    }

    payload_to_wit!();

    fn default_options() -> wit::AdmitOptions {
        let o = Options::default();
        wit::AdmitOptions {
            downsample: o.downsample,
            provider: wit_provider(o.provider),
            verify: wit_verify(o.verify),
            keep_metadata: o.keep_metadata,
        }
    }
}

/// The `conversion` interface (the `convert` and `agent-tool` worlds): the gate over the
/// `convert` module, the conversion made reported beside the verdict.
#[cfg(feature = "convert")]
mod conversion {
    use super::exports::mediagate::gate0_2_0::conversion as cw;
    use super::v0_2;
    use super::wit;
    use crate::Options;
    use crate::convert::{self, PageError};
    use crate::verdict::{Admitted, Verdict};

    /// The media types this build converts from (`convertible-types`).
    pub(super) const TYPES: [&str; 4] = crate::judged_type::CONVERTIBLE;

    /// The conversion an admitted single image carries (`path` empty: no document around it).
    pub(super) fn made(a: &Admitted) -> Option<cw::ConversionMade> {
        a.converted.as_ref().map(|c| cw::ConversionMade {
            path: String::new(),
            from: c.from.to_string(),
            to: a.mime.to_string(),
            note: c.note.clone(),
        })
    }

    /// A walk's conversion as the contract spells it.
    pub(super) fn made_at(c: crate::verdict::ConversionMade) -> cw::ConversionMade {
        cw::ConversionMade { path: c.path, from: c.from, to: c.to, note: c.note }
    }

    /// `admit-image` with conversion on, whatever the caller's options say about it.
    pub(super) fn admit_image(bytes: &[u8], claimed_mime: &str, options: &Options) -> Verdict {
        let options = Options { convert: true, ..*options };
        convert::admit_converting(bytes, claimed_mime, &options)
            .unwrap_or_else(|| crate::admit_image(bytes, claimed_mime, &options))
    }

    pub(super) fn converting(options: wit::AdmitOptions) -> Options {
        Options { convert: true, ..v0_2::options(options) }
    }

    fn page_error(e: PageError) -> cw::PageError {
        match e {
            PageError::NoSuchPage { requested, count } => cw::PageError::NoSuchPage(cw::PageCount { requested, count }),
            PageError::Encrypted(words) => cw::PageError::Encrypted(words),
            PageError::Blank { page } => cw::PageError::Blank(page),
            PageError::Refused(r) => cw::PageError::Refused(v0_2::refusal_of(r)),
        }
    }

    impl cw::Guest for super::Component {
        fn convertible_types() -> Vec<String> {
            TYPES.iter().map(|t| t.to_string()).collect()
        }

        fn admit_image(bytes: Vec<u8>, claimed_mime: String, options: wit::AdmitOptions) -> cw::ConvertedVerdict {
            let verdict = self::admit_image(&bytes, &claimed_mime, &converting(options));
            let conversion = verdict.as_ref().ok().and_then(made);
            cw::ConvertedVerdict { verdict: v0_2::verdict(verdict, &bytes), conversion }
        }

        fn admit_pdf_page(
            bytes: Vec<u8>,
            page: u32,
            options: wit::AdmitOptions,
        ) -> Result<cw::ConvertedVerdict, cw::PageError> {
            let admitted = convert::admit_pdf_page(&bytes, page, &converting(options)).map_err(page_error)?;
            let conversion = made(&admitted);
            Ok(cw::ConvertedVerdict { verdict: v0_2::verdict(Ok(admitted), &bytes), conversion })
        }

        fn admit_tool_result(
            tool: String,
            content_json: String,
            options: wit::AdmitOptions,
        ) -> cw::ConvertedToolResult {
            let mut admission = crate::admit_tool_result(&tool, &content_json, &converting(options));
            let conversions = std::mem::take(&mut admission.conversions).into_iter().map(made_at).collect();
            cw::ConvertedToolResult { admission: v0_2::tool_result_of(admission), conversions }
        }

        fn admit_request(
            api: wit::RequestApi,
            request_json: String,
            options: wit::AdmitOptions,
        ) -> cw::ConvertedRequest {
            let mut verdict = crate::admit_request(v0_2::api(api), &request_json, &converting(options));
            let conversions = match &mut verdict {
                Ok(admitted) => std::mem::take(&mut admitted.conversions).into_iter().map(made_at).collect(),
                Err(_) => Vec::new(),
            };
            cw::ConvertedRequest { verdict: v0_2::request_verdict_of(verdict), conversions }
        }
    }
}

/// Contract 0.1.0 (frozen): the admitted block carries its base64, built here as before.
mod v0_1 {
    use super::exports::mediagate::gate0_1_0::admission as wit;
    use super::*;

    conversions!(Reencoded, |_: &wit::AdmitOptions| false;);

    fn admitted(a: Admitted, input: &[u8]) -> wit::Admitted {
        wit::Admitted {
            kind: kind(a.kind),
            mime: a.mime.to_string(),
            data: a.base64(input),
            original_size: a.original_size,
            dimensions: a.dimensions.map(dimensions),
            resized: a.resized,
            reencoded: a.reencoded,
            base64_len: a.base64_len(),
        }
    }
}

#[cfg(feature = "agent-tool")]
mod agent_tool;
mod v0_3;

export!(Component);
