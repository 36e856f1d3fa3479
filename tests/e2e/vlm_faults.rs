//! A faulty VLM, end to end: the real component and host against loopback servers that refuse,
//! stall, cut, garble or flood. Every case ends with a clear tool error or answer within its hang
//! guard, the API key never appears in what comes back, and the next call on the same tool works.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::vlm_server::*;
use crate::common::*;
use mediagate::ReadImageTool;
use mediagate::tool::{Sink, ToolError, ToolErrorCode};
use mediagate::vlm::{Api, VlmConfig};
use serde_json::json;

const KEY: &str = "sk-faults-secret-0123456789";
/// A hang guard around every call, far above any timeout configured below.
const GUARD: Duration = Duration::from_secs(30);
const MARKER_START: &str = "[mediagate: the reply was cut off (";
const MARKER_END: &str = "the answer above is incomplete]";
const EVENT_LIMIT: usize = 64 * 1024;

/// Small timeouts and backoffs, so the faults end quickly.
fn config(api: Api, url: String) -> VlmConfig {
    let mut c = VlmConfig::new(api, url, "test-vlm");
    c.api_key = Some(KEY.into());
    c.connect_timeout = Duration::from_secs(2);
    c.idle_timeout = Duration::from_millis(1500);
    c.max_retries = 2;
    c.retry_backoff = Duration::from_millis(10);
    c.max_retry_wait = Duration::from_secs(5);
    c.max_event_bytes = EVENT_LIMIT;
    c
}

fn tool(config: VlmConfig) -> ReadImageTool {
    ReadImageTool::new(runtime(), Some(config)).unwrap()
}

fn openai_tool(url: String) -> ReadImageTool {
    tool(config(Api::OpenAi, url))
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(corpus().join("photos/tango-icon-address-book-new-16.png"), dir.path().join("icon.png")).unwrap();
    std::fs::write(dir.path().join("notes.png"), "plain words").unwrap();
    dir
}

/// What reached the output sink.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<String>>);

impl Seen {
    fn sink(&self) -> Sink {
        let inner = self.0.clone();
        Arc::new(move |_, text| inner.lock().unwrap().push_str(text))
    }
    fn text(&self) -> String {
        self.0.lock().unwrap().clone()
    }
}

/// `read_image(icon.png)` within the hang guard; the key appears nowhere in what comes back.
async fn call_seen(tool: &ReadImageTool, ws: &Path) -> (Result<String, ToolError>, String) {
    let seen = Seen::default();
    let result = tokio::time::timeout(GUARD, tool.read_image(ws, "icon.png", None, None, seen.sink()))
        .await
        .expect("the call must end within its hang guard")
        .expect("the sandbox itself never fails here")
        .answer;
    let text = match &result {
        Ok(answer) => answer.clone(),
        Err(e) => e.message.clone(),
    };
    assert!(!text.contains(KEY), "the API key leaked: {text}");
    assert!(!seen.text().contains(KEY), "the API key leaked to the sink");
    (result, seen.text())
}

async fn call(tool: &ReadImageTool, ws: &Path) -> Result<String, ToolError> {
    call_seen(tool, ws).await.0
}

/// The call fails with a VLM error whose message contains every one of `words`.
async fn fails_with(tool: &ReadImageTool, ws: &Path, words: &[&str]) -> ToolError {
    let err = call(tool, ws).await.expect_err("the faulty VLM must give an error");
    assert_eq!(err.code, ToolErrorCode::VlmFailed, "{}", err.message);
    assert!(err.message.starts_with("error: the vision model"), "{}", err.message);
    let lower = err.message.to_lowercase();
    for w in words {
        assert!(lower.contains(&w.to_lowercase()), "expected {w:?} in: {}", err.message);
    }
    err
}

/// The call returns what arrived, marked incomplete with `reason` in the marker.
async fn partial_with(tool: &ReadImageTool, ws: &Path, start: &str, reason: &str) {
    let (answer, seen) = call_seen(tool, ws).await;
    let answer = answer.expect("a cut reply with content is returned as a partial answer");
    assert!(answer.starts_with(start), "{answer}");
    let marker = &answer[start.len()..];
    assert!(marker.trim_start().starts_with(MARKER_START) && marker.ends_with(MARKER_END), "{answer}");
    assert!(marker.to_lowercase().contains(&reason.to_lowercase()), "expected {reason:?} in: {answer}");
    assert!(seen.ends_with(MARKER_END), "the marker is streamed too: {seen}");
}

async fn succeeds(tool: &ReadImageTool, ws: &Path, expected: &str) {
    assert_eq!(call(tool, ws).await.expect("the next call succeeds"), expected);
}

/// The tool still answers its other paths at once (for endpoints that can never work).
async fn tool_still_answers(tool: &ReadImageTool, ws: &Path) {
    let err = tokio::time::timeout(GUARD, tool.read_image(ws, "notes.png", None, None, Seen::default().sink()))
        .await
        .unwrap()
        .unwrap()
        .answer
        .unwrap_err();
    assert_eq!(err.code, ToolErrorCode::NotAnImage, "{}", err.message);
}

fn good() -> Script {
    openai_reply(&["fine"], 0)
}

fn content_event(text: &str) -> Vec<u8> {
    openai_data(json!({"content": text}))
}

fn finish_event() -> Vec<u8> {
    format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})).into_bytes()
}

// ---------------------------------------------------------------------------------------------
// Unreachable endpoints

