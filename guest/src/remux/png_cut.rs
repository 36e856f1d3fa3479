//! A PNG cut before its IEND, repaired as the world's decoders show it: Pillow, libvips and
//! Chromium draw the rows whose data arrived and leave the rest empty. The repair keeps every
//! scanline that arrived whole, exactly as it was filtered, appends the missing scanlines as zero
//! bytes (filter type None: black, or transparent where the image has alpha, palette index 0 for
//! a palette image), and writes the image data as one new zlib stream — lossless, no pixel
//! decoded by the gate. A file whose image data all arrived (cut only in what follows it) keeps
//! its IDAT chunks as they are. The scanline count also checks the image data of a whole PNG
//! whose IDAT CRC fails ([`check_image_data`]).
//!
//! The scanlines' length is known from IHDR before anything is inflated, and bounded by
//! [`DECODE_MAX_ALLOC`]: a cut file's data are never inflated past what its header declares.

use super::{Out, broken, png_chunk};
use crate::container::Broken;
use crate::limits::DECODE_MAX_ALLOC;

/// The length of every scanline (its filter byte included) in the order the image data hold
/// them: row by row, or pass by pass for an Adam7-interlaced image. `None`: a header no decoder
/// reads (the decoders refuse it with their own words).
fn scanlines(ihdr: &[u8]) -> Option<Vec<(u64, u64)>> {
    let be = |at: usize| u64::from(u32::from_be_bytes([ihdr[at], ihdr[at + 1], ihdr[at + 2], ihdr[at + 3]]));
    let (width, height, depth, colour, interlace) = (be(0), be(4), u64::from(ihdr[8]), ihdr[9], ihdr[12]);
    let channels = match colour {
        0 | 3 => 1,
        2 => 3,
        4 => 2,
        6 => 4,
        _ => return None,
    };
    let row_bytes = |w: u64| 1 + (w * channels * depth).div_ceil(8);
    // (scanline length, how many), per pass.
    let passes: Vec<(u64, u64)> = match interlace {
        0 => vec![(row_bytes(width), height)],
        1 => [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            .into_iter()
            .filter_map(|(x0, y0, dx, dy)| {
                let w = width.saturating_sub(x0).div_ceil(dx);
                let h = height.saturating_sub(y0).div_ceil(dy);
                (w > 0 && h > 0).then(|| (row_bytes(w), h))
            })
            .collect(),
        _ => return None,
    };
    Some(passes)
}

/// Repairs the image data of a PNG cut before IEND, in `out` (whose IDAT chunks span
/// `idat_span`); `arrived` is the data of a cut IDAT chunk, as far as it goes.
pub(super) fn repair(
    out: &mut Out,
    ihdr: Option<&[u8]>,
    idats: &[&[u8]],
    arrived: &[u8],
    idat_span: Option<(usize, usize)>,
) -> Result<(), Broken> {
    let Some(ihdr) = ihdr.filter(|h| h.len() == 13) else {
        return broken("the PNG ends before its image header (truncated)");
    };
    if idats.is_empty() && arrived.is_empty() {
        return broken("the PNG ends before its image data (truncated)");
    }
    let Some(passes) = scanlines(ihdr) else {
        return broken("the PNG is cut, and its header declares no layout a decoder reads");
    };
    let expected: u64 = passes.iter().map(|(len, n)| len * n).sum();
    if expected > DECODE_MAX_ALLOC {
        return broken(format!(
            "the PNG is cut, and its {expected} bytes of image data exceed the decoder's bound of \
             {DECODE_MAX_ALLOC} bytes; not repaired"
        ));
    }
    // The whole chunks' data go into the new stream unchecked by any decoder: check them here.
    for chunk in idats {
        let (body, crc) = chunk[4..].split_at(chunk.len() - 8);
        if crc32fast::hash(body).to_be_bytes() != crc {
            return broken("the PNG is cut, and an IDAT chunk before the cut fails its CRC");
        }
    }
    let stream: Vec<u8> =
        idats.iter().flat_map(|c| c[8..c.len() - 4].iter().copied()).chain(arrived.iter().copied()).collect();
    let expected = expected as usize;
    let mut rows = match miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&stream, expected) {
        Ok(rows) => rows,
        // Cut, corrupt past some point, or longer than the image: what inflated is kept.
        Err(e) => e.output,
    };
    if rows.len() == expected && arrived.is_empty() {
        return Ok(()); // every scanline arrived in whole chunks: only the end is written
    }
    // The scanlines that arrived whole; a partial one goes (its filter reads bytes that are lost).
    let mut whole = 0usize;
    'passes: for &(len, n) in &passes {
        for _ in 0..n {
            let len = len as usize;
            if whole + len > rows.len() {
                break 'passes;
            }
            whole += len;
        }
    }
    // Nothing of the picture arrived: a repair would be an image made up whole, not shown.
    if whole == 0 {
        return broken("the PNG is cut before a whole row of its image data arrived (truncated)");
    }
    rows.truncate(whole);
    rows.resize(expected, 0);
    let data = miniz_oxide::deflate::compress_to_vec_zlib(&rows, 6);
    let mut chunks = Vec::with_capacity(data.len() + 12 * (data.len() / (1 << 20) + 1));
    for part in data.chunks(1 << 20) {
        png_chunk(&mut chunks, b"IDAT", part);
    }
    let (start, end) = idat_span.unwrap_or((out.bytes.len(), out.bytes.len()));
    out.bytes.splice(start..end, chunks);
    out.reencoded = true;
    Ok(())
}

