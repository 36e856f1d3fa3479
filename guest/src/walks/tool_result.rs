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
pub(crate) mod shape;
pub(crate) mod url;

use std::ops::Range;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use crate::gate::decode::Budget;
use crate::gate::document::admit_document;
use crate::image_admission::admit_image_within;
use crate::limits::{
    TOOL_RESULT_BASE64_BUDGET, TOOL_RESULT_MAX_BYTES, TOOL_RESULT_MAX_IMAGES, TOOL_RESULT_PIXEL_BUDGET,
};
use crate::options::Options;
use crate::repairs::repair_note;
use crate::signature::{PDF_MIME, normalize_mime, sniff};
use crate::verdict::{Admitted, ConversionMade, Reason, Refusal, Unit};
pub(crate) use scan::{Scan, scan};
pub(crate) use shape::{Block, Payload};

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
    /// The blocks converted from a type no provider takes (`Options::convert`), in document order.
    pub conversions: Vec<ConversionMade>,
}

/// The document a walk reads, ready to scan (lone surrogates mended); refused when it is over the
/// bytes the gate reads.
pub(super) fn readable(json: &str) -> Result<std::borrow::Cow<'_, str>, Refusal> {
    let raw = json.len() as u64;
    if raw > TOOL_RESULT_MAX_BYTES {
        return Err(Refusal::new(
            Reason::RawTooLarge,
            raw,
            Some(TOOL_RESULT_MAX_BYTES),
            format!("{raw} bytes of JSON exceed the {TOOL_RESULT_MAX_BYTES} bytes the gate reads"),
        ));
    }
    Ok(scan::with_lone_surrogates_mended(json))
}

pub fn admit_tool_result(tool: &str, content_json: &str, options: &Options) -> ToolResultAdmission {
    let raw = content_json.len() as u64;
    let readable = match readable(content_json) {
        Ok(text) => text,
        Err(refusal) => return refused_whole(tool, refusal),
    };
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
        return ToolResultAdmission { content: None, refused: Vec::new(), conversions: Vec::new() };
    }
    let mut rules = ToolRules { tool, base64_left: TOOL_RESULT_BASE64_BUDGET, images_seen: 0 };
    let (content, outcomes) = walk(content_json, &readable, &scanned, &blocks, options, &mut rules);
    let conversions =
        outcomes.iter().filter_map(|o| ConversionMade::of(&o.path, &o.verdict.as_ref().ok()?.0)).collect();
    let refused: Vec<RefusedBlock> = outcomes
        .into_iter()
        .filter_map(|o| match o.verdict {
            Err((refusal, _)) => Some(RefusedBlock {
                index: o.index,
                path: o.path,
                block_type: o.block_type,
                mime: o.mime,
                reason: refusal.reason,
                raw_bytes: refusal.raw_bytes,
                limit: refusal.limit,
            }),
            Ok(_) => None,
        })
        .collect();
    // Only URLs the provider fetches, none refused: the content stands exactly as it was given.
    let only_urls_stood = refused.is_empty() && blocks.iter().all(|b| matches!(b.payload, Payload::Fetched));
    let content = (!only_urls_stood).then_some(content);
    ToolResultAdmission { content, refused, conversions }
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
        conversions: Vec::new(),
    }
}

/// A refusal, and the name of the caller's rule that made it (none: the gate's own checks).
pub(crate) type Ruled = (Refusal, Option<&'static str>);

/// What a seat adds to the gate's checks of each block: budgets over the whole document and the
/// words of the placeholder. The tool-result seat and the request seat differ only here.
pub(crate) trait Rules {
    /// Before the block is judged; a refusal here ends it unjudged (a count past its budget).
    fn before(&mut self, _block: &Block) -> Result<(), Ruled> {
        Ok(())
    }
    /// After the gate admitted it; `size` is the block's JSON text length when written back.
    fn after(&mut self, block: &Block, admitted: &Admitted, size: usize) -> Result<(), Ruled>;
    /// A refused block was replaced by a placeholder of `size` bytes.
    fn replaced(&mut self, _size: usize) {}
    /// A block with no bytes to judge (a URL the provider fetches) stands as it is, `size` bytes.
    fn stood(&mut self, _size: usize) {}
    /// Where the blocks come from, in the words a placeholder or a note says it
    /// (`returned by tool "x"`, `in this request`).
    fn origin(&self) -> String;
}

struct ToolRules<'a> {
    tool: &'a str,
    base64_left: u64,
    images_seen: u32,
}

