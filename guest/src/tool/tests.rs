use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use super::*;
use crate::test_images::png;
use crate::test_oracles::expected_cut;

#[derive(Default)]
struct FakeWorkspace {
    entries: HashMap<String, (EntryType, Vec<u8>)>,
    /// Extra bytes that appear between stat and read (a file that grows).
    grows_by: usize,
    reads: RefCell<Vec<String>>,
}

impl FakeWorkspace {
    fn with(mut self, rel: &str, entry: EntryType, bytes: Vec<u8>) -> Self {
        self.entries.insert(rel.to_string(), (entry, bytes));
        self
    }
}

impl Workspace for FakeWorkspace {
    fn stat(&self, rel: &str) -> Result<(EntryType, u64), FsError> {
        if rel == "escape.png" {
            return Err(FsError::Escapes);
        }
        self.entries.get(rel).map(|(e, b)| (*e, b.len() as u64)).ok_or(FsError::NotFound)
    }
    fn read(&self, rel: &str, max: u64) -> Result<Vec<u8>, FsError> {
        self.reads.borrow_mut().push(rel.to_string());
        let mut bytes = self.entries.get(rel).ok_or(FsError::NotFound)?.1.clone();
        bytes.resize(bytes.len() + self.grows_by, 0);
        bytes.truncate(max as usize);
        Ok(bytes)
    }
    fn root(&self) -> &str {
        "/ws"
    }
}

struct FakeVlm {
    configured: bool,
    provider: Provider,
    script: Vec<Result<Chunk, VlmError>>,
    asked: RefCell<Vec<(String, String, Vec<u8>)>>,
}

impl FakeVlm {
    fn replying(script: Vec<Result<Chunk, VlmError>>) -> Self {
        FakeVlm { configured: true, provider: Provider::Anthropic, script, asked: RefCell::new(Vec::new()) }
    }
}

struct FakeReply(VecDeque<Result<Chunk, VlmError>>);

impl Reply for FakeReply {
    fn next_chunk(&mut self) -> Result<Option<Chunk>, VlmError> {
        self.0.pop_front().transpose()
    }
}

impl Vlm for FakeVlm {
    fn configured(&self) -> bool {
        self.configured
    }
    fn provider(&self) -> Provider {
        self.provider
    }
    fn ask(&self, prompt: &str, mime: &str, data: Vec<u8>) -> Result<Box<dyn Reply + '_>, VlmError> {
        self.asked.borrow_mut().push((prompt.to_string(), mime.to_string(), data));
        Ok(Box::new(FakeReply(self.script.clone().into())))
    }
}

#[derive(Default)]
struct RecordingSink(RefCell<Vec<(ChunkKind, String)>>);

impl Sink for RecordingSink {
    fn write(&self, kind: ChunkKind, text: &str) {
        self.0.borrow_mut().push((kind, text.to_string()));
    }
}

fn content(t: &str) -> Result<Chunk, VlmError> {
    Ok(Chunk { kind: ChunkKind::Content, text: t.into() })
}
fn reasoning(t: &str) -> Result<Chunk, VlmError> {
    Ok(Chunk { kind: ChunkKind::Reasoning, text: t.into() })
}

fn ws_with_png() -> FakeWorkspace {
    FakeWorkspace::default().with("shot.png", EntryType::File, png(10, 10))
}

#[test]
fn a_question_goes_to_the_vlm_verbatim_with_the_admitted_image() {
    let ws = ws_with_png();
    let vlm = FakeVlm::replying(vec![content("A "), content("gradient.")]);
    let sink = RecordingSink::default();
    let answer = read_image(&ws, &vlm, &sink, "shot.png", Some("What colour?"), None).unwrap();
    assert_eq!(answer, "A gradient.");
    let asked = vlm.asked.borrow();
    assert_eq!(asked[0].0, "What colour?");
    assert_eq!(asked[0].1, "image/png");
    assert_eq!(asked[0].2, png(10, 10), "the image crosses as its bytes");
    assert_eq!(sink.0.borrow().len(), 2, "each chunk reached the sink");
}

