//! The GIF re-mux: the screen, colour tables, frames, graphic control and looping extensions,
//! every frame's LZW data decoded (never held as RGBA) so that no admitted GIF carries a frame a
//! strict decoder (giflib) stops on. What the world's decoders repair is repaired here, in the
//! frame's own indices, and the verdict says so:
//! - a frame reaching past the logical screen is clipped to it (Pillow, libvips and Chromium
//!   clip it; the clipped pixels re-encoded); a frame wholly off the screen is dropped;
//! - a file cut before its trailer keeps its whole frames; the cut frame keeps the rows its data
//!   reach, the rest of its rectangle transparent, and the gate writes the trailer (`cut-data`);
//! - a later frame whose LZW data is defective is dropped (`broken-frames`); a defective first
//!   frame keeps what decodes, the rest transparent, as the viewers show it;
//! - an extension with a label no GIF version defines is skipped (giflib, Pillow, libvips and
//!   Chromium skip it; the `gif` crate stops on it), with or without `keep_metadata`;
//! - a looping extension is written as its loop count alone: its other sub-blocks (a buffering
//!   size, anything) and the bytes after the count are read by no viewer.
//!
//! A frame declaring more than [`DECODE_MAX_PIXELS`] (the 4.3-gigapixel frame in a 64×64 screen)
//! is refused before anything is decoded, and so is a GIF whose frames hold more than
//! [`GIF_FRAMES_MAX_PIXELS`] in all (a decoding-time bomb).

use weezl::{BitOrder, LzwStatus, decode::Decoder, encode::Encoder};

use super::{Canonical, Out, broken};
use crate::container::Broken;
use crate::limits::{DECODE_MAX_PIXELS, GIF_FRAMES_MAX_PIXELS};

const EXTENSION: u8 = 0x21;
const IMAGE: u8 = 0x2C;
const TRAILER: u8 = 0x3B;

/// The bytes from `at`: a run of sub-blocks up to their terminator. `cut`: the file ended first
/// (the last block may be partial; what is there is kept).
struct SubBlocks<'a> {
    blocks: Vec<&'a [u8]>,
    end: usize,
    cut: bool,
}

fn sub_blocks(bytes: &[u8], mut at: usize) -> SubBlocks<'_> {
    let mut blocks = Vec::new();
    loop {
        let Some(&n) = bytes.get(at) else { return SubBlocks { blocks, end: bytes.len(), cut: true } };
        if n == 0 {
            return SubBlocks { blocks, end: at + 1, cut: false };
        }
        let end = (at + 1 + usize::from(n)).min(bytes.len());
        blocks.push(&bytes[at + 1..end]);
        if end < at + 1 + usize::from(n) {
            return SubBlocks { blocks, end, cut: true };
        }
        at = end;
    }
}

/// A frame's LZW data decoded into at most `pixels` indices (appended to `into`, when given).
/// Returns how many came: fewer than `pixels` when the data end early or turn invalid.
fn lzw_decode(decoder: &mut Decoder, blocks: &[&[u8]], pixels: usize, mut into: Option<&mut Vec<u8>>) -> usize {
    let mut scratch = [0u8; 4096];
    let mut got = 0;
    // The blocks, then an empty input that drains what the decoder still holds.
    let mut inputs = blocks.iter().copied().chain(std::iter::once(&[][..]));
    let mut input = inputs.next().unwrap_or(&[]);
    while got < pixels {
        let want = (pixels - got).min(scratch.len());
        let r = decoder.decode_bytes(input, &mut scratch[..want]);
        input = &input[r.consumed_in..];
        if let Some(v) = into.as_deref_mut() {
            v.extend_from_slice(&scratch[..r.consumed_out]);
        }
        got += r.consumed_out;
        match r.status {
            Ok(LzwStatus::Done) | Err(_) => break,
            Ok(_) if r.consumed_in == 0 && r.consumed_out == 0 => match inputs.next() {
                Some(next) if input.is_empty() => input = next,
                _ => break,
            },
            Ok(_) => {}
        }
        if input.is_empty()
            && let Some(next) = inputs.next()
        {
            input = next;
        }
    }
    got
}

/// The rows of an interlaced frame, in the order they are stored.
fn interlaced_rows(height: usize) -> impl Iterator<Item = usize> {
    [(0, 8), (4, 8), (2, 4), (1, 2)].into_iter().flat_map(move |(start, step)| (start..height).step_by(step))
}

