//! `mediagate admit-batch`: a Batch API file (OpenAI Batch JSON lines; Anthropic Message Batches
//! as JSON lines or as the `{"requests": […]}` document) through the gate, streamed: the reader
//! hands each request to the component (`admit-batch-line`, which reads it, judges its body and
//! splices it back) and the writer puts out, in input order, each request as it goes and every
//! byte around the requests as it came. Memory is bounded by the requests in flight, whatever the
//! file's size. What this module decides is only transport: where a request starts and ends, and
//! what `--on-refusal` does with the component's outcome.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, ValueEnum};
use mediagate::Gate;
use mediagate::gate::{AdmitOptions, BatchApi, BatchFileRule, BatchLineInput, BatchLineOutcome};
use serde_json::Value;
use tokio::sync::mpsc;

use super::progress::Progress;
use super::{Code, Exit, Report, RequestGateArgs};

/// The most of one request the reader holds; past it the request is refused unread (the gate's
/// own cap on a request body is lower, and says so in its words).
pub const REQUEST_READ_CAP: usize = 64 << 20;
/// Pieces the reader may run ahead of the judging (each at most [`REQUEST_READ_CAP`]).
const READ_AHEAD: usize = 4;
/// Pieces handed out and not yet written: a slow request at the head of the line (the output is
/// in input order) does not leave the other jobs idle. The runtime runs `jobs` guests at once.
const WINDOW: usize = 256;
/// Bytes of request text handed out and not yet written (one piece more may be on its way).
const BYTES_IN_FLIGHT: u64 = 128 << 20;

#[derive(Args)]
pub struct BatchArgs {
    /// The batch file (JSON lines, or for Anthropic the `{"requests": […]}` document); `-` reads stdin.
    file: PathBuf,
    /// The Batch API the file is for.
    #[arg(long, value_enum)]
    api: BatchApiArg,
    /// Write the admitted batch file here [default: stdout].
    #[arg(short = 'o', long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Write the report here: a JSON line per changed or refused request, then the summary line.
    /// Without it, each refused request and the summary are said on stderr.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// What a request with refused blocks becomes: `placeholder` (each block replaced in its slot
    /// by words saying why), `drop` (left out), `fail` (the run stops; the output file is removed).
    /// A request refused whole is left out, or stops the run with `fail`.
    #[arg(long, value_enum, default_value_t = OnRefusal::Placeholder)]
    on_refusal: OnRefusal,
    /// Requests judged at once, each in its own sandbox [default: the number of cores].
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    jobs: Option<u32>,
    #[command(flatten)]
    gate: RequestGateArgs,
}

impl BatchArgs {
    pub fn worker_threads(&self) -> usize {
        self.jobs()
    }

