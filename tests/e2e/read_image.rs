//! `read_image` end to end: the real component, the real host, a real HTTP server on 127.0.0.1
//! speaking the OpenAI and Anthropic dialects.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::test_oracles::expected_cut;
use crate::common::vlm_server::*;
use crate::common::*;
use base64::Engine as _;
use mediagate::tool::{Sink, ToolError, ToolErrorCode};
use mediagate::vlm::{Api, ChunkKind, VlmConfig};
use mediagate::{ReadImageTool, Runtime};
use serde_json::json;

const DESCRIBE_START: &str = "Describe this image for someone who cannot see it.";

fn tool(vlm: Option<VlmConfig>) -> ReadImageTool {
    ReadImageTool::new(runtime(), vlm).unwrap()
}

fn openai(server: &VlmServer) -> Option<VlmConfig> {
    let mut c = VlmConfig::new(Api::OpenAi, server.openai_url(), "test-vlm");
    c.api_key = Some("sk-test-secret".into());
    Some(c)
}

/// A workspace with a small PNG, a PDF and a copy of the retina screenshot.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(corpus().join("photos/tango-icon-address-book-new-16.png"), dir.path().join("icon.png")).unwrap();
    std::fs::copy(fixture("hello.pdf"), dir.path().join("report.png")).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    dir
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<(Instant, ChunkKind, String)>>>);

impl Recorder {
    fn sink(&self) -> Sink {
        let inner = self.0.clone();
        Arc::new(move |kind, text| inner.lock().unwrap().push((Instant::now(), kind, text.to_string())))
    }
    fn texts(&self, kind: ChunkKind) -> String {
        self.0.lock().unwrap().iter().filter(|(_, k, _)| *k == kind).map(|(_, _, t)| t.as_str()).collect()
    }
}

async fn call(tool: &ReadImageTool, ws: &Path, path: &str, question: Option<&str>) -> Result<String, ToolError> {
    tool.read_image(ws, path, question, None, Recorder::default().sink())
        .await
        .expect("the sandbox itself never fails here")
        .answer
}

#[tokio::test]
async fn a_question_gets_its_answer_openai_dialect() {
    // Multi-byte UTF-8 split across network writes, SSE comments, a reasoning delta, keep-alives.
    let snowman = "☃".as_bytes();
    let data = |s: &str| openai_data(json!({"content": s}));
    let mut split = data("Snow");
    let mut man = data("man: ☃ and 日本");
    let cut = man.windows(3).position(|w| w == snowman).unwrap() + 1;
    split.extend_from_slice(&man[..cut]);
    let rest = man.split_off(cut);
    let server = VlmServer::start(vec![openai_pieces(vec![
        piece(0, ": this is a comment\n\n"),
        piece(20, openai_data(json!({"reasoning_content": "The user wants the colour."}))),
        piece(20, split),
        piece(20, rest),
        piece(20, ":\n\n"),
        piece(20, data("<think>private</think>, done.")),
        piece(0, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"),
        piece(0, "data: [DONE]\n\n"),
    ])])
    .await;
    let ws = workspace();
    let rec = Recorder::default();
    let answer = tool(openai(&server))
        .read_image(ws.path(), "icon.png", Some("What colour is the book?"), None, rec.sink())
        .await
        .unwrap()
        .answer
        .unwrap();
    assert_eq!(answer, "Snowman: ☃ and 日本, done.");
    assert!(rec.texts(ChunkKind::Reasoning).contains("The user wants the colour."));
    assert!(rec.texts(ChunkKind::Reasoning).contains("private"));

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.headers["authorization"], "Bearer sk-test-secret");
    assert_eq!(r.body["model"], "test-vlm");
    assert_eq!(r.body["stream"], true);
    let content = &r.body["messages"][0]["content"];
    assert_eq!(content[0]["text"], "What colour is the book?");
    let icon = canonical_png(&std::fs::read(ws.path().join("icon.png")).unwrap());
    let expected = format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(&icon));
    assert_eq!(content[1]["image_url"]["url"], expected, "exactly the admitted (canonical) bytes");
}

