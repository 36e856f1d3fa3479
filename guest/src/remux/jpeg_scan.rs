//! A JPEG's scans walked as libjpeg-turbo's Huffman decoders read them (jdhuff.c, jdphuff.c), no
//! coefficient dequantised or transformed: every Huffman code and every extra bit is read, so the
//! walk knows what libjpeg warns about and the gate's own decoder passes over in silence — a scan
//! whose entropy-coded data ends before its last block ("premature end of data segment"), bytes
//! after a scan's last used bit ("extraneous bytes before marker"), a restart marker out of
//! sequence, a code no table holds, and a progressive sequence libjpeg-turbo and Chromium reject.
//!
//! The walk reads each code as libjpeg does, one bit past what the data holds being the premature
//! end: the bits a scan uses are exactly the bits libjpeg uses, so what follows them is what libjpeg
//! skips and counts. Progressive refinement scans depend on which coefficients earlier scans made
//! non-zero; that is kept as one bit per coefficient (8 bytes a block), nothing else.
//!
//! A sequential scan's walk can also hand each block's coefficients to a [`BlockSink`] as it reads
//! them (`remux::jpeg_planes` decodes a baseline JPEG's planes that way, from this one read); the
//! codes and bits read, and so the verdicts, are the same.

use crate::container::Broken;
use crate::limits::{DECODE_MAX_PIXELS, DECODE_MAX_SIDE, JPEG_MAX_SCANS};

fn broken<T>(message: impl Into<String>) -> Result<T, Broken> {
    Err(Broken(message.into()))
}

/// A Huffman table as libjpeg derives it (`jpeg_make_d_derived_tbl`): the largest code of each
/// length, where each length starts in the symbol list, and a 9-bit look-ahead.
#[derive(Clone)]
struct Huffman {
    /// `maxcode[l]`: the largest code of length `l` (-1: none); `maxcode[17]` a sentinel.
    maxcode: [i32; 18],
    /// `valoffset[l]`: symbol index of a code of length `l` = code + `valoffset[l]`.
    valoffset: [i32; 17],
    symbols: Vec<u8>,
    /// By the next [`LOOKAHEAD`] bits: the code's length in the high byte (0: a longer code), its symbol in
    /// the low one. A fixed-size array held inline, so the masked index needs no bounds check and
    /// no pointer is chased: this look-up runs once per code, about ten times a block.
    lookahead: [u16; 1 << LOOKAHEAD],
    /// By the same bits, an AC code whose extra bits fit in them too, decoded whole (the
    /// walk's commonest step, one look-up instead of two shifts and a sign extension): the
    /// value in the high 16 bits, the zero run in bits 4 to 7, the bits taken (code and extra)
    /// in bits 0 to 3, [`END_OF_BLOCK`] for the end-of-block code; 0 where the code or its extra
    /// bits reach past the look-ahead (the step then takes the general path).
    whole_ac: [i32; 1 << LOOKAHEAD],
}

const LOOKAHEAD: u32 = 9;
/// [`Huffman::whole_ac`]'s flag of the end-of-block code.
const END_OF_BLOCK: i32 = 1 << 8;

impl Huffman {
    /// From a DHT table's 16 counts and its symbols; `None` where libjpeg stops with "Bogus
    /// Huffman table definition" (more codes of a length than fit). `whole_ac` is filled for an
    /// AC table only (a DC table's codes are never read through it).
    fn new(counts: &[u8; 16], symbols: &[u8], ac: bool) -> Option<Huffman> {
        let mut maxcode = [-1i32; 18];
        let mut valoffset = [0i32; 17];
        let mut lookahead = [0u16; 1 << LOOKAHEAD];
        let mut code: i32 = 0;
        let mut p: i32 = 0;
        for l in 1..=16usize {
            let n = i32::from(counts[l - 1]);
            // libjpeg's check, made before any code of this length is placed: codes of length `l`
            // must fit in `l` bits, the all-ones one left unused.
            if code + n >= 1 << l {
                return None;
            }
            if n > 0 {
                valoffset[l] = p - code;
                for i in 0..n {
                    let c = code + i;
                    if l as u32 <= LOOKAHEAD {
                        let shift = LOOKAHEAD - l as u32;
                        let entry = (l as u16) << 8 | u16::from(symbols[(p + i) as usize]);
                        for fill in 0..(1u32 << shift) {
                            lookahead[((c as u32) << shift | fill) as usize] = entry;
                        }
                    }
                }
                code += n;
                p += n;
                maxcode[l] = code - 1;
            }
            code <<= 1;
        }
        maxcode[17] = i32::MAX;
        let mut whole_ac = [0i32; 1 << LOOKAHEAD];
        if ac {
            for (index, (whole, &entry)) in whole_ac.iter_mut().zip(&lookahead).enumerate() {
                let (len, symbol) = (u32::from(entry >> 8), entry as u8);
                let (run, s) = (i32::from(symbol >> 4), u32::from(symbol & 15));
                if len == 0 {
                    continue;
                }
                if symbol == 0 {
                    *whole = len as i32 | END_OF_BLOCK;
                } else if s > 0 && len + s <= LOOKAHEAD {
                    let extra = (index as u32 >> (LOOKAHEAD - len - s)) & ((1 << s) - 1);
                    *whole = extend(extra, s) << 16 | run << 4 | (len + s) as i32;
                }
            }
        }
        Some(Huffman { maxcode, valoffset, symbols: symbols.to_vec(), lookahead, whole_ac })
    }
}

