//! The `mediagate` binary as a person or a script uses it: exit codes, JSON, files written.

use std::process::Output;

use crate::common::*;
use base64::Engine as _;
use serde_json::{Value, json};

fn mediagate(args: &[&str]) -> Output {
    mediagate_command().args(args).output().expect("run mediagate")
}

fn admit_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["admit", "--json"];
    all.extend_from_slice(args);
    let out = mediagate(&all);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout:?} {:?}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap(), json)
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn an_admitted_image_exits_0_with_its_verdict() {
    let kodim = corpus().join("photos/kodim23.png");
    let (code, v) = admit_json(&[path(&kodim)]);
    assert_eq!(code, 0);
    // Its tEXt chunk is left out of the canonical form: the base64 is of the bytes without it.
    let canonical = canonical_png(&std::fs::read(&kodim).unwrap());
    assert_eq!(
        v,
        json!({"ok": true, "kind": "image", "mime": "image/png", "original_size": 557596, "width": 768,
               "height": 512, "resized": false, "reencoded": false, "dropped": ["text"],
               "base64_len": canonical.len().div_ceil(3) * 4})
    );
}

#[test]
fn a_misnamed_svg_exits_1_with_the_reason() {
    let (code, v) = admit_json(&[path(&fixture("icon-svg.png"))]);
    assert_eq!(code, 1);
    assert_eq!(v["ok"], false);
    assert_eq!(v["reason"], "magic_mismatch");
    assert_eq!(v["raw_bytes"], 100);
    assert!(v.get("limit").is_none(), "no bound applies to a signature");
    assert!(v["message"].as_str().unwrap().contains("image/svg+xml"));
}

#[test]
fn the_claimed_type_comes_from_the_extension_unless_given() {
    let svg = fixture("icon-svg.png");
    let (code, v) = admit_json(&["--mime", "image/svg+xml", path(&svg)]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("mime_unsupported")));
}

#[test]
fn a_refusal_over_a_bound_names_the_limit() {
    let shot = corpus().join("bench/screenshot-3456x2234.png");
    let (code, v) = admit_json(&["--no-downsample", path(&shot)]);
    assert_eq!(code, 1);
    assert_eq!(
        v,
        json!({"ok": false, "reason": "base64_too_large", "raw_bytes": 4212470, "limit": 5242880,
                         "message": v["message"]})
    );
}

#[test]
fn documents_and_fake_documents() {
    let (code, v) = admit_json(&[path(&fixture("hello.pdf"))]);
    assert_eq!((code, v["kind"].as_str(), v["mime"].as_str()), (0, Some("document"), Some("application/pdf")));
    assert!(v.get("width").is_none(), "a document has no measured dimensions");
    let (code, v) = admit_json(&[path(&fixture("fake.pdf"))]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("magic_mismatch")));
}

#[test]
fn the_admitted_image_and_block_can_be_written_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fitted.jpg");
    let block = dir.path().join("block.json");
    let photo = corpus().join("bench/photo-12mp.jpg");
    let (code, v) = admit_json(&[path(&photo), "--out", path(&out), "--block-out", path(&block)]);
    assert_eq!((code, v["width"].as_u64(), v["height"].as_u64()), (0, Some(2000), Some(1500)));
    let written = std::fs::read(&out).unwrap();
    assert!(written.starts_with(&[0xFF, 0xD8, 0xFF]));
    assert_eq!((written.len() as u64).div_ceil(3) * 4, v["base64_len"].as_u64().unwrap());
    let block: Value = serde_json::from_str(&std::fs::read_to_string(&block).unwrap()).unwrap();
    assert_eq!(block["type"], "image");
    assert_eq!(block["source"]["media_type"], "image/jpeg");
    let data = base64::engine::general_purpose::STANDARD.decode(block["source"]["data"].as_str().unwrap()).unwrap();
    assert_eq!(data, written);
}

#[test]
fn a_person_reads_one_line() {
    let out = mediagate(&["admit", path(&fixture("icon-svg.png"))]);
    assert_eq!(out.status.code(), Some(1));
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(line.starts_with("refused ") && line.contains("magic_mismatch"), "{line}");
    let out = mediagate(&["admit", path(&corpus().join("bench/photo-12mp.jpg"))]);
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(line.starts_with("admitted ") && line.contains("2000x1500") && line.contains("downsampled"), "{line}");
}

