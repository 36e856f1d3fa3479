//! The VLM capability: a streaming client for OpenAI-compatible `/chat/completions` and Anthropic
//! `/v1/messages`, on ureq (blocking, run on tokio's blocking threads) with `eventsource-stream`
//! for SSE. The guest pulls chunks from a [`ReplyStream`]; connect and idle timeouts, and a bounded
//! retry before the first byte.

mod anthropic;
mod config;
mod openai;

use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use ureq::http;

pub use config::{Api, VlmConfig, vendor_key_variable};

/// The contract's own types (`mediagate:gate/vlm`), generated from the WIT: the client speaks
/// them directly, so nothing converts between a host copy and the guest's. `VlmErrorKind` is the
/// contract's `vlm-error`, what the guest receives; [`VlmError`] carries it and says it in words.
pub use crate::bindings::mediagate::gate::vlm::{Chunk, ChunkKind, ProviderRefusal, VlmError as VlmErrorKind};

/// Why the vision model gave no reply, or no whole one: the contract's `vlm-error`
/// ([`VlmError::kind`]), and in words by `Display`, for a person or a model. The generated type is
/// wrapped, not shown: its own `Display` is its debug form (`Unreachable("…")`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VlmError(VlmErrorKind);

impl VlmError {
    /// The contract's `vlm-error`.
    pub fn kind(&self) -> &VlmErrorKind {
        &self.0
    }

    /// The contract's `vlm-error`, as the guest receives it.
    pub fn into_kind(self) -> VlmErrorKind {
        self.0
    }
}

impl From<VlmErrorKind> for VlmError {
    fn from(kind: VlmErrorKind) -> Self {
        VlmError(kind)
    }
}

impl std::fmt::Display for VlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            VlmErrorKind::NotConfigured => f.write_str("no vision model is configured"),
            VlmErrorKind::Unreachable(m) => f.write_str(m),
            VlmErrorKind::Refused(p) => {
                write!(f, "the vision model's provider refused the request (HTTP {}): {}", p.status, p.message)
            }
            VlmErrorKind::TimedOut(m) => write!(f, "the vision model timed out: {m}"),
            VlmErrorKind::MalformedStream(m) => write!(f, "the vision model's reply could not be read: {m}"),
            VlmErrorKind::StoppedEarly(m) => write!(f, "the vision model stopped before its reply was complete: {m}"),
        }
    }
}

impl std::error::Error for VlmError {}

/// One dialect's view of the stream: what each SSE event means.
trait Dialect: Send {
    /// Chunks carried by one event, or the end of the reply.
    fn on_event(&mut self, event: &Event) -> Result<Step, VlmErrorKind>;
    /// Whether the stream may end here without an explicit end marker.
    fn may_end_without_marker(&self) -> bool;
    /// Why the model stopped before its reply was complete (its output limit, a filter), once the
    /// stream has said so; `None` for a reply that ended on its own.
    fn stopped_early(&self) -> Option<String>;
}

enum Step {
    Chunks(Vec<Chunk>),
    Done,
}

type EventStream = Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<BodyError>>> + Send>>;

/// Why the reply's bytes stopped before the SSE parser saw them.
#[derive(Debug, thiserror::Error)]
enum BodyError {
    #[error("{}", .0.message)]
    Transport(Transport),
    #[error("one event exceeded the limit of {0} bytes (max_event_bytes) without ending")]
    Oversize(usize),
    #[error("the stream is not valid UTF-8")]
    NotUtf8,
}

/// A reply being streamed. Pull it with [`ReplyStream::next_chunk`].
pub struct ReplyStream {
    events: EventStream,
    dialect: Box<dyn Dialect>,
    pending: std::collections::VecDeque<Chunk>,
    idle_timeout: Duration,
    /// When the whole reply must be complete: a model streaming text forever is cut off.
    reply_deadline: tokio::time::Instant,
    max_reply_time: Duration,
    done: bool,
    /// The dialect's early stop was reported (it is reported once).
    stop_reported: bool,
    /// Redacted from every error (a provider may echo it).
    api_key: Option<String>,
    /// Redacts the key from the text itself, across chunk boundaries.
    redactor: KeyRedactor,
    /// Redacted chunks ready to hand out.
    ready: std::collections::VecDeque<Chunk>,
    /// The error that ended the stream, handed out after the text held back before it.
    failed: Option<VlmErrorKind>,
    finished: bool,
}

impl ReplyStream {
    /// The next piece of the reply, with the API key redacted from its text (a model may echo it,
    /// whole or split across chunks) and from any error.
    pub async fn next_chunk(&mut self) -> Result<Option<Chunk>, VlmError> {
        loop {
            if let Some(chunk) = self.ready.pop_front() {
                return Ok(Some(chunk));
            }
            if let Some(e) = self.failed.take() {
                return Err(VlmError(e));
            }
            if self.finished {
                return Ok(None);
            }
            match self.next_chunk_unredacted().await {
                Ok(Some(chunk)) => self.ready.extend(self.redactor.push(chunk)),
                Ok(None) => {
                    self.ready.extend(self.redactor.finish());
                    self.finished = true;
                }
                Err(e) => {
                    self.ready.extend(self.redactor.finish());
                    self.failed = Some(redact(e, self.api_key.as_deref()));
                    self.finished = true;
                }
            }
        }
    }

