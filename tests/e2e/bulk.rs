//! The bulk commands through the real binary: `mediagate admit` over files, directories and lists
//! (`--jobs`, `--jsonl`, `--out-dir`, the summary), and `mediagate admit-batch` over Batch API
//! files (both APIs, both forms, `--on-refusal`, the file rules); and docs/bulk.md's shell
//! snippets, run as written.

use std::path::{Path, PathBuf};
use std::process::Output;

use base64::Engine as _;
use image::{DynamicImage, ImageFormat, RgbImage};
use serde_json::{Value, json};

use crate::common::{mediagate_command, repo_root, run_with_stdin};

const SVG: &[u8] = b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"8\" height=\"8\"/>";

fn encoded(w: u32, h: u32, format: ImageFormat) -> Vec<u8> {
    let img = RgbImage::from_fn(w, h, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x * y) % 256) as u8]));
    let mut out = std::io::Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(img).write_to(&mut out, format).unwrap();
    out.into_inner()
}

/// A tree of inputs: good, oversized, mislabelled (refused), cut (repaired as browsers show it);
/// nested; a hidden file the walk skips.
fn image_tree(root: &Path) -> Vec<PathBuf> {
    let png = encoded(64, 48, ImageFormat::Png);
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("a/good.png", png.clone()),
        ("a/photo.jpeg", encoded(120, 80, ImageFormat::Jpeg)),
        ("a/z/big.png", encoded(2400, 1200, ImageFormat::Png)),
        ("b/diagram.png", SVG.to_vec()),
        ("b/cut.png", png[..png.len() / 3].to_vec()),
        ("c.png", png.clone()),
    ];
    let mut paths = Vec::new();
    for (name, bytes) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        paths.push(path);
    }
    std::fs::write(root.join("a/.hidden.png"), SVG).unwrap();
    paths.sort();
    paths
}