#[test]
fn usage_and_io_errors_exit_2() {
    let out = mediagate(&["admit", "/nonexistent/file.png"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: cannot read"));
    let out = mediagate(&["admit"]);
    assert_eq!(out.status.code(), Some(2));
    let out = mediagate(&["admit", "--profile", "nosuch", path(&fixture("hello.pdf"))]);
    assert_eq!(out.status.code(), Some(2));
}

fn tool_result(input: &Value) -> Value {
    serde_json::from_str(&tool_result_text(&input.to_string())).unwrap()
}

/// `admit-tool-result` on JSON text, as it prints it; its exit status is checked against what it
/// printed (the gate commands' rule: 1 when a block was refused, else 0).
fn tool_result_text(input: &str) -> String {
    let mut command = mediagate_command();
    command.args(["admit-tool-result", "--tool", "browser_screenshot"]);
    let out = run_with_stdin(command, input.as_bytes());
    let text = String::from_utf8(out.stdout).unwrap();
    // Read from the text's end: some inputs here are JSON serde_json cannot hold (a lone surrogate).
    let refused = !text.trim_end().ends_with(r#""refused":[]}"#);
    // Refused whole (its one refusal at path ""): it could not be read, 2 under the one rule.
    let whole = text.contains(r#","path":"","#);
    let expected = if whole { 2 } else { i32::from(refused) };
    assert_eq!(out.status.code(), Some(expected), "{text} {}", String::from_utf8_lossy(&out.stderr));
    text
}

fn b64_file(p: &std::path::Path) -> String {
    base64::engine::general_purpose::STANDARD.encode(std::fs::read(p).unwrap())
}

#[test]
fn tool_results_in_mcp_shape_one_good_one_bad() {
    let icon = std::fs::read(corpus().join("photos/tango-icon-address-book-new-16.png")).unwrap();
    let good = base64::engine::general_purpose::STANDARD.encode(&icon);
    let bad = b64_file(&fixture("page-html.png"));
    let input = json!([
        {"type": "text", "text": "two screenshots"},
        {"type": "image", "data": good, "mimeType": "image/png"},
        {"type": "image", "data": bad, "mimeType": "image/png"},
    ]);
    let out = tool_result(&input);
    assert_eq!(out["content"][0], input[0]);
    // A small valid PNG passes as its canonical form: its tEXt, tIME, bKGD and pHYs chunks left out.
    let canonical = base64::engine::general_purpose::STANDARD.encode(canonical_png(&icon));
    assert_eq!(out["content"][1], json!({"type": "image", "data": canonical, "mimeType": "image/png"}));
    assert_eq!(out["content"][2]["type"], "text");
    let text = out["content"][2]["text"].as_str().unwrap();
    assert!(
        text.contains("browser_screenshot") && text.contains("magic_mismatch") && text.contains("55 bytes"),
        "{text}"
    );
    assert_eq!(
        out["refused"],
        json!([{"index": 2, "path": "/2", "type": "image", "reason": "magic_mismatch", "bytes": 55, "mime": "image/png"}])
    );
}

#[test]
fn tool_results_in_anthropic_shape_one_good_one_bad() {
    let shot = b64_file(&corpus().join("bench/screenshot-3456x2234.png"));
    let input = json!([
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": shot}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": ""}},
    ]);
    let out = tool_result(&input);
    let data = out["content"][0]["source"]["data"].as_str().unwrap();
    assert!(data.len() <= 5_242_880, "the oversize screenshot was downsampled in its slot");
    assert_eq!(out["content"][1]["type"], "text");
    assert_eq!(out["refused"][0]["index"], 1);
    assert_eq!(out["refused"][0]["reason"], "magic_mismatch");
}

#[test]
fn tool_results_without_media_come_back_as_they_were() {
    let input = json!({"content": [{"type": "text", "text": "ok"}], "isError": false});
    assert_eq!(tool_result(&input), json!({"content": input, "refused": []}));
}

#[test]
fn the_components_can_be_written_for_other_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("preflight.wasm");
    assert_eq!(mediagate(&["component", "--out", path(&out)]).status.code(), Some(0));
    assert_eq!(std::fs::read(&out).unwrap(), mediagate::component::PREFLIGHT);
    // The wasi:http service, for `wasmtime serve`, `jco serve`, Spin, wasmCloud (tests/http runs it).
    let http = dir.path().join("http-gate.wasm");
    assert_eq!(mediagate(&["component", "--world", "http-gate", "--out", path(&http)]).status.code(), Some(0));
    assert_eq!(std::fs::read(&http).unwrap(), mediagate::component::HTTP_GATE);
    assert!(mediagate::component::HTTP_GATE.starts_with(b"\0asm"));
}

// Fail closed: each of these passed unchecked before.

fn png_bytes(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| image::Rgb([x as u8, y as u8, (x ^ y) as u8]));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

fn svg_as_png_block() -> String {
    let svg = base64::engine::general_purpose::STANDARD.encode(b"<svg xmlns='http://www.w3.org/2000/svg'/>");
    format!(r#"{{"type":"image","data":"{svg}","mimeType":"image/png"}}"#)
}

#[test]
fn a_tool_result_the_gate_cannot_read_is_refused_whole() {
    let deep = format!("{}{}{}", "[".repeat(200), svg_as_png_block(), "]".repeat(200));
    for input in [format!("[{},", svg_as_png_block()), deep, "not json".to_string()] {
        let out: Value = serde_json::from_str(&tool_result_text(&input)).unwrap();
        assert_eq!(out["content"].as_array().map(Vec::len), Some(1), "{input:.60}");
        assert_eq!(out["content"][0]["type"], "text");
        assert_eq!(out["refused"][0]["reason"], "undecodable");
        assert_eq!(out["refused"][0]["path"], "");
        assert!(!out.to_string().contains("PHN2Zy"), "never the bytes");
    }
}

#[test]
fn what_json_allows_is_read_and_kept_byte_for_byte() {
    // A lone surrogate and a number past f64 made serde_json give up, and the SVG passed.
    let text_block = r#"{"type":"text", "text":"\ud800"}"#;
    let tail = r#"{"n": 1e400, "big": 123456789012345678901234567890, "z": 1.50}"#;
    let input = format!("[{text_block}, {}, {tail}]", svg_as_png_block());
    let out = tool_result_text(&input);
    assert!(out.starts_with(&format!("{{\"content\":[{text_block}, {{")), "{out}");
    assert!(out.contains(&format!("}}, {tail}]")), "{out}");
    // (serde_json itself reads neither the lone surrogate nor 1e400.)
    let v: Value = serde_json::from_str(&out.replace("\\ud800", "?").replace("1e400", "1")).unwrap();
    assert_eq!(v["refused"][0]["reason"], "magic_mismatch");
    // With no media block, the input itself comes back: key order, spacing, numbers.
    let plain = r#"{ "z": 1e400, "a": [1.0, 2], "content": [{"type": "text", "text": "ok"}] }"#;
    assert_eq!(tool_result_text(plain).trim(), format!(r#"{{"content":{plain},"refused":[]}}"#));
}

#[test]
fn an_mcp_image_with_a_source_field_is_checked() {
    for source in ["null", "\"x\"", r#"{"type":"url","url":"https://example.com/a.png"}"#] {
        let block = svg_as_png_block().replace(r#""type":"image","#, &format!(r#""type":"image","source":{source},"#));
        let out: Value = serde_json::from_str(&tool_result_text(&format!("[{block}]"))).unwrap();
        assert_eq!(out["refused"][0]["reason"], "magic_mismatch", "source {source}");
    }
}

#[test]
fn a_cut_png_is_repaired_and_undecodable_images_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut cut = png_bytes(20_000, 100);
    cut.truncate(cut.len() / 2);
    let cut_path = dir.path().join("cut.png");
    std::fs::write(&cut_path, &cut).unwrap();
    // Browsers, Pillow and libvips show the rows that arrived: the gate writes them, the rest zero.
    let (code, v) = admit_json(&[path(&cut_path)]);
    assert_eq!((code, v["dropped"][0].as_str(), v["reencoded"].as_bool()), (0, Some("cut-data"), Some(true)), "{v}");

    let jpeg = {
        let img = image::RgbImage::from_fn(64, 64, |x, y| image::Rgb([x as u8 * 4, y as u8 * 4, 0]));
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Jpeg).unwrap();
        out.into_inner()
    };
    let cut_jpeg = dir.path().join("cut.jpg");
    std::fs::write(&cut_jpeg, &jpeg[..jpeg.len() - 40]).unwrap();
    for verify in ["full", "header"] {
        let (code, v) = admit_json(&["--verify", verify, path(&cut_jpeg)]);
        assert_eq!((code, v["reason"].as_str()), (1, Some("undecodable")), "--verify {verify}: {v}");
    }

    // Random bytes in place of the image data: the container is whole, the pixels are not.
    let mut noisy = png_bytes(64, 64);
    let idat = noisy.windows(4).position(|w| w == b"IDAT").unwrap();
    for (i, b) in noisy[idat + 8..idat + 60].iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(151).wrapping_add(17);
    }
    let noisy_path = dir.path().join("noisy.png");
    std::fs::write(&noisy_path, &noisy).unwrap();
    let (code, v) = admit_json(&[path(&noisy_path)]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("undecodable")), "{v}");
}

/// A base URL without its `/v1` (`http://127.0.0.1:11434` for Ollama): the 404 names the URL
/// requested and the base URL to configure instead, not just "Not Found".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vlm_base_url_missing_its_v1_names_the_url_and_the_fix() {
    use crate::common::vlm_server::{VlmServer, openai_reply};
    let server = VlmServer::start(vec![openai_reply(&["never"], 0)]).await;
    let base = format!("http://{}", server.addr);
    let ws = repo_root().join("examples");
    let args: Vec<String> =
        ["read-image", "icon.png", "--workspace", path(&ws), "--vlm-url", &base, "--vlm-model", "m"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    let out = tokio::task::spawn_blocking(move || mediagate(&args.iter().map(String::as_str).collect::<Vec<_>>()))
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "the model failed: nothing judged. {stderr}");
    assert!(stderr.contains("HTTP 404"), "{stderr}");
    assert!(stderr.contains(&format!("POST {base}/chat/completions")), "the URL requested is named: {stderr}");
    assert!(stderr.contains("missing its /v1") && stderr.contains(&format!("try --vlm-url {base}/v1")), "{stderr}");
    assert!(server.requests().is_empty(), "the request went to /chat/completions, which the server does not route");
}

