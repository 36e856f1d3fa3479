//! Shaping the VLM's streamed reply into the tool's answer: inline `<think>` blocks split out as
//! reasoning, and the answer (and the reasoning) capped by cutting the middle, with bounded memory.

use std::collections::VecDeque;

/// Which part of the model's reply a piece of text belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkKind {
    Content,
    Reasoning,
}

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// Splits streamed content into content and reasoning at `<think>…</think>`, even when a tag is
/// split across chunks.
#[derive(Default)]
pub struct ThinkSplitter {
    in_think: bool,
    pending: String,
}

impl ThinkSplitter {
    pub fn split(&mut self, text: &str) -> Vec<(ChunkKind, String)> {
        let mut buf = std::mem::take(&mut self.pending);
        buf.push_str(text);
        let mut out = Vec::new();
        let mut rest = buf.as_str();
        loop {
            let (tag, kind) = if self.in_think { (CLOSE, ChunkKind::Reasoning) } else { (OPEN, ChunkKind::Content) };
            if let Some(at) = rest.find(tag) {
                push(&mut out, kind, &rest[..at]);
                rest = &rest[at + tag.len()..];
                self.in_think = !self.in_think;
                continue;
            }
            // Hold back a tail that may be the start of the tag.
            let hold = (1..tag.len()).rev().find(|&n| rest.ends_with(&tag[..n])).unwrap_or(0);
            push(&mut out, kind, &rest[..rest.len() - hold]);
            self.pending = rest[rest.len() - hold..].to_string();
            return out;
        }
    }

    pub fn finish(&mut self) -> Vec<(ChunkKind, String)> {
        let kind = if self.in_think { ChunkKind::Reasoning } else { ChunkKind::Content };
        let mut out = Vec::new();
        push(&mut out, kind, &std::mem::take(&mut self.pending));
        out
    }
}

fn push(out: &mut Vec<(ChunkKind, String)>, kind: ChunkKind, text: &str) {
    if !text.is_empty() {
        out.push((kind, text.to_string()));
    }
}

/// The answer the tool returns is at most this many characters, marker and note included.
pub const ANSWER_CAP_CHARS: usize = 200_000;

/// A cut answer keeps exactly this many characters from its start: the part the sink saw live.
pub const HEAD_CHARS: usize = 100_000;

/// Keeps what a middle cut needs of a streamed text, in bounded memory however long the stream
/// runs: its first `head` characters and a ring of its last `cap - head`. An image description is
/// a read, and the end of a long read matters as much as its start.
pub struct CutBuffer {
    cap: usize,
    head_cap: usize,
    head: String,
    head_chars: usize,
    tail: VecDeque<char>,
    total: usize,
}

impl CutBuffer {
    pub fn new(cap: usize, head: usize) -> Self {
        assert!(head <= cap);
        CutBuffer { cap, head_cap: head, head: String::new(), head_chars: 0, tail: VecDeque::new(), total: 0 }
    }

    /// The answer's buffer: [`ANSWER_CAP_CHARS`] with a head of [`HEAD_CHARS`].
    pub fn answer() -> Self {
        CutBuffer::new(ANSWER_CAP_CHARS, HEAD_CHARS)
    }

    pub fn push_str(&mut self, text: &str) {
        let tail_cap = self.cap - self.head_cap;
        let mut rest = text;
        if self.head_chars < self.head_cap {
            let room = self.head_cap - self.head_chars;
            let at = rest.char_indices().nth(room).map_or(rest.len(), |(at, _)| at);
            let taken = rest[..at].chars().count();
            self.head.push_str(&rest[..at]);
            self.head_chars += taken;
            self.total += taken;
            rest = &rest[at..];
        }
        for c in rest.chars() {
            self.total += 1;
            if self.tail.len() == tail_cap {
                self.tail.pop_front();
            }
            self.tail.push_back(c);
        }
    }

