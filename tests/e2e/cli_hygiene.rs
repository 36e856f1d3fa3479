//! What every command shares at its edges: a reader that goes away ends it quietly, one exit rule
//! (0 done, 1 refused, 2 could not be judged) for input it cannot judge, the `--convert` hint in
//! `--json` as on the line, and examples in `-h` as in `--help`.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ExitStatus, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

const SIGPIPE: i32 = 13;

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Waits for the child, failing after a minute (a command blocked on a closed pipe is the kind of
/// bug this file is about).
fn wait(child: Child, what: &str) -> (ExitStatus, String) {
    let out = finish_within(child, Duration::from_secs(60), what);
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A quiet end on a closed stdout: the command's own exit code or SIGPIPE's, never a panic (101)
/// and no error about the pipe.
fn assert_quiet(status: ExitStatus, stderr: &str, allowed: &[i32], what: &str) {
    let quiet = status.signal() == Some(SIGPIPE) || status.code().is_some_and(|c| allowed.contains(&c));
    assert!(quiet, "{what}: {status}: {stderr}");
    for noise in ["panicked", "Broken pipe", "os error 32", "error:"] {
        assert!(!stderr.contains(noise), "{what}: {noise:?} on stderr: {stderr}");
    }
}

/// Runs `args` with stdin `input` and the read end of its stdout closed before it writes.
fn with_stdout_closed(args: &[&str], input: &[u8]) -> (ExitStatus, String) {
    let mut child = mediagate_command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let ended = wait(child, &format!("{args:?}"));
    writer.join().unwrap();
    ended
}

fn run(args: &[&str], input: &[u8]) -> Output {
    let mut command = mediagate_command();
    command.args(args);
    run_with_stdin(command, input)
}

fn png() -> String {
    corpus().join("pngsuite/basn2c08.png").to_string_lossy().into_owned()
}

/// `mediagate admit -r DIR --jsonl | head -1`: the first verdict read, the pipe closed, the run
/// ends at its next write without a word.
#[test]
fn a_bulk_run_piped_into_head_ends_quietly() {
    let dir = p(&corpus().join("pngsuite")).to_string();
    for format in ["--jsonl", "--jobs=1"] {
        let what = format!("admit -r pngsuite {format}");
        let mut child = mediagate_command()
            .args(["admit", "-r", &dir, &dir, format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        assert!(first.contains("pngsuite"), "{what}: {first}");
        let (status, stderr) = wait(child, &what);
        // Refused files among the suite's broken ones: 1 if it ended by itself.
        assert_quiet(status, &stderr, &[0, 1], &what);
    }
}

/// Every command that prints to stdout, its reader gone before it writes: help, one verdict, a
/// tool result, a request, a batch file.
#[test]
fn every_command_ends_quietly_when_its_reader_is_gone() {
    let png = png();
    let tool_result = r#"[{"type":"text","text":"hi"}]"#;
    let request = r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}"#;
    let batch = format!("{{\"custom_id\":\"a\",\"params\":{request}}}\n").repeat(2000);
    let cases: Vec<(Vec<&str>, &[u8], &[i32])> = vec![
        (vec!["--help"], b"", &[0]),
        (vec!["-h"], b"", &[0]),
        (vec!["admit", "--help"], b"", &[0]),
        (vec!["--version"], b"", &[0]),
        (vec!["admit", &png], b"", &[0]),
        (vec!["admit", "--json", &png], b"", &[0]),
        (vec!["admit-tool-result", "--tool", "t"], tool_result.as_bytes(), &[0]),
        (vec!["admit-request", "--api", "anthropic"], request.as_bytes(), &[0]),
        (vec!["admit-request", "--api", "anthropic", "--json"], request.as_bytes(), &[0]),
        (vec!["admit-batch", "--api", "anthropic", "-"], batch.as_bytes(), &[0]),
    ];
    for (args, input, allowed) in cases {
        let (status, stderr) = with_stdout_closed(&args, input);
        assert_quiet(status, &stderr, allowed, &format!("{args:?}"));
    }
}

/// The one exit rule, for input each command cannot judge: 2, whatever the command; what it
/// judged and refused: 1.
#[test]
fn input_that_cannot_be_judged_exits_2_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not an image\n").unwrap();
    let missing = dir.path().join("missing.png");
    let nowhere = dir.path().join("no/such/dir.wasm");
    let ws = p(dir.path());
    // A VLM nobody listens on: the file is judged before any request is made.
    let read_image_with_a_vlm =
        |file| vec!["read-image", file, "--workspace", ws, "--vlm-url", "http://127.0.0.1:9/v1", "--vlm-model", "m"];
    let cases: Vec<(Vec<&str>, &[u8], i32)> = vec![
        (vec!["admit", p(&missing)], b"", 2),
        (vec!["admit", "--json", p(&missing)], b"", 2),
        (vec!["admit", "-r", p(&missing), p(&text)], b"", 2),
        (vec!["admit", "--no-such-flag", p(&text)], b"", 2),
        (vec!["admit-tool-result", "--tool", "t"], b"not json", 2),
        (vec!["admit-tool-result", "--tool", "t", p(&missing)], b"", 2),
        (vec!["admit-request", "--api", "openai"], b"not json", 2),
        (vec!["admit-request", "--api", "openai", "--json"], b"[]", 2),
        (vec!["admit-batch", "--api", "openai", p(&missing)], b"", 2),
        (vec!["admit-batch", "--api", "nosuch", "-"], b"", 2),
        (read_image_with_a_vlm("missing.png"), b"", 2),
        (vec!["read-image", "notes.txt", "--workspace", ws], b"", 2),
        (vec!["component", "--world", "nosuch", "--out", p(&missing)], b"", 2),
        (vec!["component", "--out", p(&nowhere)], b"", 2),
        // Judged and refused: 1.
        (vec!["admit", p(&text)], b"", 1),
        (vec!["admit-batch", "--api", "openai", "-"], b"not a request\n", 1),
        (read_image_with_a_vlm("notes.txt"), b"", 1),
    ];
    for (args, input, code) in cases {
        let out = run(&args, input);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // The tool result that is not JSON is still answered on stdout: the placeholder that says why.
    let out = run(&["admit-tool-result", "--tool", "t"], b"not json");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["refused"][0]["reason"], "undecodable", "{answer}");
}

/// A file refused for its type, whose bytes `--convert` converts: the line says so, and `--json`
/// and `--jsonl` carry the same words (`hint`) and the type (`convertible`).
#[test]
fn json_verdicts_carry_the_convert_hint() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("diagram.png");
    std::fs::write(&svg, r#"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>"#).unwrap();
    let hint = "the bytes are image/svg+xml, which --convert converts";

    let line = run(&["admit", p(&svg)], b"");
    assert_eq!(line.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&line.stdout).trim_end().ends_with(&format!("; {hint}")));

    let json = run(&["admit", "--json", p(&svg)], b"");
    assert_eq!(json.status.code(), Some(1));
    let verdict: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(verdict["ok"], false, "{verdict}");
    assert_eq!(verdict["hint"], hint, "{verdict}");
    assert_eq!(verdict["convertible"], "image/svg+xml", "{verdict}");

    let jsonl = run(&["admit", "--jsonl", p(&svg)], b"");
    let first: Value = serde_json::from_slice(jsonl.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(first["hint"], hint, "{first}");

    // Nothing to hint at: no field.
    let admitted: Value = serde_json::from_slice(&run(&["admit", "--json", &png()], b"").stdout).unwrap();
    assert!(admitted.get("hint").is_none() && admitted.get("convertible").is_none(), "{admitted}");
}

/// `-h` shows the examples and the exit rule `--help` shows, for the program and every command.
#[test]
fn short_help_shows_the_examples_too() {
    let commands: [&[&str]; 9] = [
        &[],
        &["admit"],
        &["admit-tool-result"],
        &["admit-request"],
        &["admit-batch"],
        &["read-image"],
        &["component"],
        &["mcp"],
        &["proxy"],
    ];
    for command in commands {
        let help = |flag: &str| {
            let out = mediagate_command().args(command).arg(flag).output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{command:?} {flag}");
            let text = String::from_utf8(out.stdout).unwrap();
            let footer = text.find("Examples:").map(|at| text[at..].to_string());
            footer.unwrap_or_else(|| panic!("{command:?} {flag}: no examples:\n{text}"))
        };
        let short = help("-h");
        assert!(short.contains("\n    mediagate ") && short.contains("Exit status: 0 "), "{command:?}: {short}");
        assert_eq!(short, help("--help"), "{command:?}");
    }
}
