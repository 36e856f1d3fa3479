//! A bounded, deterministic mutation test through the real component and host: the corpus files
//! (PngSuite, photos, benchmark images, and GIF/WebP/JPEG made from them) truncated, bit-flipped
//! and with their headers edited (IHDR, SOF, logical screen, VP8L/VP8X sizes), under every verify
//! depth, downsample on and off, and every provider profile.
//!
//! Every call must end in a verdict or a clean `CallError` (never a host panic); a refusal carries
//! a reason and words; an admitted block is within the profile's base64 limit and its data
//! decodes — to an image of the admitted type and size when the gate decoded it.

use std::sync::Arc;

use crate::common::*;
use base64::Engine as _;
use mediagate::CallError;
use mediagate::gate::{AdmitOptions, Payload, Provider, RefusalReason, Verdict, Verify};

/// xorshift64*: deterministic, seeded per file.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Format {
    Png,
    Jpeg,
    Gif,
    WebP,
}

impl Format {
    fn mime(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Gif => "image/gif",
            Format::WebP => "image/webp",
        }
    }
    fn image_format(mime: &str) -> image::ImageFormat {
        match mime {
            "image/png" => image::ImageFormat::Png,
            "image/jpeg" => image::ImageFormat::Jpeg,
            "image/gif" => image::ImageFormat::Gif,
            "image/webp" => image::ImageFormat::WebP,
            other => panic!("an admitted image has an image type, not {other}"),
        }
    }
}

struct Source {
    name: String,
    bytes: Vec<u8>,
    format: Format,
    /// Mutations to make of it (large files get few: each decode of them costs real time).
    mutations: usize,
}

fn sources() -> Vec<Source> {
    let mut out = Vec::new();
    for path in files_in(&corpus().join("pngsuite"), "png") {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        out.push(Source { name, bytes: std::fs::read(&path).unwrap(), format: Format::Png, mutations: 6 });
    }
    for path in files_in(&corpus().join("photos"), "png") {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        out.push(Source { name, bytes: std::fs::read(&path).unwrap(), format: Format::Png, mutations: 8 });
    }
    for (name, format) in [
        ("bench/photo-12mp.jpg", Format::Jpeg),
        ("bench/photo-exif-rotated.jpg", Format::Jpeg),
        ("bench/screenshot-3456x2234.png", Format::Png),
    ] {
        out.push(Source {
            name: name.into(),
            bytes: std::fs::read(corpus().join(name)).unwrap(),
            format,
            mutations: 4,
        });
    }
    // GIF, WebP and small JPEGs made from a photo (the corpus has none of their own).
    let photo = image::load_from_memory(&std::fs::read(corpus().join("photos/kodim23.png")).unwrap()).unwrap();
    for (i, side) in [48u32, 160].into_iter().enumerate() {
        let img = photo.thumbnail(side, side);
        for (format, f) in [
            (Format::Gif, image::ImageFormat::Gif),
            (Format::WebP, image::ImageFormat::WebP),
            (Format::Jpeg, image::ImageFormat::Jpeg),
        ] {
            let mut bytes = std::io::Cursor::new(Vec::new());
            img.write_to(&mut bytes, f).unwrap();
            let name = format!("kodim23-{side}.{f:?}").to_lowercase();
            out.push(Source { name, bytes: bytes.into_inner(), format, mutations: 10 + i * 4 });
        }
    }
    out
}

