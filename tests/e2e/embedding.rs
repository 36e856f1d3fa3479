//! The embedding guide's Rust code is the example `lib/examples/agent.rs`, quoted verbatim in
//! docs/embedding.md; these tests run it against the real component and a loopback VLM.

#[path = "../../lib/examples/agent.rs"]
#[allow(dead_code)]
mod agent;

use crate::common::vlm_server::*;
use crate::common::*;
use base64::Engine as _;
use mediagate::vlm::{Api, VlmConfig};
use mediagate::{Gate, ReadImageTool};
use serde_json::json;

/// The fenced blocks of one language in the guide's section that starts with `heading`.
fn guide_blocks(heading: &str, lang: &str) -> Vec<String> {
    let guide = std::fs::read_to_string(repo_root().join("docs/embedding.md")).unwrap();
    let start = guide.find(heading).unwrap_or_else(|| panic!("docs/embedding.md has no `{heading}`"));
    let section = &guide[start..];
    let section = &section[..section[1..].find("\n## ").map_or(section.len(), |i| i + 1)];
    let fence = format!("```{lang}\n");
    section.split(fence.as_str()).skip(1).map(|b| b[..b.find("```").unwrap()].to_string()).collect()
}

fn without_blank_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.trim().is_empty()).collect()
}

#[test]
fn the_guide_quotes_the_whole_example_in_order() {
    let example = std::fs::read_to_string(repo_root().join("lib/examples/agent.rs")).unwrap();
    let code: String = example.lines().filter(|l| !l.starts_with("//!")).map(|l| format!("{l}\n")).collect();
    let quoted = guide_blocks("## Rust", "rust").concat();
    assert_eq!(
        without_blank_lines(&quoted),
        without_blank_lines(&code),
        "docs/embedding.md's Rust blocks must be lib/examples/agent.rs (after its //! lines), in order"
    );
}

/// A `[dependencies]` line: `name = "req"` or `name = { version = "req", features = [..] }`.
fn dependency(line: &str) -> Option<(String, String, Vec<String>)> {
    let (name, spec) = line.split_once(" = ")?;
    let quoted = |s: &str| s.split('"').skip(1).step_by(2).map(str::to_string).collect::<Vec<_>>();
    if spec.starts_with('"') {
        return Some((name.trim().to_string(), quoted(spec).remove(0), Vec::new()));
    }
    let version = quoted(&spec[spec.find("version")?..]).remove(0);
    let features = match spec.find("features = [") {
        Some(i) => quoted(&spec[i..i + spec[i..].find(']')?]),
        None => Vec::new(),
    };
    Some((name.trim().to_string(), version, features))
}

/// The crates a Rust text names by path (`serde_json::json`, `use mediagate::…`): lowercase roots
/// before `::` that no `::` precedes, without the standard library's.
fn crates_named(code: &str) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    let bytes = code.as_bytes();
    for (at, _) in code.match_indices("::") {
        let start = code[..at].rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let name = &code[start..at];
        let after_path = start >= 2 && &bytes[start - 2..start] == b"::";
        if !name.is_empty() && name.starts_with(|c: char| c.is_ascii_lowercase()) && !after_path {
            names.insert(name.to_string());
        }
    }
    for std_name in ["std", "core", "alloc", "crate", "self", "super"] {
        names.remove(std_name);
    }
    names
}