/// What is wrong with a scan's data, as libjpeg-turbo reports it (each a warning there: djpeg exits
/// 2, sharp fails the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Damage {
    /// The data ends before the scan's last block ("premature end of data segment").
    Premature,
    /// A bit sequence no code of the table has ("bad Huffman code").
    BadCode,
    /// A restart marker missing or out of sequence ("found marker … instead of RST").
    Restart,
    /// A progressive scan refining coefficients at another point transform than the scans before
    /// left them ("inconsistent progression sequence"; Pillow and Chromium decode on).
    Progression,
}

impl Damage {
    pub fn words(self) -> &'static str {
        match self {
            Damage::Premature => "the JPEG's image data ends before its last block (premature end of data segment)",
            Damage::BadCode => "the JPEG's image data holds a code its Huffman table does not (bad Huffman code)",
            Damage::Restart => "the JPEG's restart markers are missing or out of sequence",
            Damage::Progression => {
                "the progressive JPEG's scans refine coefficients out of order (an inconsistent progression sequence)"
            }
        }
    }
}

/// A scan's entropy-coded data, as the walk found it.
#[derive(Debug, Default)]
pub(crate) struct ScanData {
    /// The data with every byte no block used left out (`None`: nothing to leave out).
    pub trimmed: Option<Vec<u8>>,
    /// The first damage met, if any.
    pub damage: Option<Damage>,
    /// MCU ranges `[start, end)` whose blocks the data did not reach (libjpeg leaves their
    /// coefficients zero: mid-grey); only for a sequential scan that holds every component.
    pub lost: Vec<(u32, u32)>,
}

/// The MCU grid of a frame, for a repair that fills what a damaged scan lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct McuGrid {
    pub mcu_width: u32,
    pub mcu_height: u32,
    pub mcus_x: u32,
}

#[derive(Clone, Copy)]
struct Component {
    id: u8,
    h: u32,
    v: u32,
    /// Blocks per row and column the component's samples cover (not padded to whole MCUs).
    blocks_x: u32,
    blocks_y: u32,
}

struct Frame {
    progressive: bool,
    mcus_x: u32,
    mcus_y: u32,
    hmax: u32,
    vmax: u32,
    components: Vec<Component>,
    /// Progressive only: libjpeg's `coef_bits` (the point transform each coefficient is at, -1
    /// before any scan), per component.
    coef_bits: Vec<[i32; 64]>,
    /// Progressive only: one bit per coefficient (zigzag order) that is non-zero, per block.
    nonzero: Vec<Vec<u64>>,
}

/// Where a sequential scan's blocks go when the walk decodes their values: each block's 64
/// coefficients in natural (row-major) order, put there as they are read so that no sink
/// reorders them (DC prediction undone, not dequantised), at its block column and row in its
/// component's grid (padding blocks of interleaved MCUs included), in data order.
pub(crate) trait BlockSink {
    /// Whether the walk decodes values at all: the plain walk ([`NoBlocks`]) only skips extra
    /// bits, and this being a constant keeps that path as it was.
    const VALUES: bool;
    /// `coded`: one past the last zigzag position the data wrote (1: the DC term alone).
    fn block(&mut self, component: usize, block_x: u32, block_y: u32, natural: &[i16; 64], coded: usize);
}

/// Each symbol's code and length from a DHT table's counts by length and its symbols in code
/// order (Annex C, libjpeg's `jpeg_make_c_derived_tbl`): what a writer of the table's codes needs.
pub(crate) fn huffman_codes(counts: &[u8; 16], symbols: &[u8]) -> [(u32, u32); 256] {
    let mut codes = [(0, 0); 256];
    let mut code = 0u32;
    let mut symbols = symbols.iter();
    for (len, &count) in (1u32..).zip(counts) {
        for _ in 0..count {
            if let Some(&s) = symbols.next() {
                codes[usize::from(s)] = (code, len);
            }
            code += 1;
        }
        code <<= 1;
    }
    codes
}

/// libjpeg's `jpeg_natural_order`: the natural (row-major) index of each zigzag position.
pub(crate) const NATURAL: [usize; 64] = [
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21,
    28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54,
    47, 55, 62, 63,
];

/// The walk that only judges.
pub(crate) struct NoBlocks;

impl BlockSink for NoBlocks {
    const VALUES: bool = false;
    fn block(&mut self, _: usize, _: u32, _: u32, _: &[i16; 64], _: usize) {}
}

/// The tables and frame a JPEG declares, met in marker order, and the scans walked against them.
#[derive(Default)]
pub(crate) struct Walker {
    dc: [Option<Huffman>; 4],
    ac: [Option<Huffman>; 4],
    /// Slots whose last definition libjpeg cannot derive a table from (DC, AC).
    bogus: [[bool; 4]; 2],
    restart_interval: u32,
    frame: Option<Frame>,
    /// A frame this walk does not read (arithmetic coding, lossless, over the decoder's limits,
    /// which the gate refuses from the header): the decoder or the header check judges it.
    unwalked: bool,
    scans: usize,
}