impl Rules for ToolRules<'_> {
    fn before(&mut self, block: &Block) -> Result<(), Ruled> {
        if block.counts_as_image() {
            if self.images_seen >= TOOL_RESULT_MAX_IMAGES {
                let refusal = Refusal::new(
                    Reason::RequestLimit,
                    0,
                    Some(TOOL_RESULT_MAX_IMAGES.into()),
                    format!(
                        "a tool result may carry at most {TOOL_RESULT_MAX_IMAGES} images (no provider takes more in \
                         the request that carries it); this is image {}",
                        self.images_seen + 1
                    ),
                );
                return Err((refusal.in_unit(Unit::Images), None));
            }
            self.images_seen += 1;
        }
        Ok(())
    }

    fn after(&mut self, _block: &Block, admitted: &Admitted, _size: usize) -> Result<(), Ruled> {
        let carried = admitted.base64_len();
        if carried > self.base64_left {
            return Err((
                Refusal::new(
                    Reason::Base64TooLarge,
                    admitted.original_size,
                    Some(TOOL_RESULT_BASE64_BUDGET),
                    format!(
                        "the admitted block ({carried} base64 bytes) would take this result past its budget of \
                         {TOOL_RESULT_BASE64_BUDGET} base64 bytes for all its media"
                    ),
                ),
                None,
            ));
        }
        self.base64_left -= carried;
        Ok(())
    }

    fn origin(&self) -> String {
        format!("returned by tool \"{}\"", self.tool)
    }
}

/// What became of one media block.
pub(crate) struct Outcome {
    pub index: u32,
    pub path: String,
    pub block_type: String,
    pub mime: Option<String>,
    /// Admitted, and whether its JSON text changed; or refused.
    pub verdict: Result<(Admitted, bool), Ruled>,
}

/// The one walk both seats share: each block judged in document order (the gate's checks, then
/// the seat's rules), admitted blocks written back from the bytes that were checked, refused ones
/// replaced in their slot. Returns the input with only those spans replaced.
pub(crate) fn walk(
    original: &str,
    readable: &str,
    scan: &Scan,
    blocks: &[Block],
    options: &Options,
    rules: &mut dyn Rules,
) -> (String, Vec<Outcome>) {
    let mut budget = Budget { pixels: TOOL_RESULT_PIXEL_BUDGET };
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut outcomes = Vec::with_capacity(blocks.len());
    for block in blocks {
        let object = &scan.objects[block.object];
        let judged = match &block.payload {
            Payload::Refused(refusal) => Err((refusal.clone(), None)),
            // A URL the provider fetches: counted, and it stands unless a count refuses it.
            Payload::Fetched => match rules.before(block) {
                Ok(()) => {
                    rules.stood(object.span.len());
                    continue;
                }
                Err(ruled) => Err(ruled),
            },
            payload => rules.before(block).and_then(|()| {
                judge(readable, scan, block, payload, options, &mut budget).map_err(|refusal| (refusal, None))
            }),
        };
        let verdict = judged.and_then(|admitted| {
            let rebuilt = shape::rebuilt(scan, block, &admitted);
            // A repaired image is not what its author made: the model is told, beside it.
            let note = admitted.repaired().and_then(|words| {
                block.note_beside(object.in_array, &repair_note(&block_subject(&rules.origin(), block), &words))
            });
            let grown: isize = rebuilt.iter().map(|(span, value)| value.len() as isize - span.len() as isize).sum();
            let grown = grown + note.as_ref().map_or(0, |n| n.len() as isize);
            rules.after(block, &admitted, object.span.len().saturating_add_signed(grown))?;
            let changed = rebuilt.iter().any(|(span, value)| readable[span.clone()] != **value);
            edits.extend(rebuilt);
            edits.extend(note.map(|note| (object.span.end..object.span.end, note)));
            Ok((admitted, changed))
        });
        if let Err((refusal, _)) = &verdict {
            let placeholder = block.placeholder(&placeholder_text(&rules.origin(), block, refusal));
            rules.replaced(placeholder.len());
            edits.push((object.span.clone(), placeholder));
        }
        outcomes.push(Outcome {
            index: object.index,
            path: object.pointer.clone(),
            block_type: block.block_type.clone(),
            mime: block.mime.clone(),
            verdict,
        });
    }
    (apply(original, &mut edits), outcomes)
}

