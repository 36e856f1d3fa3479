//! A baseline JPEG decoded into its components' planes at a DCT scale, as stored: Y, Cb and Cr
//! each at its own sampling, no upsampling, no colour conversion, no RGB image. The fit resizes
//! the planes and the encoder takes them back as they are, so the 12 MP photo's chroma is never
//! upsampled only to be averaged down again.
//!
//! The entropy-coded data is read by the re-mux's walk (`remux::jpeg_scan`), which reads every
//! code as libjpeg-turbo does; here its blocks are dequantised and inverse-transformed straight
//! into the planes (libjpeg-turbo's accurate integer IDCTs: `jpeg_idct_islow` at 1/1, jidctred.c's
//! `jpeg_idct_4x4`, `2x2` and `1x1` below), so nothing but the planes is held. What this does not
//! take — progressive or arithmetic coding, 12-bit samples, CMYK, RGB or YCCK components, damaged
//! data, a component no scan covers, a zero quantiser — is `None`: the caller decodes as before.

use crate::cpu_kernels::with_avx2_where_present;
use crate::remux::jpeg_scan::{BlockSink, NATURAL, Walker};

/// One component's samples at the decode's scale.
pub struct Plane {
    pub width: u32,
    pub height: u32,
    /// Sampling factors, as the frame declares them.
    pub h: u32,
    pub v: u32,
    pub samples: Vec<u8>,
}

/// A JPEG's planes: one (grey) or three (Y, Cb, Cr).
pub struct Planes {
    /// The decoded image's size at the scale (what jpeg-decoder's scaled decode gives).
    pub width: u32,
    pub height: u32,
    /// Samples per block side: 8 (1/1), 4, 2 or 1 (1/8).
    pub block: u32,
    pub planes: Vec<Plane>,
}

/// jpeg-decoder's `choose_idct_size`: the smallest block side whose scaled width or height
/// reaches the target's.
fn block_side(width: u32, height: u32, target: (u32, u32)) -> u32 {
    let scaled = |len: u32, side: u32| (len * side).div_ceil(8);
    [1, 2, 4].into_iter().find(|&s| scaled(width, s) >= target.0 || scaled(height, s) >= target.1).unwrap_or(8)
}

/// The planes of `bytes` at the smallest DCT scale whose size covers `target`; `None` where the
/// JPEG is not one this decodes (see the module).
pub fn decode(bytes: &[u8], target: (u32, u32)) -> Option<Planes> {
    if bytes.get(..2) != Some(&[0xFF, 0xD8]) {
        return None;
    }
    let mut walker = Walker::default();
    let mut reader = PlanesReader::new(Target::Size(target));
    let mut at = 2;
    loop {
        if *bytes.get(at)? != 0xFF {
            return None;
        }
        while bytes.get(at + 1) == Some(&0xFF) {
            at += 1;
        }
        let marker = *bytes.get(at + 1)?;
        match marker {
            0xD9 => break,
            0xD0..=0xD7 | 0x01 => {
                at += 2;
                continue;
            }
            _ => {}
        }
        let len = usize::from(u16::from_be_bytes(bytes.get(at + 2..at + 4)?.try_into().ok()?));
        let payload = bytes.get(at + 4..(at + 2 + len).max(at + 4))?;
        at += 2 + len.max(2);
        match marker {
            0xC4 => walker.dht(payload),
            0xDD => walker.dri(payload),
            0xC0..=0xCF => walker.sof(marker, payload),
            0xE0 if payload.starts_with(b"JFIF\0") => reader.jfif(),
            0xEE if payload.starts_with(b"Adobe") => reader.adobe(*payload.get(11)?),
            _ => {}
        }
        if marker == 0xDA {
            let sink = reader.scan(payload)?;
            let end = crate::container::entropy_coded_end(bytes, at).ok()?;
            let walked = walker.scan_into(payload, bytes.get(at..end)?, sink).ok()?;
            reader.scanned(walked.damage.is_some());
            at = end;
        } else {
            reader.segment(marker, payload);
        }
    }
    reader.finish()
}

/// The size the planes must cover: given, or the fit's inside a square of this side (of the size
/// the frame header declares), and then only where the fit will shrink or re-encode the image.
#[derive(Clone, Copy)]
pub enum Target {
    Size((u32, u32)),
    /// The fit's target, where the frame is over the side or `reencoded` (the file over the size
    /// the ladder passes as it is); otherwise no planes.
    Fit {
        side: u32,
        reencoded: bool,
    },
}

