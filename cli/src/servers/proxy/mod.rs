//! `mediagate proxy -- COMMAND [ARGS…]`: a stdio MCP proxy in front of any MCP server.
//!
//! It starts `COMMAND`, forwards every message both ways line by line (the MCP stdio framing:
//! one JSON-RPC message per line), and passes every message the server sends through the gate's
//! walk before the client sees it, whatever its method and wherever the media sits in it: answers
//! (`tools/call`, `tasks/result` of a task-augmented call, `resources/read`, `prompts/get` and
//! any other), server-initiated requests (`sampling/createMessage`), notifications, `error.data`,
//! and the media shapes without a block `type` (resource contents with a `blob`, `data:` URLs such
//! as icons). Every media block is admitted (possibly downsampled) or replaced in its slot by the
//! gate's text placeholder; a line is the server's byte for byte outside the blocks the gate
//! changed (spliced, not re-serialised), and a message with no `type`, `blob` or `data:` URL costs
//! no gate call. The client's messages pass to the server as they came.
//!
//! Defined answers (fail closed; the proxy never hangs on a peer):
//! - a client line that is not JSON: `-32700`; a batch, or an object that is not a JSON-RPC message
//!   (repeated keys, both `method` and `result`, included): `-32600`; a line over `--max-message`
//!   bytes: `-32600` — none is forwarded;
//! - a request the server has not answered within `--timeout` seconds: `-32001` to the client and
//!   `notifications/cancelled` to the server; a request the server is not reading its input for
//!   (`--max-message` bytes already wait for it): `-32603` at once, not forwarded;
//! - the server exits or closes its stdout: every open request gets `-32603` naming the exit, then
//!   the proxy exits 1;
//! - the server writes a line that is not a JSON-RPC message (both `method` and `result` included):
//!   its output can no longer be trusted to frame messages, so every open request gets `-32603`, the
//!   server is stopped, the proxy exits 1;
//! - the server sends a message over `--max-message` bytes: it is discarded without being held and
//!   every open request gets `-32603` (which request it answered cannot be known unread);
//! - a server message the gate cannot pass — a key repeated in any object (every JSON parser in use
//!   reads the last copy), JSON the gate cannot read, media inside media, a sandbox fault — is not
//!   forwarded: an answer becomes an `isError` tool result or `-32603`, a request is answered
//!   `-32603` to the server, a notification is dropped (each said on stderr).
//! - an answer is sent under the id the client wrote, even when the server wrote `"1"` as `1`.
//!
//! Memory is bounded: one line of at most `--max-message` bytes per direction is held at a time,
//! and each channel between the reader threads, the gate and the writers holds at most
//! `--max-message` bytes (a flood of notifications waits for the client to read).

mod channel;
mod envelope;
mod inspect;
mod threads;

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mediagate::Gate;
use mediagate::gate::{AdmitOptions, ToolResultAdmission};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use channel::{Receiver, SendError, Sender, channel};
use envelope::{
    INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, Params, Parsed, REQUEST_TIMEOUT, error_response,
    lone_surrogates_mended, parse, quote, span_of, with_id,
};
use inspect::Inspection;
use threads::{Line, read_lines, write_lines};

use crate::process::{fail, terminal_text};

/// How long the server may take to exit after its stdin closed before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// What `mediagate proxy` runs, and how it gates.
pub struct ProxyConfig {
    /// The options every gated block is judged with.
    pub options: AdmitOptions,
    /// Convert what no provider takes instead of refusing it.
    pub convert: bool,
    /// A request the server has not answered within this is answered with an error (`None`: wait).
    pub timeout: Option<Duration>,
    /// The largest message either side may send.
    pub max_message: usize,
    /// The MCP server to start, and its arguments.
    pub command: Vec<std::ffi::OsString>,
}