#[tokio::test]
async fn no_question_asks_for_a_description_anthropic_dialect() {
    let server = VlmServer::start(vec![anthropic_reply("Looking closely.", &["An address ", "book icon."])]).await;
    let mut config = VlmConfig::new(Api::Anthropic, server.anthropic_url(), "claude-test");
    config.api_key = Some("sk-ant-secret".into());
    let ws = workspace();
    let rec = Recorder::default();
    let answer =
        tool(Some(config)).read_image(ws.path(), "icon.png", None, None, rec.sink()).await.unwrap().answer.unwrap();
    assert_eq!(answer, "An address book icon.");
    assert_eq!(rec.texts(ChunkKind::Reasoning), "Looking closely.");
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.headers["x-api-key"], "sk-ant-secret");
    assert_eq!(r.headers["anthropic-version"], "2023-06-01");
    let content = &r.body["messages"][0]["content"];
    assert_eq!(content[0]["source"]["media_type"], "image/png");
    assert!(content[1]["text"].as_str().unwrap().starts_with(DESCRIBE_START));
}

#[tokio::test]
async fn without_a_vlm_the_tool_answers_at_once_and_calls_nothing() {
    let server = VlmServer::start(vec![openai_reply(&["never"], 0)]).await;
    let ws = workspace();
    let started = Instant::now();
    let err = call(&tool(None), ws.path(), "icon.png", None).await.unwrap_err();
    assert_eq!(err.code, ToolErrorCode::NoVlm);
    assert!(err.message.starts_with("error: ") && err.message.contains("Do not retry"), "{}", err.message);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn files_that_are_not_images_never_reach_the_vlm() {
    let server = VlmServer::start(vec![openai_reply(&["never"], 0)]).await;
    let ws = workspace();
    let t = tool(openai(&server));
    // A PDF is rendered (its page 1 by default); this one's only page has no content.
    let err = call(&t, ws.path(), "report.png", None).await.unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            ToolErrorCode::Refused,
            "error: the PDF report.png cannot be shown to the model: page 1 of the PDF renders to nothing (every pixel is white)"
        )
    );
    std::fs::write(ws.path().join("notes.png"), "plain words").unwrap();
    let err = call(&t, ws.path(), "notes.png", None).await.unwrap_err();
    assert!(err.message.starts_with("error: not an image (detected text/plain)"));
    let err = call(&t, ws.path(), "missing.png", None).await.unwrap_err();
    assert_eq!((err.code, err.message.as_str()), (ToolErrorCode::NotFound, "error: file not found: missing.png"));
    assert!(server.requests().is_empty());
    // An SVG is no longer one of them: the tool converts by default, and the model is sent a PNG.
    std::fs::copy(fixture("icon-svg.png"), ws.path().join("logo.png")).unwrap();
    assert_eq!(call(&t, ws.path(), "logo.png", None).await.unwrap(), "never");
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].body.to_string().contains("data:image/png;base64,"), "the SVG went as a PNG");
}

#[tokio::test]
async fn nothing_outside_the_workspace_is_reachable() {
    let server = VlmServer::start(vec![openai_reply(&["never"], 0)]).await;
    let ws = workspace();
    let outside = tempfile::tempdir().unwrap();
    std::fs::copy(corpus().join("photos/tango-icon-address-book-new-16.png"), outside.path().join("secret.png"))
        .unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.png"), ws.path().join("link.png")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join("linkdir")).unwrap();
    std::os::unix::fs::symlink(ws.path().join("link.png"), ws.path().join("chain.png")).unwrap();
    let t = tool(openai(&server));
    let secret = outside.path().join("secret.png");
    let escape = format!("../{}/secret.png", outside.path().file_name().unwrap().to_str().unwrap());
    for (path, code) in [
        ("../icon.png", ToolErrorCode::OutsideWorkspace),
        (escape.as_str(), ToolErrorCode::OutsideWorkspace),
        (secret.to_str().unwrap(), ToolErrorCode::OutsideWorkspace),
        ("/etc/passwd", ToolErrorCode::OutsideWorkspace),
        ("link.png", ToolErrorCode::OutsideWorkspace),
        ("linkdir/secret.png", ToolErrorCode::OutsideWorkspace),
        ("chain.png", ToolErrorCode::OutsideWorkspace),
        ("sub", ToolErrorCode::NotAFile),
        (".", ToolErrorCode::NotAFile),
    ] {
        let err = call(&t, ws.path(), path, None).await.unwrap_err();
        assert_eq!(err.code, code, "{path}: {}", err.message);
    }
    assert!(server.requests().is_empty());
    // An absolute path inside the workspace is fine.
    let inside = std::fs::canonicalize(ws.path()).unwrap().join("icon.png");
    let server_ok = VlmServer::start(vec![openai_reply(&["fine"], 0)]).await;
    assert_eq!(call(&tool(openai(&server_ok)), ws.path(), inside.to_str().unwrap(), None).await.unwrap(), "fine");
}

