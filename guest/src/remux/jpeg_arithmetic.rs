//! Arithmetic-coded JPEGs (SOF9 sequential, SOF10 progressive) transcoded losslessly to Huffman
//! coding, as `jpegtran` does. libjpeg-turbo, Pillow, ImageMagick and libvips decode arithmetic
//! coding; browsers and the gate's own decoder do not. The gate therefore passes the same DCT
//! coefficients in the coding every decoder reads, so what it judges is what every reader shows.
//!
//! The scans are decoded as libjpeg-turbo's `jdarith.c` decodes them — the QM-coder, its
//! statistics bins, the DAC conditioning (defaults L=0, U=1, K=5), restart intervals resetting the
//! statistics and predictors, and its treatment of damage: a marker met inside a scan's data feeds
//! zero bits to the end of the scan (or the restart interval), a bad code or a magnitude overflow
//! leaves the rest of the restart interval undecoded, restart markers out of sequence are
//! resynchronised as `jpeg_resync_to_restart` does. A file whose data runs to its end with no
//! marker is refused as truncated: libjpeg's arithmetic decoder cannot suspend for more data, so
//! Pillow refuses it too. What zero bits decode to can lie outside what Huffman coding of 8-bit
//! data holds (libjpeg clamps the pixels it makes of them); such a file is refused in words.
//!
//! Every scan is decoded into one coefficient buffer, then written as one sequential Huffman file
//! (baseline; extended when a quantisation table has 16-bit entries) with optimal tables
//! (`jpeg_gen_optimal_table`, Annex K.2): once all scans are read, the coefficients are what they
//! are, whatever the progression. The segments before the first scan other than the frame and its
//! entropy tables (APPn, COM, DQT, DRI) are copied in order, for the canonical walk to judge.

use crate::container::Broken;
use crate::limits::{DECODE_MAX_ALLOC, DECODE_MAX_PIXELS, JPEG_MAX_SCANS};
use crate::remux::huffman_writer::{HuffmanWriter, category};
use crate::remux::jpeg_scan::{NATURAL, huffman_codes};

fn broken<T>(message: impl Into<String>) -> Result<T, Broken> {
    Err(Broken(message.into()))
}

/// The transcoded file, or `None` when the frame is not arithmetic-coded. Only the marker
/// segments before the frame are walked for that answer: it runs on every JPEG.
pub(crate) fn to_huffman(bytes: &[u8]) -> Result<Option<Vec<u8>>, Broken> {
    if !is_arithmetic(bytes) {
        return Ok(None);
    }
    let decoded = decode(bytes)?;
    encode(&decoded).map(Some)
}

/// Whether the frame header met before the first scan is SOF9 or SOF10. Anything malformed is
/// left to the canonical walk, which refuses or repairs it.
fn is_arithmetic(bytes: &[u8]) -> bool {
    if !bytes.starts_with(&[0xFF, 0xD8]) {
        return false;
    }
    let mut at = 2;
    loop {
        while at < bytes.len()
            && !(bytes[at] == 0xFF && matches!(bytes.get(at + 1), Some(&b) if b != 0x00 && b != 0xFF))
        {
            at += 1;
        }
        let Some(&marker) = bytes.get(at + 1) else { return false };
        match marker {
            0xC9 | 0xCA => return true,
            0xD0..=0xD7 | 0x01 => {
                at += 2;
                continue;
            }
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xCC) => return false,
            0xD8..=0xDA => return false,
            _ => {}
        }
        let Some(len) = bytes.get(at + 2..at + 4).map(|l| usize::from(u16::from_be_bytes([l[0], l[1]]))) else {
            return false;
        };
        if len < 2 {
            return false;
        }
        at += 2 + len;
    }
}

// ---------------------------------------------------------------------------------------------
// The frame and its coefficients

type Block = [i16; 64];

struct Component {
    id: u8,
    h: usize,
    v: usize,
    quant_table: u8,
    /// The blocks holding image pixels (what a non-interleaved scan codes).
    width_in_blocks: usize,
    height_in_blocks: usize,
    /// The buffer's width: whole MCUs, as an interleaved scan codes them.
    blocks_wide: usize,
    coefficients: Vec<Block>,
}

impl Component {
    fn block_mut(&mut self, x: usize, y: usize) -> Option<&mut Block> {
        self.coefficients.get_mut(y.checked_mul(self.blocks_wide)?.checked_add(x)?)
    }

    fn block(&self, x: usize, y: usize) -> Block {
        self.coefficients.get(y * self.blocks_wide + x).copied().unwrap_or([0; 64])
    }
}

struct Frame {
    progressive: bool,
    width: u16,
    height: u16,
    components: Vec<Component>,
    mcus_wide: usize,
    mcus_high: usize,
}

/// What the Huffman file is written from.
struct Decoded<'a> {
    frame: Frame,
    /// Segments before the first scan to copy (APPn, COM, DQT, DRI), whole, in order; then DQTs
    /// met between scans that define tables not defined before.
    segments: Vec<&'a [u8]>,
    restart_interval: u16,
    /// A quantisation table has 16-bit entries, which baseline coding cannot carry.
    extended: bool,
}