#[tokio::test]
async fn connection_refused_is_reported_then_the_port_comes_back() {
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let ws = workspace();
    let t = openai_tool(format!("http://{addr}/v1"));
    fails_with(&t, ws.path(), &["could not be reached", "connection refused"]).await;
    let server = VlmServer::start_on(tokio::net::TcpListener::bind(addr).await.unwrap(), vec![good()]);
    succeeds(&t, ws.path(), "fine").await;
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_name_that_does_not_resolve_is_reported() {
    let ws = workspace();
    // https: the key never goes over plain http to a host that is not loopback; DNS fails first.
    let t = openai_tool("https://mediagate-test-vlm.invalid/v1".into());
    let err = fails_with(&t, ws.path(), &["could not be reached", "mediagate-test-vlm.invalid"]).await;
    assert!(err.message.to_lowercase().contains("dns"), "{}", err.message);
    // The endpoint can never work: the same clear error again, and the tool's other paths work.
    fails_with(&t, ws.path(), &["could not be reached"]).await;
    tool_still_answers(&t, ws.path()).await;
}

#[tokio::test]
async fn tls_to_a_plain_port_is_reported() {
    let server = VlmServer::start(vec![good()]).await;
    let ws = workspace();
    let t = openai_tool(format!("https://{}/v1", server.addr));
    fails_with(&t, ws.path(), &["could not be reached"]).await;
    assert!(server.requests().is_empty(), "no request was understood by the plain server");
    fails_with(&t, ws.path(), &["could not be reached"]).await;
    tool_still_answers(&t, ws.path()).await;
    // The server itself was fine all along.
    succeeds(&openai_tool(server.openai_url()), ws.path(), "fine").await;
}

/// A listener whose accept queue is full: the kernel drops new SYNs, so connecting hangs until
/// the client's connect timeout. `None` where the kernel does not behave so.
async fn listener_with_full_backlog() -> Option<(tokio::net::TcpListener, Vec<tokio::net::TcpStream>)> {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(0).unwrap();
    let addr = listener.local_addr().unwrap();
    let mut fillers = Vec::new();
    for _ in 0..8 {
        match tokio::time::timeout(Duration::from_millis(300), tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(s)) => fillers.push(s),
            Ok(Err(_)) => return None,
            Err(_) => return Some((listener, fillers)),
        }
    }
    None
}

#[tokio::test]
async fn a_connect_that_hangs_times_out() {
    let Some((listener, _fillers)) = listener_with_full_backlog().await else {
        eprintln!("connect timeout not testable here: the kernel accepted every connection");
        return;
    };
    let ws = workspace();
    let mut c = config(Api::OpenAi, format!("http://{}/v1", listener.local_addr().unwrap()));
    c.connect_timeout = Duration::from_millis(300);
    c.max_retries = 1;
    let t = tool(c);
    fails_with(&t, ws.path(), &["timed out"]).await;
    // The listener starts accepting: the queued connections (the fillers, which never send a
    // request) and then the tool's.
    let _server = RawServer::start_on(listener, |_, stream| serve_good_openai(stream, &["fine"]));
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn a_peer_that_hangs_up_or_does_not_speak_http_is_reported() {
    let ws = workspace();
    // Reads the request, then closes without a word.
    let server = first_faulty(|mut stream| async move {
        read_request(&mut stream).await;
    })
    .await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["could not be reached"]).await;
    succeeds(&t, ws.path(), "fine").await;

    // Closes at once, before reading anything.
    let server = first_faulty(|stream| async move { drop(stream) }).await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["could not be reached"]).await;
    succeeds(&t, ws.path(), "fine").await;

    // Answers something that is not HTTP.
    let server = first_faulty(|mut stream| async move {
        read_request(&mut stream).await;
        write_raw(&mut stream, b"SSH-2.0-OpenSSH_9.6\r\n\r\n").await;
    })
    .await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["could not be reached"]).await;
    succeeds(&t, ws.path(), "fine").await;

    // A response head that never ends (one endless header line): bounded by the HTTP parser.
    let server = first_faulty(|mut stream| async move {
        read_request(&mut stream).await;
        write_raw(&mut stream, b"HTTP/1.1 200 OK\r\nx-padding: ").await;
        let unit = vec![b'p'; 64 * 1024];
        while tokio::io::AsyncWriteExt::write_all(&mut stream, &unit).await.is_ok() {}
    })
    .await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["could not be reached"]).await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn a_redirect_is_not_followed_so_the_key_never_travels_elsewhere() {
    // The key is a custom header for Anthropic (`x-api-key`), which an HTTP client does not strip
    // on a redirect to another host: the client must not follow redirects at all.
    let ws = workspace();
    let elsewhere = VlmServer::start(vec![anthropic_reply("", &["stolen"])]).await;
    for status in [301u16, 302, 307, 308] {
        let redirect = Script {
            status,
            headers: vec![("location".into(), format!("{}/v1/messages", elsewhere.anthropic_url()))],
            pieces: vec![],
        };
        let server = VlmServer::start(vec![redirect, anthropic_reply("", &["fine"])]).await;
        let t = tool(config(Api::Anthropic, server.anthropic_url()));
        fails_with(&t, ws.path(), &[&format!("HTTP {status}"), "redirects are not followed"]).await;
        assert_eq!(server.requests().len(), 1, "a redirect is not retried");
        succeeds(&t, ws.path(), "fine").await;
    }
    assert!(elsewhere.requests().is_empty(), "the request (and the key) went to the redirect's target");
}

// ---------------------------------------------------------------------------------------------
// Refusals and retries