#[tokio::test]
async fn a_fifo_is_refused_without_hanging() {
    let server = VlmServer::start(vec![openai_reply(&["never"], 0)]).await;
    let ws = workspace();
    let fifo = ws.path().join("pipe.png");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let t = tool(openai(&server));
    let err = tokio::time::timeout(Duration::from_secs(20), call(&t, ws.path(), "pipe.png", None))
        .await
        .expect("a FIFO must not hang the tool")
        .unwrap_err();
    assert_eq!(err.code, ToolErrorCode::NotAFile);
    assert!(err.message.contains("not a regular file") && err.message.contains("not opened"), "{}", err.message);
}

#[tokio::test]
async fn the_reply_reaches_the_sink_while_it_streams() {
    let pause = 300;
    let server = VlmServer::start(vec![openai_reply(&["one ", "two ", "three"], pause)]).await;
    let ws = workspace();
    let rec = Recorder::default();
    let started = Instant::now();
    let answer =
        tool(openai(&server)).read_image(ws.path(), "icon.png", None, None, rec.sink()).await.unwrap().answer.unwrap();
    let returned = Instant::now();
    assert_eq!(answer, "one two three");
    let seen = rec.0.lock().unwrap().clone();
    assert_eq!(seen.iter().map(|(_, _, t)| t.as_str()).collect::<Vec<_>>(), ["one ", "two ", "three"]);
    // The server pauses before each piece: the first piece reached the sink well before the
    // call returned, and each piece arrived at least one pause after the previous one.
    assert!(returned.duration_since(seen[0].0) >= Duration::from_millis(2 * pause - 50));
    for pair in seen.windows(2) {
        assert!(pair[1].0.duration_since(pair[0].0) >= Duration::from_millis(pause - 50));
    }
    assert!(seen[0].0.duration_since(started) >= Duration::from_millis(pause - 50));
}

/// Replies of each length around the cap, through the real component and a loopback model: the
/// answer's length, head, marker and tail exact, the unique last line always in it, and the live
/// stream (its notices taken out) the answer.
#[tokio::test]
async fn replies_up_to_the_cap_are_whole_and_longer_ones_cut_in_the_middle() {
    for n in [199_999, 200_000, 200_001, 300_000, 999_999] {
        let text = reply_of(n);
        let pieces = split_text(&text, 8_191);
        let texts: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let server = VlmServer::start(vec![openai_reply(&texts, 0)]).await;
        let ws = workspace();
        let rec = Recorder::default();
        let answer = tool(openai(&server))
            .read_image(ws.path(), "icon.png", None, None, rec.sink())
            .await
            .unwrap()
            .answer
            .unwrap();
        assert!(answer.ends_with(&format!("\nthe last line of the {n}-character reply")), "{n}");
        assert_eq!(answer.chars().count(), n.min(200_000), "{n}");
        if n > 200_000 {
            let head: String = text.chars().take(100_000).collect();
            let marker = answer[head.len()..].split_inclusive("…]\n\n").next().unwrap();
            let cut: usize = marker
                .strip_prefix("\n\n[… ")
                .and_then(|m| m.strip_suffix(" characters cut from the middle by mediagate …]\n\n"))
                .unwrap_or_else(|| panic!("{n}: {marker:?}"))
                .parse()
                .unwrap();
            let tail = &answer[head.len() + marker.len()..];
            assert!(answer.starts_with(&head) && text.ends_with(tail), "{n}");
            assert_eq!(100_000 + cut + tail.chars().count(), n, "{n}: the marker states what was cut");
        }
        assert_eq!(answer, expected_cut(&text, ""), "{n}");
        assert_eq!(without_notices(&rec.texts(ChunkKind::Content), "answer"), answer, "{n}");
    }
}

/// Long reasoning in the Anthropic dialect is cut the same way on the live stream, and none of it
/// reaches the answer.
#[tokio::test]
async fn long_reasoning_is_cut_the_same_way_and_kept_out_of_the_answer() {
    let thought = reply_of(300_000);
    let answer_text = reply_of(250_000);
    let pieces = split_text(&answer_text, 16_384);
    let texts: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let server = VlmServer::start(vec![anthropic_reply(&thought, &texts)]).await;
    let mut config = VlmConfig::new(Api::Anthropic, server.anthropic_url(), "test-vlm");
    config.api_key = Some("sk-ant-test".into());
    let ws = workspace();
    let rec = Recorder::default();
    let answer =
        tool(Some(config)).read_image(ws.path(), "icon.png", None, None, rec.sink()).await.unwrap().answer.unwrap();
    assert_eq!(answer, expected_cut(&answer_text, ""));
    assert_eq!(without_notices(&rec.texts(ChunkKind::Reasoning), "reasoning"), expected_cut(&thought, ""));
    assert_eq!(without_notices(&rec.texts(ChunkKind::Content), "answer"), answer);
}

