//! A model that never stops streaming, and one that echoes the API key: the live stream and the
//! answer stay bounded (the guest reads to its read bound, keeps the head and the last characters
//! read, and hangs up), and the key never reaches the answer, the sink or the terminal, however
//! the model splits it.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::test_oracles::expected_cut;
use crate::common::vlm_server::*;
use crate::common::*;
use mediagate::tool::Sink;
use mediagate::vlm::{Api, ChunkKind, VlmConfig};
use mediagate::{Answered, ReadImageTool};
use serde_json::json;

const KEY: &str = "sk-runaway-0123456789abcdef";
/// The answer's cap, marker and note included.
const ANSWER_CAP_CHARS: usize = 200_000;

fn config(url: String) -> VlmConfig {
    let mut c = VlmConfig::new(Api::OpenAi, url, "test-vlm");
    c.api_key = Some(KEY.into());
    c
}

/// A workspace with one small valid PNG (made here; nothing outside the repository is read).
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let img = image::RgbImage::from_fn(8, 8, |x, y| image::Rgb([x as u8 * 30, y as u8 * 30, 200]));
    img.save(dir.path().join("icon.png")).unwrap();
    dir
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<(ChunkKind, String)>>>);

impl Recorder {
    fn sink(&self) -> Sink {
        let inner = self.0.clone();
        Arc::new(move |kind, text| inner.lock().unwrap().push((kind, text.to_string())))
    }
    fn text(&self) -> String {
        self.0.lock().unwrap().iter().map(|(_, t)| t.as_str()).collect()
    }
    fn writes(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

/// A server whose every reply streams `text` forever; the bytes each connection got written, once
/// the client hung up.
async fn endless_server(text: &'static str) -> (RawServer, tokio::sync::mpsc::UnboundedReceiver<u64>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let server = RawServer::start(move |_, stream| {
        let tx = tx.clone();
        async move {
            let written = serve_endless_openai(stream, text).await;
            let _ = tx.send(written);
        }
    })
    .await;
    (server, rx)
}

/// Waits for the server to see the client hang up; a client that never does fails the test.
async fn hung_up(rx: &mut tokio::sync::mpsc::UnboundedReceiver<u64>) -> u64 {
    tokio::time::timeout(Duration::from_secs(300), rx.recv())
        .await
        .expect("the client never hung up on the endless reply")
        .unwrap()
}