    fn jobs(&self) -> usize {
        self.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j as usize)
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum BatchApiArg {
    /// OpenAI Batch (`custom_id`, `method`, `url`, `body`).
    Openai,
    /// Anthropic Message Batches (`custom_id`, `params`).
    Anthropic,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OnRefusal {
    Placeholder,
    Drop,
    Fail,
}

/// A piece of the input, in order.
enum Piece {
    /// Bytes that go out as they came: a blank line, the JSON document around its requests.
    Raw(Vec<u8>),
    /// One request: its text (or why the reader could not hand it over) and the bytes around it.
    Request { number: u64, text: Result<String, (u64, String)>, around: Around },
}

impl Piece {
    /// The bytes it holds while it waits to be judged and written.
    fn held_bytes(&self) -> u64 {
        match self {
            Piece::Raw(bytes) => bytes.len() as u64,
            Piece::Request { text: Ok(text), .. } => text.len() as u64,
            Piece::Request { text: Err(_), .. } => 0,
        }
    }
}

/// What surrounds a request in the file, written with it (and left out with it).
enum Around {
    /// A line: its line break (`\n`, `\r\n`, or none at the end of the file).
    Line { ending: Vec<u8> },
    /// An item of `requests`: the whitespace before and after it; the comma between items is
    /// written by the writer (an item left out takes its comma with it). `comma`: a comma followed
    /// it in the input (counted in the bytes read).
    Item { before: Vec<u8>, after: Vec<u8>, comma: bool },
}

/// The summary's counts (the report's last line).
#[derive(Default)]
struct Counts {
    requests: u64,
    unchanged: u64,
    changed: u64,
    refused_blocks: u64,
    refused: u64,
    left_out: u64,
    bytes_in: u64,
    bytes_out: u64,
    written: u64,
}

pub async fn admit_batch(args: BatchArgs) -> u8 {
    let started = Instant::now();
    let report_errors = Report::Text;
    let api = match args.api {
        BatchApiArg::Openai => BatchApi::Openai,
        BatchApiArg::Anthropic => BatchApi::Anthropic,
    };
    let input: Box<dyn Read + Send> = if args.file == Path::new("-") {
        Box::new(std::io::stdin())
    } else {
        match std::fs::File::open(&args.file) {
            Ok(f) => Box::new(f),
            Err(e) => return report_errors.fail(Code::Io, format!("cannot read {}: {e}", args.file.display())),
        }
    };
    let jobs = args.jobs();
    let gate = match super::gate_for_jobs(jobs as u32) {
        Ok(g) => Arc::new(g),
        Err(code) => return code,
    };
    let mut output = match Output::open(args.out.as_deref()) {
        Ok(o) => o,
        Err(e) => return report_errors.fail(Code::Io, e),
    };
    let mut report: Box<dyn Write> = match &args.report {
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Box::new(std::io::BufWriter::new(f)),
            Err(e) => return report_errors.fail(Code::Io, format!("cannot write {}: {e}", path.display())),
        },
        None => Box::new(std::io::sink()),
    };
    let options = args.gate.options();

    let (sender, mut receiver) = mpsc::channel::<Result<Piece, String>>(READ_AHEAD);
    let reader = std::thread::spawn(move || read_pieces(input, &sender));
    let progress = Progress::new("requests");
    let mut counts = Counts::default();
    let mut in_flight: VecDeque<(tokio::task::JoinHandle<Judged>, u64)> = VecDeque::new();
    let mut bytes_in_flight = 0u64;
    let mut read_done = false;
    // What ended the run before its end: the input could not be read, or an output not written.
    let mut fatal = None;
    let mut stopped_at = None;
    let mut items_written = 0u64;
    loop {
        while !read_done && in_flight.len() < WINDOW && bytes_in_flight < BYTES_IN_FLIGHT {
            match receiver.recv().await {
                Some(Ok(piece)) => {
                    let gate = gate.clone();
                    let convert = args.gate.convert;
                    let cost = piece.held_bytes();
                    bytes_in_flight += cost;
                    let task = tokio::spawn(async move { judge(&gate, api, piece, convert, options).await });
                    in_flight.push_back((task, cost));
                }
                Some(Err(e)) => {
                    fatal = Some(e);
                    read_done = true;
                }
                None => read_done = true,
            }
        }
        let Some((next, cost)) = in_flight.pop_front() else { break };
        bytes_in_flight -= cost;
        let judged = match next.await {
            Ok(j) => j,
            Err(e) => {
                fatal = Some(format!("a judging task failed: {e}"));
                break;
            }
        };
        counts.bytes_in += judged.bytes_in;
        let (number, outcome, line, report_line, original, around) = match judged.kind {
            JudgedKind::Raw(bytes) => {
                if let Err(e) = output.write(&bytes) {
                    fatal = Some(e);
                    break;
                }
                continue;
            }
            JudgedKind::Request { number, outcome, line, report_line, original, around } => {
                (number, outcome, line, report_line, original, around)
            }
        };
        counts.requests += 1;
        progress.advance();
        let refused = matches!(outcome, BatchLineOutcome::RefusedBlocks | BatchLineOutcome::Refused);
        match outcome {
            BatchLineOutcome::Unchanged => counts.unchanged += 1,
            BatchLineOutcome::Changed => counts.changed += 1,
            BatchLineOutcome::RefusedBlocks => counts.refused_blocks += 1,
            BatchLineOutcome::Refused => counts.refused += 1,
        }
        if let Some(text) = &report_line {
            if writeln!(report, "{text}").is_err() {
                fatal = Some("cannot write the report".into());
                break;
            }
            if args.report.is_none() && refused {
                progress.suspend(|| eprintln!("mediagate: {}", super::terminal_text(&refusal_words(text))));
            }
        }
        if refused && args.on_refusal == OnRefusal::Fail {
            stopped_at = Some(number);
            counts.left_out += 1;
            break;
        }
        let goes = match outcome {
            BatchLineOutcome::Unchanged => Some(original.as_bytes()),
            BatchLineOutcome::Changed => line.as_deref().map(str::as_bytes),
            BatchLineOutcome::RefusedBlocks if args.on_refusal == OnRefusal::Placeholder => {
                line.as_deref().map(str::as_bytes)
            }
            _ => None,
        };
        let Some(bytes) = goes else {
            counts.left_out += 1;
            continue;
        };
        let written = match &around {
            Around::Line { ending } => output.write(bytes).and_then(|()| output.write(ending)),
            Around::Item { before, after, .. } => {
                let comma = if items_written > 0 { output.write(b",") } else { Ok(()) };
                items_written += 1;
                comma
                    .and_then(|()| output.write(before))
                    .and_then(|()| output.write(bytes))
                    .and_then(|()| output.write(after))
            }
        };
        if let Err(e) = written {
            fatal = Some(e);
            break;
        }
        counts.written += 1;
    }
    // Whatever stopped the loop, the reader must not stay blocked on a full channel.
    drop(receiver);
    for (task, _) in in_flight {
        task.abort();
    }
    let _ = reader.join();
    progress.finish();
    counts.bytes_out = output.bytes;

    if let Some(e) = fatal {
        output.discard();
        return report_errors.fail(Code::Io, format!("{e}; nothing was written (an output file is removed)"));
    }
    let rules = if stopped_at.is_none() {
        match gate.check_batch_file(api, counts.written, counts.bytes_out).await {
            Ok(rules) => rules,
            Err(e) => {
                output.discard();
                return report_errors.fail(Code::Sandbox, e);
            }
        }
    } else {
        Vec::new()
    };
    let summary = summary_json(api, &counts, &rules, stopped_at);
    if writeln!(report, "{summary}").and_then(|()| report.flush()).is_err() {
        output.discard();
        return report_errors.fail(Code::Io, "cannot write the report");
    }
    if stopped_at.is_some() {
        output.discard();
    } else if let Err(e) = output.finish() {
        return report_errors.fail(Code::Io, e);
    }
    let seconds = started.elapsed().as_secs_f64();
    eprintln!("mediagate: {}", summary_words(&counts, seconds, jobs, stopped_at));
    for rule in &rules {
        eprintln!("mediagate: the output breaks {}: {}", rule.rule, rule.message);
    }
    // A line that is not a request is refused in its place, as the run goes on: the file, which is
    // the input here, was judged (an unreadable file or an unwritten output ended above, 2).
    Exit::judged(stopped_at.is_some() || counts.refused_blocks + counts.refused > 0 || !rules.is_empty()).code()
}

/// One piece, judged.
struct Judged {
    /// The input bytes it stood for (the request with its line break or its item's surroundings).
    bytes_in: u64,
    kind: JudgedKind,
}

enum JudgedKind {
    Raw(Vec<u8>),
    Request {
        number: u64,
        outcome: BatchLineOutcome,
        /// The request as it goes out, when the component changed it.
        line: Option<String>,
        /// The report line; none when unchanged.
        report_line: Option<String>,
        /// The request as it came (what goes out when unchanged).
        original: String,
        around: Around,
    },
}

async fn judge(gate: &Gate, api: BatchApi, piece: Piece, convert: bool, options: AdmitOptions) -> Judged {
    let (number, text, around) = match piece {
        Piece::Raw(bytes) => return Judged { bytes_in: bytes.len() as u64, kind: JudgedKind::Raw(bytes) },
        Piece::Request { number, text, around } => (number, text, around),
    };
    let around_len = match &around {
        Around::Line { ending } => ending.len(),
        Around::Item { before, after, comma } => before.len() + after.len() + usize::from(*comma),
    } as u64;
    let refused = |len: u64, limit: Option<u64>, message: String| JudgedKind::Request {
        number,
        outcome: BatchLineOutcome::Refused,
        line: None,
        report_line: Some(host_refusal(number, len, limit, &message)),
        original: String::new(),
        around: Around::Line { ending: Vec::new() },
    };
    let text = match text {
        Ok(t) => t,
        Err((len, message)) => {
            let limit = (len > REQUEST_READ_CAP as u64).then_some(REQUEST_READ_CAP as u64);
            return Judged { bytes_in: len + around_len, kind: refused(len, limit, message) };
        }
    };
    let bytes_in = text.len() as u64 + around_len;
    let input = BatchLineInput { api, line: text, number, convert };
    match gate.admit_batch_line(&input, options).await.map(|a| a.answer) {
        Ok(answer) => {
            let report_line = (answer.outcome != BatchLineOutcome::Unchanged).then_some(answer.json);
            let kind = JudgedKind::Request {
                number,
                outcome: answer.outcome,
                line: answer.line,
                report_line,
                original: input.line,
                around,
            };
            Judged { bytes_in, kind }
        }
        Err(e) => {
            let message = format!("the gate could not judge request {number}: {e}; it does not go");
            Judged { bytes_in, kind: refused(input.line.len() as u64, None, message) }
        }
    }
}

/// The report line of a request the host refused before the gate could read it (not UTF-8, too
/// long, the sandbox failed): the shape of the component's own report lines.
fn host_refusal(number: u64, bytes: u64, limit: Option<u64>, message: &str) -> String {
    let limit = limit.map_or_else(|| "null".to_string(), |l| l.to_string());
    format!(
        "{{\"number\":{number},\"custom_id\":null,\"outcome\":\"refused\",\"changed\":[],\"refused\":[],\"refusal\":\
         {{\"unusable\":true,\"reason\":\"undecodable\",\"bytes\":{bytes},\"limit\":{limit},\"rule\":null,\"message\":{}}}}}",
        serde_json::json!(message)
    )
}

/// Reads the input into pieces, in order: JSON lines, or the items of a `{"requests": […]}`
/// document. Each request is held whole (at most [`REQUEST_READ_CAP`] bytes; past it, it is
/// skipped to its end and handed over as too long).
fn read_pieces(input: Box<dyn Read + Send>, sender: &mpsc::Sender<Result<Piece, String>>) {
    let mut reader = BufReader::with_capacity(1 << 20, input);
    let send = |p: Result<Piece, String>| sender.blocking_send(p).is_ok();
    let start = match reader.fill_buf() {
        Ok(buf) => requests_document_start(buf),
        Err(e) => {
            send(Err(format!("cannot read the batch file: {e}")));
            return;
        }
    };
    match start {
        Some(prefix_len) => {
            let mut prefix = vec![0; prefix_len];
            if let Err(e) = reader.read_exact(&mut prefix) {
                send(Err(format!("cannot read the batch file: {e}")));
                return;
            }
            if send(Ok(Piece::Raw(prefix))) {
                read_items(&mut reader, &send);
            }
        }
        None => read_lines(&mut reader, &send),
    }
}

/// Where the first item of a `{"requests": [` document starts (just past the `[`), if the input
/// is one: its first byte that is not whitespace is `{` and its first key `requests`. A file of
/// JSON lines never starts so: a batch line's keys are `custom_id`, `params`, `method`, `url`.
fn requests_document_start(buf: &[u8]) -> Option<usize> {
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while buf.get(*i).is_some_and(|b| b" \t\r\n".contains(b)) {
            *i += 1;
        }
    };
    skip_ws(&mut i);
    let expect = |i: &mut usize, token: &[u8]| -> Option<()> {
        skip_ws(i);
        buf.get(*i..*i + token.len()).filter(|t| *t == token)?;
        *i += token.len();
        Some(())
    };
    expect(&mut i, b"{")?;
    expect(&mut i, b"\"requests\"")?;
    expect(&mut i, b":")?;
    expect(&mut i, b"[")?;
    Some(i)
}