    async fn next_chunk_unredacted(&mut self) -> Result<Option<Chunk>, VlmErrorKind> {
        // One deadline for the next chunk with text: events that carry none (empty deltas, pings)
        // do not keep a reply alive forever.
        let idle_deadline = tokio::time::Instant::now() + self.idle_timeout;
        let deadline = idle_deadline.min(self.reply_deadline);
        loop {
            if let Some(chunk) = self.pending.pop_front() {
                return Ok(Some(chunk));
            }
            if self.done {
                // A reply the model stopped short is never handed out as if it were complete.
                if !self.stop_reported
                    && let Some(why) = self.dialect.stopped_early()
                {
                    self.stop_reported = true;
                    return Err(VlmErrorKind::StoppedEarly(why));
                }
                return Ok(None);
            }
            let next = tokio::time::timeout_at(deadline, self.events.next()).await.map_err(|_| {
                self.done = true;
                if deadline == self.reply_deadline {
                    VlmErrorKind::TimedOut(format!("the reply took longer than {:?} in all", self.max_reply_time))
                } else {
                    VlmErrorKind::TimedOut(format!("no text for {:?} while streaming the reply", self.idle_timeout))
                }
            })?;
            match next {
                None => {
                    self.done = true;
                    if !self.dialect.may_end_without_marker() {
                        return Err(VlmErrorKind::MalformedStream(
                            "the stream ended before the reply was complete".into(),
                        ));
                    }
                }
                Some(Err(EventStreamError::Transport(BodyError::Transport(e)))) => {
                    self.done = true;
                    return Err(if e.timed_out {
                        VlmErrorKind::TimedOut(e.message)
                    } else {
                        VlmErrorKind::Unreachable(format!("the connection broke while streaming: {}", e.message))
                    });
                }
                Some(Err(EventStreamError::Transport(e))) => {
                    self.done = true;
                    return Err(VlmErrorKind::MalformedStream(e.to_string()));
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Err(VlmErrorKind::MalformedStream(e.to_string()));
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
    /// The endpoint, built once from the base URL (see [`endpoint_url`]).
    endpoint: url::Url,
    /// The endpoint as requests name it: without the base URL's user and password, which travel
    /// in [`Self::basic_auth`] instead.
    target: String,
    /// `Authorization: Basic` from the base URL's user and password (see [`split_credentials`]).
    basic_auth: Option<String>,
    http: ureq::Agent,
}

impl VlmClient {
    /// Refuses, before anything connects, a configuration that would send its API key in clear
    /// text: `http://` to a host that is not loopback (see [`check_key_transport`]), and a base URL
    /// that is not a URL.
    ///
    /// The client connects to the configured URL and nowhere else: no proxy from the environment
    /// (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` are not used, as the Python host does not use
    /// them), so the key goes to the host the URL names, never to whoever the environment says.
    pub fn new(config: VlmConfig) -> Result<Self, VlmError> {
        check_key_transport(&config)?;
        let endpoint = endpoint_url(config.api, &config.base_url)?;
        let (target, basic_auth) = split_credentials(&endpoint);
        // OpenAI's key is itself an `Authorization` header: with the URL's credentials too, the
        // request would carry two, which a server reads as it likes (one, the other, or a 400).
        if basic_auth.is_some() && config.api_key.is_some() && config.api == Api::OpenAi {
            return Err(VlmError(VlmErrorKind::Unreachable(format!(
                "the VLM URL {} carries a user name and password and an API key is set too: both go in the \
                 `Authorization` header of the OpenAI dialect; give one of them; nothing was sent",
                shown_url(&config.base_url)
            ))));
        }
        // The async side (`ask`, `ReplyStream`) times the exchange; these bounds sit a little
        // beyond its own so that its messages are the ones seen, and they end a blocking thread the
        // async side has stopped waiting for (a peer that went silent) instead of leaving it
        // blocked for good.
        let idle = config.idle_timeout.saturating_add(BACKSTOP_GRACE);
        let http = ureq::Agent::config_builder()
            // ureq's default config takes a proxy from the environment: none replaces it.
            .proxy(None)
            // A redirect would carry the body and `x-api-key` (a custom header a client does not
            // strip) to another host; an API endpoint has no reason to redirect a POST. The 3xx
            // comes back as a response and is reported with its Location.
            .max_redirects(0)
            .max_redirects_will_error(false)
            // A 4xx or 5xx is a response whose body holds the provider's words: not an error that
            // drops them.
            .http_status_as_error(false)
            // No `user-agent` header: the providers need none.
            .user_agent(ureq::config::AutoHeaderValue::None)
            // The connect timeout covers the name lookup too: a resolver that hangs is a connect
            // that hangs.
            .timeout_resolve(Some(config.connect_timeout))
            .timeout_connect(Some(config.connect_timeout))
            .timeout_per_write(Some(idle))
            .timeout_recv_response(Some(idle))
            .timeout_per_read(Some(idle))
            .timeout_global(Some(idle.saturating_add(config.max_reply_time)))
            .build()
            .new_agent();
        Ok(VlmClient { config, endpoint, target, basic_auth, http })
    }

    pub fn config(&self) -> &VlmConfig {
        &self.config
    }

    /// Sends the request and returns the reply stream once the response has started. Connect
    /// errors, 429 and 5xx are retried with backoff (honouring Retry-After) before the first
    /// byte; nothing is retried after the reply began to stream. The API key is redacted from
    /// every error, here and in the stream.
    pub async fn ask(&self, prompt: &str, mime: &str, data_base64: &str) -> Result<ReplyStream, VlmError> {
        let result = self.ask_unredacted(prompt, mime, data_base64).await;
        result.map_err(|e| VlmError(redact(e, self.config.api_key.as_deref())))
    }

    async fn ask_unredacted(&self, prompt: &str, mime: &str, data_base64: &str) -> Result<ReplyStream, VlmErrorKind> {
        let url = self.endpoint.clone();
        let (body, dialect): (serde_json::Value, Box<dyn Dialect>) = match self.config.api {
            Api::OpenAi => (
                openai::request(&self.config.model, prompt, mime, data_base64),
                Box::new(openai::OpenAiDialect::default()),
            ),
            Api::Anthropic => (
                anthropic::request(&self.config.model, prompt, mime, data_base64),
                Box::new(anthropic::AnthropicDialect::default()),
            ),
        };
        // The body is the image's base64 and a little JSON: serialised once, the JSON value dropped
        // at once, and each attempt sends the same shared bytes (a `Bytes` clone is a reference
        // count), so a call holds the image's base64 twice (the guest's string and this), not
        // four times (it set the peak RSS of 16 screenshots in flight, BENCHMARKS.md).
        let body = {
            let json = body;
            bytes::Bytes::from(serde_json::to_vec(&json).expect("a JSON value serialises"))
        };
        // The base URL's credentials go first, as an HTTP client sends them; the key's own header
        // follows.
        let mut headers: Vec<(&'static str, String)> = vec![("content-type", "application/json".into())];
        headers.extend(self.basic_auth.clone().map(|basic| ("authorization", basic)));
        match self.config.api {
            Api::OpenAi => {
                headers.extend(self.config.api_key.as_ref().map(|key| ("authorization", format!("Bearer {key}"))))
            }
            Api::Anthropic => {
                headers.push(("anthropic-version", "2023-06-01".into()));
                headers.extend(self.config.api_key.clone().map(|key| ("x-api-key", key)));
            }
        }
        let mut attempt = 0;
        loop {
            let sent = tokio::time::timeout(self.config.idle_timeout, self.send(&headers, &body)).await;
            let retry_after = match sent {
                Err(_) => Err(VlmErrorKind::TimedOut(format!("no response within {:?}", self.config.idle_timeout))),
                Ok(Err(e)) if is_connect_timeout(&e) => Ok((
                    VlmErrorKind::TimedOut(format!(
                        "connecting to {} took longer than {:?}: {}",
                        shown_url(&self.config.base_url),
                        self.config.connect_timeout,
                        transport_message(&e, &self.target)
                    )),
                    None,
                )),
                Ok(Err(e)) if is_connect_error(&e) => Ok((
                    VlmErrorKind::Unreachable(format!(
                        "cannot connect to {}: {}",
                        shown_url(&self.config.base_url),
                        transport_message(&e, &self.target)
                    )),
                    None,
                )),
                Ok(Err(e @ ureq::Error::Timeout(_))) => {
                    Err(VlmErrorKind::TimedOut(transport_message(&e, &self.target)))
                }
                Ok(Err(e)) => Err(VlmErrorKind::Unreachable(transport_message(&e, &self.target))),
                Ok(Ok(response)) => {
                    let (head, body) = response.into_parts();
                    let status = head.status;
                    if status.is_success() {
                        return self.stream(&head.headers, body, dialect);
                    }
                    let retry_after = parse_retry_after(&head.headers, std::time::SystemTime::now());
                    let location = status
                        .is_redirection()
                        .then(|| head.headers.get(http::header::LOCATION)?.to_str().ok().map(str::to_string))
                        .flatten();
                    let mut message = provider_message(
                        status,
                        body_chunks(body, Some(MAX_ERROR_BODY as u64), self.target.clone()),
                        self.config.idle_timeout.min(ERROR_BODY_WAIT),
                        self.config.api_key.as_deref(),
                    )
                    .await;
                    if let Some(location) = location {
                        let location: String = location.chars().take(300).collect();
                        message =
                            format!("{message}; redirects are not followed: configure the final URL ({location})");
                    }
                    if matches!(status.as_u16(), 404 | 405) {
                        message = format!(
                            "{message} ({})",
                            endpoint_hint(self.config.api, &self.config.base_url, url.as_str())
                        );
                    }
                    if let (401 | 403, Some(variable)) = (status.as_u16(), self.config.withheld_key) {
                        message = format!(
                            "{message} (no key was sent: {variable} goes only to its vendor's own API over https; \
                             for {} set {})",
                            shown_url(&self.config.base_url),
                            crate::facts::env::VLM_API_KEY
                        );
                    }
                    let refused = VlmErrorKind::Refused(ProviderRefusal { status: status.as_u16(), message });
                    if status.as_u16() == 429 || status.is_server_error() {
                        Ok((refused, retry_after))
                    } else {
                        Err(refused)
                    }
                }
            };
            let (error, retry_after) = match retry_after {
                Err(final_error) => return Err(final_error),
                Ok(retryable) => retryable,
            };
            if attempt >= self.config.max_retries {
                return Err(error);
            }
            let backoff = 2u32
                .checked_pow(attempt)
                .and_then(|m| self.config.retry_backoff.checked_mul(m))
                .unwrap_or(self.config.max_retry_wait);
            let wait = retry_after.unwrap_or(backoff).min(self.config.max_retry_wait);
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// One attempt on a blocking thread: connecting, sending the request and reading the
    /// response's head. The caller's timeout may give up on it first; the agent's own timeouts
    /// then end the thread.
    async fn send(
        &self,
        headers: &[(&'static str, String)],
        body: &bytes::Bytes,
    ) -> Result<http::Response<ureq::Body>, ureq::Error> {
        let (agent, target, headers, body) = (self.http.clone(), self.target.clone(), headers.to_vec(), body.clone());
        tokio::task::spawn_blocking(move || {
            let mut request = agent.post(target.as_str());
            for (name, value) in headers {
                request = request.header(name, value);
            }
            request.send(&body[..])
        })
        .await
        .unwrap_or_else(|e| Err(ureq::Error::Other(Box::new(e))))
    }

    fn stream(
        &self,
        headers: &http::HeaderMap,
        body: ureq::Body,
        dialect: Box<dyn Dialect>,
    ) -> Result<ReplyStream, VlmErrorKind> {
        let content_type =
            headers.get(http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
        if !content_type.starts_with("text/event-stream") {
            return Err(VlmErrorKind::MalformedStream(format!(
                "expected an event stream (text/event-stream), got {}",
                if content_type.is_empty() { "no content type" } else { &content_type }
            )));
        }
        let limit = self.config.max_event_bytes;
        let chunks = body_chunks(body, None, self.target.clone());
        let chunks = futures_util::stream::unfold(chunks, |mut rx| async move {
            let chunk = rx.recv().await?;
            // A peer flooding bytes that make no event (blank lines) keeps the channel full and
            // the SSE parser reading: yielding after each chunk lets the deadline around
            // `events.next()` fire between two chunks.
            tokio::task::yield_now().await;
            Some((chunk, rx))
        });
        let events = guarded(chunks, limit).eventsource();
        Ok(ReplyStream {
            events: Box::pin(events),
            dialect,
            pending: Default::default(),
            idle_timeout: self.config.idle_timeout,
            reply_deadline: tokio::time::Instant::now() + self.config.max_reply_time,
            max_reply_time: self.config.max_reply_time,
            done: false,
            stop_reported: false,
            api_key: self.config.api_key.clone(),
            redactor: KeyRedactor::new(self.config.api_key.as_deref()),
            ready: Default::default(),
            failed: None,
            finished: false,
        })
    }
}

/// What the SSE parser (`eventsource-stream`) must never see, checked on the raw bytes:
/// - one event longer than `limit` bytes (it would buffer it all): the stream ends with
///   [`BodyError::Oversize`], so host memory stays bounded;
/// - bytes that are not UTF-8 (the parser would hold every later byte back, silently, until the
///   stream ends): [`BodyError::NotUtf8`] at once;
/// - a byte-order mark at the start (the parser slices it at a byte that is not a character
///   boundary, and panics): leading marks are dropped here.
fn guarded(
    bytes: impl Stream<Item = Result<bytes::Bytes, Transport>> + Send + 'static,
    limit: usize,
) -> impl Stream<Item = Result<bytes::Bytes, BodyError>> + Send + 'static {
    let mut guard = ByteGuard { limit, ..ByteGuard::default() };
    bytes.map(move |item| guard.check(item.map_err(BodyError::Transport)?))
}

const BOM: &[u8] = "\u{feff}".as_bytes();

#[derive(Default)]
struct ByteGuard {
    limit: usize,
    /// The stream's first bytes, held while they may still be (part of) a byte-order mark.
    head: Option<Vec<u8>>,
    started: bool,
    /// An incomplete UTF-8 sequence at the end of the previous chunk.
    utf8_tail: Vec<u8>,
    /// Bytes since the last blank line (an event boundary).
    since_boundary: usize,
    at_line_start: bool,
    after_cr: bool,
    /// The fault that ended the stream (oversize or not UTF-8); later chunks get it again.
    failed: Option<BodyError>,
}

impl ByteGuard {
    fn check(&mut self, chunk: bytes::Bytes) -> Result<bytes::Bytes, BodyError> {
        match self.failed {
            Some(BodyError::Oversize(limit)) => return Err(BodyError::Oversize(limit)),
            Some(_) => return Err(BodyError::NotUtf8),
            None => {}
        }
        let chunk = if self.started {
            chunk
        } else {
            let mut head = self.head.take().unwrap_or_default();
            head.extend_from_slice(&chunk);
            while head.starts_with(BOM) {
                head.drain(..BOM.len());
            }
            if head.is_empty() || BOM.starts_with(&head) {
                self.head = Some(head);
                return Ok(bytes::Bytes::new());
            }
            self.started = true;
            self.at_line_start = true;
            bytes::Bytes::from(head)
        };
        if self.check_utf8(&chunk).is_err() {
            self.failed = Some(BodyError::NotUtf8);
            return Err(BodyError::NotUtf8);
        }
        for &b in chunk.iter() {
            self.since_boundary += 1;
            // Line ends are CRLF, CR or LF; two in a row make a blank line.
            if b == b'\n' && self.after_cr {
                self.after_cr = false;
                continue;
            }
            self.after_cr = b == b'\r';
            if b == b'\r' || b == b'\n' {
                if self.at_line_start {
                    self.since_boundary = 0;
                }
                self.at_line_start = true;
            } else {
                self.at_line_start = false;
            }
        }
        if self.since_boundary > self.limit {
            self.failed = Some(BodyError::Oversize(self.limit));
            return Err(BodyError::Oversize(self.limit));
        }
        Ok(chunk)
    }

    fn check_utf8(&mut self, chunk: &[u8]) -> Result<(), ()> {
        let joined;
        let bytes = if self.utf8_tail.is_empty() {
            chunk
        } else {
            joined = [std::mem::take(&mut self.utf8_tail).as_slice(), chunk].concat();
            &joined[..]
        };
        match std::str::from_utf8(bytes) {
            Ok(_) => Ok(()),
            // A character split between two chunks: its start waits for the rest.
            Err(e) if e.error_len().is_none() => {
                self.utf8_tail = bytes[e.valid_up_to()..].to_vec();
                Ok(())
            }
            Err(_) => Err(()),
        }
    }
}

/// Chunks read from the body on a thread of its own, at most `limit` bytes, through a bounded
/// channel: the reader stays a few chunks ahead of the consumer. Dropping the receiver stops the
/// reader at its next chunk (and drops the connection); a peer that sends nothing more is ended by
/// the agent's read timeouts (see [`VlmClient::new`]). Not one of tokio's blocking threads: the
/// runtime waits for those when it shuts down, and a peer that keeps the connection open after the
/// reply's last event would hold the process's exit for a whole read timeout.
fn body_chunks(
    body: ureq::Body,
    limit: Option<u64>,
    target: String,
) -> tokio::sync::mpsc::Receiver<Result<bytes::Bytes, Transport>> {
    let (tx, rx) = tokio::sync::mpsc::channel(BODY_CHANNEL_CHUNKS);
    let failed_tx = tx.clone();
    let reader = std::thread::Builder::new().name("mediagate-vlm-body".into()).spawn(move || {
        use std::io::Read;
        let mut reader = body.into_reader().take(limit.unwrap_or(u64::MAX));
        let mut buf = vec![0; BODY_READ_BYTES];
        loop {
            let item = match reader.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => Ok(bytes::Bytes::copy_from_slice(&buf[..n])),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // ureq's reader carries its own error inside the `io::Error`: taken back out, so
                // a timeout is still told apart.
                Err(e) => Err(Transport::of(&ureq::Error::from(e), &target)),
            };
            let failed = item.is_err();
            if tx.blocking_send(item).is_err() || failed {
                return;
            }
        }
    });
    if let Err(e) = reader {
        let message = format!("cannot start a thread to read the reply: {e}");
        let _ = failed_tx.try_send(Err(Transport { timed_out: false, message }));
    }
    rx
}

/// Chunks a body reader keeps ready ahead of the SSE parser.
const BODY_CHANNEL_CHUNKS: usize = 4;
/// Most bytes one read of the body takes.
const BODY_READ_BYTES: usize = 8 << 10;
/// How far the agent's own timeouts lie beyond the async side's (see [`VlmClient::new`]).
const BACKSTOP_GRACE: Duration = Duration::from_secs(1);

/// A transport failure while the body streamed, in words without the URL's credentials.
#[derive(Debug)]
struct Transport {
    timed_out: bool,
    message: String,
}

impl Transport {
    fn of(e: &ureq::Error, target: &str) -> Self {
        Transport { timed_out: matches!(e, ureq::Error::Timeout(_)), message: transport_message(e, target) }
    }
}

/// A connect that took longer than the connect timeout (the name lookup included).
fn is_connect_timeout(e: &ureq::Error) -> bool {
    matches!(e, ureq::Error::Timeout(ureq::Timeout::Connect | ureq::Timeout::Resolve))
}

/// A failure to connect: no request went out, so it may be retried. A peer that hangs up after the
/// request was sent is not one (the request may have been taken).
fn is_connect_error(e: &ureq::Error) -> bool {
    use std::io::ErrorKind::*;
    match e {
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed | ureq::Error::Tls(_) => true,
        ureq::Error::Rustls(_) => true,
        ureq::Error::Io(io) => {
            matches!(
                io.kind(),
                ConnectionRefused | HostUnreachable | NetworkUnreachable | NetworkDown | AddrNotAvailable
            ) || is_lookup_failure(io)
                || is_tls_failure(io)
        }
        _ => false,
    }
}

/// The name lookup failed. The standard library says so only in its message (Unix) or in the
/// Windows Sockets error code; ureq passes its error on as it is.
fn is_lookup_failure(e: &std::io::Error) -> bool {
    #[cfg(windows)]
    if matches!(e.raw_os_error(), Some(11001..=11004)) {
        return true;
    }
    e.raw_os_error().is_none() && e.to_string().starts_with("failed to lookup address information")
}

/// The TLS handshake failed (a certificate, a peer that does not speak TLS): rustls's error inside
/// the `io::Error` ureq's handshake returns.
fn is_tls_failure(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>())
}

fn transport_message(e: &ureq::Error, target: &str) -> String {
    let mut msg = match e {
        ureq::Error::Io(io) if is_lookup_failure(io) => format!("DNS lookup failed: {io}"),
        ureq::Error::Io(io) => io.to_string(),
        ureq::Error::HostNotFound => "DNS lookup failed: the name has no address".into(),
        ureq::Error::Timeout(which) => format!("the {which} timeout expired"),
        e => e.to_string(),
    };
    // The messages seldom name the URL, but one that does (a bad URI) shows it without its query,
    // where a key may hide. The sources give the cause (never headers or keys).
    msg = msg.replace(target, &shown_url(target));
    if let ureq::Error::Io(io) = e {
        let mut source = std::error::Error::source(io);
        while let Some(s) = source {
            msg = format!("{msg}: {s}");
            source = s.source();
        }
    }
    msg
}

/// The URL without its user and password, and the `Authorization: Basic` header they make
/// (percent-decoded), as HTTP clients send a URL's credentials: the URL then never carries them
/// into a request line or an error message.
fn split_credentials(url: &url::Url) -> (String, Option<String>) {
    if url.username().is_empty() && url.password().is_none() {
        return (url.to_string(), None);
    }
    let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
    let credentials = format!("{}:{}", decode(url.username()), url.password().map(decode).unwrap_or_default());
    let mut bare = url.clone();
    let _ = bare.set_username("");
    let _ = bare.set_password(None);
    let basic = base64_simd::STANDARD.encode_to_string(credentials);
    (bare.to_string(), Some(format!("Basic {basic}")))
}

/// The wait a `Retry-After` header asks for: delay-seconds (fractions tolerated) or an HTTP date.
/// Never panics: a value too large for a `Duration` (`1e20`, `inf`) is the longest wait there is,
/// and the caller clamps every wait to `max_retry_wait`; a negative, `NaN` or unreadable value is
/// ignored (the backoff applies); a date in the past is no wait.
fn parse_retry_after(headers: &http::HeaderMap, now: std::time::SystemTime) -> Option<Duration> {
    let value = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        if seconds.is_nan() || seconds < 0.0 {
            return None;
        }
        return Some(Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// An API key travels only over TLS, or to this machine: a configuration with a key and an
/// `http://` URL whose host is not loopback (127.0.0.0/8, ::1, `localhost`) is refused before
/// any connection is made. Without a key, plain http goes anywhere (a local Ollama on the LAN).
pub fn check_key_transport(config: &VlmConfig) -> Result<(), VlmError> {
    if config.api_key.is_none() {
        return Ok(());
    }
    let url = url::Url::parse(&config.base_url).map_err(|e| {
        VlmError(VlmErrorKind::Unreachable(format!("the VLM URL {} is not a URL ({e})", shown_url(&config.base_url))))
    })?;
    if url.scheme() != "http" || is_loopback(&url) {
        return Ok(());
    }
    let mut https = url.clone();
    let _ = https.set_scheme("https");
    Err(VlmError(VlmErrorKind::Unreachable(format!(
        "refusing to send the API key in clear text to {}: plain http is allowed only to this machine \
         (127.0.0.1, ::1, localhost); use https (--vlm-url {}) or a loopback address; nothing was sent",
        shown_url(&config.base_url),
        shown_url(https.as_str())
    ))))
}

fn is_loopback(url: &url::Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// Most of an error body read for its message; the rest is never read.
const MAX_ERROR_BODY: usize = crate::facts::vlm::MAX_ERROR_BODY_BYTES;
/// Longest wait for an error body.
const ERROR_BODY_WAIT: Duration = Duration::from_secs(crate::facts::vlm::ERROR_BODY_WAIT_SECS);

/// Characters of the provider's message kept.
const MAX_PROVIDER_MESSAGE: usize = 500;

/// The provider's own words: `error.message` of a JSON body, else the body's start. At most
/// [`MAX_ERROR_BODY`] bytes are read, for at most `wait`: an endless body costs nothing. The key is
/// redacted before anything is cut, and a body cut off is cut again before any start of the key at
/// its end, so no part of a key survives a cut.
async fn provider_message(
    status: http::StatusCode,
    mut chunks: tokio::sync::mpsc::Receiver<Result<bytes::Bytes, Transport>>,
    wait: Duration,
    key: Option<&str>,
) -> String {
    let mut body = Vec::new();
    let deadline = tokio::time::Instant::now() + wait;
    let mut whole = false;
    while body.len() < MAX_ERROR_BODY {
        match tokio::time::timeout_at(deadline, chunks.recv()).await {
            Ok(Some(Ok(chunk))) => body.extend_from_slice(&chunk[..chunk.len().min(MAX_ERROR_BODY - body.len())]),
            Ok(None) => {
                whole = true;
                break;
            }
            _ => break,
        }
    }
    message_of(status, &body, whole, key)
}

/// [`provider_message`] on the bytes read; `whole` says whether they are the whole body.
fn message_of(status: http::StatusCode, body: &[u8], whole: bool, key: Option<&str>) -> String {
    let mut redactor = KeyRedactor::new(key);
    let mut text: String = redactor
        .push(Chunk { kind: ChunkKind::Content, text: String::from_utf8_lossy(body).into_owned() })
        .map(|c| c.text)
        .unwrap_or_default();
    if whole {
        text.extend(redactor.finish().into_iter().map(|c| c.text));
    }
    let cut = |m: &str| m.chars().take(MAX_PROVIDER_MESSAGE).collect::<String>();
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) {
        let message = json
            .pointer("/error/message")
            .or_else(|| json.get("message"))
            .or_else(|| json.get("error"))
            .and_then(|m| m.as_str());
        if let Some(m) = message {
            // The JSON string unescaped can spell the key again (`\u0073k-…`).
            return cut(&replace_key(m, key));
        }
    }
    let text = text.trim();
    if text.is_empty() { status.canonical_reason().unwrap_or("no message").to_string() } else { cut(text) }
}

fn replace_key(text: &str, key: Option<&str>) -> String {
    match key.filter(|k| k.len() >= MIN_KEY_LEN) {
        Some(key) => text.replace(key, REDACTED),
        None => text.to_string(),
    }
}

/// The URL requests go to: the dialect's path (`/chat/completions`, `/v1/messages`) appended to
/// the base URL's path, before its query, which is kept (`https://h/v1?api-version=1` →
/// `https://h/v1/chat/completions?api-version=1`); a fragment is dropped.
pub fn endpoint_url(api: Api, base_url: &str) -> Result<url::Url, VlmError> {
    let not_a_url =
        |why: String| VlmError(VlmErrorKind::Unreachable(format!("the VLM URL {} {why}", shown_url(base_url))));
    let mut url = url::Url::parse(base_url.trim()).map_err(|e| not_a_url(format!("is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(not_a_url("is not an http or https URL".into()));
    }
    url.set_fragment(None);
    let path: &[&str] = match api {
        Api::OpenAi => &["chat", "completions"],
        Api::Anthropic => &["v1", "messages"],
    };
    url.path_segments_mut().map_err(|()| not_a_url("has no path to append to".into()))?.pop_if_empty().extend(path);
    Ok(url)
}

/// For a 404 or 405: the URL requested and, when the base URL looks like it lacks a path segment (an
/// OpenAI-compatible base without its `/v1`) or carries one too many (the endpoint itself, or `/v1`
/// for the Anthropic dialect, which appends `/v1/messages`), the base URL to configure instead.
fn endpoint_hint(api: Api, base_url: &str, url: &str) -> String {
    let base = shown_url(base_url);
    let path = url::Url::parse(base_url).map(|u| u.path().trim_end_matches('/').to_string()).unwrap_or_default();
    let strip = |suffix: &str| base.strip_suffix(suffix).unwrap_or(&base).to_string();
    let advice = match api {
        Api::OpenAi if path.ends_with("/chat/completions") => Some(format!(
            "the base URL must stop before /chat/completions, which mediagate appends: try --vlm-url {}",
            strip("/chat/completions")
        )),
        Api::OpenAi if !has_version_segment(&path) => Some(format!(
            "the base URL {base} may be missing its /v1: OpenAI-compatible servers (OpenAI, Ollama, vLLM, llama.cpp, \
             LiteLLM) answer at {base}/v1/chat/completions, so try --vlm-url {base}/v1"
        )),
        Api::OpenAi => None,
        Api::Anthropic if path.ends_with("/v1/messages") => Some(format!(
            "the base URL must stop before /v1/messages, which mediagate appends: try --vlm-url {}",
            strip("/v1/messages")
        )),
        Api::Anthropic if path.ends_with("/v1") => Some(format!(
            "with --vlm-api anthropic mediagate appends /v1/messages itself, so the base URL has no /v1: try --vlm-url {}",
            strip("/v1")
        )),
        Api::Anthropic => None,
    };
    let endpoint = match api {
        Api::OpenAi => "/chat/completions",
        Api::Anthropic => "/v1/messages",
    };
    let advice = advice.unwrap_or_else(|| {
        format!(
            "check that {base} is the API's base URL (mediagate appends {endpoint}) and that the server speaks that API"
        )
    });
    format!("POST {}; {advice} (or {})", shown_url(url), crate::facts::env::VLM_URL)
}

/// `/v1`, `/v1beta/openai`, `/openai/v1`: some segment names an API version.
fn has_version_segment(path: &str) -> bool {
    path.split('/').any(|s| s.strip_prefix('v').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit())))
}

/// A URL as it may be shown: no user, password, query or fragment (where credentials hide).
pub fn shown_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string().trim_end_matches('/').to_string()
        }
        // Not a URL a parser reads: cut what could be credentials by hand.
        Err(_) => {
            let url = url.split(['?', '#']).next().unwrap_or_default();
            let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
            let sep = if scheme.is_empty() { "" } else { "://" };
            format!("{scheme}{sep}{host}{path}").trim_end_matches('/').to_string()
        }
    }
}

/// What replaces the API key wherever it appears.
const REDACTED: &str = "<redacted>";

/// Keys shorter than this are not redacted: they would garble every message (real keys are far
/// longer).
const MIN_KEY_LEN: usize = 4;

/// Replaces the API key in streamed text. A key split across chunks is caught: the end of each
/// chunk that could be the start of the key is held back until the next chunk of the same kind
/// (or the end of the stream) shows whether it is. Content and reasoning are joined separately,
/// as the guest joins them, so reasoning in between does not hide a key split around it.
struct KeyRedactor {
    key: Option<String>,
    /// Held-back text: content, reasoning.
    held: [String; 2],
}

fn kind_index(kind: ChunkKind) -> usize {
    match kind {
        ChunkKind::Content => 0,
        ChunkKind::Reasoning => 1,
    }
}

impl KeyRedactor {
    fn new(key: Option<&str>) -> Self {
        let key = key.filter(|k| k.len() >= MIN_KEY_LEN).map(str::to_string);
        KeyRedactor { key, held: Default::default() }
    }

    fn push(&mut self, chunk: Chunk) -> Option<Chunk> {
        let Some(key) = &self.key else { return Some(chunk) };
        let held = &mut self.held[kind_index(chunk.kind)];
        let mut text = std::mem::take(held);
        text.push_str(&chunk.text);
        let mut text = text.replace(key.as_str(), REDACTED);
        // The longest end of the text that is a proper start of the key waits for what follows.
        let hold = (1..key.len())
            .rev()
            .find(|&n| {
                key.is_char_boundary(n)
                    && n <= text.len()
                    && text.is_char_boundary(text.len() - n)
                    && text.ends_with(&key[..n])
            })
            .unwrap_or(0);
        *held = text.split_off(text.len() - hold);
        (!text.is_empty()).then_some(Chunk { kind: chunk.kind, text })
    }

    /// The text held back at the end of the stream (it was not the key).
    fn finish(&mut self) -> Vec<Chunk> {
        [ChunkKind::Reasoning, ChunkKind::Content]
            .into_iter()
            .filter_map(|kind| {
                let text = std::mem::take(&mut self.held[kind_index(kind)]);
                (!text.is_empty()).then_some(Chunk { kind, text })
            })
            .collect()
    }
}

/// The error with every occurrence of the API key replaced.
fn redact(e: VlmErrorKind, key: Option<&str>) -> VlmErrorKind {
    // A key this short would garble every message; real keys are far longer.
    let Some(key) = key.filter(|k| k.len() >= MIN_KEY_LEN) else { return e };
    let r = |m: String| m.replace(key, REDACTED);
    match e {
        VlmErrorKind::NotConfigured => VlmErrorKind::NotConfigured,
        VlmErrorKind::Unreachable(m) => VlmErrorKind::Unreachable(r(m)),
        VlmErrorKind::Refused(p) => VlmErrorKind::Refused(ProviderRefusal { status: p.status, message: r(p.message) }),
        VlmErrorKind::TimedOut(m) => VlmErrorKind::TimedOut(r(m)),
        VlmErrorKind::MalformedStream(m) => VlmErrorKind::MalformedStream(r(m)),
        VlmErrorKind::StoppedEarly(m) => VlmErrorKind::StoppedEarly(r(m)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(limit: usize, chunks: &[&[u8]]) -> Vec<Result<Vec<u8>, String>> {
        let mut guard = ByteGuard { limit, ..ByteGuard::default() };
        chunks
            .iter()
            .map(|c| guard.check(bytes::Bytes::copy_from_slice(c)).map(|b| b.to_vec()).map_err(|e| e.to_string()))
            .collect()
    }

    #[test]
    fn leading_byte_order_marks_are_dropped_whole_or_split() {
        let bom = "\u{feff}".as_bytes();
        assert_eq!(feed(100, &[&[bom, b"data: x\n\n"].concat()]), [Ok(b"data: x\n\n".to_vec())]);
        assert_eq!(feed(100, &[&bom[..1], &bom[1..], b": c\n\n"]), [Ok(vec![]), Ok(vec![]), Ok(b": c\n\n".to_vec())]);
        assert_eq!(feed(100, &[&[bom, bom, b"a"].concat()]), [Ok(b"a".to_vec())]);
        // Only at the start: later marks are text.
        assert_eq!(feed(100, &[b"a", bom]), [Ok(b"a".to_vec()), Ok(bom.to_vec())]);
    }

    #[test]
    fn utf8_is_checked_across_chunks() {
        let snow = "☃".as_bytes();
        assert!(feed(100, &[&snow[..1], &snow[1..]]).iter().all(Result::is_ok));
        let bad = feed(100, &[b"data: \xff\n\n", b"data: fine\n\n"]);
        assert!(bad.iter().all(|r| r.as_ref().is_err_and(|e| e.contains("UTF-8"))), "{bad:?}");
        assert!(feed(100, &[&snow[..2], b"x"])[1].is_err());
    }

    #[test]
    fn the_event_size_counts_from_the_last_blank_line_whatever_the_line_ends() {
        for sep in ["\n\n", "\r\n\r\n", "\r\r", "\n\r\n"] {
            let event = format!("data: {}{sep}", "x".repeat(50));
            let chunks: Vec<&[u8]> = std::iter::repeat_n(event.as_bytes(), 20).collect();
            assert!(feed(60, &chunks).iter().all(Result::is_ok), "{sep:?}");
        }
        // Many lines but no blank line: one event.
        let line = format!("data: {}\n", "x".repeat(50));
        let chunks: Vec<&[u8]> = std::iter::repeat_n(line.as_bytes(), 3).collect();
        let out = feed(100, &chunks);
        assert!(out[0].is_ok() && out[1].as_ref().is_err_and(|e| e.contains("limit of 100 bytes")), "{out:?}");
        assert!(out[2].is_err(), "once over, always over");
    }

    fn redact_stream(key: &str, pieces: &[(ChunkKind, &str)]) -> Vec<Chunk> {
        let mut r = KeyRedactor::new(Some(key));
        let mut out: Vec<Chunk> = Vec::new();
        for (kind, text) in pieces {
            out.extend(r.push(Chunk { kind: *kind, text: text.to_string() }));
        }
        out.extend(r.finish());
        out
    }

    fn joined(chunks: &[Chunk], kind: ChunkKind) -> String {
        chunks.iter().filter(|c| c.kind == kind).map(|c| c.text.as_str()).collect()
    }

    #[test]
    fn the_key_is_redacted_from_streamed_text_however_it_is_split() {
        use ChunkKind::*;
        let key = "sk-test-secret";
        let text = "my key is sk-test-secret, and again sk-test-secret.";
        // Every way of cutting the text in two and in three pieces.
        for a in 0..=text.len() {
            for b in a..=text.len() {
                let pieces = [(Content, &text[..a]), (Content, &text[a..b]), (Content, &text[b..])];
                let out = redact_stream(key, &pieces);
                assert_eq!(joined(&out, Content), "my key is <redacted>, and again <redacted>.", "{a} {b}");
                assert!(out.iter().all(|c| !c.text.contains(key) && !c.text.is_empty()));
            }
        }
        // A start of the key that is not the key comes out at the end; kinds are joined apart, so
        // reasoning between two halves of the key does not hide it.
        let out = redact_stream(key, &[(Content, "ends with sk-te"), (Reasoning, "sk-test-secret"), (Content, "st")]);
        assert_eq!(joined(&out, Content), "ends with sk-test");
        assert_eq!(joined(&out, Reasoning), "<redacted>");
        let out = redact_stream(key, &[(Content, "a sk-test"), (Reasoning, "sk-"), (Content, "-secret b")]);
        assert_eq!(joined(&out, Content), "a <redacted> b");
        assert_eq!(joined(&out, Reasoning), "sk-");
        // Multi-byte text next to a key start.
        let out = redact_stream("ключ-1234", &[(Content, "a ключ"), (Content, "-12"), (Content, "34 b ключ")]);
        assert_eq!(joined(&out, Content), "a <redacted> b ключ");
        // No key, or one too short: text passes as it is.
        let mut r = KeyRedactor::new(Some("ab"));
        assert_eq!(
            r.push(Chunk { kind: Content, text: "ab".into() }),
            Some(Chunk { kind: Content, text: "ab".into() })
        );
    }

    #[test]
    fn a_404_names_the_url_and_the_segment_that_looks_missing() {
        let hint = endpoint_hint(Api::OpenAi, "http://127.0.0.1:11434", "http://127.0.0.1:11434/chat/completions");
        assert!(hint.starts_with("POST http://127.0.0.1:11434/chat/completions;"), "{hint}");
        assert!(hint.contains("missing its /v1") && hint.contains("try --vlm-url http://127.0.0.1:11434/v1"), "{hint}");
        let hint = endpoint_hint(
            Api::OpenAi,
            "https://x/v1/chat/completions/",
            "https://x/v1/chat/completions/chat/completions",
        );
        assert!(
            hint.contains("stop before /chat/completions") && hint.contains("try --vlm-url https://x/v1 "),
            "{hint}"
        );
        for base in ["https://api.openai.com/v1", "https://g.example/v1beta/openai", "https://groq.example/openai/v1"] {
            let hint = endpoint_hint(Api::OpenAi, base, &format!("{base}/chat/completions"));
            assert!(hint.contains("check that") && !hint.contains("missing"), "{hint}");
        }
        let hint =
            endpoint_hint(Api::Anthropic, "https://api.anthropic.com/v1", "https://api.anthropic.com/v1/v1/messages");
        assert!(hint.contains("has no /v1: try --vlm-url https://api.anthropic.com "), "{hint}");
        let hint =
            endpoint_hint(Api::OpenAi, "http://me:secret@h/api?key=k", "http://me:secret@h/api/chat/completions?key=k");
        assert!(!hint.contains("secret") && !hint.contains("key=k") && !hint.contains("me@"), "{hint}");
    }

    #[test]
    fn retry_after_never_panics_and_reads_seconds_and_dates() {
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let wait = |v: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(http::header::RETRY_AFTER, v.parse().unwrap());
            parse_retry_after(&h, now)
        };
        assert_eq!(wait("2"), Some(Duration::from_secs(2)));
        assert_eq!(wait(" 0.5 "), Some(Duration::from_millis(500)));
        for huge in ["1e20", "inf", "+inf", "1e308", "18446744073709551616"] {
            assert_eq!(wait(huge), Some(Duration::MAX), "{huge}");
        }
        for ignored in ["-1", "NaN", "-inf", "soon", ""] {
            assert_eq!(wait(ignored), None, "{ignored}");
        }
        // 2023-11-14T22:13:20Z is 1_700_000_000; ten seconds later, and a date long past.
        assert_eq!(wait("Tue, 14 Nov 2023 22:13:30 GMT"), Some(Duration::from_secs(10)));
        assert_eq!(wait("Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
    }

    #[test]
    fn a_key_travels_only_over_tls_or_to_loopback() {
        let check = |url: &str, key: Option<&str>| {
            let mut c = VlmConfig::new(Api::OpenAi, url, "m");
            c.api_key = key.map(str::to_string);
            check_key_transport(&c)
        };
        for ok in [
            "https://api.openai.com/v1",
            "http://127.0.0.1:11434/v1",
            "http://127.1.2.3/v1",
            "http://localhost:8080",
            "http://LOCALHOST/v1",
            "http://[::1]:8000/v1",
            "http://[::ffff:127.0.0.1]/v1",
        ] {
            assert!(check(ok, Some("sk-key")).is_ok(), "{ok}");
        }
        for refused in [
            "http://192.0.2.1/v1",
            "http://10.0.0.5:11434/v1",
            "http://api.example.com/v1",
            "http://localhost.example.com/v1",
            "http://127.0.0.1.nip.io/v1",
            "http://[2001:db8::1]/v1",
            "not a url",
        ] {
            let e = check(refused, Some("sk-key")).unwrap_err().to_string();
            assert!(!e.contains("sk-key"), "{e}");
            if refused != "not a url" {
                assert!(e.contains("clear text") && e.contains("use https"), "{refused}: {e}");
            }
        }
        // No key, nothing secret: any URL.
        assert!(check("http://192.0.2.1/v1", None).is_ok());
    }

    #[test]
    fn the_endpoint_path_goes_before_the_query() {
        let url = |api, base: &str| endpoint_url(api, base).map(|u| u.to_string());
        assert_eq!(url(Api::OpenAi, "http://127.0.0.1:8080/v1").unwrap(), "http://127.0.0.1:8080/v1/chat/completions");
        assert_eq!(url(Api::OpenAi, "http://h/v1/").unwrap(), "http://h/v1/chat/completions");
        assert_eq!(url(Api::Anthropic, "https://api.anthropic.com").unwrap(), "https://api.anthropic.com/v1/messages");
        assert_eq!(
            url(Api::OpenAi, "https://h/openai/v1?api-version=2024&key=k#frag").unwrap(),
            "https://h/openai/v1/chat/completions?api-version=2024&key=k"
        );
        for bad in ["not a url", "ftp://h/v1", "mailto:me@h", "http://user:pw@/x"] {
            let e = endpoint_url(Api::OpenAi, bad).unwrap_err().to_string();
            assert!(e.starts_with("the VLM URL") && !e.contains("pw"), "{bad}: {e}");
        }
    }

    #[test]
    fn an_error_body_is_redacted_before_it_is_cut() {
        let key = "sk-0123456789abcdef";
        let status = http::StatusCode::UNAUTHORIZED;
        // The key straddles the 500-character cut of a body that is not JSON.
        for at in 480..500 {
            let body = format!("{}{key} and more", "x".repeat(at));
            let m = message_of(status, body.as_bytes(), true, Some(key));
            assert!(!m.contains("sk-0") && m.chars().count() <= MAX_PROVIDER_MESSAGE, "{at}: {m}");
        }
        // The same in a JSON message, and written with a JSON escape.
        let body = serde_json::json!({"error": {"message": format!("{}{key}", "y".repeat(495))}}).to_string();
        assert!(!message_of(status, body.as_bytes(), true, Some(key)).contains("sk-"));
        let escaped = r#"{"error":{"message":"bad key \u0073k-0123456789abcdef"}}"#;
        assert_eq!(message_of(status, escaped.as_bytes(), true, Some(key)), "bad key <redacted>");
        // A body cut off by the read bound loses the start of a key at its end.
        let m = message_of(status, b"sk-0123", false, Some(key));
        assert_eq!(m, "Unauthorized");
        assert_eq!(message_of(status, b"sk-0123", true, Some(key)), "sk-0123", "a whole body ending so is text");
    }

    #[test]
    fn a_urls_credentials_leave_it_for_a_basic_header() {
        let url = url::Url::parse("http://me%40x:p%3Ass@h:8/v1/chat/completions?key=k").unwrap();
        let (target, basic) = split_credentials(&url);
        assert_eq!(target, "http://h:8/v1/chat/completions?key=k");
        let decoded = base64_simd::STANDARD.encode_to_string("me@x:p:ss");
        assert_eq!(basic, Some(format!("Basic {decoded}")));
        let (target, basic) = split_credentials(&url::Url::parse("https://h/v1").unwrap());
        assert_eq!((target.as_str(), basic), ("https://h/v1", None));
    }

    #[test]
    fn a_urls_credentials_and_an_openai_key_are_refused_together_not_sent_as_two_authorizations() {
        let mut both = VlmConfig::new(Api::OpenAi, "https://me:pw@gw.example/v1", "m");
        both.api_key = Some("sk-key".into());
        let e = VlmClient::new(both.clone()).err().expect("two Authorization headers are refused");
        assert!(e.to_string().contains("both go in the `Authorization` header"), "{e}");
        assert!(!e.to_string().contains("pw"), "the password is not shown: {e}");
        // Each alone is fine; Anthropic's key has its own header, so both go.
        both.api_key = None;
        assert!(VlmClient::new(both.clone()).is_ok());
        let mut anthropic = VlmConfig::new(Api::Anthropic, "https://me:pw@gw.example", "m");
        anthropic.api_key = Some("sk-key".into());
        assert!(VlmClient::new(anthropic).is_ok());
    }

    #[test]
    fn a_failed_connect_is_told_from_a_connection_that_broke_after_the_request() {
        use std::io::{Error, ErrorKind};
        let io = |kind: ErrorKind| ureq::Error::Io(Error::from(kind));
        for before in [ErrorKind::ConnectionRefused, ErrorKind::NetworkUnreachable, ErrorKind::HostUnreachable] {
            assert!(is_connect_error(&io(before)), "{before:?}");
        }
        for after in [ErrorKind::UnexpectedEof, ErrorKind::ConnectionReset, ErrorKind::BrokenPipe] {
            assert!(!is_connect_error(&io(after)), "{after:?}");
        }
        assert!(is_connect_error(&ureq::Error::HostNotFound));
        let handshake = Error::new(ErrorKind::InvalidData, rustls::Error::General("bad".into()));
        assert!(is_connect_error(&ureq::Error::Io(handshake)));
        assert!(!is_connect_error(&ureq::Error::Io(Error::new(ErrorKind::InvalidData, "bad chunk"))));
        let lookup = std::net::ToSocketAddrs::to_socket_addrs("mediagate-test-vlm.invalid:443").unwrap_err();
        let lookup = ureq::Error::Io(lookup);
        assert!(is_connect_error(&lookup) && transport_message(&lookup, "").starts_with("DNS lookup failed"));
        assert!(is_connect_timeout(&ureq::Error::Timeout(ureq::Timeout::Connect)));
        assert!(!is_connect_timeout(&ureq::Error::Timeout(ureq::Timeout::RecvResponse)));
    }

    #[test]
    fn a_transport_message_never_shows_the_query() {
        let target = "https://h/v1/chat/completions?key=query-secret";
        let m = transport_message(&ureq::Error::BadUri(format!("{target} is odd")), target);
        assert!(!m.contains("query-secret") && m.contains("https://h/v1/chat/completions"), "{m}");
    }

    #[test]
    fn a_refusal_is_described_in_words() {
        let mut c = VlmConfig::new(Api::OpenAi, "http://me:pw@192.0.2.1/v1?key=k", "m");
        c.api_key = Some("sk-key".into());
        let e = VlmClient::new(c).err().unwrap().to_string();
        assert!(e.starts_with("refusing to send the API key in clear text"), "{e}");
        assert!(!e.contains("Unreachable") && !e.contains("pw") && !e.contains("key=k"), "{e}");
    }

    #[test]
    fn every_error_is_said_in_words() {
        let kinds = [
            VlmErrorKind::NotConfigured,
            VlmErrorKind::Unreachable("connecting to http://127.0.0.1:9/v1 failed: connection refused".into()),
            VlmErrorKind::Refused(ProviderRefusal { status: 503, message: "overloaded".into() }),
            VlmErrorKind::TimedOut("no response within 30s".into()),
            VlmErrorKind::MalformedStream("an event is not JSON".into()),
            VlmErrorKind::StoppedEarly("the model reached its output limit".into()),
        ];
        for kind in kinds {
            // The generated type's own `Display` is its debug form: the reason for the wrapper.
            assert!(kind.to_string().starts_with("VlmError::"), "{kind}");
            let words = VlmError::from(kind.clone()).to_string();
            assert!(!words.contains("VlmError") && !words.contains("(\"") && !words.contains('{'), "{words}");
            assert!(words.chars().next().is_some_and(|c| c.is_lowercase()) && words.contains(' '), "{words}");
            assert_eq!(VlmError::from(kind.clone()).into_kind(), kind);
        }
    }

    #[test]
    fn the_key_is_redacted() {
        let e = VlmErrorKind::Refused(ProviderRefusal { status: 401, message: "bad key sk-123456".into() });
        assert_eq!(
            redact(e, Some("sk-123456")),
            VlmErrorKind::Refused(ProviderRefusal { status: 401, message: "bad key <redacted>".into() })
        );
        let e = VlmErrorKind::TimedOut("a".into());
        assert_eq!(redact(e.clone(), Some("a")), e, "too short to redact");
    }
}
