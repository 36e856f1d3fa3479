//! One pass over a tool result's JSON text that keeps what the seat needs and nothing else: every
//! object that has a key a media block uses, with the byte spans of those members, the keys it
//! repeats, and where it sits; and every string that carries media by itself (a `data:` URL, or
//! base64 whose bytes start with an image or PDF signature), wherever it sits but in a `text`
//! member, so no shape the walk does not know carries media past it. Values are not copied; a block's fields are decoded
//! from their spans when the block is judged, and the gated result is the input with only those
//! spans replaced.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ops::Range;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use jiter::{Jiter, Peek};

use super::url;
use crate::convert::SVG_MIME;
use crate::limits::TOOL_RESULT_MAX_DEPTH;
use crate::signature::{is_svg, strict_signature};

/// Keys that say where a block keeps its type and its bytes, in every shape the seat reads.
const MEDIA_KEYS: [&str; 17] = [
    "type",
    "file_url",
    "inline_data",
    "inlineData",
    "mime_type",
    "data",
    "mimeType",
    "source",
    "media_type",
    "resource",
    "blob",
    "image_url",
    "url",
    "file",
    "file_data",
    "file_id",
    "input_audio",
];

#[derive(Debug)]
pub enum Value {
    String,
    /// An object the scan kept (it has media keys): its index in [`Scan::objects`].
    Object(usize),
    Other,
}

#[derive(Debug)]
pub struct Member {
    pub key: &'static str,
    pub span: Range<usize>,
    pub value: Value,
}

#[derive(Debug)]
pub struct Object {
    pub span: Range<usize>,
    /// JSON Pointer (RFC 6901) of the object in the document.
    pub pointer: String,
    /// Its position in the array that holds it; 0 elsewhere.
    pub index: u32,
    /// An array holds it (a note can be set beside it there).
    pub in_array: bool,
    /// Its members with media keys, in document order (a repeated key appears each time).
    pub members: Vec<Member>,
    /// Keys (any key) that appear more than once.
    pub repeated_keys: Vec<String>,
    /// Set when this is not an object but a string that carries media ([`Loose`]); its span is
    /// the string literal's, and it has no members.
    pub loose: Option<Loose>,
}

/// A string that carries media by itself, wherever it sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loose {
    /// A `data:` URL of any type but text and audio (neither is media the gate judges).
    DataUrl,
    /// Base64 whose first bytes are the signature of `mime` (an image or PDF type the gate
    /// judges or converts): text is never taken for it.
    Base64 { mime: &'static str },
}

/// Bytes of a string literal read to tell whether it carries media: a data URL's scheme and type,
/// or enough base64 for every signature [`loose_media`] checks (an SVG's prologue included).
const LOOSE_PREFIX: usize = 256;

/// What a string literal (`literal`, quotes included) carries, read from its first bytes.
pub fn loose_media(literal: &str) -> Option<Loose> {
    let inner = literal.get(1..literal.len().saturating_sub(1))?;
    let mut cut = inner.len().min(LOOSE_PREFIX);
    while !inner.is_char_boundary(cut) {
        cut -= 1;
    }
    let decoded;
    let head = if let Some(escape) = inner[..cut].find('\\') {
        // Escapes: read the string as a client would (rare in the strings that carry media),
        // unless what comes before the first one already rules both forms out (prose, code).
        let before = &inner[..escape];
        let trimmed = before.trim_start_matches(' ').as_bytes();
        let may_be_data_url = b"data:"[..trimmed.len().min(5)].eq_ignore_ascii_case(&trimmed[..trimmed.len().min(5)]);
        let may_be_base64 = before.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b' '));
        if !may_be_data_url && !may_be_base64 {
            return None;
        }
        decoded = string_at(literal, &(0..literal.len()))?;
        let mut cut = decoded.len().min(LOOSE_PREFIX);
        while !decoded.is_char_boundary(cut) {
            cut -= 1;
        }
        &decoded[..cut]
    } else {
        &inner[..cut]
    };
    if url::is_data_url(head) {
        let declared = url::declared_type(head).unwrap_or_default();
        let not_media = declared.starts_with("text/") || declared.starts_with("audio/");
        return (!not_media).then_some(Loose::DataUrl);
    }
    let compact: Vec<u8> = head.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let whole = compact.len() / 4 * 4;
    if whole < 8 {
        return None;
    }
    let bytes = STANDARD.decode(&compact[..whole]).ok()?;
    strict_signature(&bytes).or_else(|| is_svg(&bytes).then_some(SVG_MIME)).map(|mime| Loose::Base64 { mime })
}

impl Object {
    pub fn member(&self, key: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.key == key)
    }
}

#[derive(Debug, Default)]
pub struct Scan {
    /// Objects with media keys, each after its children ([`Value::Object`] indexes this list).
    pub objects: Vec<Object>,
}

impl Scan {
    /// Indexes into [`Scan::objects`], in document order of the objects' opening braces.
    pub fn in_document_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.objects.len()).collect();
        order.sort_by_key(|&i| self.objects[i].span.start);
        order
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct ScanError(pub String);