impl Walker {
    /// A restart interval is in force (libjpeg resynchronises at the next restart marker).
    pub fn restarts(&self) -> bool {
        self.restart_interval > 0
    }

    pub fn grid(&self) -> Option<McuGrid> {
        self.frame.as_ref().map(|f| McuGrid { mcu_width: 8 * f.hmax, mcu_height: 8 * f.vmax, mcus_x: f.mcus_x })
    }

    /// A DHT segment's payload. A malformed one is left to the decoder (the walk then stops
    /// judging: a scan that names a table it cannot build is not walked).
    pub fn dht(&mut self, mut payload: &[u8]) {
        while let [tc_th, rest @ ..] = payload {
            let Some(counts) = rest.get(..16) else { return };
            let counts: [u8; 16] = counts.try_into().unwrap_or([0; 16]);
            let n: usize = counts.iter().map(|&c| usize::from(c)).sum();
            let Some(symbols) = rest.get(16..16 + n) else { return };
            let slot = usize::from(tc_th & 0x0F);
            if slot < 4 {
                let class = usize::from(tc_th >> 4 != 0);
                let table = if n <= 256 { Huffman::new(&counts, symbols, class == 1) } else { None };
                self.bogus[class][slot] = table.is_none();
                if class == 0 {
                    self.dc[slot] = table;
                } else {
                    self.ac[slot] = table;
                }
            }
            payload = &rest[16 + n..];
        }
    }

    pub fn dri(&mut self, payload: &[u8]) {
        if let [a, b, ..] = payload {
            self.restart_interval = u32::from(u16::from_be_bytes([*a, *b]));
        }
    }

    /// A SOFn segment. Only Huffman-coded DCT frames (SOF0, 1, 2) are walked.
    pub fn sof(&mut self, marker: u8, payload: &[u8]) {
        let walked = matches!(marker, 0xC0..=0xC2);
        let parsed = (|| {
            let [_precision, h0, h1, w0, w1, n, rest @ ..] = payload else { return None };
            let (height, width) =
                (u32::from(u16::from_be_bytes([*h0, *h1])), u32::from(u16::from_be_bytes([*w0, *w1])));
            let specs = rest.get(..3 * usize::from(*n))?;
            let over = width > DECODE_MAX_SIDE
                || height > DECODE_MAX_SIDE
                || u64::from(width) * u64::from(height) > DECODE_MAX_PIXELS;
            if width == 0 || height == 0 || *n == 0 || over {
                return None;
            }
            let sampling: Vec<(u8, u32, u32)> =
                specs.chunks_exact(3).map(|c| (c[0], u32::from(c[1] >> 4), u32::from(c[1] & 15))).collect();
            if sampling.iter().any(|&(_, h, v)| !(1..=4).contains(&h) || !(1..=4).contains(&v)) {
                return None;
            }
            let hmax = sampling.iter().map(|s| s.1).max()?;
            let vmax = sampling.iter().map(|s| s.2).max()?;
            let components = sampling
                .iter()
                .map(|&(id, h, v)| Component {
                    id,
                    h,
                    v,
                    blocks_x: (width * h).div_ceil(hmax).div_ceil(8),
                    blocks_y: (height * v).div_ceil(vmax).div_ceil(8),
                })
                .collect::<Vec<_>>();
            let (mcus_x, mcus_y) = (width.div_ceil(8 * hmax), height.div_ceil(8 * vmax));
            Some((components, mcus_x, mcus_y, hmax, vmax))
        })();
        match parsed.filter(|_| walked && self.frame.is_none()) {
            Some((components, mcus_x, mcus_y, hmax, vmax)) => {
                let progressive = marker == 0xC2;
                let n = components.len();
                self.frame = Some(Frame {
                    progressive,
                    mcus_x,
                    mcus_y,
                    hmax,
                    vmax,
                    components,
                    coef_bits: if progressive { vec![[-1; 64]; n] } else { Vec::new() },
                    nonzero: vec![Vec::new(); n],
                });
            }
            None => self.unwalked = true,
        }
    }

    /// One scan: its SOS payload and its entropy-coded data (from after the SOS segment to the
    /// marker that ends it, restart markers inside). `Err`: a scan libjpeg-turbo stops on, or a
    /// progression it and Chromium reject.
    pub fn scan(&mut self, payload: &[u8], data: &[u8]) -> Result<ScanData, Broken> {
        self.scan_into(payload, data, &mut NoBlocks)
    }