/// A JPEG's markers, met in order, read for its planes: the quantisation tables, the frame, the
/// colour markers, each scan's blocks through [`PlaneSink`]. The re-mux's walk drives it too, so
/// that the fit reads no code again.
pub struct PlanesReader {
    target: Target,
    /// Quantisers by slot, zigzag order, as last defined.
    tables: [Option<[u16; 64]>; 4],
    sink: Option<PlaneSink>,
    jfif: bool,
    adobe_transform: Option<u8>,
    /// Something this does not decode was met: no planes.
    refused: bool,
}

impl PlanesReader {
    pub fn new(target: Target) -> PlanesReader {
        PlanesReader { target, tables: [None; 4], sink: None, jfif: false, adobe_transform: None, refused: false }
    }

    pub fn jfif(&mut self) {
        self.jfif = true;
    }

    pub fn adobe(&mut self, transform: u8) {
        self.adobe_transform = Some(transform);
    }

    /// A segment other than a scan's: tables and the frame are read, other frames refused.
    pub fn segment(&mut self, marker: u8, payload: &[u8]) {
        if self.refused {
            return;
        }
        let read = match marker {
            0xDB => dqt(payload, &mut self.tables),
            0xC0 | 0xC1 if self.sink.is_none() => PlaneSink::new(payload, self.target).map(|sink| {
                self.sink = Some(sink);
            }),
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => None,
            0xCC => None,
            _ => Some(()),
        };
        self.refused |= read.is_none();
    }

    /// Where the blocks of the scan whose header is `sos` go; `None` where there are no planes.
    pub fn scan(&mut self, sos: &[u8]) -> Option<&mut PlaneSink> {
        if self.refused {
            return None;
        }
        let tables = &self.tables;
        let started = self.sink.as_mut().and_then(|sink| sink.start_scan(sos, tables));
        if started.is_none() {
            self.refused = true;
            return None;
        }
        self.sink.as_mut()
    }

    /// The scan just walked: damaged data leaves no planes.
    pub fn scanned(&mut self, damaged: bool) {
        self.refused |= damaged;
    }

    pub fn finish(self) -> Option<Planes> {
        if self.refused {
            return None;
        }
        let sink = self.sink?;
        if sink.planes.len() == 3 {
            let ids = (sink.ids[0], sink.ids[1], sink.ids[2]);
            // jpeg-decoder's reading of a three-component JPEG's colours (after Jason Summers' notes).
            let ycbcr = match ids {
                (1, 2, 3) => true,
                (1, 34, 35) | (82, 71, 66) | (114, 103, 98) => false,
                _ => self.jfif || self.adobe_transform.is_none_or(|t| t == 1),
            };
            if !ycbcr {
                return None;
            }
        }
        sink.finish()
    }
}

/// A DQT segment's tables into their slots; `None` for a malformed one or a zero quantiser
/// (jpeg-decoder refuses a zero, which the caller's path deals with).
fn dqt(mut payload: &[u8], tables: &mut [Option<[u16; 64]>; 4]) -> Option<()> {
    while let [pq_tq, rest @ ..] = payload {
        let wide = pq_tq >> 4 != 0;
        let n = if wide { 128 } else { 64 };
        let values = rest.get(..n)?;
        let mut table = [0u16; 64];
        for (k, q) in table.iter_mut().enumerate() {
            *q = if wide { u16::from_be_bytes([values[2 * k], values[2 * k + 1]]) } else { u16::from(values[k]) };
        }
        if table.contains(&0) {
            return None;
        }
        *tables.get_mut(usize::from(pq_tq & 15))? = Some(table);
        payload = &rest[n..];
    }
    Some(())
}

/// Where the walk's blocks become samples.
pub struct PlaneSink {
    block: u32,
    width: u32,
    height: u32,
    planes: Vec<Plane>,
    ids: Vec<u8>,
    /// The quantisation slot each component names, and the table in force at its scan.
    slots: Vec<usize>,
    /// In natural order, as the walk hands the coefficients.
    quantisers: Vec<Option<[i32; 64]>>,
    /// Blocks each component was handed, and the blocks its samples need.
    blocks_seen: Vec<u64>,
    blocks_needed: Vec<u64>,
    scanned: Vec<bool>,
}

