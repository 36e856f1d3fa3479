//! The `admission` interface: one entry per input, each answer with its JSON (`verdict_json`),
//! and the conversions from the gate's types to the contract's.

use super::exports::mediagate::gate::admission as wit;
use crate::entry::{self, Refused};
use crate::profile::BatchApi;
use crate::verdict::{ConversionMade, Refusal};
use crate::{Options, Provider, verdict_json};

#[cfg(feature = "agent-tool")]
pub(super) use wit::{Admission as WitAdmission, AdmitOptions as WitAdmitOptions, Payload as WitPayload};

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
            ChangeKind::Reencoded => wit::ChangeKind::ReEncoded,
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
        wit::RequestApi::Gemini => crate::Api::Gemini,
        wit::RequestApi::AnthropicBatch => crate::Api::AnthropicBatch,
        wit::RequestApi::Other => crate::Api::Other,
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

/// The admitted block; its payload says `unchanged` when the bytes are the input's own.
fn admitted(a: crate::verdict::Admitted) -> wit::Admitted {
    let base64_len = a.base64_len();
    let repaired = a.repaired();
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
        repaired,
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

/// The caller's options over the gate's defaults; `provider` defaults to `default_provider`.
fn options(o: wit::AdmitOptions, convert: bool, default_provider: Provider) -> Options {
    let d = Options::default();
    Options {
        downsample: o.downsample.unwrap_or(d.downsample),
        provider: o.provider.map_or(default_provider, provider),
        verify: o.verify.map_or(d.verify, verify),
        side_rule: None,
        convert,
        keep_metadata: o.keep_metadata.unwrap_or(d.keep_metadata),
    }
}

fn refusal(r: Refusal) -> wit::Refusal {
    wit::Refusal { reason: reason(r.reason), raw_bytes: r.raw_bytes, limit: r.limit, message: r.message, pages: None }
}

/// A PDF page that did not become an image, as a refusal: what the JSON says (`raw_bytes` the
/// input's length; a refusal of the gate's keeps its reason and words, no limit).
fn page_refusal(e: crate::convert::PageError, input_len: u64) -> wit::Refusal {
    use crate::convert::PageError;
    let message = e.message();
    let (reason, pages) = match e {
        PageError::NoSuchPage { requested, count } => {
            (wit::RefusalReason::NoSuchPage, Some(wit::PageCount { requested, count }))
        }
        PageError::Encrypted(_) => (wit::RefusalReason::Encrypted, None),
        PageError::Blank { .. } => (wit::RefusalReason::Blank, None),
        PageError::Refused(r) => (reason(r.reason), None),
    };
    wit::Refusal { reason, raw_bytes: input_len, limit: None, message, pages }
}

fn made(c: ConversionMade) -> wit::ConversionMade {
    wit::ConversionMade { path: c.path, from: c.from, to: c.to, note: c.note }
}

/// An entry's answer as the WIT record; `payload` turns the admitted block's payload into the one
/// returned (a workspace file's caller has no bytes of its own).
pub(super) fn admission(
    answer: entry::Entry,
    input_len: u64,
    json: String,
    payload: impl FnOnce(wit::Payload) -> wit::Payload,
) -> wit::Admission {
    let entry::Entry { verdict, sniffed, convertible } = answer;
    let (verdict, conversion) = match verdict {
        Ok(a) => {
            let conversion = ConversionMade::of("", &a).map(made);
            let mut a = admitted(a);
            a.payload = payload(a.payload);
            (wit::Verdict::Admitted(a), conversion)
        }
        Err(Refused::Gate(r)) => (wit::Verdict::Refused(refusal(r)), None),
        Err(Refused::Page(e)) => (wit::Verdict::Refused(page_refusal(e, input_len)), None),
    };
    wit::Admission { verdict, conversion, sniffed, convertible: convertible.map(str::to_string), json }
}

/// The caller's options over the gate's defaults, as `admit` reads them.
pub(super) fn entry_options(o: wit::AdmitOptions) -> Options {
    options(o, false, Options::default().provider)
}

impl wit::Guest for super::Component {
    fn default_options() -> wit::AdmitOptions {
        let o = Options::default();
        wit::AdmitOptions {
            downsample: Some(o.downsample),
            provider: Some(wit_provider(o.provider)),
            verify: Some(wit_verify(o.verify)),
            keep_metadata: Some(o.keep_metadata),
        }
    }

    fn convertible_types() -> Vec<String> {
        if crate::convert::AVAILABLE {
            crate::judged_type::CONVERTIBLE.iter().map(|t| t.to_string()).collect()
        } else {
            Vec::new()
        }
    }

    fn admit(input: wit::InputMedia, o: wit::AdmitOptions) -> Result<wit::Admission, wit::InputError> {
        let bytes = &input.bytes;
        let judged = entry::Input {
            bytes,
            claimed_mime: input.claimed_mime.as_deref(),
            name: input.name.as_deref(),
            convert: input.convert,
            page: input.page,
        };
        let answer = entry::admit(judged, &entry_options(o)).map_err(|e| match e {
            entry::InputError::PageOfNonPdf(mime) => wit::InputError::PageOfNonPdf(mime),
        })?;
        let json = answer.json_value(bytes.len() as u64).to_string();
        Ok(admission(answer, bytes.len() as u64, json, |a| a))
    }

    fn admit_tool_result(input: wit::ToolResultInput, o: wit::AdmitOptions) -> wit::ToolResultAdmission {
        let mut a = crate::admit_tool_result(
            &input.tool,
            &input.content_json,
            &options(o, input.convert, Options::default().provider),
        );
        let mut json = verdict_json::tool_result(&input.content_json, &a);
        if input.convert {
            json = verdict_json::with_conversions(json, &a.conversions);
        }
        let conversions = std::mem::take(&mut a.conversions).into_iter().map(made).collect();
        wit::ToolResultAdmission {
            content: a.content,
            refused: a.refused.into_iter().map(refused_block).collect(),
            conversions,
            json,
        }
    }

    fn admit_request(input: wit::RequestInput, o: wit::AdmitOptions) -> wit::RequestAdmission {
        let api = api_of(input.api);
        let mut verdict = crate::admit_request(api, &input.request_json, &options(o, input.convert, api.provider()));
        let conversions = match &mut verdict {
            Ok(a) => std::mem::take(&mut a.conversions),
            Err(_) => Vec::new(),
        };
        let mut json = verdict_json::request(api, &input.request_json, &verdict);
        if input.convert {
            json = verdict_json::with_conversions(json, &conversions);
        }
        let verdict = request_verdict(verdict);
        wit::RequestAdmission { verdict, conversions: conversions.into_iter().map(made).collect(), json }
    }

    fn admit_batch_line(input: wit::BatchLineInput, o: wit::AdmitOptions) -> wit::BatchLineAdmission {
        use crate::walks::batch::{self, Outcome};
        let api = batch_api(input.api);
        let default_provider = match api {
            BatchApi::OpenAi => Provider::OpenAi,
            BatchApi::Anthropic => Provider::Anthropic,
        };
        let answer = batch::admit_batch_line(api, &input.line, &options(o, input.convert, default_provider));
        let json = verdict_json::batch_line(input.number, &answer);
        let outcome = match answer.outcome {
            Outcome::Unchanged => wit::BatchLineOutcome::Unchanged,
            Outcome::Changed => wit::BatchLineOutcome::Changed,
            Outcome::RefusedBlocks => wit::BatchLineOutcome::RefusedBlocks,
            Outcome::Refused => wit::BatchLineOutcome::Refused,
        };
        wit::BatchLineAdmission { outcome, custom_id: answer.custom_id, line: answer.line, json }
    }

    fn check_batch_file(api: wit::BatchApi, requests: u64, bytes: u64) -> Vec<wit::BatchFileRule> {
        crate::walks::batch::check_batch_file(batch_api(api), requests, bytes)
            .into_iter()
            .map(|r| wit::BatchFileRule {
                rule: r.rule.to_string(),
                limit: r.limit,
                actual: r.actual,
                message: r.message,
            })
            .collect()
    }
}

fn batch_api(api: wit::BatchApi) -> BatchApi {
    match api {
        wit::BatchApi::Openai => BatchApi::OpenAi,
        wit::BatchApi::Anthropic => BatchApi::Anthropic,
    }
}