    /// [`Walker::scan`], handing a sequential scan's blocks to `sink` as they are read (a
    /// progressive scan's are not: its coefficients are only whole after its last scan).
    pub fn scan_into<S: BlockSink>(&mut self, payload: &[u8], data: &[u8], sink: &mut S) -> Result<ScanData, Broken> {
        self.scans += 1;
        if self.scans > JPEG_MAX_SCANS {
            return broken(format!(
                "the JPEG has more than {JPEG_MAX_SCANS} scans (a decoding-time bomb); not decoded"
            ));
        }
        if self.unwalked {
            return Ok(ScanData::default());
        }
        let Some(frame) = self.frame.as_mut() else { return Ok(ScanData::default()) };
        let Some((&n, rest)) = payload.split_first() else { return Ok(ScanData::default()) };
        let n = usize::from(n);
        let (Some(specs), Some(&[ss, se, ahal])) =
            (rest.get(..2 * n), rest.get(2 * n..2 * n + 3).map(|s| <&[u8; 3]>::try_from(s).unwrap()))
        else {
            return Ok(ScanData::default());
        };
        let (ss, se, ah, al) = (usize::from(ss), usize::from(se), u32::from(ahal >> 4), u32::from(ahal & 15));
        // (component index, DC table, AC table) in scan order.
        let mut members = Vec::with_capacity(n);
        for spec in specs.chunks_exact(2) {
            let Some(index) = frame.components.iter().position(|c| c.id == spec[0]) else {
                return broken(format!("a JPEG scan names component {} that its frame does not have", spec[0]));
            };
            members.push((index, usize::from(spec[1] >> 4), usize::from(spec[1] & 15)));
        }
        if n == 0 || n > 4 {
            return broken(format!("a JPEG scan has {n} components (1 to 4 allowed)"));
        }
        let mut out_of_order = false;
        if frame.progressive {
            out_of_order = progression(frame, &members, ss, se, ah, al)?;
        } else if ss != 0 || se != 63 || ah != 0 || al != 0 {
            return broken(
                "a sequential JPEG scan has progressive parameters (libjpeg-turbo warns that it is not sequential)",
            );
        }
        // The tables the scan reads; one it names and the file does not define leaves the scan to
        // the decoder (libjpeg-turbo fills the standard tables in for motion-JPEG frames).
        let dc_band = ss == 0;
        let needs_dc = dc_band && ah == 0;
        let needs_ac = !frame.progressive || !dc_band;
        let mut tables = Vec::with_capacity(n);
        for &(index, td, ta) in &members {
            // libjpeg derives every table a scan uses as the scan starts, and stops on a bogus one.
            if (needs_dc && self.bogus[0].get(td) == Some(&true)) || (needs_ac && self.bogus[1].get(ta) == Some(&true))
            {
                return broken("a JPEG scan uses a bogus Huffman table definition (libjpeg-turbo stops on it)");
            }
            let dc = if needs_dc {
                match self.dc.get(td).and_then(Option::as_ref) {
                    Some(t) if t.symbols.iter().any(|&s| s > 15) => {
                        return broken("a JPEG DC Huffman table has a symbol over 15 (libjpeg-turbo stops on it)");
                    }
                    Some(t) => Some(t.clone()),
                    None => return Ok(ScanData::default()),
                }
            } else {
                None
            };
            let ac = if needs_ac {
                match self.ac.get(ta).and_then(Option::as_ref) {
                    Some(t) => Some(t.clone()),
                    None => return Ok(ScanData::default()),
                }
            } else {
                None
            };
            tables.push((index, dc, ac));
        }

        // The MCUs of the scan: interleaved, or a single component's blocks in its own grid.
        let single = members.len() == 1;
        let (mcus, mcus_x) = if single {
            let c = frame.components[members[0].0];
            (c.blocks_x * c.blocks_y, c.blocks_x)
        } else {
            (frame.mcus_x * frame.mcus_y, frame.mcus_x)
        };
        if frame.progressive {
            for &(index, ..) in &members {
                if frame.nonzero[index].is_empty() && !dc_band {
                    let c = frame.components[index];
                    frame.nonzero[index] = vec![0u64; (frame.mcus_x * c.h * frame.mcus_y * c.v) as usize];
                }
            }
        }
        let restart = if self.restart_interval == 0 { mcus } else { self.restart_interval };
        let intervals = split_at_restarts(data);
        let mut result = ScanData::default();
        if out_of_order {
            result.damage = Some(Damage::Progression);
        }
        let mut out: Option<Vec<u8>> = None;
        let mut mcu = 0u32;
        let full_sequential = !frame.progressive && members.len() == frame.components.len();
        for (i, interval) in intervals.iter().enumerate() {
            if mcu >= mcus {
                // Restart intervals past the scan's last MCU: bytes libjpeg skips and counts.
                out.get_or_insert_with(|| data[..intervals[i - 1].end].to_vec());
                break;
            }
            if i > 0 {
                let expected = 0xD0 + ((i - 1) % 8) as u8;
                if interval.marker != Some(expected) {
                    result.damage.get_or_insert(Damage::Restart);
                }
            }
            let end = (mcu + restart).min(mcus);
            let mut bits = Bits::new(&data[interval.start..interval.end]);
            let mut eobrun = 0u32;
            let mut premature = false;
            // DC predictions, by scan member, restart at each interval.
            let mut predictions = [0i32; 4];
            while mcu < end {
                let walked = if frame.progressive {
                    progressive_mcu(frame, &tables, &mut bits, mcu, mcus_x, single, ss, se, ah, al, &mut eobrun)
                } else {
                    // A copy whose address nothing takes, so that the compiler keeps the reader
                    // in registers through the MCU's codes (the progressive walk, which is not
                    // inlined, takes `bits` by reference, which holds it in memory).
                    let mut local = bits;
                    let walked = if S::VALUES {
                        sequential_mcu_values(frame, &tables, &mut local, (single, mcu, mcus_x), &mut predictions, sink)
                    } else {
                        sequential_mcu(frame, &tables, &mut local, single)
                    };
                    bits = local;
                    walked
                };
                match walked {
                    Ok(()) => mcu += 1,
                    // libjpeg reads no more of the interval after a premature end; after a bad
                    // code it reads on, but what it then decodes is the decoder's business: the
                    // file is repaired from the decoded pixels either way.
                    Err(damage) => {
                        result.damage.get_or_insert(damage);
                        if damage == Damage::Premature && full_sequential {
                            result.lost.push((mcu, end));
                        }
                        premature = true;
                        mcu = end;
                        break;
                    }
                }
            }
            let used = bits.used_data_bytes();
            if !premature && used < bits.data_bytes() {
                let o = out.get_or_insert_with(|| trimmed_so_far(data, &intervals, i));
                o.extend_from_slice(
                    &data[interval.start..interval.start + raw_len(&data[interval.start..interval.end], used)],
                );
                if i + 1 < intervals.len() && mcu < mcus {
                    o.extend_from_slice(&[0xFF, intervals[i + 1].marker.unwrap_or(0xD0)]);
                }
            } else if let Some(o) = out.as_mut() {
                o.extend_from_slice(&data[interval.start..interval.end]);
                if i + 1 < intervals.len() && mcu < mcus {
                    o.extend_from_slice(&[0xFF, intervals[i + 1].marker.unwrap_or(0xD0)]);
                }
            }
        }
        if mcu < mcus {
            // The data ran out of intervals before the scan's last MCU.
            result.damage.get_or_insert(Damage::Premature);
            if full_sequential {
                result.lost.push((mcu, mcus));
            }
        }
        // A damaged scan is repaired from its decoded pixels, not trimmed.
        result.trimmed = out.filter(|_| result.damage.is_none());
        Ok(result)
    }
}

