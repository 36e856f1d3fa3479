//! The JSON every host prints: the verdict of one input, a tool result's and a request's report.
//! Written here once (the CLI, the library hosts, the MCP server, the proxy, the HTTP component,
//! JS and Python print this text); the keys and refusal reasons are snake_case, as the CLI has
//! always printed them. Objects are `serde_json` maps, so their keys come out in sorted order.

use serde_json::{Value, json};

use crate::Api;
use crate::convert::PageError;
use crate::verdict::{Admitted, ConversionMade, Kind, Refusal};
use crate::walks::batch::BatchLine;
use crate::walks::request::{Change, ChangeKind, MediaFacts, RequestVerdict};
use crate::walks::tool_result::ToolResultAdmission;

pub fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Image => "image",
        Kind::Document => "document",
    }
}

pub fn change_name(c: ChangeKind) -> &'static str {
    match c {
        ChangeKind::Downsampled => "downsampled",
        ChangeKind::Reencoded => "re-encoded",
        ChangeKind::Normalized => "normalized",
        ChangeKind::Refused => "refused",
    }
}

/// `{"ok": true, "kind", "mime", "original_size", "resized", "reencoded", "base64_len", "dropped"?,
/// "repaired"?, "width"?, "height"?, "converted"?}`: dimensions only when measured, never invented;
/// `repaired`, the words the model is told of a repair (`repairs.rs`).
pub fn admitted(a: &Admitted) -> Value {
    let mut v = json!({
        "ok": true,
        "kind": kind_name(a.kind),
        "mime": a.mime,
        "original_size": a.original_size,
        "resized": a.resized,
        "reencoded": a.reencoded,
        "base64_len": a.base64_len(),
    });
    if !a.dropped.is_empty() {
        v["dropped"] = json!(a.dropped);
    }
    if let Some(words) = a.repaired() {
        v["repaired"] = json!(words);
    }
    if let Some(d) = &a.dimensions {
        v["width"] = json!(d.width);
        v["height"] = json!(d.height);
    }
    if let Some(c) = &a.converted {
        v["converted"] = json!({"from": c.from, "to": a.mime, "note": c.note});
    }
    v
}

/// `{"ok": false, "reason", "raw_bytes", "message", "limit"?}`.
pub fn refusal(r: &Refusal) -> Value {
    let mut v = json!({"ok": false, "reason": r.reason.as_str(), "raw_bytes": r.raw_bytes, "message": r.message});
    if let Some(limit) = r.limit {
        v["limit"] = json!(limit);
    }
    v
}

/// The name of a page error's kind (JSON `reason`): the refusal's own reason when the gate
/// refused the PDF or the rendered page.
pub fn page_error_reason(e: &PageError) -> &'static str {
    match e {
        PageError::NoSuchPage { .. } => NO_SUCH_PAGE,
        PageError::Encrypted(_) => ENCRYPTED,
        PageError::Blank { .. } => BLANK,
        PageError::Refused(r) => r.reason.as_str(),
    }
}

/// A PDF page that did not become an image: `{"ok": false, "reason", "raw_bytes", "message",
/// "requested"?, "count"?}`; `raw_bytes` is the input's length.
pub fn page_refusal(e: &PageError, input_len: u64) -> Value {
    let mut v = json!({"ok": false, "reason": page_error_reason(e), "raw_bytes": input_len, "message": e.message()});
    if let PageError::NoSuchPage { requested, count } = e {
        v["requested"] = json!(requested);
        v["count"] = json!(count);
    }
    v
}

/// `[{"path", "from", "to", "note"}, …]`.
pub fn conversions(list: &[ConversionMade]) -> Value {
    Value::Array(list.iter().map(|c| json!({"path": c.path, "from": c.from, "to": c.to, "note": c.note})).collect())
}

/// `{…}` → `{…,"conversions":[…]}`: spliced, so the text before stays byte for byte as it was.
pub fn with_conversions(mut object: String, list: &[ConversionMade]) -> String {
    let end = object.trim_end().len();
    object.truncate(end.saturating_sub(1)); // the object's closing brace
    object.push_str(",\"conversions\":");
    object.push_str(&conversions(list).to_string());
    object.push('}');
    object
}