#[tokio::test]
async fn client_errors_are_reported_with_the_providers_words_and_not_retried() {
    let ws = workspace();
    let cases = [
        (
            Api::OpenAi,
            400,
            json!({"error": {"message": "image_url is not a valid image", "type": "invalid_request_error"}}),
        ),
        (Api::OpenAi, 401, json!({"error": {"message": "Incorrect API key provided"}})),
        (Api::OpenAi, 403, json!({"error": {"message": "this model is not available in your region"}})),
        (
            Api::Anthropic,
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "image exceeds 5 MB maximum"}}),
        ),
        (
            Api::Anthropic,
            401,
            json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
        ),
        (
            Api::Anthropic,
            403,
            json!({"type": "error", "error": {"type": "permission_error", "message": "not allowed"}}),
        ),
    ];
    for (api, status, body) in cases {
        let message = body.pointer("/error/message").unwrap().as_str().unwrap().to_string();
        let good = match api {
            Api::OpenAi => good(),
            Api::Anthropic => anthropic_reply("", &["fine"]),
        };
        let server = VlmServer::start(vec![error_reply(status, body, &[]), good]).await;
        let url = match api {
            Api::OpenAi => server.openai_url(),
            Api::Anthropic => server.anthropic_url(),
        };
        let t = tool(config(api, url));
        fails_with(&t, ws.path(), &["refused", &format!("HTTP {status}"), &message]).await;
        assert_eq!(server.requests().len(), 1, "HTTP {status} is not retried");
        succeeds(&t, ws.path(), "fine").await;
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn a_non_json_error_body_is_quoted() {
    let ws = workspace();
    let page = Script {
        status: 404,
        headers: vec![("content-type".into(), "text/html".into())],
        pieces: vec![piece(0, "<html><body>No such route</body></html>")],
    };
    let server = VlmServer::start(vec![page, good()]).await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["HTTP 404", "No such route"]).await;
    assert_eq!(server.requests().len(), 1);
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn the_key_is_redacted_when_the_provider_echoes_it() {
    let ws = workspace();
    let echo = error_reply(401, json!({"error": {"message": format!("Incorrect API key provided: {KEY}.")}}), &[]);
    let midstream = openai_pieces(vec![
        piece(0, content_event("so far")),
        piece(0, format!("data: {}\n\n", json!({"error": {"message": format!("key {KEY} revoked")}}))),
    ]);
    let server = VlmServer::start(vec![echo, midstream, good()]).await;
    let t = openai_tool(server.openai_url());
    // `call` asserts that the key appears in neither the answer nor the sink.
    fails_with(&t, ws.path(), &["Incorrect API key provided"]).await;
    partial_with(&t, ws.path(), "so far", "revoked").await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn a_rate_limit_waits_as_long_as_retry_after_says() {
    let ws = workspace();
    let limited = error_reply(429, json!({"error": {"message": "slow down"}}), &[("retry-after", "1")]);
    let server = VlmServer::start(vec![limited, good()]).await;
    let t = openai_tool(server.openai_url());
    succeeds(&t, ws.path(), "fine").await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The configured backoff is 10 ms; the server asked for one second.
    let waited = requests[1].at.duration_since(requests[0].at);
    assert!(waited >= Duration::from_millis(950), "Retry-After: 1 was not honoured (waited {waited:?})");
}

#[tokio::test]
async fn retry_after_is_bounded_by_the_configured_longest_wait() {
    let ws = workspace();
    let limited = error_reply(429, json!({"error": {"message": "come back tomorrow"}}), &[("retry-after", "86400")]);
    let server = VlmServer::start(vec![limited, good()]).await;
    let mut c = config(Api::OpenAi, server.openai_url());
    c.max_retry_wait = Duration::from_millis(100);
    succeeds(&tool(c), ws.path(), "fine").await;
    assert_eq!(server.requests().len(), 2);
}

/// `Retry-After: 1e20` made `Duration::from_secs_f64` panic the host. Huge, infinite, negative,
/// NaN and HTTP-date values are each clamped to the longest wait or ignored: the retry happens and
/// the answer comes back.
#[test]
fn odd_or_huge_retry_after_values_never_panic_and_are_clamped() {
    within_async(
        HOSTILE,
        "odd_or_huge_retry_after_values_never_panic_and_are_clamped",
        0,
        odd_or_huge_retry_after_values_never_panic_and_are_clamped_body,
    )
}

async fn odd_or_huge_retry_after_values_never_panic_and_are_clamped_body() {
    let ws = workspace();
    for value in [
        "1e20",
        "1e300",
        "inf",
        "-1",
        "NaN",
        "18446744073709551616",
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Wed, 21 Oct 2015 07:28:00 GMT",
        "soon",
    ] {
        let limited = error_reply(429, json!({"error": {"message": "slow down"}}), &[("retry-after", value)]);
        let server = VlmServer::start(vec![limited, good()]).await;
        let mut c = config(Api::OpenAi, server.openai_url());
        c.max_retry_wait = Duration::from_millis(50);
        succeeds(&tool(c), ws.path(), "fine").await;
        assert_eq!(server.requests().len(), 2, "Retry-After: {value}");
    }
}

/// An API key never travels in clear text off this machine: `http://` to a host that is not
/// loopback is refused when the tool is built, before anything connects (192.0.2.1 is TEST-NET-1,
/// routed nowhere: a connection attempt would hang until the connect timeout, not fail with this).
#[tokio::test]
async fn an_api_key_is_never_sent_over_plain_http_to_another_host() {
    for url in ["http://192.0.2.1/v1", "http://example.com/v1", "HTTP://10.0.0.1:11434/v1", "http://[2001:db8::1]/v1"] {
        let e = match ReadImageTool::new(runtime(), Some(config(Api::OpenAi, url.into()))) {
            Ok(_) => panic!("{url}: a key over plain http was accepted"),
            Err(e) => format!("{e:#}"),
        };
        assert!(e.contains("clear text") && e.contains("use https"), "{url}: {e}");
        assert!(!e.contains(KEY), "{e}");
    }
    // Without a key, plain http goes anywhere (nothing secret travels); loopback and https take one.
    let mut keyless = config(Api::OpenAi, "http://192.0.2.1/v1".into());
    keyless.api_key = None;
    assert!(ReadImageTool::new(runtime(), Some(keyless)).is_ok());
    for url in [
        "http://127.0.0.1:9/v1",
        "http://127.8.9.10/v1",
        "http://localhost:9",
        "http://[::1]:9/v1",
        "https://192.0.2.1/v1",
    ] {
        assert!(ReadImageTool::new(runtime(), Some(config(Api::Anthropic, url.into()))).is_ok(), "{url}");
    }
}

// ---------------------------------------------------------------------------------------------
// Replies the model stopped short

/// A reply cut at the model's output limit is marked as cut, like a stream cut mid-way, in both
/// dialects; one with no text before the stop is an error, never an empty answer.
#[tokio::test]
async fn a_reply_stopped_at_the_output_limit_is_marked_incomplete() {
    let ws = workspace();
    let server = VlmServer::start(vec![
        openai_reply_finishing(&["The first ", "half"], "length"),
        openai_reply_finishing(&[], "length"),
        openai_reply_finishing(&["All of it."], "stop"),
    ])
    .await;
    let t = openai_tool(server.openai_url());
    partial_with(&t, ws.path(), "The first half", "output limit (finish_reason \"length\")").await;
    fails_with(&t, ws.path(), &["stopped before its reply was complete", "output limit"]).await;
    succeeds(&t, ws.path(), "All of it.").await;

    let server = VlmServer::start(vec![
        anthropic_reply_stopping(&["A cat ", "on a"], "max_tokens"),
        anthropic_reply_stopping(&["A whole answer."], "end_turn"),
    ])
    .await;
    let t = tool(config(Api::Anthropic, server.anthropic_url()));
    partial_with(&t, ws.path(), "A cat on a", "output limit (stop_reason \"max_tokens\"").await;
    succeeds(&t, ws.path(), "A whole answer.").await;
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_within_bounds_then_reported() {
    let ws = workspace();
    let max_retries = 3;
    for status in [429u16, 500, 502, 503, 504, 529] {
        let message = format!("failure number {status}");
        let error = error_reply(status, json!({"error": {"message": message}}), &[("retry-after", "0")]);
        let mut scripts = vec![error; 1 + max_retries as usize];
        scripts.push(good());
        let server = VlmServer::start(scripts).await;
        let mut c = config(Api::OpenAi, server.openai_url());
        c.max_retries = max_retries;
        let t = tool(c);
        fails_with(&t, ws.path(), &[&format!("HTTP {status}"), &message]).await;
        assert_eq!(server.requests().len(), 1 + max_retries as usize, "HTTP {status}: 1 + max_retries requests");
        succeeds(&t, ws.path(), "fine").await;
    }
}

#[tokio::test]
async fn a_server_error_then_success_is_an_answer() {
    let ws = workspace();
    let server =
        VlmServer::start(vec![error_reply(503, json!({"error": {"message": "overloaded"}}), &[]), good()]).await;
    succeeds(&openai_tool(server.openai_url()), ws.path(), "fine").await;
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_endless_error_body_is_read_only_in_part() {
    // A 500 whose body never ends: the host reads a bounded prefix for the message and moves on.
    let ws = workspace();
    let server = RawServer::start(|n, mut stream| async move {
        if n >= 3 {
            return serve_good_openai(stream, &["fine"]).await;
        }
        if read_request(&mut stream).await.is_none() {
            return;
        }
        write_raw(
            &mut stream,
            b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n",
        )
        .await;
        let unit = vec![b'x'; 64 * 1024];
        loop {
            if tokio::io::AsyncWriteExt::write_all(&mut stream, &unit).await.is_err() {
                return;
            }
        }
    })
    .await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["HTTP 500", "xxxxxxxx"]).await;
    assert_eq!(server.connections(), 3, "1 + max_retries attempts");
    succeeds(&t, ws.path(), "fine").await;
}

// ---------------------------------------------------------------------------------------------
// Silence

/// A raw server whose first connection gets `fault`, the later ones a good reply.
async fn first_faulty<F, Fut>(fault: F) -> RawServer
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let fault = Arc::new(fault);
    RawServer::start(move |n, stream| {
        let fault = fault.clone();
        async move { if n == 0 { fault(stream).await } else { serve_good_openai(stream, &["fine"]).await } }
    })
    .await
}

async fn hold(stream: tokio::net::TcpStream) {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    drop(stream);
}

#[tokio::test]
async fn a_server_that_accepts_and_never_answers_times_out() {
    let ws = workspace();
    let server = first_faulty(|mut stream| async move {
        read_request(&mut stream).await;
        hold(stream).await
    })
    .await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["timed out"]).await;
    assert_eq!(server.connections(), 1, "a timeout after the request was sent is not retried");
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn a_server_that_never_reads_the_request_times_out() {
    let ws = workspace();
    let server = first_faulty(hold).await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["timed out"]).await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn silence_after_the_headers_times_out() {
    let ws = workspace();
    let server = first_faulty(|mut stream| async move {
        read_request(&mut stream).await;
        write_raw(&mut stream, &sse_head_until_close()).await;
        hold(stream).await
    })
    .await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["timed out"]).await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn silence_mid_stream_returns_the_partial_answer() {
    let ws = workspace();
    let server = first_faulty(|mut stream| async move {
        read_request(&mut stream).await;
        let mut bytes = sse_head_until_close();
        bytes.extend(content_event("A small "));
        bytes.extend(content_event("icon"));
        write_raw(&mut stream, &bytes).await;
        hold(stream).await
    })
    .await;
    let t = openai_tool(server.openai_url());
    partial_with(&t, ws.path(), "A small icon", "timed out").await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn keep_alive_comments_alone_do_not_keep_a_reply_alive() {
    let ws = workspace();
    let server = first_faulty(|mut stream| async move {
        read_request(&mut stream).await;
        write_raw(&mut stream, &sse_head_until_close()).await;
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if tokio::io::AsyncWriteExt::write_all(&mut stream, b": keep-alive\n\n").await.is_err() {
                return;
            }
        }
    })
    .await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["timed out"]).await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn events_without_text_do_not_keep_a_reply_alive() {
    // Events that parse but carry no text (empty deltas, empty data), one every 50 ms forever:
    // the idle timeout counts from the last text, not from the last event.
    let ws = workspace();
    let units: [&[u8]; 2] = [b"data: {\"choices\":[{\"index\":0,\"delta\":{}}]}\n\n", b"data:\n\n"];
    for unit in units {
        let server = first_faulty(move |mut stream| async move {
            read_request(&mut stream).await;
            let mut bytes = sse_head_until_close();
            bytes.extend(content_event("Some"));
            write_raw(&mut stream, &bytes).await;
            loop {
                tokio::time::sleep(Duration::from_millis(50)).await;
                if tokio::io::AsyncWriteExt::write_all(&mut stream, unit).await.is_err() {
                    return;
                }
            }
        })
        .await;
        let t = openai_tool(server.openai_url());
        partial_with(&t, ws.path(), "Some", "timed out").await;
        succeeds(&t, ws.path(), "fine").await;
    }
}

#[tokio::test]
async fn a_flood_of_blank_lines_times_out() {
    // Blank lines as fast as the loopback carries them: no event, no text, no end.
    let ws = workspace();
    let server = first_faulty(|mut stream| async move {
        read_request(&mut stream).await;
        write_raw(&mut stream, &sse_head_until_close()).await;
        let unit = vec![b'\n'; 16 * 1024];
        while tokio::io::AsyncWriteExt::write_all(&mut stream, &unit).await.is_ok() {}
    })
    .await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["timed out"]).await;
    succeeds(&t, ws.path(), "fine").await;
}

// ---------------------------------------------------------------------------------------------
// Cut streams

#[tokio::test]
async fn a_stream_cut_mid_way_returns_the_partial_answer_marked_incomplete() {
    let ws = workspace();
    let events = [content_event("Hello, "), content_event("wor")].concat();
    // The connection closes after two content events: the body simply ends (no length), a chunked
    // body loses its last chunk, a declared length is not reached.
    let cuts: Vec<(Vec<u8>, &str)> = vec![
        ([sse_head_until_close(), events.clone()].concat(), "ended before the reply was complete"),
        ([sse_head_chunked(), http_chunk(&events)].concat(), "connection broke"),
        (
            [
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 100000\r\n\r\n".to_vec(),
                events.clone(),
            ]
            .concat(),
            "connection broke",
        ),
    ];
    for (bytes, reason) in cuts {
        let server = first_faulty(move |mut stream| {
            let bytes = bytes.clone();
            async move {
                read_request(&mut stream).await;
                write_raw(&mut stream, &bytes).await;
            }
        })
        .await;
        let t = openai_tool(server.openai_url());
        partial_with(&t, ws.path(), "Hello, wor", reason).await;
        succeeds(&t, ws.path(), "fine").await;
    }
}

#[tokio::test]
async fn an_anthropic_stream_cut_mid_way_is_marked_incomplete() {
    let ws = workspace();
    let delta = |t: &str| {
        anthropic_event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}),
        )
    };
    let cut = openai_pieces(vec![
        piece(0, anthropic_event("message_start", json!({"type": "message_start", "message": {"id": "m"}}))),
        piece(0, delta("A cat ")),
        piece(0, delta("on a")),
    ]);
    let server = VlmServer::start(vec![cut, anthropic_reply("", &["fine"])]).await;
    let t = tool(config(Api::Anthropic, server.anthropic_url()));
    partial_with(&t, ws.path(), "A cat on a", "ended before the reply was complete").await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn a_stream_cut_before_any_content_is_an_error() {
    let ws = workspace();
    let server = VlmServer::start(vec![openai_pieces(vec![piece(0, ": hello\n\n")]), good()]).await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["malformed", "ended before the reply was complete"]).await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn a_missing_done_is_fine_after_a_finish_reason_and_marked_without_one() {
    let ws = workspace();
    let with_finish = openai_pieces(vec![
        piece(0, content_event("All ")),
        piece(0, content_event("there.")),
        piece(0, finish_event()),
    ]);
    let without = openai_pieces(vec![piece(0, content_event("Half ")), piece(0, content_event("of it"))]);
    let server = VlmServer::start(vec![with_finish, without, good()]).await;
    let t = openai_tool(server.openai_url());
    succeeds(&t, ws.path(), "All there.").await;
    partial_with(&t, ws.path(), "Half of it", "ended before the reply was complete").await;
    succeeds(&t, ws.path(), "fine").await;
}

