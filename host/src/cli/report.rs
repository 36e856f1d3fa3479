//! How verdicts are printed: one JSON object (`--json`) or one line a person reads.

use std::path::Path;

use mediagate::gate::{Admitted, BlockKind, ToolResultAdmission, Verdict};
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

/// One line a person reads; `Err` when the gate's numbers do not add up (a malformed verdict).
pub fn verdict_line(file: &Path, verdict: &Verdict) -> Result<String, String> {
    let name = file.display();
    Ok(match verdict {
        Verdict::Admitted(a) => {
            let dims = a.dimensions.as_ref().map(|d| format!(" {}x{}", d.width, d.height)).unwrap_or_default();
            let admitted_bytes = decoded_len(&a.data, a.base64_len)?;
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
    })
}

/// The byte count a padded base64 string of `base64_len` characters decodes to, checked against
/// the string itself: a length that is not the data's, not a multiple of 4, or more padding than
/// base64 has is an error, never an underflow.
fn decoded_len(data: &str, base64_len: u64) -> Result<u64, String> {
    let malformed = |what: &str| Err(format!("the gate's admitted block is malformed: {what}"));
    if data.len() as u64 != base64_len {
        return malformed(&format!("base64_len {base64_len} is not the data's length {}", data.len()));
    }
    if !base64_len.is_multiple_of(4) {
        return malformed(&format!("base64_len {base64_len} is not a multiple of 4"));
    }
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count() as u64;
    if padding > 2 || padding > base64_len {
        return malformed(&format!("{padding} padding characters"));
    }
    Ok(base64_len / 4 * 3 - padding)
}

fn kind(k: BlockKind) -> &'static str {
    match k {
        BlockKind::Image => "image",
        BlockKind::Document => "document",
    }
}

/// The admitted block in the Anthropic content-block shape.
pub fn block_json(a: &Admitted) -> Value {
    json!({"type": kind(a.kind), "source": {"type": "base64", "media_type": a.mime, "data": a.data}})
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
    use mediagate::gate::{Admitted, BlockKind, Verdict};

    fn admitted(data: &str, base64_len: u64) -> Verdict {
        Verdict::Admitted(Admitted {
            kind: BlockKind::Image,
            mime: "image/png".into(),
            data: data.into(),
            original_size: 3,
            dimensions: None,
            resized: false,
            reencoded: false,
            base64_len,
        })
    }

    #[test]
    fn a_malformed_verdict_is_an_error_never_a_panic() {
        let file = Path::new("x.png");
        assert!(verdict_line(file, &admitted("QUJD", 4)).unwrap().contains("3 bytes"));
        assert!(verdict_line(file, &admitted("QQ==", 4)).is_ok());
        // The lengths the guest reports are checked, not trusted: these underflowed or lied.
        for (data, len) in [("==", 2), ("====", 4), ("", 4), ("QUJD", 8), ("QUJ", 3), ("=", 0)] {
            let line = verdict_line(file, &admitted(data, len));
            assert!(line.as_ref().is_err_and(|e| e.contains("malformed")), "{data:?} {len}: {line:?}");
        }
        assert!(verdict_line(file, &admitted("", 0)).is_ok());
    }

    #[test]
    fn gate_text_that_is_not_json_is_an_error() {
        let admission = |content: &str| ToolResultAdmission { content: Some(content.into()), refused: vec![] };
        assert!(tool_result_json("[]", &admission(r#"[{"type":"text","text":"x"}]"#)).is_ok());
        assert!(tool_result_json("[]", &admission(r#"[{"type":"text""#)).is_err());
        assert!(tool_result_json("[]", &admission("[] ,{}")).is_err());
    }
}
