//! The component binding: converts between the WIT types and the gate's own. No logic lives here.

#[cfg(not(feature = "agent-tool"))]
wit_bindgen::generate!({ world: "preflight", path: "../wit" });
#[cfg(feature = "agent-tool")]
wit_bindgen::generate!({ world: "agent-tool", path: "../wit" });

use exports::mediagate::gate::admission as wit;

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
    }
}

#[cfg(feature = "agent-tool")]
mod agent_tool;

export!(Component);