#[test]
fn no_question_asks_the_describe_prompt() {
    let vlm = FakeVlm::replying(vec![content("text")]);
    read_image(&ws_with_png(), &vlm, &RecordingSink::default(), "shot.png", None, None).unwrap();
    assert_eq!(vlm.asked.borrow()[0].0, DESCRIBE_PROMPT);
    let vlm = FakeVlm::replying(vec![content("text")]);
    read_image(&ws_with_png(), &vlm, &RecordingSink::default(), "shot.png", Some("  "), None).unwrap();
    assert_eq!(vlm.asked.borrow()[0].0, DESCRIBE_PROMPT, "a blank question is no question");
}

#[test]
fn no_vlm_answers_at_once_without_reading() {
    let ws = ws_with_png();
    let vlm = FakeVlm { configured: false, provider: Provider::Anthropic, script: vec![], asked: RefCell::new(vec![]) };
    let e = read_image(&ws, &vlm, &RecordingSink::default(), "shot.png", None, None).unwrap_err();
    assert_eq!(e.code, ToolErrorCode::NoVlm);
    assert!(e.message.starts_with("error: ") && e.message.contains("Do not retry"));
    assert!(ws.reads.borrow().is_empty() && vlm.asked.borrow().is_empty());
}

#[test]
fn reasoning_streams_but_stays_out_of_the_answer() {
    let vlm = FakeVlm::replying(vec![reasoning("let me see"), content("<think>hmm</think>Cat"), content(".")]);
    let sink = RecordingSink::default();
    let answer = read_image(&ws_with_png(), &vlm, &sink, "shot.png", None, None).unwrap();
    assert_eq!(answer, "Cat.");
    let seen = sink.0.borrow();
    assert!(seen.contains(&(ChunkKind::Reasoning, "let me see".into())));
    assert!(seen.contains(&(ChunkKind::Reasoning, "hmm".into())));
}

#[test]
fn files_that_are_not_images_are_named_by_what_they_are() {
    let ws = FakeWorkspace::default().with("doc.png", EntryType::File, b"%PDF-1.7 ...".to_vec()).with(
        "notes.png",
        EntryType::File,
        b"just some text".to_vec(),
    );
    let vlm = FakeVlm::replying(vec![]);
    // A PDF (whatever its name) is a page to render, not "not an image"; this one has no pages.
    let e = read_image(&ws, &vlm, &RecordingSink::default(), "doc.png", None, None).unwrap_err();
    assert_eq!(e.code, ToolErrorCode::Refused);
    assert!(e.message.starts_with("error: the PDF doc.png cannot be shown to the model: "), "{}", e.message);
    let e = read_image(&ws, &vlm, &RecordingSink::default(), "notes.png", None, None).unwrap_err();
    assert!(e.message.starts_with("error: not an image (detected text/plain)"));
    assert!(vlm.asked.borrow().is_empty());
}

#[test]
fn an_image_the_gate_refuses_comes_back_in_words() {
    // Cut before a whole row of its pixels arrived (a PNG cut later is repaired, not refused).
    let truncated = crate::test_images::png_header_only_with(64, 64, 8, 2);
    let ws = FakeWorkspace::default()
        .with("icon.svg", EntryType::File, b"<svg xmlns='http://www.w3.org/2000/svg'/>".to_vec())
        .with("cut.png", EntryType::File, truncated);
    let vlm = FakeVlm::replying(vec![content("an icon")]);
    // The tool converts by default: with the converters an SVG is rendered and sent as a PNG;
    // a build without them (preflight's feature set) refuses it in words.
    let svg = read_image(&ws, &vlm, &RecordingSink::default(), "icon.svg", None, None);
    if crate::convert::AVAILABLE {
        assert!(svg.is_ok(), "{svg:?}");
        assert_eq!(vlm.asked.borrow()[0].1, "image/png");
    } else {
        let e = svg.unwrap_err();
        assert_eq!(e.code, ToolErrorCode::Refused);
        assert!(e.message.contains("mime_unsupported") && e.message.contains("image/svg+xml"), "{}", e.message);
    }
    let vlm = FakeVlm::replying(vec![]);
    let e = read_image(&ws, &vlm, &RecordingSink::default(), "cut.png", None, None).unwrap_err();
    assert!(e.message.contains("undecodable"), "the tool decodes every pixel: {}", e.message);
}

