//! How verdicts are printed: the component's JSON (`--json`, checked before it is printed) or one
//! line a person reads.

use std::path::Path;

use mediagate::gate::{Admitted, Payload, Verdict};
use serde_json::{Value, json};

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
            format!("admitted {name}: {} {}{dims}{change}, base64 {} bytes", kind(a), a.mime, a.base64_len)
        }
        Verdict::Refused(r) => {
            format!("refused {name}: {} — {} ({} bytes)", r.reason.as_str(), r.message, r.raw_bytes)
        }
    }
}

fn kind(a: &Admitted) -> &'static str {
    match a.kind {
        mediagate::gate::BlockKind::Image => "image",
        mediagate::gate::BlockKind::Document => "document",
    }
}

/// The admitted block in the Anthropic content-block shape; `input` is what the gate was given.
pub fn block_json(a: &Admitted, input: &[u8]) -> Value {
    json!({"type": kind(a), "source": {"type": "base64", "media_type": a.mime, "data": a.base64(input)}})
}

/// What the verdict of an input refused for its type adds when `--convert` would convert the type
/// its bytes carry (`sniffed`): the same words on the line and in the JSON's `hint`.
pub fn convert_hint(sniffed: &str) -> String {
    format!("the bytes are {sniffed}, which --convert converts")
}

/// The component's verdict object (`json`, checked JSON) with `head`'s fields in front of its own:
/// `{"path": …, <the verdict's keys>}`. Spliced as text, so the verdict's bytes stay the
/// component's.
pub fn with_head(head: &[(&str, Value)], json: &str) -> String {
    if head.is_empty() {
        return json.to_string();
    }
    let fields: Vec<String> = head.iter().map(|(k, v)| format!("{}:{v}", Value::from(*k))).collect();
    let head = format!("{{{}", fields.join(","));
    let rest = json.trim().strip_prefix('{').unwrap_or("}");
    if rest.trim_start().starts_with('}') { format!("{head}}}") } else { format!("{head},{rest}") }
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
        assert!(check_json(r#"{"content":[{"type":"text","text":"x"}],"refused":[]}"#, "tool result").is_ok());
        assert!(check_json(r#"{"content":[{"type":"text""#, "tool result").is_err());
        assert!(check_json("[] ,{}", "tool result").is_err());
    }

    #[test]
    fn fields_go_in_front_of_the_verdict_as_text() {
        let head = [("path", json!("a \"b\".png")), ("hint", json!("h"))];
        assert_eq!(
            with_head(&head, r#"{"ok":false,"reason":"x"}"#),
            r#"{"path":"a \"b\".png","hint":"h","ok":false,"reason":"x"}"#
        );
        assert_eq!(with_head(&head, "{ }"), r#"{"path":"a \"b\".png","hint":"h"}"#);
        assert_eq!(with_head(&[], r#"{"ok":true}"#), r#"{"ok":true}"#);
    }
}