/// The image data of a whole PNG one of whose IDAT chunks fails its CRC, checked as the CRC
/// would have: the IDAT chunks' data are one zlib stream that inflates to exactly the scanlines
/// IHDR declares, ends with the chunks, and matches its own Adler-32 checksum. Such data are
/// intact (only the CRC is wrong, and the re-mux writes a fresh one); anything else is damaged
/// data a lenient decoder would show as garbage, refused. Inflated into a small window, never held.
pub(super) fn check_image_data(ihdr: Option<&[u8]>, idats: &[&[u8]]) -> Result<(), Broken> {
    use miniz_oxide::inflate::stream::{InflateState, inflate};
    use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};

    let damaged = |why: &str| broken(format!("an IDAT chunk of the PNG fails its CRC, and its image data {why}"));
    let Some(passes) = ihdr.filter(|h| h.len() == 13).and_then(scanlines) else {
        return damaged("cannot be checked against a header no decoder reads");
    };
    let expected: u64 = passes.iter().map(|(len, n)| len * n).sum();
    if expected > DECODE_MAX_ALLOC {
        return damaged(&format!(
            "({expected} bytes) exceed the decoder's bound of {DECODE_MAX_ALLOC} bytes; not checked"
        ));
    }
    let mut state = InflateState::new_boxed(DataFormat::Zlib);
    let mut window = vec![0u8; 1 << 15];
    let mut inflated = 0u64;
    let mut ended = false;
    for chunk in idats {
        let mut input = &chunk[8..chunk.len() - 4];
        if ended {
            if input.is_empty() {
                continue;
            }
            return damaged("go on past the end of their zlib stream");
        }
        loop {
            let step = inflate(&mut state, input, &mut window, MZFlush::None);
            input = &input[step.bytes_consumed..];
            inflated += step.bytes_written as u64;
            if inflated > expected {
                return damaged("inflate to more bytes than the image holds");
            }
            let stuck = step.bytes_consumed == 0 && step.bytes_written == 0;
            match step.status {
                Ok(MZStatus::StreamEnd) => {
                    ended = true;
                    if !input.is_empty() {
                        return damaged("go on past the end of their zlib stream");
                    }
                    break;
                }
                Ok(_) | Err(MZError::Buf) if input.is_empty() && step.bytes_written < window.len() => break,
                Ok(_) | Err(MZError::Buf) if !stuck => {}
                _ => return damaged("do not inflate (corrupt zlib data or a wrong Adler-32 checksum)"),
            }
        }
    }
    if !ended || inflated != expected {
        return damaged("end before the image is whole");
    }
    Ok(())
}
