//! `mediagate proxy -- COMMAND [ARGS…]`: a stdio MCP proxy in front of any MCP server.
//!
//! It starts `COMMAND`, forwards every message both ways line by line (the MCP stdio framing:
//! one JSON-RPC message per line), and passes three kinds of answer through the gate's
//! tool-result seat before the client sees them: the `result` of `tools/call`, the `contents` of
//! `resources/read` and the `messages` of `prompts/get`. Every media block, wherever it sits, is
//! admitted (possibly downsampled) or replaced in its slot by the gate's text placeholder.
//! Everything else — notifications, progress, cancellation, pings, server-initiated requests and
//! the client's answers to them — passes through byte for byte, and a gated answer is the
//! server's line byte for byte outside the blocks the gate changed (spliced, not re-serialised).
//!
//! Defined answers (fail closed; the proxy never hangs on a peer):
//! - a client line that is not JSON: `-32700`; a batch, or an object that is not a JSON-RPC message
//!   (repeated keys included): `-32600`; a line over `--max-message` bytes: `-32600` — none is
//!   forwarded;
//! - a request the server has not answered within `--timeout` seconds: `-32001` to the client and
//!   `notifications/cancelled` to the server;
//! - the server exits or closes its stdout: every open request gets `-32603` naming the exit, then
//!   the proxy exits 1;
//! - the server writes a line that is not a JSON-RPC message: its output can no longer be trusted
//!   to frame messages, so every open request gets `-32603`, the server is stopped, the proxy exits 1;
//! - the server sends a message over `--max-message` bytes: it is discarded without being held and
//!   every open request gets `-32603` (which request it answered cannot be known unread);
//! - a gated answer the gate cannot check (a sandbox fault) is refused: an `isError` tool result,
//!   or `-32603` for `resources/read` and `prompts/get`.
//!
//! Memory is bounded: one line of at most `--max-message` bytes per direction is held at a time,
//! and the channels between the reader threads, the gate and the writers are bounded (a flood of
//! notifications waits for the client to read).

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use clap::Args;
use mediagate::Gate;
use mediagate::gate::{AdmitOptions, ToolResultAdmission};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{GateArgs, fail};

/// JSON-RPC error codes the proxy answers with.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INTERNAL_ERROR: i64 = -32603;
/// The code the official SDKs use for a request that timed out.
const REQUEST_TIMEOUT: i64 = -32001;

/// Messages in flight per channel between the threads and the gate.
const CHANNEL_DEPTH: usize = 16;
/// How long the server may take to exit after its stdin closed before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);
/// How much of a garbage line is quoted in the error.
const QUOTE_CHARS: usize = 120;

#[derive(Args)]
pub struct ProxyArgs {
    #[command(flatten)]
    gate: GateArgs,
    /// Answer a request the server has not answered within this many seconds with an error, and
    /// cancel it downstream (0: wait for ever).
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// The largest message, in bytes, either side may send; larger ones are answered with an error.
    #[arg(long, default_value_t = 64 * 1024 * 1024)]
    max_message: usize,
    /// The MCP server to start, and its arguments (after `--`).
    #[arg(last = true, required = true, num_args = 1..)]
    command: Vec<OsString>,
}

