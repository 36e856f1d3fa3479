//! The tool-result seat: every media block of a tool's result, wherever it sits, is admitted —
//! rebuilt from the bytes it checked — or replaced in its slot by a text block that names the
//! tool, the refusal and the size. Never the bytes, never empty, never silently nothing.
//!
//! Fail closed: a result the seat cannot read (not JSON, nested too deep, too large) is refused
//! whole; a block whose shape is ambiguous (repeated keys, bytes in two places, a source the gate
//! cannot check) is refused in its slot. The result as a whole has a budget (base64 carried,
//! pixels decoded) that ends in refusals, not in a trap. Everything that is not a media block is
//! kept byte for byte: the output is the input with only the blocks' spans replaced.

pub mod scan;
mod shape;

use std::ops::Range;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use crate::document::admit_document;
use crate::image_gate::{Budget, admit_image_within};
use crate::limits::{TOOL_RESULT_BASE64_BUDGET, TOOL_RESULT_MAX_BYTES, TOOL_RESULT_PIXEL_BUDGET};
use crate::options::Options;
use crate::signature::{PDF_MIME, normalize_mime};
use crate::verdict::{Admitted, Reason, Refusal};
use scan::{Scan, scan};
use shape::{Block, Payload};

#[derive(Debug, PartialEq, Eq)]
pub struct RefusedBlock {
    /// Position of the block in the array that holds it (0 when no array holds it).
    pub index: u32,
    /// JSON Pointer (RFC 6901) of the block in the result; `""` when the whole result is refused.
    pub path: String,
    pub block_type: String,
    pub mime: Option<String>,
    pub reason: Reason,
    pub raw_bytes: u64,
    pub limit: Option<u64>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct ToolResultAdmission {
    /// `None`: no block claims a media type; the content stands exactly as it was given.
    pub content: Option<String>,
    pub refused: Vec<RefusedBlock>,
}

pub fn admit_tool_result(tool: &str, content_json: &str, options: &Options) -> ToolResultAdmission {
    let raw = content_json.len() as u64;
    if raw > TOOL_RESULT_MAX_BYTES {
        return refused_whole(
            tool,
            Refusal::new(
                Reason::RawTooLarge,
                raw,
                Some(TOOL_RESULT_MAX_BYTES),
                format!("{raw} bytes of JSON exceed the {TOOL_RESULT_MAX_BYTES} bytes the gate reads"),
            ),
        );
    }
    let readable = scan::with_lone_surrogates_mended(content_json);
    let scanned = match scan(&readable) {
        Ok(s) => s,
        Err(e) => {
            return refused_whole(
                tool,
                Refusal::new(
                    Reason::Undecodable,
                    raw,
                    None,
                    format!("the result is not JSON the gate can read: {}", e.0),
                ),
            );
        }
    };
    let blocks = shape::media_blocks(&readable, &scanned);
    if blocks.is_empty() {
        return ToolResultAdmission { content: None, refused: Vec::new() };
    }
    let mut seat = Seat {
        tool,
        text: &readable,
        scan: &scanned,
        options,
        budget: Budget { pixels: TOOL_RESULT_PIXEL_BUDGET },
        base64_left: TOOL_RESULT_BASE64_BUDGET,
        edits: Vec::new(),
        refused: Vec::new(),
    };
    for block in &blocks {
        seat.admit(block);
    }
    let Seat { mut edits, refused, .. } = seat;
    ToolResultAdmission { content: Some(apply(content_json, &mut edits)), refused }
}

/// The whole result replaced by one text block: what could not be read cannot be passed.
fn refused_whole(tool: &str, refusal: Refusal) -> ToolResultAdmission {
    let text = format!(
        "[mediagate] The result of tool \"{tool}\" was not passed to the model: {} — {} ({} bytes{}).",
        refusal.reason.as_str(),
        refusal.message,
        refusal.raw_bytes,
        limit_words(&refusal),
    );
    ToolResultAdmission {
        content: Some(json!([{"type": "text", "text": text}]).to_string()),
        refused: vec![RefusedBlock {
            index: 0,
            path: String::new(),
            block_type: "content".into(),
            mime: None,
            reason: refusal.reason,
            raw_bytes: refusal.raw_bytes,
            limit: refusal.limit,
        }],
    }
}

struct Seat<'a> {
    tool: &'a str,
    text: &'a str,
    scan: &'a Scan,
    options: &'a Options,
    budget: Budget,
    base64_left: u64,
    edits: Vec<(Range<usize>, String)>,
    refused: Vec<RefusedBlock>,
}

