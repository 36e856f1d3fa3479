//! Which objects are media blocks, where each keeps its claimed type and its bytes, and how an
//! admitted block is written back — for every block shape agents see:
//!
//! | shape | bytes at |
//! |---|---|
//! | MCP `{"type":"image"\|"audio","data","mimeType"}` | `data` |
//! | MCP `{"type":"resource","resource":{"blob","mimeType"}}` | `resource.blob` |
//! | Anthropic `{"type":"image"\|"document","source":{"type":"base64","media_type","data"}}` | `source.data` |
//! | OpenAI Chat `{"type":"image_url","image_url":{"url":"data:…"}}`, `{"type":"file","file":{"file_data"}}` | a data URL |
//! | OpenAI Responses `{"type":"input_image","image_url":"data:…"}`, `{"type":"input_file","file_data"}` | a data URL |
//!
//! Types are matched without regard to case (`"Image"`, `"Base64"`): a lenient client may accept
//! them, so the gate must check them. Blocks that carry no bytes (a URL, a file id, a text
//! resource) stand as they are.

use std::ops::Range;

use serde_json::Value as Json;

use super::scan::{Object, Scan, Value, string_at};
use super::url::{self, MediaUrl};
use crate::signature::PDF_MIME;
use crate::verdict::{Admitted, Reason, Refusal};