/// Runs the server `args.command` behind `gate`, which makes one call at a time: answers are gated
/// in order, in the one loop.
pub async fn proxy(gate: Gate, args: ProxyConfig) -> u8 {
    let name = args.command[0].to_string_lossy().into_owned();
    let mut child = match Command::new(&args.command[0])
        .args(&args.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return fail(format!("cannot start the MCP server `{name}`: {e}")),
    };
    let (Some(child_in), Some(child_out)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        return fail("the MCP server's stdio could not be piped");
    };
    let max = args.max_message;
    // Each of the four channels holds at most `--max-message` bytes (and one message however large).
    let (client_tx, client_rx) = channel(max);
    let (server_tx, server_rx) = channel(max);
    let (to_client, to_client_rx) = channel(max);
    let (to_server, to_server_rx) = channel(max);
    let runtime = tokio::runtime::Handle::current();
    let server_runtime = runtime.clone();
    std::thread::spawn(move || read_lines(std::io::stdin().lock(), max, client_tx, &runtime));
    std::thread::spawn(move || read_lines(child_out, max, server_tx, &server_runtime));
    let client_writer = std::thread::spawn(move || write_lines(std::io::stdout().lock(), to_client_rx));
    std::thread::spawn(move || write_lines(child_in, to_server_rx));

    let proxy = Proxy {
        gate,
        options: args.options,
        convert: args.convert,
        timeout: args.timeout,
        max,
        name,
        pending: HashMap::new(),
        to_client,
        to_server: Some(to_server),
    };
    eprintln!("mediagate proxy: gating `{}` (pid {})", proxy.name, child.id());
    let code = proxy.run(client_rx, server_rx, &mut child).await;
    // Everything queued for the client is written before the process ends.
    let _ = tokio::task::spawn_blocking(move || client_writer.join()).await;
    code
}

/// What the proxy does with a client request's answer.
#[derive(Clone)]
enum Seat {
    /// `tools/call`: the result through the gate; the label is the tool's name.
    ToolResult(String),
    /// `resources/read`: each blob content through the gate; the label is the URI.
    Resource(String),
    /// `prompts/get`: the messages through the gate; the label is the prompt's name.
    Prompt(String),
    /// Anything else: passed through.
    None,
}

impl Seat {
    /// What the gate's words name the answer by.
    fn label(&self) -> Option<&str> {
        match self {
            Seat::ToolResult(l) | Seat::Resource(l) | Seat::Prompt(l) => Some(l),
            Seat::None => None,
        }
    }
}

/// A server line through the gate.
#[derive(Default)]
struct GatedLine {
    line: Vec<u8>,
    /// A block inside `result.structuredContent` was refused and replaced.
    refused_in_structured: bool,
    /// The items of `result.contents` the gate's walk replaced whole (by text with no `uri`).
    replaced_contents: Vec<usize>,
}

struct PendingRequest {
    method: String,
    /// The id as the client sent it, echoed in every answer.
    id: Value,
    seat: Seat,
    deadline: Option<Instant>,
}

struct Proxy {
    gate: Gate,
    options: AdmitOptions,
    convert: bool,
    timeout: Option<Duration>,
    max: usize,
    name: String,
    /// The client's requests the server has not answered, by their id's JSON text.
    pending: HashMap<String, PendingRequest>,
    to_client: Sender<Vec<u8>>,
    /// `None` once the client has gone (the server's stdin is closed).
    to_server: Option<Sender<Vec<u8>>>,
}

impl Proxy {
    async fn run(mut self, mut client: Receiver<Line>, mut server: Receiver<Line>, child: &mut Child) -> u8 {
        loop {
            let next_deadline = self.pending.values().filter_map(|p| p.deadline).min();
            tokio::select! {
                line = client.recv() => match line.map(|l| l.item) {
                    Some(Line::Message(m)) => self.on_client(m).await,
                    Some(Line::TooLong(n)) => {
                        let message = format!(
                            "the message ({n} bytes) exceeds the {} bytes the proxy accepts; it was not forwarded",
                            self.max
                        );
                        self.send_client(error_response(&Value::Null, INVALID_REQUEST, message)).await;
                    }
                    Some(Line::End(_)) | None => {
                        // The client is gone: close the server's stdin and give it time to exit.
                        self.to_server = None;
                        return self.drain_after_client(&mut server, child).await;
                    }
                },
                line = server.recv() => match line.map(|l| l.item) {
                    Some(Line::Message(m)) => {
                        if let Err(why) = self.on_server(m).await {
                            self.fail_pending(&why).await;
                            eprintln!("mediagate proxy: {why}; stopping the server");
                            let _ = child.kill();
                            let _ = child.wait();
                            return 1;
                        }
                    }
                    Some(Line::TooLong(n)) => {
                        let why = format!(
                            "the MCP server `{}` sent a message of {n} bytes, over the {} bytes the proxy accepts; \
                             it was discarded",
                            self.name, self.max
                        );
                        eprintln!("mediagate proxy: {why}");
                        self.fail_pending(&why).await;
                    }
                    line @ (Some(Line::End(_)) | None) => {
                        let error = match line { Some(Line::End(e)) => e, _ => None };
                        let status = wait_briefly(child).await;
                        let mut why = format!("the MCP server `{}` closed its output ({status})", self.name);
                        if let Some(e) = error {
                            why.push_str(&format!(": {e}"));
                        }
                        eprintln!("mediagate proxy: {why}");
                        self.fail_pending(&format!("{why} before answering")).await;
                        return 1;
                    }
                },
                () = sleep_until(next_deadline) => self.expire().await,
            }
        }
    }

