//! Shaping the VLM's streamed reply into the tool's answer: inline `<think>` blocks split out as
//! reasoning, and the answer capped by cutting its middle (a backstop: `tool.rs` stops reading a
//! reply at its own bound, below this cap).

use std::collections::VecDeque;

use crate::tool::ChunkKind;

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

/// Keeps at most `cap` characters of a streamed answer: the head and the tail, with a marker in
/// the middle that says how many characters were cut. Memory stays bounded however long the
/// stream runs.
pub struct AnswerBuffer {
    cap: usize,
    head_cap: usize,
    head: String,
    head_chars: usize,
    tail: VecDeque<char>,
    total: usize,
}

impl AnswerBuffer {
    pub fn new(cap: usize) -> Self {
        AnswerBuffer { cap, head_cap: cap / 2, head: String::new(), head_chars: 0, tail: VecDeque::new(), total: 0 }
    }

    pub fn push_str(&mut self, text: &str) {
        let tail_cap = self.cap - self.head_cap;
        for c in text.chars() {
            self.total += 1;
            if self.head_chars < self.head_cap {
                self.head.push(c);
                self.head_chars += 1;
            } else {
                self.tail.push_back(c);
                if self.tail.len() > tail_cap {
                    self.tail.pop_front();
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn finish(self) -> String {
        let mut out = self.head;
        if self.total <= self.cap {
            out.extend(self.tail);
            return out;
        }
        // The marker's own length counts against the cap, and its number is the count it states:
        // a fixed point, found by trying each digit count from the most. With `d` digits the cut is
        // `total - cap + marker length`, which falls by one as `d` does, so some `d` states its own
        // cut exactly (a fixed number of passes could print a count one higher than what was cut).
        let marker_for = |cut: usize| format!("\n\n[… {cut} characters cut from the middle by mediagate …]\n\n");
        let keep = |marker_chars: usize| {
            let budget = self.cap.saturating_sub(marker_chars);
            let head_keep = self.head_chars.min(budget - budget / 2);
            let tail_keep = (budget - head_keep).min(self.tail.len());
            (head_keep, tail_keep)
        };
        let digits = |n: usize| n.checked_ilog10().unwrap_or(0) as usize + 1;
        let base_chars = marker_for(0).chars().count() - 1;
        let (mut head_keep, mut tail_keep, mut cut) = (0, 0, self.total);
        for d in (1..=digits(self.total)).rev() {
            (head_keep, tail_keep) = keep(base_chars + d);
            cut = self.total - head_keep - tail_keep;
            if digits(cut) == d {
                break;
            }
        }
        let marker = marker_for(cut);
        let mut out: String = out.chars().take(head_keep).collect();
        out.push_str(&marker);
        out.extend(self.tail.iter().skip(self.tail.len() - tail_keep));
        out
    }
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
        let mut b = AnswerBuffer::new(10);
        b.push_str("0123456789");
        assert_eq!(b.finish(), "0123456789");
    }

    #[test]
    fn long_answers_are_cut_in_the_middle_to_exactly_the_cap() {
        let cap = 200;
        let mut b = AnswerBuffer::new(cap);
        let text: String = (0..1000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        for piece in text.as_bytes().chunks(7) {
            b.push_str(std::str::from_utf8(piece).unwrap());
        }
        let out = b.finish();
        assert_eq!(out.chars().count(), cap);
        let head = &out[..out.find("\n\n[… ").unwrap()];
        assert!(text.starts_with(head));
        let marker_start = out.find("[… ").unwrap() + "[… ".len();
        let cut: usize = out[marker_start..].split(' ').next().unwrap().parse().unwrap();
        let tail = &out[out.find("…]\n\n").unwrap() + "…]\n\n".len()..];
        assert!(text.ends_with(tail));
        assert_eq!(head.len() + cut + tail.chars().count(), 1000, "every character is kept or counted as cut");
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
    fn the_marker_states_exactly_what_was_cut_at_every_digit_boundary() {
        // The cut crosses 100 / 1000 (the marker's number loses a digit, which frees one
        // character) for some of these caps; the count must match the characters cut, never one
        // more.
        for total in [1_000usize, 1_001, 10_000, 10_050] {
            let text: String = (0..total).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            for cap in (total.saturating_sub(1_100)..total).step_by(1) {
                if cap < 80 {
                    continue;
                }
                let mut b = AnswerBuffer::new(cap);
                b.push_str(&text);
                let out = b.finish();
                let (head, cut, tail) = parts(&out);
                assert_eq!(head.len() + cut + tail.len(), total, "total {total}, cap {cap}: {cut} stated");
                assert_eq!(out.chars().count(), cap, "total {total}, cap {cap}");
            }
        }
    }

    #[test]
    fn the_cap_counts_characters_not_bytes() {
        let mut b = AnswerBuffer::new(100);
        b.push_str(&"é".repeat(100));
        assert_eq!(b.finish().chars().count(), 100);
        let mut b = AnswerBuffer::new(100);
        b.push_str(&"é".repeat(101));
        assert_eq!(b.finish().chars().count(), 100);
    }
}