// ---------------------------------------------------------------------------------------------
// Malformed streams

#[tokio::test]
async fn data_that_is_not_json_is_a_clear_error() {
    let ws = workspace();
    let first = openai_pieces(vec![piece(0, "data: {not json\n\n"), piece(0, "data: [DONE]\n\n")]);
    let deep = openai_pieces(vec![piece(0, format!("data: {}\n\n", "[".repeat(20_000))), piece(0, "data: [DONE]\n\n")]);
    let later = openai_pieces(vec![
        piece(0, content_event("So far")),
        piece(0, "data: <html>oops</html>\n\n"),
        piece(0, "data: [DONE]\n\n"),
    ]);
    let anthropic_bad = openai_pieces(vec![piece(0, "event: content_block_delta\ndata: {{{\n\n")]);
    let server = VlmServer::start(vec![first, deep, later, good()]).await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["malformed", "not JSON"]).await;
    fails_with(&t, ws.path(), &["malformed", "not JSON", "recursion limit"]).await;
    partial_with(&t, ws.path(), "So far", "not JSON").await;
    succeeds(&t, ws.path(), "fine").await;

    let server = VlmServer::start(vec![anthropic_bad, anthropic_reply("", &["fine"])]).await;
    let t = tool(config(Api::Anthropic, server.anthropic_url()));
    fails_with(&t, ws.path(), &["malformed", "content_block_delta event is not JSON"]).await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn json_of_the_wrong_shape_is_ignored_and_an_empty_reply_is_an_error() {
    let ws = workspace();
    let shapes = [
        "[1,2,3]",
        "\"text\"",
        "null",
        r#"{"choices":"nope"}"#,
        r#"{"choices":[{"delta":{"content":42}}]}"#,
        r#"{"choices":[{"delta":"x"}]}"#,
    ];
    let mut only_odd = shapes.iter().map(|s| piece(0, format!("data: {s}\n\n"))).collect::<Vec<_>>();
    only_odd.push(piece(0, finish_event()));
    only_odd.push(piece(0, "data: [DONE]\n\n"));
    let mut mixed = only_odd.clone();
    mixed.insert(2, piece(0, content_event("still ")));
    mixed.insert(5, piece(0, content_event("here")));
    let server = VlmServer::start(vec![openai_pieces(only_odd), openai_pieces(mixed), good()]).await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["empty answer"]).await;
    succeeds(&t, ws.path(), "still here").await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn junk_lines_in_the_event_stream_are_ignored() {
    // What SSE says to ignore: unknown fields, lines without a colon, comments, odd ids and
    // retries, CRLF line ends, a byte-order mark.
    let ws = workspace();
    let junk = openai_pieces(vec![
        piece(0, "\u{feff}: a comment\n\n"),
        piece(0, "this line has no colon\n\n"),
        piece(0, "retry: soon\nid: 7\nunknown: field\n\n"),
        piece(0, "event: surprise\r\n"),
        piece(0, content_event("Still ")),
        piece(0, "data\n\n"),
        piece(0, content_event("readable.")),
        piece(0, finish_event()),
        piece(0, "data: [DONE]\r\n\r\n"),
    ]);
    let server = VlmServer::start(vec![junk, good()]).await;
    let t = openai_tool(server.openai_url());
    succeeds(&t, ws.path(), "Still readable.").await;
    succeeds(&t, ws.path(), "fine").await;
}