fn put_be32(bytes: &mut [u8], at: usize, v: u32) {
    if at + 4 <= bytes.len() {
        bytes[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }
}

/// Recomputes the CRC of the PNG chunk at `at` (its length field), when it is whole.
fn fix_png_crc(bytes: &mut [u8], at: usize) {
    let Some(len) = bytes.get(at..at + 4).map(|b| u32::from_be_bytes(b.try_into().unwrap()) as usize) else { return };
    let end = at + 8 + len;
    if end + 4 > bytes.len() {
        return;
    }
    let mut crc = flate2::Crc::new();
    crc.update(&bytes[at + 4..end]);
    let sum = crc.sum();
    bytes[end..end + 4].copy_from_slice(&sum.to_be_bytes());
}

/// A header edit of the file's own format: its declared size made huge, zero or lopsided.
fn edit_header(bytes: &[u8], format: Format, rng: &mut Rng) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let dims: [(u32, u32); 6] = [(u32::MAX, 1), (50_000, 50_000), (7000, 7000), (0, 0), (30_001, 1), (65_535, 65_535)];
    let (w, h) = dims[rng.below(dims.len())];
    match format {
        Format::Png => {
            put_be32(&mut b, 16, w);
            put_be32(&mut b, 20, h);
            if rng.below(4) != 0 {
                fix_png_crc(&mut b, 8); // usually a consistent IHDR, sometimes a bad CRC too
            }
        }
        Format::Jpeg => {
            // Every SOFn marker (C0-CF except C4 DHT, C8 JPG, CC DAC).
            let sofs: Vec<usize> = b
                .windows(2)
                .enumerate()
                .filter(|(_, w)| w[0] == 0xFF && (0xC0..=0xCF).contains(&w[1]) && ![0xC4, 0xC8, 0xCC].contains(&w[1]))
                .map(|(i, _)| i)
                .collect();
            if let Some(&at) = sofs.first()
                && at + 9 <= b.len()
            {
                b[at + 5..at + 7].copy_from_slice(&(h.min(65_535) as u16).to_be_bytes());
                b[at + 7..at + 9].copy_from_slice(&(w.min(65_535) as u16).to_be_bytes());
            }
        }
        Format::Gif => {
            if b.len() >= 10 {
                b[6..8].copy_from_slice(&(w.min(65_535) as u16).to_le_bytes());
                b[8..10].copy_from_slice(&(h.min(65_535) as u16).to_le_bytes());
            }
            // And, sometimes, the first frame's own size too.
            if let Some(at) = b.iter().position(|&x| x == 0x2C)
                && rng.below(2) == 0
                && at + 9 <= b.len()
            {
                b[at + 5..at + 7].copy_from_slice(&(w.min(65_535) as u16).to_le_bytes());
                b[at + 7..at + 9].copy_from_slice(&(h.min(65_535) as u16).to_le_bytes());
            }
        }
        Format::WebP => {
            if let Some(at) = b.windows(4).position(|x| x == b"VP8L") {
                let bits: u32 = (w.saturating_sub(1) & 0x3FFF) | ((h.saturating_sub(1) & 0x3FFF) << 14);
                if at + 13 <= b.len() {
                    b[at + 9..at + 13].copy_from_slice(&bits.to_le_bytes());
                }
            } else if let Some(at) = b.windows(4).position(|x| x == b"VP8X")
                && at + 18 <= b.len()
            {
                b[at + 12..at + 15].copy_from_slice(&w.saturating_sub(1).to_le_bytes()[..3]);
                b[at + 15..at + 18].copy_from_slice(&h.saturating_sub(1).to_le_bytes()[..3]);
            }
        }
    }
    b
}

/// Mutation `k` of a file: truncations, bit flips and header edits in turn.
fn mutate(bytes: &[u8], format: Format, k: usize, rng: &mut Rng) -> (String, Vec<u8>) {
    let len = bytes.len();
    match k % 6 {
        0 => {
            let at = [0, 1, 8, 16, 33, len / 2, len.saturating_sub(1)][rng.below(7)].min(len);
            (format!("truncated to {at}"), bytes[..at].to_vec())
        }
        1 => {
            let at = rng.below(len);
            (format!("truncated to {at}"), bytes[..at].to_vec())
        }
        2 | 3 => {
            let flips = [1, 8, 64][rng.below(3)];
            let mut b = bytes.to_vec();
            for _ in 0..flips {
                // Past the signature mostly: a broken magic is refused at once, which is dull.
                let at =
                    if rng.below(8) == 0 { rng.below(len) } else { 12.min(len) + rng.below(len.saturating_sub(12)) };
                if let Some(byte) = b.get_mut(at) {
                    *byte ^= 1 << rng.below(8);
                }
            }
            (format!("{flips} bit flips"), b)
        }
        _ => ("header edit".to_string(), edit_header(bytes, format, rng)),
    }
}