/// A looping extension (`sub_blocks`: its identifier's, which starts with the 11-byte name, and
/// the rest) written as the name and its first loop sub-block's count (sub-block id 1, what Pillow
/// reads and the count browsers repeat by); one without a count is left out.
fn looping(out: &mut Out, sub_blocks: &[&[u8]]) {
    let (identifier, rest) = sub_blocks.split_first().expect("the caller matched the identifier");
    let Some(count) = rest.iter().find(|b| b.len() >= 3 && b[0] & 7 == 1) else {
        out.drop("other-metadata");
        return;
    };
    out.bytes.extend_from_slice(&[EXTENSION, 0xFF, 11]);
    out.bytes.extend_from_slice(&identifier[..11]);
    out.bytes.extend_from_slice(&[3, 1, count[1], count[2], 0]);
    if identifier.len() > 11 || rest.len() > 1 || count.len() > 3 {
        out.drop("other-metadata");
    }
}

/// The LZW data of `indices` in sub-blocks with their terminator, after the minimum code size.
fn lzw_encoded(min_code: u8, indices: &[u8]) -> Vec<u8> {
    let size = min_code.max(2);
    let mut lzw = Vec::new();
    // Indices come from a decoder of this code size (or are a fill below it): never invalid.
    let _ = Encoder::new(BitOrder::Lsb, size).into_vec(&mut lzw).encode_all(indices);
    let mut out = Vec::with_capacity(lzw.len() + lzw.len() / 255 + 2);
    out.push(size);
    for block in lzw.chunks(255) {
        out.push(block.len() as u8);
        out.extend_from_slice(block);
    }
    out.push(0);
    out
}