/// libjpeg-turbo's checks of a progressive scan's parameters (`start_pass_phuff_decoder`): the
/// errors it stops on, and the "inconsistent progression sequence" it warns about. An AC scan
/// before its component's DC scan is refused (Chromium refuses it too); a refinement at another
/// point transform than the last scan left is decoded by Pillow and Chromium: `Ok(true)`, repaired.
fn progression(
    frame: &mut Frame,
    members: &[(usize, usize, usize)],
    ss: usize,
    se: usize,
    ah: u32,
    al: u32,
) -> Result<bool, Broken> {
    let mut out_of_order = false;
    let dc_band = ss == 0;
    let bad = if dc_band { se != 0 } else { ss > se || se > 63 || members.len() != 1 }
        || (ah != 0 && al + 1 != ah)
        || al > 13;
    if bad {
        return broken(format!(
            "a progressive JPEG scan has invalid parameters (Ss={ss}, Se={se}, Ah={ah}, Al={al}); libjpeg-turbo stops on it"
        ));
    }
    for &(index, ..) in members {
        let bits = &mut frame.coef_bits[index];
        if !dc_band && bits[0] < 0 {
            return broken(format!(
                "the progressive JPEG refines component {index} before its DC scan (an inconsistent progression \
                 sequence: libjpeg-turbo and Chromium reject it)"
            ));
        }
        for bit in bits.iter_mut().take(se + 1).skip(ss) {
            let expected = (*bit).max(0) as u32;
            out_of_order |= ah != expected;
            *bit = al as i32;
        }
    }
    Ok(out_of_order)
}

type Tables = [(usize, Option<Huffman>, Option<Huffman>)];

fn sequential_mcu(frame: &Frame, tables: &Tables, bits: &mut Bits, single: bool) -> Result<(), Damage> {
    for (index, dc, ac) in tables {
        let c = frame.components[*index];
        let blocks = if single { 1 } else { c.h * c.v };
        let (Some(dc), Some(ac)) = (dc, ac) else { return Ok(()) };
        for _ in 0..blocks {
            bits.decode_and_skip_extra(dc)?;
            let mut k = 1;
            while k < 64 {
                let rs = bits.decode_and_skip_extra(ac)?;
                let (r, s) = (usize::from(rs >> 4), rs & 15);
                if s > 0 {
                    k += r;
                } else if r == 15 {
                    k += 15;
                } else {
                    break;
                }
                k += 1;
            }
        }
    }
    Ok(())
}