fn options(k: usize, rng: &mut Rng) -> AdmitOptions {
    let providers = [Provider::Anthropic, Provider::Openai, Provider::Gemini, Provider::Ollama];
    AdmitOptions {
        verify: Some(if rng.below(2) == 0 { Verify::Header } else { Verify::Full }),
        downsample: Some(rng.below(3) != 0),
        // Mostly the default profile; the others in turn.
        provider: Some(if k.is_multiple_of(3) { providers[rng.below(4)] } else { Provider::Anthropic }),
        keep_metadata: Some(rng.below(4) == 0),
    }
}

/// The provider's base64 limit (none: the gate's default, Anthropic).
fn limit(provider: Option<Provider>) -> u64 {
    match provider {
        None | Some(Provider::Anthropic) => 5_242_880,
        Some(Provider::Openai | Provider::Gemini | Provider::Ollama) => 20_000_000,
    }
}

#[derive(Default, Debug)]
struct Tally {
    calls: usize,
    admitted: usize,
    refused: std::collections::BTreeMap<&'static str, usize>,
    call_errors: Vec<String>,
    tool_results: usize,
}

fn check_verdict(what: &str, verdict: &Verdict, options: AdmitOptions, input: &[u8]) {
    match verdict {
        Verdict::Admitted(a) => {
            assert!(a.base64_len <= limit(options.provider), "{what}: {} base64 bytes over the limit", a.base64_len);
            let data = a.base64(input);
            assert_eq!(a.base64_len, data.len() as u64, "{what}: base64_len is the data's length");
            let bytes = base64::engine::general_purpose::STANDARD.decode(&data).expect("admitted data is base64");
            match &a.payload {
                Payload::Unchanged => assert_eq!(bytes, input, "{what}: unchanged is the input"),
                // The canonical form is new bytes only when it differs from the input.
                Payload::Bytes(_) if !a.reencoded => assert_ne!(bytes, input, "{what}: a re-mux equal to the input"),
                Payload::Bytes(_) => {}
            }
            if options.verify == Some(Verify::Full) || a.reencoded {
                let img = image::load_from_memory_with_format(&bytes, Format::image_format(&a.mime))
                    .unwrap_or_else(|e| panic!("{what}: the gate decoded it, so must we: {e}"));
                let d = a.dimensions.expect("measured dimensions");
                assert_eq!((img.width(), img.height()), (d.width, d.height), "{what}: the dimensions are measured");
            }
        }
        Verdict::Refused(r) => {
            assert!(!r.message.trim().is_empty(), "{what}: a refusal says why");
            if matches!(r.reason, RefusalReason::RawTooLarge | RefusalReason::Base64TooLarge) {
                assert!(r.limit.is_some(), "{what}: a size refusal names its bound");
            }
        }
    }
}

#[test]
fn mutated_corpus_files_get_a_verdict_or_a_clean_error() {
    within_async(
        HOSTILE,
        "mutated_corpus_files_get_a_verdict_or_a_clean_error",
        2,
        mutated_corpus_files_get_a_verdict_or_a_clean_error_body,
    )
}