impl PlaneSink {
    fn new(sof: &[u8], target: Target) -> Option<PlaneSink> {
        let [precision, h0, h1, w0, w1, n, specs @ ..] = sof else { return None };
        let (height, width) = (u32::from(u16::from_be_bytes([*h0, *h1])), u32::from(u16::from_be_bytes([*w0, *w1])));
        if *precision != 8 || !matches!(n, 1 | 3) || width == 0 || height == 0 {
            return None;
        }
        let specs: Vec<&[u8]> = specs.get(..3 * usize::from(*n))?.chunks_exact(3).collect();
        let sampling = |s: &[u8]| (u32::from(s[1] >> 4), u32::from(s[1] & 15));
        let hmax = specs.iter().map(|s| sampling(s).0).max()?;
        let vmax = specs.iter().map(|s| sampling(s).1).max()?;
        if hmax == 0 || vmax == 0 {
            return None;
        }
        let target = match target {
            Target::Size(size) => size,
            Target::Fit { side, reencoded } if reencoded || width > side || height > side => {
                crate::limits::fit_inside(width, height, side)
            }
            Target::Fit { .. } => return None,
        };
        let block = block_side(width, height, target);
        let mut planes = Vec::with_capacity(specs.len());
        let mut blocks_needed = Vec::with_capacity(specs.len());
        for s in &specs {
            let (h, v) = sampling(s);
            // libjpeg's and jpeg-decoder's component size at the scale.
            let pw = (u64::from(width) * u64::from(h) * u64::from(block)).div_ceil(u64::from(hmax) * 8) as u32;
            let ph = (u64::from(height) * u64::from(v) * u64::from(block)).div_ceil(u64::from(vmax) * 8) as u32;
            let bx = (u64::from(width) * u64::from(h)).div_ceil(u64::from(hmax) * 8);
            let by = (u64::from(height) * u64::from(v)).div_ceil(u64::from(vmax) * 8);
            blocks_needed.push(bx * by);
            planes.push(Plane { width: pw, height: ph, h, v, samples: vec![0; pw as usize * ph as usize] });
        }
        let scaled = |len: u32| (u64::from(len) * u64::from(block)).div_ceil(8) as u32;
        Some(PlaneSink {
            block,
            width: scaled(width),
            height: scaled(height),
            ids: specs.iter().map(|s| s[0]).collect(),
            slots: specs.iter().map(|s| usize::from(s[2])).collect(),
            quantisers: vec![None; specs.len()],
            blocks_seen: vec![0; specs.len()],
            blocks_needed,
            scanned: vec![false; specs.len()],
            planes,
        })
    }

    /// Latches the quantisers of the scan's components (libjpeg takes a component's table as its
    /// first scan starts). A component in two scans is not taken.
    fn start_scan(&mut self, sos: &[u8], tables: &[Option<[u16; 64]>; 4]) -> Option<()> {
        let (&n, rest) = sos.split_first()?;
        for spec in rest.get(..2 * usize::from(n))?.chunks_exact(2) {
            let index = self.ids.iter().position(|&id| id == spec[0])?;
            if std::mem::replace(&mut self.scanned[index], true) {
                return None;
            }
            let zigzag = (*tables.get(self.slots[index])?)?;
            let mut natural = [0; 64];
            for (&at, &q) in NATURAL.iter().zip(&zigzag) {
                natural[at] = i32::from(q);
            }
            self.quantisers[index] = Some(natural);
        }
        Some(())
    }

    fn finish(self) -> Option<Planes> {
        let covered = self.blocks_seen.iter().zip(&self.blocks_needed).all(|(seen, needed)| seen >= needed);
        (covered && self.scanned.iter().all(|&s| s)).then_some(Planes {
            width: self.width,
            height: self.height,
            block: self.block,
            planes: self.planes,
        })
    }
}

impl BlockSink for PlaneSink {
    const VALUES: bool = true;

