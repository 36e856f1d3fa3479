//! The batch seat: one request of a Batch API file (an OpenAI Batch line, an Anthropic Message
//! Batches item) with its body judged by its endpoint's dialect, the request seat's walk and rules
//! ([`super::request`]), and the admitted body spliced back in its place: the line outside the body
//! is kept byte for byte, so a host streams a file of any size line by line and never parses one.
//!
//! Fail-closed: a line that is not a request of the Batch API is refused whole; so is a request to
//! an endpoint the gate has no walk for when its body carries media (a media block any shape the
//! walks know names, or a base64 `data:` URL anywhere), since nothing that was not judged may go.

use std::ops::Range;

use jiter::{Jiter, Peek};

use super::request::{AdmittedRequest, RequestRefusal, RequestVerdict, admit_request};
use super::tool_result::scan::{scan, string_at};
use super::tool_result::{readable, shape};
use crate::options::Options;
use crate::profile::{Api, BatchApi};
use crate::verdict::{ConversionMade, Reason};

/// OpenAI Batch endpoints whose bodies carry no media: passed as they are.
const TEXT_ONLY_ENDPOINTS: [&str; 2] = ["/v1/embeddings", "/v1/completions"];
/// The OpenAI Batch endpoint whose bodies the request walk reads (Chat Completions).
const CHAT_ENDPOINT: &str = "/v1/chat/completions";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Byte for byte the input.
    Unchanged,
    /// Media fitted, re-encoded or normalized; nothing refused.
    Changed,
    /// Some blocks refused, each replaced in its slot by words.
    RefusedBlocks,
    /// The request as a whole cannot go.
    Refused,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Unchanged => "unchanged",
            Outcome::Changed => "changed",
            Outcome::RefusedBlocks => "refused_blocks",
            Outcome::Refused => "refused",
        }
    }
}

#[derive(Debug)]
pub struct BatchLine {
    pub outcome: Outcome,
    pub custom_id: Option<String>,
    /// The request's `url` (OpenAI), which the report names.
    pub url: Option<String>,
    /// The request as it goes out; `None` when unchanged or refused.
    pub line: Option<String>,
    /// The body's verdict (its conversions taken out into `conversions`); the report line
    /// (`verdict_json::batch_line`) is written from it.
    pub verdict: RequestVerdict,
    pub conversions: Vec<ConversionMade>,
}

/// A broken rule of the Batch API on a whole file.
#[derive(Debug, PartialEq, Eq)]
pub struct FileRule {
    pub rule: &'static str,
    pub limit: u64,
    pub actual: u64,
    pub message: String,
}

/// The Batch API's file rules that a file of `requests` requests and `bytes` bytes breaks.
pub fn check_batch_file(api: BatchApi, requests: u64, bytes: u64) -> Vec<FileRule> {
    let rules = api.rules();
    let mut broken = Vec::new();
    if requests > rules.max_requests.limit {
        broken.push(FileRule {
            rule: rules.max_requests.name,
            limit: rules.max_requests.limit,
            actual: requests,
            message: format!("the file holds {requests} requests; {}", rules.max_requests.words),
        });
    }
    if bytes > rules.max_bytes.limit {
        broken.push(FileRule {
            rule: rules.max_bytes.name,
            limit: rules.max_bytes.limit,
            actual: bytes,
            message: format!("the file is {bytes} bytes; {}", rules.max_bytes.words),
        });
    }
    broken
}

/// Where the members a batch request is read by sit in its line.
#[derive(Default)]
struct Envelope {
    custom_id: Option<Range<usize>>,
    url: Option<Range<usize>>,
    method: Option<Range<usize>>,
    /// `body` (OpenAI) or `params` (Anthropic), an object.
    body: Option<Range<usize>>,
}

/// The dialect a request's body is judged by.
enum Judged {
    Walk(Api),
    /// An endpoint whose bodies take no media.
    TextOnly,
    /// An endpoint the gate has no walk for; its URL.
    NoWalk(String),
}