    /// Characters pushed so far.
    pub fn total(&self) -> usize {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The text within `cap` characters, `note` (if any) at its end and counted against the cap:
    /// whole when it fits, else the head, a marker that says how many characters were cut, and as
    /// many of the last characters as fill the cap exactly.
    pub fn finish(self, note: Option<&str>) -> String {
        let note = note.unwrap_or("");
        let budget = self.cap.saturating_sub(note.chars().count());
        let mut out = self.head;
        if self.total <= budget {
            out.extend(self.tail);
            out.push_str(note);
            return out;
        }
        // The marker's own length counts against the cap, and its number is the count it states:
        // with `d` digits the cut is `total - budget + marker length`, which falls by one as `d`
        // does, so trying each digit count from the most finds the one whose cut has `d` digits
        // (a fixed number of passes could state a count one higher than what was cut).
        let digits = |n: usize| n.checked_ilog10().unwrap_or(0) as usize + 1;
        let base_chars = cut_marker(0).chars().count() - 1;
        let (mut tail_keep, mut cut) = (0, self.total);
        for d in (1..=digits(self.total)).rev() {
            tail_keep = budget.saturating_sub(self.head_chars + base_chars + d).min(self.tail.len());
            cut = self.total - self.head_chars - tail_keep;
            if digits(cut) == d {
                break;
            }
        }
        out.push_str(&cut_marker(cut));
        out.extend(self.tail.iter().skip(self.tail.len() - tail_keep));
        out.push_str(note);
        out
    }
}

/// Stands where the middle of a text was cut.
pub fn cut_marker(cut: usize) -> String {
    format!("\n\n[… {cut} characters cut from the middle by mediagate …]\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&str]) -> (String, String) {
        let mut s = ThinkSplitter::default();
        let mut parts: Vec<(ChunkKind, String)> = chunks.iter().flat_map(|c| s.split(c)).collect();
        parts.extend(s.finish());
        let pick = |k| parts.iter().filter(|(kind, _)| *kind == k).map(|(_, t)| t.as_str()).collect::<String>();
        (pick(ChunkKind::Content), pick(ChunkKind::Reasoning))
    }

    #[test]
    fn think_blocks_become_reasoning() {
        assert_eq!(run(&["<think>hmm</think>The answer"]), ("The answer".into(), "hmm".into()));
        assert_eq!(run(&["plain"]), ("plain".into(), "".into()));
    }

    #[test]
    fn tags_split_across_chunks_are_found() {
        assert_eq!(run(&["<thi", "nk>wei", "gh</th", "ink>Cat"]), ("Cat".into(), "weigh".into()));
        assert_eq!(run(&["a <", "b"]), ("a <b".into(), "".into()));
        assert_eq!(run(&["x</think"]), ("x</think".into(), "".into()));
    }

    #[test]
    fn an_unclosed_think_block_stays_reasoning() {
        assert_eq!(run(&["ok <think>still thinking"]), ("ok ".into(), "still thinking".into()));
    }

    #[test]
    fn answers_within_the_cap_are_whole() {
        let mut b = CutBuffer::new(10, 5);
        b.push_str("0123456789");
        assert_eq!(b.finish(None), "0123456789");
        let mut b = CutBuffer::new(10, 5);
        b.push_str("01234");
        assert_eq!(b.finish(Some("[n]")), "01234[n]", "a note goes at the end");
    }

    /// The count in the marker, and the text either side of it.
    fn parts(out: &str) -> (&str, usize, &str) {
        let head = &out[..out.find("\n\n[… ").unwrap()];
        let rest = &out[out.find("[… ").unwrap() + "[… ".len()..];
        let cut = rest.split(' ').next().unwrap().parse().unwrap();
        let tail = &out[out.find("…]\n\n").unwrap() + "…]\n\n".len()..];
        (head, cut, tail)
    }

    #[test]
    fn long_answers_keep_the_head_and_fill_the_cap_from_the_end() {
        let text: String = (0..1000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let mut b = CutBuffer::new(200, 100);
        for piece in text.as_bytes().chunks(7) {
            b.push_str(std::str::from_utf8(piece).unwrap());
        }
        let out = b.finish(None);
        assert_eq!(out.chars().count(), 200);
        let (head, cut, tail) = parts(&out);
        assert_eq!(head, &text[..100], "the head is exactly the first 100 characters");
        assert!(text.ends_with(tail));
        assert_eq!(head.len() + cut + tail.len(), 1000, "every character is kept or counted as cut");
    }

    #[test]
    fn the_marker_states_exactly_what_was_cut_at_every_digit_boundary() {
        // The cut crosses 10 / 100 / 1000 for some of these (the marker's number loses a digit,
        // which frees one character); the count must match the characters cut, never one more.
        for total in [200usize, 1_000, 1_001, 10_000, 10_050] {
            let text: String = (0..total).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            for cap in (total.saturating_sub(1_100)..total).step_by(1) {
                if cap < 130 {
                    continue;
                }
                let mut b = CutBuffer::new(cap, 40);
                b.push_str(&text);
                let out = b.finish(None);
                let (head, cut, tail) = parts(&out);
                assert_eq!(head.len(), 40);
                assert_eq!(head.len() + cut + tail.len(), total, "total {total}, cap {cap}: {cut} stated");
                assert_eq!(out.chars().count(), cap, "total {total}, cap {cap}");
            }
        }
    }

    #[test]
    fn a_note_counts_against_the_cap() {
        let text = "x".repeat(300);
        let mut b = CutBuffer::new(200, 100);
        b.push_str(&text);
        let out = b.finish(Some("\n[the end]"));
        assert_eq!(out.chars().count(), 200);
        assert!(out.ends_with("x\n[the end]"));
        let (head, cut, tail) = parts(out.strip_suffix("\n[the end]").unwrap());
        assert_eq!(head.len() + cut + tail.len(), 300);
        // A text that fits only without the note is cut to make room for it.
        let mut b = CutBuffer::new(200, 100);
        b.push_str(&"y".repeat(195));
        let out = b.finish(Some("\n[the end]"));
        assert_eq!(out.chars().count(), 200);
        assert!(out.contains(" characters cut from the middle"));
    }

    #[test]
    fn the_cap_counts_characters_not_bytes() {
        let mut b = CutBuffer::new(200, 100);
        b.push_str(&"é".repeat(200));
        assert_eq!(b.finish(None), "é".repeat(200));
        let mut b = CutBuffer::new(200, 100);
        for _ in 0..201 {
            b.push_str("é");
        }
        let out = b.finish(None);
        assert_eq!(out.chars().count(), 200);
        assert!(out.starts_with(&"é".repeat(100)) && out.ends_with("é"));
    }

    #[test]
    fn memory_stays_bounded_however_long_the_text() {
        let mut b = CutBuffer::new(200, 100);
        for _ in 0..10_000 {
            b.push_str("0123456789");
        }
        assert_eq!(b.total(), 100_000);
        assert_eq!(b.head.len(), 100);
        assert_eq!(b.tail.len(), 100, "the ring holds cap - head characters");
    }
}
