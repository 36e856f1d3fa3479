//! The embedding guide's Rust code is the example `host/examples/agent.rs`, quoted verbatim in
//! docs/embedding.md; these tests run it against the real component and a loopback VLM.

#[path = "../../host/examples/agent.rs"]
#[allow(dead_code)]
mod agent;

use crate::common::vlm_server::*;
use crate::common::*;
use base64::Engine as _;
use mediagate::vlm::{Api, VlmConfig};
use mediagate::{Gate, ReadImageTool};
use serde_json::json;

#[test]
fn the_guide_quotes_the_example_verbatim() {
    let guide = std::fs::read_to_string(repo_root().join("docs/embedding.md")).unwrap();
    let example = std::fs::read_to_string(repo_root().join("host/examples/agent.rs")).unwrap();
    for f in ["pub async fn record_tool_result", "pub async fn tool_for_llm", "pub async fn call_read_image"] {
        let start = example.find(f).unwrap();
        let end = start + example[start..].find("\n}\n").unwrap() + 2;
        assert!(guide.contains(&example[start..end]), "docs/embedding.md must quote `{f}` as it is in the example");
    }
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
