//! The component binding: converts between the WIT types and the gate's own. No logic lives here.

#[cfg(not(feature = "agent-tool"))]
wit_bindgen::generate!({ world: "preflight", path: "../wit" });
// The WASI interfaces the world imports (the filesystem preopen and the types it uses) are generated
// here from the vendored `wit/deps/`, like the world's own interfaces.
#[cfg(feature = "agent-tool")]
wit_bindgen::generate!({ world: "agent-tool", path: "../wit", generate_all });

use exports::mediagate::gate::admission as wit;

use crate::request::{Change, ChangeKind, MediaFacts};
use crate::verdict::{Admitted, Kind, Reason, Refusal, Verdict};
use crate::{Options, Provider, Verify};

struct Component;

impl wit::Guest for Component {
    fn admit_image(bytes: Vec<u8>, claimed_mime: String, options: wit::AdmitOptions) -> wit::Verdict {
        verdict(crate::admit_image(&bytes, &claimed_mime, &options.into()))
    }

    fn admit_document(bytes: Vec<u8>, claimed_mime: String, _options: wit::AdmitOptions) -> wit::Verdict {
        verdict(crate::admit_document(&bytes, &claimed_mime))
    }

    fn admit_tool_result(tool: String, content_json: String, options: wit::AdmitOptions) -> wit::ToolResultAdmission {
        let admission = crate::admit_tool_result(&tool, &content_json, &options.into());
        wit::ToolResultAdmission {
            content: admission.content,
            refused: admission
                .refused
                .into_iter()
                .map(|r| wit::RefusedBlock {
                    index: r.index,
                    path: r.path,
                    block_type: r.block_type,
                    mime: r.mime,
                    reason: reason(r.reason),
                    raw_bytes: r.raw_bytes,
                    limit: r.limit,
                })
                .collect(),
        }
    }

    fn admit_request(api: wit::RequestApi, request_json: String, options: wit::AdmitOptions) -> wit::RequestVerdict {
        let api = match api {
            wit::RequestApi::Anthropic => crate::Api::Anthropic,
            wit::RequestApi::Openai => crate::Api::OpenAi,
        };
        match crate::admit_request(api, &request_json, &options.into()) {
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

    fn sniff(bytes: Vec<u8>) -> String {
        crate::sniff(&bytes)
    }
}

impl From<wit::AdmitOptions> for Options {
    fn from(o: wit::AdmitOptions) -> Self {
        Options {
            downsample: o.downsample,
            provider: match o.provider {
                wit::Provider::Anthropic => Provider::Anthropic,
                wit::Provider::Openai => Provider::OpenAi,
                wit::Provider::Gemini => Provider::Gemini,
                wit::Provider::Ollama => Provider::Ollama,
            },
            verify: match o.verify {
                wit::Verify::Header => Verify::Header,
                wit::Verify::Full => Verify::Full,
            },
            side_rule: None,
        }
    }
}

fn verdict(v: Verdict) -> wit::Verdict {
    match v {
        Ok(a) => wit::Verdict::Admitted(admitted(a)),
        Err(r) => wit::Verdict::Refused(refusal(r)),
    }
}

fn admitted(a: Admitted) -> wit::Admitted {
    let base64_len = a.base64_len();
    wit::Admitted {
        kind: match a.kind {
            Kind::Image => wit::BlockKind::Image,
            Kind::Document => wit::BlockKind::Document,
        },
        mime: a.mime.to_string(),
        data: a.data,
        original_size: a.original_size,
        dimensions: a.dimensions.map(|d| wit::Dimensions { width: d.width, height: d.height }),
        resized: a.resized,
        reencoded: a.reencoded,
        base64_len,
    }
}

fn refusal(r: Refusal) -> wit::Refusal {
    wit::Refusal { reason: reason(r.reason), raw_bytes: r.raw_bytes, limit: r.limit, message: r.message }
}

fn reason(r: Reason) -> wit::RefusalReason {
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

fn change(c: Change) -> wit::RequestChange {
    wit::RequestChange {
        path: c.path,
        block_type: c.block_type,
        what: match c.what {
            ChangeKind::Downsampled => wit::ChangeKind::Downsampled,
            ChangeKind::Reencoded => wit::ChangeKind::Reencoded,
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

fn facts(f: MediaFacts) -> wit::MediaFacts {
    wit::MediaFacts {
        mime: f.mime,
        bytes: f.bytes,
        dimensions: f.dimensions.map(|d| wit::Dimensions { width: d.width, height: d.height }),
    }
}

#[cfg(feature = "agent-tool")]
mod agent_tool;

export!(Component);