/// SOF9/SOF10 as libjpeg's `get_sof` and `initial_setup` read it.
fn frame(marker: u8, payload: &[u8]) -> Result<Frame, Broken> {
    let &[precision, h1, h0, w1, w0, count, ref specs @ ..] = payload else {
        return broken("the arithmetic-coded JPEG's frame header is too short");
    };
    if precision != 8 {
        return broken(format!(
            "the arithmetic-coded JPEG has {precision}-bit samples; only 8-bit arithmetic JPEGs are transcoded"
        ));
    }
    let (height, width) = (u16::from_be_bytes([h1, h0]), u16::from_be_bytes([w1, w0]));
    if height == 0 || width == 0 {
        return broken("the arithmetic-coded JPEG's frame declares an empty image (a height set by DNL is not read)");
    }
    if !(1..=4).contains(&count) {
        return broken(format!("the arithmetic-coded JPEG's frame has {count} components; 1 to 4 are transcoded"));
    }
    if specs.len() != 3 * usize::from(count) {
        return broken("the arithmetic-coded JPEG's frame header length does not match its component count");
    }
    let pixels = u64::from(width) * u64::from(height);
    if pixels > DECODE_MAX_PIXELS {
        return broken(format!(
            "the arithmetic-coded JPEG's frame is {width}x{height} = {pixels} pixels, over the limit of {DECODE_MAX_PIXELS}"
        ));
    }
    let mut components = Vec::new();
    for spec in specs.chunks_exact(3) {
        let (h, v) = (usize::from(spec[1] >> 4), usize::from(spec[1] & 15));
        if !(1..=4).contains(&h) || !(1..=4).contains(&v) {
            return broken(format!("the arithmetic-coded JPEG's component {} has bad sampling factors", spec[0]));
        }
        if spec[2] > 3 {
            return broken(format!(
                "the arithmetic-coded JPEG's component {} names quantisation table {}",
                spec[0], spec[2]
            ));
        }
        components.push(Component {
            id: spec[0],
            h,
            v,
            quant_table: spec[2],
            width_in_blocks: 0,
            height_in_blocks: 0,
            blocks_wide: 0,
            coefficients: Vec::new(),
        });
    }
    let max_h = components.iter().map(|c| c.h).max().unwrap_or(1);
    let max_v = components.iter().map(|c| c.v).max().unwrap_or(1);
    let (width, height) = (usize::from(width), usize::from(height));
    let mcus_wide = width.div_ceil(8 * max_h);
    let mcus_high = height.div_ceil(8 * max_v);
    // The buffer holds whole MCUs (libjpeg's `jround_up` to the sampling factors): 64 coefficients
    // of 2 bytes each per block, no more than 2 bytes a sample of each component.
    let blocks: usize = components.iter().map(|c| mcus_wide * c.h * mcus_high * c.v).sum();
    let buffer = blocks as u64 * std::mem::size_of::<Block>() as u64;
    if buffer > DECODE_MAX_ALLOC {
        return broken(format!(
            "the arithmetic-coded JPEG's coefficients take {buffer} bytes, over the decoder's bound of {DECODE_MAX_ALLOC}"
        ));
    }
    for c in &mut components {
        c.width_in_blocks = (width * c.h).div_ceil(8 * max_h);
        c.height_in_blocks = (height * c.v).div_ceil(8 * max_v);
        c.blocks_wide = mcus_wide * c.h;
        c.coefficients = vec![[0; 64]; c.blocks_wide * mcus_high * c.v];
    }
    Ok(Frame {
        progressive: marker == 0xCA,
        width: width as u16,
        height: height as u16,
        components,
        mcus_wide,
        mcus_high,
    })
}

// ---------------------------------------------------------------------------------------------
// Reading: the markers as jdmarker.c reads them, the scans as jdarith.c decodes them

/// The input as libjpeg's data source gives it: past the end, the fake EOI (`FF D9`) a stdio
/// source inserts, again and again.
struct Source<'a> {
    bytes: &'a [u8],
    at: usize,
    /// A marker the arithmetic decoder or a restart has read but no one has handled yet.
    unread_marker: u8,
    past_end: bool,
}

impl Source<'_> {
    fn byte(&mut self) -> u8 {
        let b = match self.bytes.get(self.at) {
            Some(&b) => b,
            None => {
                self.past_end = true;
                if (self.at - self.bytes.len()).is_multiple_of(2) { 0xFF } else { 0xD9 }
            }
        };
        self.at += 1;
        b
    }

    /// `next_marker`: skips anything up to the next `FF xx` that is no stuffed zero.
    fn next_marker(&mut self) -> u8 {
        loop {
            let mut c = self.byte();
            while c != 0xFF {
                c = self.byte();
            }
            while c == 0xFF {
                c = self.byte();
            }
            if c != 0 {
                return c;
            }
        }
    }

    /// The marker to handle next, read or already met.
    fn marker(&mut self) -> u8 {
        match std::mem::take(&mut self.unread_marker) {
            0 => self.next_marker(),
            m => m,
        }
    }
}

/// DAC conditioning by table (`arith_dc_L`, `arith_dc_U`, `arith_ac_K`), 16 tables as libjpeg
/// keeps them.
struct Conditioning {
    dc_l: [u8; 16],
    dc_u: [u8; 16],
    ac_k: [u8; 16],
}

impl Default for Conditioning {
    fn default() -> Self {
        Conditioning { dc_l: [0; 16], dc_u: [1; 16], ac_k: [5; 16] }
    }
}

impl Conditioning {
    /// `get_dac`.
    fn dac(&mut self, payload: &[u8]) -> Result<(), Broken> {
        if !payload.len().is_multiple_of(2) {
            return broken("the arithmetic-coded JPEG's DAC segment has a bad length");
        }
        for pair in payload.chunks_exact(2) {
            let (index, value) = (usize::from(pair[0]), pair[1]);
            match index {
                0..=15 => {
                    let (l, u) = (value & 15, value >> 4);
                    if l > u {
                        return broken(format!(
                            "the arithmetic-coded JPEG's DAC segment sets DC conditioning L={l} above U={u}"
                        ));
                    }
                    self.dc_l[index] = l;
                    self.dc_u[index] = u;
                }
                16..=31 => self.ac_k[index - 16] = value,
                _ => return broken(format!("the arithmetic-coded JPEG's DAC segment names table index {index}")),
            }
        }
        Ok(())
    }
}