    /// After the client closed its end: the server's remaining messages are read (answers still
    /// pass the gate, though nobody may read them) until it exits or the grace period ends.
    async fn drain_after_client(&mut self, server: &mut Receiver<Line>, child: &mut Child) -> u8 {
        let grace = tokio::time::sleep(EXIT_GRACE);
        tokio::pin!(grace);
        loop {
            tokio::select! {
                line = server.recv() => match line.map(|l| l.item) {
                    Some(Line::Message(_)) | Some(Line::TooLong(_)) => continue,
                    Some(Line::End(_)) | None => break,
                },
                () = &mut grace => {
                    eprintln!("mediagate proxy: the MCP server `{}` did not exit after its input closed; killing it", self.name);
                    let _ = child.kill();
                    break;
                }
            }
        }
        let _ = child.wait();
        0
    }

    /// Waits while the client is not reading: what it has not read it cannot act on.
    async fn send_client(&self, message: Vec<u8>) {
        let len = message.len();
        let _ = self.to_client.send(message, len).await;
    }

    /// Never waits: a server that stops reading its input must not stop the proxy (timeouts,
    /// answers to the client). `Err(Full)` when its queue is over budget; the message is dropped.
    fn send_server(&self, message: Vec<u8>) -> Result<(), SendError> {
        let len = message.len();
        self.to_server.as_ref().map_or(Err(SendError::Closed), |tx| tx.try_send(message, len))
    }

    async fn on_client(&mut self, line: Vec<u8>) {
        let (id, method, params) = {
            let scanned = lone_surrogates_mended(&line);
            let envelope = match parse(&scanned) {
                Parsed::Message(e) => e,
                Parsed::NotJson(e) => {
                    let message = format!("parse error: the message is not JSON ({e}); it was not forwarded");
                    return self.send_client(error_response(&Value::Null, PARSE_ERROR, message)).await;
                }
                Parsed::NotMessage(e) => {
                    let message = format!("invalid request: {e}; it was not forwarded");
                    return self.send_client(error_response(&Value::Null, INVALID_REQUEST, message)).await;
                }
            };
            (envelope.id.clone(), envelope.method.clone(), envelope.params())
        };
        let request = match (method, id) {
            (Some(method), Some(id)) => {
                let key = id.to_string();
                if self.pending.contains_key(&key) {
                    let message = format!("invalid request: the id {key} is already in use by an open request");
                    return self.send_client(error_response(&id, INVALID_REQUEST, message)).await;
                }
                let seat = seat_of(&method, params);
                let deadline = self.timeout.map(|t| Instant::now() + t);
                self.pending
                    .insert(key.clone(), PendingRequest { method: method.clone(), id: id.clone(), seat, deadline });
                Some((key, id, method))
            }
            (Some(method), None) if method == "notifications/cancelled" => {
                // The client will not read the answer: it is dropped if it still comes.
                if let Some(id) = params.request_id {
                    self.pending.remove(&id.to_string());
                }
                None
            }
            _ => None,
        };
        match (self.send_server(line), request) {
            (Ok(()), _) | (Err(_), None) => {}
            (Err(e), Some((key, id, method))) => {
                self.pending.remove(&key);
                let why = match e {
                    SendError::Full => format!(
                        "the MCP server `{}` is not reading its input ({} bytes wait for it)",
                        self.name, self.max
                    ),
                    SendError::Closed => format!("the MCP server `{}` has closed its input", self.name),
                };
                let message = format!("`{method}` was not forwarded: {why}");
                self.send_client(error_response(&id, INTERNAL_ERROR, message)).await;
            }
        }
    }