    fn block(&mut self, component: usize, block_x: u32, block_y: u32, natural: &[i16; 64], coded: usize) {
        let (Some(plane), Some(Some(q)), Some(seen)) =
            (self.planes.get_mut(component), self.quantisers.get(component), self.blocks_seen.get_mut(component))
        else {
            return;
        };
        *seen += 1;
        let side = self.block;
        let (x0, y0) = (u64::from(block_x) * u64::from(side), u64::from(block_y) * u64::from(side));
        // Padding blocks of an interleaved MCU past the plane's edge.
        if x0 >= u64::from(plane.width) || y0 >= u64::from(plane.height) {
            return;
        }
        let mut out = [0u8; 64];
        if coded <= 1 || side == 1 {
            // A block of its DC term alone (most chroma blocks of a photo) is flat at every scale:
            // each IDCT's all-zero shortcut, taken once.
            out.fill(range_limit(descale(i64::from(natural[0]) * i64::from(q[0]), 3)));
        } else {
            dequantised_idct(natural, q, side, &mut out);
        }
        let (x0, y0, side) = (x0 as usize, y0 as usize, side as usize);
        let (width, height) = (plane.width as usize, plane.height as usize);
        let across = side.min(width - x0);
        for r in 0..side.min(height - y0) {
            let start = (y0 + r) * width + x0;
            if let (Some(dst), Some(src)) =
                (plane.samples.get_mut(start..start + across), out.get(r * side..r * side + across))
            {
                dst.copy_from_slice(src);
            }
        }
    }
}

// libjpeg's fixed-point constants at 13 bits, and the extra precision its first pass keeps (the
// JPEG writer's forward transform uses them too). The
// arithmetic is in i64 (libjpeg's JLONG): a crafted coefficient times a 16-bit quantiser times a
// constant overflows 32 bits.
pub(crate) const CONST_BITS: u32 = 13;
pub(crate) const PASS1_BITS: u32 = 2;
pub(crate) const FIX_0_211164243: i64 = 1730;
pub(crate) const FIX_0_298631336: i64 = 2446;
pub(crate) const FIX_0_390180644: i64 = 3196;
pub(crate) const FIX_0_509795579: i64 = 4176;
pub(crate) const FIX_0_541196100: i64 = 4433;
pub(crate) const FIX_0_601344887: i64 = 4926;
pub(crate) const FIX_0_720959822: i64 = 5906;
pub(crate) const FIX_0_765366865: i64 = 6270;
pub(crate) const FIX_0_850430095: i64 = 6967;
pub(crate) const FIX_0_899976223: i64 = 7373;
pub(crate) const FIX_1_061594337: i64 = 8697;
pub(crate) const FIX_1_175875602: i64 = 9633;
pub(crate) const FIX_1_272758580: i64 = 10426;
pub(crate) const FIX_1_451774981: i64 = 11893;
pub(crate) const FIX_1_501321110: i64 = 12299;
pub(crate) const FIX_1_847759065: i64 = 15137;
pub(crate) const FIX_1_961570560: i64 = 16069;
pub(crate) const FIX_2_053119869: i64 = 16819;
pub(crate) const FIX_2_172734803: i64 = 17799;
pub(crate) const FIX_2_562915447: i64 = 20995;
pub(crate) const FIX_3_072711026: i64 = 25172;
pub(crate) const FIX_3_624509785: i64 = 29692;

/// libjpeg's `DESCALE`: a right shift that rounds.
#[inline(always)]
fn descale(x: i64, n: u32) -> i64 {
    (x + (1 << (n - 1))) >> n
}

/// A level-shifted sample into 0..=255 (libjpeg's range limit for in-range values).
#[inline(always)]
fn range_limit(x: i64) -> u8 {
    (x + 128).clamp(0, 255) as u8
}

/// jidctint.c's odd part: the four odd inputs (7, 5, 3, 1) to the four terms the outputs add.
#[inline(always)]
fn islow_odd(mut tmp0: i64, mut tmp1: i64, mut tmp2: i64, mut tmp3: i64) -> [i64; 4] {
    let (z1, z2, mut z3, mut z4) = (tmp0 + tmp3, tmp1 + tmp2, tmp0 + tmp2, tmp1 + tmp3);
    let z5 = (z3 + z4) * FIX_1_175875602;
    tmp0 *= FIX_0_298631336;
    tmp1 *= FIX_2_053119869;
    tmp2 *= FIX_3_072711026;
    tmp3 *= FIX_1_501321110;
    let (z1, z2) = (z1 * -FIX_0_899976223, z2 * -FIX_2_562915447);
    z3 = z3 * -FIX_1_961570560 + z5;
    z4 = z4 * -FIX_0_390180644 + z5;
    [tmp0 + z1 + z3, tmp1 + z2 + z4, tmp2 + z2 + z3, tmp3 + z1 + z4]
}