#[test]
fn paths_are_confined_and_checked_before_reading() {
    let ws = ws_with_png().with("dir", EntryType::Directory, vec![]).with("pipe", EntryType::Other("a FIFO"), vec![]);
    let vlm = FakeVlm::replying(vec![]);
    let sink = RecordingSink::default();
    let code = |p: &str| read_image(&ws, &vlm, &sink, p, None, None).unwrap_err().code;
    assert_eq!(code("missing.png"), ToolErrorCode::NotFound);
    assert_eq!(code("../shot.png"), ToolErrorCode::OutsideWorkspace);
    assert_eq!(code("/etc/passwd"), ToolErrorCode::OutsideWorkspace);
    assert_eq!(code("escape.png"), ToolErrorCode::OutsideWorkspace);
    assert_eq!(code("dir"), ToolErrorCode::NotAFile);
    assert_eq!(code("pipe"), ToolErrorCode::NotAFile);
    assert_eq!(code("."), ToolErrorCode::NotAFile);
    assert!(ws.reads.borrow().is_empty(), "nothing was opened");
    assert_eq!(read_image(&ws, &vlm, &sink, "/ws/shot.png", None, None).unwrap_err().code, ToolErrorCode::VlmFailed);
}

#[test]
fn the_read_cap_is_checked_before_and_while_reading() {
    let big = FakeWorkspace::default().with("big.png", EntryType::File, vec![0; RAW_CAP_DOWNSAMPLE as usize + 1]);
    let e = read_workspace_file(&big, "big.png").unwrap_err();
    assert_eq!(e.code, ToolErrorCode::TooLarge);
    assert!(big.reads.borrow().is_empty(), "refused from its size, unread");
    let mut growing = FakeWorkspace::default().with("g.png", EntryType::File, vec![0; RAW_CAP_DOWNSAMPLE as usize]);
    growing.grows_by = 10;
    assert_eq!(read_workspace_file(&growing, "g.png").unwrap_err().code, ToolErrorCode::TooLarge);
}

#[test]
fn a_cut_stream_returns_the_partial_answer_marked() {
    let vlm = FakeVlm::replying(vec![content("Half an"), Err(VlmError::TimedOut("idle for 30s".into()))]);
    let answer = read_image(&ws_with_png(), &vlm, &RecordingSink::default(), "shot.png", None, None).unwrap();
    assert!(answer.starts_with("Half an") && answer.contains("incomplete"), "{answer}");
    let vlm = FakeVlm::replying(vec![Err(VlmError::Refused { status: 401, message: "bad key".into() })]);
    let e = read_image(&ws_with_png(), &vlm, &RecordingSink::default(), "shot.png", None, None).unwrap_err();
    assert_eq!(e.code, ToolErrorCode::VlmFailed);
    assert!(e.message.contains("401") && e.message.contains("bad key"));
}

/// A model that never stops: every pull gets another chunk, numbered (so the tail read can be
/// told apart); pulls are counted.
struct EndlessVlm {
    kind: ChunkKind,
    text: String,
    pulls: std::rc::Rc<std::cell::Cell<usize>>,
}

impl EndlessVlm {
    /// The chunk the `n`th pull (from 0) gets.
    fn chunk(&self, n: usize) -> String {
        format!("{}{n:09}\n", self.text)
    }
}

struct EndlessReply<'a>(&'a EndlessVlm);

