//! One pass over a server message before the gate sees it (`mediagate proxy`): what the gate's
//! walk (the guest's tool-result seat, which finds every typed media block wherever it sits) needs
//! around it to cover every MCP message, whatever its method.
//!
//! - A key repeated in any object makes the message ambiguous: every JSON parser the clients use
//!   keeps the last copy, so a checked first copy proves nothing. The proxy refuses such a message.
//! - The gate's walk can only find a media block in an object with a `type` member; a message
//!   without one needs no gate call (a flood of progress notifications costs no sandbox calls).
//! - Two shapes carry media without a `type`: resource contents with a `blob` (`resources/read`,
//!   and wherever a server puts them), and `data:` URLs (icons in `tools/list` and `serverInfo`,
//!   or anywhere else). The pass gives their spans, so the proxy has the gate check each.

use std::collections::HashSet;
use std::ops::Range;

use jiter::{Jiter, Peek};

/// Deeper nesting is refused (serde_json's limit, which the proxy's envelope parse also has).
const MAX_DEPTH: usize = 128;

/// An object holding a `blob` member that is a string.
#[derive(Debug, PartialEq, Eq)]
pub struct BlobObject {
    pub span: Range<usize>,
    /// Its `uri`, when it gives one as a string.
    pub uri: Option<String>,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Inspection {
    /// The first key an object repeats.
    pub repeated_key: Option<String>,
    /// Some object has a `type` member.
    pub typed: bool,
    pub blobs: Vec<BlobObject>,
    /// String values (their JSON text, quotes included) that a URL parser reads as `data:` URLs.
    /// The `text` members of content are read as text, never fetched, and are not counted.
    pub data_urls: Vec<Range<usize>>,
}

impl Inspection {
    /// Whether there is a media shape the gate's walk does not find by itself.
    pub fn has_untyped_media(&self) -> bool {
        !self.blobs.is_empty() || !self.data_urls.is_empty()
    }
}

/// `Err`: the text is not JSON this pass can read (in words).
pub fn inspect(text: &str) -> Result<Inspection, String> {
    let mut walker = Walker { jiter: Jiter::new(text.as_bytes()), found: Inspection::default() };
    let error = |jiter: &Jiter, e: jiter::JiterError| {
        let at = jiter.error_position(e.index);
        format!("{} at line {} column {}", e.error_type, at.line, at.column)
    };
    let peek = walker.jiter.peek().map_err(|e| error(&walker.jiter, e))?;
    walker.value(peek, 0, false).map_err(|e| match e {
        Stop::Json(e) => error(&walker.jiter, e),
        Stop::TooDeep => format!("it nests deeper than {MAX_DEPTH} levels"),
    })?;
    walker.jiter.finish().map_err(|e| error(&walker.jiter, e))?;
    Ok(walker.found)
}

/// How a URL parser reads the start of a string (WHATWG URL: leading C0 controls and spaces
/// stripped, tabs and newlines removed anywhere): whether the scheme is `data`.
pub fn is_data_url(s: &str) -> bool {
    let mut scheme =
        s.trim_start_matches(|c: char| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).take(5);
    "data:".chars().all(|expected| scheme.next().is_some_and(|c| c.eq_ignore_ascii_case(&expected)))
}

/// The URL as a URL parser reads it (the same stripping as [`is_data_url`]), for the gate, whose
/// own reading starts at `data:`.
pub fn as_url_parser_reads(s: &str) -> String {
    s.trim_matches(|c: char| c <= ' ').chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect()
}

enum Stop {
    Json(jiter::JiterError),
    TooDeep,
}

impl From<jiter::JiterError> for Stop {
    fn from(e: jiter::JiterError) -> Self {
        Stop::Json(e)
    }
}

struct Walker<'j> {
    jiter: Jiter<'j>,
    found: Inspection,
}

