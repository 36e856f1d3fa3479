//! A whole PNG's image data, read once: the IDAT chunks' data inflated through a small window
//! (never held), checked as libpng and the png crate check them — one zlib stream, its Adler-32
//! checksum right, every scanline IHDR declares, each with a filter type a decoder knows — and
//! ended where the zlib stream ends. Decoders stop at the stream's end and never show what follows
//! it (the rest of the last IDAT chunk, whole IDAT chunks after it), so free bytes there would pass
//! every decoder unseen: the canonical form writes the image data without them.
//!
//! The data are only read, never re-compressed: the stream's bytes up to its end are kept as
//! they are.

use super::png_chunk;
use crate::container::Broken;
use crate::limits::DECODE_MAX_ALLOC;

/// The length of every scanline (its filter byte included) in the order the image data hold
/// them, as (length, how many) per pass: row by row, or pass by pass for an Adam7-interlaced
/// image. `None`: a header no decoder reads (the decoders refuse it with their own words).
pub(super) fn scanlines(ihdr: &[u8]) -> Option<Vec<(u64, u64)>> {
    if ihdr.len() != 13 {
        return None;
    }
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

/// The bytes of image data every scanline IHDR declares fills, bounded by the decoder's.
pub(super) fn expected_len(passes: &[(u64, u64)]) -> Result<u64, String> {
    let expected: u64 = passes.iter().map(|(len, n)| len * n).sum();
    if expected > DECODE_MAX_ALLOC {
        return Err(format!("({expected} bytes) exceed the decoder's bound of {DECODE_MAX_ALLOC} bytes"));
    }
    Ok(expected)
}

/// How a whole PNG's image data read.
#[derive(Debug, PartialEq)]
pub(super) enum ImageData {
    /// The zlib stream ends, its checksum right, after exactly the scanlines IHDR declares: in the
    /// IDAT chunk `chunk` (counted among the IDAT chunks), after `used` bytes of its data.
    Ended { chunk: usize, used: usize },
    /// Every scanline arrived, but the stream inflates past them or never ends: libpng and the png
    /// crate show such data (they stop at the last scanline), and there is no end to cut at.
    Unended,
}

/// The output window fdeflate inflates into: the 32 KiB a deflate stream may refer back to, kept
/// at its front, and room for what follows (the fewer moves of those 32 KiB, the larger).
const WINDOW: usize = 1 << 20;
const LOOKBACK: usize = 1 << 15;

/// Reads the image data `idats` (the IDAT chunks' data, in order) of an image whose header is
/// `ihdr`. `Err`: why no decoder shows them whole — corrupt, cut, or a checksum that fails.
///
/// fdeflate (png's own inflater, the fastest here) takes a few bytes past the stream's end into
/// its bit buffer and does not say how many; the Adler-32 checksum, computed here as the data
/// inflate, places the end: the stream ends just after the place, among the last bytes taken,
/// that holds it. Where bytes after it repeat the checksum, the cut comes after the repeat: the
/// stream is always kept whole, and what is kept past it is a copy of its checksum, no free text.
pub(super) fn read(ihdr: &[u8], idats: &[&[u8]]) -> Result<ImageData, String> {
    const CORRUPT: &str = "do not inflate (corrupt zlib data or a wrong Adler-32 checksum)";
    let Some(passes) = scanlines(ihdr) else {
        return Err("cannot be read under a header no decoder reads".into());
    };
    let expected = expected_len(&passes)?;
    let mut filters = FilterBytes::new(&passes);
    let mut inflater = fdeflate::Decompressor::new();
    inflater.ignore_adler32();
    let mut adler = simd_adler32::Adler32::new();
    let mut window = vec![0u8; WINDOW.min(expected as usize + LOOKBACK)];
    let mut filled = 0usize;
    let mut inflated = 0u64;
    // The last bytes of the chunks before this one: the checksum may begin in them.
    let mut before: Vec<u8> = Vec::new();
    for (chunk, data) in idats.iter().enumerate() {
        let mut input = *data;
        loop {
            if filled == window.len() {
                window.copy_within(filled - LOOKBACK.min(filled).., 0);
                filled = LOOKBACK.min(filled);
            }
            let (taken, made) = inflater.read(input, &mut window, filled, false).map_err(|_| CORRUPT.to_string())?;
            input = &input[taken..];
            let out = &window[filled..filled + made];
            if let Some(filter) = filters.check(inflated, out) {
                return Err(format!("hold a scanline of filter type {filter}, which no decoder knows"));
            }
            adler.write(out);
            filled += made;
            inflated += made as u64;
            if inflated > expected {
                return Ok(ImageData::Unended);
            }
            if inflater.is_done() {
                if inflated < expected {
                    return Err("end before the image is whole".into());
                }
                let taken = data.len() - input.len();
                return match checksum_end(&before, &data[..taken], adler.finish()) {
                    Ok(Some(used)) => Ok(ImageData::Ended { chunk, used }),
                    Ok(None) => Ok(ImageData::Unended),
                    Err(()) => Err(CORRUPT.into()),
                };
            }
            if input.is_empty() && filled < window.len() {
                break;
            }
            if taken == 0 && made == 0 {
                return Err(CORRUPT.into());
            }
        }
        before.extend_from_slice(&data[data.len().saturating_sub(8)..]);
        before.drain(..before.len().saturating_sub(8));
    }
    if inflated < expected {
        return Err("end before the image is whole".into());
    }
    Ok(ImageData::Unended)
}

/// Where the stream ends in a chunk of which the inflater has taken `taken` bytes (`before`: the
/// bytes of earlier chunks just before it): after the checksum `adler`, big-endian, which stands
/// within the last 8 bytes taken — after the last place that holds it. `Ok(None)`: that place
/// does not end in this chunk (no stream the inflater ends here does that); `Err`: no place holds
/// it (the checksum fails).
fn checksum_end(before: &[u8], taken: &[u8], adler: u32) -> Result<Option<usize>, ()> {
    // The last 12 bytes taken hold every place the checksum may end (the last 8) and its 4 bytes;
    // `before` matters only when fewer were taken.
    let skip = taken.len().saturating_sub(12);
    let joined = [before, &taken[skip..]].concat();
    let want = adler.to_be_bytes();
    let first = joined.len().saturating_sub(8).max(4);
    match (first..=joined.len()).rev().find(|&end| joined[end - 4..end] == want) {
        None => Err(()),
        Some(end) if end > before.len() => Ok(Some(end - before.len() + skip)),
        Some(_) => Ok(None),
    }
}

/// Where the filter byte of each scanline falls in the inflated data, checked as they arrive.
struct FilterBytes<'a> {
    passes: &'a [(u64, u64)],
    pass: usize,
    left_in_pass: u64,
    next: u64,
}