/// `jpeg_aritab`: Qe in the high 16 bits, then Next_Index_MPS, then Switch_MPS (0x80) and
/// Next_Index_LPS in the low byte. The last entry is the fixed probability 0.5.
const ARITAB: [u32; 114] = {
    const fn v(qe: u32, nlps: u32, nmps: u32, switch: u32) -> u32 {
        (qe << 16) | (nmps << 8) | (switch << 7) | nlps
    }
    [
        v(0x5a1d, 1, 1, 1),
        v(0x2586, 14, 2, 0),
        v(0x1114, 16, 3, 0),
        v(0x080b, 18, 4, 0),
        v(0x03d8, 20, 5, 0),
        v(0x01da, 23, 6, 0),
        v(0x00e5, 25, 7, 0),
        v(0x006f, 28, 8, 0),
        v(0x0036, 30, 9, 0),
        v(0x001a, 33, 10, 0),
        v(0x000d, 35, 11, 0),
        v(0x0006, 9, 12, 0),
        v(0x0003, 10, 13, 0),
        v(0x0001, 12, 13, 0),
        v(0x5a7f, 15, 15, 1),
        v(0x3f25, 36, 16, 0),
        v(0x2cf2, 38, 17, 0),
        v(0x207c, 39, 18, 0),
        v(0x17b9, 40, 19, 0),
        v(0x1182, 42, 20, 0),
        v(0x0cef, 43, 21, 0),
        v(0x09a1, 45, 22, 0),
        v(0x072f, 46, 23, 0),
        v(0x055c, 48, 24, 0),
        v(0x0406, 49, 25, 0),
        v(0x0303, 51, 26, 0),
        v(0x0240, 52, 27, 0),
        v(0x01b1, 54, 28, 0),
        v(0x0144, 56, 29, 0),
        v(0x00f5, 57, 30, 0),
        v(0x00b7, 59, 31, 0),
        v(0x008a, 60, 32, 0),
        v(0x0068, 62, 33, 0),
        v(0x004e, 63, 34, 0),
        v(0x003b, 32, 35, 0),
        v(0x002c, 33, 9, 0),
        v(0x5ae1, 37, 37, 1),
        v(0x484c, 64, 38, 0),
        v(0x3a0d, 65, 39, 0),
        v(0x2ef1, 67, 40, 0),
        v(0x261f, 68, 41, 0),
        v(0x1f33, 69, 42, 0),
        v(0x19a8, 70, 43, 0),
        v(0x1518, 72, 44, 0),
        v(0x1177, 73, 45, 0),
        v(0x0e74, 74, 46, 0),
        v(0x0bfb, 75, 47, 0),
        v(0x09f8, 77, 48, 0),
        v(0x0861, 78, 49, 0),
        v(0x0706, 79, 50, 0),
        v(0x05cd, 48, 51, 0),
        v(0x04de, 50, 52, 0),
        v(0x040f, 50, 53, 0),
        v(0x0363, 51, 54, 0),
        v(0x02d4, 52, 55, 0),
        v(0x025c, 53, 56, 0),
        v(0x01f8, 54, 57, 0),
        v(0x01a4, 55, 58, 0),
        v(0x0160, 56, 59, 0),
        v(0x0125, 57, 60, 0),
        v(0x00f6, 58, 61, 0),
        v(0x00cb, 59, 62, 0),
        v(0x00ab, 61, 63, 0),
        v(0x008f, 61, 32, 0),
        v(0x5b12, 65, 65, 1),
        v(0x4d04, 80, 66, 0),
        v(0x412c, 81, 67, 0),
        v(0x37d8, 82, 68, 0),
        v(0x2fe8, 83, 69, 0),
        v(0x293c, 84, 70, 0),
        v(0x2379, 86, 71, 0),
        v(0x1edf, 87, 72, 0),
        v(0x1aa9, 87, 73, 0),
        v(0x174e, 72, 74, 0),
        v(0x1424, 72, 75, 0),
        v(0x119c, 74, 76, 0),
        v(0x0f6b, 74, 77, 0),
        v(0x0d51, 75, 78, 0),
        v(0x0bb6, 77, 79, 0),
        v(0x0a40, 77, 48, 0),
        v(0x5832, 80, 81, 1),
        v(0x4d1c, 88, 82, 0),
        v(0x438e, 89, 83, 0),
        v(0x3bdd, 90, 84, 0),
        v(0x34ee, 91, 85, 0),
        v(0x2eae, 92, 86, 0),
        v(0x299a, 93, 87, 0),
        v(0x2516, 86, 71, 0),
        v(0x5570, 88, 89, 1),
        v(0x4ca9, 95, 90, 0),
        v(0x44d9, 96, 91, 0),
        v(0x3e22, 97, 92, 0),
        v(0x3824, 99, 93, 0),
        v(0x32b4, 99, 94, 0),
        v(0x2e17, 93, 86, 0),
        v(0x56a8, 95, 96, 1),
        v(0x4f46, 101, 97, 0),
        v(0x47e5, 102, 98, 0),
        v(0x41cf, 103, 99, 0),
        v(0x3c3d, 104, 100, 0),
        v(0x375e, 99, 93, 0),
        v(0x5231, 105, 102, 0),
        v(0x4c0f, 106, 103, 0),
        v(0x4639, 107, 104, 0),
        v(0x415e, 103, 99, 0),
        v(0x5627, 105, 106, 1),
        v(0x50e7, 108, 107, 0),
        v(0x4b85, 109, 103, 0),
        v(0x5597, 110, 109, 0),
        v(0x504f, 111, 107, 0),
        v(0x5a10, 110, 111, 1),
        v(0x5522, 112, 109, 0),
        v(0x59eb, 112, 111, 1),
        v(0x5a1d, 113, 113, 0),
    ]
};

/// The state `fixed_bin` starts in: probability 0.5, never adapted.
const FIXED_BIN: u8 = 113;

/// The QM-coder's decoder registers (`arith_decode`), reading from the source.
struct Qm<'a> {
    src: Source<'a>,
    /// Base of the coding interval and the input bit buffer, the cut between them floating with
    /// `ct`.
    c: i64,
    /// The interval's normalised size.
    a: i64,
    /// Bits left in the buffer part of `c`: -16 before the first two bytes, -1 after a bad code
    /// (the rest of the restart interval is left zero).
    ct: i32,
}

