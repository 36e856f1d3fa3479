//! How a Rust agent uses mediagate: the gate on every tool result before it enters the history,
//! and `read_image` registered as a tool with the definition the component publishes.
//!
//!     cargo run --release --example agent -- WORKSPACE IMAGE
use std::path::Path;
use std::sync::Arc;

use mediagate::vlm::{ChunkKind, VlmConfig};
use mediagate::{Gate, ReadImageTool, Runtime, RuntimeConfig};
use serde_json::{Value, json};

/// Records one executed tool call in the history (Anthropic Messages shape), after the gate.
pub async fn record_tool_result(
    gate: &Gate,
    history: &mut Vec<Value>,
    tool_use: &Value,
    content: &Value,
) -> anyhow::Result<()> {
    let name = tool_use["name"].as_str().unwrap_or("tool");
    let admission = gate.admit_tool_result(name, &content.to_string(), false, gate.default_options()).await?.answer;
    // `None`: no block claims a media type, the content stands as it is. Refused blocks are
    // already replaced in their slots by text blocks the model can read.
    let content = match admission.content {
        Some(admitted) => serde_json::from_str(&admitted)?,
        None => content.clone(),
    };
    for r in &admission.refused {
        eprintln!("mediagate: {name} block {} refused: {} ({} bytes)", r.index, r.reason.as_str(), r.raw_bytes);
    }
    history.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": tool_use["id"], "content": content}
    ]}));
    Ok(())
}

/// The `read_image` tool as the LLM sees it, from the component's own definition.
pub async fn tool_for_llm(tool: &ReadImageTool) -> anyhow::Result<Value> {
    let def = tool.definition().await?;
    Ok(json!({"name": def.name, "description": def.description,
              "input_schema": serde_json::from_str::<Value>(&def.parameters_schema)?}))
}

/// Runs the tool for one `tool_use` block; the answer streams to stderr as it arrives.
pub async fn call_read_image(tool: &ReadImageTool, workspace: &Path, input: &Value) -> anyhow::Result<(String, bool)> {
    let path = input["path"].as_str().unwrap_or_default();
    let question = input["question"].as_str();
    let page: Option<u32> = input["page"].as_u64().and_then(|p| p.try_into().ok()); // a PDF's page to render
    // The sink also gets the model's reasoning, which the answer leaves out: show the answer only.
    let sink = Arc::new(|kind: ChunkKind, text: &str| {
        if kind == ChunkKind::Content {
            eprint!("{text}");
        }
    });
    Ok(match tool.read_image(workspace, path, question, page, sink).await?.answer {
        Ok(answer) => (answer, false),
        Err(tool_error) => (tool_error.message, true), // words the model can act on: is_error
    })
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (workspace, image) = (Path::new(&args[1]), &args[2]);
    let runtime = Runtime::new(RuntimeConfig::default())?; // one per process
    let gate = Gate::new(runtime.clone())?;
    let vlm = VlmConfig::resolve(None, None, None, |k| std::env::var(k).ok()).map_err(anyhow::Error::msg)?;
    let tool = ReadImageTool::new(runtime, vlm)?;
    println!("{}", tool_for_llm(&tool).await?);
    let (answer, is_error) = call_read_image(&tool, workspace, &json!({"path": image})).await?;
    println!("is_error={is_error}: {answer}");
    let mut history = Vec::new();
    let bytes = std::fs::read(workspace.join(image))?;
    let block = json!([{"type": "image", "mimeType": "image/png",
                        "data": base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes)}]);
    record_tool_result(&gate, &mut history, &json!({"id": "toolu_1", "name": "screenshot"}), &block).await?;
    println!("{}", history[0]["content"][0]["content"][0]["type"]);
    Ok(())
}