fn jsonl(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_tree_is_admitted_in_order_with_the_verdicts_one_file_gets() {
    let dir = tempfile::tempdir().unwrap();
    let files = image_tree(dir.path());
    let out_dir = dir.path().join("out");
    let out = mediagate_command()
        .args(["admit", "-r", "--jobs", "2", "--jsonl", "--out-dir"])
        .arg(&out_dir)
        .arg(dir.path().join("a"))
        .arg(dir.path().join("b"))
        .arg(dir.path().join("c.png"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "something was refused: {}", stderr(&out));
    let lines = jsonl(&out);
    let paths: Vec<PathBuf> = lines.iter().map(|l| PathBuf::from(l["path"].as_str().unwrap())).collect();
    // Sorted by name within each root, the roots in the order given; the hidden file left out.
    assert_eq!(paths, files);
    for (line, file) in lines.iter().zip(&files) {
        let one = mediagate_command().args(["admit", "--json"]).arg(file).output().unwrap();
        let single: Value = serde_json::from_slice(&one.stdout).unwrap();
        let mut bulk = line.clone();
        for key in ["path", "out"] {
            bulk.as_object_mut().unwrap().remove(key);
        }
        assert_eq!(bulk, single, "{}", file.display());
        let written = line.get("out").and_then(Value::as_str).map(PathBuf::from);
        assert_eq!(written.is_some(), line["ok"] == true, "{line}");
        if let Some(written) = written {
            assert!(written.starts_with(&out_dir) && written.is_file(), "{}", written.display());
        }
    }
    assert_eq!(lines[4]["convertible"], "image/svg+xml", "{}", lines[4]);
    let summary = stderr(&out);
    assert!(
        summary.contains("6 files in ")
            && summary.contains("5 admitted (1 downsampled")
            && summary.contains("1 refused (magic_mismatch 1)")
            && summary.contains("0 could not be judged"),
        "{summary}"
    );
}

#[test]
fn one_unreadable_file_is_reported_and_the_rest_are_judged() {
    let dir = tempfile::tempdir().unwrap();
    let files = image_tree(dir.path());
    let list: String = [files[0].display().to_string(), dir.path().join("missing.png").display().to_string()]
        .into_iter()
        .chain(std::iter::once(files[5].display().to_string()))
        .map(|p| p + "\n")
        .collect();
    let mut command = mediagate_command();
    command.args(["admit", "--files-from", "-"]);
    let out = run_with_stdin(command, list.as_bytes());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("admitted ") && lines[2].starts_with("admitted "), "{text}");
    assert!(lines[1].starts_with("error ") && lines[1].contains("missing.png"), "{text}");
    assert!(stderr(&out).contains("1 could not be judged"), "{}", stderr(&out));
}

#[test]
fn a_directory_needs_r_and_one_input_flags_are_refused_with_many() {
    let dir = tempfile::tempdir().unwrap();
    let files = image_tree(dir.path());
    let out = mediagate_command().arg("admit").arg(dir.path()).arg(&files[0]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("-r admits the files"), "{}", stderr(&out));
    let out = mediagate_command().args(["admit", "--json"]).args(&files[..2]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--jsonl"), "{}", stderr(&out));
    // One file, as it always was: exit 0 and the one line.
    let out = mediagate_command().arg("admit").arg(&files[5]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("admitted "));
}

fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn chat_line(id: &str, image: Option<(&str, &[u8])>) -> String {
    let mut content = vec![json!({"type": "text", "text": "what is it?"})];
    if let Some((mime, bytes)) = image {
        content.push(json!({"type": "image_url", "image_url": {"url": data_url(mime, bytes)}}));
    }
    json!({"custom_id": id, "method": "POST", "url": "/v1/chat/completions",
        "body": {"model": "m", "messages": [{"role": "user", "content": content}]}})
    .to_string()
}

/// An OpenAI Batch file with a line of each kind; its lines (with their breaks) and what each is.
fn openai_batch() -> (Vec<u8>, Vec<&'static str>) {
    let png = encoded(32, 32, ImageFormat::Png);
    let big = encoded(2600, 1300, ImageFormat::Png);
    let lines: Vec<(Vec<u8>, &str, &'static str)> = vec![
        (chat_line("good", Some(("image/png", &png))).into_bytes(), "\n", "unchanged"),
        (chat_line("svg", Some(("image/png", SVG))).into_bytes(), "\r\n", "refused_blocks"),
        (b"   ".to_vec(), "\n", "blank"),
        (chat_line("big", Some(("image/png", &big))).into_bytes(), "\n", "changed"),
        (
            br#"{"custom_id":"e","method":"POST","url":"/v1/embeddings","body":{"input":"x"}}"#.to_vec(),
            "\n",
            "unchanged",
        ),
        (b"not json".to_vec(), "\n", "refused"),
        (b"{\"custom_id\":\"\xff\"}".to_vec(), "\n", "refused"),
        (chat_line("text", None).into_bytes(), "", "unchanged"),
    ];
    let mut bytes = Vec::new();
    let mut kinds = Vec::new();
    for (line, ending, kind) in lines {
        bytes.extend(line);
        bytes.extend(ending.as_bytes());
        kinds.push(kind);
    }
    (bytes, kinds)
}

fn admit_batch(dir: &Path, input: &[u8], args: &[&str]) -> (Output, Option<Vec<u8>>, Vec<Value>) {
    let source = dir.join("batch.jsonl");
    std::fs::write(&source, input).unwrap();
    let (out_file, report) = (dir.join("out.jsonl"), dir.join("report.jsonl"));
    let _ = std::fs::remove_file(&out_file);
    let out = mediagate_command()
        .arg("admit-batch")
        .arg(&source)
        .args(args)
        .arg("-o")
        .arg(&out_file)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    let report: Vec<Value> = std::fs::read_to_string(&report)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out, std::fs::read(&out_file).ok(), report)
}

fn split_lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|b| *b == b'\n').collect()
}