impl Qm<'_> {
    /// Figure F.23's magnitude category: the top bit `m` doubled for each 1 decoded from bins
    /// `st`, `st + 1`, ...; the top bit and the bin whose 0 ended the run. `None` past 15 bits
    /// (libjpeg's "spectral overflow": the rest of the interval decodes as zeros).
    fn category(&mut self, stats: &mut [u8], mut st: usize, mut m: i32) -> Option<(i32, usize)> {
        while self.decode(&mut stats[st]) {
            m <<= 1;
            if m == 0x8000 {
                self.ct = -1;
                return None;
            }
            st += 1;
        }
        Some((m, st))
    }

    /// Figure F.24's magnitude bits below the top one `m`, each from bin `st` of `stats`, and
    /// the value they make (the magnitude category's offset, 1, added).
    fn magnitude(&mut self, stats: &mut [u8], st: usize, mut m: i32) -> i32 {
        let mut v = m;
        loop {
            m >>= 1;
            if m == 0 {
                break;
            }
            if self.decode(&mut stats[st]) {
                v |= m;
            }
        }
        v + 1
    }

    fn reset(&mut self) {
        self.c = 0;
        self.a = 0;
        self.ct = -16;
    }

    /// One binary decision with the adaptive statistics bin `st` (MPS in 0x80, state below).
    fn decode(&mut self, st: &mut u8) -> bool {
        while self.a < 0x8000 {
            self.ct -= 1;
            if self.ct < 0 {
                let data = if self.src.unread_marker != 0 {
                    // Past a marker a scan's data is zero bits, legally in arithmetic coding.
                    0
                } else {
                    let mut data = self.src.byte();
                    if data == 0xFF {
                        while data == 0xFF {
                            data = self.src.byte();
                        }
                        if data == 0 {
                            data = 0xFF;
                        } else {
                            self.src.unread_marker = data;
                            data = 0;
                        }
                    }
                    data
                };
                self.c = (self.c << 8) | i64::from(data);
                self.ct += 8;
                if self.ct < 0 {
                    self.ct += 1;
                    if self.ct == 0 {
                        // Two initial bytes read: A becomes 0x10000 as the loop ends.
                        self.a = 0x8000;
                    }
                }
            }
            self.a <<= 1;
        }
        let sv = *st;
        let entry = ARITAB[usize::from(sv & 0x7F)];
        let nl = (entry & 0xFF) as u8;
        let nm = ((entry >> 8) & 0xFF) as u8;
        let qe = i64::from(entry >> 16);
        let mut sv = sv;
        let temp = self.a - qe;
        self.a = temp;
        let temp = temp << self.ct.clamp(0, 31);
        if self.c >= temp {
            self.c -= temp;
            // Conditional LPS exchange.
            if self.a < qe {
                self.a = qe;
                *st = (sv & 0x80) ^ nm;
            } else {
                self.a = qe;
                *st = (sv & 0x80) ^ nl;
                sv ^= 0x80;
            }
        } else if self.a < 0x8000 {
            // Conditional MPS exchange.
            if self.a < qe {
                *st = (sv & 0x80) ^ nl;
                sv ^= 0x80;
            } else {
                *st = (sv & 0x80) ^ nm;
            }
        }
        sv >> 7 != 0
    }
}

/// What one scan codes, and how it is decoded.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Sequential,
    DcFirst,
    AcFirst,
    DcRefine,
    AcRefine,
}

struct Scan {
    /// Frame component index, DC table, AC table, per scan component.
    components: Vec<(usize, usize, usize)>,
    ss: usize,
    se: usize,
    al: u32,
    pass: Pass,
}

/// `get_sos` and `start_pass`'s checks.
fn scan(frame: &Frame, payload: &[u8]) -> Result<Scan, Broken> {
    let Some((&count, rest)) = payload.split_first() else {
        return broken("the arithmetic-coded JPEG's scan header is empty");
    };
    let count = usize::from(count);
    if !(1..=4).contains(&count) || rest.len() != 2 * count + 3 {
        return broken("the arithmetic-coded JPEG's scan header has a bad length or component count");
    }
    let mut components: Vec<(usize, usize, usize)> = Vec::new();
    for spec in rest[..2 * count].chunks_exact(2) {
        let found = frame
            .components
            .iter()
            .enumerate()
            .position(|(i, c)| c.id == spec[0] && !components.iter().any(|s| s.0 == i));
        let Some(index) = found else {
            return broken(format!(
                "the arithmetic-coded JPEG's scan names component {}, which its frame lacks",
                spec[0]
            ));
        };
        components.push((index, usize::from(spec[1] >> 4), usize::from(spec[1] & 15)));
    }
    let (ss, se) = (usize::from(rest[2 * count]), usize::from(rest[2 * count + 1]));
    let (ah, al) = (u32::from(rest[2 * count + 2] >> 4), u32::from(rest[2 * count + 2] & 15));
    let blocks: usize = components.iter().map(|s| frame.components[s.0].h * frame.components[s.0].v).sum();
    if count > 1 && blocks > 10 {
        return broken("the arithmetic-coded JPEG's scan has more than 10 blocks in an MCU");
    }
    let pass = if frame.progressive {
        let bad =
            if ss == 0 { se != 0 } else { se < ss || se > 63 || count != 1 } || (ah != 0 && ah - 1 != al) || al > 13;
        if bad {
            return broken(format!(
                "the arithmetic-coded JPEG's progressive scan is invalid (Ss={ss}, Se={se}, Ah={ah}, Al={al})"
            ));
        }
        match (ss == 0, ah == 0) {
            (true, true) => Pass::DcFirst,
            (false, true) => Pass::AcFirst,
            (true, false) => Pass::DcRefine,
            (false, false) => Pass::AcRefine,
        }
    } else {
        // libjpeg warns of other Ss, Se, Ah, Al in a sequential scan and decodes it whole.
        Pass::Sequential
    };
    Ok(Scan { components, ss, se, al, pass })
}