pub async fn proxy(args: ProxyArgs) -> u8 {
    // One gate call at a time: answers are gated in order, in the one loop.
    let gate = match super::gate(super::Calls::Many { instances: 1 }) {
        Ok(g) => g,
        Err(code) => return code,
    };
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
    let (client_tx, client_rx) = mpsc::channel(CHANNEL_DEPTH);
    let (server_tx, server_rx) = mpsc::channel(CHANNEL_DEPTH);
    let (to_client, to_client_rx) = mpsc::channel(CHANNEL_DEPTH);
    let (to_server, to_server_rx) = mpsc::channel(CHANNEL_DEPTH);
    std::thread::spawn(move || read_lines(std::io::stdin().lock(), max, client_tx));
    std::thread::spawn(move || read_lines(child_out, max, server_tx));
    let client_writer = std::thread::spawn(move || write_lines(std::io::stdout().lock(), to_client_rx));
    std::thread::spawn(move || write_lines(child_in, to_server_rx));

    let options = args.gate.options(gate.default_options());
    let proxy = Proxy {
        gate,
        options,
        convert: args.gate.convert,
        timeout: (args.timeout > 0).then(|| Duration::from_secs(args.timeout)),
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

/// One line read from a peer.
enum Line {
    Message(Vec<u8>),
    /// A line over the limit, discarded as it was read; its length.
    TooLong(u64),
    /// The peer closed its end (or reading failed: the error).
    End(Option<String>),
}

/// Reads newline-delimited messages, each at most `max` bytes held; longer lines are discarded as
/// they stream past. Blank lines are skipped.
fn read_lines(reader: impl Read, max: usize, tx: mpsc::Sender<Line>) {
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::new();
    let mut length: u64 = 0;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.blocking_send(Line::End(Some(e.to_string())));
                return;
            }
        };
        if available.is_empty() {
            // End of stream: a last line without its newline still counts.
            if length > 0 && !finish_line(&mut line, &mut length, max, &tx) {
                return;
            }
            let _ = tx.blocking_send(Line::End(None));
            return;
        }
        let (chunk, ends_line) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], true),
            None => (available, false),
        };
        length += chunk.len() as u64;
        if length <= max as u64 {
            line.extend_from_slice(chunk);
        } else if !line.is_empty() {
            line = Vec::new(); // over the limit: nothing more of it is held
        }
        let used = chunk.len() + usize::from(ends_line);
        reader.consume(used);
        if ends_line && !finish_line(&mut line, &mut length, max, &tx) {
            return;
        }
    }
}

/// Sends the line just completed; false when the receiver is gone.
fn finish_line(line: &mut Vec<u8>, length: &mut u64, max: usize, tx: &mpsc::Sender<Line>) -> bool {
    let total = std::mem::take(length);
    let message = std::mem::take(line);
    if total > max as u64 {
        return tx.blocking_send(Line::TooLong(total)).is_ok();
    }
    let trimmed = message.trim_ascii();
    if trimmed.is_empty() {
        return true;
    }
    let message = if trimmed.len() == message.len() { message } else { trimmed.to_vec() };
    tx.blocking_send(Line::Message(message)).is_ok()
}

/// Writes each message and a newline, flushing after each; ends when the channel closes or the
/// peer stops reading.
fn write_lines(mut writer: impl Write, mut rx: mpsc::Receiver<Vec<u8>>) {
    while let Some(message) = rx.blocking_recv() {
        if writer.write_all(&message).and_then(|()| writer.write_all(b"\n")).and_then(|()| writer.flush()).is_err() {
            return;
        }
    }
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

struct PendingRequest {
    method: String,
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
    to_client: mpsc::Sender<Vec<u8>>,
    /// `None` once the client has gone (the server's stdin is closed).
    to_server: Option<mpsc::Sender<Vec<u8>>>,
}

/// The members of a JSON-RPC message the proxy reads; repeated members are refused by serde.
/// `params`, `result` and `error` stay raw text of the line: they are read only where the proxy
/// needs a member of them, and an answer the gate changes is spliced back into the line, so what
/// serde_json cannot represent (`1e400`, lone surrogates, 30-digit integers) and the server's own
/// key order and spacing reach the client as the server wrote them.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    method: Option<String>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

/// The members of a request's `params` the proxy reads.
#[derive(serde::Deserialize, Default)]
struct Params {
    name: Option<String>,
    uri: Option<String>,
    #[serde(rename = "requestId")]
    request_id: Option<Value>,
}

impl Envelope<'_> {
    /// The `params` members the proxy reads; nothing when absent or not an object of that shape.
    fn params(&self) -> Params {
        self.params.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_default()
    }
}

/// A gated answer: the new `result` text to splice into the server's line, or a result rebuilt.
enum Gated {
    Splice(String),
    Rebuilt(Value),
}

/// Tells `"id": null` (present) from no `id` at all.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

enum Parsed<'a> {
    Message(Envelope<'a>),
    NotJson(String),
    NotMessage(String),
}