    /// A server message, whatever its method: every media block in it passes the gate before the
    /// client sees it (answers, server-initiated requests such as `sampling/createMessage`,
    /// notifications, `error.data`, icons). What the gate cannot check is refused, not forwarded.
    /// `Err` when the line is not a JSON-RPC message.
    async fn on_server(&mut self, line: Vec<u8>) -> Result<(), String> {
        // What the proxy reads of the line, owned, so the line itself can be forwarded as it came.
        let (id, method) = {
            let scanned = lone_surrogates_mended(&line);
            let envelope = match parse(&scanned) {
                Parsed::Message(e) => e,
                Parsed::NotJson(e) => {
                    return Err(format!(
                        "the MCP server `{}` wrote a line that is not JSON ({e}): {}",
                        self.name,
                        quote(&line)
                    ));
                }
                Parsed::NotMessage(e) => {
                    return Err(format!("the MCP server `{}` wrote a line that is not a message ({e})", self.name));
                }
            };
            (envelope.id.clone(), envelope.method.clone())
        };
        match (method, id) {
            (None, id) => self.on_answer(id.unwrap_or(Value::Null), line).await,
            (Some(method), Some(id)) => match self.gate_message(&method, line, &Seat::None).await {
                Ok(gated) => self.send_client(gated.line).await,
                Err(why) => {
                    eprintln!("mediagate proxy: refused the server's `{method}` request: {why}");
                    let message =
                        format!("mediagate refused the request `{method}`: {why}; it was not passed to the client");
                    let _ = self.send_server(error_response(&id, INTERNAL_ERROR, message));
                }
            },
            (Some(method), None) => match self.gate_message(&method, line, &Seat::None).await {
                Ok(gated) => self.send_client(gated.line).await,
                Err(why) => eprintln!("mediagate proxy: dropped the server's `{method}` notification: {why}"),
            },
        }
        Ok(())
    }

    /// An answer to one of the client's requests, through the gate in the seat its request chose.
    async fn on_answer(&mut self, id: Value, mut line: Vec<u8>) {
        // A server may write the client's id `"1"` back as `1` (or the reverse): the answer is
        // still that request's, and the client gets it under the id it sent.
        let same_digits = match &id {
            Value::Number(n) => Some(Value::String(n.to_string()).to_string()),
            Value::String(s) if s.parse::<u64>().is_ok_and(|n| n.to_string() == *s) => Some(s.clone()),
            _ => None,
        };
        let key = id.to_string();
        let request = match self.pending.remove(&key) {
            Some(request) => request,
            None => match same_digits.and_then(|other| self.pending.remove(&other)) {
                Some(request) => {
                    line = with_id(&line, &request.id).unwrap_or(line);
                    request
                }
                None => {
                    // Answered already (timed out or cancelled) or never asked: nobody reads it.
                    eprintln!("mediagate proxy: dropped an answer to {id}, which no open request has");
                    return;
                }
            },
        };
        let id = request.id.clone();
        let label = request.seat.label().unwrap_or(&request.method).to_string();
        let gated = match self.gate_message(&label, line, &request.seat).await {
            Ok(gated) => gated,
            Err(why) => {
                let answer = match &request.seat {
                    // A tool's caller reads a tool error; the model sees why.
                    Seat::ToolResult(tool) => {
                        let text =
                            format!("[mediagate] The result of tool \"{tool}\" was not passed to the model: {why}.");
                        let result = json!({"content": [{"type": "text", "text": text}], "isError": true});
                        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string().into_bytes()
                    }
                    _ => {
                        let message = format!("mediagate refused the answer to `{}`: {why}", request.method);
                        error_response(&id, INTERNAL_ERROR, message)
                    }
                };
                return self.send_client(answer).await;
            }
        };
        let line = match (&request.seat, gated.refused_in_structured) {
            (Seat::ToolResult(tool), true) => match structured_content_withheld(&gated.line, tool) {
                Ok(line) => line,
                Err(e) => error_response(&id, INTERNAL_ERROR, e),
            },
            (Seat::Resource(uri), _) if !gated.replaced_contents.is_empty() => {
                match contents_named(&gated.line, uri, &gated.replaced_contents) {
                    Ok(line) => line,
                    Err(e) => error_response(&id, INTERNAL_ERROR, e),
                }
            }
            _ => gated.line,
        };
        self.send_client(line).await;
    }