pub fn scan(text: &str) -> Result<Scan, ScanError> {
    let mut walker = Walker { jiter: Jiter::new(text.as_bytes()), text, scan: Scan::default(), path: Vec::new() };
    let peek = walker.jiter.peek().map_err(|e| walker.error(e))?;
    walker.value(peek, 0, None)?;
    walker.jiter.finish().map_err(|e| walker.error(e))?;
    Ok(walker.scan)
}

/// The text with every lone surrogate escape (`\ud800` not followed by its pair; JSON's grammar
/// allows it, the parser does not) written as `\ufffd`: the same length, so every span of the
/// result is a span of the input.
pub fn with_lone_surrogates_mended(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let surrogate_at = |i: usize| -> Option<u16> {
        let hex = bytes.get(i + 2..i + 6)?;
        let value = u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
        (bytes[i + 1] == b'u' && (0xD800..=0xDFFF).contains(&value)).then_some(value)
    };
    let mut mended: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        // An escape: `\u` with a surrogate, or any other (skipped whole, so `\\u` is no escape).
        match surrogate_at(i) {
            Some(high @ 0xD800..=0xDBFF) if surrogate_at(i + 6).is_some_and(|low| low >= 0xDC00) => {
                let _ = high;
                i += 12;
            }
            Some(_) => {
                mended.get_or_insert_with(|| bytes.to_vec())[i + 2..i + 6].copy_from_slice(b"fffd");
                i += 6;
            }
            None => i += 2,
        }
    }
    match mended {
        // Only ASCII hex digits were replaced by ASCII: still UTF-8.
        Some(bytes) => Cow::Owned(String::from_utf8(bytes).expect("ASCII replaced by ASCII")),
        None => Cow::Borrowed(text),
    }
}

/// The text of a JSON string literal at `span`, unescaped.
pub fn string_at(text: &str, span: &Range<usize>) -> Option<String> {
    Jiter::new(&text.as_bytes()[span.clone()]).next_str().ok().map(str::to_string)
}

struct Walker<'j> {
    jiter: Jiter<'j>,
    text: &'j str,
    scan: Scan,
    /// Pointer segments (escaped) from the root to the current value.
    path: Vec<String>,
}

impl Walker<'_> {
    fn error(&self, e: jiter::JiterError) -> ScanError {
        let at = self.jiter.error_position(e.index);
        ScanError(format!("{} at line {} column {}", e.error_type, at.line, at.column))
    }

    /// `slot`: the value's position in the array that holds it, if an array does.
    fn value(&mut self, peek: Peek, depth: usize, slot: Option<u32>) -> Result<(Range<usize>, Value), ScanError> {
        if depth > TOOL_RESULT_MAX_DEPTH {
            return Err(ScanError(format!("it nests deeper than {TOOL_RESULT_MAX_DEPTH} levels")));
        }
        let start = self.jiter.current_index();
        let value = match peek {
            Peek::Object => self.object(start, depth, slot)?,
            Peek::Array => {
                let mut next = self.jiter.known_array().map_err(|e| self.error(e))?;
                let mut i = 0u32;
                while let Some(peek) = next {
                    self.path.push(i.to_string());
                    self.value(peek, depth + 1, Some(i))?;
                    self.path.pop();
                    i = i.saturating_add(1);
                    next = self.jiter.array_step().map_err(|e| self.error(e))?;
                }
                Value::Other
            }
            Peek::String => {
                self.jiter.known_skip(peek).map_err(|e| self.error(e))?;
                let span = start..self.jiter.current_index();
                // A `text` member is read as text by every API (never fetched or decoded).
                let text_member = self.path.last().is_some_and(|key| key == "text");
                if let Some(loose) = (!text_member).then(|| loose_media(&self.text[span.clone()])).flatten() {
                    self.scan.objects.push(Object {
                        span,
                        pointer: pointer(&self.path),
                        index: slot.unwrap_or(0),
                        in_array: slot.is_some(),
                        members: Vec::new(),
                        repeated_keys: Vec::new(),
                        loose: Some(loose),
                    });
                }
                Value::String
            }
            _ => {
                self.jiter.known_skip(peek).map_err(|e| self.error(e))?;
                Value::Other
            }
        };
        Ok((start..self.jiter.current_index(), value))
    }

    fn object(&mut self, start: usize, depth: usize, slot: Option<u32>) -> Result<Value, ScanError> {
        let mut members = Vec::new();
        let mut seen = BTreeSet::new();
        let mut repeated = Vec::new();
        let first = self.jiter.known_object().map(|k| k.map(str::to_string));
        let mut key = first.map_err(|e| self.error(e))?;
        while let Some(k) = key {
            let peek = self.jiter.peek().map_err(|e| self.error(e))?;
            self.path.push(k.replace('~', "~0").replace('/', "~1"));
            let (span, value) = self.value(peek, depth + 1, None)?;
            self.path.pop();
            if let Some(media_key) = MEDIA_KEYS.iter().find(|m| **m == k) {
                members.push(Member { key: media_key, span, value });
            }
            if !seen.insert(k.clone()) && !repeated.contains(&k) {
                repeated.push(k);
            }
            let next = self.jiter.next_key().map(|k| k.map(str::to_string));
            key = next.map_err(|e| self.error(e))?;
        }
        let end = self.jiter.current_index();
        if members.is_empty() {
            return Ok(Value::Other); // nothing a block would use
        }
        self.scan.objects.push(Object {
            span: start..end,
            pointer: pointer(&self.path),
            index: slot.unwrap_or(0),
            in_array: slot.is_some(),
            members,
            repeated_keys: repeated,
            loose: None,
        });
        Ok(Value::Object(self.scan.objects.len() - 1))
    }
}

