//! What the model is told when the gate repaired what it passes. A repaired image is not the
//! file its author made: rows that never arrived are shown empty, frames are clipped or left out,
//! an animation is shown as its still image. A model that reads such an image without a word may
//! take a black band for content or describe a frame the author never showed; so wherever an
//! admitted image reaches a model (a tool result, a request, `view_image`, `read_image`) these
//! words go beside it. What leaves the pixels the author's is no repair to speak of: metadata left
//! out, and a chunk whose checksum fails (an ancillary one left out, or image data checked intact,
//! `bad-crc`) — a note on every icon a common MCP server returns would teach the model nothing.

use crate::verdict::Admitted;

/// The kinds of [`crate::remux::DROPPED_KINDS`] that change what the model sees, each with the
/// words it is told, in the order they are said.
pub const REPAIR_WORDS: [(&str, &str); 5] = [
    ("cut-data", "the file was cut short, and any part of the picture that did not arrive is shown empty"),
    (
        "broken-scan",
        "part of its image data is damaged or missing, and is shown as common decoders show it (grey where no data reached)",
    ),
    ("broken-frames", "animation frames whose data do not decode were left out"),
    ("off-screen", "the parts of its frames that lay outside the picture were clipped"),
    ("animation", "its animation was left out, and this is its still image"),
];

/// The repairs among what was dropped, in words joined by `; `; `None` when nothing was repaired.
pub fn repair_words(dropped: &[&str]) -> Option<String> {
    let words: Vec<&str> =
        REPAIR_WORDS.iter().filter(|(kind, _)| dropped.contains(kind)).map(|(_, words)| *words).collect();
    (!words.is_empty()).then(|| words.join("; "))
}

impl Admitted {
    /// What the gate repaired in this image, in the words the model reads; `None` when nothing.
    pub fn repaired(&self) -> Option<String> {
        repair_words(&self.dropped)
    }
}

/// The note set beside a repaired block: `subject` names it ("The image (image/png) returned by
/// tool \"x\"", "shot.png").
pub fn repair_note(subject: &str, words: &str) -> String {
    format!("[mediagate] {subject} was repaired before the model saw it: {words}.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remux::DROPPED_KINDS;

    #[test]
    fn every_repair_is_a_dropped_kind() {
        for (kind, _) in REPAIR_WORDS {
            assert!(DROPPED_KINDS.contains(&kind), "{kind} is not a dropped kind");
        }
    }

    #[test]
    fn metadata_alone_is_no_repair_and_repairs_are_said_in_order() {
        assert_eq!(repair_words(&["exif", "xmp", "other-metadata", "stray-bytes", "trailing-bytes", "bad-crc"]), None);
        assert_eq!(repair_words(&[]), None);
        let words = repair_words(&["exif", "off-screen", "cut-data"]).expect("two repairs");
        assert!(words.starts_with("the file was cut short"), "{words}");
        assert!(words.ends_with("were clipped"), "{words}");
        assert_eq!(words.matches("; ").count(), 1, "{words}");
    }
}