/// [`sequential_mcu`] reading the values too (jdhuff.c `decode_mcu_slow`): the same codes and
/// bits, so the same verdict. `at` is whether the scan holds one component, the MCU's index and
/// the MCUs in a row.
fn sequential_mcu_values<S: BlockSink>(
    frame: &Frame,
    tables: &Tables,
    bits: &mut Bits,
    (single, mcu, mcus_x): (bool, u32, u32),
    predictions: &mut [i32; 4],
    sink: &mut S,
) -> Result<(), Damage> {
    let (row, col) = (mcu / mcus_x.max(1), mcu % mcus_x.max(1));
    for (member, (index, dc, ac)) in tables.iter().enumerate() {
        let c = frame.components[*index];
        let (Some(dc), Some(ac)) = (dc, ac) else { return Ok(()) };
        let (across, down) = if single { (1, 1) } else { (c.h, c.v) };
        for v in 0..down {
            for h in 0..across {
                let mut natural = [0i16; 64];
                let (_, difference) = bits.decode_value(dc)?;
                let prediction = &mut predictions[member & 3];
                *prediction = prediction.wrapping_add(difference);
                natural[0] = *prediction as i16;
                let mut k = 1;
                // One past the last coefficient written.
                let mut coded = 1;
                while k < 64 {
                    let whole = bits.whole_ac(ac);
                    if whole != 0 {
                        if whole & END_OF_BLOCK != 0 {
                            break;
                        }
                        k += ((whole >> 4) & 15) as usize;
                        if let Some(&at) = NATURAL.get(k) {
                            natural[at] = (whole >> 16) as i16;
                            coded = k + 1;
                        }
                        k += 1;
                        continue;
                    }
                    let (rs, value) = bits.decode_value(ac)?;
                    let (r, s) = (usize::from(rs >> 4), rs & 15);
                    if s > 0 {
                        k += r;
                        // Past the block's end libjpeg writes into slack; nothing reads it.
                        if let Some(&at) = NATURAL.get(k) {
                            natural[at] = value as i16;
                            coded = k + 1;
                        }
                    } else if r == 15 {
                        k += 15;
                    } else {
                        break;
                    }
                    k += 1;
                }
                let (x, y) = if single { (col, row) } else { (col * c.h + h, row * c.v + v) };
                sink.block(*index, x, y, &natural, coded);
            }
        }
    }
    Ok(())
}

/// libjpeg's `HUFF_EXTEND`: `s` extra bits as a signed value (`s` 1 to 15).
#[inline(always)]
fn extend(bits: u32, s: u32) -> i32 {
    let v = bits as i32;
    if v < 1 << (s - 1) { v - (1 << s) + 1 } else { v }
}

#[allow(clippy::too_many_arguments)]
fn progressive_mcu(
    frame: &mut Frame,
    tables: &Tables,
    bits: &mut Bits,
    mcu: u32,
    mcus_x: u32,
    single: bool,
    ss: usize,
    se: usize,
    ah: u32,
    _al: u32,
    eobrun: &mut u32,
) -> Result<(), Damage> {
    if ss == 0 {
        // DC scans: one code (first) or one bit (refinement) per block.
        for (index, dc, _) in tables {
            let c = frame.components[*index];
            let blocks = if single { 1 } else { c.h * c.v };
            for _ in 0..blocks {
                if ah == 0 {
                    let Some(dc) = dc else { return Ok(()) };
                    bits.decode_and_skip_extra(dc)?;
                } else {
                    bits.skip(1)?;
                }
            }
        }
        return Ok(());
    }
    // AC scans hold one component; its blocks in its own grid, stored in the padded grid.
    let (index, _, ac) = &tables[0];
    let Some(ac) = ac else { return Ok(()) };
    let c = frame.components[*index];
    let (row, col) = (mcu / mcus_x, mcu % mcus_x);
    let stride = frame.mcus_x * c.h;
    let block = &mut frame.nonzero[*index][(row * stride + col) as usize];
    let zz = |k: usize| 1u64 << k.min(63);
    if ah == 0 {
        if *eobrun > 0 {
            *eobrun -= 1;
            return Ok(());
        }
        let mut k = ss;
        while k <= se {
            let rs = bits.decode_and_skip_extra(ac)?;
            let (r, s) = (usize::from(rs >> 4), rs & 15);
            if s > 0 {
                k += r;
                *block |= zz(k);
            } else if r < 15 {
                *eobrun = 1 << r;
                if r > 0 {
                    *eobrun += bits.take(r as u32)?;
                }
                *eobrun -= 1;
                break;
            } else {
                k += 15;
            }
            k += 1;
        }
        return Ok(());
    }
    // Refinement (jdphuff.c `decode_mcu_AC_refine`): a correction bit for every coefficient
    // already non-zero, new coefficients placed among the zero ones.
    let mut k = ss;
    if *eobrun == 0 {
        while k <= se {
            let rs = bits.decode(ac)?;
            let (mut r, s) = (i32::from(rs >> 4), u32::from(rs & 15));
            if s > 0 {
                if s != 1 {
                    return Err(Damage::BadCode);
                }
                bits.skip(1)?;
            } else if r != 15 {
                *eobrun = 1 << r;
                if r > 0 {
                    *eobrun += bits.take(r as u32)?;
                }
                break;
            }
            loop {
                if *block & zz(k) != 0 {
                    bits.skip(1)?;
                } else {
                    r -= 1;
                    if r < 0 {
                        break;
                    }
                }
                k += 1;
                if k > se {
                    break;
                }
            }
            if s > 0 {
                *block |= zz(k);
            }
            k += 1;
        }
    }
    if *eobrun > 0 {
        while k <= se {
            if *block & zz(k) != 0 {
                bits.skip(1)?;
            }
            k += 1;
        }
        *eobrun -= 1;
    }
    Ok(())
}