#[test]
fn byte_order_marks_at_the_start_are_dropped_even_when_split() {
    within_async(
        HOSTILE,
        "byte_order_marks_at_the_start_are_dropped_even_when_split",
        0,
        byte_order_marks_at_the_start_are_dropped_even_when_split_body,
    )
}

async fn byte_order_marks_at_the_start_are_dropped_even_when_split_body() {
    // A byte-order mark made the SSE parser panic (it sliced inside the character): the host
    // must drop it, whole, split over network writes, or twice.
    let ws = workspace();
    let bom = "\u{feff}".as_bytes();
    let rest = |text: &str| [content_event(text), finish_event(), b"data: [DONE]\n\n".to_vec()].concat();
    let server = VlmServer::start(vec![
        openai_pieces(vec![piece(0, [bom, &rest("whole")].concat())]),
        openai_pieces(vec![
            piece(0, &bom[..1]),
            piece(30, &bom[1..2]),
            piece(30, [&bom[2..], &rest("split")].concat()),
        ]),
        openai_pieces(vec![piece(0, [bom, bom].concat()), piece(30, rest("twice"))]),
        openai_pieces(vec![piece(0, &bom[..2]), piece(30, rest("half a mark"))]),
        good(),
    ])
    .await;
    let t = openai_tool(server.openai_url());
    succeeds(&t, ws.path(), "whole").await;
    succeeds(&t, ws.path(), "split").await;
    succeeds(&t, ws.path(), "twice").await;
    // Half a mark and then text is not UTF-8.
    fails_with(&t, ws.path(), &["UTF-8"]).await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn a_provider_error_event_is_reported() {
    let ws = workspace();
    let openai_error = |m: &str| piece(0, format!("data: {}\n\n", json!({"error": {"message": m}})));
    let anthropic_error = |m: &str| {
        piece(
            0,
            anthropic_event("error", json!({"type": "error", "error": {"type": "overloaded_error", "message": m}})),
        )
    };
    let server = VlmServer::start(vec![
        openai_pieces(vec![openai_error("Overloaded now")]),
        openai_pieces(vec![piece(0, content_event("Part")), openai_error("Overloaded later")]),
        good(),
    ])
    .await;
    let t = openai_tool(server.openai_url());
    fails_with(&t, ws.path(), &["reported an error mid-stream", "Overloaded now"]).await;
    partial_with(&t, ws.path(), "Part", "Overloaded later").await;
    succeeds(&t, ws.path(), "fine").await;

    let server =
        VlmServer::start(vec![openai_pieces(vec![anthropic_error("Overloaded")]), anthropic_reply("", &["fine"])])
            .await;
    let t = tool(config(Api::Anthropic, server.anthropic_url()));
    fails_with(&t, ws.path(), &["reported an error mid-stream", "Overloaded"]).await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn bytes_that_are_not_utf8_are_a_clear_error_at_once() {
    // After the invalid bytes the server keeps the connection open: the error must come from the
    // bytes, not from the idle timeout.
    let ws = workspace();
    for prefix in [Vec::new(), content_event("Before")] {
        let server = first_faulty(move |mut stream| {
            let prefix = prefix.clone();
            async move {
                read_request(&mut stream).await;
                let mut bytes = sse_head_until_close();
                bytes.extend(prefix);
                bytes.extend(b"data: {\"choices\":[{\"delta\":{\"content\":\"\xff\xfe\"}}]}\n\n");
                bytes.extend(content_event("after"));
                write_raw(&mut stream, &bytes).await;
                hold(stream).await
            }
        })
        .await;
        let t = openai_tool(server.openai_url());
        let (result, _) = call_seen(&t, ws.path()).await;
        let text = match result {
            Ok(answer) => {
                assert!(answer.starts_with("Before") && answer.contains(MARKER_START), "{answer}");
                answer
            }
            Err(e) => e.message,
        };
        assert!(text.contains("UTF-8") && !text.contains("timed out"), "{text}");
        succeeds(&t, ws.path(), "fine").await;
    }
}

// ---------------------------------------------------------------------------------------------
// Oversize and endless events

#[tokio::test]
async fn an_event_over_the_size_limit_is_a_clear_error() {
    let ws = workspace();
    let huge = content_event(&"a".repeat(4 * EVENT_LIMIT));
    let many_lines = {
        let line = format!("data: {}\n", "b".repeat(1000));
        line.repeat(2 * EVENT_LIMIT / 1000).into_bytes()
    };
    let just_under = "c".repeat(EVENT_LIMIT - 200);
    let server = VlmServer::start(vec![
        openai_pieces(vec![piece(0, huge.clone()), piece(0, "data: [DONE]\n\n")]),
        openai_pieces(vec![piece(0, many_lines), piece(0, "\n"), piece(0, "data: [DONE]\n\n")]),
        openai_pieces(vec![piece(0, content_event("Begun")), piece(0, huge), piece(0, "data: [DONE]\n\n")]),
        openai_reply(&[&just_under], 0),
        good(),
    ])
    .await;
    let t = openai_tool(server.openai_url());
    let limit = EVENT_LIMIT.to_string();
    fails_with(&t, ws.path(), &["malformed", "exceeded", &limit]).await;
    fails_with(&t, ws.path(), &["malformed", "exceeded", &limit]).await;
    partial_with(&t, ws.path(), "Begun", "exceeded").await;
    succeeds(&t, ws.path(), &just_under).await;
    succeeds(&t, ws.path(), "fine").await;
}

#[tokio::test]
async fn an_endless_event_is_cut_at_the_limit_not_read_forever() {
    // One event that never ends, sent as fast as the loopback allows: if the host kept reading,
    // this call would never end (and memory would grow without bound).
    let ws = workspace();
    for unit in [b"a".repeat(16 * 1024), b"data: bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n".repeat(512)] {
        let server = first_faulty(move |mut stream| {
            let unit = unit.clone();
            async move {
                read_request(&mut stream).await;
                write_raw(&mut stream, &sse_head_until_close()).await;
                write_raw(&mut stream, b"data: ").await;
                while tokio::io::AsyncWriteExt::write_all(&mut stream, &unit).await.is_ok() {}
            }
        })
        .await;
        let t = openai_tool(server.openai_url());
        fails_with(&t, ws.path(), &["exceeded"]).await;
        succeeds(&t, ws.path(), "fine").await;
    }
}

// ---------------------------------------------------------------------------------------------
// Content types

#[tokio::test]
async fn a_reply_that_is_not_an_event_stream_is_a_clear_error() {
    let ws = workspace();
    let completion = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "not streamed"}, "finish_reason": "stop"}]});
    let with_type = |ct: Option<&str>| Script {
        status: 200,
        headers: ct.map(|c| vec![("content-type".to_string(), c.to_string())]).unwrap_or_default(),
        pieces: vec![piece(0, completion.to_string())],
    };
    for (ct, expected) in [
        (Some("application/json"), "got application/json"),
        (Some("text/html; charset=utf-8"), "got text/html"),
        (None, "got no content type"),
    ] {
        let server = VlmServer::start(vec![with_type(ct), good()]).await;
        let t = openai_tool(server.openai_url());
        fails_with(&t, ws.path(), &["malformed", "expected an event stream", expected]).await;
        assert_eq!(server.requests().len(), 1, "not retried");
        succeeds(&t, ws.path(), "fine").await;
    }
    // Parameters and case in the content type are fine.
    let mut reply = openai_reply(&["typed"], 0);
    reply.headers = vec![("content-type".into(), "Text/Event-Stream; charset=utf-8".into())];
    let server = VlmServer::start(vec![reply]).await;
    succeeds(&openai_tool(server.openai_url()), ws.path(), "typed").await;
}

