//! A real HTTP server on 127.0.0.1 that speaks the two VLM dialects for the tests: it records every
//! request and streams a scripted reply, piece by piece, with pauses between network writes.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
        let shared = Shared { scripts: Arc::new(Mutex::new(scripts)), requests: Arc::default() };
        let app = Router::new()
            .route("/v1/chat/completions", post(serve))
            .route("/v1/messages", post(serve))
            .layer(axum::extract::DefaultBodyLimit::disable())
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
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
    shared.requests.lock().unwrap().push(Recorded { path: uri.path().to_string(), headers, body });
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

fn sse() -> Vec<(String, String)> {
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
    pieces.push(piece(0, format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))));
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
        piece(0, anthropic_event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}))),
        piece(10, anthropic_event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": thinking}}))),
        piece(0, anthropic_event("content_block_stop", json!({"type": "content_block_stop", "index": 0}))),
        piece(0, anthropic_event("ping", json!({"type": "ping"}))),
    ];
    for t in texts {
        pieces.push(piece(10, anthropic_event("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": t}}))));
    }
    pieces.push(piece(0, anthropic_event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}))));
    pieces.push(piece(0, anthropic_event("message_stop", json!({"type": "message_stop"}))));
    Script { status: 200, headers: sse(), pieces }
}

pub fn error_reply(status: u16, body: Value, extra_headers: &[(&str, &str)]) -> Script {
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    headers.extend(extra_headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    Script { status, headers, pieces: vec![piece(0, body.to_string())] }
}
