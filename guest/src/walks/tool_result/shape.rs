//! Which objects are media blocks, where each keeps its claimed type and its bytes, and how an
//! admitted block is written back — for every block shape agents see:
//!
//! | shape | bytes at |
//! |---|---|
//! | MCP `{"type":"image"\|"audio","data","mimeType"}` | `data` |
//! | MCP `{"type":"resource","resource":{"blob","mimeType"}}` | `resource.blob` |
//! | Anthropic `{"type":"image"\|"document","source":{"type":"base64","media_type","data"}}` | `source.data` |
//! | OpenAI Chat `{"type":"image_url","image_url":{"url":"data:…"}}`, `{"type":"file","file":{"file_data"}}` | a data URL |
//! | OpenAI Responses `{"type":"input_image","image_url":"data:…"}`, `{"type":"input_file","file_data"\|"file_url"}` | a data URL |
//! | OpenAI Responses computer use `{"type":"computer_screenshot","image_url":"data:…"}` | a data URL |
//! | Gemini part `{"inline_data"\|"inlineData":{"mime_type"\|"mimeType","data"}}` | `inline_data.data` |
//! | any other string but a `text` member: a `data:` URL (not text or audio), or base64 that starts with an image or PDF signature | the string |
//!
//! A string of the last row inside a block of another row is that block's payload, or the block
//! carries media in two places and is refused whole. One standing alone is judged where it sits:
//! admitted, it is written back in its own form (a data URL, or bare base64); refused, it becomes
//! a string of the refusal's words (no shape around it is known to hold a text block).
//!
//! Types are matched without regard to case (`"Image"`, `"Base64"`): a lenient client may accept
//! them, so the gate must check them. Blocks that carry no bytes (a URL, a file id, a text
//! resource) stand as they are.

use std::ops::Range;

use serde_json::{Value as Json, json};

use super::scan::{Loose, Object, Scan, Value, string_at};
use super::url::{self, MediaUrl};
use crate::signature::{PDF_MIME, normalize_mime};
use crate::verdict::{Admitted, Reason, Refusal};