/// jidctint.c's even part: inputs 0, 2, 4, 6 to (tmp10, tmp11, tmp12, tmp13).
#[inline(always)]
fn islow_even(i0: i64, i2: i64, i4: i64, i6: i64) -> [i64; 4] {
    let z1 = (i2 + i6) * FIX_0_541196100;
    let tmp2 = z1 + i6 * -FIX_1_847759065;
    let tmp3 = z1 + i2 * FIX_0_765366865;
    let tmp0 = (i0 + i4) << CONST_BITS;
    let tmp1 = (i0 - i4) << CONST_BITS;
    [tmp0 + tmp3, tmp1 + tmp2, tmp1 - tmp2, tmp0 - tmp3]
}

/// libjpeg-turbo's `jpeg_idct_islow`: 8x8 samples.
fn idct_8x8(c: &[i32; 64], out: &mut [u8; 64]) {
    let mut ws = [0i64; 64];
    for col in 0..8 {
        let at = |r: usize| i64::from(c[r * 8 + col]);
        if (1..8).all(|r| c[r * 8 + col] == 0) {
            let dc = at(0) << PASS1_BITS;
            for r in 0..8 {
                ws[r * 8 + col] = dc;
            }
            continue;
        }
        let [t10, t11, t12, t13] = islow_even(at(0), at(2), at(4), at(6));
        let [t0, t1, t2, t3] = islow_odd(at(7), at(5), at(3), at(1));
        let shift = CONST_BITS - PASS1_BITS;
        for (r, v) in
            [t10 + t3, t11 + t2, t12 + t1, t13 + t0, t13 - t0, t12 - t1, t11 - t2, t10 - t3].into_iter().enumerate()
        {
            ws[r * 8 + col] = descale(v, shift);
        }
    }
    for (row, w) in ws.chunks_exact(8).enumerate() {
        let o = &mut out[row * 8..row * 8 + 8];
        if w[1..].iter().all(|&v| v == 0) {
            o.fill(range_limit(descale(w[0], PASS1_BITS + 3)));
            continue;
        }
        let [t10, t11, t12, t13] = islow_even(w[0], w[2], w[4], w[6]);
        let [t0, t1, t2, t3] = islow_odd(w[7], w[5], w[3], w[1]);
        let shift = CONST_BITS + PASS1_BITS + 3;
        for (x, v) in
            [t10 + t3, t11 + t2, t12 + t1, t13 + t0, t13 - t0, t12 - t1, t11 - t2, t10 - t3].into_iter().enumerate()
        {
            o[x] = range_limit(descale(v, shift));
        }
    }
}

/// jidctred.c's 4-point even and odd parts from inputs 0, 2, 6 and 7, 5, 3, 1: the four outputs
/// before descaling.
#[inline(always)]
fn reduced_4(i0: i64, i2: i64, i6: i64, [z1, z2, z3, z4]: [i64; 4]) -> [i64; 4] {
    let tmp0 = i0 << (CONST_BITS + 1);
    let tmp2 = i2 * FIX_1_847759065 + i6 * -FIX_0_765366865;
    let (tmp10, tmp12) = (tmp0 + tmp2, tmp0 - tmp2);
    let odd0 = z1 * -FIX_0_211164243 + z2 * FIX_1_451774981 + z3 * -FIX_2_172734803 + z4 * FIX_1_061594337;
    let odd2 = z1 * -FIX_0_509795579 + z2 * -FIX_0_601344887 + z3 * FIX_0_899976223 + z4 * FIX_2_562915447;
    [tmp10 + odd2, tmp12 + odd0, tmp12 - odd0, tmp10 - odd2]
}

with_avx2_where_present! {
    /// A block's coefficients dequantised by `q` and turned into `side`² samples (row stride
    /// `side`) by the IDCT of that scale.
    fn dequantised_idct(natural: &[i16; 64], q: &[i32; 64], side: u32, out: &mut [u8; 64]) = dequantised_idct_as_built;
}