    /// With `--convert` the convert component checks it: SVG, BMP, TIFF, ICO blocks (and an
    /// animated GIF for a profile that refuses animation) are converted instead of replaced.
    async fn admit(&self, label: &str, json: &str) -> Result<ToolResultAdmission, String> {
        let admitted = self.gate.admit_tool_result(label, json, self.convert, self.options).await.map(|a| a.answer);
        if let Ok(admission) = &admitted {
            for made in &admission.conversions {
                let line = format!("{label}{} converted from {} to {}: {}", made.path, made.from, made.to, made.note);
                eprintln!("mediagate proxy: {}", terminal_text(&line));
            }
        }
        admitted.map_err(|e| format!("the gate could not check it ({e})"))
    }

    /// One server message through the gate, whole: the gate's walk (which finds every typed media
    /// block, wherever it sits) over the entire line — `result`, `params`, `error.data` and any
    /// other member alike — then the media shapes without a `type` ([`inspect`]). The line
    /// is the server's byte for byte outside the blocks the gate changed. `Err`: the message
    /// cannot be passed (a repeated key, not readable by the gate, a sandbox fault), in words.
    async fn gate_message(&self, label: &str, line: Vec<u8>, seat: &Seat) -> Result<GatedLine, String> {
        let mut text = String::from_utf8(line).map_err(|e| format!("it is not UTF-8 ({e})"))?;
        let mut found = inspect_line(&text)?;
        if let Some(key) = &found.repeated_key {
            return Err(format!(
                "an object in it repeats the key `{key}`; which copy a client reads is not defined, so no copy is \
                 passed"
            ));
        }
        let mut gated = GatedLine::default();
        if found.typed {
            let admission = self.admit(label, &text).await?;
            if admission.refused.iter().any(|r| r.path.is_empty()) {
                return Err(whole_refusal_words(admission.content.as_deref()));
            }
            for refused in &admission.refused {
                gated.refused_in_structured |= refused.path.starts_with("/result/structuredContent");
                if let Some(n) = refused.path.strip_prefix("/result/contents/").and_then(|n| n.parse().ok()) {
                    gated.replaced_contents.push(n);
                }
            }
            if let Some(content) = admission.content.filter(|c| *c != text) {
                text = content;
                found = inspect_line(&text)?;
            }
        }
        if found.has_untyped_media() {
            let (gated_text, refused_spans) = self.gate_untyped(label, &text, &found).await?;
            text = gated_text;
            if matches!(seat, Seat::ToolResult(_))
                && let Some(s) = structured_span(&text)
            {
                gated.refused_in_structured |= refused_spans.iter().any(|r| s.start <= r.start && r.end <= s.end);
            }
        }
        gated.line = text.into_bytes();
        Ok(gated)
    }