impl<'a> FilterBytes<'a> {
    fn new(passes: &'a [(u64, u64)]) -> Self {
        FilterBytes { passes, pass: 0, left_in_pass: passes.first().map_or(0, |p| p.1), next: 0 }
    }

    /// The first filter type past 4 in `out`, the inflated data from offset `at`.
    fn check(&mut self, at: u64, out: &[u8]) -> Option<u8> {
        let end = at + out.len() as u64;
        while self.next < end && self.pass < self.passes.len() {
            let filter = out[(self.next - at) as usize];
            if filter > 4 {
                return Some(filter);
            }
            self.next += self.passes[self.pass].0;
            self.left_in_pass -= 1;
            while self.left_in_pass == 0 && self.pass < self.passes.len() {
                self.pass += 1;
                self.left_in_pass = self.passes.get(self.pass).map_or(0, |p| p.1);
            }
        }
        None
    }
}

/// The chunks of a whole PNG as (start, kind, data).
fn chunks(png: &[u8]) -> impl Iterator<Item = (usize, [u8; 4], &[u8])> {
    let mut at = 8;
    std::iter::from_fn(move || {
        let head = png.get(at..at + 8)?;
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let data = png.get(at + 8..(at + 8).checked_add(len)?.checked_add(4)?)?;
        let start = at;
        at += 12 + len;
        Some((start, [head[4], head[5], head[6], head[7]], &data[..len]))
    })
}

