//! The converters (guest feature `convert`), natively: SVG, BMP, TIFF, ICO, an animated GIF for a
//! profile that refuses animation, a PDF page, and the same conversions inside a tool result and
//! a request.
//!
//! The first byte chooses the entry point and its options; the rest is the input:
//! - bits 0-2: 0 SVG, 1 BMP, 2 TIFF, 3 ICO (`admit_image`, convert on); 4 GIF for the OpenAI
//!   profile (convert on); 5 a PDF page (`admit_pdf_page`); 6 an image inside a tool result;
//!   7 an image inside a request (Anthropic Messages or OpenAI Chat, by the provider bits);
//! - bit 3: downsample; bit 4: verify full (images) / bits 4-5: the page, 0..=3 (PDF);
//! - bits 6-7: the provider profile.
//!
//! For 6 and 7 the second byte picks the claimed type (SVG, BMP, TIFF, ICO, GIF).
//!
//! Besides "no panic, no hang, no OOM", it checks the gate's promises: an admitted image is within
//! the profile's base64 limit and side, carries a canonical media type the profile takes and
//! bytes of that type, its `original_size` is the input's, `converted` is set (from the right type)
//! exactly when a conversion happened; a refusal or a page error always has words.
#![no_main]

use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use mediagate_guest::convert::admit_pdf_page;
use mediagate_guest::signature::ImageType;
use mediagate_guest::walks::tool_result::scan::{scan, with_lone_surrogates_mended};
use mediagate_guest::verdict::{Admitted, Verdict};
use mediagate_guest::{Api, Options, Provider, Verify, admit_image, admit_request, admit_tool_result, sniff};

const CLAIMED: [&str; 5] = ["image/svg+xml", "image/bmp", "image/tiff", "image/vnd.microsoft.icon", "image/gif"];
const PROVIDERS: [Provider; 4] = [Provider::Anthropic, Provider::OpenAi, Provider::Gemini, Provider::Ollama];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let kind = selector & 0x07;
    let mut options = Options {
        downsample: selector & 0x08 != 0,
        verify: if selector & 0x10 != 0 { Verify::Full } else { Verify::Header },
        provider: PROVIDERS[usize::from(selector >> 6)],
        convert: true,
        ..Options::default()
    };
    match kind {
        0..=3 => {
            let claimed = CLAIMED[usize::from(kind)];
            check(admit_image(rest, claimed, &options), rest, claimed, &options, true);
        }
        4 => {
            options.provider = Provider::OpenAi;
            // A still GIF goes through the plain gate unchanged; an animated one becomes its first
            // frame (or is refused): `converted` may be either, but only ever from a GIF.
            check(admit_image(rest, "image/gif", &options), rest, "image/gif", &options, false);
        }
        5 => {
            let page = u32::from((selector >> 4) & 0x03);
            match admit_pdf_page(rest, page, &options) {
                Ok(a) => {
                    assert!(page >= 1, "page 0 admitted");
                    admitted(&a, rest, "application/pdf", &options, true);
                }
                Err(e) => assert!(!e.message().is_empty(), "a page error has words: {e:?}"),
            }
        }
        6 => in_a_tool_result(rest, &options),
        _ => in_a_request(rest, &options),
    }
});

fn check(verdict: Verdict, input: &[u8], from: &str, options: &Options, must_convert: bool) {
    match verdict {
        Ok(a) => admitted(&a, input, from, options, must_convert),
        Err(r) => assert!(!r.message.is_empty(), "a refusal names its reason in words"),
    }
}

fn admitted(a: &Admitted, input: &[u8], from: &str, options: &Options, must_convert: bool) {
    let profile = options.provider.profile();
    assert!(
        a.base64_len() <= profile.max_base64_len,
        "admitted {} base64 bytes over the limit {}",
        a.base64_len(),
        profile.max_base64_len
    );
    let t = ImageType::from_mime(a.mime).expect("an admitted image has one of the four types");
    assert_eq!(t.mime(), a.mime, "canonical media type");
    assert!(profile.accepts(t), "{} admitted for {:?}, which does not take it", a.mime, options.provider);
    assert_eq!(a.original_size, input.len() as u64, "original_size is the input's");
    let bytes = a.bytes(input);
    assert_eq!(sniff(bytes), a.mime, "the admitted bytes are what the media type says");
    if let (Some(max), Some(d)) = (profile.max_side, a.dimensions) {
        assert!(d.width <= max && d.height <= max, "{}x{} over the profile's side {max}", d.width, d.height);
    }
    match &a.converted {
        Some(c) => {
            assert_eq!(c.from, from, "converted from the claimed type");
            assert!(!c.note.is_empty(), "a conversion says what it did");
            assert!(a.reencoded, "a converted image is bytes the gate made");
        }
        None => assert!(!must_convert, "{from} admitted without a conversion"),
    }
}

fn block_bytes(data: &[u8]) -> Option<(&'static str, &[u8])> {
    let (&pick, bytes) = data.split_first()?;
    Some((CLAIMED[usize::from(pick) % CLAIMED.len()], bytes))
}

/// The bytes as an image block of a tool result between two text blocks that must come back
/// byte for byte; at most one conversion or one refusal, never both.
fn in_a_tool_result(data: &[u8], options: &Options) {
    let Some((claimed, bytes)) = block_bytes(data) else { return };
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    let block = serde_json::json!({"type": "image", "data": b64, "mimeType": claimed});
    let before = r#"{"type":"text","text":"before"}"#;
    let after = r#"{"type":"text","text":"after"}"#;
    let json = format!("[{before},{block},{after}]");
    let admission = admit_tool_result("fuzz", &json, options);
    let content = admission.content.expect("a media block always gives new content");
    assert!(content.starts_with(&format!("[{before},")) && content.ends_with(&format!(",{after}]")), "{content:.200}");
    assert!(scan(&with_lone_surrogates_mended(&content)).is_ok(), "rewritten content is JSON");
    assert!(admission.refused.len() + admission.conversions.len() <= 1, "one block: one outcome");
    for c in &admission.conversions {
        assert_eq!(c.path, "/1");
        assert_eq!(c.from, claimed);
        assert!(ImageType::from_mime(&c.to).is_some(), "converted to one of the four: {}", c.to);
    }
}

/// The bytes as an image of a request (Anthropic Messages for the Anthropic profile, OpenAI Chat
/// otherwise); it is admitted (at most one conversion) or refused in words.
fn in_a_request(data: &[u8], options: &Options) {
    let Some((claimed, bytes)) = block_bytes(data) else { return };
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    let (api, block) = if options.provider == Provider::Anthropic {
        (
            Api::Anthropic,
            serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": claimed, "data": b64}}),
        )
    } else {
        (
            Api::OpenAi,
            serde_json::json!({"type": "image_url", "image_url": {"url": format!("data:{claimed};base64,{b64}")}}),
        )
    };
    let request = serde_json::json!({
        "model": "m", "max_tokens": 16,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "what is this?"}, block]}],
    });
    match admit_request(api, &request.to_string(), options) {
        Ok(admitted) => {
            assert!(admitted.conversions.len() <= 1, "one block, at most one conversion");
            for c in &admitted.conversions {
                assert_eq!(c.from, claimed);
                assert!(ImageType::from_mime(&c.to).is_some(), "converted to one of the four: {}", c.to);
            }
            for change in &admitted.changes {
                assert!(!change.message.is_empty(), "a change has words");
            }
        }
        Err(r) => assert!(!r.message.is_empty(), "a refusal names its reason in words"),
    }
}