    /// The media the gate's walk does not find by itself — objects with a `blob` (resource
    /// contents) and `data:` URLs — each checked in one gate call as the block a client would make
    /// of it: an admitted one is written back from the gate's bytes, a refused one replaced in its
    /// slot (a blob's object by a text content of the same `uri`, a URL by the gate's words).
    /// Returns the text and the spans (in `text`) of what was refused.
    async fn gate_untyped(
        &self,
        label: &str,
        text: &str,
        found: &Inspection,
    ) -> Result<(String, Vec<std::ops::Range<usize>>), String> {
        enum Item<'a> {
            Blob(Option<&'a str>),
            DataUrl,
        }
        let mended = lone_surrogates_mended(text.as_bytes());
        let mut items: Vec<(std::ops::Range<usize>, Item)> = found
            .blobs
            .iter()
            .map(|b| (b.span.clone(), Item::Blob(b.uri.as_deref())))
            .chain(found.data_urls.iter().map(|r| (r.clone(), Item::DataUrl)))
            .collect();
        items.sort_by_key(|(span, _)| span.start);
        if items.windows(2).any(|w| w[1].0.start < w[0].0.end) {
            return Err("media sits inside other media in it (a `data:` URL or a blob inside a blob's object); \
                        which a client reads is not defined"
                .into());
        }
        let mut wrapped = Vec::with_capacity(items.len());
        for (span, item) in &items {
            wrapped.push(match item {
                Item::Blob(_) => format!(r#"{{"type":"resource","resource":{}}}"#, &text[span.clone()]),
                Item::DataUrl => {
                    let url: String = serde_json::from_slice(&mended[span.clone()])
                        .map_err(|e| format!("a `data:` URL in it cannot be read ({e})"))?;
                    let url = inspect::as_url_parser_reads(&url);
                    json!({"type": "image_url", "image_url": {"url": url}}).to_string()
                }
            });
        }
        let wrapped = format!("[{}]", wrapped.join(","));
        let admission = self.admit(label, &wrapped).await?;
        if admission.refused.iter().any(|r| r.path.is_empty()) {
            return Err(whole_refusal_words(admission.content.as_deref()));
        }
        let gated: Vec<Value> = serde_json::from_str(admission.content.as_deref().unwrap_or(&wrapped))
            .map_err(|e| format!("the gate's output for its media cannot be read back ({e})"))?;
        let refused: std::collections::HashSet<String> = admission.refused.iter().map(|r| r.path.clone()).collect();
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        let mut refused_spans = Vec::new();
        for (n, (span, item)) in items.iter().enumerate() {
            let block = gated.get(n).ok_or("the gate's output for its media is short")?;
            let was_refused = refused.contains(&format!("/{n}"));
            let words = || block.get("text").and_then(Value::as_str).unwrap_or("[mediagate] refused").to_string();
            let replacement = match (item, was_refused) {
                (Item::Blob(uri), true) => {
                    json!({"uri": uri.unwrap_or(label), "mimeType": "text/plain", "text": words()}).to_string()
                }
                (Item::DataUrl, true) => Value::String(words()).to_string(),
                (Item::Blob(_), false) => {
                    let resource = block.get("resource").ok_or("the gate lost a resource")?;
                    as_sent_unless_changed(&text[span.clone()], &mended[span.clone()], resource)
                }
                (Item::DataUrl, false) => {
                    let url = block.pointer("/image_url/url").ok_or("the gate lost a data URL")?;
                    as_sent_unless_changed(&text[span.clone()], &mended[span.clone()], url)
                }
            };
            out.push_str(&text[at..span.start]);
            if was_refused {
                refused_spans.push(out.len()..out.len() + replacement.len());
            }
            out.push_str(&replacement);
            at = span.end;
        }
        out.push_str(&text[at..]);
        Ok((out, refused_spans))
    }

    /// Every open request is answered with an error (the server can no longer answer it).
    async fn fail_pending(&mut self, why: &str) {
        let pending: Vec<(String, PendingRequest)> = self.pending.drain().collect();
        for (_, request) in pending {
            let message = format!("`{}` was not answered: {why}", request.method);
            self.send_client(error_response(&request.id, INTERNAL_ERROR, message)).await;
        }
    }

    /// Requests past their deadline: an error to the client, a cancellation to the server.
    async fn expire(&mut self) {
        let now = Instant::now();
        let expired: Vec<String> =
            self.pending.iter().filter(|(_, p)| p.deadline.is_some_and(|d| d <= now)).map(|(k, _)| k.clone()).collect();
        let seconds = self.timeout.map_or(0, |t| t.as_secs());
        for key in expired {
            let Some(request) = self.pending.remove(&key) else { continue };
            let id = request.id;
            let message = format!(
                "the MCP server `{}` did not answer `{}` within {seconds} s (mediagate proxy --timeout); \
                 the request was cancelled",
                self.name, request.method
            );
            self.send_client(error_response(&id, REQUEST_TIMEOUT, message)).await;
            let mut params = Map::new();
            params.insert("requestId".into(), id);
            params.insert("reason".into(), Value::String(format!("timed out after {seconds} s in mediagate proxy")));
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params});
            let _ = self.send_server(cancel.to_string().into_bytes());
        }
    }
}

fn seat_of(method: &str, params: Params) -> Seat {
    match method {
        "tools/call" => Seat::ToolResult(params.name.unwrap_or_default()),
        // A task's result is the result of the `tools/call` that made the task.
        "tasks/result" => Seat::ToolResult(match params.task_id {
            Some(Value::String(id)) => format!("task {id}"),
            Some(id) => format!("task {id}"),
            None => "task".into(),
        }),
        "resources/read" => Seat::Resource(params.uri.unwrap_or_default()),
        "prompts/get" => Seat::Prompt(params.name.unwrap_or_default()),
        _ => Seat::None,
    }
}