pub enum Payload {
    /// A base64 string member of object `object`.
    Base64 { object: usize, key: &'static str },
    /// A `data:` URL string member of object `object`.
    DataUrl { object: usize, key: &'static str },
    /// A string that carries media by itself ([`Loose`]): object `object` is the string.
    Loose { object: usize, data_url: bool },
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
    /// What replaces the block when it is refused.
    placeholder: Placeholder,
}

/// The form of the text that replaces a refused block, in the vocabulary of the shape it had.
#[derive(Clone, Copy)]
enum Placeholder {
    /// A block `{"type": …, "text": …}` of this type.
    Typed(&'static str),
    /// A Gemini part `{"text": …}`.
    Part,
    /// A JSON string: the words alone.
    String,
}

impl Block {
    /// Whether the block's shape says it is typed by its bytes' claim alone (a Gemini part, a
    /// loose string) rather than by its block type.
    fn typed_by_mime(&self) -> bool {
        !matches!(self.placeholder, Placeholder::Typed(_))
    }

    pub fn is_document(&self) -> bool {
        matches!(self.block_type.to_ascii_lowercase().as_str(), "document" | "file" | "input_file")
            || (self.typed_by_mime() && self.mime.as_deref().is_some_and(|m| normalize_mime(m) == PDF_MIME))
    }

    pub fn is_audio(&self) -> bool {
        matches!(self.block_type.to_ascii_lowercase().as_str(), "audio" | "input_audio")
            || (self.typed_by_mime() && self.mime.as_deref().is_some_and(|m| normalize_mime(m).starts_with("audio/")))
    }

    /// An image a provider counts (one per request rule, the tool-result cap): an image block the
    /// gate can judge, or one whose URL the provider fetches.
    pub fn counts_as_image(&self) -> bool {
        !self.is_document() && !self.is_audio() && !matches!(self.payload, Payload::Refused(_))
    }

    /// The JSON text that, inserted after the block, sets a text carrying `words` beside it: a
    /// text block of its API (or a Gemini text part) after it in the array that holds it. `None`
    /// where no text can stand beside it: outside an array, or a media string alone, whose array
    /// (Ollama's `images`, for one) takes nothing but media.
    pub fn note_beside(&self, in_array: bool, words: &str) -> Option<String> {
        let beside = in_array && !matches!(self.placeholder, Placeholder::String);
        beside.then(|| format!(",{}", self.placeholder(words)))
    }

    /// The JSON text that replaces the block when it is refused, carrying `words`.
    pub fn placeholder(&self, words: &str) -> String {
        match self.placeholder {
            Placeholder::Typed(kind) => json!({"type": kind, "text": words}).to_string(),
            Placeholder::Part => json!({"text": words}).to_string(),
            Placeholder::String => Json::String(words.to_string()).to_string(),
        }
    }
}

/// The text block type of the API whose block type this is (Responses types start `input_`, and
/// its computer-use screenshot sits where its input items do).
fn text_type_beside(block_type: &str) -> &'static str {
    let t = block_type.to_ascii_lowercase();
    if t.starts_with("input_") || t == "computer_screenshot" { "input_text" } else { "text" }
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
                // The string the block's own payload is: judged with it.
                if object.loose.is_some() && payload_span(scan, &outer.payload) == Some(&object.span) {
                    continue;
                }
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

/// The span of the string a payload reads its bytes from.
fn payload_span<'s>(scan: &'s Scan, payload: &Payload) -> Option<&'s Range<usize>> {
    match payload {
        Payload::Base64 { object, key } | Payload::DataUrl { object, key } => {
            scan.objects[*object].member(key).map(|m| &m.span)
        }
        Payload::Loose { object, .. } => Some(&scan.objects[*object].span),
        Payload::Fetched | Payload::Refused(_) => None,
    }
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
    if let Some(loose) = object.loose {
        return Some(loose_block(text, id, &object.span, loose));
    }
    // Every `type` the object gives (it may repeat it): media if any of them is.
    let types: Vec<String> = object
        .members
        .iter()
        .filter(|m| m.key == "type" && matches!(m.value, Value::String))
        .filter_map(|m| string_at(text, &m.span))
        .collect();
    let Some(block_type) = types.iter().find(|t| is_media_type(t)).cloned() else {
        return inline_part(text, scan, id);
    };
    let mut block = Block {
        object: id,
        block_type: block_type.clone(),
        mime: None,
        payload: refused(""),
        mime_at: None,
        source_type_at: None,
        placeholder: Placeholder::Typed(text_type_beside(&block_type)),
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
        "image_url" | "input_image" | "computer_screenshot" => {
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
        "input_file" => match (object.member("file_data"), object.member("file_url")) {
            (Some(_), Some(_)) => {
                block.payload = refused("the block carries a file both in `file_data` and in `file_url`")
            }
            (Some(_), None) => file_data(text, scan, id, &mut block),
            // A URL the provider fetches, or the bytes themselves as a data: URL.
            (None, Some(_)) => media_url(text, scan, id, "file_url", &mut block),
            (None, None) => return None,
        },
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
            | "computer_screenshot"
    )
}

/// A Gemini part with inline bytes (`inline_data`, or `inlineData` in the JSON mapping's
/// spelling): its `data` judged under its `mime_type`; refused, the part becomes a text part.
fn inline_part(text: &str, scan: &Scan, id: usize) -> Option<Block> {
    let object = &scan.objects[id];
    let key = ["inline_data", "inlineData"].into_iter().find(|k| object.member(k).is_some())?;
    let mut block = Block {
        object: id,
        block_type: key.to_string(),
        mime: None,
        payload: refused(""),
        mime_at: None,
        source_type_at: None,
        placeholder: Placeholder::Part,
    };
    let holder = match object.member(key).map(|m| &m.value) {
        Some(Value::Object(holder)) => *holder,
        _ => {
            block.payload = refused(format!("the part's `{key}` is not an object the gate can check"));
            return Some(block);
        }
    };
    if let Err(payload) = unrepeated(scan, id, "part").and_then(|()| unrepeated(scan, holder, "part's inline data")) {
        block.payload = payload;
        return Some(block);
    }
    let inline = &scan.objects[holder];
    let mime_key = match (inline.member("mime_type"), inline.member("mimeType")) {
        (Some(_), Some(_)) => {
            block.payload = refused("the part's inline data names its type both as `mime_type` and as `mimeType`");
            return Some(block);
        }
        (_, Some(_)) => "mimeType",
        _ => "mime_type",
    };
    block.mime = string_member(text, inline, mime_key);
    block.mime_at = Some((holder, mime_key));
    block.payload = match inline.member("data") {
        Some(_) => Payload::Base64 { object: holder, key: "data" },
        None => refused("the part's inline data has no `data`"),
    };
    Some(block)
}

/// A string that carries media by itself: a data URL judged under the type it declares, bare
/// base64 under the type its signature names.
fn loose_block(text: &str, id: usize, span: &Range<usize>, loose: Loose) -> Block {
    let mut block = Block {
        object: id,
        block_type: String::new(),
        mime: None,
        payload: Payload::Loose { object: id, data_url: false },
        mime_at: None,
        source_type_at: None,
        placeholder: Placeholder::String,
    };
    match loose {
        Loose::Base64 { mime } => {
            block.block_type = "base64".into();
            block.mime = Some(mime.into());
        }
        Loose::DataUrl => {
            block.block_type = "data_url".into();
            match string_at(text, span).map(|url| url::classify(&url)) {
                Some(MediaUrl::Data { mime, .. }) => {
                    block.mime = Some(mime);
                    block.payload = Payload::Loose { object: id, data_url: true };
                }
                Some(MediaUrl::Refused(why)) => block.payload = refused(why),
                Some(MediaUrl::Fetched) | None => {
                    block.payload = refused("the string is not a data: URL the gate can read")
                }
            }
        }
    }
    block
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
        Payload::Loose { object, data_url } => {
            let string = string_at(text, &scan.objects[*object].span)?;
            if !data_url {
                return Some(string);
            }
            match url::classify(&string) {
                MediaUrl::Data { base64, .. } => Some(base64),
                _ => None,
            }
        }
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
        Payload::Loose { object, data_url } => {
            let value = if *data_url { format!("data:{};base64,{data}", admitted.mime) } else { data };
            edits.push((scan.objects[*object].span.clone(), quoted(&value)));
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
