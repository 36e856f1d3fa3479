//! A PNG cut before its IEND, repaired as the world's decoders show it: Pillow, libvips and
//! Chromium draw the rows whose data arrived and leave the rest empty. The repair keeps every
//! scanline that arrived whole, exactly as it was filtered, appends the missing scanlines as zero
//! bytes (filter type None: black, or transparent where the image has alpha, palette index 0 for
//! a palette image), and writes the image data as one new zlib stream — lossless, no pixel
//! decoded by the gate. A file whose image data all arrived (cut only in what follows it) keeps
//! its IDAT chunks as they are.
//!
//! The scanlines' length is known from IHDR before anything is inflated, and bounded by
//! the decoder's (`expected_len`): a cut file's data are never inflated past what its header declares.

use super::png_image_data::{expected_len, scanlines};
use super::{Out, broken, png_chunk};
use crate::container::Broken;

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
    let expected = match expected_len(&passes) {
        Ok(expected) => expected,
        Err(why) => return broken(format!("the PNG is cut, and its image data {why}; not repaired")),
    };
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