/// One scan's decoder (`arith_entropy_decoder`).
struct ScanDecoder<'a, 'c> {
    qm: Qm<'a>,
    conditioning: &'c Conditioning,
    dc_stats: [[u8; 64]; 16],
    ac_stats: [[u8; 256]; 16],
    fixed_bin: u8,
    last_dc: [i32; 4],
    dc_context: [usize; 4],
    restart_interval: u32,
    restarts_to_go: u32,
    next_restart: u8,
}

impl ScanDecoder<'_, '_> {
    /// `process_restart` with `read_restart_marker`.
    fn restart(&mut self, scan: &Scan, progressive: bool) {
        if self.qm.src.unread_marker == 0 {
            self.qm.src.unread_marker = self.qm.src.next_marker();
        }
        if self.qm.src.unread_marker == 0xD0 + self.next_restart {
            self.qm.src.unread_marker = 0;
        } else {
            self.resync();
        }
        self.next_restart = (self.next_restart + 1) & 7;
        for (ci, &(_, dc, ac)) in scan.components.iter().enumerate() {
            if !progressive || scan.pass == Pass::DcFirst {
                self.dc_stats[dc] = [0; 64];
                self.last_dc[ci] = 0;
                self.dc_context[ci] = 0;
            }
            if !progressive || scan.ss != 0 {
                self.ac_stats[ac] = [0; 256];
            }
        }
        self.qm.reset();
        self.restarts_to_go = self.restart_interval;
    }

    /// `jpeg_resync_to_restart`: a restart marker out of sequence is taken as the expected one,
    /// or as a later one (its interval's data then reads as zeros), or skipped as an earlier one.
    fn resync(&mut self) {
        let desired = self.next_restart;
        loop {
            let marker = self.qm.src.unread_marker;
            let earlier = |back: u8| marker == 0xD0 + ((desired + 8 - back) & 7);
            let later = |ahead: u8| marker == 0xD0 + ((desired + ahead) & 7);
            if marker < 0xC0 || ((0xD0..=0xD7).contains(&marker) && (earlier(1) || earlier(2))) {
                self.qm.src.unread_marker = self.qm.src.next_marker();
            } else if !(0xD0..=0xD7).contains(&marker) || later(1) || later(2) {
                return;
            } else {
                self.qm.src.unread_marker = 0;
                return;
            }
        }
    }

    /// Figures F.19 to F.24: a DC difference, conditioned on the previous one's category.
    /// `None`: a magnitude overflow (the rest of the interval is left zero).
    fn dc_diff(&mut self, tbl: usize, ci: usize) -> Option<i32> {
        let stats = &mut self.dc_stats[tbl];
        let mut st = self.dc_context[ci];
        if !self.qm.decode(&mut stats[st]) {
            self.dc_context[ci] = 0;
            return Some(0);
        }
        let sign = usize::from(self.qm.decode(&mut stats[st + 1]));
        st += 2 + sign;
        let mut m: i32 = i32::from(self.qm.decode(&mut stats[st]));
        if m != 0 {
            (m, st) = self.qm.category(stats, 20, m)?;
        }
        let (l, u) = (self.conditioning.dc_l[tbl], self.conditioning.dc_u[tbl]);
        self.dc_context[ci] = if m < (1i32 << l) >> 1 {
            0
        } else if m > (1i32 << u) >> 1 {
            12 + sign * 4
        } else {
            4 + sign * 4
        };
        let v = self.qm.magnitude(stats, st + 14, m);
        Some(if sign != 0 { -v } else { v })
    }

    /// Figures F.20 to F.24 for coefficients `ss..=se` (zigzag) of a block. `false`: a spectral
    /// or magnitude overflow.
    fn ac(&mut self, tbl: usize, ss: usize, se: usize, al: u32, block: &mut Block) -> bool {
        let stats = &mut self.ac_stats[tbl];
        let mut k = ss;
        while k <= se {
            let mut st = 3 * (k - 1);
            if self.qm.decode(&mut stats[st]) {
                break; // end of block
            }
            while !self.qm.decode(&mut stats[st + 1]) {
                st += 3;
                k += 1;
                if k > se {
                    self.qm.ct = -1;
                    return false;
                }
            }
            let sign = self.qm.decode(&mut self.fixed_bin);
            st += 2;
            let mut m: i32 = i32::from(self.qm.decode(&mut stats[st]));
            if m != 0 && self.qm.decode(&mut stats[st]) {
                let first = if k <= usize::from(self.conditioning.ac_k[tbl]) { 189 } else { 217 };
                let Some(found) = self.qm.category(stats, first, m << 1) else { return false };
                (m, st) = found;
            }
            let mut v = self.qm.magnitude(stats, st + 14, m);
            if sign {
                v = -v;
            }
            block[NATURAL[k]] = ((v as u32) << al) as i16;
            k += 1;
        }
        true
    }

    /// `decode_mcu_AC_refine` for one block.
    fn ac_refine(&mut self, tbl: usize, ss: usize, se: usize, al: u32, block: &mut Block) {
        let stats = &mut self.ac_stats[tbl];
        let p1 = (1i32 << al) as i16;
        let m1 = (-1i32 << al) as i16;
        // EOBx: the end of block the previous stages reached.
        let kex = (1..=se).rev().find(|&k| block[NATURAL[k]] != 0).unwrap_or(0);
        let mut k = ss;
        while k <= se {
            let mut st = 3 * (k - 1);
            if k > kex && self.qm.decode(&mut stats[st]) {
                break;
            }
            loop {
                let coefficient = &mut block[NATURAL[k]];
                if *coefficient != 0 {
                    if self.qm.decode(&mut stats[st + 2]) {
                        *coefficient = coefficient.wrapping_add(if *coefficient < 0 { m1 } else { p1 });
                    }
                    break;
                }
                if self.qm.decode(&mut stats[st + 1]) {
                    *coefficient = if self.qm.decode(&mut self.fixed_bin) { m1 } else { p1 };
                    break;
                }
                st += 3;
                k += 1;
                if k > se {
                    self.qm.ct = -1;
                    return;
                }
            }
            k += 1;
        }
    }
}