fn read_lines(reader: &mut impl BufRead, send: &impl Fn(Result<Piece, String>) -> bool) {
    let mut number = 0u64;
    loop {
        let mut line = Vec::new();
        let (len, ended, cr) = match read_until_capped(reader, b'\n', &mut line) {
            Ok(r) => r,
            Err(e) => {
                send(Err(format!("cannot read the batch file: {e}")));
                return;
            }
        };
        if len == 0 {
            return;
        }
        number += 1;
        let mut ending = Vec::new();
        // A line over the cap was not kept whole: its `\r` was skipped with the rest, but the break
        // is still two bytes of its length.
        let kept_whole = line.len() == len;
        if ended {
            line.pop();
            ending.push(b'\n');
            if cr {
                if kept_whole {
                    line.pop();
                }
                ending.insert(0, b'\r');
            }
        }
        let sent = if len <= REQUEST_READ_CAP + 2 && line.iter().all(u8::is_ascii_whitespace) {
            line.extend_from_slice(&ending);
            send(Ok(Piece::Raw(line)))
        } else {
            let text = request_text(number, "line", len - ending.len(), line);
            send(Ok(Piece::Request { number, text, around: Around::Line { ending } }))
        };
        if !sent {
            return;
        }
    }
}

/// The request's text, or why it cannot be handed over: `len` is its whole length (more than was
/// kept when it is over the cap).
fn request_text(number: u64, what: &str, len: usize, bytes: Vec<u8>) -> Result<String, (u64, String)> {
    if len > REQUEST_READ_CAP {
        return Err((
            len as u64,
            format!("{what} {number} is longer than the {REQUEST_READ_CAP} bytes mediagate reads of one request"),
        ));
    }
    String::from_utf8(bytes).map_err(|_| (len as u64, format!("{what} {number} is not UTF-8 text")))
}