/// What goes in the place of `sent` (JSON text; `read` is it as the gate reads it, lone
/// surrogates mended) when the gate admitted it as `admitted`: the server's own text when the
/// gate changed nothing in it (written again, a value would lose its members' order and its
/// spelling), else the admitted value.
fn as_sent_unless_changed(sent: &str, read: &[u8], admitted: &Value) -> String {
    match serde_json::from_slice::<Value>(read) {
        Ok(value) if value == *admitted => sent.to_string(),
        _ => admitted.to_string(),
    }
}

/// [`inspect::inspect`] over the line as the gate reads it (lone surrogates mended).
fn inspect_line(text: &str) -> Result<Inspection, String> {
    let mended = lone_surrogates_mended(text.as_bytes());
    let mended = std::str::from_utf8(&mended).map_err(|e| format!("it is not UTF-8 ({e})"))?;
    inspect::inspect(mended).map_err(|e| format!("it is not JSON the gate can read ({e})"))
}

/// The gate's words for a message it refused whole (its content is one text block).
fn whole_refusal_words(content: Option<&str>) -> String {
    let blocks: Option<Value> = content.and_then(|c| serde_json::from_str(c).ok());
    match blocks.as_ref().and_then(|b| b.pointer("/0/text")).and_then(Value::as_str) {
        Some(text) => text.trim_start_matches("[mediagate] ").trim_end_matches('.').to_string(),
        None => "the gate could not read it".into(),
    }
}

/// Where `result.structuredContent` sits in an answer line.
fn structured_span(text: &str) -> Option<std::ops::Range<usize>> {
    #[derive(serde::Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        result: Option<&'a RawValue>,
    }
    #[derive(serde::Deserialize)]
    struct Structured<'a> {
        #[serde(borrow, rename = "structuredContent")]
        structured: Option<&'a RawValue>,
    }
    let mended = lone_surrogates_mended(text.as_bytes());
    let answer: Answer = serde_json::from_slice(&mended).ok()?;
    let structured: Structured = serde_json::from_str(answer.result?.get()).ok()?;
    Some(span_of(&mended, structured.structured?))
}

/// A tool result with a block refused inside `structuredContent`: that no longer matches the
/// tool's output schema, so it is withheld and the result marked `isError`, with a note why.
fn structured_content_withheld(line: &[u8], tool: &str) -> Result<Vec<u8>, String> {
    let mut answer: Value =
        serde_json::from_slice(line).map_err(|e| format!("the gate's output cannot be rebuilt as JSON ({e})"))?;
    if let Some(object) = answer.get_mut("result").and_then(Value::as_object_mut) {
        object.remove("structuredContent");
        object.insert("isError".into(), Value::Bool(true));
        let note = json!({
            "type": "text",
            "text": format!(
                "[mediagate] The structured result of tool \"{tool}\" was withheld: a media block in it was \
                 refused and replaced, so it no longer matches the tool's output schema."
            ),
        });
        match object.get_mut("content").and_then(Value::as_array_mut) {
            Some(content) => content.push(note),
            None => {
                object.insert("content".into(), Value::Array(vec![note]));
            }
        }
    }
    Ok(answer.to_string().into_bytes())
}

/// A `resources/read` answer whose items the gate replaced by text blocks: each is given the
/// `uri` (the request's) and `mimeType` a resource content needs, so clients can read it.
fn contents_named(line: &[u8], uri: &str, replaced: &[usize]) -> Result<Vec<u8>, String> {
    let mut answer: Value =
        serde_json::from_slice(line).map_err(|e| format!("the gate's output cannot be rebuilt as JSON ({e})"))?;
    if let Some(contents) = answer.pointer_mut("/result/contents").and_then(Value::as_array_mut) {
        for &n in replaced {
            if let Some(item) = contents.get_mut(n).and_then(Value::as_object_mut) {
                item.remove("type");
                item.entry("uri").or_insert_with(|| Value::String(uri.to_string()));
                item.insert("mimeType".into(), Value::String("text/plain".into()));
            }
        }
    }
    Ok(answer.to_string().into_bytes())
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// The server's exit status if it has exited or exits within a moment, in words.
async fn wait_briefly(child: &mut Child) -> String {
    for _ in 0..20 {
        match child.try_wait() {
            Ok(Some(status)) => return status.to_string(),
            Ok(None) => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(e) => return format!("its status is unknown: {e}"),
        }
    }
    "it is still running".to_string()
}