/// The image data of `png`, a whole PNG in its canonical form, read and ended at their zlib
/// stream's end. `Ok(None)`: nothing follows the stream (or it has no end to cut at); `Ok(Some)`:
/// the PNG without what followed, and whether any byte went (empty IDAT chunks go unnamed).
pub fn end_image_data(png: &[u8]) -> Result<Option<(Vec<u8>, bool)>, Broken> {
    let ihdr = chunks(png).find(|(_, kind, _)| kind == b"IHDR").map_or(&[][..], |(_, _, data)| data);
    let idats: Vec<&[u8]> = chunks(png).filter(|(_, kind, _)| kind == b"IDAT").map(|(_, _, data)| data).collect();
    let (chunk, used) = match read(ihdr, &idats) {
        Ok(ImageData::Ended { chunk, used }) => (chunk, used),
        Ok(ImageData::Unended) => return Ok(None),
        Err(why) => return Err(Broken(format!("the PNG's image data {why}"))),
    };
    if chunk + 1 == idats.len() && used == idats[chunk].len() {
        return Ok(None);
    }
    let stray = idats[chunk].len() - used + idats[chunk + 1..].iter().map(|d| d.len()).sum::<usize>();
    let mut out = Vec::with_capacity(png.len() - stray);
    out.extend_from_slice(&png[..8]);
    let mut idat = 0;
    for (start, kind, data) in chunks(png) {
        if &kind != b"IDAT" {
            out.extend_from_slice(&png[start..start + 12 + data.len()]);
            continue;
        }
        if idat < chunk {
            out.extend_from_slice(&png[start..start + 12 + data.len()]);
        } else if idat == chunk {
            png_chunk(&mut out, b"IDAT", &data[..used]);
        }
        idat += 1;
    }
    Ok(Some((out, stray > 0)))
}