pub enum Payload {
    /// A base64 string member of object `object`.
    Base64 { object: usize, key: &'static str },
    /// A `data:` URL string member of object `object`.
    DataUrl { object: usize, key: &'static str },
    /// A URL the provider fetches: no bytes to judge; the block stands, counted as an image.
    Fetched,
    /// The block cannot be judged: refused as it is.
    Refused(Refusal),
}

pub struct Block {
    /// The block's object in [`Scan::objects`].
    pub object: usize,
    /// The block's `type`, as given.
    pub block_type: String,
    /// The media type the block claims.
    pub mime: Option<String>,
    pub payload: Payload,
    /// Where the claimed type is written (rewritten with the canonical type when admitted).
    mime_at: Option<(usize, &'static str)>,
    /// A `source.type` to rewrite as `"base64"` (it was given in another case).
    source_type_at: Option<usize>,
}

impl Block {
    pub fn is_document(&self) -> bool {
        matches!(self.block_type.to_ascii_lowercase().as_str(), "document" | "file" | "input_file")
    }

    pub fn is_audio(&self) -> bool {
        matches!(self.block_type.to_ascii_lowercase().as_str(), "audio" | "input_audio")
    }

    /// An image a provider counts (one per request rule, the tool-result cap): an image block the
    /// gate can judge, or one whose URL the provider fetches.
    pub fn counts_as_image(&self) -> bool {
        !self.is_document() && !self.is_audio() && !matches!(self.payload, Payload::Refused(_))
    }

    /// The type of the text block that replaces a refused one, in the same API's vocabulary.
    pub fn placeholder_type(&self) -> &'static str {
        if self.block_type.to_ascii_lowercase().starts_with("input_") { "input_text" } else { "text" }
    }
}

/// The media blocks of a scanned result, outermost first in document order. A media block that
/// holds another is refused whole (which of the two a client would read is not defined).
pub fn media_blocks(text: &str, scan: &Scan) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    for id in scan.in_document_order() {
        let object = &scan.objects[id];
        let Some(block) = classify(text, scan, id) else { continue };
        if let Some(outer) = blocks.last_mut() {
            let outer_span = &scan.objects[outer.object].span;
            if object.span.start < outer_span.end {
                if !matches!(outer.payload, Payload::Refused(_)) {
                    outer.payload = Payload::Refused(Refusal::new(
                        Reason::Undecodable,
                        0,
                        None,
                        "the block holds another media block; which one a client reads is not defined",
                    ));
                }
                continue;
            }
        }
        blocks.push(block);
    }
    blocks
}

fn refused(message: impl Into<String>) -> Payload {
    Payload::Refused(Refusal::new(Reason::Undecodable, 0, None, message))
}

/// The strings a member holds: its value, decoded (`None` when it is not a string).
fn string_member(text: &str, object: &Object, key: &str) -> Option<String> {
    let member = object.member(key)?;
    matches!(member.value, Value::String).then(|| string_at(text, &member.span)).flatten()
}

fn object_member(object: &Object, key: &str) -> Option<usize> {
    match object.member(key)?.value {
        Value::Object(id) => Some(id),
        _ => None,
    }
}

fn classify(text: &str, scan: &Scan, id: usize) -> Option<Block> {
    let object = &scan.objects[id];
    // Every `type` the object gives (it may repeat it): media if any of them is.
    let types: Vec<String> = object
        .members
        .iter()
        .filter(|m| m.key == "type" && matches!(m.value, Value::String))
        .filter_map(|m| string_at(text, &m.span))
        .collect();
    let block_type = types.iter().find(|t| is_media_type(t))?.clone();
    let mut block = Block {
        object: id,
        block_type: block_type.clone(),
        mime: None,
        payload: refused(""),
        mime_at: None,
        source_type_at: None,
    };
    if let Err(payload) = unrepeated(scan, id, "block") {
        block.payload = payload;
        return Some(block);
    }
    match block_type.to_ascii_lowercase().as_str() {
        "image" | "document" | "audio" => inline_or_source(text, scan, id, &mut block)?,
        "resource" => {
            let holder = object_member(object, "resource")?;
            let resource = &scan.objects[holder];
            resource.member("blob")?;
            if let Err(payload) = unrepeated(scan, holder, "block's `resource`") {
                block.payload = payload;
                return Some(block);
            }
            block.mime = string_member(text, resource, "mimeType");
            block.mime_at = Some((holder, "mimeType"));
            block.payload = Payload::Base64 { object: holder, key: "blob" };
        }
        "image_url" | "input_image" => {
            // Chat: {"image_url": {"url": …}}; Responses: {"image_url": "…"} or {"file_id": …}.
            let (holder, key) = match object.member("image_url").map(|m| &m.value) {
                Some(Value::Object(holder)) => (*holder, "url"),
                Some(Value::String) => (id, "image_url"),
                _ if object.member("file_id").is_some() => return None,
                _ => {
                    block.payload = refused("the block has no image URL");
                    return Some(block);
                }
            };
            if let Err(payload) = unrepeated(scan, holder, "block's `image_url`") {
                block.payload = payload;
                return Some(block);
            }
            media_url(text, scan, holder, key, &mut block);
        }
        "file" => {
            let holder = object_member(object, "file")?;
            scan.objects[holder].member("file_data")?;
            if let Err(payload) = unrepeated(scan, holder, "block's `file`") {
                block.payload = payload;
                return Some(block);
            }
            file_data(text, scan, holder, &mut block);
        }
        "input_file" => {
            object.member("file_data")?;
            file_data(text, scan, id, &mut block);
        }
        "input_audio" => {
            block.mime = Some("audio".into());
            block.payload = Payload::Refused(Refusal::new(
                Reason::MimeUnsupported,
                0,
                None,
                "audio is not an image or document type the gate accepts",
            ));
        }
        _ => return None,
    }
    Some(block)
}

/// An object the walk reads keys from must give each key once: every JSON parser in use reads
/// the last copy of a repeated key, so the gate cannot check one copy and pass the object. Any
/// repeated key refuses the block in its slot (its span is replaced whole, holder and all).
fn unrepeated(scan: &Scan, holder: usize, what: &str) -> Result<(), Payload> {
    match scan.objects[holder].repeated_keys.first() {
        Some(key) => {
            Err(refused(format!("the {what} repeats the key `{key}`; which value a client reads is not defined")))
        }
        None => Ok(()),
    }
}

fn is_media_type(t: &str) -> bool {
    matches!(
        t.to_ascii_lowercase().as_str(),
        "image"
            | "document"
            | "audio"
            | "resource"
            | "image_url"
            | "input_image"
            | "file"
            | "input_file"
            | "input_audio"
    )
}

/// MCP inline (`data` + `mimeType`) or Anthropic (`source`); `None` when the block carries no
/// bytes (a URL, a file id, plain text) and stands as it is.
fn inline_or_source(text: &str, scan: &Scan, id: usize, block: &mut Block) -> Option<()> {
    let object = &scan.objects[id];
    let source = object.member("source").map(|m| &m.value);
    let source_holder = match source {
        Some(Value::Object(holder)) => Some(*holder),
        _ => None,
    };
    let source_type =
        source_holder.and_then(|h| string_member(text, &scan.objects[h], "type")).map(|t| t.to_ascii_lowercase());
    let source_has_bytes = source_type.as_deref() == Some("base64");

    if object.member("data").is_some() {
        // MCP clients ignore `source` and send `data` with its claimed type.
        if source_has_bytes {
            block.payload = refused("the block carries bytes both in `data` and in `source`");
            return Some(());
        }
        block.mime = string_member(text, object, "mimeType");
        block.mime_at = Some((id, "mimeType"));
        block.payload = Payload::Base64 { object: id, key: "data" };
        return Some(());
    }
    let Some(holder) = source_holder else {
        block.payload = match source {
            None => refused("the block has no base64 string to decode"),
            Some(_) => refused("the block's `source` is not an object the gate can check"),
        };
        return Some(());
    };
    let source_object = &scan.objects[holder];
    if let Err(payload) = unrepeated(scan, holder, "block's `source`") {
        block.payload = payload;
        return Some(());
    }
    match source_type.as_deref() {
        Some("base64") => {
            block.mime = string_member(text, source_object, "media_type");
            block.mime_at = Some((holder, "media_type"));
            if string_member(text, source_object, "type").as_deref() != Some("base64") {
                block.source_type_at = Some(holder);
            }
            block.payload = Payload::Base64 { object: holder, key: "data" };
        }
        // A URL: fetched by the provider, unless it is a data: URL (then the bytes are here).
        Some("url") => media_url(text, scan, holder, "url", block),
        // Bytes the provider already holds, or text: nothing here to check.
        Some("file" | "text" | "content") => return None,
        Some(other) => {
            block.payload = refused(format!("the block's source type `{other}` carries nothing the gate can check"))
        }
        None => block.payload = refused("the block's source names no type"),
    }
    Some(())
}

/// The URL in member `key` of object `holder`, read as [`url::classify`] reads it: a data URL is
/// judged, an http(s) URL stands (counted as an image the request carries), anything else is
/// refused.
fn media_url(text: &str, scan: &Scan, holder: usize, key: &'static str, block: &mut Block) {
    let Some(url) = string_member(text, &scan.objects[holder], key) else {
        block.payload = refused(format!("the block's `{key}` is not a string"));
        return;
    };
    match url::classify(&url) {
        MediaUrl::Fetched => block.payload = Payload::Fetched,
        MediaUrl::Data { mime, .. } => {
            block.mime = Some(mime);
            block.payload = Payload::DataUrl { object: holder, key };
        }
        MediaUrl::Refused(why) => block.payload = refused(why),
    }
}

/// OpenAI's `file_data`: a data URL, or base64 without the `data:` prefix. The latter names no
/// type; it is judged as the one document type the gate admits (the bytes must be a PDF).
fn file_data(text: &str, scan: &Scan, holder: usize, block: &mut Block) {
    let Some(data) = string_member(text, &scan.objects[holder], "file_data") else {
        block.payload = refused("the block's `file_data` is not a string");
        return;
    };
    if url::is_url(&data) {
        media_url(text, scan, holder, "file_data", block);
        if matches!(block.payload, Payload::Fetched) {
            block.payload =
                refused("the block's `file_data` is a URL; it takes the file's bytes (base64 or a data: URL)");
        }
    } else {
        block.mime = Some(PDF_MIME.into());
        block.payload = Payload::Base64 { object: holder, key: "file_data" };
    }
}

/// The base64 text a payload holds.
pub fn payload_text(text: &str, scan: &Scan, payload: &Payload) -> Option<String> {
    match payload {
        Payload::Base64 { object, key } => string_member(text, &scan.objects[*object], key),
        Payload::DataUrl { object, key } => match url::classify(&string_member(text, &scan.objects[*object], key)?) {
            MediaUrl::Data { base64, .. } => Some(base64),
            _ => None,
        },
        Payload::Fetched | Payload::Refused(_) => None,
    }
}

/// The spans an admitted block rewrites, and their new JSON values.
pub fn rebuilt(scan: &Scan, block: &Block, admitted: &Admitted) -> Vec<(Range<usize>, String)> {
    let quoted = |s: &str| Json::String(s.to_string()).to_string();
    // `judge` hands over blocks that own their bytes (`Admitted::owning`): no input is needed.
    let data = admitted.base64(&[]);
    let at = |object: usize, key: &str| scan.objects[object].member(key).map(|m| m.span.clone());
    let mut edits = Vec::new();
    match &block.payload {
        Payload::Base64 { object, key } => edits.extend(at(*object, key).map(|s| (s, quoted(&data)))),
        Payload::DataUrl { object, key } => {
            let url = format!("data:{};base64,{data}", admitted.mime);
            edits.extend(at(*object, key).map(|s| (s, quoted(&url))));
        }
        Payload::Fetched | Payload::Refused(_) => {}
    }
    if let Some((object, key)) = block.mime_at {
        edits.extend(at(object, key).map(|s| (s, quoted(admitted.mime))));
    }
    if let Some(object) = block.source_type_at {
        edits.extend(at(object, "type").map(|s| (s, quoted("base64"))));
    }
    edits
}