/// Admits one request of a batch file. `options` are resolved for the API (its provider by
/// default).
pub fn admit_batch_line(api: BatchApi, line: &str, options: &Options) -> BatchLine {
    let envelope = match envelope(api, line) {
        Ok(e) => e,
        Err(why) => return refused_line(unusable(line, format!("not {}: {why}", title(api)))),
    };
    let string = |span: &Option<Range<usize>>| span.as_ref().and_then(|s| string_at(line, s));
    let custom_id = string(&envelope.custom_id);
    let url = string(&envelope.url);
    let body_span = envelope.body.clone().expect("envelope() requires the body");
    let body = &line[body_span.clone()];
    let judged = match api {
        BatchApi::Anthropic => Judged::Walk(Api::Anthropic),
        BatchApi::OpenAi => match url.as_deref() {
            Some(CHAT_ENDPOINT) => Judged::Walk(Api::OpenAi),
            Some(u) if TEXT_ONLY_ENDPOINTS.contains(&u) => Judged::TextOnly,
            Some(u) => Judged::NoWalk(u.to_string()),
            None => unreachable!("envelope() requires the url"),
        },
    };
    let verdict: RequestVerdict = match judged {
        Judged::Walk(request_api) => admit_request(request_api, body, options),
        Judged::TextOnly => return unchanged(custom_id, url),
        Judged::NoWalk(url_text) => match carries_media(body) {
            None => return unchanged(custom_id, url),
            Some(what) => Err(RequestRefusal {
                unusable: false,
                reason: Reason::MimeUnsupported,
                bytes: body.len() as u64,
                limit: None,
                rule: None,
                message: format!(
                    "the body carries {what}, and mediagate has no request walk for {url_text} to judge it: \
                     the request does not go (send its media through {CHAT_ENDPOINT}, or without media)"
                ),
            }),
        },
    };
    let mut verdict = verdict;
    let conversions = match &mut verdict {
        Ok(a) => std::mem::take(&mut a.conversions),
        Err(_) => Vec::new(),
    };
    let (outcome, spliced) = match &verdict {
        Err(_) => (Outcome::Refused, None),
        Ok(a) if a.changes.iter().any(|c| c.after.is_none()) => (Outcome::RefusedBlocks, a.request.as_deref()),
        Ok(a) if a.request.is_some() => (Outcome::Changed, a.request.as_deref()),
        Ok(_) => (Outcome::Unchanged, None),
    };
    let line_out = spliced.map(|body| {
        let mut out = String::with_capacity(line.len() - body_span.len() + body.len());
        out.push_str(&line[..body_span.start]);
        out.push_str(body);
        out.push_str(&line[body_span.end..]);
        out
    });
    BatchLine { outcome, custom_id, url, line: line_out, verdict, conversions }
}

