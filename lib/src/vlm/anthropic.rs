//! Anthropic Messages: the request, and the streamed events (`content_block_delta` with
//! `text_delta` or `thinking_delta`; `message_stop` ends; `error` reports).

use eventsource_stream::Event;
use serde_json::{Value, json};

use super::{Chunk, ChunkKind, Dialect, Step, VlmErrorKind};

/// Enough room for a full transcription of a dense screenshot.
const MAX_TOKENS: u32 = 8192;

pub fn request(model: &str, prompt: &str, mime: &str, data_base64: &str) -> Value {
    json!({
        "model": model,
        "max_tokens": MAX_TOKENS,
        "stream": true,
        "messages": [{
            "role": "user",
            "content": [
                {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data_base64}},
                {"type": "text", "text": prompt},
            ],
        }],
    })
}

#[derive(Default)]
pub struct AnthropicDialect {
    /// A `stop_reason` that says the reply is not complete (`max_tokens`, `refusal`…).
    stopped_early: Option<String>,
}

impl Dialect for AnthropicDialect {
    fn on_event(&mut self, event: &Event) -> Result<Step, VlmErrorKind> {
        let parse = || -> Result<Value, VlmErrorKind> {
            serde_json::from_str(&event.data)
                .map_err(|e| VlmErrorKind::MalformedStream(format!("a {} event is not JSON ({e})", event.event)))
        };
        match event.event.as_str() {
            "content_block_delta" => {
                let json = parse()?;
                let delta = json.get("delta").cloned().unwrap_or(Value::Null);
                let chunk = match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => delta
                        .get("text")
                        .and_then(Value::as_str)
                        .map(|t| Chunk { kind: ChunkKind::Content, text: t.into() }),
                    Some("thinking_delta") => delta
                        .get("thinking")
                        .and_then(Value::as_str)
                        .map(|t| Chunk { kind: ChunkKind::Reasoning, text: t.into() }),
                    _ => None,
                };
                Ok(Step::Chunks(chunk.into_iter().collect()))
            }
            "message_delta" => {
                let json = parse()?;
                if let Some(reason) = json.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stopped_early = early_stop_words(reason);
                }
                Ok(Step::Chunks(Vec::new()))
            }
            "message_stop" => Ok(Step::Done),
            "error" => {
                let json = parse()?;
                let message = json.pointer("/error/message").and_then(Value::as_str).unwrap_or("unknown error");
                Err(VlmErrorKind::MalformedStream(format!("the provider reported an error mid-stream: {message}")))
            }
            // message_start, content_block_start/stop, ping, and future events.
            _ => Ok(Step::Chunks(Vec::new())),
        }
    }

    fn may_end_without_marker(&self) -> bool {
        false
    }

    fn stopped_early(&self) -> Option<String> {
        self.stopped_early.clone()
    }
}

/// What a `stop_reason` means when the reply is not whole; `None` for `end_turn`, `stop_sequence`,
/// `tool_use` (the model ended on its own).
fn early_stop_words(reason: &str) -> Option<String> {
    match reason {
        "max_tokens" => Some(format!(
            "the model reached its output limit (stop_reason \"max_tokens\", {MAX_TOKENS} tokens asked for)"
        )),
        "model_context_window_exceeded" => {
            Some("the model ran out of context window (stop_reason \"model_context_window_exceeded\")".into())
        }
        "refusal" => Some("the provider's safety filter stopped the reply (stop_reason \"refusal\")".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str) -> Event {
        Event { event: event.into(), data: data.into(), id: String::new(), retry: None }
    }

    #[test]
    fn text_and_thinking_deltas() {
        let mut d = AnthropicDialect::default();
        let Step::Chunks(c) = d
            .on_event(&ev(
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"so"}}"#,
            ))
            .unwrap()
        else {
            panic!()
        };
        assert_eq!(c[0].kind, ChunkKind::Reasoning);
        let Step::Chunks(c) =
            d.on_event(&ev("content_block_delta", r#"{"delta":{"type":"text_delta","text":"A cat"}}"#)).unwrap()
        else {
            panic!()
        };
        assert_eq!(c[0], Chunk { kind: ChunkKind::Content, text: "A cat".into() });
        assert!(matches!(d.on_event(&ev("ping", "{}")).unwrap(), Step::Chunks(c) if c.is_empty()));
        assert!(matches!(d.on_event(&ev("message_stop", "{}")).unwrap(), Step::Done));
        assert!(
            matches!(d.on_event(&ev("error", r#"{"error":{"message":"Overloaded"}}"#)), Err(VlmErrorKind::MalformedStream(m)) if m.contains("Overloaded"))
        );
    }

    #[test]
    fn a_reply_cut_at_max_tokens_says_so() {
        let delta = |reason: &str| ev("message_delta", &format!(r#"{{"delta":{{"stop_reason":"{reason}"}}}}"#));
        let mut d = AnthropicDialect::default();
        d.on_event(&delta("end_turn")).unwrap();
        assert_eq!(d.stopped_early(), None);
        d.on_event(&delta("max_tokens")).unwrap();
        assert!(d.stopped_early().is_some_and(|w| w.contains("output limit") && w.contains("max_tokens")));
        let mut d = AnthropicDialect::default();
        d.on_event(&delta("refusal")).unwrap();
        assert!(d.stopped_early().is_some_and(|w| w.contains("refusal")));
    }

    #[test]
    fn the_image_is_a_base64_source() {
        let r = request("claude", "q", "image/jpeg", "AAAA");
        assert_eq!(r["messages"][0]["content"][0]["source"]["media_type"], "image/jpeg");
        assert_eq!(r["messages"][0]["content"][1]["text"], "q");
    }
}