impl Reply for EndlessReply<'_> {
    fn next_chunk(&mut self) -> Result<Option<Chunk>, VlmError> {
        let n = self.0.pulls.get();
        self.0.pulls.set(n + 1);
        Ok(Some(Chunk { kind: self.0.kind, text: self.0.chunk(n) }))
    }
}

impl Vlm for EndlessVlm {
    fn configured(&self) -> bool {
        true
    }
    fn provider(&self) -> Provider {
        Provider::Anthropic
    }
    fn ask(&self, _prompt: &str, _mime: &str, _data: Vec<u8>) -> Result<Box<dyn Reply + '_>, VlmError> {
        Ok(Box::new(EndlessReply(self)))
    }
}

fn endless(kind: ChunkKind, text: &str) -> EndlessVlm {
    EndlessVlm { kind, text: text.to_string(), pulls: Default::default() }
}

/// A reply of exactly `n` characters (some of them two and three bytes long) whose last line
/// names `n`, so a tail that reaches the answer is told apart from any other.
fn reply_of(n: usize) -> String {
    let last = format!("\nthe last line of the {n}-character reply");
    let body_chars = n - last.chars().count();
    let lines = (0..).map(|line| format!("line {line:06}: café ✓ naïve — 0123456789\n"));
    let body: String = lines.flat_map(|l| l.chars().collect::<Vec<_>>()).take(body_chars).collect();
    body + &last
}

/// Pieces of `text` of about `size` bytes, split at character boundaries.
fn pieces(text: &str, size: usize) -> Vec<Result<Chunk, VlmError>> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut at = size.min(rest.len());
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        out.push(content(&rest[..at]));
        rest = &rest[at..];
    }
    out
}

/// The sink's text of one kind with the notices about live output taken out.
fn streamed(sink: &RecordingSink, kind: ChunkKind) -> String {
    let text: String = sink.0.borrow().iter().filter(|(k, _)| *k == kind).map(|(_, t)| t.as_str()).collect();
    text.replacen(&pause_notice(kind), "", 1).replacen(&will_cut_notice(kind), "", 1)
}

#[test]
fn replies_up_to_the_cap_are_whole_and_longer_ones_cut_in_the_middle_exactly() {
    for n in [199_999, 200_000, 200_001, 300_000, 999_999] {
        let text = reply_of(n);
        let vlm = FakeVlm::replying(pieces(&text, 4_099));
        let sink = RecordingSink::default();
        let answer = read_image(&ws_with_png(), &vlm, &sink, "shot.png", None, None).unwrap();
        let last = format!("\nthe last line of the {n}-character reply");
        assert!(answer.ends_with(&last), "{n}: the last line reached the answer");
        if n <= 200_000 {
            assert_eq!(answer, text, "{n}: whole");
        } else {
            assert_eq!(answer.chars().count(), 200_000, "{n}");
            let head: String = text.chars().take(100_000).collect();
            assert!(answer.starts_with(&head), "{n}: the head is the first 100,000 characters");
            let marker_at = head.len();
            let marker_end = answer[marker_at..].find(" …]\n\n").unwrap() + marker_at + " …]\n\n".len();
            let marker = &answer[marker_at..marker_end];
            let tail = &answer[marker_end..];
            let stated: usize = marker
                .strip_prefix("\n\n[… ")
                .and_then(|m| m.strip_suffix(" characters cut from the middle by mediagate …]\n\n"))
                .unwrap_or_else(|| panic!("{n}: marker {marker:?}"))
                .parse()
                .unwrap();
            assert!(text.ends_with(tail), "{n}: the tail is the reply's last characters");
            assert_eq!(100_000 + stated + tail.chars().count(), n, "{n}: the marker states exactly what was cut");
        }
        assert_eq!(answer, expected_cut(&text, ""), "{n}");
        assert_eq!(streamed(&sink, ChunkKind::Content), answer, "{n}: the live stream, notices out, is the answer");
        let live: String = sink.0.borrow().iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(live.contains(&pause_notice(ChunkKind::Content)), n > 100_000, "{n}");
        assert_eq!(live.contains(&will_cut_notice(ChunkKind::Content)), n > 200_000, "{n}: the watcher is told");
        let head: String = text.chars().take(100_000).collect();
        assert!(live.starts_with(&head), "{n}: the head streamed live");
        if n > 100_000 {
            assert!(live[head.len()..].starts_with(&pause_notice(ChunkKind::Content)), "{n}: then the notice");
        }
    }
}

