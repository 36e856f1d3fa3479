//! How verdicts are printed: one JSON object (`--json`) or one line a person reads.

use std::path::Path;

use mediagate::gate::{Admitted, BlockKind, ConversionMade, Payload, ToolResultAdmission, Verdict};
use serde_json::{Value, json};

pub fn verdict_json(verdict: &Verdict) -> Value {
    match verdict {
        Verdict::Admitted(a) => {
            let mut v = json!({
                "ok": true,
                "kind": kind(a.kind),
                "mime": a.mime,
                "original_size": a.original_size,
                "resized": a.resized,
                "reencoded": a.reencoded,
                "base64_len": a.base64_len,
            });
            // What the canonical form left out (the contract's `admitted.dropped`), when anything was.
            if !a.dropped.is_empty() {
                v["dropped"] = json!(a.dropped);
            }
            // Dimensions are reported when measured, never invented.
            if let Some(d) = &a.dimensions {
                v["width"] = json!(d.width);
                v["height"] = json!(d.height);
            }
            v
        }
        Verdict::Refused(r) => {
            let mut v = json!({
                "ok": false,
                "reason": r.reason.as_str(),
                "raw_bytes": r.raw_bytes,
                "message": r.message,
            });
            if let Some(limit) = r.limit {
                v["limit"] = json!(limit);
            }
            v
        }
    }
}

/// `{"from", "to", "note"}`: the conversion a single image went through (admit's `"converted"`).
pub fn conversion_json(c: &ConversionMade) -> Value {
    json!({"from": c.from, "to": c.to, "note": c.note})
}

/// `[{"path", "from", "to", "note"}, …]`: the conversions in a tool result or request.
pub fn conversion_list_json(list: &[ConversionMade]) -> Value {
    Value::Array(list.iter().map(|c| json!({"path": c.path, "from": c.from, "to": c.to, "note": c.note})).collect())
}

/// One line a person reads. The admitted size is the bytes' own length (or the input's, when
/// unchanged): no number from the guest is trusted to compute it.
pub fn verdict_line(file: &Path, verdict: &Verdict) -> String {
    let name = file.display();
    match verdict {
        Verdict::Admitted(a) => {
            let dims = a.dimensions.as_ref().map(|d| format!(" {}x{}", d.width, d.height)).unwrap_or_default();
            let admitted_bytes = match &a.payload {
                Payload::Unchanged => a.original_size,
                Payload::Bytes(b) => b.len() as u64,
            };
            let change = match (a.resized, a.reencoded) {
                (true, _) => format!(", downsampled {} -> {admitted_bytes} bytes", a.original_size),
                (false, true) => format!(", re-encoded {} -> {admitted_bytes} bytes", a.original_size),
                _ => format!(", {} bytes", a.original_size),
            };
            format!("admitted {name}: {} {}{dims}{change}, base64 {} bytes", kind(a.kind), a.mime, a.base64_len)
        }
        Verdict::Refused(r) => {
            format!("refused {name}: {} — {} ({} bytes)", r.reason.as_str(), r.message, r.raw_bytes)
        }
    }
}

fn kind(k: BlockKind) -> &'static str {
    match k {
        BlockKind::Image => "image",
        BlockKind::Document => "document",
    }
}

/// The admitted block in the Anthropic content-block shape; `input` is what the gate was given.
pub fn block_json(a: &Admitted, input: &[u8]) -> Value {
    json!({"type": kind(a.kind), "source": {"type": "base64", "media_type": a.mime, "data": a.base64(input)}})
}

/// `{"content": …, "refused": […]}`. With no media block the content comes back exactly as it was
/// given (the input text itself: numbers, key order and spacing untouched); otherwise it is the
/// gate's rebuilt text, which keeps everything but the media blocks byte for byte.
///
/// The gate's text is checked to be JSON before it is spliced: a malformed value is an error,
/// never invalid output.
pub fn tool_result_json(input: &str, admission: &ToolResultAdmission) -> Result<String, String> {
    if let Some(content) = &admission.content {
        check_json(content, "content")?;
    }
    let content = admission.content.as_deref().unwrap_or(input);
    let refused: Vec<Value> = admission
        .refused
        .iter()
        .map(|r| {
            let mut v = json!({
                "index": r.index,
                "path": r.path,
                "type": r.block_type,
                "reason": r.reason.as_str(),
                "bytes": r.raw_bytes,
                "mime": r.mime,
            });
            if let Some(limit) = r.limit {
                v["limit"] = json!(limit);
            }
            v
        })
        .collect();
    // The content is JSON text the gate has read (or written): it is spliced in, not re-serialised.
    Ok(format!("{{\"content\":{},\"refused\":{}}}", content.trim(), Value::Array(refused)))
}

/// `Ok` when `text` is one JSON value (validated, not built: nothing is allocated per value).
pub fn check_json(text: &str, what: &str) -> Result<(), String> {
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .map(drop)
        .map_err(|e| format!("the gate's {what} is not JSON ({e}); nothing was printed"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_text_that_is_not_json_is_an_error() {
        let admission = |content: &str| ToolResultAdmission { content: Some(content.into()), refused: vec![] };
        assert!(tool_result_json("[]", &admission(r#"[{"type":"text","text":"x"}]"#)).is_ok());
        assert!(tool_result_json("[]", &admission(r#"[{"type":"text""#)).is_err());
        assert!(tool_result_json("[]", &admission("[] ,{}")).is_err());
    }
}