/// Reads up to and including `delimiter` into `into`, keeping at most [`REQUEST_READ_CAP`] + 2
/// bytes (a line break's two) and skipping the rest; returns the whole length read, whether the
/// delimiter ended it, and whether a `\r` stood right before it (kept or not).
fn read_until_capped(
    reader: &mut impl BufRead,
    delimiter: u8,
    into: &mut Vec<u8>,
) -> std::io::Result<(usize, bool, bool)> {
    let mut total = 0;
    let mut last = None;
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok((total, false, false));
        }
        let (used, found) = match buf.iter().position(|b| *b == delimiter) {
            Some(at) => (at + 1, true),
            None => (buf.len(), false),
        };
        let before_delimiter = if found { used.checked_sub(2).map(|i| buf[i]).or(last) } else { None };
        last = buf[..used].last().copied();
        let room = (REQUEST_READ_CAP + 2).saturating_sub(into.len());
        into.extend_from_slice(&buf[..used.min(room)]);
        if found && used > room {
            // The line is over the cap: the delimiter that ends it is what says so.
            into.truncate(REQUEST_READ_CAP + 1);
            into.push(delimiter);
        }
        total += used;
        reader.consume(used);
        if found {
            return Ok((total, true, before_delimiter == Some(b'\r')));
        }
    }
}

