//! The gate's answers, independent of any binding: admitted blocks and refusals.

/// Why a block was refused. The names are the contract's vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Undecodable,
    MimeUnsupported,
    RawTooLarge,
    MagicMismatch,
    Base64TooLarge,
    DimensionsTooLarge,
    /// A rule of the request that carries the block (images per request, bytes per request)
    /// leaves no room for it.
    RequestLimit,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Undecodable => "undecodable",
            Reason::MimeUnsupported => "mime_unsupported",
            Reason::RawTooLarge => "raw_too_large",
            Reason::MagicMismatch => "magic_mismatch",
            Reason::Base64TooLarge => "base64_too_large",
            Reason::DimensionsTooLarge => "dimensions_too_large",
            Reason::RequestLimit => "request_limit",
        }
    }
}

/// What a refusal's `limit` counts, for the words that show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    Base64Bytes,
    /// Pixels in all (width × height).
    Pixels,
    /// Pixels along the largest side.
    PixelsPerSide,
    Images,
}

impl Unit {
    /// The unit a reason's limit is in unless the refusal says otherwise.
    fn of(reason: Reason) -> Unit {
        match reason {
            Reason::DimensionsTooLarge => Unit::Pixels,
            Reason::Base64TooLarge => Unit::Base64Bytes,
            _ => Unit::Bytes,
        }
    }

    pub fn words(self, n: u64) -> String {
        match self {
            Unit::Bytes => format!("{n} bytes"),
            Unit::Base64Bytes => format!("{n} base64 bytes"),
            Unit::Pixels => format!("{n} pixels"),
            Unit::PixelsPerSide => format!("{n} px per side"),
            Unit::Images => format!("{n} images"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub reason: Reason,
    pub raw_bytes: u64,
    pub limit: Option<u64>,
    /// What `limit` counts.
    pub unit: Unit,
    pub message: String,
}

impl Refusal {
    pub fn new(reason: Reason, raw_bytes: u64, limit: Option<u64>, message: impl Into<String>) -> Self {
        Refusal { reason, raw_bytes, limit, unit: Unit::of(reason), message: message.into() }
    }

    /// `raw` bytes over `cap`, the most `what` (`the read cap`, `the document cap`) lets through:
    /// the refusal; `None` within it.
    pub fn over_raw_cap(raw: u64, cap: u64, what: &str) -> Option<Self> {
        (raw > cap).then(|| {
            Refusal::new(Reason::RawTooLarge, raw, Some(cap), format!("{raw} bytes exceed {what} of {cap} bytes"))
        })
    }

    /// The same refusal with its limit counted in `unit`.
    pub fn in_unit(self, unit: Unit) -> Self {
        Refusal { unit, ..self }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Image,
    Document,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dimensions {
    pub width: u32,
    pub height: u32,
}

/// The admitted bytes: the input itself, or bytes the gate made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data {
    /// The admitted bytes are the input, byte for byte (nothing is copied).
    Unchanged,
    /// Re-encoded (or otherwise made by the gate).
    Bytes(Vec<u8>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admitted {
    pub kind: Kind,
    pub mime: &'static str,
    pub data: Data,
    pub original_size: u64,
    pub dimensions: Option<Dimensions>,
    /// Dimensions of the image as it was given (as stored, before any EXIF rotation).
    pub original_dimensions: Option<Dimensions>,
    pub resized: bool,
    pub reencoded: bool,
    /// Set when the admitted image was converted from a type no provider takes.
    pub converted: Option<Conversion>,
    /// What the canonical form left out of the input, by kind (`remux::DROPPED_KINDS`); empty
    /// when nothing was.
    pub dropped: Vec<&'static str>,
}

/// A conversion the gate made: from what, and what it did in words ("rendered at 1024x768",
/// "the first of 12 frames", "page 2 of 5 at 150 dpi").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversion {
    /// The canonical media type of the input (`image/svg+xml`, `image/bmp`, `image/tiff`,
    /// `image/vnd.microsoft.icon`, `image/gif`, `application/pdf`).
    pub from: &'static str,
    pub note: String,
}

/// A conversion reported by a walk (tool result, request): where the block sits, and what it
/// became. The contract's `conversion-made`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionMade {
    /// JSON Pointer (RFC 6901) of the block; empty for a single image.
    pub path: String,
    /// The input's canonical media type.
    pub from: String,
    /// The admitted block's media type.
    pub to: String,
    pub note: String,
}

impl ConversionMade {
    /// The conversion an admitted block carries, if any, at `path`.
    pub fn of(path: &str, admitted: &Admitted) -> Option<ConversionMade> {
        let c = admitted.converted.as_ref()?;
        Some(ConversionMade {
            path: path.to_string(),
            from: c.from.to_string(),
            to: admitted.mime.to_string(),
            note: c.note.clone(),
        })
    }
}

impl Admitted {
    /// Length of the admitted bytes.
    pub fn len(&self) -> u64 {
        match &self.data {
            Data::Unchanged => self.original_size,
            Data::Bytes(b) => b.len() as u64,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn base64_len(&self) -> u64 {
        base64_len(self.len())
    }

    /// The admitted bytes; `input` is what was judged.
    pub fn bytes<'a>(&'a self, input: &'a [u8]) -> &'a [u8] {
        match &self.data {
            Data::Unchanged => input,
            Data::Bytes(b) => b,
        }
    }

    /// The admitted bytes, owned; `input` is what was judged (moved, not copied, when unchanged).
    pub fn into_bytes(self, input: Vec<u8>) -> Vec<u8> {
        match self.data {
            Data::Unchanged => input,
            Data::Bytes(b) => b,
        }
    }

    /// The same block holding its bytes: `Unchanged` becomes `input` itself.
    pub fn owning(mut self, input: Vec<u8>) -> Admitted {
        if self.data == Data::Unchanged {
            self.data = Data::Bytes(input);
        }
        self
    }

    /// Base64 (standard, padded) of the admitted bytes; `input` is what was judged.
    pub fn base64(&self, input: &[u8]) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(self.bytes(input))
    }
}

pub type Verdict = Result<Admitted, Refusal>;

/// Length of the padded base64 form of `n` bytes: 4·⌈n/3⌉.
pub fn base64_len(n: u64) -> u64 {
    n.div_ceil(3) * 4
}

// Below the code the component runs, so that the line numbers its panic locations carry stay put.
impl Reason {
    /// Every reason, in the contract's order (the generated packages list them so).
    pub const ALL: [Reason; 7] = [
        Reason::MimeUnsupported,
        Reason::RawTooLarge,
        Reason::MagicMismatch,
        Reason::Base64TooLarge,
        Reason::Undecodable,
        Reason::DimensionsTooLarge,
        Reason::RequestLimit,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_len_is_exact() {
        assert_eq!(base64_len(0), 0);
        assert_eq!(base64_len(1), 4);
        assert_eq!(base64_len(3), 4);
        assert_eq!(base64_len(4), 8);
        // 3.75 MiB raw is exactly the 5 MiB base64 limit; one byte more is over it.
        assert_eq!(base64_len(3_932_160), 5_242_880);
        assert_eq!(base64_len(3_932_161), 5_242_884);
    }
}
