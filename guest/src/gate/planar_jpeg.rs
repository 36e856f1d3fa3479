//! A baseline JPEG written straight from a fit's planes (Y, Cb, Cr at 4:2:0, or one grey plane;
//! an RGB image's are made here, each pixel converted once and chroma box-averaged):
//! each 8x8 block is read from its plane, transformed, quantised and Huffman-coded, with no row
//! buffers, no chroma sample repeated only to be dropped again, no per-sample push, and a 64-bit
//! bit buffer where `jpeg-encoder` keeps a pointer-sized one (32 bits in the guest).
//!
//! The output is what `jpeg-encoder` 0.7 writes for the same planes handed to it row by row with
//! each chroma sample repeated over its two columns, 4:2:0 and `Nearest` chroma (the path this
//! replaces): its headers, its Annex K quantisers scaled to the quality as libjpeg scales them,
//! its islow forward DCT (libjpeg's `jpeg_fdct_islow`), its rounding reciprocals, its standard
//! Huffman tables, its edge padding — byte for byte, which the tests check against the crate.
//! (Optimised Huffman tables were 1.7% smaller for 60% more encoding time with `jpeg-encoder`.)

use crate::cpu_kernels::with_avx2_where_present;
use crate::remux::huffman_writer::{HuffmanWriter, category};
use crate::remux::jpeg_planes::{
    CONST_BITS, FIX_0_298631336, FIX_0_390180644, FIX_0_541196100, FIX_0_765366865, FIX_0_899976223, FIX_1_175875602,
    FIX_1_501321110, FIX_1_847759065, FIX_1_961570560, FIX_2_053119869, FIX_2_562915447, FIX_3_072711026, PASS1_BITS,
    Plane, Planes,
};
use crate::remux::jpeg_scan::{NATURAL, huffman_codes};

/// Annex K.1's luminance and chrominance quantisers, natural order (quality 50).
const ANNEX_K_LUMA: [u16; 64] = [
    16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51,
    87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101,
    72, 92, 95, 98, 112, 100, 103, 99,
];
const ANNEX_K_CHROMA: [u16; 64] = [
    17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99,
];

/// Annex K.3's Huffman tables as DHT carries them: the count of codes of each length 1 to 16,
/// then the symbols in code order.
pub(crate) struct StandardTable {
    pub counts: [u8; 16],
    pub symbols: &'static [u8],
}

pub(crate) const LUMA_DC: StandardTable = StandardTable {
    counts: [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0],
    symbols: &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};