// `admit-request`: a whole provider request through the gate.

/// `admit-request ARGS` with `input` on stdin: (exit code, stdout, stderr).
fn admit_request(args: &[&str], input: &str) -> (i32, String, String) {
    let mut command = mediagate_command();
    command.arg("admit-request").args(args);
    // The child may stop reading early (input over its cap): a broken pipe is its answer.
    let out = run_with_stdin(command, input.as_bytes());
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn anthropic_png_block(bytes: &[u8]) -> String {
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    format!(r#"{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{data}"}}}}"#)
}

#[test]
fn an_unchanged_request_comes_back_byte_for_byte_and_exits_0() {
    let input = format!(
        "{{ \"model\": \"claude\", \"max_tokens\": 1.0e3,\n  \"messages\": [ {{\"role\":\"user\",\"content\":[{}]}} ] }}\n",
        anthropic_png_block(&png_bytes(8, 8))
    );
    let (code, out, err) = admit_request(&["--api", "anthropic"], &input);
    assert_eq!((code, out.as_str(), err.as_str()), (0, input.as_str(), ""));
}

#[test]
fn a_request_with_a_bad_block_is_admitted_in_place_and_exits_1() {
    let keep = anthropic_png_block(&png_bytes(8, 8));
    let input = format!(
        r#"{{"messages":[{{"role":"user","content":[{keep},{}]}},{{"role":"assistant","content":"ok"}},{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t","content":[{}]}}]}}],"n":1.50}}"#,
        svg_as_png_block()
            .replace(r#""data""#, r#""source":{"type":"base64","media_type":"image/png","data""#)
            .replace(r#","mimeType":"image/png"}"#, "}}"),
        svg_as_png_block(),
    );
    let (code, out, err) = admit_request(&["--api", "anthropic"], &input);
    assert_eq!(code, 1, "{err}");
    // Outside the changed blocks, the text is the input's.
    assert!(out.starts_with(&format!(r#"{{"messages":[{{"role":"user","content":[{keep},{{"#)), "{out}");
    assert!(out.ends_with(r#"],"n":1.50}"#), "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["messages"][0]["content"][1]["type"], "text");
    assert_eq!(v["messages"][2]["content"][0]["content"][0]["type"], "text");
    assert!(err.contains("/messages/0/content/1 image refused: magic_mismatch"), "{err}");
    assert!(err.contains("/messages/2/content/0/content/0"), "{err}");

    let (code, out, _) = admit_request(&["--api", "anthropic", "--json"], &input);
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["refused"], json!(["/messages/0/content/1", "/messages/2/content/0/content/0"]));
    assert_eq!(report["refusal"], Value::Null);
    assert_eq!(report["request"], v);
    let first = &report["changed"][0];
    assert_eq!((first["what"].as_str(), first["reason"].as_str()), (Some("refused"), Some("magic_mismatch")));
    assert_eq!((first["to"].clone(), first["rule"].clone()), (Value::Null, Value::Null));
}

#[test]
fn more_than_20_images_are_fitted_to_2000_px_naming_the_rule() {
    let small = anthropic_png_block(&png_bytes(4, 4));
    let wide = anthropic_png_block(&png_bytes(2400, 6));
    let blocks: Vec<String> = std::iter::repeat_n(small, 20).chain([wide]).collect();
    let input = format!(r#"{{"messages":[{{"role":"user","content":[{}]}}]}}"#, blocks.join(","));

    let (code, out, _) = admit_request(&["--api", "anthropic", "--json"], &input);
    assert_eq!(code, 0, "a fitted image is admitted: the gate commands exit 1 only for a refusal");
    let report: Value = serde_json::from_str(&out).unwrap();
    let change = &report["changed"][0];
    assert_eq!(report["changed"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(change["path"], "/messages/0/content/20");
    assert_eq!(
        (change["what"].as_str(), change["rule"].as_str()),
        (Some("downsampled"), Some("anthropic.many_images_max_side"))
    );
    assert_eq!((change["from"]["width"].as_u64(), change["to"]["width"].as_u64()), (Some(2400), Some(2000)));
    assert_eq!(report["refused"], json!([]));

    // Downsampling off: refused in its slot, naming the rule; the other twenty stand.
    let (code, out, _) = admit_request(&["--api", "anthropic", "--json", "--no-downsample"], &input);
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    let change = &report["changed"][0];
    assert_eq!((change["reason"].as_str(), change["limit"].as_u64()), (Some("dimensions_too_large"), Some(2000)));
    assert_eq!(change["rule"], "anthropic.many_images_max_side");
    assert_eq!(report["refused"], json!(["/messages/0/content/20"]));
    assert_eq!(report["request"]["messages"][0]["content"][19]["type"], "image");
}

#[test]
fn openai_requests_use_data_urls_and_the_openai_profile() {
    let gif = base64::engine::general_purpose::STANDARD.encode(b"GIF89a\x01\x00\x01\x00");
    let png = base64::engine::general_purpose::STANDARD.encode(png_bytes(8, 8));
    let input = json!({"model": "gpt", "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{png}"), "detail": "low"}},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{gif}")}},
        ]},
    ]})
    .to_string();
    let (code, out, err) = admit_request(&["--api", "openai", "--json"], &input);
    assert_eq!(code, 1, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["api"], "openai");
    assert_eq!(report["refused"], json!(["/messages/1/content/2"]));
    assert_eq!(report["request"]["messages"][1]["content"][2]["type"], "text");
    // The URL the provider fetches stands as it was; so does the admitted data URL with its detail.
    assert_eq!(report["request"]["messages"][1]["content"][1]["image_url"]["url"], "https://example.com/a.png");
    assert_eq!(report["request"]["messages"][1]["content"][0]["image_url"]["detail"], "low");
}

#[test]
fn a_request_over_32_mb_is_refused_naming_the_rule() {
    let input = json!({"messages": [{"role": "user", "content": "x".repeat(32_000_001)}]}).to_string();
    let (code, out, err) = admit_request(&["--api", "anthropic"], &input);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains("request_limit") && err.contains("[anthropic.request_bytes]"), "{err}");
    // OpenAI states no request size: the same text is admitted unchanged.
    let (code, out, _) = admit_request(&["--api", "openai"], &input);
    assert_eq!(code, 0);
    assert_eq!(out.len(), input.len());
}

#[test]
fn unusable_input_exits_2() {
    for (args, input, expected) in [
        (&["--api", "anthropic"][..], "not json", "not JSON the gate can read"),
        (&["--api", "anthropic"][..], r#"{"model":"m"}"#, "no `messages`"),
        (&["--api", "anthropic"][..], r#"{"messages":[{"role":"system","content":"x"}]}"#, "not a role"),
        (&["--api", "anthropic", "--json"][..], "[]", "not a JSON object"),
    ] {
        let (code, out, err) = admit_request(args, input);
        assert_eq!(code, 2, "{input}: {out} {err}");
        if args.contains(&"--json") {
            let report: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(report["refusal"]["unusable"], true);
            assert!(report["refusal"]["message"].as_str().unwrap().contains(expected), "{report}");
        } else {
            assert!(err.contains(expected), "{input}: {err}");
        }
    }
    // Over the read cap: refused unread.
    let huge = " ".repeat(48 * 1024 * 1024 + 1);
    let (code, _, err) = admit_request(&["--api", "openai"], &huge);
    assert_eq!(code, 2);
    assert!(err.contains("larger than"), "{err}");
    let (code, _, _) = admit_request(&["--api", "mistral"], "{}");
    assert_eq!(code, 2);
}

// Faults found in review.

/// With `--json` an error is one JSON object on stdout (`{"error": {"code", "message"}}`), with the
/// same exit code as the `error: …` line it replaces, for every command that takes `--json`.
#[test]
fn json_errors_are_json_on_stdout_with_the_same_exit_code() {
    let error_of = |out: &Output| -> Value {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout:?}"));
        assert!(v["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
        v
    };
    let out = mediagate(&["admit", "--json", "/nonexistent/file.png"]);
    assert_eq!(out.status.code(), Some(2));
    let v = error_of(&out);
    assert_eq!(v["error"]["code"], "io");
    assert!(v["error"]["message"].as_str().unwrap().contains("cannot read /nonexistent/file.png"), "{v}");
    // A command line clap refuses, `--json` anywhere in it.
    let out = mediagate(&["admit", "--json", "--profile", "nosuch", path(&fixture("hello.pdf"))]);
    assert_eq!(out.status.code(), Some(2));
    let v = error_of(&out);
    assert_eq!(v["error"]["code"], "usage");
    assert!(v["error"]["message"].as_str().unwrap().contains("nosuch"), "{v}");
    let out = mediagate(&["admit-request", "--api", "anthropic", "--json", "/nonexistent/request.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(error_of(&out)["error"]["code"], "io");
    // Without --json the error stays a line on stderr; help is still help.
    let out = mediagate(&["admit", "/nonexistent/file.png"]);
    assert!(out.stdout.is_empty() && String::from_utf8_lossy(&out.stderr).starts_with("error: cannot read"));
    let out = mediagate(&["admit", "--json", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage"));
}

/// A PDF named `report.png` is the document it is when no type is claimed; a claimed image type
/// still meets the signature check.
#[test]
fn a_pdf_under_another_name_is_admitted_as_the_document_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let misnamed = dir.path().join("report.png");
    std::fs::copy(fixture("hello.pdf"), &misnamed).unwrap();
    let (code, v) = admit_json(&[path(&misnamed)]);
    assert_eq!((code, v["kind"].as_str(), v["mime"].as_str()), (0, Some("document"), Some("application/pdf")), "{v}");
    let (code, v) = admit_json(&["--mime", "image/png", path(&misnamed)]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("magic_mismatch")), "{v}");
    // A PNG named .jpg is the PNG it is.
    let png = dir.path().join("photo.jpg");
    std::fs::copy(corpus().join("photos/kodim23.png"), &png).unwrap();
    let (code, v) = admit_json(&[path(&png)]);
    assert_eq!((code, v["mime"].as_str()), (0, Some("image/png")), "{v}");
}

/// An API key from the environment is never sent in clear text to a host that is not this
/// machine: the CLI refuses before connecting and names the fix.
#[test]
fn the_cli_refuses_to_send_a_key_over_plain_http() {
    let out = mediagate_command()
        .args(["read-image", "icon.png", "--workspace", path(&repo_root().join("examples"))])
        .args(["--vlm-url", "http://192.0.2.1/v1", "--vlm-model", "m"])
        .env(mediagate::facts::env::VLM_API_KEY, "sk-cli-secret-123456")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("clear text") && stderr.contains("--vlm-url https://192.0.2.1/v1"), "{stderr}");
    assert!(!stderr.contains("sk-cli-secret"), "{stderr}");
}

/// The binary carries the components precompiled: `mediagate admit` on a machine with an empty
/// cache compiles nothing and writes nothing there.
#[test]
fn admit_with_an_empty_cache_writes_nothing_compiled() {
    let home = tempfile::tempdir().unwrap();
    let xdg = home.path().join("xdg-cache");
    std::fs::create_dir(&xdg).unwrap();
    let out = mediagate_command()
        .args(["admit", "--json", path(&corpus().join("photos/kodim23.png"))])
        .env_remove(mediagate::facts::env::CACHE_DIR)
        .env("XDG_CACHE_HOME", &xdg)
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let written: Vec<_> = walk(home.path()).into_iter().filter(|p| p.is_file()).collect();
    assert!(written.is_empty(), "nothing written under the cache or home: {written:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            all.extend(walk(&path));
        }
        all.push(path);
    }
    all
}

// One behaviour across the gate commands: stdin, exit status, help, the claimed type.

const SVG_TEXT: &[u8] =
    br#"<svg xmlns="http://www.w3.org/2000/svg" width="12" height="8"><rect width="12" height="8" fill="red"/></svg>"#;

#[test]
fn cli_admit_reads_stdin_with_a_dash() {
    let mut command = mediagate_command();
    command.args(["admit", "-"]);
    let out = run_with_stdin(command, &png_bytes(8, 8));
    let line = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{line} {}", String::from_utf8_lossy(&out.stderr));
    assert!(line.starts_with("admitted stdin: image image/png 8x8"), "{line}");

    let mut command = mediagate_command();
    command.args(["admit", "--json", "-"]);
    let out = run_with_stdin(command, SVG_TEXT);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((out.status.code(), v["reason"].as_str()), (Some(1), Some("mime_unsupported")), "{v}");
}

/// The same three inputs through `admit`, `admit-tool-result` and `admit-request`: one exit rule
/// (0 nothing refused — a fitted image is admitted —, 1 something refused, 2 not judged).
#[test]
fn cli_gate_commands_share_one_exit_rule() {
    let dir = tempfile::tempdir().unwrap();
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    for (name, bytes, expected) in
        [("good.png", png_bytes(8, 8), 0), ("wide.png", png_bytes(2400, 6), 0), ("svg.png", SVG_TEXT.to_vec(), 1)]
    {
        let file = dir.path().join(name);
        std::fs::write(&file, &bytes).unwrap();
        let admit = mediagate(&["admit", path(&file)]);
        assert_eq!(admit.status.code(), Some(expected), "admit {name}");

        let result = json!([{"type": "image", "data": b64(&bytes), "mimeType": "image/png"}]).to_string();
        let mut command = mediagate_command();
        command.args(["admit-tool-result", "--tool", "t"]);
        let out = run_with_stdin(command, result.as_bytes());
        assert_eq!(out.status.code(), Some(expected), "admit-tool-result {name}");

        let block =
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(&bytes)}});
        let request = json!({"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": [block]}]});
        let (code, _, err) = admit_request(&["--api", "anthropic"], &request.to_string());
        assert_eq!(code, expected, "admit-request {name}: {err}");
    }
    let mut command = mediagate_command();
    command.args(["admit-tool-result", "--tool", "t"]);
    assert_eq!(run_with_stdin(command, b"\xff\xfe not text").status.code(), Some(2));
    assert_eq!(admit_request(&["--api", "anthropic"], "not json").0, 2);
    assert_eq!(mediagate(&["admit", "/nonexistent/x.png"]).status.code(), Some(2));
}

/// An SVG named `.png`: refused without `--convert`, with a line that says `--convert` takes it;
/// converted with it, because the type the bytes carry wins when converting — as `view_image`
/// claims it (tests/e2e/mcp_server.rs).
#[test]
fn cli_admit_convert_takes_the_type_the_bytes_carry() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("diagram.png");
    std::fs::write(&file, SVG_TEXT).unwrap();

    let out = mediagate(&["admit", path(&file)]);
    let line = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{line}");
    assert!(line.contains("magic_mismatch") && line.contains("image/svg+xml, which --convert converts"), "{line}");

    let (code, v) = admit_json(&["--convert", path(&file)]);
    assert_eq!(code, 0, "{v}");
    assert_eq!((v["ok"].as_bool(), v["mime"].as_str()), (Some(true), Some("image/png")), "{v}");
    assert_eq!(v["converted"]["from"], "image/svg+xml", "{v}");
    // Rendered with the SVG's 3:2 aspect, scaled up to a longer side of `MIN_LONG_SIDE` (convert/svg.rs).
    let (w, h) = (v["width"].as_u64().unwrap(), v["height"].as_u64().unwrap());
    assert!(w > h && (w * 2).abs_diff(h * 3) <= 3, "{v}");

    // An explicit claim is still checked against the bytes, converting or not.
    let (code, v) = admit_json(&["--convert", "--mime", "image/png", path(&file)]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("magic_mismatch")), "{v}");
    // A JPEG named .png is the JPEG it is, with or without --convert.
    let jpeg = dir.path().join("photo.png");
    std::fs::copy(corpus().join("bench/photo-exif-rotated.jpg"), &jpeg).unwrap();
    for extra in [&[][..], &["--convert"][..]] {
        let mut args = extra.to_vec();
        args.push(path(&jpeg));
        let (code, v) = admit_json(&args);
        assert_eq!((code, v["mime"].as_str()), (0, Some("image/jpeg")), "{extra:?}: {v}");
    }
}