pub(super) fn gif(bytes: &[u8], mut out: Out) -> Result<Canonical, Broken> {
    let screen =
        bytes.get(..13).ok_or_else(|| Broken("the GIF ends inside its screen descriptor (truncated)".into()))?;
    let (sw, sh) = (
        usize::from(u16::from_le_bytes([screen[6], screen[7]])),
        usize::from(u16::from_le_bytes([screen[8], screen[9]])),
    );
    let global = screen[10] & 0x80 != 0;
    let table_len = |packed: u8| 3 * (2usize << (packed & 7));
    let mut at = 13;
    out.bytes.extend_from_slice(screen);
    if global {
        let table = bytes
            .get(at..at + table_len(screen[10]))
            .ok_or_else(|| Broken("the GIF ends inside its global colour table (truncated)".into()))?;
        out.bytes.extend_from_slice(table);
        at += table.len();
    }
    let mut needs_default_palette = false;
    let mut frames_met = 0usize;
    let mut frames_written = 0usize;
    let mut pixels_left = GIF_FRAMES_MAX_PIXELS;
    // The graphic control extension written for the next frame: where it sits in the output.
    let mut control: Option<usize> = None;
    let mut decoder: Option<(u8, Decoder)> = None;
    loop {
        let Some(&intro) = bytes.get(at) else {
            // Cut between blocks: what came is whole; a control waiting for a frame goes.
            if let Some(c) = control.take() {
                out.bytes.truncate(c);
            }
            out.drop("cut-data");
            break;
        };
        match intro {
            TRAILER => {
                if at + 1 < bytes.len() {
                    out.drop("trailing-bytes");
                }
                if let Some(c) = control.take() {
                    out.bytes.truncate(c);
                }
                break;
            }
            EXTENSION => {
                let label = bytes.get(at + 1).copied();
                let run = sub_blocks(bytes, at + 2);
                if run.cut || label.is_none() {
                    if let Some(c) = control.take() {
                        out.bytes.truncate(c);
                    }
                    out.drop("cut-data");
                    break;
                }
                let block = &bytes[at..run.end];
                at = run.end;
                match label {
                    Some(0xF9) if block.len() == 8 && block[2] == 4 => {
                        if let Some(c) = control.take() {
                            // Only the last control before a frame counts; the earlier one goes.
                            out.bytes.truncate(c);
                        }
                        control = Some(out.bytes.len());
                        out.bytes.extend_from_slice(block);
                    }
                    // The name is the identifier sub-block's first 11 bytes (a shorter sub-block
                    // only looks like it, its next one read into it).
                    Some(0xFF)
                        if block[2] >= 11
                            && (block.get(3..14) == Some(b"NETSCAPE2.0")
                                || block.get(3..14) == Some(b"ANIMEXTS1.0")) =>
                    {
                        looping(&mut out, &run.blocks)
                    }
                    Some(0xFF) if block.get(3..14) == Some(b"XMP DataXMP") => out.metadata(block, "xmp"),
                    Some(0xFE) => out.metadata(block, "comment"),
                    Some(0x01 | 0xFF) => out.metadata(block, "other-metadata"),
                    // A malformed graphic control, or a label no GIF version defines: skipped
                    // whatever the options, as giflib, Pillow, libvips and Chromium skip it.
                    _ => out.drop("other-metadata"),
                }
            }
            IMAGE => {
                frames_met += 1;
                let Some(d) = bytes.get(at..at + 10) else {
                    if let Some(c) = control.take() {
                        out.bytes.truncate(c);
                    }
                    out.drop("cut-data");
                    break;
                };
                let [left, top, w, h] = [1, 3, 5, 7].map(|i| usize::from(u16::from_le_bytes([d[i], d[i + 1]])));
                let packed = d[9];
                let pixels = w * h;
                if pixels as u64 > DECODE_MAX_PIXELS {
                    return broken(format!(
                        "a GIF frame of {w}x{h} px at ({left}, {top}) on the {sw}x{sh} logical screen declares more \
                         than {DECODE_MAX_PIXELS} pixels; not decoded"
                    ));
                }
                if pixels as u64 > pixels_left {
                    return broken(format!(
                        "the GIF's frames hold more than {GIF_FRAMES_MAX_PIXELS} pixels in all (a decoding-time bomb); \
                         not decoded"
                    ));
                }
                pixels_left -= pixels as u64;
                let local = packed & 0x80 != 0;
                let table_end = at + 10 + if local { table_len(packed) } else { 0 };
                let Some(&min_code) = bytes.get(table_end) else {
                    if let Some(c) = control.take() {
                        out.bytes.truncate(c);
                    }
                    out.drop("cut-data");
                    break;
                };
                let run = sub_blocks(bytes, table_end + 1);
                let frame = Frame {
                    descriptor: &bytes[at..table_end],
                    min_code,
                    run: &run,
                    rect: [left, top, w, h],
                    screen: [sw, sh],
                    colours: match (local, global) {
                        (true, _) => table_len(packed) / 3,
                        (false, true) => table_len(screen[10]) / 3,
                        (false, false) => 256,
                    },
                };
                at = run.end;
                let written = frame.write(&mut out, &mut decoder, &mut control, frames_written == 0);
                if written {
                    frames_written += 1;
                    needs_default_palette |= !global && !local;
                }
                if run.cut {
                    out.drop("cut-data");
                    break;
                }
            }
            other => return broken(format!("the GIF has an unknown block {other:#04X} at byte {at}")),
        }
    }
    if frames_met == 0 {
        return broken("the GIF has no frame (it ends before its first image)");
    }
    if frames_written == 0 {
        // Every frame lay off the screen: the screen shows nothing, as the references show it.
        // One transparent pixel keeps the file a GIF every decoder reads.
        out.bytes.extend_from_slice(&[EXTENSION, 0xF9, 4, 0x01, 0, 0, 0, 0]);
        out.bytes.extend_from_slice(&[IMAGE, 0, 0, 0, 0, 1, 0, 1, 0, 0]);
        out.bytes.extend_from_slice(&lzw_encoded(2, &[0]));
        needs_default_palette |= !global;
    }
    out.bytes.push(TRAILER);
    if needs_default_palette {
        // A global table of 256 entries, 8 bits per primary.
        out.bytes[10] = (out.bytes[10] & 0x08) | 0xF7;
        let ramp: Vec<u8> = (0..=255u8).flat_map(|v| [v, v, v]).collect();
        out.bytes.splice(13..13, ramp);
    }
    Ok(out.finish())
}

struct Frame<'a, 'b> {
    /// The image descriptor and the local colour table.
    descriptor: &'a [u8],
    min_code: u8,
    run: &'b SubBlocks<'a>,
    rect: [usize; 4],
    screen: [usize; 2],
    /// Entries of the colour table the frame's indices name (its own, the global one, or the
    /// 256-entry grey ramp the gate writes where there is none).
    colours: usize,
}

