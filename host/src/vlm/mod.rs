//! The VLM capability: a streaming client for OpenAI-compatible `/chat/completions` and Anthropic
//! `/v1/messages`, on reqwest with `eventsource-stream` for SSE. The guest pulls chunks from a
//! [`ReplyStream`]; connect and idle timeouts, and a bounded retry before the first byte.

mod anthropic;
mod config;
mod openai;

use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};

pub use config::{Api, VlmConfig};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkKind {
    Content,
    Reasoning,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub kind: ChunkKind,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VlmError {
    #[error("no vision model is configured")]
    NotConfigured,
    #[error("unreachable: {0}")]
    Unreachable(String),
    #[error("refused with HTTP {status}: {message}")]
    Refused { status: u16, message: String },
    #[error("timed out: {0}")]
    TimedOut(String),
    #[error("malformed stream: {0}")]
    MalformedStream(String),
}

/// One dialect's view of the stream: what each SSE event means.
trait Dialect: Send {
    /// Chunks carried by one event, or the end of the reply.
    fn on_event(&mut self, event: &Event) -> Result<Step, VlmError>;
    /// Whether the stream may end here without an explicit end marker.
    fn may_end_without_marker(&self) -> bool;
}

enum Step {
    Chunks(Vec<Chunk>),
    Done,
}

type EventStream = Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<reqwest::Error>>> + Send>>;

/// A reply being streamed. Pull it with [`ReplyStream::next_chunk`].
pub struct ReplyStream {
    events: EventStream,
    dialect: Box<dyn Dialect>,
    pending: std::collections::VecDeque<Chunk>,
    idle_timeout: Duration,
    done: bool,
}

impl ReplyStream {
    pub async fn next_chunk(&mut self) -> Result<Option<Chunk>, VlmError> {
        loop {
            if let Some(chunk) = self.pending.pop_front() {
                return Ok(Some(chunk));
            }
            if self.done {
                return Ok(None);
            }
            let next = tokio::time::timeout(self.idle_timeout, self.events.next()).await.map_err(|_| {
                VlmError::TimedOut(format!("no data for {:?} while streaming the reply", self.idle_timeout))
            })?;
            match next {
                None => {
                    self.done = true;
                    if !self.dialect.may_end_without_marker() {
                        return Err(VlmError::MalformedStream("the stream ended before the reply was complete".into()));
                    }
                }
                Some(Err(EventStreamError::Transport(e))) => {
                    self.done = true;
                    return Err(if e.is_timeout() {
                        VlmError::TimedOut(transport_message(&e))
                    } else {
                        VlmError::Unreachable(format!("the connection broke while streaming: {}", transport_message(&e)))
                    });
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Err(VlmError::MalformedStream(e.to_string()));
                }
                Some(Ok(event)) => match self.dialect.on_event(&event) {
                    Ok(Step::Chunks(chunks)) => self.pending.extend(chunks.into_iter().filter(|c| !c.text.is_empty())),
                    Ok(Step::Done) => self.done = true,
                    Err(e) => {
                        self.done = true;
                        return Err(e);
                    }
                },
            }
        }
    }
}

/// A client for one configured VLM endpoint.
pub struct VlmClient {
    config: VlmConfig,
    http: reqwest::Client,
}

impl VlmClient {
    pub fn new(config: VlmConfig) -> Result<Self, VlmError> {
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| VlmError::Unreachable(format!("cannot build the HTTP client: {e}")))?;
        Ok(VlmClient { config, http })
    }

    pub fn config(&self) -> &VlmConfig {
        &self.config
    }

    /// Sends the request and returns the reply stream once the response has started. Connect
    /// errors, 429 and 5xx are retried with backoff (honouring Retry-After) before the first
    /// byte; nothing is retried after the reply began to stream.
    pub async fn ask(&self, prompt: &str, mime: &str, data_base64: &str) -> Result<ReplyStream, VlmError> {
        let (url, body, dialect): (String, serde_json::Value, Box<dyn Dialect>) = match self.config.api {
            Api::OpenAi => (
                format!("{}/chat/completions", self.config.base_url.trim_end_matches('/')),
                openai::request(&self.config.model, prompt, mime, data_base64),
                Box::new(openai::OpenAiDialect::default()),
            ),
            Api::Anthropic => (
                format!("{}/v1/messages", self.config.base_url.trim_end_matches('/')),
                anthropic::request(&self.config.model, prompt, mime, data_base64),
                Box::new(anthropic::AnthropicDialect::default()),
            ),
        };
        let body = serde_json::to_vec(&body).expect("a JSON value serialises");
        let mut attempt = 0;
        loop {
            let mut request = self.http.post(&url).header("content-type", "application/json").body(body.clone());
            request = match self.config.api {
                Api::OpenAi => match &self.config.api_key {
                    Some(key) => request.bearer_auth(key),
                    None => request,
                },
                Api::Anthropic => {
                    let r = request.header("anthropic-version", "2023-06-01");
                    match &self.config.api_key {
                        Some(key) => r.header("x-api-key", key),
                        None => r,
                    }
                }
            };
            let sent = tokio::time::timeout(self.config.idle_timeout, request.send()).await;
            let retry_after = match sent {
                Err(_) => Err(VlmError::TimedOut(format!("no response within {:?}", self.config.idle_timeout))),
                Ok(Err(e)) if e.is_connect() => {
                    Ok((VlmError::Unreachable(format!("cannot connect to {}: {}", self.config.base_url, transport_message(&e))), None))
                }
                Ok(Err(e)) if e.is_timeout() => Err(VlmError::TimedOut(transport_message(&e))),
                Ok(Err(e)) => Err(VlmError::Unreachable(transport_message(&e))),
                Ok(Ok(response)) => {
                    let status = response.status();
                    if status.is_success() {
                        return self.stream(response, dialect);
                    }
                    let retry_after = parse_retry_after(response.headers());
                    let message = provider_message(response).await;
                    let refused = VlmError::Refused { status: status.as_u16(), message };
                    if status.as_u16() == 429 || status.is_server_error() { Ok((refused, retry_after)) } else { Err(refused) }
                }
            };
            let (error, retry_after) = match retry_after {
                Err(final_error) => return Err(final_error),
                Ok(retryable) => retryable,
            };
            if attempt >= self.config.max_retries {
                return Err(error);
            }
            let backoff = self.config.retry_backoff * 2u32.pow(attempt);
            let wait = retry_after.unwrap_or(backoff).min(self.config.max_retry_wait);
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    fn stream(&self, response: reqwest::Response, dialect: Box<dyn Dialect>) -> Result<ReplyStream, VlmError> {
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !content_type.starts_with("text/event-stream") {
            return Err(VlmError::MalformedStream(format!(
                "expected an event stream (text/event-stream), got {}",
                if content_type.is_empty() { "no content type" } else { &content_type }
            )));
        }
        let limit = self.config.max_event_bytes;
        let events = bounded(response.bytes_stream(), limit).eventsource();
        Ok(ReplyStream {
            events: Box::pin(events),
            dialect,
            pending: Default::default(),
            idle_timeout: self.config.idle_timeout,
            done: false,
        })
    }
}

/// Ends the byte stream with an error once `limit` bytes arrive without a blank line (an SSE
/// event boundary): one huge event must not exhaust the host's memory.
fn bounded(
    bytes: impl Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Send + 'static,
    limit: usize,
) -> impl Stream<Item = Result<bytes::Bytes, reqwest::Error>> + Send + 'static {
    let mut since_boundary = 0usize;
    let mut last = 0u8;
    let mut over = false;
    bytes.map(move |item| {
        let chunk = item?;
        for &b in chunk.iter() {
            if b == b'\n' && last == b'\n' {
                since_boundary = 0;
            } else if b != b'\r' {
                since_boundary += 1;
            }
            if b != b'\r' {
                last = b;
            }
        }
        if since_boundary > limit {
            over = true;
        }
        Ok(if over { bytes::Bytes::from_static(b"\n\nevent: mediagate-oversize\ndata: {}\n\n") } else { chunk })
    })
}

fn transport_message(e: &reqwest::Error) -> String {
    // reqwest's Display names the URL; walk the sources for the cause (never headers or keys).
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg = format!("{msg}: {s}");
        source = s.source();
    }
    msg
}

fn parse_retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0).map(Duration::from_secs_f64)
}

/// The provider's own words: `error.message` of a JSON body, else the body's start.
async fn provider_message(response: reqwest::Response) -> String {
    let status = response.status();
    let text = match tokio::time::timeout(Duration::from_secs(10), response.text()).await {
        Ok(Ok(t)) => t,
        _ => String::new(),
    };
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) {
        let message = json
            .pointer("/error/message")
            .or_else(|| json.get("message"))
            .or_else(|| json.get("error"))
            .and_then(|m| m.as_str());
        if let Some(m) = message {
            return m.to_string();
        }
    }
    let text = text.trim();
    if text.is_empty() {
        status.canonical_reason().unwrap_or("no message").to_string()
    } else {
        text.chars().take(500).collect()
    }
}

/// The oversize marker `bounded` injects becomes a clear error in either dialect.
fn oversize_check(event: &Event, limit_hint: &str) -> Result<(), VlmError> {
    if event.event == "mediagate-oversize" {
        return Err(VlmError::MalformedStream(format!("one event exceeded {limit_hint} without a boundary")));
    }
    Ok(())
}
