//! OpenAI-compatible chat completions: the request, and what each streamed event carries
//! (`delta.content`, `delta.reasoning`, `delta.reasoning_content`; `[DONE]` ends the stream).

use eventsource_stream::Event;
use serde_json::{Value, json};

use super::{Chunk, ChunkKind, Dialect, Step, VlmErrorKind};

pub fn request(model: &str, prompt: &str, mime: &str, data_base64: &str) -> Value {
    json!({
        "model": model,
        "stream": true,
        "messages": [{
            "role": "user",
            "content": [
                {"type": "text", "text": prompt},
                {"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{data_base64}")}},
            ],
        }],
    })
}

#[derive(Default)]
pub struct OpenAiDialect {
    finished: bool,
    /// A `finish_reason` that says the reply is not complete (`length`, `content_filter`).
    stopped_early: Option<String>,
}

impl Dialect for OpenAiDialect {
    fn on_event(&mut self, event: &Event) -> Result<Step, VlmErrorKind> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(Step::Done);
        }
        if data.is_empty() {
            return Ok(Step::Chunks(Vec::new()));
        }
        let json: Value = serde_json::from_str(data)
            .map_err(|e| VlmErrorKind::MalformedStream(format!("an event is not JSON ({e}): {}", preview(data))))?;
        if let Some(err) = json.get("error") {
            let message = err.get("message").and_then(Value::as_str).unwrap_or("unknown error").to_string();
            return Err(VlmErrorKind::MalformedStream(format!("the provider reported an error mid-stream: {message}")));
        }
        let mut chunks = Vec::new();
        for choice in json.get("choices").and_then(Value::as_array).into_iter().flatten() {
            let delta = choice.get("delta").or_else(|| choice.get("message"));
            if let Some(delta) = delta {
                for key in ["reasoning", "reasoning_content"] {
                    if let Some(t) = delta.get(key).and_then(Value::as_str) {
                        chunks.push(Chunk { kind: ChunkKind::Reasoning, text: t.to_string() });
                    }
                }
                if let Some(t) = delta.get("content").and_then(Value::as_str) {
                    chunks.push(Chunk { kind: ChunkKind::Content, text: t.to_string() });
                }
            }
            if let Some(reason) = choice.get("finish_reason").filter(|f| !f.is_null()) {
                self.finished = true;
                self.stopped_early = early_stop_words(reason);
            }
        }
        Ok(Step::Chunks(chunks))
    }

    fn may_end_without_marker(&self) -> bool {
        // Some servers omit `[DONE]`; a finish_reason already said the reply is whole.
        self.finished
    }

    fn stopped_early(&self) -> Option<String> {
        self.stopped_early.clone()
    }
}

/// What a `finish_reason` means when the reply is not whole; `None` for `stop`, `tool_calls` and
/// the like (the model ended on its own).
fn early_stop_words(reason: &Value) -> Option<String> {
    match reason.as_str()? {
        "length" => Some("the model reached its output limit (finish_reason \"length\")".into()),
        "content_filter" => {
            Some("the provider's content filter stopped the reply (finish_reason \"content_filter\")".into())
        }
        _ => None,
    }
}

fn preview(s: &str) -> String {
    s.chars().take(120).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(data: &str) -> Event {
        Event { event: "message".into(), data: data.into(), id: String::new(), retry: None }
    }

    #[test]
    fn deltas_become_chunks() {
        let mut d = OpenAiDialect::default();
        let Step::Chunks(c) =
            d.on_event(&ev(r#"{"choices":[{"delta":{"reasoning_content":"hm","content":"Hi"}}]}"#)).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            c,
            vec![
                Chunk { kind: ChunkKind::Reasoning, text: "hm".into() },
                Chunk { kind: ChunkKind::Content, text: "Hi".into() }
            ]
        );
        assert!(!d.may_end_without_marker());
        d.on_event(&ev(r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#)).unwrap();
        assert!(d.may_end_without_marker());
        assert!(matches!(d.on_event(&ev("[DONE]")).unwrap(), Step::Done));
    }

    #[test]
    fn a_reply_cut_at_the_output_limit_says_so() {
        let mut d = OpenAiDialect::default();
        d.on_event(&ev(r#"{"choices":[{"delta":{"content":"Hal"}}]}"#)).unwrap();
        assert_eq!(d.stopped_early(), None);
        d.on_event(&ev(r#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#)).unwrap();
        assert!(d.may_end_without_marker());
        assert!(d.stopped_early().is_some_and(|w| w.contains("output limit") && w.contains("length")));
        let mut d = OpenAiDialect::default();
        d.on_event(&ev(r#"{"choices":[{"delta":{},"finish_reason":"content_filter"}]}"#)).unwrap();
        assert!(d.stopped_early().is_some_and(|w| w.contains("content filter")));
        let mut d = OpenAiDialect::default();
        d.on_event(&ev(r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#)).unwrap();
        assert_eq!(d.stopped_early(), None);
    }

    #[test]
    fn garbage_is_malformed() {
        let mut d = OpenAiDialect::default();
        assert!(matches!(d.on_event(&ev("{not json")), Err(VlmErrorKind::MalformedStream(_))));
        assert!(
            matches!(d.on_event(&ev(r#"{"error":{"message":"overloaded"}}"#)), Err(VlmErrorKind::MalformedStream(m)) if m.contains("overloaded"))
        );
    }

    #[test]
    fn the_image_is_a_data_url() {
        let r = request("m", "q", "image/png", "AAAA");
        assert_eq!(r["messages"][0]["content"][1]["image_url"]["url"], "data:image/png;base64,AAAA");
        assert_eq!(r["stream"], true);
    }
}
