//! The tool-result seat: every media block of a tool's result is admitted — rebuilt from the bytes
//! it checked — or replaced in its slot by a text block that names the tool, the refusal and the
//! size. Never the bytes, never empty, never silently nothing.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use crate::document::admit_document;
use crate::image_gate::admit_image;
use crate::options::Options;
use crate::signature::{PDF_MIME, normalize_mime};
use crate::verdict::{Admitted, Reason, Refusal};

#[derive(Debug, PartialEq, Eq)]
pub struct RefusedBlock {
    pub index: u32,
    pub block_type: String,
    pub mime: Option<String>,
    pub reason: Reason,
    pub raw_bytes: u64,
    pub limit: Option<u64>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct ToolResultAdmission {
    /// `None`: no block claims a media type; the content stands as it is.
    pub content: Option<String>,
    pub refused: Vec<RefusedBlock>,
}

/// Where a block keeps its media: the block shapes agents actually see.
enum Shape {
    /// MCP `{"type":"image"|"audio","data","mimeType"}`.
    McpInline,
    /// MCP embedded resource `{"type":"resource","resource":{"blob","mimeType",…}}`.
    McpResource,
    /// Anthropic `{"type":"image"|"document","source":{"type":"base64","media_type","data"}}`.
    AnthropicBase64,
}

fn shape_of(block: &Value) -> Option<Shape> {
    let obj = block.as_object()?;
    match obj.get("type")?.as_str()? {
        "image" | "document" if obj.contains_key("source") => {
            // URL and file sources carry no bytes to check; they stand as they are.
            let source_type = obj.get("source")?.get("type").and_then(Value::as_str);
            (source_type == Some("base64")).then_some(Shape::AnthropicBase64)
        }
        "image" | "audio" => Some(Shape::McpInline),
        "resource" => {
            let resource = obj.get("resource")?.as_object()?;
            resource.contains_key("blob").then_some(Shape::McpResource)
        }
        _ => None,
    }
}

pub fn admit_tool_result(tool: &str, content_json: &str, options: &Options) -> ToolResultAdmission {
    let unchanged = ToolResultAdmission { content: None, refused: Vec::new() };
    let Ok(mut value) = serde_json::from_str::<Value>(content_json) else {
        return unchanged; // content that cannot be read as blocks is left as it is
    };
    let blocks: &mut Vec<Value> = match &mut value {
        Value::Array(blocks) => blocks,
        Value::Object(obj) if obj.get("content").is_some_and(Value::is_array) => {
            obj.get_mut("content").and_then(Value::as_array_mut).expect("checked above")
        }
        Value::Object(obj) if obj.contains_key("type") => {
            // A single block: admit it as a list of one, answer in the shape it came in.
            let mut list = vec![Value::Object(std::mem::take(obj))];
            let refused = admit_blocks(tool, &mut list, options);
            return match refused {
                None => unchanged,
                Some(refused) => ToolResultAdmission { content: Some(list.remove(0).to_string()), refused },
            };
        }
        _ => return unchanged,
    };
    match admit_blocks(tool, blocks, options) {
        None => unchanged,
        Some(refused) => ToolResultAdmission { content: Some(value.to_string()), refused },
    }
}

/// Admits the media blocks in place; `None` when there is none.
fn admit_blocks(tool: &str, blocks: &mut Vec<Value>, options: &Options) -> Option<Vec<RefusedBlock>> {
    if !blocks.iter().any(|b| shape_of(b).is_some()) {
        return None;
    }
    let mut refused = Vec::new();
    let old = std::mem::take(blocks);
    for (index, block) in old.into_iter().enumerate() {
        let Some(shape) = shape_of(&block) else {
            blocks.push(block);
            continue;
        };
        let Value::Object(obj) = block else { unreachable!("shape_of accepts objects only") };
        match admit_block(&obj, &shape, options) {
            Ok(admitted) => blocks.push(rebuild(obj, &shape, &admitted)),
            Err((refusal, mime)) => {
                let block_type = obj.get("type").and_then(Value::as_str).unwrap_or("").to_string();
                blocks
                    .push(json!({"type": "text", "text": refusal_text(tool, &block_type, mime.as_deref(), &refusal)}));
                refused.push(RefusedBlock {
                    index: index as u32,
                    block_type,
                    mime,
                    reason: refusal.reason,
                    raw_bytes: refusal.raw_bytes,
                    limit: refusal.limit,
                });
            }
        }
    }
    Some(refused)
}

fn claimed(obj: &Map<String, Value>, shape: &Shape) -> (Option<String>, Option<Value>) {
    let (holder, mime_key, data_key) = match shape {
        Shape::McpInline => (Some(obj), "mimeType", "data"),
        Shape::McpResource => (obj.get("resource").and_then(Value::as_object), "mimeType", "blob"),
        Shape::AnthropicBase64 => (obj.get("source").and_then(Value::as_object), "media_type", "data"),
    };
    let mime = holder.and_then(|h| h.get(mime_key)).and_then(Value::as_str).map(str::to_string);
    let data = holder.and_then(|h| h.get(data_key)).cloned();
    (mime, data)
}

fn admit_block(
    obj: &Map<String, Value>,
    shape: &Shape,
    options: &Options,
) -> Result<Admitted, (Refusal, Option<String>)> {
    let (mime, data) = claimed(obj, shape);
    let Some(Value::String(data)) = data else {
        return Err((Refusal::new(Reason::Undecodable, 0, None, "the block has no base64 string to decode"), mime));
    };
    let bytes = match decode_base64(&data) {
        Some(bytes) => bytes,
        None => {
            return Err((Refusal::new(Reason::Undecodable, 0, None, "the block's data is not valid base64"), mime));
        }
    };
    let Some(claimed_mime) = mime.clone() else {
        return Err((
            Refusal::new(Reason::MimeUnsupported, bytes.len() as u64, None, "the block names no media type"),
            None,
        ));
    };
    let block_type = obj.get("type").and_then(Value::as_str).unwrap_or("");
    let normalized = normalize_mime(&claimed_mime);
    let verdict = if block_type == "document" || (block_type == "resource" && normalized == PDF_MIME) {
        admit_document(&bytes, &claimed_mime)
    } else if block_type == "audio" {
        Err(Refusal::new(
            Reason::MimeUnsupported,
            bytes.len() as u64,
            None,
            format!("{claimed_mime} is not an image or document type the gate accepts"),
        ))
    } else {
        admit_image(&bytes, &claimed_mime, options)
    };
    verdict.map_err(|r| (r, mime))
}

/// Standard base64; line-wrapped base64 (MIME style) is accepted too.
fn decode_base64(data: &str) -> Option<Vec<u8>> {
    STANDARD.decode(data).ok().or_else(|| {
        let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        (compact.len() != data.len()).then(|| STANDARD.decode(compact).ok()).flatten()
    })
}

fn rebuild(mut obj: Map<String, Value>, shape: &Shape, admitted: &Admitted) -> Value {
    match shape {
        Shape::McpInline => {
            obj.insert("data".into(), Value::String(admitted.data.clone()));
            obj.insert("mimeType".into(), Value::String(admitted.mime.into()));
        }
        Shape::McpResource => {
            if let Some(Value::Object(resource)) = obj.get_mut("resource") {
                resource.insert("blob".into(), Value::String(admitted.data.clone()));
                resource.insert("mimeType".into(), Value::String(admitted.mime.into()));
            }
        }
        Shape::AnthropicBase64 => {
            obj.insert("source".into(), json!({"type": "base64", "media_type": admitted.mime, "data": admitted.data}));
        }
    }
    Value::Object(obj)
}

fn refusal_text(tool: &str, block_type: &str, mime: Option<&str>, refusal: &Refusal) -> String {
    let what = match (block_type, mime) {
        ("resource", Some(m)) => format!("resource ({m})"),
        (t, Some(m)) => format!("{t} ({m})"),
        (t, None) => t.to_string(),
    };
    let limit = refusal.limit.map(|l| format!(", limit {l} bytes")).unwrap_or_default();
    format!(
        "[mediagate] The {what} returned by tool \"{tool}\" was not passed to the model: {} — {} ({} bytes{limit}).",
        refusal.reason.as_str(),
        refusal.message,
        refusal.raw_bytes
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_images::png;

    fn b64(bytes: &[u8]) -> String {
        STANDARD.encode(bytes)
    }

    fn admit(json: &Value) -> (Option<Value>, Vec<RefusedBlock>) {
        let a = admit_tool_result("screenshot", &json.to_string(), &Options::default());
        (a.content.map(|c| serde_json::from_str(&c).unwrap()), a.refused)
    }

    #[test]
    fn content_without_media_stands_as_it_is() {
        let (content, refused) = admit(&json!([{"type": "text", "text": "hello"}]));
        assert_eq!((content, refused.len()), (None, 0));
        let (content, _) =
            admit(&json!({"type": "resource", "resource": {"uri": "x", "text": "t", "mimeType": "text/plain"}}));
        assert_eq!(content, None);
        let a = admit_tool_result("t", "not json {", &Options::default());
        assert_eq!(a, ToolResultAdmission { content: None, refused: vec![] });
        let a = admit_tool_result("t", "\"just a string\"", &Options::default());
        assert_eq!(a.content, None);
    }

    #[test]
    fn mcp_blocks_one_good_one_bad() {
        let good = png(8, 8);
        let input = json!([
            {"type": "text", "text": "before"},
            {"type": "image", "data": b64(&good), "mimeType": "image/png"},
            {"type": "image", "data": b64(b"<svg/>"), "mimeType": "image/png"},
        ]);
        let (content, refused) = admit(&input);
        let content = content.unwrap();
        let blocks = content.as_array().unwrap();
        assert_eq!(blocks.len(), 3, "every slot keeps a block");
        assert_eq!(blocks[0], input[0]);
        assert_eq!(blocks[1]["data"], b64(&good));
        assert_eq!(blocks[1]["mimeType"], "image/png");
        assert_eq!(blocks[2]["type"], "text");
        let text = blocks[2]["text"].as_str().unwrap();
        assert!(
            text.contains("\"screenshot\"") && text.contains("magic_mismatch") && text.contains("6 bytes"),
            "{text}"
        );
        assert!(!text.contains(&b64(b"<svg/>")), "never the bytes");
        assert_eq!(
            refused,
            vec![RefusedBlock {
                index: 2,
                block_type: "image".into(),
                mime: Some("image/png".into()),
                reason: Reason::MagicMismatch,
                raw_bytes: 6,
                limit: None
            }]
        );
    }

    #[test]
    fn anthropic_blocks_one_good_one_bad() {
        let good = png(8, 8);
        let input = json!([
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpg", "data": b64(&crate::test_images::encode(&crate::test_images::gradient(8, 8), image::ImageFormat::Jpeg))}, "cache_control": {"type": "ephemeral"}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(b"not a pdf")}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(&good)}},
        ]);
        let (content, refused) = admit(&input);
        let blocks = content.unwrap();
        assert_eq!(blocks[0]["source"]["media_type"], "image/jpeg", "rebuilt with the canonical type");
        assert_eq!(blocks[0]["cache_control"]["type"], "ephemeral", "other fields are kept");
        assert_eq!(blocks[1]["type"], "text");
        assert_eq!(blocks[2]["source"]["data"], b64(&good));
        assert_eq!(refused.len(), 1);
        assert_eq!((refused[0].index, refused[0].reason), (1, Reason::MagicMismatch));
    }

    #[test]
    fn url_sources_carry_no_bytes_and_stand() {
        let input = json!([{"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]);
        assert_eq!(admit(&input).0, None);
    }

    #[test]
    fn undecodable_blocks_are_replaced() {
        let input = json!([
            {"type": "image", "data": "!!!not base64!!!", "mimeType": "image/png"},
            {"type": "image", "mimeType": "image/png"},
            {"type": "image", "data": 42, "mimeType": "image/png"},
        ]);
        let (content, refused) = admit(&input);
        assert!(content.unwrap().as_array().unwrap().iter().all(|b| b["type"] == "text"));
        assert!(refused.iter().all(|r| r.reason == Reason::Undecodable && r.raw_bytes == 0));
        assert_eq!(refused.len(), 3);
    }

    #[test]
    fn embedded_resources_and_object_results() {
        let good = png(8, 8);
        let input = json!({"content": [
            {"type": "resource", "resource": {"uri": "file:///a.png", "mimeType": "image/png", "blob": b64(&good)}},
            {"type": "resource", "resource": {"uri": "file:///a.zip", "mimeType": "application/zip", "blob": b64(b"PK\x03\x04")}},
        ], "isError": false});
        let (content, refused) = admit(&input);
        let content = content.unwrap();
        assert_eq!(content["isError"], false, "the result object keeps its other fields");
        assert_eq!(content["content"][0]["resource"]["blob"], b64(&good));
        assert_eq!(content["content"][1]["type"], "text");
        assert_eq!((refused[0].index, refused[0].reason), (1, Reason::MimeUnsupported));
    }

    #[test]
    fn a_single_block_comes_back_as_a_single_block() {
        let input = json!({"type": "image", "data": b64(b"GIF89a"), "mimeType": "image/webp"});
        let (content, refused) = admit(&input);
        assert_eq!(content.unwrap()["type"], "text");
        assert_eq!(refused[0].reason, Reason::MagicMismatch);
    }

    #[test]
    fn line_wrapped_base64_is_accepted() {
        let good = png(8, 8);
        let wrapped: String =
            b64(&good).as_bytes().chunks(20).map(|c| format!("{}\n", std::str::from_utf8(c).unwrap())).collect();
        let (content, refused) = admit(&json!([{"type": "image", "data": wrapped, "mimeType": "image/png"}]));
        assert!(refused.is_empty());
        assert_eq!(content.unwrap()[0]["data"], b64(&good));
    }
}