// ---------------------------------------------------------------------------------------------
// Where a key may go, and what an error may show

/// `mediagate read-image` against `url` with `env` set, the workspace `dir` (run off the async
/// runtime: it blocks).
async fn read_image_cli(dir: &Path, url: &str, env: &[(&str, &str)]) -> std::process::Output {
    let mut command = mediagate_command();
    command
        .args(["read-image", "icon.png", "--workspace", dir.to_str().unwrap(), "--vlm-url", url])
        .args(["--vlm-model", "test-vlm"])
        .env_remove(mediagate::facts::env::VLM_API_KEY)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
}

/// With the environment naming a proxy (every variable ureq and curl read), the key still goes
/// straight to the configured URL: the proxy, a loopback listener that counts connections, is
/// never contacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_environments_proxy_never_sees_the_key() {
    let server = VlmServer::start(vec![good()]).await;
    let proxy = RawServer::start(|_, stream| async move { drop(stream) }).await;
    let proxy_url = format!("http://{}", proxy.addr);
    let ws = workspace();
    let mut env = vec![(mediagate::facts::env::VLM_API_KEY, KEY)];
    for name in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
        env.push((name, proxy_url.as_str()));
    }
    let out = read_image_cli(ws.path(), &server.openai_url(), &env).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim_end(), "fine");
    assert_eq!(server.requests()[0].headers["authorization"], format!("Bearer {KEY}"));
    assert_eq!(proxy.connections(), 0, "the proxy from the environment was contacted");
}