/// Reads the items of a `requests` array (the reader just past its `[`) and then the rest of the
/// document as it is.
fn read_items(reader: &mut impl BufRead, send: &impl Fn(Result<Piece, String>) -> bool) {
    let mut items = Items::default();
    loop {
        let buf = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                send(Err(format!("cannot read the batch file: {e}")));
                return;
            }
        };
        if buf.is_empty() {
            break;
        }
        let len = buf.len();
        for &b in buf {
            match items.byte(b) {
                Ok(None) => {}
                Ok(Some(piece)) => {
                    if !send(Ok(piece)) {
                        return;
                    }
                }
                Err(e) => {
                    send(Err(e));
                    return;
                }
            }
        }
        reader.consume(len);
    }
    if items.at != At::Rest {
        send(Err(format!("the batch document ends inside its \"requests\" array (after item {})", items.number)));
        return;
    }
    send(Ok(Piece::Raw(items.rest)));
}

/// Where the item scan is.
#[derive(Default, PartialEq, Eq)]
enum At {
    /// Before an item (after `[` or `,`).
    #[default]
    Before,
    Inside,
    /// After an item, before its `,` or `]`.
    After,
    /// Past the array's `]`: the rest of the document.
    Rest,
}

/// The scan that splits a `requests` array into its items, a byte at a time: it follows strings,
/// escapes and nesting, and no more (the component reads each item).
#[derive(Default)]
struct Items {
    at: At,
    number: u64,
    before: Vec<u8>,
    item: Vec<u8>,
    /// The item's whole length (it keeps no more than the cap).
    item_len: usize,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// An item that is neither an object, an array nor a string: it ends at `,`, `]` or whitespace.
    scalar: bool,
    done: Option<Result<String, (u64, String)>>,
    after: Vec<u8>,
    rest: Vec<u8>,
}

