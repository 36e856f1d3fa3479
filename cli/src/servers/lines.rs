//! The stdio framing both servers read their peers with: one JSON-RPC message per line, each line
//! bounded. The splitter does no I/O, so the async reader of `mediagate mcp` and the reader threads
//! of `mediagate proxy` feed it the same way, whatever sizes their reads come in.
//!
//! A line is the bytes before a `\n`; a `\r` before it stays in the line (and counts towards the
//! bound), so each server decides what white space around a message means. A line longer than the
//! bound is dropped as it arrives, never held whole, so memory stays bounded whatever a peer
//! writes; only its length is kept, for the error that names it.

/// A complete line.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// The line, without its `\n`.
    Whole(Vec<u8>),
    /// The line had this many bytes (without its `\n`), more than the bound; none were kept.
    TooLong(u64),
}

/// Splits bytes into lines of at most `max` bytes held.
pub struct LineSplitter {
    max: usize,
    /// The current line so far, while it is within the bound.
    line: Vec<u8>,
    /// The current line's length so far, held or not.
    length: u64,
}

impl LineSplitter {
    pub fn new(max: usize) -> Self {
        LineSplitter { max, line: Vec::new(), length: 0 }
    }

    /// Takes `bytes` up to and including the first `\n`: how many bytes it took, and the line
    /// when they completed one. The caller keeps the rest, so no more than one line is ever
    /// taken from a read.
    pub fn push(&mut self, bytes: &[u8]) -> (usize, Option<Line>) {
        let (part, ends_line) = match bytes.iter().position(|&b| b == b'\n') {
            Some(at) => (&bytes[..at], true),
            None => (bytes, false),
        };
        self.length += part.len() as u64;
        if self.length <= self.max as u64 {
            self.line.extend_from_slice(part);
        } else if !self.line.is_empty() {
            self.line = Vec::new(); // over the bound: nothing more of it is held
        }
        let used = part.len() + usize::from(ends_line);
        (used, ends_line.then(|| self.take()))
    }

    /// At the end of the input: the last line, when it had bytes but no `\n`.
    pub fn finish(&mut self) -> Option<Line> {
        (self.length > 0).then(|| self.take())
    }

    fn take(&mut self) -> Line {
        let length = std::mem::take(&mut self.length);
        let line = std::mem::take(&mut self.line);
        if length > self.max as u64 { Line::TooLong(length) } else { Line::Whole(line) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of `input` fed in chunks of `chunk` bytes, then the end.
    fn split(input: &[u8], max: usize, chunk: usize) -> Vec<Line> {
        let mut splitter = LineSplitter::new(max);
        let mut lines = Vec::new();
        for mut bytes in input.chunks(chunk) {
            while !bytes.is_empty() {
                let (used, line) = splitter.push(bytes);
                lines.extend(line);
                bytes = &bytes[used..];
            }
        }
        lines.extend(splitter.finish());
        lines
    }

    fn whole(line: &[u8]) -> Line {
        Line::Whole(line.to_vec())
    }

    #[test]
    fn the_lines_are_the_same_wherever_the_chunks_end() {
        let input = b"{}\n\n  \r\n{\"a\":1}\r\n0123456789abcdef\nexactly10!\nlast";
        let expected = [
            whole(b"{}"),
            whole(b""),
            whole(b"  \r"),
            whole(b"{\"a\":1}\r"),
            Line::TooLong(16),
            whole(b"exactly10!"),
            whole(b"last"),
        ];
        for chunk in 1..=input.len() {
            assert_eq!(split(input, 10, chunk), expected, "chunks of {chunk} bytes");
        }
    }

    #[test]
    fn a_carriage_return_stays_in_the_line_and_counts_towards_the_bound() {
        // Split between the `\r` and the `\n`, and not.
        for chunk in [1, 4, 5, 6] {
            assert_eq!(split(b"abcd\r\nx", 5, chunk), [whole(b"abcd\r"), whole(b"x")], "chunks of {chunk}");
            assert_eq!(split(b"abcde\r\nx", 5, chunk), [Line::TooLong(6), whole(b"x")], "chunks of {chunk}");
        }
    }

    #[test]
    fn a_line_over_the_bound_is_counted_not_held_and_the_next_one_is_whole() {
        let mut splitter = LineSplitter::new(16);
        assert_eq!(splitter.push(&[b'x'; 10]), (10, None));
        assert_eq!(splitter.push(&[b'x'; 10]), (10, None));
        assert_eq!(splitter.line.capacity(), 0, "nothing of a line over the bound is held");
        assert_eq!(splitter.push(&[b'x'; 80]), (80, None));
        assert_eq!(splitter.line.capacity(), 0);
        assert_eq!(splitter.push(b"\n{}\n"), (1, Some(Line::TooLong(100))));
        assert_eq!(splitter.push(b"{}\n"), (3, Some(whole(b"{}"))));
        assert_eq!(splitter.finish(), None);
    }

    #[test]
    fn at_the_end_a_line_without_its_newline_counts_and_nothing_else_does() {
        assert_eq!(split(b"", 16, 1), []);
        assert_eq!(split(b"\n", 16, 1), [whole(b"")]);
        assert_eq!(split(b"{}\n", 16, 1), [whole(b"{}")]);
        assert_eq!(split(b"{}\n{", 16, 1), [whole(b"{}"), whole(b"{")]);
        assert_eq!(split(&[b'y'; 40], 16, 7), [Line::TooLong(40)]);
        assert_eq!(split(b"\r", 16, 1), [whole(b"\r")]);
    }
}