pub(crate) const CHROMA_DC: StandardTable = StandardTable {
    counts: [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    symbols: &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
};
#[rustfmt::skip]
pub(crate) const LUMA_AC: StandardTable = StandardTable {
    counts: [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D],
    symbols: &[
        0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
        0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xA1, 0x08, 0x23, 0x42, 0xB1, 0xC1, 0x15, 0x52, 0xD1, 0xF0,
        0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0A, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x25, 0x26, 0x27, 0x28,
        0x29, 0x2A, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
        0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
        0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
        0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7,
        0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3, 0xC4, 0xC5,
        0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA, 0xE1, 0xE2,
        0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8,
        0xF9, 0xFA,
    ],
};
#[rustfmt::skip]
pub(crate) const CHROMA_AC: StandardTable = StandardTable {
    counts: [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77],
    symbols: &[
        0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71,
        0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xA1, 0xB1, 0xC1, 0x09, 0x23, 0x33, 0x52, 0xF0,
        0x15, 0x62, 0x72, 0xD1, 0x0A, 0x16, 0x24, 0x34, 0xE1, 0x25, 0xF1, 0x17, 0x18, 0x19, 0x1A, 0x26,
        0x27, 0x28, 0x29, 0x2A, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
        0x49, 0x4A, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
        0x69, 0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
        0x88, 0x89, 0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5,
        0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3,
        0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA,
        0xE2, 0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8,
        0xF9, 0xFA,
    ],
};

/// The planes as a baseline JFIF JPEG at `quality` (1 to 100): grey for one plane, YCbCr 4:2:0
/// for three (the chroma planes at half the luma's size, rounded up). `None` for a size JPEG
/// cannot hold (a side of 0 or over 65,535 px) or planes of another count.
pub(crate) fn encode(planes: &Planes, quality: u8) -> Option<Vec<u8>> {
    let (width, height) = (u16::try_from(planes.width).ok()?, u16::try_from(planes.height).ok()?);
    let colour = match planes.planes.len() {
        1 => false,
        3 => true,
        _ => return None,
    };
    if width == 0 || height == 0 {
        return None;
    }
    let quantisers = [Quantiser::new(&ANNEX_K_LUMA, quality), Quantiser::new(&ANNEX_K_CHROMA, quality)];
    let luma = (Codes::new(&LUMA_DC), Codes::new(&LUMA_AC));
    let chroma = (Codes::new(&CHROMA_DC), Codes::new(&CHROMA_AC));
    // (id, sampling, table slot): jpeg-encoder's numbering from 0.
    let components: &[(u8, u8, u8)] =
        if colour { &[(0, 0x22, 0), (1, 0x11, 1), (2, 0x11, 1)] } else { &[(0, 0x11, 0)] };

    let mut out = Vec::with_capacity(planes.width as usize * planes.height as usize / 4);
    out.extend_from_slice(&[0xFF, 0xD8]);
    segment(&mut out, 0xE0, b"JFIF\0\x01\x02\x00\x00\x01\x00\x01\x00\x00");
    let mut sof = vec![8];
    sof.extend_from_slice(&height.to_be_bytes());
    sof.extend_from_slice(&width.to_be_bytes());
    sof.push(components.len() as u8);
    for &(id, sampling, slot) in components {
        sof.extend_from_slice(&[id, sampling, slot]);
    }
    segment(&mut out, 0xC0, &sof);
    for (slot, q) in quantisers.iter().enumerate() {
        let mut dqt = vec![slot as u8];
        dqt.extend(NATURAL.iter().map(|&at| q.table[at] as u8));
        segment(&mut out, 0xDB, &dqt);
    }
    let tables: &[(u8, &StandardTable)] = if colour {
        &[(0x00, &LUMA_DC), (0x10, &LUMA_AC), (0x01, &CHROMA_DC), (0x11, &CHROMA_AC)]
    } else {
        &[(0x00, &LUMA_DC), (0x10, &LUMA_AC)]
    };
    for &(class_slot, table) in tables {
        let mut dht = vec![class_slot];
        dht.extend_from_slice(&table.counts);
        dht.extend_from_slice(table.symbols);
        segment(&mut out, 0xC4, &dht);
    }
    let mut sos = vec![components.len() as u8];
    for &(id, _, slot) in components {
        sos.extend_from_slice(&[id, slot << 4 | slot]);
    }
    sos.extend_from_slice(&[0, 63, 0]);
    segment(&mut out, 0xDA, &sos);

    let mut bits = HuffmanWriter::new(out);
    let mcu = if colour { 16 } else { 8 };
    let (mcus_x, mcus_y) = (u32::from(width).div_ceil(mcu), u32::from(height).div_ceil(mcu));
    let mut previous_dc = [0i32; 3];
    let source = Source { width: u32::from(width), height: u32::from(height) };
    for my in 0..mcus_y {
        for mx in 0..mcus_x {
            let (x0, y0) = (mx * mcu, my * mcu);
            if colour {
                for (bx, by) in [(0, 0), (8, 0), (0, 8), (8, 8)] {
                    let samples = source.luma_block(&planes.planes[0], x0 + bx, y0 + by);
                    code_block(&samples, &quantisers[0], &luma, &mut previous_dc[0], &mut bits);
                }
                for (plane, dc) in planes.planes[1..].iter().zip(&mut previous_dc[1..]) {
                    let samples = source.chroma_block(plane, x0, y0);
                    code_block(&samples, &quantisers[1], &chroma, dc, &mut bits);
                }
            } else {
                let samples = source.luma_block(&planes.planes[0], x0, y0);
                code_block(&samples, &quantisers[0], &luma, &mut previous_dc[0], &mut bits);
            }
        }
    }
    let mut out = bits.finish();
    out.extend_from_slice(&[0xFF, 0xD9]);
    Some(out)
}

/// An RGB image as the planes a 4:2:0 JPEG stores: luma at every pixel, each
/// chroma sample the box average of its 2x2 pixels (libjpeg's `h2v2_downsample`, what sharp writes
/// at this quality; a pixel past the right or bottom edge is the edge's own). The conversion is
/// `jpeg-encoder`'s ([`rgb_to_ycbcr`]) and the rounding libjpeg's (a bias of 1 and 2 on alternate
/// columns), so the bytes are `jpeg-encoder`'s own `Average` method's wherever their padding past
/// the edges agrees (unit tests); each pixel is converted once.
pub(crate) fn planes_of_rgb(rgb: &image::RgbImage) -> Planes {
    let (w, h) = (rgb.width() as usize, rgb.height() as usize);
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    let mut luma = vec![0u8; w * h];
    let (mut cb, mut cr) = (vec![0u8; cw * ch], vec![0u8; cw * ch]);
    let raw = rgb.as_raw();
    // A row pair's chroma at every pixel, then averaged, each in a loop of its own: the one loop
    // that summed each pixel into its column's box, testing for the right edge as it went, took
    // 2.5 times as long in the sandbox.
    let mut pair_cb = [vec![0u8; w], vec![0u8; w]];
    let mut pair_cr = [vec![0u8; w], vec![0u8; w]];
    for cy in 0..ch {
        // A last odd row is read twice: its pair past the edge is itself.
        for (i, y) in [2 * cy, (2 * cy + 1).min(h - 1)].into_iter().enumerate() {
            let row = &raw[y * w * 3..(y + 1) * w * 3];
            ycbcr_row(row, &mut luma[y * w..(y + 1) * w], &mut pair_cb[i], &mut pair_cr[i]);
        }
        box_average_row(&pair_cb, &mut cb[cy * cw..(cy + 1) * cw]);
        box_average_row(&pair_cr, &mut cr[cy * cw..(cy + 1) * cw]);
    }
    let plane = |width: usize, height: usize, samples| Plane {
        width: width as u32,
        height: height as u32,
        h: 1,
        v: 1,
        samples,
    };
    Planes {
        width: w as u32,
        height: h as u32,
        block: 8,
        planes: vec![plane(w, h, luma), plane(cw, ch, cb), plane(cw, ch, cr)],
    }
}

/// One row of RGB pixels as its luma, Cb and Cr samples.
fn ycbcr_row(rgb: &[u8], luma: &mut [u8], cb: &mut [u8], cr: &mut [u8]) {
    for (((px, l), b), r) in rgb.chunks_exact(3).zip(luma).zip(cb.iter_mut()).zip(cr.iter_mut()) {
        (*l, *b, *r) = rgb_to_ycbcr(px[0], px[1], px[2]);
    }
}

/// Two rows of full-resolution chroma as one row of 2x2 box averages, with libjpeg's bias of 1
/// and 2 on alternate columns; a last odd column counts twice (its pair past the edge is itself).
fn box_average_row([top, bottom]: &[Vec<u8>; 2], out: &mut [u8]) {
    let pairs = top.chunks_exact(2).zip(bottom.chunks_exact(2));
    for (cx, (o, (a, b))) in out.iter_mut().zip(pairs).enumerate() {
        let sum = u32::from(a[0]) + u32::from(a[1]) + u32::from(b[0]) + u32::from(b[1]);
        *o = ((sum + 1 + (cx as u32 & 1)) / 4) as u8;
    }
    if top.len() % 2 == 1 {
        let (cx, last) = (out.len() - 1, top.len() - 1);
        let sum = 2 * (u32::from(top[last]) + u32::from(bottom[last]));
        out[cx] = ((sum + 1 + (cx as u32 & 1)) / 4) as u8;
    }
}

/// JFIF's RGB to YCbCr in `jpeg-encoder`'s fixed point (16 fractional bits, rounded).
#[inline(always)]
fn rgb_to_ycbcr(r: u8, g: u8, b: u8) -> (u8, u8, u8) {
    let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
    let y = 19595 * r + 38470 * g + 7471 * b;
    let cb = -11059 * r - 21709 * g + 32768 * b + (128 << 16);
    let cr = 32768 * r - 27439 * g - 5329 * b + (128 << 16);
    (((y + 0x7FFF) >> 16) as u8, ((cb + 0x7FFF) >> 16) as u8, ((cr + 0x7FFF) >> 16) as u8)
}

fn segment(out: &mut Vec<u8>, marker: u8, payload: &[u8]) {
    out.extend_from_slice(&[0xFF, marker]);
    out.extend_from_slice(&(payload.len() as u16 + 2).to_be_bytes());
    out.extend_from_slice(payload);
}

/// Where a block's samples come from, padded past the image as `jpeg-encoder` pads its rows: a
/// row or column past the image's edge repeats the last one inside it.
struct Source {
    width: u32,
    height: u32,
}

impl Source {
    /// The 8x8 luma (or grey) samples whose top-left is `(x0, y0)`, level-shifted.
    fn luma_block(&self, plane: &Plane, x0: u32, y0: u32) -> [i32; 64] {
        let mut block = [0i32; 64];
        let columns: [usize; 8] = std::array::from_fn(|i| (x0 + i as u32).min(self.width - 1) as usize);
        for (r, row_out) in block.chunks_exact_mut(8).enumerate() {
            let row = row_of(plane, (y0 + r as u32).min(self.height - 1));
            fill(row_out, row, &columns, 0);
        }
        block
    }

    /// The 8x8 chroma samples of the 16x16 MCU whose top-left is `(x0, y0)` in luma samples:
    /// `jpeg-encoder`'s `Nearest` takes the top-left of each 2x2, which is the plane's sample
    /// itself (the row handed to it repeated each one over two columns).
    fn chroma_block(&self, plane: &Plane, x0: u32, y0: u32) -> [i32; 64] {
        let mut block = [0i32; 64];
        let columns: [usize; 8] = std::array::from_fn(|i| ((x0 + 2 * i as u32).min(self.width - 1) / 2) as usize);
        for (r, row_out) in block.chunks_exact_mut(8).enumerate() {
            let row = row_of(plane, (y0 + 2 * r as u32).min(self.height - 1) / 2);
            fill(row_out, row, &columns, 128);
        }
        block
    }
}

/// A plane's row `y`, the last where `y` is past it (its rows cover the image's, rounded up).
fn row_of(plane: &Plane, y: u32) -> &[u8] {
    let (y, width) = (y.min(plane.height.saturating_sub(1)) as usize, plane.width as usize);
    plane.samples.get(y * width..(y + 1) * width).unwrap_or(&[])
}

/// One block row from a plane row at `columns` (a column past the row its last sample; an empty
/// row `empty`), level-shifted.
#[inline(always)]
fn fill(out: &mut [i32], row: &[u8], columns: &[usize; 8], empty: u8) {
    if let Some(run) = row.get(columns[0]..columns[0] + 8)
        && columns[7] == columns[0] + 7
    {
        for (o, &s) in out.iter_mut().zip(run) {
            *o = i32::from(s) - 128;
        }
        return;
    }
    let last = row.last().copied().unwrap_or(empty);
    for (o, &c) in out.iter_mut().zip(columns) {
        *o = i32::from(row.get(c).copied().unwrap_or(last)) - 128;
    }
}

/// A quantisation table at a quality and its rounding reciprocals (`jpeg-encoder`'s).
struct Quantiser {
    /// 1 to 255, natural order: what DQT carries.
    table: [u16; 64],
    reciprocals: [i32; 64],
    corrections: [i32; 64],
}

/// The reciprocals' fixed point.
const SHIFT: u32 = 15;

impl Quantiser {
    /// libjpeg's `jpeg_quality_scaling`, then each divisor (the quantiser times 8, the DCT's
    /// scale) as a reciprocal and a rounding correction.
    fn new(base: &[u16; 64], quality: u8) -> Quantiser {
        let quality = u32::from(quality.clamp(1, 100));
        let scale = if quality < 50 { 5000 / quality } else { 200 - quality * 2 };
        let table = base.map(|v| ((u32::from(v) * scale + 50) / 100).clamp(1, 255) as u16);
        let (mut reciprocals, mut corrections) = ([0; 64], [0; 64]);
        for ((&q, r), c) in table.iter().zip(&mut reciprocals).zip(&mut corrections) {
            let divisor = u32::from(q) << 3;
            let (mut reciprocal, fractional) = ((1 << SHIFT) / divisor, (1 << SHIFT) % divisor);
            let mut correction = divisor / 2;
            if fractional != 0 {
                if fractional <= correction {
                    correction += 1;
                } else {
                    reciprocal += 1;
                }
            }
            (*r, *c) = (reciprocal as i32, correction as i32);
        }
        Quantiser { table, reciprocals, corrections }
    }
}

/// Each symbol's code and its length (Annex C).
struct Codes([(u32, u32); 256]);

/// A component's DC and AC codes.
type Huffman = (Codes, Codes);

impl Codes {
    fn new(table: &StandardTable) -> Codes {
        Codes(huffman_codes(&table.counts, table.symbols))
    }

    #[inline(always)]
    fn get(&self, symbol: u32) -> (u32, u32) {
        self.0[symbol as usize & 255]
    }
}

with_avx2_where_present! {
    /// One block: forward DCT, quantisation, DC difference and AC run-lengths Huffman-coded.
    fn code_block(samples: &[i32; 64], q: &Quantiser, huffman: &Huffman, previous_dc: &mut i32, bits: &mut HuffmanWriter) = code_block_as_built;
}

#[inline(always)]
fn code_block_as_built(
    samples: &[i32; 64],
    q: &Quantiser,
    huffman: &Huffman,
    previous_dc: &mut i32,
    bits: &mut HuffmanWriter,
) {
    let (dc, ac) = huffman;
    let coefficients = fdct(samples);
    let mut quantised = [0i32; 64];
    for (i, out) in quantised.iter_mut().enumerate() {
        let value = coefficients[i];
        let magnitude = ((value.abs() + q.corrections[i]) * q.reciprocals[i]) >> SHIFT;
        // jpeg-encoder keeps the quantised value in an i16.
        *out = i32::from((if value < 0 { -magnitude } else { magnitude }) as i16);
    }
    // The DC difference is an i16 subtraction there too.
    let difference = i32::from((quantised[0] as i16).wrapping_sub(*previous_dc as i16));
    *previous_dc = quantised[0];
    let (size, extra) = category(difference);
    let (code, len) = dc.get(size);
    bits.put(code << size | extra, len + size);

    // The non-zero AC coefficients, zigzag positions 1 to 63, as bits.
    let mut nonzero = 0u64;
    for (k, &at) in NATURAL.iter().enumerate().skip(1) {
        nonzero |= u64::from(quantised[at] != 0) << k;
    }
    let mut last = 0;
    while nonzero != 0 {
        let k = nonzero.trailing_zeros();
        nonzero &= nonzero - 1;
        let mut run = k - last - 1;
        last = k;
        while run > 15 {
            let (code, len) = ac.get(0xF0);
            bits.put(code, len);
            run -= 16;
        }
        let (size, extra) = category(quantised[NATURAL[k as usize]]);
        let (code, len) = ac.get(run << 4 | size);
        bits.put(code << size | extra, len + size);
    }
    if last < 63 {
        let (code, len) = ac.get(0x00);
        bits.put(code, len);
    }
}

#[inline(always)]
fn descale(x: i32, n: u32) -> i32 {
    (x + (1 << (n - 1))) >> n
}

/// libjpeg's `jpeg_fdct_islow` on one line of eight values (a row, then a column), its eight
/// outputs before descaling as two arrays: the even ones (0 and 4, which are shifted, not
/// multiplied; zero elsewhere) and the rotated ones (the other six; zero at 0 and 4).
#[inline(always)]
fn fdct_line(d: [i32; 8]) -> ([i32; 8], [i32; 8]) {
    let (tmp0, tmp7) = (d[0] + d[7], d[0] - d[7]);
    let (tmp1, tmp6) = (d[1] + d[6], d[1] - d[6]);
    let (tmp2, tmp5) = (d[2] + d[5], d[2] - d[5]);
    let (tmp3, tmp4) = (d[3] + d[4], d[3] - d[4]);
    let (tmp10, tmp13, tmp11, tmp12) = (tmp0 + tmp3, tmp0 - tmp3, tmp1 + tmp2, tmp1 - tmp2);
    let z1 = (tmp12 + tmp13) * (FIX_0_541196100 as i32);
    let (z1o, z2, z3, z4) = (tmp4 + tmp7, tmp5 + tmp6, tmp4 + tmp6, tmp5 + tmp7);
    let z5 = (z3 + z4) * (FIX_1_175875602 as i32);
    let (z1o, z2) = (z1o * -(FIX_0_899976223 as i32), z2 * -(FIX_2_562915447 as i32));
    let (z3, z4) = (z3 * -(FIX_1_961570560 as i32) + z5, z4 * -(FIX_0_390180644 as i32) + z5);
    let even = [tmp10 + tmp11, 0, 0, 0, tmp10 - tmp11, 0, 0, 0];
    let rotated = [
        0,
        tmp7 * (FIX_1_501321110 as i32) + z1o + z4,
        z1 + tmp13 * (FIX_0_765366865 as i32),
        tmp6 * (FIX_3_072711026 as i32) + z2 + z3,
        0,
        tmp5 * (FIX_2_053119869 as i32) + z2 + z4,
        z1 + tmp12 * -(FIX_1_847759065 as i32),
        tmp4 * (FIX_0_298631336 as i32) + z1o + z3,
    ];
    (even, rotated)
}

/// `jpeg_fdct_islow` (as `jpeg-encoder` ports it): rows, then columns; coefficients in natural
/// order, scaled by 8, as `jpeg-encoder` keeps them (an i16 each).
#[inline(always)]
fn fdct(samples: &[i32; 64]) -> [i32; 64] {
    let mut pass1 = [0i32; 64];
    for (row, out) in samples.chunks_exact(8).zip(pass1.chunks_exact_mut(8)) {
        let (even, rotated) = fdct_line(std::array::from_fn(|i| row[i]));
        for (k, o) in out.iter_mut().enumerate() {
            *o = if k % 4 == 0 { even[k] << PASS1_BITS } else { descale(rotated[k], CONST_BITS - PASS1_BITS) };
        }
    }
    let mut out = [0i32; 64];
    for x in 0..8 {
        let (even, rotated) = fdct_line(std::array::from_fn(|y| pass1[y * 8 + x]));
        for k in 0..8 {
            let v =
                if k % 4 == 0 { descale(even[k], PASS1_BITS) } else { descale(rotated[k], CONST_BITS + PASS1_BITS) };
            out[k * 8 + x] = i32::from(v as i16);
        }
    }
    out
}

#[cfg(test)]
mod tests;
