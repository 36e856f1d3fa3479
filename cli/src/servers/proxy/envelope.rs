//! The JSON-RPC envelope of a line as the proxy reads and rewrites it: the members it reads
//! (without re-serialising the rest), the mending that lets serde_json read what JSON allows, the
//! spans of members in the line, and the errors the proxy answers with.

use serde_json::value::RawValue;
use serde_json::{Value, json};

/// JSON-RPC error codes the proxy answers with.
pub(super) const PARSE_ERROR: i64 = -32700;
pub(super) const INVALID_REQUEST: i64 = -32600;
pub(super) const INTERNAL_ERROR: i64 = -32603;
/// The code the official SDKs use for a request that timed out.
pub(super) const REQUEST_TIMEOUT: i64 = -32001;

/// How much of a garbage line is quoted in the error.
const QUOTE_CHARS: usize = 120;

/// The members of a JSON-RPC message the proxy reads; repeated members are refused by serde.
/// `params`, `result` and `error` stay raw text of the line: they are read only where the proxy
/// needs a member of them, and an answer the gate changes is spliced back into the line, so what
/// serde_json cannot represent (`1e400`, lone surrogates, 30-digit integers) and the server's own
/// key order and spacing reach the client as the server wrote them.
#[derive(serde::Deserialize)]
pub(super) struct Envelope<'a> {
    #[serde(default, deserialize_with = "present")]
    pub(super) id: Option<Value>,
    pub(super) method: Option<String>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(super) result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

/// The members of a request's `params` the proxy reads.
#[derive(serde::Deserialize, Default)]
pub(super) struct Params {
    pub(super) name: Option<String>,
    pub(super) uri: Option<String>,
    #[serde(rename = "requestId")]
    pub(super) request_id: Option<Value>,
    #[serde(rename = "taskId")]
    pub(super) task_id: Option<Value>,
}

impl Envelope<'_> {
    /// The `params` members the proxy reads; nothing when absent or not an object of that shape.
    pub(super) fn params(&self) -> Params {
        self.params.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_default()
    }
}

/// Tells `"id": null` (present) from no `id` at all.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

pub(super) enum Parsed<'a> {
    Message(Envelope<'a>),
    NotJson(String),
    NotMessage(String),
}

/// The line with each lone surrogate escape written as `\ufffd`, the same length, so that serde_json
/// (which refuses them, though JSON's grammar allows them) reads it and every span of the copy is a
/// span of the line. The gate does the same for the text it is given (guest `tool_result/scan.rs`).
pub(super) fn lone_surrogates_mended(line: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let surrogate_at = |i: usize| {
        let hex = line.get(i + 2..i + 6).and_then(|h| std::str::from_utf8(h).ok());
        let unit = hex.and_then(|h| u16::from_str_radix(h, 16).ok());
        unit.filter(|u| line[i + 1] == b'u' && (0xD800..=0xDFFF).contains(u))
    };
    let mut mended = std::borrow::Cow::Borrowed(line);
    let mut i = 0;
    while let Some(at) = line[i..].iter().position(|&b| b == b'\\') {
        i += at;
        i += match surrogate_at(i) {
            Some(0xD800..=0xDBFF) if surrogate_at(i + 6).is_some_and(|low| low >= 0xDC00) => 12,
            Some(_) => {
                mended.to_mut()[i + 2..i + 6].copy_from_slice(b"fffd");
                6
            }
            None => 2, // any other escape, `\\` included, skipped whole
        };
    }
    mended
}

pub(super) fn parse(line: &[u8]) -> Parsed<'_> {
    match serde_json::from_slice::<Envelope>(line) {
        // A request or notification that is also an answer, or an answer both ways: which one a
        // peer acts on is not defined, so it is no message.
        Ok(e) if e.method.is_some() && (e.result.is_some() || e.error.is_some()) => {
            Parsed::NotMessage("the object has both `method` and `result` or `error`".into())
        }
        Ok(e) if e.result.is_some() && e.error.is_some() => {
            Parsed::NotMessage("the object has both `result` and `error`".into())
        }
        Ok(e) if e.method.is_some() || e.result.is_some() || e.error.is_some() => Parsed::Message(e),
        Ok(_) => Parsed::NotMessage("the object has no `method`, `result` or `error`".into()),
        Err(e) => {
            // Told apart only now, on the rare bad line: a second pass that checks the syntax alone.
            if let Err(syntax) = serde_json::from_slice::<serde::de::IgnoredAny>(line) {
                return Parsed::NotJson(syntax.to_string());
            }
            Parsed::NotMessage(match line.trim_ascii_start().first() {
                Some(b'[') => "the message is a batch (an array); MCP sends one message per line".into(),
                Some(b'{') => format!("the object is not a JSON-RPC message: {e}"),
                _ => "the message is not an object".into(),
            })
        }
    }
}