/// The image data of a whole PNG one of whose IDAT chunks fails its CRC, checked as the CRC
/// would have: one zlib stream that inflates to exactly the scanlines IHDR declares, ends with
/// the chunks, and matches its own Adler-32 checksum. Such data are intact (only the CRC is
/// wrong, and the re-mux writes a fresh one); anything else is damaged data a lenient decoder
/// would show as garbage, refused.
pub(super) fn check_after_bad_crc(ihdr: Option<&[u8]>, idats: &[&[u8]]) -> Result<(), Broken> {
    let damaged = |why: &str| Err(Broken(format!("an IDAT chunk of the PNG fails its CRC, and its image data {why}")));
    let data: Vec<&[u8]> = idats.iter().map(|c| &c[8..c.len() - 4]).collect();
    match read(ihdr.unwrap_or_default(), &data) {
        Ok(ImageData::Ended { chunk, used })
            if used == data[chunk].len() && data[chunk + 1..].iter().all(|d| d.is_empty()) =>
        {
            Ok(())
        }
        Ok(ImageData::Ended { .. }) => damaged("go on past the end of their zlib stream"),
        Ok(ImageData::Unended) => damaged("inflate to more bytes than the image holds, or never end"),
        Err(why) => damaged(&why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_images::png;

    /// `png` (a whole PNG of one IDAT chunk) with that chunk's data replaced by `make(data)`.
    fn with_image_data(png: &[u8], make: impl Fn(&[u8]) -> Vec<Vec<u8>>) -> Vec<u8> {
        let mut out = png[..8].to_vec();
        for (start, kind, data) in chunks(png) {
            if &kind == b"IDAT" {
                for part in make(data) {
                    png_chunk(&mut out, b"IDAT", &part);
                }
            } else {
                out.extend_from_slice(&png[start..start + 12 + data.len()]);
            }
        }
        out
    }

    fn image_data(png: &[u8]) -> Vec<u8> {
        chunks(png).filter(|(_, k, _)| k == b"IDAT").flat_map(|(_, _, d)| d.to_vec()).collect()
    }

    #[test]
    fn a_whole_png_is_left_as_it_is_plain_or_interlaced_split_or_not() {
        let plain = png(37, 21);
        assert_eq!(end_image_data(&plain).unwrap(), None);
        let split = with_image_data(&plain, |d| d.chunks(7).map(<[u8]>::to_vec).collect());
        assert_eq!(end_image_data(&split).unwrap(), None);
        // Adam7: seven passes of scanlines, of 15 bytes at most (37 / 8 px and up).
        let mut ihdr = chunks(&plain).next().unwrap().2.to_vec();
        ihdr[12] = 1;
        let expected = expected_len(&scanlines(&ihdr).unwrap()).unwrap() as usize;
        let rows = miniz_oxide::deflate::compress_to_vec_zlib(&vec![0; expected], 6);
        let mut interlaced = plain[..8].to_vec();
        png_chunk(&mut interlaced, b"IHDR", &ihdr);
        png_chunk(&mut interlaced, b"IDAT", &rows);
        png_chunk(&mut interlaced, b"IEND", &[]);
        assert_eq!(end_image_data(&interlaced).unwrap(), None);
        let with_tail = with_image_data(&interlaced, |d| vec![[d, b"tail"].concat()]);
        assert_eq!(end_image_data(&with_tail).unwrap(), Some((interlaced.clone(), true)));
        assert_eq!(end_image_data(&interlaced).unwrap(), None);
    }

    #[test]
    fn bytes_after_the_zlib_stream_and_idat_chunks_after_it_go() {
        let plain = png(37, 21);
        let tail = b"SMUGGLED after the stream".to_vec();
        let in_last = with_image_data(&plain, |d| vec![[d, &tail[..]].concat()]);
        assert_eq!(end_image_data(&in_last).unwrap(), Some((plain.clone(), true)));
        let extra_chunk = with_image_data(&plain, |d| vec![d.to_vec(), tail.clone()]);
        assert_eq!(end_image_data(&extra_chunk).unwrap(), Some((plain.clone(), true)));
        // Split before the end: the chunks up to it stay as they were, the one it ends in is cut.
        let split = with_image_data(&plain, |d| {
            let (a, b) = d.split_at(d.len() - 3);
            vec![a.to_vec(), [b, &tail[..]].concat(), tail.clone()]
        });
        let ended = end_image_data(&split).unwrap().unwrap().0;
        assert_eq!(image_data(&ended), image_data(&plain));
        assert_eq!(chunks(&ended).filter(|(_, k, _)| k == b"IDAT").count(), 2);
        // An empty IDAT chunk after the end holds nothing: rewritten, no byte named dropped.
        let empty = with_image_data(&plain, |d| vec![d.to_vec(), Vec::new()]);
        assert_eq!(end_image_data(&empty).unwrap(), Some((plain, false)));
    }

    #[test]
    fn the_checksum_places_the_end_even_split_across_chunks() {
        let plain = png(37, 21);
        // The last chunk holds the checksum's last two bytes, and text after them.
        let straddling = with_image_data(&plain, |d| {
            let (a, b) = d.split_at(d.len() - 2);
            vec![a.to_vec(), [b, b"tail"].concat()]
        });
        let ended = end_image_data(&straddling).unwrap().unwrap().0;
        assert_eq!(image_data(&ended), image_data(&plain));
        // The end is after the last place among the last bytes taken that holds the checksum.
        let adler = 0x0102_0304u32;
        assert_eq!(checksum_end(&[], &[9, 9, 1, 2, 3, 4, 7, 7], adler), Ok(Some(6)));
        assert_eq!(checksum_end(&[9, 1, 2], &[3, 4, 7], adler), Ok(Some(2)));
        let long = [&[9; 20][..], &[1, 2, 3, 4, 7, 7][..]].concat();
        assert_eq!(checksum_end(&[1, 2, 3, 4], &long, adler), Ok(Some(24)));
        assert_eq!(checksum_end(&[1, 2, 3, 4], &[7], adler), Ok(None));
        assert_eq!(checksum_end(&[], &[1, 2, 3, 4, 1, 2, 3, 4], adler), Ok(Some(8)));
        assert_eq!(checksum_end(&[], &[9, 9, 9, 9, 9], adler), Err(()));
    }

    #[test]
    fn damaged_image_data_are_refused_with_what_is_wrong() {
        let why = |png: &[u8]| end_image_data(png).unwrap_err().0;
        let plain = png(37, 21);
        let mut bad_adler = image_data(&plain);
        *bad_adler.last_mut().unwrap() ^= 1;
        assert!(why(&with_image_data(&plain, |_| vec![bad_adler.clone()])).contains("Adler-32"));
        let short = miniz_oxide::deflate::compress_to_vec_zlib(&[0; 10], 6);
        assert!(why(&with_image_data(&plain, |_| vec![short.clone()])).contains("end before the image is whole"));
        // Filter type 5 on the second scanline (1 + 37 * 3 bytes each).
        let mut rows = miniz_oxide::inflate::decompress_to_vec_zlib(&image_data(&plain)).unwrap();
        rows[112] = 5;
        let bad_filter = miniz_oxide::deflate::compress_to_vec_zlib(&rows, 6);
        assert!(why(&with_image_data(&plain, |_| vec![bad_filter.clone()])).contains("filter type 5"));
        let no_data = with_image_data(&plain, |_| Vec::new());
        assert!(why(&no_data).contains("end before the image is whole"));
    }

    #[test]
    fn a_stream_longer_than_the_image_has_no_end_to_cut_at() {
        let plain = png(8, 8);
        let mut rows = miniz_oxide::inflate::decompress_to_vec_zlib(&image_data(&plain)).unwrap();
        rows.extend_from_slice(&[0; 100]);
        let long = miniz_oxide::deflate::compress_to_vec_zlib(&rows, 6);
        assert_eq!(end_image_data(&with_image_data(&plain, |_| vec![long.clone()])).unwrap(), None);
    }
}