#[test]
fn an_endless_reply_is_cut_at_the_read_bound_with_its_last_characters_and_a_note() {
    let vlm = endless(ChunkKind::Content, "all work and no play ");
    let sink = RecordingSink::default();
    let answer = read_image(&ws_with_png(), &vlm, &sink, "shot.png", None, None).unwrap();
    let chunk_chars = vlm.chunk(0).chars().count();
    assert_eq!(vlm.pulls.get(), READ_BOUND_CHARS.div_ceil(chunk_chars), "not one chunk pulled past the bound");
    let read: String = (0..vlm.pulls.get()).map(|n| vlm.chunk(n)).collect::<String>().chars().take(1_000_000).collect();
    let note = "\n\n[mediagate: the reply was cut off (it did not end within 1000000 characters, and mediagate \
                stopped reading it); the answer above is incomplete]";
    assert_eq!(answer, expected_cut(&read, note));
    assert_eq!(answer.chars().count(), 200_000);
    assert_eq!(streamed(&sink, ChunkKind::Content), answer);
}

#[test]
fn endless_reasoning_is_cut_the_same_way_and_named() {
    for vlm in [endless(ChunkKind::Reasoning, "hmm "), endless(ChunkKind::Content, "<think>hmm ")] {
        let sink = RecordingSink::default();
        let e = read_image(&ws_with_png(), &vlm, &sink, "shot.png", None, None).unwrap_err();
        assert_eq!(e.code, ToolErrorCode::VlmFailed);
        assert!(e.message.contains("reasoned for more than 1000000 characters without answering"), "{}", e.message);
        assert!(vlm.pulls.get() <= READ_BOUND_CHARS / 10 + 1);
        let reasoning = streamed(&sink, ChunkKind::Reasoning);
        assert_eq!(reasoning.chars().count(), 200_000);
        assert!(reasoning.contains(" characters cut from the middle by mediagate …]"));
        assert_eq!(streamed(&sink, ChunkKind::Content), "", "nothing of it reached the answer");
    }
    // Reasoning that runs away after some answer: the answer so far, marked.
    let vlm = FakeVlm::replying(vec![content("The answer"), reasoning(&"r".repeat(READ_BOUND_CHARS))]);
    let answer = read_image(&ws_with_png(), &vlm, &RecordingSink::default(), "shot.png", None, None).unwrap();
    assert!(answer.starts_with("The answer\n\n[mediagate: the reply was cut off (it did not end within"), "{answer}");
}

#[test]
fn long_reasoning_is_cut_in_the_middle_and_never_mixed_into_the_answer() {
    let thought = reply_of(300_000);
    for script in [
        vec![reasoning(&thought), content("A cat.")],
        vec![content(&format!("<think>{thought}</think>A ")), content("cat.")],
    ] {
        let sink = RecordingSink::default();
        let answer = read_image(&ws_with_png(), &FakeVlm::replying(script), &sink, "shot.png", None, None).unwrap();
        assert_eq!(answer, "A cat.");
        assert_eq!(streamed(&sink, ChunkKind::Reasoning), expected_cut(&thought, ""));
        assert_eq!(streamed(&sink, ChunkKind::Content), "A cat.");
    }
}