fn pointer(path: &[String]) -> String {
    path.iter().map(|segment| format!("/{segment}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_pointers_and_repeated_keys() {
        let text =
            r#"{"content": [ {"type": "text", "text": "a/b"}, {"type":"image","data":"AAAA","data":"BBBB","x~y":1} ]}"#;
        let scan = scan(text).unwrap();
        assert_eq!(scan.objects.len(), 2);
        let image = &scan.objects[scan.in_document_order()[1]];
        assert_eq!(image.pointer, "/content/1");
        assert_eq!(image.index, 1);
        assert_eq!(&text[image.span.clone()], r#"{"type":"image","data":"AAAA","data":"BBBB","x~y":1}"#);
        assert_eq!(image.repeated_keys, vec!["data".to_string()]);
        assert_eq!(string_at(text, &image.member("type").unwrap().span).as_deref(), Some("image"));
        assert_eq!(image.members.iter().filter(|m| m.key == "data").count(), 2);
    }

    #[test]
    fn what_json_allows_is_read() {
        // A lone surrogate escape and a number past f64 are valid JSON text.
        let text = r#"[{"type":"text","text":"\ud800"},{"n":1e400,"big":123456789012345678901234567890}]"#;
        let mended = with_lone_surrogates_mended(text);
        assert_eq!(mended.len(), text.len());
        assert!(scan(&mended).is_ok());
    }

    #[test]
    fn only_lone_surrogates_are_mended() {
        let cases = [
            (r#""\ud800""#, r#""\ufffd""#),
            (r#""\udc00 \ud83d\ude00 \\ud800""#, r#""\ufffd \ud83d\ude00 \\ud800""#),
            (r#""\ud83d\u0041""#, r#""\ufffd\u0041""#),
            (r#""plain \n""#, r#""plain \n""#),
        ];
        for (text, expected) in cases {
            assert_eq!(with_lone_surrogates_mended(text), expected, "{text}");
        }
    }

    #[test]
    fn a_string_carries_media_by_its_scheme_or_its_signature() {
        use base64::Engine as _;
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        let png = crate::test_images::png(2, 2);
        let literal = |s: &str| serde_json::Value::String(s.to_string()).to_string();
        let cases: Vec<(String, Option<Loose>)> = vec![
            (literal("data:image/png;base64,AAAA"), Some(Loose::DataUrl)),
            (literal("\n DaTa:image/png,<svg/>"), Some(Loose::DataUrl)),
            (r#""data:image/png;base64,AAAA""#.into(), Some(Loose::DataUrl)),
            (literal("data:application/octet-stream;base64,AAAA"), Some(Loose::DataUrl)),
            (literal("data:text/plain;base64,aGk="), None),
            (literal("data:audio/wav;base64,UklGRg=="), None),
            (literal(&b64(&png)), Some(Loose::Base64 { mime: "image/png" })),
            (literal(&b64(&png)).replace('/', "\\/"), Some(Loose::Base64 { mime: "image/png" })),
            (literal(&b64(b"%PDF-1.7\n")), Some(Loose::Base64 { mime: "application/pdf" })),
            (
                literal(&b64(b"<?xml version=\"1.0\"?>\n<svg xmlns=\"x\"/>")),
                Some(Loose::Base64 { mime: "image/svg+xml" }),
            ),
            // Text: prose, code, a token that happens to be base64 of no signature, a short one.
            (literal("Hello, world\n and more"), None),
            (literal("QkFTRTY0IHRleHQgb2Ygbm8gc2lnbmF0dXJl"), None),
            (literal(&b64(b"BM not a bitmap header at all, just text")), None),
            (literal("iVBOR"), None),
            (literal(""), None),
        ];
        for (literal, expected) in cases {
            assert_eq!(loose_media(&literal), expected, "{literal:.60}");
        }
    }

    #[test]
    fn what_is_not_json_is_an_error() {
        for bad in ["not json {", "[1,]", "{\"a\":1} x", "", "[\"\\x\"]"] {
            assert!(scan(bad).is_err(), "{bad}");
        }
        let deep = format!("{}{}", "[".repeat(TOOL_RESULT_MAX_DEPTH + 2), "]".repeat(TOOL_RESULT_MAX_DEPTH + 2));
        assert!(scan(&deep).unwrap_err().0.contains("deeper"));
        let ok = format!("{}{}", "[".repeat(TOOL_RESULT_MAX_DEPTH), "]".repeat(TOOL_RESULT_MAX_DEPTH));
        assert!(scan(&ok).is_ok());
    }
}