impl Seat<'_> {
    fn admit(&mut self, block: &Block) {
        let object = &self.scan.objects[block.object];
        let verdict = match &block.payload {
            Payload::Refused(refusal) => Err(refusal.clone()),
            payload => self.judge(block, payload),
        };
        match verdict {
            Ok(admitted) => {
                for (span, value) in shape::rebuilt(self.scan, block, &admitted) {
                    self.edits.push((span, value));
                }
            }
            Err(refusal) => {
                let placeholder = json!({
                    "type": block.placeholder_type(),
                    "text": placeholder_text(self.tool, &block.block_type, block.mime.as_deref(), &refusal),
                });
                self.edits.push((object.span.clone(), placeholder.to_string()));
                self.refused.push(RefusedBlock {
                    index: object.index,
                    path: object.pointer.clone(),
                    block_type: block.block_type.clone(),
                    mime: block.mime.clone(),
                    reason: refusal.reason,
                    raw_bytes: refusal.raw_bytes,
                    limit: refusal.limit,
                });
            }
        }
    }

    fn judge(&mut self, block: &Block, payload: &Payload) -> Result<Admitted, Refusal> {
        let data = shape::payload_text(self.text, self.scan, payload)
            .ok_or_else(|| Refusal::new(Reason::Undecodable, 0, None, "the block has no base64 string to decode"))?;
        let bytes = decode_base64(&data)
            .ok_or_else(|| Refusal::new(Reason::Undecodable, 0, None, "the block's data is not valid base64"))?;
        let raw = bytes.len() as u64;
        let Some(claimed) = block.mime.as_deref() else {
            return Err(Refusal::new(Reason::MimeUnsupported, raw, None, "the block names no media type"));
        };
        let admitted = if block.is_document() || normalize_mime(claimed) == PDF_MIME {
            admit_document(&bytes, claimed)?
        } else if block.is_audio() {
            return Err(Refusal::new(
                Reason::MimeUnsupported,
                raw,
                None,
                format!("{claimed} is not an image or document type the gate accepts"),
            ));
        } else {
            admit_image_within(&bytes, claimed, self.options, &mut self.budget)?
        };
        let carried = admitted.base64_len();
        if carried > self.base64_left {
            return Err(Refusal::new(
                Reason::Base64TooLarge,
                raw,
                Some(TOOL_RESULT_BASE64_BUDGET),
                format!(
                    "the admitted block ({carried} base64 bytes) would take this result past its budget of \
                     {TOOL_RESULT_BASE64_BUDGET} base64 bytes for all its media"
                ),
            ));
        }
        self.base64_left -= carried;
        Ok(admitted)
    }
}

/// Standard base64; line-wrapped base64 (MIME style) is accepted too.
fn decode_base64(data: &str) -> Option<Vec<u8>> {
    STANDARD.decode(data).ok().or_else(|| {
        let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        (compact.len() != data.len()).then(|| STANDARD.decode(compact).ok()).flatten()
    })
}

/// The input with each span replaced; spans nested in a replaced span are dropped with it.
fn apply(text: &str, edits: &mut [(Range<usize>, String)]) -> String {
    edits.sort_by_key(|(span, _)| (span.start, std::cmp::Reverse(span.end)));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (span, replacement) in edits.iter() {
        if span.start < at {
            continue; // inside a block already replaced whole
        }
        out.push_str(&text[at..span.start]);
        out.push_str(replacement);
        at = span.end;
    }
    out.push_str(&text[at..]);
    out
}

fn limit_words(refusal: &Refusal) -> String {
    match (refusal.reason, refusal.limit) {
        (_, None) => String::new(),
        (Reason::DimensionsTooLarge, Some(l)) => format!(", limit {l} px"),
        (_, Some(l)) => format!(", limit {l} bytes"),
    }
}

fn placeholder_text(tool: &str, block_type: &str, mime: Option<&str>, refusal: &Refusal) -> String {
    let what = match mime {
        Some(m) => format!("{block_type} ({m})"),
        None => block_type.to_string(),
    };
    format!(
        "[mediagate] The {what} returned by tool \"{tool}\" was not passed to the model: {} — {} ({} bytes{}).",
        refusal.reason.as_str(),
        refusal.message,
        refusal.raw_bytes,
        limit_words(refusal),
    )
}

#[cfg(test)]
mod tests;
