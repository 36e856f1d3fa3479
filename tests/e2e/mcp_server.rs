//! `mediagate mcp` as a subprocess, driven by raw lines on its stdin: every line gets exactly one
//! answer (bad lines a parse error, duplicate ids an error, never silence), calls past the sandbox
//! budget wait their turn or are told the server is busy, the whole server's memory stays within
//! its budget (peak RSS from /proc), and an endless VLM reply gives a bounded stream of progress
//! notifications and the capped answer.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::vlm_server::*;
use crate::common::*;
use serde_json::{Value, json};

/// How long a test waits for any one message before it calls the server hung.
const HANG: Duration = Duration::from_secs(300);

struct Mcp {
    child: Child,
    /// `None` once closed.
    stdin: Option<ChildStdin>,
    incoming: std::sync::mpsc::Receiver<Value>,
}

impl Mcp {
    fn start(workspace: &Path, vlm_url: Option<&str>, extra: &[&str]) -> Mcp {
        let mut command = mediagate_command();
        command.args(["mcp", "--workspace", workspace.to_str().unwrap()]).args(extra);
        if let Some(url) = vlm_url {
            command.args(["--vlm-url", url, "--vlm-model", "test-vlm"]);
        }
        Mcp::spawn(command, json!({}))
    }

    /// `command` started and initialised, the client declaring `capabilities`.
    /// Without `--workspace`, started in `dir`, for a client that declares `roots`.
    fn start_with_roots(dir: &Path) -> Mcp {
        let mut command = mediagate_command();
        command.arg("mcp").current_dir(dir);
        Mcp::spawn(command, json!({"roots": {"listChanged": true}}))
    }