/// `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` are the user's global keys: a configuration naming
/// another URL (a repository's MCP configuration, say) does not collect them. The provider's 401
/// then says which variable was withheld and what to set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vendors_keys_go_only_to_the_vendors_apis() {
    let ws = workspace();
    let collector = VlmServer::start(vec![good()]).await;
    let out = read_image_cli(ws.path(), &collector.openai_url(), &[("OPENAI_API_KEY", KEY)]).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!collector.requests()[0].headers.contains_key("authorization"), "OPENAI_API_KEY was sent");
    let out = read_image_cli(
        ws.path(),
        &collector.anthropic_url(),
        &[("ANTHROPIC_API_KEY", KEY), (mediagate::facts::env::VLM_API, "anthropic")],
    )
    .await;
    assert!(!collector.requests()[1].headers.contains_key("x-api-key"), "ANTHROPIC_API_KEY was sent: {out:?}");

    let refusing = VlmServer::start(vec![error_reply(401, json!({"error": {"message": "no key"}}), &[])]).await;
    let out = read_image_cli(ws.path(), &refusing.openai_url(), &[("OPENAI_API_KEY", KEY)]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no key") && stderr.contains("OPENAI_API_KEY"), "{stderr}");
    assert!(stderr.contains(mediagate::facts::env::VLM_API_KEY) && !stderr.contains(KEY), "{stderr}");

    // The own key variable is this configuration's own key: it goes to the URL it names.
    let own = VlmServer::start(vec![good()]).await;
    let out = read_image_cli(ws.path(), &own.openai_url(), &[(mediagate::facts::env::VLM_API_KEY, KEY)]).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(own.requests()[0].headers["authorization"], format!("Bearer {KEY}"));
}