/// The entropy-coded data of one restart interval: bytes from `start` to `end` (the interval's
/// restart marker or the data's end), and the restart marker that opened it.
struct Interval {
    start: usize,
    end: usize,
    marker: Option<u8>,
}

fn split_at_restarts(data: &[u8]) -> Vec<Interval> {
    let mut intervals = Vec::new();
    let (mut start, mut marker, mut at) = (0, None, 0);
    while let Some(offset) = memchr::memchr(0xFF, &data[at..]) {
        at += offset;
        match data.get(at + 1) {
            Some(&m @ 0xD0..=0xD7) => {
                intervals.push(Interval { start, end: at, marker });
                marker = Some(m);
                at += 2;
                start = at;
            }
            Some(0xFF) => at += 1,
            Some(_) => at += 2,
            None => break,
        }
    }
    intervals.push(Interval { start, end: data.len(), marker });
    intervals
}

/// The data up to interval `i` as it stands (when trimming starts there).
fn trimmed_so_far(data: &[u8], intervals: &[Interval], i: usize) -> Vec<u8> {
    let mut o = Vec::with_capacity(data.len());
    if i > 0 {
        o.extend_from_slice(&data[..intervals[i].start]);
    }
    o
}

/// Raw bytes of `raw` that hold its first `data_bytes` data bytes (a stuffed 0xFF 0x00 is one).
fn raw_len(raw: &[u8], data_bytes: usize) -> usize {
    let (mut at, mut n) = (0, 0);
    while n < data_bytes && at < raw.len() {
        at += if raw[at] == 0xFF { 2 } else { 1 };
        n += 1;
    }
    at.min(raw.len())
}

/// The bits of one restart interval's data, read as libjpeg reads them: a stuffed 0xFF 0x00 is a
/// 0xFF data byte, 0xFF fill before a marker is nothing, the data ends at a marker.
#[derive(Clone, Copy)]
struct Bits<'a> {
    raw: &'a [u8],
    at: usize,
    acc: u64,
    held: u32,
    /// Data bytes read into `acc` so far (the bits taken are `8 * read - held`).
    read: usize,
    ended: bool,
}

impl<'a> Bits<'a> {
    fn new(raw: &'a [u8]) -> Self {
        Bits { raw, at: 0, acc: 0, held: 0, read: 0, ended: false }
    }

    /// Reads data bytes into `acc` until it holds more than 56 bits or the data ends: eight bytes
    /// at once where none of them is 0xFF (nearly always: a stuffed 0xFF comes once in about 256
    /// bytes), byte by byte otherwise.
    #[inline(always)]
    fn fill(&mut self) {
        if self.held <= 56
            && !self.ended
            && let Some(chunk) = self.raw.get(self.at..self.at + 8)
        {
            let word = u64::from_be_bytes(chunk.try_into().unwrap_or([0xFF; 8]));
            let room = (64 - self.held) / 8;
            // A 0xFF byte is a zero byte of `!word`; the zero-byte test may also flag a byte
            // just before a true one (a borrow), never miss one: a flag only sends this to the
            // byte-by-byte path. Only the first `room` bytes (the high ones) are read.
            let inverted = !word;
            let zero_bytes = inverted.wrapping_sub(0x0101_0101_0101_0101) & !inverted & 0x8080_8080_8080_8080;
            let first_room = if room >= 8 { u64::MAX } else { !(u64::MAX >> (8 * room)) };
            if zero_bytes & first_room == 0 {
                self.acc = if room >= 8 { word } else { (self.acc << (8 * room)) | (word >> (64 - 8 * room)) };
                self.held += 8 * room;
                self.at += room as usize;
                self.read += room as usize;
                return;
            }
        }
        if self.held <= 56 && !self.ended {
            *self = self.fill_bytes();
        }
    }

    /// [`Bits::fill`] byte by byte, by value: the reader's address is never taken, so the walk
    /// keeps it in registers.
    #[cold]
    #[inline(never)]
    fn fill_bytes(mut self) -> Self {
        while self.held <= 56 && !self.ended {
            let Some(&b) = self.raw.get(self.at) else {
                self.ended = true;
                break;
            };
            if b == 0xFF {
                match self.raw.get(self.at + 1) {
                    Some(0x00) => self.at += 2,
                    _ => {
                        self.ended = true;
                        break;
                    }
                }
            } else {
                self.at += 1;
            }
            self.acc = (self.acc << 8) | u64::from(b);
            self.held += 8;
            self.read += 1;
        }
        self
    }

    /// Takes `n` (at most 16) bits and gives their value.
    #[inline(always)]
    fn take(&mut self, n: u32) -> Result<u32, Damage> {
        if self.held < n {
            self.fill();
            if self.held < n {
                return Err(Damage::Premature);
            }
        }
        self.held -= n;
        Ok(((self.acc >> self.held) & ((1u64 << n) - 1)) as u32)
    }

    /// Takes `n` (at most 16) bits whose value nothing needs: a correction bit.
    #[inline(always)]
    fn skip(&mut self, n: u32) -> Result<(), Damage> {
        if self.held < n {
            self.fill();
            if self.held < n {
                return Err(Damage::Premature);
            }
        }
        self.held -= n;
        Ok(())
    }