#[inline(always)]
fn dequantised_idct_as_built(natural: &[i16; 64], q: &[i32; 64], side: u32, out: &mut [u8; 64]) {
    let mut coefficients = [0i32; 64];
    for ((c, &v), &q) in coefficients.iter_mut().zip(natural).zip(q) {
        *c = i32::from(v) * q;
    }
    match side {
        8 => idct_8x8(&coefficients, out),
        4 => idct_4x4(&coefficients, out),
        _ => idct_2x2(&coefficients, out),
    }
}

/// jidctred.c's `jpeg_idct_4x4`: 4x4 samples (row stride 4) from the 8x8 coefficients. A block
/// whose dequantised coefficients are all within [`LANES_PEAK_4X4`] (every block of a real photo)
/// takes the 32-bit form, which the compiler runs four lanes at a time; the rest the 64-bit one.
#[inline(always)]
fn idct_4x4(c: &[i32; 64], out: &mut [u8; 64]) {
    if c.iter().fold(0, |peak, &v| peak.max(v.unsigned_abs())) <= LANES_PEAK_4X4 {
        idct_4x4_lanes(c, out);
    } else {
        idct_4x4_wide(c, out);
    }
}

/// The largest coefficient magnitude under which no sum of [`idct_4x4_lanes`] leaves 32 bits.
/// Each output of [`reduced_4`] is a sum of its inputs times constants whose magnitudes add up to
/// at most 77,910 (16,384 + 15,137 + 6,270 + 1,730 + 11,893 + 17,799 + 8,697, the second
/// output), every partial sum included: the first pass leaves at most 1,400 x 77,910 / 2^12 + 1
/// = 26,631 in the workspace, and the second pass reaches 26,631 x 77,910 + 2^18 < 2^31.
const LANES_PEAK_4X4: u32 = 1400;

/// [`reduced_4`] in 32 bits: the same integer sums (nothing is rounded before the end, so the
/// order of the additions does not matter), exact while its inputs are in [`LANES_PEAK_4X4`]'s
/// bounds.
#[inline(always)]
const fn reduced_4_i32(i0: i32, i2: i32, i6: i32, [z1, z2, z3, z4]: [i32; 4]) -> [i32; 4] {
    let tmp0 = i0 << (CONST_BITS + 1);
    let tmp2 = i2 * FIX_1_847759065 as i32 + i6 * -FIX_0_765366865 as i32;
    let (tmp10, tmp12) = (tmp0 + tmp2, tmp0 - tmp2);
    let odd0 = z1 * -FIX_0_211164243 as i32
        + z2 * FIX_1_451774981 as i32
        + z3 * -FIX_2_172734803 as i32
        + z4 * FIX_1_061594337 as i32;
    let odd2 = z1 * -FIX_0_509795579 as i32
        + z2 * -FIX_0_601344887 as i32
        + z3 * FIX_0_899976223 as i32
        + z4 * FIX_2_562915447 as i32;
    [tmp10 + odd2, tmp12 + odd0, tmp12 - odd0, tmp10 - odd2]
}

/// [`reduced_4_i32`] as a matrix: `WEIGHTS_4[i][x]` is what input `i` adds to output `x`. The
/// second pass sums rows this way, each input once across the four outputs, with no butterfly to
/// regroup across lanes.
const WEIGHTS_4: [[i32; 4]; 8] = {
    let mut weights = [[0; 4]; 8];
    let mut i = 0;
    while i < 8 {
        let mut z = [0; 8];
        z[i] = 1;
        weights[i] = reduced_4_i32(z[0], z[2], z[6], [z[7], z[5], z[3], z[1]]);
        i += 1;
    }
    weights
};

/// [`idct_4x4`] for a block within [`LANES_PEAK_4X4`]: the first pass on the eight columns side
/// by side, the second on each workspace row's four outputs side by side, with no per-column
/// shortcut (the all-zero shortcuts of jidctred.c give what the sums give): straight-line lanes
/// the compiler turns into SIMD.
#[inline(always)]
fn idct_4x4_lanes(c: &[i32; 64], out: &mut [u8; 64]) {
    let shift1 = CONST_BITS - PASS1_BITS + 1;
    // Column 4 is computed with the others and never read (its weights are zero), as jidctred.c
    // never reads it.
    let mut ws = [[0i32; 8]; 4];
    for col in 0..8 {
        let at = |r: usize| c[r * 8 + col];
        let v = reduced_4_i32(at(0), at(2), at(6), [at(7), at(5), at(3), at(1)]);
        for (w, v) in ws.iter_mut().zip(v) {
            w[col] = (v + (1 << (shift1 - 1))) >> shift1;
        }
    }
    let shift2 = CONST_BITS + PASS1_BITS + 3 + 1;
    for (o, w) in out.chunks_exact_mut(4).zip(&ws) {
        let mut sums = [1i32 << (shift2 - 1); 4];
        for (&input, weights) in w.iter().zip(&WEIGHTS_4) {
            for (sum, weight) in sums.iter_mut().zip(weights) {
                *sum += weight * input;
            }
        }
        for (o, sum) in o.iter_mut().zip(sums) {
            *o = ((sum >> shift2) + 128).clamp(0, 255) as u8;
        }
    }
}

