//! The stdio framing of `mediagate mcp`, in front of rmcp: every line the client writes gets an
//! answer or reaches rmcp, exactly once.
//!
//! rmcp's own stdio transport drops lines it cannot parse without a word (the client then waits
//! forever) and, given two requests with one id, answers one of them. Here stdin is read line by
//! line with a bound; a line that is over [`MAX_LINE_BYTES`], not UTF-8, not JSON (nesting past
//! serde_json's limit included) or not a JSON-RPC message is answered here, on the one serialized
//! stdout writer, with `-32700` (parse error) or `-32600` (invalid request) and `id: null` when the
//! id cannot be read; a request whose id is still in flight is answered `-32600` naming the id.
//! Everything else goes to rmcp, already parsed, through an in-process channel transport; rmcp's
//! messages come back through a sink that frees the ids it answers and queues the line for stdout.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use futures_util::{Sink, Stream};
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::servers::lines::{Line, LineSplitter};

/// The longest line (one JSON-RPC message) read; longer lines are discarded as they arrive and
/// answered with a parse error.
pub const MAX_LINE_BYTES: usize = 16 << 20;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// Lines for stdout waiting for the writer.
const OUT_QUEUE: usize = 256;
/// Parsed messages waiting for rmcp.
const IN_QUEUE: usize = 64;

/// Requests handed to rmcp and not answered yet, by the JSON text of their id (`1` and `"1"` are
/// different ids).
type InFlight = Arc<Mutex<HashSet<String>>>;

/// The ids of rmcp's own requests to the client (`roots/list`) not answered yet: a client that
/// answers `1` as `"1"` (or the reverse) is still answering it. At most [`MAX_ASKED`] are kept.
type Asked = Arc<Mutex<HashSet<RequestId>>>;
const MAX_ASKED: usize = 256;

/// The transport for rmcp (a sink of its messages, a stream of the client's) and the tasks that
/// read stdin and write stdout. `writer` ends once rmcp and the reader are done and every line
/// is written.
pub struct Framing<Si, St> {
    pub transport: (Si, St),
    pub writer: tokio::task::JoinHandle<()>,
}

pub fn framing<R, W>(
    input: R,
    output: W,
) -> Framing<
    impl Sink<ServerJsonRpcMessage, Error = std::io::Error> + Send + Unpin + 'static,
    impl Stream<Item = ClientJsonRpcMessage> + Send + Unpin + 'static,
>
where
    R: AsyncBufRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let in_flight: InFlight = Arc::default();
    let asked: Asked = Arc::default();
    let (out_tx, out_rx) = mpsc::channel::<String>(OUT_QUEUE);
    let (in_tx, mut in_rx) = mpsc::channel::<ClientJsonRpcMessage>(IN_QUEUE);
    let writer = tokio::spawn(write_lines(output, out_rx));
    tokio::spawn(read_lines(input, in_tx, out_tx.clone(), in_flight.clone(), asked.clone()));
    let sink = Box::pin(futures_util::sink::unfold(
        (out_tx, in_flight, asked),
        |(out, in_flight, asked), message: ServerJsonRpcMessage| async move {
            // Freed before the answer is written: a client may reuse the id as soon as it reads it.
            if let Some(id) = answered_id(&message) {
                in_flight.lock().expect("never poisoned").remove(&id_key(id));
            }
            if let JsonRpcMessage::Request(request) = &message {
                let mut asked = asked.lock().expect("never poisoned");
                if asked.len() >= MAX_ASKED {
                    asked.clear(); // requests that long unanswered have timed out in rmcp
                }
                asked.insert(request.id.clone());
            }
            let line = serde_json::to_string(&message).map_err(std::io::Error::other)?;
            out.send(line)
                .await
                .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout is closed"))?;
            Ok::<_, std::io::Error>((out, in_flight, asked))
        },
    ));
    let stream = futures_util::stream::poll_fn(move |cx| in_rx.poll_recv(cx));
    Framing { transport: (sink, stream), writer }
}

fn answered_id(message: &ServerJsonRpcMessage) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Response(r) => Some(&r.id),
        JsonRpcMessage::Error(e) => e.id.as_ref(),
        _ => None,
    }
}

fn id_key(id: &RequestId) -> String {
    serde_json::to_string(id).expect("an id serialises")
}

