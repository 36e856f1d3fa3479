//! A real HTTP server on 127.0.0.1 that speaks the two VLM dialects for the tests: it records every
//! request and streams a scripted reply, piece by piece, with pauses between network writes.
#![allow(dead_code)]

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use serde_json::{Value, json};

/// One piece of a streamed reply: wait, then write these bytes.
#[derive(Clone)]
pub struct Piece {
    pub pause: Duration,
    pub bytes: Vec<u8>,
}

#[derive(Clone)]
pub struct Script {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub pieces: Vec<Piece>,
}

#[derive(Clone, Debug)]
pub struct Recorded {
    /// When the request arrived.
    pub at: Instant,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Clone)]
struct Shared {
    /// Scripts served in turn; the last one repeats.
    scripts: Arc<Mutex<Vec<Script>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

pub struct VlmServer {
    pub addr: SocketAddr,
    shared: Shared,
}

impl VlmServer {
    pub async fn start(scripts: Vec<Script>) -> VlmServer {
        VlmServer::start_on(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(), scripts)
    }

    /// The same, on a listener the test bound (a port that refused connections before, say).
    pub fn start_on(listener: tokio::net::TcpListener, scripts: Vec<Script>) -> VlmServer {
        let shared = Shared { scripts: Arc::new(Mutex::new(scripts)), requests: Arc::default() };
        let app = Router::new()
            .route("/v1/chat/completions", post(serve))
            .route("/v1/messages", post(serve))
            .layer(axum::extract::DefaultBodyLimit::disable())
            .with_state(shared.clone());
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        VlmServer { addr, shared }
    }

    /// Base URL for the OpenAI dialect (`…/v1`, the client appends `/chat/completions`).
    pub fn openai_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Base URL for the Anthropic dialect (the client appends `/v1/messages`).
    pub fn anthropic_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }
}

async fn serve(State(shared): State<Shared>, uri: axum::http::Uri, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.requests.lock().unwrap().push(Recorded { at: Instant::now(), path: uri.path().to_string(), headers, body });
    let script = {
        let mut scripts = shared.scripts.lock().unwrap();
        if scripts.len() > 1 { scripts.remove(0) } else { scripts[0].clone() }
    };
    let stream = futures_util::stream::unfold(script.pieces.clone().into_iter(), |mut pieces| async move {
        let piece = pieces.next()?;
        tokio::time::sleep(piece.pause).await;
        Some((Ok::<_, std::io::Error>(Bytes::from(piece.bytes)), pieces))
    });
    let mut response = Response::builder().status(StatusCode::from_u16(script.status).unwrap());
    for (k, v) in &script.headers {
        response = response.header(k, v);
    }
    response.body(Body::from_stream(stream)).unwrap()
}

pub fn piece(pause_ms: u64, bytes: impl Into<Vec<u8>>) -> Piece {
    Piece { pause: Duration::from_millis(pause_ms), bytes: bytes.into() }
}

/// The headers of an event stream.
pub fn sse() -> Vec<(String, String)> {
    vec![("content-type".into(), "text/event-stream".into())]
}

pub fn openai_data(delta: Value) -> Vec<u8> {
    format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": delta}]})).into_bytes()
}

/// An OpenAI-dialect reply: each text a content delta, with `pause_ms` before each write.
pub fn openai_reply(texts: &[&str], pause_ms: u64) -> Script {
    let mut pieces = vec![piece(0, ": keep-alive\n\n")];
    for t in texts {
        pieces.push(piece(pause_ms, openai_data(json!({"content": t}))));
    }
    pieces.push(piece(
        0,
        format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})),
    ));
    pieces.push(piece(0, "data: [DONE]\n\n"));
    Script { status: 200, headers: sse(), pieces }
}

pub fn openai_pieces(pieces: Vec<Piece>) -> Script {
    Script { status: 200, headers: sse(), pieces }
}

pub fn anthropic_event(event: &str, data: Value) -> Vec<u8> {
    format!("event: {event}\ndata: {data}\n\n").into_bytes()
}

pub fn anthropic_reply(thinking: &str, texts: &[&str]) -> Script {
    let mut pieces = vec![
        piece(0, anthropic_event("message_start", json!({"type": "message_start", "message": {"id": "msg_1"}}))),
        piece(
            0,
            anthropic_event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            ),
        ),
        piece(
            10,
            anthropic_event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": thinking}}),
            ),
        ),
        piece(0, anthropic_event("content_block_stop", json!({"type": "content_block_stop", "index": 0}))),
        piece(0, anthropic_event("ping", json!({"type": "ping"}))),
    ];
    for t in texts {
        pieces.push(piece(
            10,
            anthropic_event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": t}}),
            ),
        ));
    }
    pieces.push(piece(
        0,
        anthropic_event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}})),
    ));
    pieces.push(piece(0, anthropic_event("message_stop", json!({"type": "message_stop"}))));
    Script { status: 200, headers: sse(), pieces }
}

pub fn error_reply(status: u16, body: Value, extra_headers: &[(&str, &str)]) -> Script {
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    headers.extend(extra_headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    Script { status, headers, pieces: vec![piece(0, body.to_string())] }
}

/// The bytes of a scripted body, all at once.
pub fn script_body(script: &Script) -> Vec<u8> {
    script.pieces.iter().flat_map(|p| p.bytes.clone()).collect()
}

/// A misbehaving peer: a raw TCP listener on 127.0.0.1 whose every connection is handed, with its
/// number (from 0), to a handler that writes whatever bytes — or none — it likes.
pub struct RawServer {
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
}

impl RawServer {
    pub async fn start<F, Fut>(handler: F) -> RawServer
    where
        F: Fn(usize, tokio::net::TcpStream) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        RawServer::start_on(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(), handler)
    }

    pub fn start_on<F, Fut>(listener: tokio::net::TcpListener, handler: F) -> RawServer
    where
        F: Fn(usize, tokio::net::TcpStream) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let counter = connections.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let n = counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(handler(n, stream));
            }
        });
        RawServer { addr, connections }
    }

    pub fn openai_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn anthropic_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Reads one HTTP/1.1 request (head and a `Content-Length` body). `None` when the peer closed
