//! The `http-gate` world's binding: `wasi:http/incoming-handler` over `crate::http_gate`. It reads
//! the head, streams the body under the route's cap and deadlines, and writes the answer; every
//! decision is `http_gate`'s. Nothing here unwraps input: each failure is an answer.

wit_bindgen::generate!({ world: "http-gate", path: "../wit", generate_all });

use exports::wasi::http::incoming_handler::Guest;
use wasi::clocks::monotonic_clock;
use wasi::http::types::{
    Fields, IncomingBody, IncomingRequest, Method, OutgoingBody, OutgoingResponse, ResponseOutparam,
};
use wasi::io::poll;
use wasi::io::streams::{InputStream, OutputStream, StreamError};

use crate::http_gate::{self, BODY_DEADLINE_MS, BODY_IDLE_TIMEOUT_MS, Head, Response};

/// The most one read asks of the body stream.
const READ_PIECE: u64 = 1 << 20;
/// How long, how much, and after what pause `linger` reads the rest of a body past the cap.
const LINGER_MS: u64 = 2_000;
const LINGER_BYTES: u64 = 64 << 20;
const LINGER_IDLE_MS: u64 = 200;

struct Component;

impl Guest for Component {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        let response = answer(&request);
        respond(response_out, &response);
        // The request (and its body, read or not) is dropped only now, after the answer.
        drop(request);
    }
}

fn answer(request: &IncomingRequest) -> Response {
    let headers = request.headers();
    let content_type = match one_header(&headers, "content-type") {
        Ok(v) => v,
        Err(r) => return r,
    };
    let content_length = match one_header(&headers, "content-length") {
        Ok(v) => v,
        Err(r) => return r,
    };
    let content_encoding = match one_header(&headers, "content-encoding") {
        Ok(v) => v,
        Err(r) => return r,
    };
    drop(headers);
    let method = method_name(request.method());
    let path = request.path_with_query().unwrap_or_else(|| "/".to_string());
    let head = Head {
        method: &method,
        path_with_query: &path,
        content_type: content_type.as_deref(),
        content_length: content_length.as_deref(),
        content_encoding: content_encoding.as_deref(),
    };
    let plan = match http_gate::plan(&head) {
        Ok(p) => p,
        Err(r) => return r,
    };
    let declared = content_length.as_deref().and_then(|l| l.trim().parse::<u64>().ok());
    let body = match read_body(request, plan.cap, declared) {
        Ok(b) => b,
        Err(BodyError::OverCap) => return http_gate::over_cap(&plan, None),
        Err(BodyError::Idle) => return http_gate::timed_out(true),
        Err(BodyError::Deadline) => return http_gate::timed_out(false),
        Err(BodyError::Unreadable(e)) => return http_gate::unreadable(&e),
    };
    http_gate::answer(plan, body)
}

/// A header's one value as text; `400` when it is sent twice or is not UTF-8.
fn one_header(headers: &Fields, name: &str) -> Result<Option<String>, Response> {
    let mut values = headers.get(name);
    if values.len() > 1 {
        return Err(Response::error(400, format!("the {name} header is sent {} times", values.len())));
    }
    match values.pop() {
        None => Ok(None),
        Some(v) => String::from_utf8(v)
            .map(Some)
            .map_err(|_| Response::error(400, format!("the {name} header is not UTF-8 text"))),
    }
}

fn method_name(m: Method) -> String {
    match m {
        Method::Get => "GET".into(),
        Method::Head => "HEAD".into(),
        Method::Post => "POST".into(),
        Method::Put => "PUT".into(),
        Method::Delete => "DELETE".into(),
        Method::Connect => "CONNECT".into(),
        Method::Options => "OPTIONS".into(),
        Method::Trace => "TRACE".into(),
        Method::Patch => "PATCH".into(),
        Method::Other(s) => s,
    }
}

enum BodyError {
    OverCap,
    Idle,
    Deadline,
    Unreadable(String),
}

/// The whole body, at most `cap` bytes (one more is `OverCap`, the rest unread); a body that
/// sends nothing for `BODY_IDLE_TIMEOUT_MS`, or is not done within `BODY_DEADLINE_MS`, ends
/// there. Waiting polls the stream together with the clock, so a silent peer never hangs the
/// handler.
fn read_body(request: &IncomingRequest, cap: u64, declared: Option<u64>) -> Result<Vec<u8>, BodyError> {
    let Ok(body) = request.consume() else {
        return Err(BodyError::Unreadable("the request's body was already taken".into()));
    };
    let result = match body.stream() {
        Ok(stream) => read_stream(&stream, cap, declared),
        Err(()) => Err(BodyError::Unreadable("the body has no stream".into())),
    };
    // The stream, a child of the body, was dropped at the end of its match arm: before the body.
    drop::<IncomingBody>(body);
    result
}