#[test]
fn the_guides_cargo_toml_names_what_the_example_uses_as_the_crate_builds_it() {
    let toml = guide_blocks("## Rust", "toml");
    assert_eq!(toml.len(), 1, "one Cargo.toml block in the guide's Rust section");
    assert!(toml[0].starts_with("[dependencies]\n"));
    let guide: Vec<_> =
        toml[0].lines().skip(1).map(|l| dependency(l).unwrap_or_else(|| panic!("unread: {l}"))).collect();
    // The example is built with the library's dependencies and its dev-dependencies.
    let manifest = std::fs::read_to_string(repo_root().join("lib/Cargo.toml")).unwrap();
    let host: Vec<_> = ["\n[dependencies]\n", "\n[dev-dependencies]\n"]
        .iter()
        .flat_map(|heading| {
            let section = &manifest[manifest.find(heading).unwrap() + heading.len()..];
            section[..section.find("\n[").unwrap_or(section.len())].lines()
        })
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(dependency)
        .collect();
    let version = env!("CARGO_PKG_VERSION");
    for (name, req, features) in &guide {
        if name == "mediagate" {
            // `0.1` (caret) takes this crate's version, 0.1.x.
            assert!(
                format!("{version}.").starts_with(&format!("{req}.")),
                "mediagate = {req:?} does not take {version}"
            );
            continue;
        }
        // The example is compiled with the crate's own dependencies: the guide asks for the same
        // versions and no feature the crate does not build.
        let (_, host_req, host_features) = host
            .iter()
            .find(|(n, _, _)| n == name)
            .unwrap_or_else(|| panic!("the guide's {name} is not a dependency of the crate"));
        assert_eq!(req, host_req, "{name}: the guide asks for {req}, the crate builds with {host_req}");
        for f in features {
            assert!(host_features.contains(f), "{name}: feature {f} is not one the crate builds with");
        }
    }
    let example = std::fs::read_to_string(repo_root().join("lib/examples/agent.rs")).unwrap();
    let listed: std::collections::BTreeSet<String> = guide.iter().map(|(n, _, _)| n.replace('-', "_")).collect();
    let used = crates_named(&example);
    assert!(used.contains("mediagate") && used.contains("tokio"), "{used:?}");
    assert_eq!(used, listed, "the crates the example names must be the guide's [dependencies]");
}

#[tokio::test]
async fn tool_results_are_gated_before_they_enter_history() {
    let gate = Gate::new(runtime()).unwrap();
    let icon = std::fs::read(repo_root().join("examples/icon.png")).unwrap();
    let good = base64::engine::general_purpose::STANDARD.encode(&icon);
    let content = json!([
        {"type": "image", "data": good, "mimeType": "image/png"},
        {"type": "image", "data": "PHN2Zy8+", "mimeType": "image/png"},
    ]);
    let mut history = Vec::new();
    agent::record_tool_result(&gate, &mut history, &json!({"id": "t1", "name": "shot"}), &content).await.unwrap();
    let blocks = &history[0]["content"][0]["content"];
    assert_eq!(history[0]["content"][0]["tool_use_id"], "t1");
    // The icon's canonical form: its text, time, background and resolution chunks left out.
    assert_eq!(blocks[0]["data"], base64::engine::general_purpose::STANDARD.encode(canonical_png(&icon)));
    assert_eq!(blocks[1]["type"], "text");
    let text_only = json!([{"type": "text", "text": "no media"}]);
    agent::record_tool_result(&gate, &mut history, &json!({"id": "t2", "name": "ls"}), &text_only).await.unwrap();
    assert_eq!(history[1]["content"][0]["content"], text_only);
}

#[tokio::test]
async fn read_image_is_registered_and_called_as_the_guide_shows() {
    let server = VlmServer::start(vec![openai_reply(&["An icon."], 0)]).await;
    let tool = ReadImageTool::new(runtime(), Some(VlmConfig::new(Api::OpenAi, server.openai_url(), "m"))).unwrap();
    let def = agent::tool_for_llm(&tool).await.unwrap();
    assert_eq!(def["name"], "read_image");
    assert_eq!(def["input_schema"]["required"], json!(["path"]));
    let ws = repo_root().join("examples");
    let (answer, is_error) = agent::call_read_image(&tool, &ws, &json!({"path": "icon.png"})).await.unwrap();
    assert_eq!((answer.as_str(), is_error), ("An icon.", false));
    let (answer, is_error) = agent::call_read_image(&tool, &ws, &json!({"path": "nope.png"})).await.unwrap();
    assert!(is_error && answer.starts_with("error: file not found"));
}