/// Where `raw` (borrowed from `line`) sits in `line`.
pub(super) fn span_of(line: &[u8], raw: &RawValue) -> std::ops::Range<usize> {
    let start = raw.get().as_ptr() as usize - line.as_ptr() as usize;
    start..start + raw.get().len()
}

pub(super) fn error_response(id: &Value, code: i64, message: impl Into<String>) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}}).to_string().into_bytes()
}

pub(super) fn quote(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut quoted: String = text.chars().take(QUOTE_CHARS).collect();
    if text.chars().count() > QUOTE_CHARS {
        quoted.push('…');
    }
    quoted
}

/// The line with its `id` member's value replaced by `id`.
pub(super) fn with_id(line: &[u8], id: &Value) -> Option<Vec<u8>> {
    #[derive(serde::Deserialize)]
    struct Id<'a> {
        #[serde(borrow)]
        id: &'a RawValue,
    }
    let mended = lone_surrogates_mended(line);
    let span = span_of(&mended, serde_json::from_slice::<Id>(&mended).ok()?.id);
    Some([&line[..span.start], id.to_string().as_bytes(), &line[span.end..]].concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_told_from_garbage_batches_and_repeated_members() {
        assert!(matches!(parse(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"), Parsed::Message(_)));
        assert!(matches!(parse(b"not json"), Parsed::NotJson(_)));
        assert!(matches!(parse(b"[{\"jsonrpc\":\"2.0\",\"method\":\"x\"}]"), Parsed::NotMessage(_)));
        assert!(matches!(parse(b"{\"id\":1,\"id\":2,\"result\":{}}"), Parsed::NotMessage(_)));
        assert!(matches!(parse(b"{\"id\":1}"), Parsed::NotMessage(_)));
        let Parsed::Message(e) = parse(b"{\"id\":null,\"error\":{}}") else { panic!() };
        assert_eq!(e.id, Some(Value::Null));
        assert!(matches!(parse(b"\"just a string\""), Parsed::NotMessage(_)));
        // A request that is also an answer, or an answer both ways, is no message.
        for both in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"notifications/message","result":{"content":[]}}"#[..],
            br#"{"jsonrpc":"2.0","method":"x","error":{"code":1,"message":"m"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#,
        ] {
            assert!(matches!(parse(both), Parsed::NotMessage(_)), "{}", String::from_utf8_lossy(both));
        }
    }

    #[test]
    fn an_answer_gets_the_id_the_client_sent() {
        let line = br#"{"jsonrpc":"2.0","result":{"x":1e400},"id":1}"#;
        assert_eq!(with_id(line, &json!("1")).unwrap(), br#"{"jsonrpc":"2.0","result":{"x":1e400},"id":"1"}"#);
    }

    #[test]
    fn what_serde_json_cannot_represent_is_a_message_and_its_result_a_span_of_the_line() {
        let line = br#"{"jsonrpc":"2.0","id":3,"result":{ "z":1e400, "s":"\ud800 x\udc00", "n":123456789012345678901234567890 }}"#;
        let scanned = lone_surrogates_mended(line);
        let Parsed::Message(e) = parse(&scanned) else { panic!("not a message") };
        let span = span_of(&scanned, e.result.unwrap());
        assert_eq!(&line[span], br#"{ "z":1e400, "s":"\ud800 x\udc00", "n":123456789012345678901234567890 }"#);
        let request =
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{"x":1e400},"name":"look"}}"#;
        let Parsed::Message(e) = parse(request) else { panic!("not a message") };
        assert_eq!(e.params().name.as_deref(), Some("look"));
    }

    #[test]
    fn only_lone_surrogate_escapes_are_mended_and_at_the_same_length() {
        let cases: [(&[u8], &[u8]); 6] = [
            (br#""\ud83d\ude00""#, br#""\ud83d\ude00""#), // a pair stays
            (br#""\ud800 ""#, br#""\ufffd ""#),
            (br#""\udc00\ud800""#, br#""\ufffd\ufffd""#),
            (br#""\\ud800""#, br#""\\ud800""#), // an escaped backslash, then text
            (br#""\u00e9\ud8""#, br#""\u00e9\ud8""#), // too short to be an escape: left to the parser
            (b"no escapes", b"no escapes"),
        ];
        for (line, expected) in cases {
            assert_eq!(&*lone_surrogates_mended(line), expected, "{}", String::from_utf8_lossy(line));
        }
    }
}