/// Admits the body of a request that creates an Anthropic Message Batch (`POST
/// /v1/messages/batches`, `{"requests": [{"custom_id", "params"}, …]}`): each item as a line of a
/// batch file is ([`admit_batch_line`]), under the rules of one Messages request, and spliced back
/// in its place; the batch's own rules on the whole. An item that cannot go refuses the batch, in
/// its words: the API takes the batch whole or not at all, and an item left out would be lost.
pub fn admit_message_batch(text: &str, options: &Options) -> RequestVerdict {
    let api = BatchApi::Anthropic;
    let raw = text.len() as u64;
    if let Err(r) = readable(text) {
        return Err(RequestRefusal {
            unusable: true,
            reason: r.reason,
            bytes: raw,
            limit: r.limit,
            rule: None,
            message: r.message,
        });
    }
    let items = match batch_items(text) {
        Ok(items) => items,
        Err(why) => return Err(unusable(text, format!("not an Anthropic Message Batches request: {why}"))),
    };
    if let Some(broken) = check_batch_file(api, items.len() as u64, raw).into_iter().next() {
        return Err(RequestRefusal {
            unusable: false,
            reason: Reason::RequestLimit,
            bytes: raw,
            limit: Some(broken.limit),
            rule: Some(broken.rule),
            message: broken.message.replace("the file", "the batch"),
        });
    }
    let mut out = String::new();
    let mut written = 0;
    let mut admitted = AdmittedRequest { request: None, changes: Vec::new(), conversions: Vec::new() };
    for (i, span) in items.into_iter().enumerate() {
        let line = admit_batch_line(api, &text[span.clone()], options);
        let at = format!("/requests/{i}/params");
        let item = match line.verdict {
            Err(refusal) => {
                let named = line.custom_id.map(|id| format!(" ({id:?})")).unwrap_or_default();
                return Err(RequestRefusal {
                    message: format!(
                        "request {i}{named} of the batch cannot go, so neither can the batch: {}",
                        refusal.message
                    ),
                    ..refusal
                });
            }
            Ok(item) => item,
        };
        admitted.changes.extend(item.changes.into_iter().map(|mut c| {
            c.path.insert_str(0, &at);
            c
        }));
        admitted.conversions.extend(line.conversions.into_iter().map(|mut c| {
            c.path.insert_str(0, &at);
            c
        }));
        if let Some(spliced) = line.line {
            out.push_str(&text[written..span.start]);
            out.push_str(&spliced);
            written = span.end;
        }
    }
    if written > 0 {
        out.push_str(&text[written..]);
        admitted.request = Some(out);
    }
    Ok(admitted)
}

/// Where each item of the batch's one `requests` list sits in its text.
fn batch_items(text: &str) -> Result<Vec<Range<usize>>, String> {
    let mut jiter = Jiter::new(text.as_bytes());
    if jiter.peek().map_err(|e| at_column(&jiter, e))? != Peek::Object {
        return Err("the request is not a JSON object".into());
    }
    let mut items = None;
    let first = jiter.known_object().map(|k| k.map(str::to_string));
    let mut key = first.map_err(|e| at_column(&jiter, e))?;
    while let Some(k) = key {
        let peek = jiter.peek().map_err(|e| at_column(&jiter, e))?;
        if k == "requests" {
            if items.is_some() {
                return Err("it repeats the key `requests`".into());
            }
            if peek != Peek::Array {
                return Err("`requests` is not a list".into());
            }
            let mut spans = Vec::new();
            let mut next = jiter.known_array().map_err(|e| at_column(&jiter, e))?;
            while let Some(peek) = next {
                let start = jiter.current_index();
                jiter.known_skip(peek).map_err(|e| at_column(&jiter, e))?;
                spans.push(start..jiter.current_index());
                next = jiter.array_step().map_err(|e| at_column(&jiter, e))?;
            }
            items = Some(spans);
        } else {
            jiter.known_skip(peek).map_err(|e| at_column(&jiter, e))?;
        }
        let next = jiter.next_key().map(|k| k.map(str::to_string));
        key = next.map_err(|e| at_column(&jiter, e))?;
    }
    jiter.finish().map_err(|e| at_column(&jiter, e))?;
    items.ok_or_else(|| "it has no `requests` list".into())
}

/// A JSON error in words, with where it is.
fn at_column(jiter: &Jiter, e: jiter::JiterError) -> String {
    let at = jiter.error_position(e.index);
    format!("{} at column {}", e.error_type, at.column)
}

fn unchanged(custom_id: Option<String>, url: Option<String>) -> BatchLine {
    let verdict: RequestVerdict =
        Ok(super::request::AdmittedRequest { request: None, changes: Vec::new(), conversions: Vec::new() });
    BatchLine { outcome: Outcome::Unchanged, custom_id, url, line: None, verdict, conversions: Vec::new() }
}

/// A line that is not a request of the API: refused whole, before anything in it was read.
fn refused_line(refusal: RequestRefusal) -> BatchLine {
    BatchLine {
        outcome: Outcome::Refused,
        custom_id: None,
        url: None,
        line: None,
        verdict: Err(refusal),
        conversions: Vec::new(),
    }
}