#[test]
fn a_reply_that_ends_exactly_at_the_read_bound_is_not_a_runaway() {
    let text = reply_of(READ_BOUND_CHARS);
    let answer = read_image(
        &ws_with_png(),
        &FakeVlm::replying(pieces(&text, 65_536)),
        &RecordingSink::default(),
        "shot.png",
        None,
        None,
    )
    .unwrap();
    assert_eq!(answer, expected_cut(&text, ""), "ended: no note");
    let mut script = pieces(&text, 65_536);
    script.push(content("!"));
    let answer =
        read_image(&ws_with_png(), &FakeVlm::replying(script), &RecordingSink::default(), "shot.png", None, None)
            .unwrap();
    assert!(answer.ends_with("characters, and mediagate stopped reading it); the answer above is incomplete]"));
    assert!(answer.contains("the last line of the 1000000-character reply\n\n[mediagate: the reply was cut off"));
}

fn animated_gif() -> Vec<u8> {
    use image::codecs::gif::GifEncoder;
    use image::{Delay, Frame};
    let mut bytes = Vec::new();
    let mut enc = GifEncoder::new(&mut bytes);
    for _ in 0..2 {
        let frame =
            Frame::from_parts(crate::test_images::gradient(8, 8).to_rgba8(), 0, 0, Delay::from_numer_denom_ms(100, 1));
        enc.encode_frame(frame).unwrap();
    }
    drop(enc);
    bytes
}

#[test]
fn the_image_is_admitted_under_the_profile_of_the_api_the_model_speaks() {
    let ws = FakeWorkspace::default().with("anim.gif", EntryType::File, animated_gif());
    // Anthropic accepts animated GIFs; OpenAI takes still GIFs only.
    let vlm = FakeVlm::replying(vec![content("frames")]);
    assert_eq!(read_image(&ws, &vlm, &RecordingSink::default(), "anim.gif", None, None).unwrap(), "frames");
    let vlm = FakeVlm { provider: Provider::OpenAi, ..FakeVlm::replying(vec![content("frames")]) };
    let openai = read_image(&ws, &vlm, &RecordingSink::default(), "anim.gif", None, None);
    if crate::convert::AVAILABLE {
        // The tool converts by default: OpenAI is sent the first frame, as a PNG.
        assert_eq!(openai.unwrap(), "frames");
        assert_eq!(vlm.asked.borrow()[0].1, "image/png");
    } else {
        let e = openai.unwrap_err();
        assert_eq!(e.code, ToolErrorCode::Refused);
        assert!(e.message.contains("mime_unsupported"), "{}", e.message);
        assert!(vlm.asked.borrow().is_empty(), "nothing was sent");
    }
}

#[test]
fn a_reply_stopped_at_the_output_limit_is_marked_incomplete() {
    let stop = || Err(VlmError::StoppedEarly("the model reached its output limit (finish_reason \"length\")".into()));
    let vlm = FakeVlm::replying(vec![content("The first half"), stop()]);
    let sink = RecordingSink::default();
    let answer = read_image(&ws_with_png(), &vlm, &sink, "shot.png", None, None).unwrap();
    assert!(answer.starts_with("The first half\n\n[mediagate: the reply was cut off ("), "{answer}");
    assert!(answer.contains("output limit") && answer.ends_with("the answer above is incomplete]"), "{answer}");
    let streamed: String = sink.0.borrow().iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(streamed, answer, "the sink saw the marker too");
    // Nothing before the stop: an error, not an empty answer.
    let vlm = FakeVlm::replying(vec![stop()]);
    let e = read_image(&ws_with_png(), &vlm, &RecordingSink::default(), "shot.png", None, None).unwrap_err();
    assert_eq!(e.code, ToolErrorCode::VlmFailed);
    assert!(e.message.contains("stopped before its reply was complete"), "{}", e.message);
}