fn judge(
    text: &str,
    scan: &Scan,
    block: &Block,
    payload: &Payload,
    options: &Options,
    budget: &mut Budget,
) -> Result<Admitted, Refusal> {
    let data = shape::payload_text(text, scan, payload)
        .ok_or_else(|| Refusal::new(Reason::Undecodable, 0, None, "the block has no base64 string to decode"))?;
    let bytes = decode_base64(&data)
        .ok_or_else(|| Refusal::new(Reason::Undecodable, 0, None, "the block's data is not valid base64"))?;
    let raw = bytes.len() as u64;
    let Some(labelled) = block.mime.as_deref() else {
        return Err(Refusal::new(Reason::MimeUnsupported, raw, None, "the block names no media type"));
    };
    let sniffed = sniff(&bytes);
    let claimed = crate::judged_type::block_type(labelled, &sniffed, options.convert);
    let admitted = if block.is_document() || normalize_mime(claimed) == PDF_MIME {
        admit_document(&bytes, claimed)
    } else if block.is_audio() {
        Err(Refusal::new(
            Reason::MimeUnsupported,
            raw,
            None,
            format!("{claimed} is not an image or document type the gate accepts"),
        ))
    } else {
        admit_image_within(&bytes, claimed, options, budget)
    };
    // The block is written back from the bytes that were checked: it holds them.
    admitted.map(|a| a.owning(bytes))
}

/// Standard base64; line-wrapped base64 (MIME style) is accepted too.
fn decode_base64(data: &str) -> Option<Vec<u8>> {
    STANDARD.decode(data).ok().or_else(|| {
        let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        (compact.len() != data.len()).then(|| STANDARD.decode(compact).ok()).flatten()
    })
}

/// The input with each span replaced; spans nested in a replaced span are dropped with it.
pub(crate) fn apply(text: &str, edits: &mut [(Range<usize>, String)]) -> String {
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

/// `, limit N <unit>`: pixels for dimensions, px per side for a side, images for a count, bytes
/// (or base64 bytes) for sizes.
pub(crate) fn limit_words(refusal: &Refusal) -> String {
    match refusal.limit {
        None => String::new(),
        Some(l) => format!(", limit {}", refusal.unit.words(l)),
    }
}

/// The block as a placeholder or a note names it: `The image (image/png) returned by tool "x"`.
fn block_subject(origin: &str, block: &Block) -> String {
    match &block.mime {
        Some(m) => format!("The {} ({m}) {origin}", block.block_type),
        None => format!("The {} {origin}", block.block_type),
    }
}

pub(crate) fn placeholder_text(origin: &str, block: &Block, refusal: &Refusal) -> String {
    format!(
        "[mediagate] {} was not passed to the model: {} — {} ({} bytes{}).",
        block_subject(origin, block),
        refusal.reason.as_str(),
        refusal.message,
        refusal.raw_bytes,
        limit_words(refusal),
    )
}

#[cfg(test)]
mod tests;