impl Walker<'_> {
    /// `is_text`: the value of a `text` member.
    fn value(&mut self, peek: Peek, depth: usize, is_text: bool) -> Result<(), Stop> {
        if depth > MAX_DEPTH {
            return Err(Stop::TooDeep);
        }
        let start = self.jiter.current_index();
        match peek {
            Peek::Object => self.object(start, depth)?,
            Peek::Array => {
                let mut next = self.jiter.known_array()?;
                while let Some(peek) = next {
                    self.value(peek, depth + 1, false)?;
                    next = self.jiter.array_step()?;
                }
            }
            Peek::String => {
                let data_url = is_data_url(self.jiter.known_str()?);
                if data_url && !is_text {
                    self.found.data_urls.push(start..self.jiter.current_index());
                }
            }
            _ => self.jiter.known_skip(peek)?,
        }
        Ok(())
    }

    fn object(&mut self, start: usize, depth: usize) -> Result<(), Stop> {
        let mut seen = HashSet::new();
        let mut blob = false;
        let mut uri = None;
        let mut key = self.jiter.known_object()?.map(str::to_string);
        while let Some(k) = key {
            let peek = self.jiter.peek()?;
            match k.as_str() {
                "type" => self.found.typed = true,
                // Bytes are a string; a `blob` holding anything else (a JSON Schema's `properties`
                // naming `blob`, as a tool's output schema does) carries none.
                "blob" if peek == Peek::String => blob = true,
                _ => {}
            }
            if k == "uri" && peek == Peek::String {
                let at = self.jiter.current_index();
                let value = self.jiter.known_str()?.to_string();
                if is_data_url(&value) {
                    self.found.data_urls.push(at..self.jiter.current_index());
                }
                uri = Some(value);
            } else {
                self.value(peek, depth + 1, k == "text")?;
            }
            if !seen.insert(k.clone()) && self.found.repeated_key.is_none() {
                self.found.repeated_key = Some(k);
            }
            key = self.jiter.next_key()?.map(str::to_string);
        }
        if blob {
            self.found.blobs.push(BlobObject { span: start..self.jiter.current_index(), uri });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_are_found_at_any_depth_and_through_escapes() {
        let found = |text: &str| inspect(text).unwrap().repeated_key;
        assert_eq!(found(r#"{"result":{"contents":[],"contents":[{"blob":"x"}]}}"#).as_deref(), Some("contents"));
        assert_eq!(found(r#"{"a":[{"type":"image","t\u0079pe":"text"}]}"#).as_deref(), Some("type"));
        assert_eq!(found(r#"{"a":{"b":1},"c":{"b":2}}"#), None, "the same key in two objects is no repeat");
    }

    #[test]
    fn typed_blobs_and_data_urls_are_found_where_they_are() {
        let text = r#"{"result":{"contents":[{"uri":"a://b","mimeType":"image/png","blob":"AAAA"}],
            "tools":[{"name":"t","icons":[{"src":" data:image/svg+xml;base64,PHN2Zz4="}]}],
            "note":{"text":"data: read as text"}}}"#;
        let found = inspect(text).unwrap();
        assert!(!found.typed);
        assert_eq!(found.blobs.len(), 1);
        assert_eq!(found.blobs[0].uri.as_deref(), Some("a://b"));
        assert_eq!(&text[found.blobs[0].span.clone()], r#"{"uri":"a://b","mimeType":"image/png","blob":"AAAA"}"#);
        assert_eq!(found.data_urls.len(), 1);
        assert_eq!(&text[found.data_urls[0].clone()], r#"" data:image/svg+xml;base64,PHN2Zz4=""#);
        assert!(inspect(r#"{"content":[{"type":"text","text":"hi"}]}"#).unwrap().typed);
        // A tool's output schema that describes a blob resource holds no blob.
        let schema = r#"{"type":"object","properties":{"uri":{"type":"string"},"blob":{"type":"string"}}}"#;
        assert!(inspect(schema).unwrap().blobs.is_empty());
        // Numbers serde_json cannot hold are JSON all the same.
        assert!(inspect(r#"{"n":1e400,"m":123456789012345678901234567890}"#).is_ok());
    }

    #[test]
    fn data_urls_as_a_url_parser_reads_them() {
        for url in ["data:x", "DATA:x", " \t data:x", "\u{0}data:x", "da\tta:x", "d\ra\nta:x", "\u{1f}Data:,"] {
            assert!(is_data_url(url), "{url:?}");
        }
        for not in ["", "data", "xdata:", "https://data:x", "dat a:x", "\u{a0}data:x"] {
            assert!(!is_data_url(not), "{not:?}");
        }
        assert_eq!(as_url_parser_reads(" \u{0}da\tta:image/png;base64,AA\n== "), "data:image/png;base64,AA==");
    }

    #[test]
    fn what_is_not_json_or_too_deep_is_an_error() {
        assert!(inspect("{\"a\":").is_err());
        assert!(inspect("{} x").is_err());
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 2), "]".repeat(MAX_DEPTH + 2));
        assert!(inspect(&deep).unwrap_err().contains("deeper"));
    }
}