    fn spawn(mut command: std::process::Command, capabilities: Value) -> Mcp {
        let mut child = command
            .env_remove(mediagate::facts::env::VLM_URL)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let (tx, incoming) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let line = line.expect("stdout is UTF-8 lines");
                let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout: {e}"));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        let mut mcp = Mcp { child, stdin: Some(stdin), incoming };
        mcp.send(&json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "raw-lines", "version": "0"}}}));
        let answer = mcp.recv();
        assert_eq!(answer["id"], "init", "{answer}");
        assert!(answer.get("result").is_some(), "{answer}");
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send_raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(message.to_string().as_bytes());
    }

    fn call(&mut self, id: Value, path: &str, progress: Option<&str>) {
        let mut params = json!({"name": "read_image", "arguments": {"path": path}});
        if let Some(token) = progress {
            params["_meta"] = json!({"progressToken": token});
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
    }

    fn recv(&self) -> Value {
        self.incoming.recv_timeout(HANG).expect("the server answered nothing (hung or silent)")
    }

    /// Messages until the answer to `id`, that answer last.
    fn until_answer(&self, id: &Value) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.recv();
            let done = message.get("method").is_none() && &message["id"] == id;
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    /// A `/proc/PID/status` field of the server, in bytes.
    fn status_bytes(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with(&format!("{field}:"))).unwrap();
        line[field.len() + 1..].trim().trim_end_matches("kB").trim().parse::<u64>().unwrap() * 1024
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn error_of(message: &Value) -> (Value, i64, String) {
    let error = &message["error"];
    assert!(error.is_object(), "expected an error: {message}");
    (message["id"].clone(), error["code"].as_i64().unwrap(), error["message"].as_str().unwrap().to_string())
}

fn tool_text(message: &Value) -> (bool, String) {
    let result = &message["result"];
    assert!(result.is_object(), "expected a result: {message}");
    (result["isError"].as_bool().unwrap_or(false), result["content"][0]["text"].as_str().unwrap().to_string())
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let img = image::RgbImage::from_fn(8, 8, |x, y| image::Rgb([x as u8 * 30, y as u8 * 30, 200]));
    img.save(dir.path().join("icon.png")).unwrap();
    dir
}

#[test]
fn every_bad_line_gets_one_parse_error_and_the_server_carries_on() {
    let ws = workspace();
    let mut mcp = Mcp::start(ws.path(), None, &[]);
    let mut huge = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#.to_vec();
    huge.resize(16 << 20, b'x');
    huge.extend_from_slice(br#""}}"#);
    let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
    let bad: Vec<(&[u8], i64, &str)> = vec![
        (b"not json", -32700, "not JSON"),
        (b"\xff\xfe{\"jsonrpc\":\"2.0\"}", -32700, "not UTF-8"),
        (&huge, -32700, "over the limit of 16777216 bytes"),
        (deep.as_bytes(), -32700, "recursion limit"),
        (br#"{"hello": "world"}"#, -32600, "Invalid request"),
        (br#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#, -32600, "batches"),
    ];
    for round in 0..2 {
        for (line, _, _) in &bad {
            mcp.send_raw(line);
        }
        let ping = json!(format!("ping-{round}"));
        mcp.send(&json!({"jsonrpc": "2.0", "id": ping, "method": "ping"}));
        let seen = mcp.until_answer(&ping);
        assert_eq!(seen.len(), bad.len() + 1, "one answer per line: {seen:?}");
        for ((_, code, words), answer) in bad.iter().zip(&seen) {
            let (id, got, message) = error_of(answer);
            assert_eq!((id, got), (Value::Null, *code), "{answer}");
            assert!(message.contains(words), "{message:?} should say {words:?}");
        }
        assert_eq!(seen.last().unwrap()["result"], json!({}));
    }
    // A request with a malformed params still names its id.
    mcp.send_raw(br#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":7}"#);
    let (id, code, _) = error_of(&mcp.recv());
    assert_eq!((id, code), (json!(41), -32600));
    // The stream ends: the server ends cleanly.
    drop(mcp.stdin.take());
    let status = mcp.child.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// A VLM that holds every reply until the test opens the gate; counts requests in flight.
struct HeldVlm {
    server: RawServer,
    gate: Arc<tokio::sync::Semaphore>,
    arrived: Arc<AtomicUsize>,
    most_at_once: Arc<AtomicUsize>,
}

impl HeldVlm {
    async fn start() -> HeldVlm {
        let gate = Arc::new(tokio::sync::Semaphore::new(0));
        let arrived = Arc::new(AtomicUsize::new(0));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let most_at_once = Arc::new(AtomicUsize::new(0));
        let (g, a, f, m) = (gate.clone(), arrived.clone(), in_flight.clone(), most_at_once.clone());
        let server = RawServer::start(move |_, mut stream| {
            let (gate, arrived, in_flight, most) = (g.clone(), a.clone(), f.clone(), m.clone());
            async move {
                if read_request(&mut stream).await.is_none() {
                    return;
                }
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                arrived.fetch_add(1, Ordering::SeqCst);
                let _pass = gate.acquire().await.unwrap();
                in_flight.fetch_sub(1, Ordering::SeqCst);
                let mut response = sse_head_until_close();
                response.extend(script_body(&openai_reply(&["held answer"], 0)));
                write_raw(&mut stream, &response).await;
                let _ = tokio::io::AsyncWriteExt::shutdown(&mut stream).await;
            }
        })
        .await;
        HeldVlm { server, gate, arrived, most_at_once }
    }

    /// Waits until `n` requests have arrived (a server that never sends them fails the test).
    async fn wait_for(&self, n: usize) {
        tokio::time::timeout(HANG, async {
            while self.arrived.load(Ordering::SeqCst) < n {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{n} requests never reached the VLM"));
    }

    fn open(&self) {
        self.gate.add_permits(1 << 20);
    }
}

fn recv_blocking(mcp: &Mcp) -> Value {
    tokio::task::block_in_place(|| mcp.recv())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_requests_with_one_id_get_one_answer_each() {
    let vlm = HeldVlm::start().await;
    let ws = workspace();
    let mut mcp = Mcp::start(ws.path(), Some(&vlm.server.openai_url()), &[]);
    mcp.call(json!(7), "icon.png", None);
    vlm.wait_for(1).await;
    mcp.call(json!(7), "icon.png", None);
    let (id, code, message) = error_of(&recv_blocking(&mcp));
    assert_eq!((id, code), (json!(7), -32600));
    assert!(message.contains("duplicate request id 7"), "{message}");
    // The string "7" is another id.
    mcp.send(&json!({"jsonrpc": "2.0", "id": "7", "method": "ping"}));
    assert_eq!(recv_blocking(&mcp), json!({"jsonrpc": "2.0", "id": "7", "result": {}}));
    vlm.open();
    let answer = recv_blocking(&mcp);
    assert_eq!(answer["id"], 7);
    assert_eq!(tool_text(&answer), (false, "held answer".to_string()));
    // Answered, the id is free again.
    mcp.call(json!(7), "icon.png", None);
    let answer = recv_blocking(&mcp);
    assert_eq!((answer["id"].clone(), tool_text(&answer)), (json!(7), (false, "held answer".to_string())));
    assert_eq!(vlm.arrived.load(Ordering::SeqCst), 2, "the duplicate never ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_past_the_budget_wait_their_turn_and_past_the_queue_are_told_busy() {
    let vlm = HeldVlm::start().await;
    let ws = workspace();
    // The defaults: a 2 GiB budget is 4 calls at once (512 MiB each), 64 more may wait.
    let mut mcp = Mcp::start(ws.path(), Some(&vlm.server.openai_url()), &[]);
    let calls = 70;
    for id in 1..=calls {
        mcp.call(json!(id), "icon.png", None);
    }
    vlm.wait_for(4).await;
    // Held at the VLM, nothing can finish: the only answers now are the two the queue had no room for.
    let mut answers = BTreeMap::new();
    for _ in 0..2 {
        let answer = recv_blocking(&mcp);
        let (is_error, text) = tool_text(&answer);
        assert!(is_error && text.contains("the server is busy: 4 calls are running and 64 are waiting"), "{text}");
        answers.insert(answer["id"].as_i64().unwrap(), text);
    }
    assert_eq!(vlm.arrived.load(Ordering::SeqCst), 4);
    vlm.open();
    for _ in 0..calls - 2 {
        let answer = recv_blocking(&mcp);
        let (is_error, text) = tool_text(&answer);
        assert_eq!((is_error, text.as_str()), (false, "held answer"), "{answer}");
        assert!(answers.insert(answer["id"].as_i64().unwrap(), text).is_none(), "two answers to one id");
    }
    assert_eq!(answers.keys().copied().collect::<Vec<_>>(), (1..=calls).collect::<Vec<_>>());
    assert_eq!(vlm.arrived.load(Ordering::SeqCst), calls as usize - 2);
    assert_eq!(vlm.most_at_once.load(Ordering::SeqCst), 4, "never more sandboxes at once than the budget allows");
}

/// A GIF whose 7000×7000 screen holds one 1×1 frame: decoding it fills a 196 MB canvas.
fn gif_7000() -> Vec<u8> {
    let mut out = b"GIF89a".to_vec();
    out.extend_from_slice(&7000u16.to_le_bytes());
    out.extend_from_slice(&7000u16.to_le_bytes());
    out.extend_from_slice(&[0x80, 0, 0, 0, 0, 0, 255, 255, 255]);
    out.extend_from_slice(&[0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0]);
    out.extend_from_slice(&[0x02, 0x02, 0x44, 0x01, 0x00, 0x3B]);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_on_a_large_gif_stay_within_the_memory_budget() {
    let server = VlmServer::start(vec![openai_reply(&["a white square"], 0)]).await;
    let ws = workspace();
    std::fs::write(ws.path().join("big.gif"), gif_7000()).unwrap();
    let budget_mib = 1024u64;
    let mut mcp = Mcp::start(ws.path(), Some(&server.openai_url()), &["--memory-budget", &budget_mib.to_string()]);
    let before = mcp.status_bytes("VmHWM");
    let calls = 16;
    for id in 1..=calls {
        mcp.call(json!(id), "big.gif", None);
    }
    let mut ids = Vec::new();
    for _ in 0..calls {
        let answer = recv_blocking(&mcp);
        assert_eq!(tool_text(&answer), (false, "a white square".to_string()), "{answer}");
        ids.push(answer["id"].as_i64().unwrap());
    }
    ids.sort();
    assert_eq!(ids, (1..=calls).collect::<Vec<_>>());
    let peak = mcp.status_bytes("VmHWM");
    eprintln!(
        "{calls} concurrent calls on a 7000x7000 GIF, budget {budget_mib} MiB: peak RSS {:.0} MiB (at start {:.0} MiB)",
        process::mib(peak),
        process::mib(before)
    );
    assert_eq!(server.requests().len(), calls as usize);
    // Two sandboxes at once, each within its 512 MiB; the host's own share on top is small.
    assert!(peak < (budget_mib + 256) << 20, "peak RSS {:.0} MiB over a {budget_mib} MiB budget", process::mib(peak));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_reply_gives_bounded_progress_and_the_capped_answer() {
    let (tx, mut hung_up) = tokio::sync::mpsc::unbounded_channel();
    let server = RawServer::start(move |_, stream| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(serve_endless_openai(stream, "all work and no play ").await);
        }
    })
    .await;
    let ws = workspace();
    let mut mcp = Mcp::start(ws.path(), Some(&server.openai_url()), &[]);
    mcp.call(json!("long"), "icon.png", Some("tok"));
    let seen = tokio::task::block_in_place(|| mcp.until_answer(&json!("long")));
    let (answer, notifications) = seen.split_last().unwrap();
    let bytes: usize = notifications.iter().map(|n| n.to_string().len()).sum();
    eprintln!("{} progress notifications, {bytes} bytes", notifications.len());
    assert!(
        notifications.iter().all(|n| n["method"] == "notifications/progress" && n["params"]["progressToken"] == "tok")
    );
    assert!(notifications.len() <= 1_000, "{} progress notifications", notifications.len());
    let progress: Vec<f64> = notifications.iter().map(|n| n["params"]["progress"].as_f64().unwrap()).collect();
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "progress increases");
    let (is_error, text) = tool_text(answer);
    assert!(!is_error, "{text}");
    assert!(
        text.starts_with("all work and no play")
            && text.contains(" characters cut from the middle by mediagate …]")
            && text.ends_with("(it did not end within 1000000 characters, and mediagate stopped reading it); the answer above is incomplete]"),
        "{}",
        &text[text.len() - 200..]
    );
    assert_eq!(text.chars().count(), 200_000);
    let last = notifications.last().unwrap()["params"]["message"].as_str().unwrap();
    assert!(text.ends_with(last.trim_start_matches('…')), "the last progress is the end of the answer");
    tokio::time::timeout(HANG, hung_up.recv()).await.expect("the server never hung up on the VLM");
}

/// `view_image` and `read_image` take `page`; view_image converts by default, so a page
/// of a file that is not a PDF is refused in words, and a PNG is shown as it was.
#[test]
fn view_image_and_read_image_take_a_page() {
    let ws = workspace();
    let mut mcp = Mcp::start(ws.path(), None, &[]);
    mcp.send(&json!({"jsonrpc": "2.0", "id": "tools", "method": "tools/list"}));
    let tools = mcp.recv();
    let view = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "view_image").unwrap();
    assert_eq!(view["inputSchema"]["properties"]["page"]["type"], "integer", "{view}");
    assert_eq!(view["inputSchema"]["properties"]["page"]["minimum"], 1, "{view}");

    let call = |mcp: &mut Mcp, id: &str, tool: &str, arguments: Value| {
        mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
        mcp.until_answer(&json!(id)).pop().unwrap()
    };
    let shown = call(&mut mcp, "v1", "view_image", json!({"path": "icon.png"}));
    assert_eq!(shown["result"]["content"][0]["type"], "image", "{shown}");
    assert_eq!(shown["result"]["content"].as_array().unwrap().len(), 1, "no conversion note for a PNG: {shown}");
    let paged = call(&mut mcp, "v2", "view_image", json!({"path": "icon.png", "page": 2}));
    let (is_error, text) = tool_text(&paged);
    assert!(is_error && text.contains("a page applies to PDFs"), "{text}");
    // read_image accepts the argument (this server has no VLM: it says so, as without a page).
    let read = call(&mut mcp, "r1", "read_image", json!({"path": "icon.png", "page": 1}));
    let (is_error, text) = tool_text(&read);
    assert!(is_error && text.contains("no vision model"), "{text}");
}

/// Without `--workspace` the client's roots are the workspace — but a root of `/` or of the home
/// directory is refused as the start directory is: it would hand the model the whole disk or every
/// secret at home. A project root beside them is served.
#[test]
fn a_client_root_of_slash_or_home_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let home_dir = std::fs::canonicalize(home.path()).unwrap();
    let project = home_dir.join("project");
    std::fs::create_dir(&project).unwrap();
    let img = image::RgbImage::from_fn(8, 8, |x, y| image::Rgb([x as u8 * 30, y as u8 * 30, 200]));
    img.save(project.join("icon.png")).unwrap();
    let uri = |p: &Path| url::Url::from_directory_path(p).unwrap().to_string();

    let mut command = mediagate_command();
    command.arg("mcp").current_dir(&project).env("HOME", &home_dir).env_remove(mediagate::facts::env::VLM_URL);
    let mut mcp = Mcp::spawn(command, json!({"roots": {"listChanged": true}}));
    let answer_roots = |mcp: &mut Mcp, roots: Vec<String>| {
        let ask = mcp.recv();
        assert_eq!(ask["method"], "roots/list", "{ask}");
        let roots: Vec<Value> = roots.into_iter().map(|u| json!({"uri": u})).collect();
        mcp.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": roots}}));
    };
    let changed = json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"});
    for (n, roots) in [vec!["file:///".to_string()], vec![uri(&home_dir)], vec!["file:///".into(), uri(&home_dir)]]
        .into_iter()
        .enumerate()
    {
        if n > 0 {
            mcp.send(&changed);
        }
        answer_roots(&mut mcp, roots.clone());
        let id = json!(format!("slash-or-home-{n}"));
        mcp.call(id.clone(), "icon.png", None);
        let (is_error, text) = tool_text(mcp.until_answer(&id).last().unwrap());
        assert!(is_error && text.contains("will not serve") && text.contains("--workspace"), "{roots:?}: {text}");
    }
    // Beside the project's root they are left out, and the project is served (no VLM here: the
    // answer says so, which comes after the workspace was settled).
    mcp.send(&changed);
    answer_roots(&mut mcp, vec!["file:///".into(), uri(&home_dir), uri(&project)]);
    let id = json!("project");
    mcp.call(id.clone(), "icon.png", None);
    let (_, text) = tool_text(mcp.until_answer(&id).last().unwrap());
    assert!(!text.contains("will not serve"), "{text}");
}

/// A client that declares roots and does not answer `roots/list`: calls wait for it, but only so
/// many and holding only so much; past that each is refused at once, in words. The answer, when it
/// comes with the id written as a string (`"0"` for `0`), is still the answer, and the waiting
/// calls run.
#[test]
fn calls_waiting_for_the_clients_roots_are_bounded_and_an_answer_under_a_string_id_releases_them() {
    let ws = workspace();
    let mut mcp = Mcp::start_with_roots(ws.path());
    let ask = mcp.recv();
    assert_eq!(ask["method"], "roots/list", "{ask}");
    let asked_id = ask["id"].clone();
    assert!(asked_id.is_number(), "rmcp asks with a number: {ask}");
    // 12 calls of 1 MB of arguments each: the first 8 (8 MB) may wait, the others are refused.
    let filler = "f".repeat(1 << 20);
    for id in 0..12 {
        mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "view_image", "arguments": {"path": "icon.png", "filler": filler}}}));
    }
    let mut refused = Vec::new();
    while refused.len() < 5 {
        let message = mcp.recv();
        let (is_error, text) = tool_text(&message);
        assert!(is_error && text.contains("already wait for them"), "{message}");
        refused.push(message["id"].as_i64().unwrap());
    }
    // 7 or 8 wait (8 × 1 MB of text and its JSON framing is just over 8 MiB with the 8th).
    assert!(refused.iter().all(|&id| id >= 7), "the later calls are refused: {refused:?}");
    let rss = mcp.status_bytes("VmRSS");
    assert!(rss < 400 << 20, "RSS {} MiB while calls wait", rss >> 20);
    // The roots, under the id written as a string.
    let root = url::Url::from_directory_path(ws.path().canonicalize().unwrap()).unwrap();
    mcp.send(&json!({"jsonrpc": "2.0", "id": asked_id.to_string(), "result": {"roots": [{"uri": root.as_str()}]}}));
    let mut answered = 0;
    while answered + refused.len() < 12 {
        let message = mcp.recv();
        if message.get("method").is_some() {
            continue;
        }
        // Past the wait, the call runs: its filler is not an argument `view_image` takes.
        let (is_error, text) = tool_text(&message);
        assert!(is_error && text.contains("invalid arguments for view_image"), "{message}");
        answered += 1;
    }
}

/// A 64×64 noise PNG cut in the middle of its image data: the gate passes it repaired, its
/// missing rows empty.
fn cut_png() -> Vec<u8> {
    let mut state = 0x2545_F491u32;
    let img = image::RgbImage::from_fn(64, 64, |_, _| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let [r, g, b, _] = state.to_le_bytes();
        image::Rgb([r, g, b])
    });
    let mut whole = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut whole), image::ImageFormat::Png).unwrap();
    let idat = whole.windows(4).position(|k| k == b"IDAT").unwrap() - 4;
    let len = u32::from_be_bytes(whole[idat..idat + 4].try_into().unwrap()) as usize;
    whole.truncate(idat + 8 + len / 2);
    whole
}

/// A repaired image reaches the model with a note saying what was repaired: beside the image
/// `view_image` shows, and in what `read_image` asks the vision model and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repaired_image_is_shown_with_its_note_and_read_with_it() {
    let server = VlmServer::start(vec![openai_reply(&["Noise above, black below."], 0)]).await;
    let ws = workspace();
    std::fs::write(ws.path().join("cut.png"), cut_png()).unwrap();
    let mut mcp = Mcp::start(ws.path(), Some(&server.openai_url()), &[]);

    mcp.send(&json!({"jsonrpc": "2.0", "id": "v", "method": "tools/call",
        "params": {"name": "view_image", "arguments": {"path": "cut.png"}}}));
    let shown = recv_blocking(&mcp);
    let content = shown["result"]["content"].as_array().unwrap();
    assert_eq!(
        (content.len(), &content[0]["type"], &content[1]["type"]),
        (2, &json!("image"), &json!("text")),
        "{shown}"
    );
    let note = content[1]["text"].as_str().unwrap();
    assert!(
        note.starts_with("[mediagate] cut.png was repaired before the model saw it: the file was cut short"),
        "{note}"
    );

    mcp.call(json!("r"), "cut.png", None);
    let answer = recv_blocking(&mcp);
    let (is_error, text) = tool_text(&answer);
    assert!(!is_error && text.starts_with("Noise above, black below.\n\n[mediagate] cut.png was repaired"), "{text}");
    let asked = server.requests()[0].body.to_string();
    assert!(asked.contains("[mediagate] The image was repaired before the model saw it"), "{asked:.400}");

    // A whole image: no note.
    mcp.send(&json!({"jsonrpc": "2.0", "id": "w", "method": "tools/call",
        "params": {"name": "view_image", "arguments": {"path": "icon.png"}}}));
    let shown = recv_blocking(&mcp);
    assert_eq!(shown["result"]["content"].as_array().unwrap().len(), 1, "{shown}");
}