async fn mutated_corpus_files_get_a_verdict_or_a_clean_error_body() {
    let gate = gate();
    let mut cases = Vec::new();
    for (i, source) in sources().into_iter().enumerate() {
        let mut rng = Rng::new(i as u64 + 1);
        for k in 0..source.mutations {
            let (how, bytes) = mutate(&source.bytes, source.format, k, &mut rng);
            let options = options(k, &mut rng);
            // The file's own type mostly; now and then another image type.
            let claimed = if rng.below(8) == 0 {
                [Format::Png, Format::Jpeg, Format::Gif, Format::WebP][rng.below(4)].mime()
            } else {
                source.format.mime()
            };
            let as_tool_result = rng.below(6) == 0;
            cases.push((
                format!("{} [{how}] as {claimed} {options:?}", source.name),
                bytes,
                claimed,
                options,
                as_tool_result,
            ));
        }
    }
    assert!(cases.len() > 1000, "{} cases", cases.len());

    let tally = Arc::new(std::sync::Mutex::new(Tally::default()));
    let cases = Arc::new(cases);
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Four calls in flight on the two workers, each taking the next case.
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (gate, cases, next, tally) = (gate.clone(), cases.clone(), next.clone(), tally.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((what, bytes, claimed, options, as_tool_result)) = cases.get(i) else { break };
                    let result = admit_claimed(&gate, bytes, claimed, *options).await;
                    {
                        let mut t = tally.lock().unwrap();
                        t.calls += 1;
                        match &result {
                            Ok(v) => {
                                check_verdict(what, v, *options, bytes);
                                match v {
                                    Verdict::Admitted(_) => t.admitted += 1,
                                    Verdict::Refused(r) => *t.refused.entry(r.reason.as_str()).or_default() += 1,
                                }
                            }
                            Err(e) => {
                                assert!(!matches!(e, CallError::Host(_)), "{what}: the host itself failed: {e}");
                                t.call_errors.push(format!("{what}: {e}"));
                            }
                        }
                    }
                    if *as_tool_result {
                        check_tool_result(&gate, what, bytes, claimed, *options).await;
                        tally.lock().unwrap().tool_results += 1;
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.await.expect("no worker panicked");
    }
    let t = tally.lock().unwrap();
    eprintln!(
        "{} calls: {} admitted, refused {:?}, {} call errors, {} tool results",
        t.calls,
        t.admitted,
        t.refused,
        t.call_errors.len(),
        t.tool_results
    );
    for e in &t.call_errors {
        eprintln!("  call error: {e}");
    }
    assert_eq!(t.calls, cases.len(), "every case answered");
    assert!(t.admitted > 0 && !t.refused.is_empty());
}

/// The same bytes as an MCP image block between two text blocks: the seat answers with a list of
/// the same length, the media block admitted or replaced in its slot by words — or, where the gate
/// repaired the image, one longer by the note set after it.
async fn check_tool_result(gate: &mediagate::Gate, what: &str, bytes: &[u8], claimed: &str, options: AdmitOptions) {
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    let content = serde_json::json!([
        {"type": "text", "text": "before"},
        {"type": "image", "data": data, "mimeType": claimed},
        {"type": "text", "text": "after"},
    ]);
    let admission = match gate.admit_tool_result("mutant", &content.to_string(), false, options).await {
        Ok(a) => a.answer,
        Err(e) => {
            assert!(!matches!(e, CallError::Host(_)), "{what} (tool result): the host itself failed: {e}");
            return;
        }
    };
    let new: serde_json::Value =
        serde_json::from_str(admission.content.as_deref().expect("a media block is always answered")).unwrap();
    let mut blocks = new.as_array().expect("the same shape").clone();
    if blocks.len() == 4 {
        let note = blocks.remove(2);
        assert!(admission.refused.is_empty(), "{what}: a note is set beside an admitted image only");
        assert_eq!(note["type"], "text");
        let note = note["text"].as_str().unwrap();
        assert!(note.starts_with("[mediagate] The image") && note.contains(" was repaired "), "{what}: {note}");
    }
    assert_eq!(blocks.len(), 3, "{what}: no block lost or added");
    assert_eq!(blocks[2]["text"], "after", "{what}");
    match admission.refused.as_slice() {
        [] => {
            assert_eq!(blocks[1]["type"], "image");
            let data = blocks[1]["data"].as_str().unwrap();
            assert!(data.len() as u64 <= limit(options.provider));
            base64::engine::general_purpose::STANDARD.decode(data).expect("admitted data is base64");
        }
        [r] => {
            assert_eq!(r.index, 1);
            let text = blocks[1]["text"].as_str().expect("replaced by a text block");
            assert!(text.contains("mutant") && text.contains(r.reason.as_str()), "{what}: {text}");
        }
        more => panic!("{what}: one media block, {} refusals", more.len()),
    }
}
