//! A model that never stops streaming, and one that echoes the API key: the live stream and the
//! answer stay bounded (the guest stops pulling past the cap and hangs up), and the key never
//! reaches the answer, the sink or the terminal, however the model splits it.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::vlm_server::*;
use crate::common::*;
use mediagate::ReadImageTool;
use mediagate::tool::Sink;
use mediagate::vlm::{Api, ChunkKind, VlmConfig};
use serde_json::json;

const KEY: &str = "sk-runaway-0123456789abcdef";
/// The answer's cap, marker included.
const ANSWER_CAP_CHARS: usize = 200_000;
const CUT: &str = "mediagate cut the reply here: it went on past 199900 characters and the rest was not read";

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_reply_is_cut_at_the_cap_and_the_stream_closed() {
    let (server, mut written) = endless_server("all work and no play ").await;
    let ws = workspace();
    let tool = ReadImageTool::new(runtime(), Some(config(server.openai_url()))).unwrap();
    let rec = Recorder::default();
    let answer = tool
        .read_image(ws.path(), "icon.png", None, rec.sink())
        .await
        .expect("no deadline: the guest stops pulling instead of running into it")
        .expect("the capped answer, not an error");
    assert!(answer.starts_with("all work and no play all work"), "{}", &answer[..100]);
    assert!(answer.ends_with(&format!("[… {CUT} …]")), "{}", &answer[answer.len() - 200..]);
    assert!(answer.chars().count() <= ANSWER_CAP_CHARS, "{}", answer.chars().count());
    // The live stream carried exactly the answer, nothing past the cap.
    assert_eq!(rec.text(), answer);
    let bytes = hung_up(&mut written).await;
    eprintln!("the endless server wrote {bytes} bytes before the client hung up; {} sink writes", rec.writes());
    // The answer is ~200 KB of text in ~9,500 events of ~100 bytes on the wire: what was read
    // past that is what sat in socket buffers when the client hung up.
    assert!(bytes < 64 << 20, "{bytes} bytes were read from an endless reply");

    // The next call on the same tool is unaffected.
    let (server2, mut written2) = endless_server("again ").await;
    let tool2 = ReadImageTool::new(runtime(), Some(config(server2.openai_url()))).unwrap();
    let answer = tool2.read_image(ws.path(), "icon.png", Some("q"), Recorder::default().sink()).await.unwrap().unwrap();
    assert!(answer.ends_with(&format!("[… {CUT} …]")));
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
            .env("MEDIAGATE_VLM_API_KEY", KEY)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    eprintln!("read-image wrote {} bytes to stdout", stdout.len());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.trim_end().ends_with(&format!("[… {CUT} …]")), "{}", &stdout[stdout.len() - 200..]);
    assert!(stdout.chars().count() <= ANSWER_CAP_CHARS + 1, "{} characters", stdout.chars().count());
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
    let answer = tool.read_image(ws.path(), "icon.png", None, rec.sink()).await.unwrap().unwrap();
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
        .env("MEDIAGATE_VLM_API_KEY", KEY)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}