/// Every subcommand's help states its exit status, shows an example and says where the docs are.
#[test]
fn cli_every_help_states_exit_status_examples_and_docs() {
    for command in ["admit", "admit-tool-result", "admit-request", "read-image", "component", "mcp", "proxy"] {
        let out = mediagate(&[command, "--help"]);
        assert_eq!(out.status.code(), Some(0), "{command}");
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(help.contains("Exit status: 0 "), "{command}: {help}");
        assert!(help.contains(&format!("Examples:\n\n    mediagate {command} ")), "{command}: {help}");
        assert!(help.contains("docs/cli.md") && help.contains("docs/usage.md"), "{command}: {help}");
        assert!(!help.to_lowercase().contains("seat"), "{command}: jargon in the help: {help}");
    }
    let help = String::from_utf8(mediagate(&["mcp", "--help"]).stdout).unwrap();
    assert!(help.contains("read_image") && help.contains("view_image"), "{help}");
}

/// `mediagate mcp` names both tools it serves on its status line.
#[test]
fn cli_mcp_banner_names_every_tool_it_serves() {
    let dir = tempfile::tempdir().unwrap();
    let out = mediagate_command()
        .args(["mcp", "--workspace", path(dir.path())])
        .env_remove(mediagate::facts::env::VLM_URL)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let banner = String::from_utf8(out.stderr).unwrap();
    assert!(banner.contains("serving read_image and view_image over stdio"), "{banner}");
}

