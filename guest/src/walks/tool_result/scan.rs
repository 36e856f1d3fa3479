//! One pass over a tool result's JSON text that keeps what the seat needs and nothing else: every
//! object that has a key a media block uses, with the byte spans of those members, the keys it
//! repeats, and where it sits. Values are not copied; a block's fields are decoded from their
//! spans when the block is judged, and the gated result is the input with only those spans
//! replaced.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::ops::Range;

use jiter::{Jiter, Peek};

use crate::limits::TOOL_RESULT_MAX_DEPTH;

/// Keys that say where a block keeps its type and its bytes, in every shape the seat reads.
const MEDIA_KEYS: [&str; 13] = [
    "type",
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
    /// Its members with media keys, in document order (a repeated key appears each time).
    pub members: Vec<Member>,
    /// Keys (any key) that appear more than once.
    pub repeated_keys: Vec<String>,
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
    let mut walker = Walker { jiter: Jiter::new(text.as_bytes()), scan: Scan::default(), path: Vec::new() };
    let peek = walker.jiter.peek().map_err(|e| walker.error(e))?;
    walker.value(peek, 0, 0)?;
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
    scan: Scan,
    /// Pointer segments (escaped) from the root to the current value.
    path: Vec<String>,
}

impl Walker<'_> {
    fn error(&self, e: jiter::JiterError) -> ScanError {
        let at = self.jiter.error_position(e.index);
        ScanError(format!("{} at line {} column {}", e.error_type, at.line, at.column))
    }

    fn value(&mut self, peek: Peek, depth: usize, index: u32) -> Result<(Range<usize>, Value), ScanError> {
        if depth > TOOL_RESULT_MAX_DEPTH {
            return Err(ScanError(format!("it nests deeper than {TOOL_RESULT_MAX_DEPTH} levels")));
        }
        let start = self.jiter.current_index();
        let value = match peek {
            Peek::Object => self.object(start, depth, index)?,
            Peek::Array => {
                let mut next = self.jiter.known_array().map_err(|e| self.error(e))?;
                let mut i = 0u32;
                while let Some(peek) = next {
                    self.path.push(i.to_string());
                    self.value(peek, depth + 1, i)?;
                    self.path.pop();
                    i = i.saturating_add(1);
                    next = self.jiter.array_step().map_err(|e| self.error(e))?;
                }
                Value::Other
            }
            Peek::String => {
                self.jiter.known_skip(peek).map_err(|e| self.error(e))?;
                Value::String
            }
            _ => {
                self.jiter.known_skip(peek).map_err(|e| self.error(e))?;
                Value::Other
            }
        };
        Ok((start..self.jiter.current_index(), value))
    }

    fn object(&mut self, start: usize, depth: usize, index: u32) -> Result<Value, ScanError> {
        let mut members = Vec::new();
        let mut seen = BTreeSet::new();
        let mut repeated = Vec::new();
        let first = self.jiter.known_object().map(|k| k.map(str::to_string));
        let mut key = first.map_err(|e| self.error(e))?;
        while let Some(k) = key {
            let peek = self.jiter.peek().map_err(|e| self.error(e))?;
            self.path.push(k.replace('~', "~0").replace('/', "~1"));
            let (span, value) = self.value(peek, depth + 1, 0)?;
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
            index,
            members,
            repeated_keys: repeated,
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
