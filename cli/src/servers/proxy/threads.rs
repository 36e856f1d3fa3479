//! The proxy's reader and writer threads: each peer's output split into bounded lines by the
//! servers' shared framing, and the messages for each peer written one a line.

use std::io::{BufRead, BufReader, Read, Write};

use super::channel::{Budgeted, Receiver, Sender};
use crate::servers::lines::{self, LineSplitter};

/// One line read from a peer.
pub(super) enum Line {
    Message(Vec<u8>),
    /// A line over the limit, discarded as it was read; its length.
    TooLong(u64),
    /// The peer closed its end (or reading failed: the error).
    End(Option<String>),
}

/// Reads newline-delimited messages, each at most `max` bytes held; longer lines are discarded as
/// they stream past. Blank lines are skipped.
pub(super) fn read_lines(reader: impl Read, max: usize, tx: Sender<Line>, runtime: &tokio::runtime::Handle) {
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut lines = LineSplitter::new(max);
    loop {
        let (line, at_end) = match reader.fill_buf() {
            // End of stream: a last line without its newline still counts.
            Ok([]) => (lines.finish(), true),
            Ok(available) => {
                let (used, line) = lines.push(available);
                reader.consume(used);
                (line, false)
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.blocking_send(Line::End(Some(e.to_string())), 0, runtime);
                return;
            }
        };
        if let Some(line) = line
            && !forward(line, &tx, runtime)
        {
            return;
        }
        if at_end {
            let _ = tx.blocking_send(Line::End(None), 0, runtime);
            return;
        }
    }
}

/// Sends a line just completed; false when the receiver is gone.
fn forward(line: lines::Line, tx: &Sender<Line>, runtime: &tokio::runtime::Handle) -> bool {
    let message = match line {
        lines::Line::TooLong(total) => return tx.blocking_send(Line::TooLong(total), 0, runtime).is_ok(),
        lines::Line::Whole(message) => message,
    };
    let trimmed = message.trim_ascii();
    if trimmed.is_empty() {
        return true;
    }
    let message = if trimmed.len() == message.len() { message } else { trimmed.to_vec() };
    let len = message.len();
    tx.blocking_send(Line::Message(message), len, runtime).is_ok()
}

/// Writes each message and a newline, flushing after each; ends when the channel closes or the
/// peer stops reading.
pub(super) fn write_lines(mut writer: impl Write, mut rx: Receiver<Vec<u8>>) {
    // The message keeps its share of the budget until it is written.
    while let Some(Budgeted { item: message, _share }) = rx.blocking_recv() {
        if writer.write_all(&message).and_then(|()| writer.write_all(b"\n")).and_then(|()| writer.flush()).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers::proxy::channel::channel;

    fn lines(input: &[u8], max: usize) -> Vec<String> {
        let (tx, mut rx) = channel(1 << 20);
        let input = input.to_vec();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let handle = runtime.handle().clone();
        std::thread::spawn(move || read_lines(&input[..], max, tx, &handle)).join().unwrap();
        let mut out = Vec::new();
        while let Ok(line) = rx.try_recv() {
            out.push(match line.item {
                Line::Message(m) => String::from_utf8(m).unwrap(),
                Line::TooLong(n) => format!("too long: {n}"),
                Line::End(e) => format!("end {e:?}"),
            });
        }
        out
    }

    #[test]
    fn lines_are_split_bounded_and_blank_ones_skipped() {
        assert_eq!(lines(b"{}\n\n  \r\n{\"a\":1}\r\nlast", 16), ["{}", "{\"a\":1}", "last", "end None"]);
        let long = format!("{}\n{{}}\n", "x".repeat(100));
        assert_eq!(lines(long.as_bytes(), 16), ["too long: 100", "{}", "end None"]);
        assert_eq!(lines(&[b'y'; 40], 16), ["too long: 40", "end None"]);
    }
}