impl Items {
    fn byte(&mut self, b: u8) -> Result<Option<Piece>, String> {
        match self.at {
            At::Rest => self.rest.push(b),
            At::Before if b.is_ascii_whitespace() => self.before.push(b),
            At::Before if b == b']' && self.number == 0 => {
                self.rest.append(&mut self.before);
                self.rest.push(b);
                self.at = At::Rest;
            }
            At::Before => {
                self.at = At::Inside;
                self.number += 1;
                self.item.clear();
                self.item_len = 0;
                self.depth = 0;
                self.in_string = false;
                self.escaped = false;
                self.scalar = !b"{[\"".contains(&b);
                return self.inside(b);
            }
            At::Inside => return self.inside(b),
            At::After => return self.after(b),
        }
        Ok(None)
    }

    fn inside(&mut self, b: u8) -> Result<Option<Piece>, String> {
        if self.scalar && (b == b',' || b == b']' || b.is_ascii_whitespace()) {
            self.end_item();
            return self.after(b);
        }
        if self.item_len < REQUEST_READ_CAP + 1 {
            self.item.push(b);
        }
        self.item_len += 1;
        if self.scalar {
            return Ok(None);
        }
        let closed = if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
            }
            !self.in_string && self.depth == 0
        } else {
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
            // An object or array ends at its closing bracket; a string item at its closing quote
            // (above), never at its opening one.
            matches!(b, b'}' | b']') && self.depth == 0
        };
        if closed {
            self.end_item();
        }
        Ok(None)
    }

    fn end_item(&mut self) {
        let bytes = std::mem::take(&mut self.item);
        self.done = Some(request_text(self.number, "item", self.item_len, bytes));
        self.at = At::After;
        self.after.clear();
    }

    fn after(&mut self, b: u8) -> Result<Option<Piece>, String> {
        if b.is_ascii_whitespace() {
            self.after.push(b);
            return Ok(None);
        }
        if b != b',' && b != b']' {
            return Err(format!(
                "the batch document's \"requests\" array has {:?} after item {} where a comma or ] belongs",
                char::from(b),
                self.number
            ));
        }
        let text = self.done.take().expect("an item ended");
        let around = Around::Item {
            before: std::mem::take(&mut self.before),
            after: std::mem::take(&mut self.after),
            comma: b == b',',
        };
        if b == b']' {
            self.rest.push(b);
            self.at = At::Rest;
        } else {
            self.at = At::Before;
        }
        Ok(Some(Piece::Request { number: self.number, text, around }))
    }
}

/// The output: a file (removed when the run does not finish) or stdout; counts what it wrote.
struct Output {
    writer: Box<dyn Write>,
    path: Option<PathBuf>,
    bytes: u64,
}

impl Output {
    fn open(path: Option<&Path>) -> Result<Output, String> {
        let writer: Box<dyn Write> = match path {
            Some(p) => Box::new(std::io::BufWriter::with_capacity(
                1 << 20,
                std::fs::File::create(p).map_err(|e| format!("cannot write {}: {e}", p.display()))?,
            )),
            None => Box::new(std::io::BufWriter::with_capacity(1 << 20, std::io::stdout())),
        };
        Ok(Output { writer, path: path.map(Path::to_path_buf), bytes: 0 })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.bytes += bytes.len() as u64;
        self.writer.write_all(bytes).map_err(|e| self.error(e))
    }