impl Frame<'_, '_> {
    /// Writes the frame as it is, clipped or repaired; `false` when it is dropped (with the
    /// control extension before it).
    fn write(
        &self,
        out: &mut Out,
        decoder: &mut Option<(u8, Decoder)>,
        control: &mut Option<usize>,
        first: bool,
    ) -> bool {
        let [left, top, w, h] = self.rect;
        let [sw, sh] = self.screen;
        let drop_frame = |out: &mut Out, control: &mut Option<usize>, kind: &'static str| {
            if let Some(c) = control.take() {
                out.bytes.truncate(c);
            }
            out.drop(kind);
            false
        };
        // A frame of no pixels shows nothing: libvips and Chromium skip it, the `gif` crate
        // fails on it (its data cannot fill an empty buffer).
        if w == 0 || h == 0 {
            return drop_frame(out, control, "off-screen");
        }
        // The `gif` crate's bounds; giflib's are the same or tighter.
        if !(1..=11).contains(&self.min_code) {
            return if self.run.cut {
                drop_frame(out, control, "cut-data")
            } else {
                drop_frame(out, control, "broken-frames")
            };
        }
        let decoder = match decoder {
            Some((size, d)) if *size == self.min_code => {
                d.reset();
                d
            }
            _ => &mut decoder.insert((self.min_code, Decoder::new(BitOrder::Lsb, self.min_code))).1,
        };
        let got = lzw_decode(decoder, &self.run.blocks, w * h, None);
        // The part on the screen.
        let (vw, vh) = (sw.saturating_sub(left).min(w), sh.saturating_sub(top).min(h));
        let whole = got == w * h;
        if whole && !self.run.cut && (vw, vh) == (w, h) {
            out.bytes.extend_from_slice(self.descriptor);
            out.bytes.push(self.min_code);
            for block in &self.run.blocks {
                out.bytes.push(block.len() as u8);
                out.bytes.extend_from_slice(block);
            }
            out.bytes.push(0);
            *control = None;
            return true;
        }
        if !whole && !self.run.cut && !first {
            return drop_frame(out, control, "broken-frames");
        }
        let kind = if self.run.cut {
            "cut-data"
        } else if !whole {
            "broken-frames"
        } else {
            "off-screen"
        };
        if vw == 0 || vh == 0 {
            return drop_frame(out, control, "off-screen");
        }
        if got == 0 && !first {
            return drop_frame(out, control, kind);
        }
        // The frame's indices, in rows as shown, the part the data did not reach filled.
        let mut stored = Vec::with_capacity(got);
        decoder.reset();
        lzw_decode(decoder, &self.run.blocks, got, Some(&mut stored));
        let fill = if whole { 0 } else { self.transparent_fill(out, control, &stored) };
        let mut rows = vec![fill; w * h];
        let interlaced = self.descriptor[9] & 0x40 != 0;
        let order: Box<dyn Iterator<Item = usize>> =
            if interlaced { Box::new(interlaced_rows(h)) } else { Box::new(0..h) };
        for (row, data) in order.zip(stored.chunks(w.max(1))) {
            rows[row * w..row * w + data.len()].copy_from_slice(data);
        }
        let visible: Vec<u8> = rows.chunks(w.max(1)).take(vh).flat_map(|r| r[..vw].iter().copied()).collect();
        let mut descriptor = self.descriptor.to_vec();
        descriptor[5..7].copy_from_slice(&(vw as u16).to_le_bytes());
        descriptor[7..9].copy_from_slice(&(vh as u16).to_le_bytes());
        descriptor[9] &= !0x40; // written row by row
        out.bytes.extend_from_slice(&descriptor);
        out.bytes.extend_from_slice(&lzw_encoded(self.min_code, &visible));
        out.reencoded = true;
        out.drop(kind);
        if (vw, vh) != (w, h) {
            out.drop("off-screen");
        }
        *control = None;
        true
    }

    /// The index that fills what the data did not reach, made transparent: the control's own
    /// transparent index, else one the frame does not use (set in the control, or a control
    /// added); with every index used, index 0, opaque. Always an index of the colour table: one
    /// past it is an "invalid colormap index" to ImageMagick, which then refuses the file.
    fn transparent_fill(&self, out: &mut Out, control: &mut Option<usize>, stored: &[u8]) -> u8 {
        if let Some(c) = *control
            && out.bytes[c + 3] & 1 != 0
            && usize::from(out.bytes[c + 6]) < self.colours
        {
            return out.bytes[c + 6];
        }
        let codes = (1usize << self.min_code.max(2)).min(self.colours);
        let mut used = [false; 4096];
        for &i in stored {
            used[usize::from(i)] = true;
        }
        let Some(free) = (0..codes.min(256)).find(|&i| !used[i]) else { return 0 };
        let free = free as u8;
        match *control {
            Some(c) => {
                out.bytes[c + 3] |= 1;
                out.bytes[c + 6] = free;
            }
            None => out.bytes.extend_from_slice(&[EXTENSION, 0xF9, 4, 0x01, 0, 0, free, 0]),
        }
        free
    }
}