fn read_stream(stream: &InputStream, cap: u64, declared: Option<u64>) -> Result<Vec<u8>, BodyError> {
    let mut bytes = Vec::with_capacity(declared.unwrap_or(0).min(cap) as usize);
    let deadline = monotonic_clock::subscribe_duration(BODY_DEADLINE_MS * 1_000_000);
    loop {
        let room = (cap + 1).saturating_sub(bytes.len() as u64);
        match stream.read(READ_PIECE.min(room.max(1))) {
            Ok(piece) if piece.is_empty() => {
                let ready = stream.subscribe();
                let idle = monotonic_clock::subscribe_duration(BODY_IDLE_TIMEOUT_MS * 1_000_000);
                let woke = poll::poll(&[&ready, &idle, &deadline]);
                if woke.contains(&0) {
                    continue;
                }
                return Err(if woke.contains(&2) { BodyError::Deadline } else { BodyError::Idle });
            }
            Ok(piece) => {
                if bytes.len() as u64 + piece.len() as u64 > cap {
                    linger(stream);
                    return Err(BodyError::OverCap);
                }
                bytes.extend_from_slice(&piece);
                if deadline.ready() {
                    return Err(BodyError::Deadline);
                }
            }
            Err(StreamError::Closed) => return Ok(bytes),
            Err(StreamError::LastOperationFailed(e)) => return Err(BodyError::Unreadable(e.to_debug_string())),
        }
    }
}

/// Reads and drops what the peer is still sending of a body past the cap, until it pauses
/// (`LINGER_IDLE_MS`), ends, or the bounds (`LINGER_MS`, `LINGER_BYTES`) are reached. Without this
/// the engine closes the connection with the unread rest in its receive buffer, and the kernel
/// answers that with a reset that can discard the 413 before the client reads it.
fn linger(stream: &InputStream) {
    let until = monotonic_clock::subscribe_duration(LINGER_MS * 1_000_000);
    let mut dropped = 0u64;
    while dropped < LINGER_BYTES {
        match stream.read(READ_PIECE) {
            Ok(piece) if piece.is_empty() => {
                let ready = stream.subscribe();
                let pause = monotonic_clock::subscribe_duration(LINGER_IDLE_MS * 1_000_000);
                if !poll::poll(&[&ready, &pause, &until]).contains(&0) {
                    return;
                }
            }
            Ok(piece) => dropped += piece.len() as u64,
            Err(_) => return,
        }
    }
}

/// Sends `response` (JSON, with its length; `Allow` on a 405). A failure to send cannot be
/// answered: the engine sees the outparam unset or the body cut, and closes the connection.
fn respond(out: ResponseOutparam, response: &Response) {
    let length = response.body.len().to_string();
    let mut entries: Vec<(String, Vec<u8>)> =
        vec![("content-type".into(), b"application/json".to_vec()), ("content-length".into(), length.into_bytes())];
    if let Some(allow) = response.allow {
        entries.push(("allow".into(), allow.as_bytes().to_vec()));
    }
    let headers = Fields::from_list(&entries).unwrap_or_else(|_| Fields::new());
    let outgoing = OutgoingResponse::new(headers);
    if outgoing.set_status_code(response.status).is_err() {
        let _ = outgoing.set_status_code(500);
    }
    let Ok(body) = outgoing.body() else {
        ResponseOutparam::set(out, Ok(outgoing));
        return;
    };
    ResponseOutparam::set(out, Ok(outgoing));
    let written = match body.write() {
        Ok(stream) => write_all(&stream, response.body.as_bytes()),
        Err(()) => false,
    };
    if written {
        let _ = OutgoingBody::finish(body, None);
    }
}

/// Writes all of `bytes`, waiting for room as the stream grants it; `false` when the peer is gone.
fn write_all(stream: &OutputStream, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        let room = match stream.check_write() {
            Ok(0) => {
                stream.subscribe().block();
                continue;
            }
            Ok(n) => n.min(bytes.len() as u64) as usize,
            Err(_) => return false,
        };
        let (now, rest) = bytes.split_at(room);
        if stream.write(now).is_err() {
            return false;
        }
        bytes = rest;
    }
    stream.blocking_flush().is_ok()
}

export!(Component);