    fn error(&self, e: std::io::Error) -> String {
        match &self.path {
            Some(p) => format!("cannot write {}: {e}", p.display()),
            None => format!("cannot write to stdout: {e}"),
        }
    }

    fn finish(mut self) -> Result<(), String> {
        self.writer.flush().map_err(|e| self.error(e))
    }

    /// A run that did not finish leaves no half-written file behind.
    fn discard(self) {
        let Output { writer, path, .. } = self;
        drop(writer);
        if let Some(p) = path {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The report's last line: `{"summary": {…}}`, its keys in a fixed order (docs/bulk.md).
fn summary_json(api: BatchApi, c: &Counts, rules: &[BatchFileRule], stopped_at: Option<u64>) -> String {
    let rules: Vec<String> = rules
        .iter()
        .map(|r| {
            format!(
                "{{\"rule\":{},\"limit\":{},\"actual\":{},\"message\":{}}}",
                serde_json::json!(r.rule),
                r.limit,
                r.actual,
                serde_json::json!(r.message)
            )
        })
        .collect();
    let api = match api {
        BatchApi::Openai => "openai",
        BatchApi::Anthropic => "anthropic",
    };
    format!(
        "{{\"summary\":{{\"api\":\"{api}\",\"requests\":{},\"unchanged\":{},\"changed\":{},\"refused_blocks\":{},\"refused\":{},\"left_out\":{},\"bytes_in\":{},\"bytes_out\":{},\"file_rules\":[{}],\"stopped_at\":{}}}}}",
        c.requests,
        c.unchanged,
        c.changed,
        c.refused_blocks,
        c.refused,
        c.left_out,
        c.bytes_in,
        c.bytes_out,
        rules.join(","),
        stopped_at.map_or_else(|| "null".to_string(), |n| n.to_string())
    )
}

fn summary_words(c: &Counts, seconds: f64, jobs: usize, stopped_at: Option<u64>) -> String {
    let rate = if seconds > 0.0 { c.requests as f64 / seconds } else { 0.0 };
    let stopped = stopped_at
        .map(|n| format!("; stopped at request {n} (--on-refusal fail), nothing written"))
        .unwrap_or_default();
    format!(
        "{} requests in {seconds:.1} s ({rate:.1} requests/s, {jobs} jobs): {} unchanged, {} changed, {} with refused \
         blocks, {} refused, {} left out; {} bytes in, {} bytes out{stopped}",
        c.requests, c.unchanged, c.changed, c.refused_blocks, c.refused, c.left_out, c.bytes_in, c.bytes_out
    )
}

/// A refused request's report line in words, for stderr when no report file is asked for.
fn refusal_words(report_line: &str) -> String {
    let Ok(v) = serde_json::from_str::<Value>(report_line) else { return report_line.to_string() };
    let number = &v["number"];
    let id = v["custom_id"].as_str().map(|id| format!(" ({id})")).unwrap_or_default();
    if let Some(message) = v["refusal"]["message"].as_str() {
        return format!("request {number}{id} refused: {message}");
    }
    let blocks: Vec<String> = v["changed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["to"].is_null())
        .map(|c| format!("{} {}", c["path"].as_str().unwrap_or(""), c["message"].as_str().unwrap_or("")))
        .collect();
    format!("request {number}{id}: {} block(s) refused: {}", blocks.len(), blocks.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(input: &[u8]) -> Vec<Result<Piece, String>> {
        let (sender, mut receiver) = mpsc::channel(1024);
        read_pieces(Box::new(std::io::Cursor::new(input.to_vec())), &sender);
        drop(sender);
        let mut out = Vec::new();
        while let Ok(p) = receiver.try_recv() {
            out.push(p);
        }
        out
    }

    /// The input put back together from its pieces, as the writer writes them when every request
    /// goes as it came.
    fn rejoined(input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut items = 0;
        for piece in pieces(input) {
            match piece.expect("readable") {
                Piece::Raw(b) => out.extend(b),
                Piece::Request { text, around: Around::Line { ending }, .. } => {
                    out.extend(text.expect("text").as_bytes());
                    out.extend(ending);
                }
                Piece::Request { text, around: Around::Item { before, after, .. }, .. } => {
                    if items > 0 {
                        out.push(b',');
                    }
                    items += 1;
                    out.extend(before);
                    out.extend(text.expect("text").as_bytes());
                    out.extend(after);
                }
            }
        }
        out
    }

    #[test]
    fn lines_keep_their_breaks_and_blank_lines_pass() {
        let input = b"{\"a\":1}\r\n\n  \n{\"b\":\"x\\ny\"}\n{\"c\":2}";
        assert_eq!(rejoined(input), input);
        let numbers: Vec<u64> = pieces(input)
            .into_iter()
            .filter_map(|p| match p.unwrap() {
                Piece::Request { number, .. } => Some(number),
                Piece::Raw(_) => None,
            })
            .collect();
        assert_eq!(numbers, [1, 4, 5]);
    }

    #[test]
    fn a_requests_document_is_split_into_its_items() {
        let input = b" {\"requests\" : [\n {\"custom_id\":\"a]\\\"}\",\"params\":{\"x\":[1,{}]}} ,\n\t{\"custom_id\":\"b\"}\n], \"k\": 1}\n";
        assert_eq!(requests_document_start(input), Some(16));
        assert_eq!(rejoined(input), input);
        let texts: Vec<String> = pieces(input)
            .into_iter()
            .filter_map(|p| match p.unwrap() {
                Piece::Request { text, .. } => Some(text.unwrap()),
                Piece::Raw(_) => None,
            })
            .collect();
        assert_eq!(texts, ["{\"custom_id\":\"a]\\\"}\",\"params\":{\"x\":[1,{}]}}", "{\"custom_id\":\"b\"}"]);
        assert_eq!(rejoined(b"{\"requests\":[ ]}"), b"{\"requests\":[ ]}");
        assert_eq!(rejoined(b"{\"requests\":[1, \"s\" ,null]}"), b"{\"requests\":[1, \"s\" ,null]}");
        assert_eq!(requests_document_start(b"{\"custom_id\":\"a\",\"params\":{}}\n"), None);
    }

    #[test]
    fn the_bytes_read_count_every_byte_of_the_document() {
        let input = b"{\"requests\":[ {\"a\":1} ,\"s\",2 ]}";
        let counted: usize = pieces(input)
            .into_iter()
            .map(|p| match p.unwrap() {
                Piece::Raw(b) => b.len(),
                Piece::Request { text, around: Around::Item { before, after, comma }, .. } => {
                    text.unwrap().len() + before.len() + after.len() + usize::from(comma)
                }
                Piece::Request { .. } => unreachable!("a document has items"),
            })
            .sum();
        assert_eq!(counted, input.len());
    }

    #[test]
    fn a_broken_requests_document_is_an_error_naming_where() {
        let last = pieces(b"{\"requests\":[{\"a\":1} {\"b\":2}]}").pop().unwrap();
        assert!(last.err().unwrap().contains("after item 1"));
        let last = pieces(b"{\"requests\":[{\"a\":1},{\"b\":").pop().unwrap();
        assert!(last.err().unwrap().contains("ends inside"));
    }

    #[test]
    fn non_utf8_and_overlong_requests_are_handed_over_as_such() {
        let mut input = b"{\"a\":\"\xff\"}\n".to_vec();
        input.extend(vec![b'x'; REQUEST_READ_CAP + 10]);
        input.extend(b"\r\n{}\n");
        let got: Vec<Result<String, (u64, String)>> = pieces(&input)
            .into_iter()
            .filter_map(|p| match p.unwrap() {
                Piece::Request { text, .. } => Some(text),
                Piece::Raw(_) => None,
            })
            .collect();
        assert_eq!(got.len(), 3);
        assert!(got[0].as_ref().unwrap_err().1.contains("line 1 is not UTF-8"));
        let (len, words) = got[1].as_ref().unwrap_err();
        assert_eq!(*len, REQUEST_READ_CAP as u64 + 10);
        assert!(words.contains("line 2 is longer than"));
        assert_eq!(got[2].as_deref(), Ok("{}"));
    }
}