#[tokio::test]
async fn an_oversize_image_is_downsampled_before_it_is_sent() {
    let server = VlmServer::start(vec![openai_reply(&["a screenshot"], 0)]).await;
    let ws = workspace();
    std::fs::copy(corpus().join("bench/screenshot-3456x2234.png"), ws.path().join("retina.png")).unwrap();
    assert_eq!(call(&tool(openai(&server)), ws.path(), "retina.png", None).await.unwrap(), "a screenshot");
    let url = server.requests()[0].body["messages"][0]["content"][1]["image_url"]["url"].as_str().unwrap().to_string();
    let b64 = url.strip_prefix("data:image/png;base64,").expect("kept as PNG");
    // An OpenAI-compatible model: the openai profile's limit applies (20 MB of base64).
    assert!(b64.len() <= 20_000_000);
    let png = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
    let (w, h) =
        (u32::from_be_bytes(png[16..20].try_into().unwrap()), u32::from_be_bytes(png[20..24].try_into().unwrap()));
    assert_eq!((w, h), (2000, 1293));
}

#[tokio::test]
async fn the_provider_refusal_is_reported_with_its_words() {
    let server =
        VlmServer::start(vec![error_reply(401, json!({"error": {"message": "invalid x-api-key"}}), &[])]).await;
    let ws = workspace();
    let err = call(&tool(openai(&server)), ws.path(), "icon.png", None).await.unwrap_err();
    assert_eq!(err.code, ToolErrorCode::VlmFailed);
    assert!(err.message.contains("401") && err.message.contains("invalid x-api-key"), "{}", err.message);
    assert!(!err.message.contains("sk-test-secret"), "the key never appears in errors");
    assert_eq!(server.requests().len(), 1, "a 401 is not retried");
}

#[tokio::test]
async fn the_tool_publishes_its_definition() {
    let def = tool(None).definition().await.unwrap();
    assert_eq!(def.name, "read_image");
    let schema: serde_json::Value = serde_json::from_str(&def.parameters_schema).unwrap();
    assert_eq!(schema["required"], json!(["path"]));
    assert_eq!(schema["properties"]["question"]["type"], "string");
    assert!(def.description.contains("vision model"));
}

#[tokio::test]
async fn the_cli_streams_the_reply_to_stdout() {
    let server = VlmServer::start(vec![openai_reply(&["A small ", "icon."], 50)]).await;
    let ws = workspace();
    let run = |extra: Vec<String>| {
        let mut cmd = mediagate_command();
        cmd.arg("read-image").args(extra).env_remove(mediagate::facts::env::VLM_URL);
        cmd.output().unwrap()
    };
    let ws_arg = ws.path().to_str().unwrap().to_string();
    // `read-image FILE` against the loopback model, off the runtime's threads.
    let ask = |file: &'static str| {
        let (url, ws_arg) = (server.openai_url(), ws_arg.clone());
        tokio::task::spawn_blocking(move || {
            run(vec![
                file.into(),
                "--workspace".into(),
                ws_arg,
                "--vlm-url".into(),
                url,
                "--vlm-model".into(),
                "m".into(),
            ])
        })
    };
    let out = ask("icon.png").await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "A small icon.\n");

    let out = ask("nope.png").await.unwrap();
    assert_eq!(out.status.code(), Some(2), "a file that cannot be read is not judged");
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "error: file not found: nope.png\n");

    let out =
        tokio::task::spawn_blocking(move || run(vec!["icon.png".into(), "--workspace".into(), ws_arg])).await.unwrap();
    assert_eq!(out.status.code(), Some(2), "no vision model: nothing judged");
    assert!(String::from_utf8(out.stderr).unwrap().contains("no vision model"));
}

#[tokio::test]
async fn each_call_gets_a_fresh_instance_and_calls_run_concurrently() {
    let server = VlmServer::start(vec![openai_reply(&["ok"], 100)]).await;
    let ws = workspace();
    let t = tool(openai(&server));
    let started = Instant::now();
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let (t, ws) = (t.clone(), ws.path().to_path_buf());
            tokio::spawn(async move { t.read_image(&ws, "icon.png", None, None, Recorder::default().sink()).await })
        })
        .collect();
    for c in calls {
        assert_eq!(c.await.unwrap().unwrap().answer.unwrap(), "ok");
    }
    // Eight calls that each wait 100 ms on the VLM overlap instead of queueing.
    assert!(started.elapsed() < Duration::from_millis(8 * 100));
    assert_eq!(server.requests().len(), 8);
    let _ = Runtime::new;
}