/// What an endless reply of `text` owes: the first 1,000,000 characters read, cut in the middle,
/// and the note that the reply did not end.
fn endless_answer(text: &str) -> String {
    let read: String = text.chars().cycle().take(1_000_000).collect();
    expected_cut(&read, RUNAWAY_NOTE)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_reply_is_cut_at_the_read_bound_in_bounded_memory_and_the_stream_closed() {
    let ws = workspace();
    // What a short reply costs the guest, to compare the endless one with.
    let short = VlmServer::start(vec![openai_reply(&["A small icon."], 0)]).await;
    let tool = ReadImageTool::new(runtime(), Some(config(short.openai_url()))).unwrap();
    let short_call = tool.read_image(ws.path(), "icon.png", None, None, Recorder::default().sink()).await.unwrap();
    assert_eq!(short_call.answer.unwrap(), "A small icon.");
    let short_stats = short_call.stats;

    let (server, mut written) = endless_server("all work and no play ").await;
    let tool = ReadImageTool::new(runtime(), Some(config(server.openai_url()))).unwrap();
    let rec = Recorder::default();
    let started = std::time::Instant::now();
    let Answered { answer, stats } = tool
        .read_image(ws.path(), "icon.png", None, None, rec.sink())
        .await
        .expect("no deadline: the guest stops pulling instead of running into it");
    let answer = answer.expect("the cut answer, not an error");
    let took = started.elapsed();
    assert_eq!(answer, endless_answer("all work and no play "));
    assert_eq!(answer.chars().count(), ANSWER_CAP_CHARS);
    // The live stream carried the head, the notices, and then the rest of the answer.
    assert_eq!(without_notices(&rec.text(), "answer"), answer);
    let bytes = hung_up(&mut written).await;
    eprintln!(
        "endless reply: guest peak memory {} bytes (a short reply: {}), {took:?} wall time, the server wrote \
         {bytes} bytes before the client hung up; {} sink writes",
        stats.peak_memory,
        short_stats.peak_memory,
        rec.writes()
    );
    // 1,000,000 characters in ~47,600 events of ~100 bytes on the wire: what was read past that
    // is what sat in socket buffers when the client hung up.
    assert!(bytes < 64 << 20, "{bytes} bytes were read from an endless reply");
    // The head and the ring are ~1 MB whatever the reply's length: the guest grew by no more.
    assert!(
        stats.peak_memory <= short_stats.peak_memory + (4 << 20),
        "the endless reply took the guest to {} bytes, a short one to {}",
        stats.peak_memory,
        short_stats.peak_memory
    );

    // The next call on the same tool is unaffected.
    let (server2, mut written2) = endless_server("again ").await;
    let tool2 = ReadImageTool::new(runtime(), Some(config(server2.openai_url()))).unwrap();
    let answer = tool2
        .read_image(ws.path(), "icon.png", Some("q"), None, Recorder::default().sink())
        .await
        .unwrap()
        .answer
        .unwrap();
    assert_eq!(answer, endless_answer("again "));
    hung_up(&mut written2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_image_on_the_command_line_writes_a_bounded_stream() {
    let (server, mut written) = endless_server("all work and no play ").await;
    let ws = workspace();
    let url = server.openai_url();
    let dir = ws.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        mediagate_command()
            .args(["read-image", "icon.png", "--workspace", dir.to_str().unwrap(), "--vlm-url", &url])
            .args(["--vlm-model", "test-vlm"])
            .env(mediagate::facts::env::VLM_API_KEY, KEY)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    eprintln!("read-image wrote {} bytes to stdout", stdout.len());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // stdout is the live stream: the answer with the notices that it paused and will be cut.
    let stdout = stdout.strip_suffix('\n').unwrap();
    assert_eq!(without_notices(stdout, "answer"), endless_answer("all work and no play "));
    assert!(stdout.contains("the answer is longer than 200000 characters, so it will be cut in the middle"));
    hung_up(&mut written).await;
}

/// A reply that echoes the key, split across events at every kind of boundary.
fn echoing_reply() -> Script {
    let (a, b) = KEY.split_at(5);
    let (b, c) = b.split_at(9);
    let data = |s: &str| openai_data(json!({"content": s}));
    openai_pieces(vec![
        piece(0, data("Your key is ")),
        piece(5, data(a)),
        piece(5, data(b)),
        piece(5, [data(c), data(&format!(" and whole: {KEY}. Also {a}"))].concat()),
        piece(5, openai_data(json!({"reasoning_content": format!("thinking about {KEY}")}))),
        piece(5, data(&format!("{b}{c}!"))),
        piece(0, "data: [DONE]\n\n"),
    ])
}

const REDACTED_ANSWER: &str = "Your key is <redacted> and whole: <redacted>. Also <redacted>!";

#[tokio::test]
async fn a_key_the_model_echoes_is_redacted_in_the_answer_and_the_stream() {
    let server = VlmServer::start(vec![echoing_reply()]).await;
    let ws = workspace();
    let tool = ReadImageTool::new(runtime(), Some(config(server.openai_url()))).unwrap();
    let rec = Recorder::default();
    let answer = tool.read_image(ws.path(), "icon.png", None, None, rec.sink()).await.unwrap().answer.unwrap();
    assert_eq!(answer, REDACTED_ANSWER);
    let seen = rec.0.lock().unwrap().clone();
    let all: String = seen.iter().map(|(_, t)| t.as_str()).collect();
    assert!(!all.contains(KEY) && !all.contains(&KEY[..12]), "{seen:?}");
    let reasoning: String = seen.iter().filter(|(k, _)| *k == ChunkKind::Reasoning).map(|(_, t)| t.as_str()).collect();
    assert_eq!(reasoning, "thinking about <redacted>");
    assert_eq!(server.requests()[0].headers["authorization"], format!("Bearer {KEY}"), "the key was sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_the_model_echoes_never_reaches_the_terminal() {
    let server = VlmServer::start(vec![echoing_reply()]).await;
    let ws = workspace();
    let url = server.openai_url();
    let dir = ws.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || run_read_image(&dir, &url)).await.unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.trim_end(), REDACTED_ANSWER);
    assert!(!stderr.contains(KEY) && stderr.contains("thinking about <redacted>"), "{stderr}");
}

fn run_read_image(dir: &Path, url: &str) -> std::process::Output {
    mediagate_command()
        .args(["read-image", "icon.png", "--show-reasoning", "--workspace", dir.to_str().unwrap(), "--vlm-url", url])
        .args(["--vlm-model", "test-vlm"])
        .env(mediagate::facts::env::VLM_API_KEY, KEY)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// A model that streams steadily past the reply deadline before the read bound: the deadline
/// ends it, and the answer is the same middle cut of what was read, noted as not ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_still_streaming_at_the_reply_deadline_is_cut_the_same_way() {
    const EVENT_TEXT: &str = "a steady stream of text, one event every few milliseconds\n";
    let server = RawServer::start(|_, mut stream| async move {
        if read_request(&mut stream).await.is_none() {
            return;
        }
        write_raw(&mut stream, &sse_head_chunked()).await;
        let events = http_chunk(&openai_data(json!({"content": EVENT_TEXT.repeat(50)})));
        loop {
            use tokio::io::AsyncWriteExt;
            if stream.write_all(&events).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
    })
    .await;
    let mut c = config(server.openai_url());
    c.max_reply_time = Duration::from_secs(3);
    let ws = workspace();
    let tool = ReadImageTool::new(runtime(), Some(c)).unwrap();
    let answer =
        tool.read_image(ws.path(), "icon.png", None, None, Recorder::default().sink()).await.unwrap().answer.unwrap();
    let note = "\n\n[mediagate: the reply was cut off (the vision model timed out: the reply took longer than 3s in all); \
                the answer above is incomplete]";
    let kept = answer.strip_suffix(note).unwrap_or_else(|| panic!("{}", &answer[answer.len() - 300..]));
    let (head, rest) = kept.split_once("\n\n[… ").expect("cut in the middle: ~0.6 MB arrive in 3 s");
    let (cut, tail) = rest.split_once(" characters cut from the middle by mediagate …]\n\n").unwrap();
    let read = head.chars().count() + cut.parse::<usize>().unwrap() + tail.chars().count();
    assert_eq!(head.chars().count(), 100_000);
    assert_eq!(answer.chars().count(), ANSWER_CAP_CHARS);
    assert_eq!(read % EVENT_TEXT.chars().count(), 0, "whole events were read: {read} characters");
    assert!(read < 1_000_000, "the deadline came first: {read} characters");
    assert!(EVENT_TEXT.repeat(50).repeat(2).contains(tail.get(tail.len() - 3_000..).unwrap()));
}