/// `{"content": …, "refused": […]}`. With no media block the content is the input text itself
/// (numbers, key order and spacing untouched); otherwise the gate's rebuilt text. Spliced as text,
/// never re-serialised.
pub fn tool_result(input: &str, admission: &ToolResultAdmission) -> String {
    let content = admission.content.as_deref().unwrap_or(input);
    let refused: Vec<Value> = admission
        .refused
        .iter()
        .map(|r| {
            let mut v = json!({
                "index": r.index, "path": r.path, "type": r.block_type,
                "reason": r.reason.as_str(), "bytes": r.raw_bytes, "mime": r.mime,
            });
            if let Some(limit) = r.limit {
                v["limit"] = json!(limit);
            }
            v
        })
        .collect();
    format!("{{\"content\":{},\"refused\":{}}}", content.trim(), Value::Array(refused))
}

/// `{"api", "request", "changed", "refused", "refusal"}` (docs/usage.md, "admit-request"): the
/// request spliced as text (the input itself when nothing changed).
pub fn request(api: Api, input: &str, verdict: &RequestVerdict) -> String {
    let (changed, refused, refusal) = request_parts(verdict);
    let request = match verdict {
        Ok(a) => a.request.as_deref().unwrap_or(input).trim(),
        Err(_) => "null",
    };
    format!(
        "{{\"api\":\"{}\",\"request\":{request},\"changed\":{changed},\"refused\":{refused},\"refusal\":{refusal}}}",
        api.name()
    )
}

/// A batch request's report line: `{"number", "custom_id", "outcome", "url"?, "changed", "refused",
/// "refusal"}` (+ `"conversions"` when any were made); the request itself is not repeated. `number`
/// is its line (or item) number in the file.
pub fn batch_line(number: u64, answer: &BatchLine) -> String {
    let (changed, refused, refusal) = request_parts(&answer.verdict);
    let url = answer.url.as_ref().map(|u| format!(",\"url\":{}", json!(u))).unwrap_or_default();
    let object = format!(
        "{{\"number\":{number},\"custom_id\":{},\"outcome\":\"{}\"{url},\"changed\":{changed},\"refused\":{refused},\"refusal\":{refusal}}}",
        json!(answer.custom_id),
        answer.outcome.name()
    );
    if answer.conversions.is_empty() { object } else { with_conversions(object, &answer.conversions) }
}

/// A request verdict's `changed`, `refused` (the refused blocks' paths) and `refusal` values.
fn request_parts(verdict: &RequestVerdict) -> (Value, Value, Value) {
    match verdict {
        Ok(a) => {
            let changed: Vec<Value> = a.changes.iter().map(change).collect();
            let refused: Vec<&str> = a.changes.iter().filter(|c| c.after.is_none()).map(|c| c.path.as_str()).collect();
            (Value::Array(changed), json!(refused), Value::Null)
        }
        Err(r) => (
            json!([]),
            json!([]),
            json!({
                "unusable": r.unusable, "reason": r.reason.as_str(), "bytes": r.bytes,
                "limit": r.limit, "rule": r.rule, "message": r.message,
            }),
        ),
    }
}

fn change(c: &Change) -> Value {
    json!({
        "path": c.path,
        "type": c.block_type,
        "what": change_name(c.what),
        "from": facts(&c.before),
        "to": c.after.as_ref().map(facts),
        "reason": c.reason.map(|r| r.as_str()),
        "limit": c.limit,
        "rule": c.rule,
        "message": c.message,
    })
}

fn facts(f: &MediaFacts) -> Value {
    let mut v = json!({"mime": f.mime, "bytes": f.bytes});
    if let Some(d) = &f.dimensions {
        v["width"] = json!(d.width);
        v["height"] = json!(d.height);
    }
    v
}

// Below the code the component runs, so that the line numbers its panic locations carry stay put.
/// The reasons only a PDF page has (JSON `reason`), besides the refusals' own.
pub const PAGE_ERROR_REASONS: [&str; 3] = [NO_SUCH_PAGE, ENCRYPTED, BLANK];
const NO_SUCH_PAGE: &str = "no_such_page";
const ENCRYPTED: &str = "encrypted";
const BLANK: &str = "blank";