#[test]
fn a_page_applies_to_pdfs_only() {
    let vlm = FakeVlm::replying(vec![content("never")]);
    let e = read_image(&ws_with_png(), &vlm, &RecordingSink::default(), "shot.png", None, Some(2)).unwrap_err();
    assert_eq!(e.code, ToolErrorCode::Refused);
    assert_eq!(
        e.message,
        "error: page 2 was asked for, but page applies to PDFs only; shot.png is image/png, not a PDF"
    );
    assert!(vlm.asked.borrow().is_empty());
}

#[test]
fn each_way_a_pdf_page_fails_has_its_own_words_naming_the_file() {
    use crate::verdict::{Reason, Refusal};
    let words = |e: PageError| {
        let t = page_error(&e, "docs/spec.pdf");
        assert_eq!(t.code, ToolErrorCode::Refused);
        assert!(t.message.starts_with("error: the PDF docs/spec.pdf cannot be shown to the model: "), "{}", t.message);
        t.message
    };
    assert!(
        words(PageError::NoSuchPage { requested: 7, count: 3 })
            .ends_with("page 7 does not exist: the PDF has 3 page(s), numbered from 1")
    );
    assert!(words(PageError::Encrypted("the PDF is encrypted with a password; …".into())).contains("password"));
    assert!(words(PageError::Blank { page: 2 }).contains("page 2 of the PDF renders to nothing"));
    let r = Refusal::new(Reason::Undecodable, 10, None, "the PDF cannot be read");
    assert!(words(PageError::Refused(r)).ends_with("undecodable — the PDF cannot be read"));
}

#[test]
fn a_pdf_in_the_workspace_is_not_sent_when_its_page_cannot_be_made() {
    let ws = FakeWorkspace::default().with("broken.pdf", EntryType::File, b"%PDF-1.7\nnot a pdf\n".to_vec());
    let vlm = FakeVlm::replying(vec![content("never")]);
    for page in [None, Some(1), Some(9)] {
        let e = read_image(&ws, &vlm, &RecordingSink::default(), "broken.pdf", None, page).unwrap_err();
        assert_eq!(e.code, ToolErrorCode::Refused);
        assert!(e.message.contains("the PDF broken.pdf"), "{}", e.message);
    }
    assert!(vlm.asked.borrow().is_empty());
}

#[test]
fn the_schema_offers_a_page_from_one() {
    let schema: serde_json::Value = serde_json::from_str(PARAMETERS_SCHEMA).unwrap();
    assert_eq!(schema["properties"]["page"]["type"], "integer");
    assert_eq!(schema["properties"]["page"]["minimum"], 1);
    assert_eq!(schema["required"], serde_json::json!(["path"]));
    assert!(TOOL_DESCRIPTION.contains("PDF"));
}

#[test]
fn a_repaired_image_is_named_to_the_vision_model_and_in_the_answer() {
    let ws = FakeWorkspace::default().with("cut.png", EntryType::File, crate::test_images::cut_png(64, 64));
    let vlm = FakeVlm::replying(vec![content("Noise, then black.")]);
    let sink = RecordingSink::default();
    let answer = read_image(&ws, &vlm, &sink, "cut.png", Some("What is it?"), None).unwrap();
    let asked = &vlm.asked.borrow()[0].0;
    assert!(asked.starts_with("What is it?\n\n[mediagate] The image was repaired"), "{asked}");
    assert!(asked.contains("cut short"), "{asked}");
    assert!(
        answer.starts_with("Noise, then black.\n\n[mediagate] cut.png was repaired before the model saw it: the file"),
        "{answer}"
    );
    assert!(streamed(&sink, ChunkKind::Content).ends_with(answer.as_str()), "the sink has the note too");

    // A whole image: the question goes verbatim and the answer is the model's alone.
    let vlm = FakeVlm::replying(vec![content("A gradient.")]);
    let answer = read_image(&ws_with_png(), &vlm, &RecordingSink::default(), "shot.png", Some("Q"), None).unwrap();
    assert_eq!((answer.as_str(), vlm.asked.borrow()[0].0.as_str()), ("A gradient.", "Q"));
}