/// Decodes every scan of `frame` from `src` (just past the SOS segment).
fn decode_scan<'a>(
    frame: &mut Frame,
    scan: &Scan,
    src: Source<'a>,
    conditioning: &Conditioning,
    restart_interval: u16,
) -> Source<'a> {
    let mut d = ScanDecoder {
        qm: Qm { src, c: 0, a: 0, ct: -16 },
        conditioning,
        dc_stats: [[0; 64]; 16],
        ac_stats: [[0; 256]; 16],
        fixed_bin: FIXED_BIN,
        last_dc: [0; 4],
        dc_context: [0; 4],
        restart_interval: u32::from(restart_interval),
        restarts_to_go: u32::from(restart_interval),
        next_restart: 0,
    };
    let progressive = frame.progressive;
    let interleaved = scan.components.len() > 1;
    let (mcus_wide, mcus_high) = if interleaved {
        (frame.mcus_wide, frame.mcus_high)
    } else {
        let c = &frame.components[scan.components[0].0];
        (c.width_in_blocks, c.height_in_blocks)
    };
    // The blocks of one MCU: scan component, x and y within the MCU.
    let mut mcu: Vec<(usize, usize, usize)> = Vec::new();
    for (ci, &(index, _, _)) in scan.components.iter().enumerate() {
        let c = &frame.components[index];
        let (h, v) = if interleaved { (c.h, c.v) } else { (1, 1) };
        for y in 0..v {
            for x in 0..h {
                mcu.push((ci, x, y));
            }
        }
    }
    for my in 0..mcus_high {
        for mx in 0..mcus_wide {
            if d.restart_interval != 0 {
                if d.restarts_to_go == 0 {
                    d.restart(scan, progressive);
                }
                d.restarts_to_go -= 1;
            }
            if d.qm.ct == -1 && scan.pass != Pass::DcRefine {
                continue;
            }
            for &(ci, x, y) in &mcu {
                let (index, dc_tbl, ac_tbl) = scan.components[ci];
                let c = &mut frame.components[index];
                let (bx, by) = if interleaved { (mx * c.h + x, my * c.v + y) } else { (mx, my) };
                let Some(block) = c.block_mut(bx, by) else { continue };
                let ok = match scan.pass {
                    Pass::Sequential => match d.dc_diff(dc_tbl, ci) {
                        Some(diff) => {
                            d.last_dc[ci] = (d.last_dc[ci] + diff) & 0xFFFF;
                            block[0] = d.last_dc[ci] as u16 as i16;
                            d.ac(ac_tbl, 1, 63, 0, block)
                        }
                        None => false,
                    },
                    Pass::DcFirst => match d.dc_diff(dc_tbl, ci) {
                        Some(diff) => {
                            d.last_dc[ci] = (d.last_dc[ci] + diff) & 0xFFFF;
                            block[0] = (d.last_dc[ci] << scan.al) as u16 as i16;
                            true
                        }
                        None => false,
                    },
                    Pass::AcFirst => d.ac(ac_tbl, scan.ss, scan.se, scan.al, block),
                    Pass::DcRefine => {
                        if d.qm.decode(&mut d.fixed_bin) {
                            block[0] |= (1i32 << scan.al) as i16;
                        }
                        true
                    }
                    Pass::AcRefine => {
                        d.ac_refine(ac_tbl, scan.ss, scan.se, scan.al, block);
                        d.qm.ct != -1
                    }
                };
                if !ok {
                    break;
                }
            }
        }
    }
    d.qm.src
}

/// The file's markers read as `jpeg_consume_input` reads them, every scan decoded.
fn decode(bytes: &[u8]) -> Result<Decoded<'_>, Broken> {
    let mut src = Source { bytes, at: 2, unread_marker: 0, past_end: false };
    let mut frame: Option<Frame> = None;
    let mut conditioning = Conditioning::default();
    let mut segments: Vec<&[u8]> = Vec::new();
    let mut restart_interval = 0u16;
    let mut header_restart_interval = 0u16;
    let mut scans = 0usize;
    let mut defined = [false; 4];
    let mut extended = false;
    loop {
        let marker = src.marker();
        if src.past_end {
            return broken("the arithmetic-coded JPEG ends before its end-of-image marker (truncated)");
        }
        match marker {
            0xD9 => break,
            0xD0..=0xD7 | 0x01 => continue,
            0xD8 => return broken("the arithmetic-coded JPEG starts a second image inside the first"),
            _ => {}
        }
        let start = src.at - 2;
        let Some(len) = bytes.get(src.at..src.at + 2).map(|l| usize::from(u16::from_be_bytes([l[0], l[1]]))) else {
            return broken("the arithmetic-coded JPEG ends inside a segment header (truncated)");
        };
        if len < 2 {
            if matches!(marker, 0xE0..=0xEF | 0xFE) {
                src.at += 2;
                continue;
            }
            return broken(format!("the arithmetic-coded JPEG's segment {marker:#04X} has a length under 2"));
        }
        let Some(segment) = bytes.get(start..src.at + len) else {
            return broken(format!("the arithmetic-coded JPEG's segment {marker:#04X} runs past the end of the file"));
        };
        let payload = &segment[4..];
        src.at += len;
        match marker {
            0xC9 | 0xCA if frame.is_none() => frame = Some(self::frame(marker, payload)?),
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                return broken("the arithmetic-coded JPEG has two frame headers (SOF markers)");
            }
            0xC4 | 0xDC => {}
            0xCC => conditioning.dac(payload)?,
            0xDB => {
                let mut rest = payload;
                let mut redefines = false;
                while let Some((&pq_tq, tail)) = rest.split_first() {
                    let (pq, tq) = (pq_tq >> 4, usize::from(pq_tq & 15));
                    let size = if pq == 0 { 64 } else { 128 };
                    if pq > 1 || tq > 3 || tail.len() < size {
                        return broken("the arithmetic-coded JPEG has a bad quantisation table (DQT)");
                    }
                    extended |= pq == 1;
                    redefines |= std::mem::replace(&mut defined[tq], true) && scans > 0;
                    rest = &tail[size..];
                }
                if redefines {
                    return broken("the arithmetic-coded JPEG redefines a quantisation table between its scans");
                }
                segments.push(segment);
            }
            0xDD => {
                let &[r1, r0] = payload else {
                    return broken("the arithmetic-coded JPEG's restart interval segment (DRI) has a bad length");
                };
                restart_interval = u16::from_be_bytes([r1, r0]);
                if scans == 0 {
                    header_restart_interval = restart_interval;
                    segments.push(segment);
                }
            }
            0xE0..=0xEF | 0xFE => {
                if scans == 0 {
                    segments.push(segment);
                }
            }
            0xDA => {
                let Some(frame) = frame.as_mut() else {
                    return broken("the arithmetic-coded JPEG has a scan before its frame header");
                };
                scans += 1;
                if scans > JPEG_MAX_SCANS {
                    return broken(format!("the arithmetic-coded JPEG has more than {JPEG_MAX_SCANS} scans"));
                }
                let scan = scan(frame, payload)?;
                src = decode_scan(frame, &scan, src, &conditioning, restart_interval);
                if src.past_end {
                    return broken("the arithmetic-coded JPEG ends inside its image data (truncated)");
                }
            }
            _ => {
                return broken(format!(
                    "the arithmetic-coded JPEG holds marker {marker:#04X}, which libjpeg-turbo does not know and stops on"
                ));
            }
        }
    }
    let Some(frame) = frame else { return broken("the arithmetic-coded JPEG has no frame header") };
    if scans == 0 {
        return broken("the arithmetic-coded JPEG has no scan");
    }
    Ok(Decoded { frame, segments, restart_interval: header_restart_interval, extended })
}