/// A 1 MB PNG whose iCCP inflates to 1 GiB beside a good image: the good one admitted, the bomb
/// refused in its slot (exit 1, as for any refused block), the sandbox never out of memory.
#[test]
fn an_iccp_bomb_is_refused_in_its_slot_beside_a_good_image() {
    let good = std::fs::read(corpus().join("photos/tango-icon-address-book-new-16.png")).unwrap();
    let bomb = png_with_iccp_bomb(&good);
    assert!(bomb.len() < 2 << 20, "{} bytes", bomb.len());
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let input = json!([
        {"type": "image", "data": b64(&good), "mimeType": "image/png"},
        {"type": "image", "data": b64(&bomb), "mimeType": "image/png"},
    ]);
    let out = tool_result(&input);
    let canonical = b64(&canonical_png(&good));
    assert_eq!(out["content"][0], json!({"type": "image", "data": canonical, "mimeType": "image/png"}));
    assert_eq!(out["refused"][0]["index"], 1);
    assert_eq!(out["refused"][0]["reason"], "undecodable");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bomb.png");
    std::fs::write(&file, &bomb).unwrap();
    let (code, v) = admit_json(&[path(&file)]);
    assert_eq!((code, v["reason"].as_str()), (1, Some("undecodable")));
    assert!(v["message"].as_str().unwrap().contains("zlib bomb"), "{v}");
}

/// `--json` names what the canonical form dropped; `--keep-metadata` keeps it.
#[test]
fn the_verdict_says_what_was_dropped_and_keep_metadata_keeps_it() {
    let photo = std::fs::read(corpus().join("bench/photo-12mp.jpg")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tagged.jpg");
    std::fs::write(&file, with_gps_exif(&photo)).unwrap();
    let out = dir.path().join("out.jpg");
    let (code, v) = admit_json(&[path(&file), "--no-downsample", "--out", path(&out)]);
    assert_eq!((code, &v["dropped"]), (0, &json!(["exif"])), "{v}");
    assert_eq!(std::fs::read(&out).unwrap(), photo);
    let (code, v) = admit_json(&[path(&file), "--no-downsample", "--keep-metadata"]);
    assert_eq!(code, 0);
    assert!(v.get("dropped").is_none(), "{v}");
}