/// A two-frame GIF: Anthropic admits animated GIFs, OpenAI takes still ones only.
fn animated_gif() -> Vec<u8> {
    use image::codecs::gif::GifEncoder;
    use image::{Delay, Frame, Rgba, RgbaImage};
    let mut bytes = Vec::new();
    let mut encoder = GifEncoder::new(&mut bytes);
    for shade in [0u8, 200] {
        let frame = Frame::from_parts(
            RgbaImage::from_pixel(8, 8, Rgba([shade, 0, 0, 255])),
            0,
            0,
            Delay::from_numer_denom_ms(100, 1),
        );
        encoder.encode_frame(frame).unwrap();
    }
    drop(encoder);
    bytes
}

/// `read_image` admits the image under the profile of the API the model speaks, not always
/// Anthropic's: an animated GIF goes to an Anthropic model as it is, and to an OpenAI-compatible
/// one (which refuses animation) as its first frame, a PNG.
#[tokio::test]
async fn the_image_is_admitted_under_the_profile_of_the_vlms_api() {
    let ws = workspace();
    std::fs::write(ws.path().join("anim.gif"), animated_gif()).unwrap();
    let server = VlmServer::start(vec![anthropic_reply("", &["Two frames."])]).await;
    let mut c = VlmConfig::new(Api::Anthropic, server.anthropic_url(), "claude");
    c.api_key = Some("sk-test-secret".into());
    assert_eq!(call(&tool(Some(c)), ws.path(), "anim.gif", None).await.unwrap(), "Two frames.");
    assert_eq!(server.requests().len(), 1);

    assert!(server.requests()[0].body.to_string().contains("\"media_type\":\"image/gif\""));

    let server = VlmServer::start(vec![openai_reply(&["One frame."], 0)]).await;
    assert_eq!(call(&tool(openai(&server)), ws.path(), "anim.gif", None).await.unwrap(), "One frame.");
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].body.to_string().contains("data:image/png;base64,"), "the first frame went as a PNG");
}

/// A reply cut at the model's output limit, through the CLI: what arrived is printed with the
/// marker, never as if it were the whole answer.
#[tokio::test]
async fn the_cli_marks_a_reply_cut_at_the_output_limit() {
    let server = VlmServer::start(vec![openai_reply_finishing(&["A small ", "ic"], "length")]).await;
    let ws = workspace();
    let (url, ws_arg) = (server.openai_url(), ws.path().to_str().unwrap().to_string());
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_mediagate"))
            .args(["read-image", "icon.png", "--workspace", &ws_arg, "--vlm-url", &url, "--vlm-model", "m"])
            .env(mediagate::facts::env::CACHE_DIR, cache_dir())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("A small ic\n\n[mediagate: the reply was cut off ("), "{stdout}");
    assert!(stdout.contains("output limit") && stdout.ends_with("the answer above is incomplete]\n"), "{stdout}");
}

/// A model's text cannot drive the terminal: escape sequences (a window title, a screen clear) and
/// other control characters come out escaped, on stdout and in the reasoning on stderr, and the
/// reasoning is not styled when stderr is not a terminal.
#[tokio::test]
async fn the_cli_escapes_control_sequences_from_the_model() {
    let hostile = openai_pieces(vec![
        piece(0, openai_data(json!({"reasoning_content": "think \u{1b}[31mred\u{1b}[0m"}))),
        piece(0, openai_data(json!({"content": "title \u{1b}]0;pwned\u{7} then "}))),
        piece(0, openai_data(json!({"content": "clear \u{1b}[2J\rover\nnext\tline"}))),
        piece(0, format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))),
        piece(0, "data: [DONE]\n\n"),
    ]);
    let server = VlmServer::start(vec![hostile]).await;
    let ws = workspace();
    let (url, ws_arg) = (server.openai_url(), ws.path().to_str().unwrap().to_string());
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_mediagate"))
            .args(["read-image", "icon.png", "--workspace", &ws_arg, "--vlm-url", &url, "--vlm-model", "m"])
            .arg("--show-reasoning")
            .env(mediagate::facts::env::CACHE_DIR, cache_dir())
            .env_remove("NO_COLOR")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(
            !bytes.iter().any(|&b| b == 0x1b || b == 0x07 || b == b'\r'),
            "{name}: {:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout, "title \\u{1b}]0;pwned\\u{7} then clear \\u{1b}[2J\\u{d}over\nnext\tline\n");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("think \\u{1b}[31mred\\u{1b}[0m"), "{stderr}");
}