#[test]
fn an_openai_batch_file_keeps_its_lines_in_order_and_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let (input, kinds) = openai_batch();
    let (out, written, report) = admit_batch(dir.path(), &input, &["--api", "openai", "--jobs", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let written = written.expect("the output file");
    let (ins, outs) = (split_lines(&input), split_lines(&written));
    // Placeholder: every line but the two refused whole goes out, in order.
    let kept: Vec<&[u8]> = ins.iter().zip(&kinds).filter(|(_, k)| **k != "refused").map(|(l, _)| *l).collect();
    assert_eq!(outs.len(), kept.len());
    for ((line, kind), out_line) in ins.iter().zip(&kinds).filter(|(_, k)| **k != "refused").zip(&outs) {
        if matches!(*kind, "unchanged" | "blank") {
            assert_eq!(out_line, line);
        } else {
            assert_ne!(out_line, line);
            let (a, b): (Value, Value) =
                (serde_json::from_slice(line).unwrap(), serde_json::from_slice(out_line).unwrap());
            assert_eq!(a["custom_id"], b["custom_id"]);
            assert_eq!(line.ends_with(b"\r\n"), out_line.ends_with(b"\r\n"));
        }
    }
    let reported: Vec<(u64, &str)> =
        report.iter().filter_map(|r| Some((r["number"].as_u64()?, r["outcome"].as_str()?))).collect();
    assert_eq!(reported, [(2, "refused_blocks"), (4, "changed"), (6, "refused"), (7, "refused")]);
    let summary = &report.last().unwrap()["summary"];
    assert_eq!(
        (summary["requests"].as_u64(), summary["unchanged"].as_u64(), summary["left_out"].as_u64()),
        (Some(7), Some(3), Some(2)),
        "{summary}"
    );
    assert_eq!(summary["bytes_in"].as_u64(), Some(input.len() as u64));
    assert_eq!(summary["bytes_out"].as_u64(), Some(written.len() as u64));

    // drop: the request with a refused block is left out too; fail: nothing is left behind.
    let (out, written, _) = admit_batch(dir.path(), &input, &["--api", "openai", "--on-refusal", "drop"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(split_lines(&written.unwrap()).len(), kept.len() - 1);
    let (out, written, report) = admit_batch(dir.path(), &input, &["--api", "openai", "--on-refusal", "fail"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(written.is_none(), "the output file is removed");
    assert_eq!(report.last().unwrap()["summary"]["stopped_at"], 2);
}

#[test]
fn an_anthropic_requests_document_keeps_its_shape() {
    let dir = tempfile::tempdir().unwrap();
    let png = base64::engine::general_purpose::STANDARD.encode(encoded(16, 16, ImageFormat::Png));
    let svg = base64::engine::general_purpose::STANDARD.encode(SVG);
    let item = |id: &str, data: &str| {
        json!({"custom_id": id, "params": {"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}]}]}})
        .to_string()
    };
    let doc =
        format!("{{\"requests\": [\n  {},\n  {},\n  {}\n]}}\n", item("a", &png), item("b", &svg), item("c", &png));
    let (out, written, report) =
        admit_batch(dir.path(), doc.as_bytes(), &["--api", "anthropic", "--on-refusal", "drop"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let written = String::from_utf8(written.unwrap()).unwrap();
    assert_eq!(written, format!("{{\"requests\": [\n  {},\n  {}\n]}}\n", item("a", &png), item("c", &png)));
    assert_eq!(report[0]["custom_id"], "b");
    // Placeholder: the same document, the refused image replaced by words in its slot.
    let (_, written, _) = admit_batch(dir.path(), doc.as_bytes(), &["--api", "anthropic"]);
    let v: Value = serde_json::from_slice(&written.unwrap()).unwrap();
    assert_eq!(v["requests"].as_array().unwrap().len(), 3);
    assert_eq!(v["requests"][1]["params"]["messages"][0]["content"][0]["type"], "text");
}

#[test]
fn a_file_over_the_batch_api_request_count_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let line = r#"{"custom_id":"e","method":"POST","url":"/v1/embeddings","body":{"input":"x"}}"#;
    let input = format!("{line}\n").repeat(50_001);
    let (out, written, report) = admit_batch(dir.path(), input.as_bytes(), &["--api", "openai"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(written.unwrap(), input.as_bytes(), "the output is written all the same");
    let rules = &report.last().unwrap()["summary"]["file_rules"];
    assert_eq!(rules[0]["rule"], "openai.batch_requests", "{rules}");
    assert!(stderr(&out).contains("openai.batch_requests"), "{}", stderr(&out));
}

/// docs/bulk.md's `sh` blocks under "## The command line", run in a folder holding what they name
/// (`shots/`, `batch.jsonl`, `requests.json`), with this `mediagate` first on the PATH.
#[test]
fn the_bulk_guide_s_commands_run_as_written() {
    let guide = std::fs::read_to_string(repo_root().join("docs/bulk.md")).unwrap();
    let section = guide.split("\n## ").find(|s| s.starts_with("The command line")).expect("the CLI section");
    let blocks: Vec<&str> = section.split("```sh\n").skip(1).map(|b| b.split("\n```").next().unwrap()).collect();
    assert!(blocks.len() >= 3, "{blocks:?}");
    let dir = tempfile::tempdir().unwrap();
    image_tree(&dir.path().join("shots"));
    let (batch, _) = openai_batch();
    std::fs::write(dir.path().join("batch.jsonl"), batch).unwrap();
    std::fs::write(dir.path().join("requests.json"), "{\"requests\": []}").unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_mediagate")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    for block in blocks {
        let out = std::process::Command::new("bash")
            .args(["-c", &format!("set -o pipefail\n{block}")])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env(mediagate::facts::env::CACHE_DIR, crate::common::cache_dir())
            .output()
            .unwrap();
        // The gate's commands exit 1 when something was refused, as these inputs mean them to.
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{block}\n{}\n{}",
            stderr(&out),
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