/// [`idct_4x4`] in 64 bits, for any coefficients (libjpeg's JLONG).
fn idct_4x4_wide(c: &[i32; 64], out: &mut [u8; 64]) {
    let mut ws = [0i64; 32];
    for col in [0, 1, 2, 3, 5, 6, 7] {
        let at = |r: usize| i64::from(c[r * 8 + col]);
        if [1, 2, 3, 5, 6, 7].iter().all(|&r| c[r * 8 + col] == 0) {
            let dc = at(0) << PASS1_BITS;
            for r in 0..4 {
                ws[r * 8 + col] = dc;
            }
            continue;
        }
        let v = reduced_4(at(0), at(2), at(6), [at(7), at(5), at(3), at(1)]);
        for (r, v) in v.into_iter().enumerate() {
            ws[r * 8 + col] = descale(v, CONST_BITS - PASS1_BITS + 1);
        }
    }
    for (row, w) in ws.chunks_exact(8).enumerate() {
        let o = &mut out[row * 4..row * 4 + 4];
        if [1, 2, 3, 5, 6, 7].iter().all(|&i| w[i] == 0) {
            o.fill(range_limit(descale(w[0], PASS1_BITS + 3)));
            continue;
        }
        let v = reduced_4(w[0], w[2], w[6], [w[7], w[5], w[3], w[1]]);
        for (x, v) in v.into_iter().enumerate() {
            o[x] = range_limit(descale(v, CONST_BITS + PASS1_BITS + 3 + 1));
        }
    }
}

/// jidctred.c's 2-point odd part from inputs 7, 5, 3, 1.
#[inline(always)]
fn reduced_2_odd(i7: i64, i5: i64, i3: i64, i1: i64) -> i64 {
    i7 * -FIX_0_720959822 + i5 * FIX_0_850430095 + i3 * -FIX_1_272758580 + i1 * FIX_3_624509785
}

/// jidctred.c's `jpeg_idct_2x2`: 2x2 samples (row stride 2).
fn idct_2x2(c: &[i32; 64], out: &mut [u8; 64]) {
    let mut ws = [0i64; 16];
    for col in [0, 1, 3, 5, 7] {
        let at = |r: usize| i64::from(c[r * 8 + col]);
        if [1, 3, 5, 7].iter().all(|&r| c[r * 8 + col] == 0) {
            let dc = at(0) << PASS1_BITS;
            ws[col] = dc;
            ws[8 + col] = dc;
            continue;
        }
        let tmp10 = at(0) << (CONST_BITS + 2);
        let tmp0 = reduced_2_odd(at(7), at(5), at(3), at(1));
        ws[col] = descale(tmp10 + tmp0, CONST_BITS - PASS1_BITS + 2);
        ws[8 + col] = descale(tmp10 - tmp0, CONST_BITS - PASS1_BITS + 2);
    }
    for (row, w) in ws.chunks_exact(8).enumerate() {
        let o = &mut out[row * 2..row * 2 + 2];
        if [1, 3, 5, 7].iter().all(|&i| w[i] == 0) {
            o.fill(range_limit(descale(w[0], PASS1_BITS + 3)));
            continue;
        }
        let tmp10 = w[0] << (CONST_BITS + 2);
        let tmp0 = reduced_2_odd(w[7], w[5], w[3], w[1]);
        o[0] = range_limit(descale(tmp10 + tmp0, CONST_BITS + PASS1_BITS + 3 + 2));
        o[1] = range_limit(descale(tmp10 - tmp0, CONST_BITS + PASS1_BITS + 3 + 2));
    }
}

#[cfg(test)]
mod tests;
