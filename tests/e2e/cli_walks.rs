//! The holes in the walks, closed, through the `mediagate` binary: repeated keys inside a media
//! block's holders, `data:` URLs written the ways a WHATWG URL parser still reads, raw-base64
//! `file_data`, PDFs that are not whole, URL images counted, a tool result's image cap.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::common::*;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn svg() -> String {
    b64(br#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>"#)
}

fn png() -> String {
    b64(&std::fs::read(corpus().join("photos/tango-icon-address-book-new-16.png")).unwrap())
}

/// `admit-tool-result` on JSON text: its printed object. The exit status is the one rule: 2 when
/// the result was refused whole (it could not be read), 1 when a block was refused, else 0.
fn tool_result(input: &str) -> Value {
    let mut command = mediagate_command();
    command.args(["admit-tool-result", "--tool", "shot"]);
    let out = run_with_stdin(command, input.as_bytes());
    let printed: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let refused = printed["refused"].as_array().is_some_and(|r| !r.is_empty());
    let whole = printed["refused"][0]["path"] == "";
    assert_eq!(out.status.code(), Some(if whole { 2 } else { i32::from(refused) }), "{printed}");
    printed
}

/// `admit-request --json` on JSON text: (exit code, report).
fn admit_request(api: &str, input: &str) -> (i32, Value) {
    let mut command = mediagate_command();
    command.args(["admit-request", "--api", api, "--json"]);
    let out = run_with_stdin(command, input.as_bytes());
    let report =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap(), report)
}

fn openai_request(blocks: &str) -> String {
    format!(r#"{{"model":"gpt","messages":[{{"role":"user","content":[{blocks}]}}]}}"#)
}

#[test]
fn a_repeated_key_in_a_holder_is_refused_in_its_slot() {
    let (png, svg) = (png(), svg());
    let holders = [
        format!(
            r#"{{"type":"image_url","image_url":{{"url":"data:image/png;base64,{png}","url":"data:image/png;base64,{svg}"}}}}"#
        ),
        format!(
            r#"{{"type":"file","file":{{"file_data":"data:application/pdf;base64,{png}","file_data":"data:application/pdf;base64,{svg}"}}}}"#
        ),
        format!(
            r#"{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{png}","data":"{svg}"}}}}"#
        ),
    ];
    for block in &holders {
        let out = tool_result(&format!("[{block}]"));
        assert_eq!(out["refused"][0]["reason"], "undecodable", "{block:.80}");
        assert!(out["content"][0]["text"].as_str().unwrap().contains("repeats the key"), "{out}");
        assert!(!out.to_string().contains(&svg), "{block:.80}");

        let (code, report) = admit_request("openai", &openai_request(block));
        assert_eq!(code, 1, "{report}");
        assert_eq!(report["refused"], json!(["/messages/0/content/0"]), "{block:.80}");
        assert!(!report.to_string().contains(&svg), "{block:.80}");
    }
}

#[test]
fn data_urls_a_url_parser_reads_are_judged() {
    let svg = svg();
    // JSON escapes: a C0 control or space before the scheme, tabs and newlines inside it, case.
    let variants = [
        "data:",
        "  data:",
        "\\tdata:",
        "\\u0000data:",
        "\\u0001\\u001f data:",
        "da\\tta:",
        "dat\\ra:",
        "d\\na\\r\\nta:",
        "DATA:",
        "DaTa:",
    ];
    let blocks: Vec<String> = variants
        .iter()
        .map(|v| format!(r#"{{"type":"image_url","image_url":{{"url":"{v}image/png;base64,{svg}"}}}}"#))
        .collect();
    let (code, report) = admit_request("openai", &openai_request(&blocks.join(",")));
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["refused"].as_array().unwrap().len(), variants.len(), "{report}");
    assert!(report["changed"].as_array().unwrap().iter().all(|c| c["reason"] == "magic_mismatch"), "{report}");
    assert!(!report.to_string().contains(&svg));

    // Anthropic's URL source holding a data: URL, and OpenAI's file_data without the prefix.
    let anthropic = format!(
        r#"{{"messages":[{{"role":"user","content":[{{"type":"image","source":{{"type":"url","url":"data:image/png;base64,{svg}"}}}},{{"type":"image","source":{{"type":"url","url":"https://example.com/a.png"}}}}]}}]}}"#
    );
    let (code, report) = admit_request("anthropic", &anthropic);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["refused"], json!(["/messages/0/content/0"]));
    let raw = format!(r#"[{{"type":"file","file":{{"filename":"a.pdf","file_data":"{svg}"}}}}]"#);
    let out = tool_result(&raw);
    assert_eq!(out["refused"][0]["reason"], "magic_mismatch", "{out}");
}

#[test]
fn pdfs_that_are_not_whole_are_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let cut: Vec<u8> = std::fs::read(corpus().join("convert/pdf-3-pages.pdf")).unwrap()[..2000].to_vec();
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("nine.pdf", b"%PDF-1.4\n".to_vec(), "%%EOF"),
        ("junk.pdf", [b"%PDF-1.7\n".as_slice(), &[b'j'; 500]].concat(), "%%EOF"),
        ("cut.pdf", cut, "%%EOF"),
        ("locked.pdf", std::fs::read(corpus().join("convert/pdf-encrypted-user-password.pdf")).unwrap(), "encrypted"),
    ];
    for (name, bytes, words) in cases {
        let file = dir.path().join(name);
        std::fs::write(&file, &bytes).unwrap();
        let out = mediagate_command().args(["admit", "--json", file.to_str().unwrap()]).output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!((out.status.code(), v["reason"].as_str()), (Some(1), Some("undecodable")), "{name}: {v}");
        assert!(v["message"].as_str().unwrap().contains(words), "{name}: {v}");
        // The same bytes as a document block in a tool result.
        let block = json!([{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(&bytes)}}]);
        assert_eq!(tool_result(&block.to_string())["refused"][0]["reason"], "undecodable", "{name}");
    }
    // PDFs made by real tools pass: no false refusals.
    for path in [
        "convert/pdf-text-chromium.pdf",
        "convert/pdf-cairo-chart.pdf",
        "pdf/qpdf-object-streams.pdf",
        "pdf/gs-pdfwrite.pdf",
    ] {
        let out =
            mediagate_command().args(["admit", "--json", corpus().join(path).to_str().unwrap()]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{path}: {}", String::from_utf8_lossy(&out.stdout));
    }
}

#[test]
fn url_images_count_and_a_tool_result_has_an_image_cap() {
    let url = r#"{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}"#;
    let png_block =
        format!(r#"{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{}"}}}}"#, png());
    let mut blocks = vec![url.to_string(); 100];
    blocks.push(png_block.clone());
    let input = format!(r#"{{"messages":[{{"role":"user","content":[{}]}}]}}"#, blocks.join(","));
    let (code, report) = admit_request("anthropic", &input);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["refused"], json!(["/messages/0/content/100"]));
    assert_eq!(report["changed"][0]["rule"], "anthropic.images_per_request");

    let blocks = vec![png_block; 101];
    let out = tool_result(&format!("[{}]", blocks.join(",")));
    assert_eq!(out["refused"].as_array().unwrap().len(), 1, "{}", out["refused"]);
    assert_eq!(
        (out["refused"][0]["index"].as_u64(), out["refused"][0]["reason"].as_str()),
        (Some(100), Some("request_limit"))
    );
    assert!(out["content"][100]["text"].as_str().unwrap().contains("limit 100 images"), "{}", out["content"][100]);
}