fn unusable(line: &str, message: String) -> RequestRefusal {
    RequestRefusal {
        unusable: true,
        reason: Reason::Undecodable,
        bytes: line.len() as u64,
        limit: None,
        rule: None,
        message,
    }
}

fn title(api: BatchApi) -> &'static str {
    match api {
        BatchApi::OpenAi => "an OpenAI Batch request ({\"custom_id\", \"method\", \"url\", \"body\"})",
        BatchApi::Anthropic => "an Anthropic Message Batches request ({\"custom_id\", \"params\"})",
    }
}

/// The members of the line's one object that the API reads, each required and given once.
fn envelope(api: BatchApi, line: &str) -> Result<Envelope, String> {
    let mut jiter = Jiter::new(line.as_bytes());
    match jiter.peek().map_err(|e| at_column(&jiter, e))? {
        Peek::Object => {}
        _ => return Err("the line is not a JSON object".into()),
    }
    let body_key = match api {
        BatchApi::OpenAi => "body",
        BatchApi::Anthropic => "params",
    };
    let mut envelope = Envelope::default();
    let first = jiter.known_object().map(|k| k.map(str::to_string));
    let mut key = first.map_err(|e| at_column(&jiter, e))?;
    while let Some(k) = key {
        let peek = jiter.peek().map_err(|e| at_column(&jiter, e))?;
        let start = jiter.current_index();
        jiter.known_skip(peek).map_err(|e| at_column(&jiter, e))?;
        let span = start..jiter.current_index();
        let (slot, want_string) = match k.as_str() {
            "custom_id" => (Some(&mut envelope.custom_id), true),
            "url" if api == BatchApi::OpenAi => (Some(&mut envelope.url), true),
            "method" if api == BatchApi::OpenAi => (Some(&mut envelope.method), true),
            k if k == body_key => (Some(&mut envelope.body), false),
            _ => (None, false),
        };
        if let Some(slot) = slot {
            if slot.is_some() {
                return Err(format!("\"{k}\" is given twice; which one the API reads is not defined"));
            }
            let is_string = matches!(peek, Peek::String);
            if want_string && !is_string {
                return Err(format!("\"{k}\" is not a string"));
            }
            if !want_string && !matches!(peek, Peek::Object) {
                return Err(format!("\"{k}\" is not an object"));
            }
            *slot = Some(span);
        }
        let next = jiter.next_key().map(|k| k.map(str::to_string));
        key = next.map_err(|e| at_column(&jiter, e))?;
    }
    jiter.finish().map_err(|e| at_column(&jiter, e))?;
    if envelope.body.is_none() {
        return Err(format!("it has no \"{body_key}\" object"));
    }
    if api == BatchApi::OpenAi {
        if envelope.url.is_none() {
            return Err("it has no \"url\"".into());
        }
        if let Some(method) = envelope.method.as_ref().and_then(|m| string_at(line, m))
            && method != "POST"
        {
            return Err(format!("its method is {method:?}; the Batch API takes POST"));
        }
    }
    Ok(envelope)
}

/// What media the body of a request to an endpoint without a walk carries, in words; `None` when it
/// carries none. Any block a walk's shapes recognise counts, and so does a base64 `data:` URL
/// anywhere (a shape no walk knows yet).
fn carries_media(body: &str) -> Option<String> {
    if let Ok(text) = readable(body)
        && let Ok(scanned) = scan(&text)
    {
        let blocks = shape::media_blocks(&text, &scanned);
        if let Some(first) = blocks.first() {
            return Some(format!(
                "{} media block(s) (the first at {})",
                blocks.len(),
                scanned.objects[first.object].pointer
            ));
        }
    }
    body.contains(";base64,").then(|| "a base64 data: URL".to_string())
}

#[cfg(test)]
mod tests;