    /// The next code of table `t`: one look-up when the code is at most 9 bits long and 9 bits
    /// are held (nearly every code), otherwise libjpeg's bit-by-bit path.
    #[inline(always)]
    fn decode(&mut self, t: &Huffman) -> Result<u8, Damage> {
        if self.held < LOOKAHEAD {
            self.fill();
        }
        if self.held >= LOOKAHEAD {
            let look = (self.acc >> (self.held - LOOKAHEAD)) as usize & ((1 << LOOKAHEAD) - 1);
            let entry = t.lookahead[look];
            let len = u32::from(entry >> 8);
            if len > 0 {
                self.held -= len;
                return Ok(entry as u8);
            }
        }
        let (bits, symbol) = self.decode_slow(t);
        *self = bits;
        symbol
    }

    /// The next AC code of table `t` with its extra bits where [`Huffman::whole_ac`] holds it
    /// (the bits taken), else 0 and nothing taken: the same bits [`Bits::decode_value`] takes.
    #[inline(always)]
    fn whole_ac(&mut self, t: &Huffman) -> i32 {
        if self.held < LOOKAHEAD + 15 {
            self.fill();
        }
        if self.held < LOOKAHEAD {
            return 0;
        }
        let look = (self.acc >> (self.held - LOOKAHEAD)) as usize & ((1 << LOOKAHEAD) - 1);
        let whole = t.whole_ac[look];
        self.held -= (whole & 15) as u32;
        whole
    }

    /// The next code of table `t` and the signed value of the extra bits its symbol's low four
    /// bits count (a DC difference, an AC coefficient): [`Bits::decode_and_skip_extra`]'s path,
    /// the same bits taken.
    #[inline(always)]
    fn decode_value(&mut self, t: &Huffman) -> Result<(u8, i32), Damage> {
        if self.held < LOOKAHEAD + 15 {
            self.fill();
        }
        if self.held >= LOOKAHEAD {
            let look = (self.acc >> (self.held - LOOKAHEAD)) as usize & ((1 << LOOKAHEAD) - 1);
            let entry = t.lookahead[look];
            let (len, s) = (u32::from(entry >> 8), u32::from(entry & 15));
            if len > 0 && len + s <= self.held {
                self.held -= len + s;
                let extra = ((self.acc >> self.held) & ((1u64 << s) - 1)) as u32;
                return Ok((entry as u8, if s == 0 { 0 } else { extend(extra, s) }));
            }
        }
        let symbol = self.decode(t)?;
        let s = u32::from(symbol & 15);
        Ok((symbol, if s == 0 { 0 } else { extend(self.take(s)?, s) }))
    }

    /// The next code of table `t` and the extra bits its symbol's low four bits count (a DC
    /// difference's or an AC coefficient's, whose values nothing needs): one look-up and one
    /// check of the bits held, on the path nearly every code takes.
    #[inline(always)]
    fn decode_and_skip_extra(&mut self, t: &Huffman) -> Result<u8, Damage> {
        if self.held < LOOKAHEAD + 15 {
            self.fill();
        }
        if self.held >= LOOKAHEAD {
            let look = (self.acc >> (self.held - LOOKAHEAD)) as usize & ((1 << LOOKAHEAD) - 1);
            let entry = t.lookahead[look];
            let len = u32::from(entry >> 8);
            let total = len + u32::from(entry & 15);
            if len > 0 && total <= self.held {
                self.held -= total;
                return Ok(entry as u8);
            }
        }
        let symbol = self.decode(t)?;
        self.skip(u32::from(symbol & 15))?;
        Ok(symbol)
    }

    /// A code longer than the look-ahead, or one near the data's end: bit by bit, as libjpeg's
    /// slow path (one bit past the data is the premature end).
    /// By value, as [`Bits::fill_bytes`].
    #[cold]
    #[inline(never)]
    fn decode_slow(mut self, t: &Huffman) -> (Self, Result<u8, Damage>) {
        let symbol = (|| {
            let mut code = self.take(1)? as i32;
            let mut l = 1;
            while code > t.maxcode[l] {
                l += 1;
                if l > 16 {
                    return Err(Damage::BadCode);
                }
                code = (code << 1) | self.take(1)? as i32;
            }
            let i = code + t.valoffset[l];
            t.symbols.get(i as usize).copied().ok_or(Damage::BadCode)
        })();
        (self, symbol)
    }

    /// Data bytes that hold a bit the walk took.
    fn used_data_bytes(self) -> usize {
        (8 * self.read as u64 - u64::from(self.held)).div_ceil(8) as usize
    }

    /// Data bytes in the interval (read to its end).
    fn data_bytes(self) -> usize {
        let mut n = self.read;
        let mut at = self.at;
        if !self.ended {
            while let Some(&b) = self.raw.get(at) {
                if b == 0xFF {
                    if self.raw.get(at + 1) != Some(&0x00) {
                        break;
                    }
                    at += 2;
                } else {
                    at += 1;
                }
                n += 1;
            }
        }
        n
    }
}

#[cfg(test)]
mod tests;
