//! One fuzz target over the whole gate, natively (the same Rust the component runs).
//!
//! The first byte chooses the entry point and its options; the rest is the input:
//! - image: one of the four claimed types (and an unsupported one), verify header/full,
//!   downsample on/off, a provider profile;
//! - document (PDF);
//! - tool-result JSON (the rest as UTF-8, lossily) — admitted with the same options;
//! - the rest as an image inside a tool result, in one of the block shapes the seat reads (MCP,
//!   Anthropic, OpenAI data URL), between two text blocks that must come back unchanged;
//! - sniff.
//!
//! Besides "no panic", it checks the gate's own promises: an admitted block is within the
//! profile's base64 limit, carries the canonical media type and decodable base64, and a refusal
//! always carries a reason and a message.
#![no_main]

use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use mediagate_guest::walks::tool_result::scan::{scan, with_lone_surrogates_mended};
use mediagate_guest::{Options, Provider, Verify, admit_document, admit_image, admit_tool_result, sniff};

const CLAIMED: [&str; 5] = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"];
const PROVIDERS: [Provider; 4] = [Provider::Anthropic, Provider::OpenAi, Provider::Gemini, Provider::Ollama];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let options = Options {
        downsample: selector & 0x10 != 0,
        verify: if selector & 0x20 != 0 { Verify::Full } else { Verify::Header },
        provider: PROVIDERS[usize::from(selector >> 6)],
        ..Options::default()
    };
    let limit = options.provider.profile().max_base64_len;
    match selector & 0x0f {
        // 0..=9: images, the claimed type cycling over the five (so each real type is claimed
        // for bytes of every other type too).
        n @ 0..=9 => {
            let claimed = CLAIMED[usize::from(n) % CLAIMED.len()];
            check(admit_image(rest, claimed, &options), rest, limit);
        }
        10 | 11 => check(admit_document(rest, "application/pdf"), rest, u64::MAX),
        12 => {
            let json = String::from_utf8_lossy(rest);
            let admission = admit_tool_result("fuzz", &json, &options);
            match &admission.content {
                // What the gate writes is JSON its own reader reads.
                Some(content) => {
                    assert!(scan(&with_lone_surrogates_mended(content)).is_ok(), "rewritten content is JSON")
                }
                None => assert!(admission.refused.is_empty(), "refusals without new content"),
            }
        }
        13 => image_in_a_tool_result(rest, &options),
        _ => {
            let mime = sniff(rest);
            assert!(!mime.is_empty());
        }
    }
});

/// The bytes as an image block of a tool result, claimed as PNG/JPEG/GIF/WebP by the second byte,
/// in the shape the third byte picks; the text blocks around it must come back byte for byte.
fn image_in_a_tool_result(data: &[u8], options: &Options) {
    let [pick, shape, bytes @ ..] = data else { return };
    let claimed = CLAIMED[usize::from(*pick) % 4];
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    let block = match shape % 3 {
        0 => serde_json::json!({"type": "image", "data": b64, "mimeType": claimed}),
        1 => serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": claimed, "data": b64}}),
        _ => serde_json::json!({"type": "image_url", "image_url": {"url": format!("data:{claimed};base64,{b64}")}}),
    };
    let before = r#"{"type":"text","text":"before \ud800 1e400"}"#;
    let after = r#"{"n": 123456789012345678901234567890, "text": "after"}"#;
    let json = format!("[{before},{block},{after}]");
    let admission = admit_tool_result("fuzz", &json, options);
    let content = admission.content.expect("a media block always gives new content");
    assert!(content.starts_with(&format!("[{before},")) && content.ends_with(&format!(",{after}]")), "{content:.200}");
    assert!(admission.refused.len() <= 1);
    if let Some(r) = admission.refused.first() {
        assert_eq!((r.index, r.path.as_str()), (1, "/1"));
    }
}

fn check(verdict: mediagate_guest::verdict::Verdict, input: &[u8], limit: u64) {
    match verdict {
        Ok(a) => {
            assert!(a.base64_len() <= limit, "admitted {} base64 bytes over the limit {limit}", a.base64_len());
            let data = a.base64(input);
            assert_eq!(data.len() as u64, a.base64_len(), "base64_len is the data's length");
            let bytes = base64::engine::general_purpose::STANDARD.decode(&data).expect("admitted data is base64");
            // The canonical form may be shorter than the input without a pixel re-encoded (a
            // comment or EXIF block dropped), so only the input's own size is `original_size`.
            assert_eq!(a.original_size, input.len() as u64, "original_size is the input's");
            if a.kind == mediagate_guest::verdict::Kind::Image {
                assert_eq!(sniff(&bytes), a.mime, "the admitted bytes are what the media type says");
            }
        }
        Err(r) => assert!(!r.message.is_empty(), "a refusal names its reason in words"),
    }
}