/// or sent something else first.
pub async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut piece = [0u8; 64 * 1024];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut piece).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&piece[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    while buf.len() < head_end + length {
        let n = stream.read(&mut piece).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&piece[..n]);
    }
    Some(buf)
}

/// Writes bytes, ignoring a peer that went away.
pub async fn write_raw(stream: &mut tokio::net::TcpStream, bytes: &[u8]) {
    use tokio::io::AsyncWriteExt;
    let _ = stream.write_all(bytes).await;
    let _ = stream.flush().await;
}

/// The head of a 200 event stream whose body ends when the connection closes.
pub fn sse_head_until_close() -> Vec<u8> {
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n".to_vec()
}

/// The head of a 200 event stream in chunked transfer encoding.
pub fn sse_head_chunked() -> Vec<u8> {
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        .to_vec()
}

/// One chunk of a chunked body.
pub fn http_chunk(bytes: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
    out
}

/// Answers a request on a raw connection properly: a whole OpenAI reply of `texts`, then close.
pub async fn serve_good_openai(mut stream: tokio::net::TcpStream, texts: &[&str]) {
    if read_request(&mut stream).await.is_none() {
        return;
    }
    let mut response = sse_head_until_close();
    response.extend(script_body(&openai_reply(texts, 0)));
    write_raw(&mut stream, &response).await;
    let _ = tokio::io::AsyncWriteExt::shutdown(&mut stream).await;
}

/// A model that never stops: answers the request with an OpenAI event stream whose every event
/// carries `text`, written until the client hangs up. Returns the body bytes written (the last
/// write, the one that failed, not counted).
pub async fn serve_endless_openai(mut stream: tokio::net::TcpStream, text: &str) -> u64 {
    use tokio::io::AsyncWriteExt;
    if read_request(&mut stream).await.is_none() {
        return 0;
    }
    if stream.write_all(&sse_head_chunked()).await.is_err() {
        return 0;
    }
    let event = http_chunk(&openai_data(json!({"content": text})));
    let mut written = 0u64;
    // A few events per write, so the test does not spend its time in syscalls.
    let batch: Vec<u8> = event.iter().copied().cycle().take(event.len() * 16).collect();
    while stream.write_all(&batch).await.is_ok() {
        written += batch.len() as u64;
    }
    written
}

/// An OpenAI-dialect reply the model ended with `finish_reason` (e.g. `"length"`: its output limit).
pub fn openai_reply_finishing(texts: &[&str], finish_reason: &str) -> Script {
    let mut pieces: Vec<Piece> = texts.iter().map(|t| piece(0, openai_data(json!({"content": t})))).collect();
    pieces.push(piece(
        0,
        format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason}]})),
    ));
    pieces.push(piece(0, "data: [DONE]\n\n"));
    Script { status: 200, headers: sse(), pieces }
}

/// An Anthropic-dialect reply the model ended with `stop_reason` (e.g. `"max_tokens"`).
pub fn anthropic_reply_stopping(texts: &[&str], stop_reason: &str) -> Script {
    let mut pieces =
        vec![piece(0, anthropic_event("message_start", json!({"type": "message_start", "message": {"id": "msg_1"}})))];
    for t in texts {
        pieces.push(piece(
            0,
            anthropic_event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}),
            ),
        ));
    }
    pieces.push(piece(
        0,
        anthropic_event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop_reason}})),
    ));
    pieces.push(piece(0, anthropic_event("message_stop", json!({"type": "message_stop"}))));
    Script { status: 200, headers: sse(), pieces }
}

/// A reply of exactly `n` characters (some two and three bytes long) whose last line names `n`,
/// so a tail that reaches the answer is told apart from any other.
pub fn reply_of(n: usize) -> String {
    let last = format!("\nthe last line of the {n}-character reply");
    let lines = (0..).map(|line| format!("line {line:06}: café ✓ naïve — 0123456789\n"));
    let body: String = lines.flat_map(|l| l.chars().collect::<Vec<_>>()).take(n - last.chars().count()).collect();
    body + &last
}

/// Pieces of `text` of about `size` bytes, split at character boundaries.
pub fn split_text(text: &str, size: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut at = size.min(rest.len());
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        out.push(rest[..at].to_string());
        rest = &rest[at..];
    }
    out
}

/// The note that ends the answer to a reply that went on past the read bound.
pub const RUNAWAY_NOTE: &str = "\n\n[mediagate: the reply was cut off (it did not end within 1000000 characters, \
     and mediagate stopped reading it); the answer above is incomplete]";

/// The live stream of one kind with the notices about pausing and cutting taken out: what is
/// left must be exactly the answer (or the reasoning, cut the same way).
pub fn without_notices(live: &str, kind: &str) -> String {
    live.replacen(
        &format!("\n\n[… mediagate: the live {kind} pauses here at 100000 characters; the rest follows when the reply ends …]\n\n"),
        "",
        1,
    )
    .replacen(
        &format!(
            "[… mediagate: the {kind} is longer than 200000 characters, so it will be cut in the middle: \
             its last characters follow when the reply ends …]\n\n"
        ),
        "",
        1,
    )
}