/// The line with each lone surrogate escape written as `\ufffd`, the same length, so that serde_json
/// (which refuses them, though JSON's grammar allows them) reads it and every span of the copy is a
/// span of the line. The gate does the same for the text it is given (guest `tool_result/scan.rs`).
fn lone_surrogates_mended(line: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let surrogate_at = |i: usize| {
        let hex = line.get(i + 2..i + 6).and_then(|h| std::str::from_utf8(h).ok());
        let unit = hex.and_then(|h| u16::from_str_radix(h, 16).ok());
        unit.filter(|u| line[i + 1] == b'u' && (0xD800..=0xDFFF).contains(u))
    };
    let mut mended = std::borrow::Cow::Borrowed(line);
    let mut i = 0;
    while let Some(at) = line[i..].iter().position(|&b| b == b'\\') {
        i += at;
        i += match surrogate_at(i) {
            Some(0xD800..=0xDBFF) if surrogate_at(i + 6).is_some_and(|low| low >= 0xDC00) => 12,
            Some(_) => {
                mended.to_mut()[i + 2..i + 6].copy_from_slice(b"fffd");
                6
            }
            None => 2, // any other escape, `\\` included, skipped whole
        };
    }
    mended
}

fn parse(line: &[u8]) -> Parsed<'_> {
    match serde_json::from_slice::<Envelope>(line) {
        Ok(e) if e.method.is_some() || e.result.is_some() || e.error.is_some() => Parsed::Message(e),
        Ok(_) => Parsed::NotMessage("the object has no `method`, `result` or `error`".into()),
        Err(e) => {
            // Told apart only now, on the rare bad line: a second pass that checks the syntax alone.
            if let Err(syntax) = serde_json::from_slice::<serde::de::IgnoredAny>(line) {
                return Parsed::NotJson(syntax.to_string());
            }
            Parsed::NotMessage(match line.trim_ascii_start().first() {
                Some(b'[') => "the message is a batch (an array); MCP sends one message per line".into(),
                Some(b'{') => format!("the object is not a JSON-RPC message: {e}"),
                _ => "the message is not an object".into(),
            })
        }
    }
}

/// Where `raw` (borrowed from `line`) sits in `line`.
fn span_of(line: &[u8], raw: &RawValue) -> std::ops::Range<usize> {
    let start = raw.get().as_ptr() as usize - line.as_ptr() as usize;
    start..start + raw.get().len()
}

fn error_response(id: &Value, code: i64, message: impl Into<String>) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}}).to_string().into_bytes()
}

fn quote(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut quoted: String = text.chars().take(QUOTE_CHARS).collect();
    if text.chars().count() > QUOTE_CHARS {
        quoted.push('…');
    }
    quoted
}