// ---------------------------------------------------------------------------------------------
// Writing: Huffman coding as jchuff.c writes it, with optimal tables

/// Where a block's symbols go: counted for the tables, or written.
trait Symbols {
    fn dc(&mut self, table: usize, symbol: u8, bits: u32, n: u32);
    fn ac(&mut self, table: usize, symbol: u8, bits: u32, n: u32);
    fn restart(&mut self, n: u8);
}

/// The tables a component's scan uses: luma's for the first, the other's for the rest.
fn table_of(component: usize) -> usize {
    usize::from(component > 0)
}

/// The scans written: one interleaved scan when its MCU fits libjpeg's 10 blocks, else one a
/// component.
fn output_scans(frame: &Frame) -> Vec<Vec<usize>> {
    let blocks: usize = frame.components.iter().map(|c| c.h * c.v).sum();
    if frame.components.len() == 1 || blocks > 10 {
        (0..frame.components.len()).map(|c| vec![c]).collect()
    } else {
        vec![(0..frame.components.len()).collect()]
    }
}

/// One sequential scan's symbols. `Err`: a coefficient outside what 8-bit Huffman coding holds.
fn code_scan(frame: &Frame, components: &[usize], restart_interval: u16, s: &mut impl Symbols) -> Result<(), Broken> {
    let interleaved = components.len() > 1;
    let (mcus_wide, mcus_high) = if interleaved {
        (frame.mcus_wide, frame.mcus_high)
    } else {
        let c = &frame.components[components[0]];
        (c.width_in_blocks, c.height_in_blocks)
    };
    let mut last_dc = [0i32; 4];
    let mut mcus = 0usize;
    let mut restarts = 0u8;
    for my in 0..mcus_high {
        for mx in 0..mcus_wide {
            if restart_interval != 0 && mcus != 0 && mcus.is_multiple_of(usize::from(restart_interval)) {
                s.restart(restarts);
                restarts = (restarts + 1) & 7;
                last_dc = [0; 4];
            }
            mcus += 1;
            for (si, &index) in components.iter().enumerate() {
                let c = &frame.components[index];
                let (h, v) = if interleaved { (c.h, c.v) } else { (1, 1) };
                let table = table_of(index);
                for y in 0..v {
                    for x in 0..h {
                        let block = c.block(mx * h + x, my * v + y);
                        let dc = i32::from(block[0]);
                        let (n, bits) = category(dc - last_dc[si]);
                        last_dc[si] = dc;
                        if n > 11 {
                            return broken(
                                "the arithmetic-coded JPEG holds a DC coefficient out of 8-bit range, which Huffman coding cannot hold",
                            );
                        }
                        s.dc(table, n as u8, bits, n);
                        let mut run = 0u8;
                        for &natural in &NATURAL[1..] {
                            let coefficient = i32::from(block[natural]);
                            if coefficient == 0 {
                                run += 1;
                                continue;
                            }
                            while run > 15 {
                                s.ac(table, 0xF0, 0, 0);
                                run -= 16;
                            }
                            let (n, bits) = category(coefficient);
                            if n > 10 {
                                return broken(
                                    "the arithmetic-coded JPEG holds an AC coefficient out of 8-bit range, which Huffman coding cannot hold",
                                );
                            }
                            s.ac(table, (run << 4) | n as u8, bits, n);
                            run = 0;
                        }
                        if run > 0 {
                            s.ac(table, 0x00, 0, 0);
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

struct Frequencies {
    dc: [[u64; 257]; 2],
    ac: [[u64; 257]; 2],
}

impl Symbols for Frequencies {
    fn dc(&mut self, table: usize, symbol: u8, _: u32, _: u32) {
        self.dc[table][usize::from(symbol)] += 1;
    }
    fn ac(&mut self, table: usize, symbol: u8, _: u32, _: u32) {
        self.ac[table][usize::from(symbol)] += 1;
    }
    fn restart(&mut self, _: u8) {}
}

/// A Huffman table as DHT carries it: codes of each length 1..=16, symbols by code.
struct Table {
    counts: [u8; 16],
    symbols: Vec<u8>,
}

/// `jpeg_gen_optimal_table` (Annex K.2): Huffman code lengths from the frequencies, limited to
/// 16 bits, with the all-ones code reserved (symbol 256).
fn optimal_table(freq: &[u64; 257]) -> Table {
    let mut freq = *freq;
    freq[256] = 1;
    let mut codesize = [0usize; 257];
    let mut others = [usize::MAX; 257];
    loop {
        let least = |skip: Option<usize>, freq: &[u64; 257]| {
            let mut found = None;
            let mut v = u64::MAX;
            for (i, &f) in freq.iter().enumerate() {
                if f != 0 && f <= v && Some(i) != skip {
                    v = f;
                    found = Some(i);
                }
            }
            found
        };
        let Some(mut c1) = least(None, &freq) else { break };
        let Some(mut c2) = least(Some(c1), &freq) else { break };
        freq[c1] += freq[c2];
        freq[c2] = 0;
        codesize[c1] += 1;
        while others[c1] != usize::MAX {
            c1 = others[c1];
            codesize[c1] += 1;
        }
        others[c1] = c2;
        codesize[c2] += 1;
        while others[c2] != usize::MAX {
            c2 = others[c2];
            codesize[c2] += 1;
        }
    }
    // Lengths up to 256 are possible with 257 symbols; libjpeg's 32 is a bound it errors past.
    let mut bits = [0i64; 258];
    for &size in &codesize {
        if size != 0 {
            bits[size] += 1;
        }
    }
    for i in (17..258).rev() {
        while bits[i] > 0 {
            let mut j = i - 2;
            while j > 0 && bits[j] == 0 {
                j -= 1;
            }
            bits[i] -= 2;
            bits[i - 1] += 1;
            bits[j + 1] += 2;
            bits[j] -= 1;
        }
    }
    // The reserved code is one of the longest: take it out.
    if let Some(longest) = (1..=16).rev().find(|&i| bits[i] > 0) {
        bits[longest] -= 1;
    }
    let mut counts = [0u8; 16];
    for (count, &b) in counts.iter_mut().zip(&bits[1..=16]) {
        *count = b as u8;
    }
    let mut symbols = Vec::new();
    for size in 1..=256 {
        for (symbol, &s) in codesize[..256].iter().enumerate() {
            if s == size {
                symbols.push(symbol as u8);
            }
        }
    }
    Table { counts, symbols }
}

/// Each symbol's code and length.
fn codes(table: &Table) -> [(u32, u32); 256] {
    huffman_codes(&table.counts, &table.symbols)
}

/// Entropy-coded bytes: 0xFF stuffed with 0x00, a restart's partial byte padded with 1-bits.
struct Writer {
    bits: HuffmanWriter,
    dc: Vec<[(u32, u32); 256]>,
    ac: Vec<[(u32, u32); 256]>,
}

impl Writer {
    /// A code and its `n` extra bits (from [`category`]: no higher bits set).
    fn put(&mut self, (code, len): (u32, u32), extra: u32, n: u32) {
        self.bits.put(code << n | extra, len + n);
    }
}

impl Symbols for Writer {
    fn dc(&mut self, table: usize, symbol: u8, bits: u32, n: u32) {
        self.put(self.dc[table][usize::from(symbol)], bits, n);
    }
    fn ac(&mut self, table: usize, symbol: u8, bits: u32, n: u32) {
        self.put(self.ac[table][usize::from(symbol)], bits, n);
    }
    fn restart(&mut self, n: u8) {
        self.bits.pad();
        self.bits.padded_bytes().extend_from_slice(&[0xFF, 0xD0 + n]);
    }
}

fn push_segment(out: &mut Vec<u8>, marker: u8, payload: &[u8]) {
    out.extend_from_slice(&[0xFF, marker]);
    out.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(payload);
}

/// The sequential Huffman file holding `decoded`'s coefficients.
fn encode(decoded: &Decoded) -> Result<Vec<u8>, Broken> {
    let frame = &decoded.frame;
    let scans = output_scans(frame);
    let mut frequencies = Frequencies { dc: [[0; 257]; 2], ac: [[0; 257]; 2] };
    for components in &scans {
        code_scan(frame, components, decoded.restart_interval, &mut frequencies)?;
    }
    let tables = usize::from(frame.components.len() > 1) + 1;
    let dc: Vec<Table> = frequencies.dc[..tables].iter().map(optimal_table).collect();
    let ac: Vec<Table> = frequencies.ac[..tables].iter().map(optimal_table).collect();

    let mut out = vec![0xFF, 0xD8];
    for segment in &decoded.segments {
        out.extend_from_slice(segment);
    }
    let mut sof = vec![8];
    sof.extend_from_slice(&frame.height.to_be_bytes());
    sof.extend_from_slice(&frame.width.to_be_bytes());
    sof.push(frame.components.len() as u8);
    for c in &frame.components {
        sof.extend_from_slice(&[c.id, ((c.h as u8) << 4) | c.v as u8, c.quant_table]);
    }
    push_segment(&mut out, if decoded.extended { 0xC1 } else { 0xC0 }, &sof);
    let mut dht = Vec::new();
    for (class, list) in [(0u8, &dc), (1u8, &ac)] {
        for (id, table) in list.iter().enumerate() {
            dht.push((class << 4) | id as u8);
            dht.extend_from_slice(&table.counts);
            dht.extend_from_slice(&table.symbols);
        }
    }
    push_segment(&mut out, 0xC4, &dht);
    let mut writer = Writer {
        bits: HuffmanWriter::new(out),
        dc: dc.iter().map(codes).collect(),
        ac: ac.iter().map(codes).collect(),
    };
    for components in &scans {
        let mut sos = vec![components.len() as u8];
        for &index in components {
            let t = table_of(index) as u8;
            sos.extend_from_slice(&[frame.components[index].id, (t << 4) | t]);
        }
        sos.extend_from_slice(&[0, 63, 0]);
        push_segment(writer.bits.padded_bytes(), 0xDA, &sos);
        code_scan(frame, components, decoded.restart_interval, &mut writer)?;
        writer.bits.pad();
    }
    let mut out = writer.bits.finish();
    out.extend_from_slice(&[0xFF, 0xD9]);
    Ok(out)
}

#[cfg(test)]
mod tests;