async fn write_lines<W: AsyncWrite + Unpin>(mut output: W, mut lines: mpsc::Receiver<String>) {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        if output.write_all(line.as_bytes()).await.is_err() || output.flush().await.is_err() {
            // The client is gone; what is left has nowhere to go.
            return;
        }
    }
}

/// Reads the next line from `input` through `lines`; `None` at the end of the input.
async fn read_line<R: AsyncBufRead + Unpin>(input: &mut R, lines: &mut LineSplitter) -> std::io::Result<Option<Line>> {
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(lines.finish());
        }
        let (used, line) = lines.push(available);
        input.consume(used);
        if line.is_some() {
            return Ok(line);
        }
    }
}

async fn read_lines<R: AsyncBufRead + Unpin>(
    mut input: R,
    to_rmcp: mpsc::Sender<ClientJsonRpcMessage>,
    out: mpsc::Sender<String>,
    in_flight: InFlight,
    asked: Asked,
) {
    let mut lines = LineSplitter::new(MAX_LINE_BYTES);
    loop {
        let line = match read_line(&mut input, &mut lines).await {
            Ok(line) => line,
            Err(e) => {
                eprintln!("mediagate mcp: cannot read stdin: {e}; ending the session");
                return;
            }
        };
        let verdict = match line {
            None => return, // dropping `to_rmcp` ends the session once rmcp is done
            Some(Line::TooLong(n)) => Err(error_line(
                None,
                PARSE_ERROR,
                format!("Parse error: the message is {n} bytes, over the limit of {MAX_LINE_BYTES} bytes"),
            )),
            Some(Line::Whole(line)) => check(&line, &in_flight, &asked),
        };
        match verdict {
            Ok(None) => {}
            Ok(Some(message)) => {
                if to_rmcp.send(message).await.is_err() {
                    return; // rmcp has ended the session
                }
            }
            Err(answer) => {
                if out.send(answer).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// A line's fate: `Ok(Some)` to rmcp, `Ok(None)` ignored (blank), `Err` the answer to write.
fn check(line: &[u8], in_flight: &InFlight, asked: &Asked) -> Result<Option<ClientJsonRpcMessage>, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let text = std::str::from_utf8(line).map_err(|e| {
        error_line(None, PARSE_ERROR, format!("Parse error: the message is not UTF-8 (at byte {})", e.valid_up_to()))
    })?;
    let value: Value = serde_json::from_str(text)
        .map_err(|e| error_line(None, PARSE_ERROR, format!("Parse error: the message is not JSON: {e}")))?;
    let object = match &value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err(error_line(
                None,
                INVALID_REQUEST,
                "Invalid request: batches (JSON arrays) are not supported; send one message per line".into(),
            ));
        }
        _ => return Err(error_line(None, INVALID_REQUEST, "Invalid request: not a JSON-RPC message object".into())),
    };
    // The id, when it is one JSON-RPC allows; else the answer carries `null`.
    let id = object.get("id").filter(|id| id.is_string() || id.is_i64() || id.is_u64()).cloned();
    let mut message: ClientJsonRpcMessage = serde_json::from_value(value)
        .map_err(|e| error_line(id.clone(), INVALID_REQUEST, format!("Invalid request: {e}")))?;
    let answered = match &mut message {
        JsonRpcMessage::Response(r) => Some(&mut r.id),
        JsonRpcMessage::Error(e) => e.id.as_mut(),
        _ => None,
    };
    if let Some(id) = answered {
        let mut asked = asked.lock().expect("never poisoned");
        if !asked.remove(id)
            && let Some(other) = same_digits(id)
            && asked.remove(&other)
        {
            *id = other;
        }
    }
    match &message {
        JsonRpcMessage::Request(request) => {
            let key = id_key(&request.id);
            if !in_flight.lock().expect("never poisoned").insert(key.clone()) {
                return Err(error_line(
                    id,
                    INVALID_REQUEST,
                    format!("Invalid request: duplicate request id {key}: a request with this id is still in flight"),
                ));
            }
        }
        // rmcp sends no answer for a cancelled request: its id is free again.
        JsonRpcMessage::Notification(n) => {
            if let ClientNotification::CancelledNotification(c) = &n.notification
                && let Some(id) = &c.params.request_id
            {
                in_flight.lock().expect("never poisoned").remove(&id_key(id));
            }
        }
        _ => {}
    }
    Ok(Some(message))
}

/// The id written the other way: `1` for `"1"`, `"1"` for `1`.
fn same_digits(id: &RequestId) -> Option<RequestId> {
    match id {
        RequestId::Number(n) => Some(RequestId::String(n.to_string().into())),
        RequestId::String(s) => s.parse::<i64>().ok().filter(|n| n.to_string() == **s).map(RequestId::Number),
    }
}

fn error_line(id: Option<Value>, code: i64, message: String) -> String {
    json!({"jsonrpc": "2.0", "id": id.unwrap_or(Value::Null), "error": {"code": code, "message": message}}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = tokio::io::BufReader::with_capacity(4, input);
        let mut splitter = LineSplitter::new(max);
        let mut out = Vec::new();
        while let Some(line) = read_line(&mut reader, &mut splitter).await.unwrap() {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn lines_are_bounded_and_the_next_line_is_whole() {
        let input = b"short\n0123456789abcdef\n\nlast without newline";
        assert_eq!(
            lines(input, 10).await,
            [Line::Whole(b"short".to_vec()), Line::TooLong(16), Line::Whole(vec![]), Line::TooLong(20)],
            "over the bound: dropped, counted"
        );
        assert_eq!(
            lines(b"exactly10!\nx", 10).await,
            [Line::Whole(b"exactly10!".to_vec()), Line::Whole(b"x".to_vec())]
        );
    }

    #[test]
    fn bad_lines_are_answered_and_good_ones_pass() {
        let in_flight = InFlight::default();
        let asked = Asked::default();
        let answer =
            |line: &[u8]| -> Value { serde_json::from_str(&check(line, &in_flight, &asked).unwrap_err()).unwrap() };
        let deep = [vec![b'['; 200], vec![b']'; 200]].concat();
        for bad in [&b"not json"[..], b"\xff\xfe{}", b"{\"jsonrpc\":", &deep] {
            let a = answer(bad);
            assert_eq!((a["id"].clone(), a["error"]["code"].as_i64()), (Value::Null, Some(-32700)), "{a}");
        }
        let a = answer(b"[1]");
        assert_eq!(a["error"]["code"], -32600);
        let a = answer(br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":7}"#);
        assert_eq!((a["id"].as_i64(), a["error"]["code"].as_i64()), (Some(3), Some(-32600)), "{a}");
        assert!(check(b"  \r", &in_flight, &asked).unwrap().is_none());
        let ping = br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#;
        assert!(check(ping, &in_flight, &asked).unwrap().is_some());
        let a = answer(ping);
        assert_eq!(a["id"], "a");
        assert!(a["error"]["message"].as_str().unwrap().contains("duplicate request id \"a\""), "{a}");
        // Another id, and the same digits as a number, are different requests.
        assert!(check(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &in_flight, &asked).unwrap().is_some());
        assert!(check(br#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#, &in_flight, &asked).unwrap().is_some());
        // A cancellation frees the id.
        let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#;
        assert!(check(cancel, &in_flight, &asked).unwrap().is_some());
        assert!(check(ping, &in_flight, &asked).unwrap().is_some());
    }

    #[test]
    fn an_answer_to_the_servers_request_is_matched_whatever_way_its_id_is_written() {
        let in_flight = InFlight::default();
        let asked = Asked::default();
        asked.lock().unwrap().insert(RequestId::Number(1));
        asked.lock().unwrap().insert(RequestId::String("7".into()));
        let id_of = |line: &[u8]| match check(line, &in_flight, &asked).unwrap().unwrap() {
            JsonRpcMessage::Response(r) => r.id,
            JsonRpcMessage::Error(e) => e.id.unwrap(),
            _ => panic!("not an answer"),
        };
        // rmcp asked with `1`: the client's `"1"` reaches it as `1`; `7` as `"7"`.
        assert_eq!(id_of(br#"{"jsonrpc":"2.0","id":"1","result":{"roots":[]}}"#), RequestId::Number(1));
        assert_eq!(
            id_of(br#"{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}"#),
            RequestId::String("7".into())
        );
        assert!(asked.lock().unwrap().is_empty());
        // Nothing asked with that id: left as written (rmcp drops it), and `"01"` is not `1`.
        asked.lock().unwrap().insert(RequestId::Number(1));
        assert_eq!(id_of(br#"{"jsonrpc":"2.0","id":"01","result":{}}"#), RequestId::String("01".into()));
        assert_eq!(id_of(br#"{"jsonrpc":"2.0","id":"2","result":{}}"#), RequestId::String("2".into()));
    }
}