/// Connect errors and transport errors, which the model reads as tool errors, name the server
/// without the user, password or query of the configured URL.
#[tokio::test]
async fn errors_show_the_url_without_its_credentials() {
    let ws = workspace();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    // No key: with the URL's credentials it would be refused before anything connects (two
    // `Authorization` headers), and this is about the words of a failed connect.
    let mut c = config(Api::OpenAi, format!("http://me:pw-secret@{closed}/v1?key=query-secret"));
    c.api_key = None;
    c.max_retries = 0;
    let err = fails_with(&tool(c), ws.path(), &["could not be reached", "connection refused"]).await;
    assert!(err.message.contains(&format!("{closed}/v1")), "{}", err.message);
    assert!(!err.message.contains("secret") && !err.message.contains("me@"), "{}", err.message);

    // A peer that hangs up: should the HTTP client's own message name the URL, it is shown without
    // them too.
    let hangs_up = RawServer::start(|_, stream| async move { drop(stream) }).await;
    let mut c = config(Api::OpenAi, format!("http://me:pw-secret@{}/v1?key=query-secret", hangs_up.addr));
    c.api_key = None;
    c.max_retries = 0;
    let err = fails_with(&tool(c), ws.path(), &[]).await;
    assert!(!err.message.contains("secret") && !err.message.contains("me@"), "{}", err.message);
}

/// A base URL with a query (`?api-version=…`, as some gateways want) gets the endpoint's path
/// before the query, not inside it.
#[tokio::test]
async fn a_base_url_with_a_query_gets_the_path_before_it() {
    let server = VlmServer::start(vec![good()]).await;
    let ws = workspace();
    succeeds(&openai_tool(format!("{}?api-version=2024-10-21", server.openai_url())), ws.path(), "fine").await;
    assert_eq!(server.requests()[0].path, "/v1/chat/completions");
}

/// A provider echoing the key in a body that is not JSON, the key straddling the point where the
/// message is cut: redacted first, so not even its start comes back.
#[tokio::test]
async fn a_key_straddling_the_cut_of_an_error_body_is_redacted_whole() {
    let ws = workspace();
    for before in [490, 495, 499] {
        let body = format!("{}{KEY} is not valid", "x".repeat(before));
        let script = Script {
            status: 401,
            headers: vec![("content-type".into(), "text/plain".into())],
            pieces: vec![piece(0, body)],
        };
        let server = VlmServer::start(vec![script]).await;
        let err = fails_with(&openai_tool(server.openai_url()), ws.path(), &["401"]).await;
        assert!(!err.message.contains(&KEY[..4]), "{before}: {}", err.message);
    }
}

/// A key refused for plain http is said in words, not as a Rust debug value — by the library and
/// by the command line.
#[tokio::test]
async fn a_refused_plain_http_key_is_said_in_words() {
    let e = match ReadImageTool::new(runtime(), Some(config(Api::OpenAi, "http://192.0.2.1/v1".into()))) {
        Ok(_) => panic!("a key over plain http was accepted"),
        Err(e) => format!("{e:#}"),
    };
    assert!(e.contains("refusing to send the API key in clear text"), "{e}");
    assert!(!e.contains("Unreachable") && !e.contains("VlmError") && !e.contains("(\""), "{e}");
    let ws = workspace();
    let out = read_image_cli(ws.path(), "http://192.0.2.1/v1", &[(mediagate::facts::env::VLM_API_KEY, KEY)]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    // One sentence on one `error:` line, the fix named, no debug value.
    assert!(stderr.starts_with("error: ") && stderr.trim_end().lines().count() == 1, "{stderr}");
    assert!(stderr.contains("refusing to send the API key in clear text to http://192.0.2.1/v1"), "{stderr}");
    assert!(stderr.contains("use https (--vlm-url https://192.0.2.1/v1)"), "{stderr}");
    assert!(!stderr.contains("Unreachable") && !stderr.contains("VlmError") && !stderr.contains("(\""), "{stderr}");
    // The library's error says it in words too, whatever the kind (`Display`, not the generated debug form).
    let e = mediagate::vlm::VlmClient::new(config(Api::OpenAi, "http://192.0.2.1/v1".into())).err().unwrap();
    assert!(matches!(e.kind(), mediagate::vlm::VlmErrorKind::Unreachable(_)), "{e:?}");
    assert!(e.to_string().starts_with("refusing to send the API key in clear text"), "{e}");
}