impl Proxy {
    async fn run(
        mut self,
        mut client: mpsc::Receiver<Line>,
        mut server: mpsc::Receiver<Line>,
        child: &mut Child,
    ) -> u8 {
        loop {
            let next_deadline = self.pending.values().filter_map(|p| p.deadline).min();
            tokio::select! {
                line = client.recv() => match line {
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
                line = server.recv() => match line {
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
    async fn drain_after_client(&mut self, server: &mut mpsc::Receiver<Line>, child: &mut Child) -> u8 {
        let grace = tokio::time::sleep(EXIT_GRACE);
        tokio::pin!(grace);
        loop {
            tokio::select! {
                line = server.recv() => match line {
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

    async fn send_client(&self, message: Vec<u8>) {
        let _ = self.to_client.send(message).await;
    }

    async fn send_server(&self, message: Vec<u8>) {
        if let Some(tx) = &self.to_server {
            let _ = tx.send(message).await;
        }
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
        match (method, id) {
            (Some(method), Some(id)) => {
                let key = id.to_string();
                if self.pending.contains_key(&key) {
                    let message = format!("invalid request: the id {key} is already in use by an open request");
                    return self.send_client(error_response(&id, INVALID_REQUEST, message)).await;
                }
                let seat = seat_of(&method, params);
                let deadline = self.timeout.map(|t| Instant::now() + t);
                self.pending.insert(key, PendingRequest { method, seat, deadline });
            }
            (Some(method), None) if method == "notifications/cancelled" => {
                // The client will not read the answer: it is dropped if it still comes.
                if let Some(id) = params.request_id {
                    self.pending.remove(&id.to_string());
                }
            }
            _ => {}
        }
        self.send_server(line).await;
    }

    /// A server message: answers to the client's requests pass the gate where they carry media;
    /// everything else is forwarded as it came. `Err` when the line is not a JSON-RPC message.
    async fn on_server(&mut self, line: Vec<u8>) -> Result<(), String> {
        // What the proxy reads of the line, owned, so the line itself can be forwarded as it came.
        let (id, is_answer, result) = {
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
            let result = envelope.result.map(|r| span_of(&scanned, r));
            (envelope.id.clone().unwrap_or(Value::Null), envelope.method.is_none(), result)
        };
        if !is_answer {
            // A notification or a server-initiated request: untouched.
            self.send_client(line).await;
            return Ok(());
        }
        let Some(request) = self.pending.remove(&id.to_string()) else {
            // Answered already (timed out or cancelled) or never asked: nobody reads it.
            eprintln!("mediagate proxy: dropped an answer to {id}, which no open request has");
            return Ok(());
        };
        let Some(span) = result else {
            self.send_client(line).await; // an error answer
            return Ok(());
        };
        // The server's own text (the mended copy differs only in ASCII hex digits: still UTF-8).
        let result = String::from_utf8_lossy(&line[span.clone()]);
        let gated = match &request.seat {
            Seat::None => None,
            Seat::ToolResult(tool) => self.gate_tool_result(tool, &result).await,
            Seat::Resource(uri) => self.gate_resource(uri, &result).await,
            Seat::Prompt(name) => self.gate_prompt(name, &result).await,
        };
        drop(result);
        match gated {
            None => self.send_client(line).await,
            Some(Ok(Gated::Splice(text))) => {
                let mut spliced = Vec::with_capacity(line.len() - span.len() + text.len());
                spliced.extend_from_slice(&line[..span.start]);
                spliced.extend_from_slice(text.as_bytes());
                spliced.extend_from_slice(&line[span.end..]);
                self.send_client(spliced).await
            }
            Some(Ok(Gated::Rebuilt(result))) => {
                self.send_client(json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string().into_bytes()).await
            }
            Some(Err(message)) => {
                let message = format!("mediagate refused the answer to `{}`: {message}", request.method);
                self.send_client(error_response(&id, INTERNAL_ERROR, message)).await
            }
        }
        Ok(())
    }

    /// With `--convert` the convert component checks it: SVG, BMP, TIFF, ICO blocks (and an
    /// animated GIF for a profile that refuses animation) are converted instead of replaced.
    async fn admit(&self, label: &str, json: &str) -> Result<ToolResultAdmission, String> {
        let admitted = if self.convert {
            self.gate.admit_tool_result_converting(label, json, self.options).await.map(|c| {
                for made in &c.conversions {
                    let line =
                        format!("{label}{} converted from {} to {}: {}", made.path, made.from, made.to, made.note);
                    eprintln!("mediagate proxy: {}", super::terminal_text(&line));
                }
                c.admission
            })
        } else {
            self.gate.admit_tool_result(label, json, self.options).await
        };
        admitted.map_err(|e| format!("the gate could not check it ({e})"))
    }

    /// A `tools/call` result through the seat: `None` when nothing changed; the gate's text (the
    /// result byte for byte outside the blocks it changed) to splice in. A result the gate refused
    /// whole becomes an `isError` result holding the gate's text; a block replaced inside
    /// `structuredContent` withholds `structuredContent` (it may no longer match the tool's output
    /// schema) and marks the result `isError`.
    async fn gate_tool_result(&self, tool: &str, result: &str) -> Option<Result<Gated, String>> {
        let admission = match self.admit(tool, result).await {
            Ok(a) => a,
            Err(e) => {
                let message = format!("[mediagate] The result of tool \"{tool}\" was not passed to the model: {e}.");
                let rebuilt = json!({"content": [{"type": "text", "text": message}], "isError": true});
                return Some(Ok(Gated::Rebuilt(rebuilt)));
            }
        };
        let content = admission.content?;
        let whole = admission.refused.iter().any(|r| r.path.is_empty());
        let in_structured = admission
            .refused
            .iter()
            .any(|r| r.path == "/structuredContent" || r.path.starts_with("/structuredContent/"));
        if !whole && !in_structured {
            return Some(Ok(Gated::Splice(content)));
        }
        let mut gated: Value = match serde_json::from_str(&content) {
            Ok(v) => v,
            Err(e) => return Some(Err(format!("the gate's output cannot be rebuilt as JSON ({e})"))),
        };
        if whole {
            // Refused whole: the gate's content is the placeholder block list.
            return Some(Ok(Gated::Rebuilt(json!({"content": gated, "isError": true}))));
        }
        if let Some(object) = gated.as_object_mut() {
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
        Some(Ok(Gated::Rebuilt(gated)))
    }

    /// `resources/read`: each content carrying a `blob` is checked as an embedded resource; a
    /// refused one becomes a text content (same `uri`, `text/plain`) holding the gate's text.
    async fn gate_resource(&self, uri: &str, result: &str) -> Option<Result<Gated, String>> {
        let mut result: Value = match serde_json::from_str(result) {
            Ok(v) => v,
            // Nothing to rebuild when it carries no blob; otherwise the blob cannot be checked.
            Err(_) if !result.contains("\"blob\"") => return None,
            Err(e) => return Some(Err(format!("a blob in it cannot be read as JSON ({e})"))),
        };
        let contents = result.get_mut("contents")?.as_array_mut()?;
        let blobs: Vec<usize> = (0..contents.len()).filter(|&i| contents[i].get("blob").is_some()).collect();
        if blobs.is_empty() {
            return None;
        }
        let wrapped: Vec<Value> =
            blobs.iter().map(|&i| json!({"type": "resource", "resource": contents[i].clone()})).collect();
        let admission = match self.admit(uri, &Value::Array(wrapped).to_string()).await {
            Ok(a) => a,
            Err(e) => return Some(Err(e)),
        };
        let content = admission.content?;
        let gated: Value = match serde_json::from_str(&content) {
            Ok(v) => v,
            Err(e) => return Some(Err(format!("the gate's output is not JSON ({e})"))),
        };
        let whole = admission.refused.iter().find(|r| r.path.is_empty()).map(|_| gated.clone());
        for (n, &i) in blobs.iter().enumerate() {
            let block = match &whole {
                Some(Value::Array(placeholder)) => placeholder.first().cloned().unwrap_or(Value::Null),
                _ => gated.get(n).cloned().unwrap_or(Value::Null),
            };
            let item_uri = contents[i].get("uri").cloned().unwrap_or_else(|| Value::String(uri.to_string()));
            contents[i] = match (block.get("type").and_then(Value::as_str), block.get("resource")) {
                (Some("resource"), Some(resource)) if whole.is_none() => resource.clone(),
                _ => {
                    let text = block.get("text").and_then(Value::as_str).unwrap_or("[mediagate] refused");
                    json!({"uri": item_uri, "mimeType": "text/plain", "text": text})
                }
            };
        }
        Some(Ok(Gated::Rebuilt(result)))
    }

    /// `prompts/get`: the messages through the seat; a result refused whole is an error.
    async fn gate_prompt(&self, name: &str, result: &str) -> Option<Result<Gated, String>> {
        let admission = match self.admit(name, result).await {
            Ok(a) => a,
            Err(e) => return Some(Err(e)),
        };
        if admission.refused.iter().any(|r| r.path.is_empty()) {
            let reason = admission.refused[0].reason.as_str();
            return Some(Err(format!("the prompt could not be read by the gate ({reason})")));
        }
        admission.content.map(|content| Ok(Gated::Splice(content)))
    }

    /// Every open request is answered with an error (the server can no longer answer it).
    async fn fail_pending(&mut self, why: &str) {
        let pending: Vec<(String, PendingRequest)> = self.pending.drain().collect();
        for (key, request) in pending {
            let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
            let message = format!("`{}` was not answered: {why}", request.method);
            self.send_client(error_response(&id, INTERNAL_ERROR, message)).await;
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
            let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
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
            self.send_server(cancel.to_string().into_bytes()).await;
        }
    }
}

fn seat_of(method: &str, params: Params) -> Seat {
    match method {
        "tools/call" => Seat::ToolResult(params.name.unwrap_or_default()),
        "resources/read" => Seat::Resource(params.uri.unwrap_or_default()),
        "prompts/get" => Seat::Prompt(params.name.unwrap_or_default()),
        _ => Seat::None,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<String> {
        let (tx, mut rx) = mpsc::channel(64);
        let input = input.to_vec();
        std::thread::spawn(move || read_lines(&input[..], max, tx)).join().unwrap();
        let mut out = Vec::new();
        while let Ok(line) = rx.try_recv() {
            out.push(match line {
                Line::Message(m) => String::from_utf8(m).unwrap(),
                Line::TooLong(n) => format!("too long: {n}"),
                Line::End(e) => format!("end {e:?}"),
            });
        }
        out
    }

    #[test]
    fn lines_are_split_bounded_and_blank_ones_skipped() {
        assert_eq!(lines(b"{}\n\n  \r\n{\"a\":1}\r\nlast", 16), ["{}", "{\"a\":1}", "last", "end None"]);
        let long = format!("{}\n{{}}\n", "x".repeat(100));
        assert_eq!(lines(long.as_bytes(), 16), ["too long: 100", "{}", "end None"]);
        assert_eq!(lines(&[b'y'; 40], 16), ["too long: 40", "end None"]);
    }

    #[test]
    fn messages_are_told_from_garbage_batches_and_repeated_members() {
        assert!(matches!(parse(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"), Parsed::Message(_)));
        assert!(matches!(parse(b"not json"), Parsed::NotJson(_)));
        assert!(matches!(parse(b"[{\"jsonrpc\":\"2.0\",\"method\":\"x\"}]"), Parsed::NotMessage(_)));
        assert!(matches!(parse(b"{\"id\":1,\"id\":2,\"result\":{}}"), Parsed::NotMessage(_)));
        assert!(matches!(parse(b"{\"id\":1}"), Parsed::NotMessage(_)));
        let Parsed::Message(e) = parse(b"{\"id\":null,\"error\":{}}") else { panic!() };
        assert_eq!(e.id, Some(Value::Null));
        assert!(matches!(parse(b"\"just a string\""), Parsed::NotMessage(_)));
    }

    #[test]
    fn what_serde_json_cannot_represent_is_a_message_and_its_result_a_span_of_the_line() {
        let line = br#"{"jsonrpc":"2.0","id":3,"result":{ "z":1e400, "s":"\ud800 x\udc00", "n":123456789012345678901234567890 }}"#;
        let scanned = lone_surrogates_mended(line);
        let Parsed::Message(e) = parse(&scanned) else { panic!("not a message") };
        let span = span_of(&scanned, e.result.unwrap());
        assert_eq!(&line[span], br#"{ "z":1e400, "s":"\ud800 x\udc00", "n":123456789012345678901234567890 }"#);
        let request =
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{"x":1e400},"name":"look"}}"#;
        let Parsed::Message(e) = parse(request) else { panic!("not a message") };
        assert_eq!(e.params().name.as_deref(), Some("look"));
    }

    #[test]
    fn only_lone_surrogate_escapes_are_mended_and_at_the_same_length() {
        let cases: [(&[u8], &[u8]); 6] = [
            (br#""\ud83d\ude00""#, br#""\ud83d\ude00""#), // a pair stays
            (br#""\ud800 ""#, br#""\ufffd ""#),
            (br#""\udc00\ud800""#, br#""\ufffd\ufffd""#),
            (br#""\\ud800""#, br#""\\ud800""#), // an escaped backslash, then text
            (br#""\u00e9\ud8""#, br#""\u00e9\ud8""#), // too short to be an escape: left to the parser
            (b"no escapes", b"no escapes"),
        ];
        for (line, expected) in cases {
            assert_eq!(&*lone_surrogates_mended(line), expected, "{}", String::from_utf8_lossy(line));
        }
    }
}
