//! The entropy-coded bytes of a Huffman-coded JPEG scan, for both writers of one (the gate's
//! planar writer and the arithmetic-to-Huffman transcoder): bits packed from the most significant
//! end, four bytes at a time where none is 0xFF, a 0x00 stuffed after each 0xFF, and the last
//! partial byte padded with 1-bits before a restart marker and at the scan's end.

/// A value's magnitude category and its extra bits (a negative value one less, as jchuff writes
/// it): what a Huffman-coded DC difference or AC coefficient is written as.
#[inline(always)]
pub(crate) fn category(v: i32) -> (u32, u32) {
    let size = 32 - v.unsigned_abs().leading_zeros();
    let extra = (if v < 0 { v - 1 } else { v }) as u32 & ((1u32 << size) - 1);
    (size, extra)
}

pub(crate) struct HuffmanWriter {
    out: Vec<u8>,
    acc: u64,
    held: u32,
}

impl HuffmanWriter {
    /// Bits appended to `out` (what is written before the scan's data).
    pub(crate) fn new(out: Vec<u8>) -> HuffmanWriter {
        HuffmanWriter { out, acc: 0, held: 0 }
    }

    /// `len` (at most 32) bits of `value`, whose higher bits are zero.
    #[inline(always)]
    pub(crate) fn put(&mut self, value: u32, len: u32) {
        self.acc = self.acc << len | u64::from(value);
        self.held += len;
        if self.held >= 32 {
            self.held -= 32;
            let word = (self.acc >> self.held) as u32;
            if word & 0x8080_8080 & !word.wrapping_add(0x0101_0101) == 0 {
                self.out.extend_from_slice(&word.to_be_bytes());
            } else {
                for byte in word.to_be_bytes() {
                    self.out.push(byte);
                    if byte == 0xFF {
                        self.out.push(0);
                    }
                }
            }
        }
    }

    /// The last partial byte padded with 1-bits (libjpeg's 7 bits, whole bytes of them written),
    /// so that what follows (a restart marker, the next segment) starts on a byte.
    pub(crate) fn pad(&mut self) {
        self.acc = self.acc << 7 | 0x7F;
        self.held += 7;
        while self.held >= 8 {
            self.held -= 8;
            let byte = (self.acc >> self.held) as u8;
            self.out.push(byte);
            if byte == 0xFF {
                self.out.push(0);
            }
        }
        self.held = 0;
    }

    /// The bytes written, for a marker or segment between scans: only after [`Self::pad`].
    pub(crate) fn padded_bytes(&mut self) -> &mut Vec<u8> {
        debug_assert_eq!(self.held, 0, "bits pending");
        &mut self.out
    }

    /// Padded, the bytes written.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.pad();
        self.out
    }
}
