//! The container structure of an image, walked before any decoder runs: what a lenient decoder
//! forgives (a JPEG cut before its end, a PNG without IEND, a RIFF that claims more bytes than
//! arrived) a provider may not, and what a decoder spends without bound (a zlib bomb in a
//! metadata chunk, thousands of progressive scans) is refused here, cheaply.

use crate::limits::{ANCILLARY_INFLATE_MAX, JPEG_MAX_SCANS};
use crate::signature::ImageType;

/// Why the container is refused, in words; the gate reports it as `undecodable`.
#[derive(Debug, PartialEq, Eq)]
pub struct Broken(pub String);

fn broken(message: impl Into<String>) -> Result<(), Broken> {
    Err(Broken(message.into()))
}

pub fn check(bytes: &[u8], t: ImageType) -> Result<(), Broken> {
    match t {
        ImageType::Png => png(bytes),
        ImageType::Jpeg => jpeg(bytes),
        ImageType::WebP => webp(bytes),
        // The GIF decoder stops with an error on a cut block; its blocks carry no compressed
        // metadata a decoder would inflate.
        ImageType::Gif => Ok(()),
    }
}

/// Chunks from IHDR to IEND, each inside the file; compressed metadata chunks (`iCCP`, `zTXt`,
/// compressed `iTXt`) inflate to at most [`ANCILLARY_INFLATE_MAX`] bytes in all (a corrupt one is
/// not refused here: whether the pixels decode is the decoder's verdict).
fn png(bytes: &[u8]) -> Result<(), Broken> {
    let mut at = 8; // the signature, checked by the gate
    let mut inflate_budget = ANCILLARY_INFLATE_MAX;
    let mut first = true;
    let mut saw_idat = false;
    loop {
        let Some(header) = bytes.get(at..at + 8) else {
            return broken("the PNG ends before its IEND chunk (truncated)");
        };
        let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let kind = [header[4], header[5], header[6], header[7]];
        let data_start = at + 8;
        let Some(data) = data_start.checked_add(len).and_then(|end| bytes.get(data_start..end)) else {
            return broken(format!(
                "the PNG's {} chunk claims {len} bytes but the file ends first (truncated)",
                String::from_utf8_lossy(&kind)
            ));
        };
        if data_start + len + 4 > bytes.len() {
            return broken("the PNG ends inside a chunk's checksum (truncated)");
        }
        if first && &kind != b"IHDR" {
            return broken("the PNG does not start with an IHDR chunk");
        }
        first = false;
        match &kind {
            b"IDAT" => saw_idat = true,
            b"IEND" if !saw_idat => return broken("the PNG has no image data (no IDAT before IEND)"),
            b"IEND" => return Ok(()), // bytes after IEND are ignored by every decoder
            b"iCCP" => inflate_budget = inflate_metadata(&kind, after_keyword(data, 1), inflate_budget)?,
            b"zTXt" => inflate_budget = inflate_metadata(&kind, after_keyword(data, 1), inflate_budget)?,
            b"iTXt" => {
                // keyword \0, compression flag, method, language \0, translated keyword \0, text
                if let Some(rest) = after_keyword(data, 0)
                    && rest.first() == Some(&1)
                {
                    let text = rest.get(2..).and_then(|r| after_keyword(r, 0)).and_then(|r| after_keyword(r, 0));
                    inflate_budget = inflate_metadata(&kind, text, inflate_budget)?;
                }
            }
            _ => {}
        }
        at = data_start + len + 4;
    }
}

/// What follows a NUL-terminated keyword and `skip` more bytes; `None` when the chunk is too short.
fn after_keyword(data: &[u8], skip: usize) -> Option<&[u8]> {
    let nul = data.iter().position(|&b| b == 0)?;
    data.get(nul + 1 + skip..)
}

fn inflate_metadata(kind: &[u8; 4], compressed: Option<&[u8]>, budget: usize) -> Result<usize, Broken> {
    let name = String::from_utf8_lossy(kind);
    let Some(compressed) = compressed else {
        return Err(Broken(format!("the PNG's {name} chunk is malformed")));
    };
    match miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(compressed, budget) {
        Ok(inflated) => Ok(budget - inflated.len()),
        Err(e) if e.status == miniz_oxide::inflate::TINFLStatus::HasMoreOutput => Err(Broken(format!(
            "the PNG's compressed metadata ({name}) inflates past {ANCILLARY_INFLATE_MAX} bytes (a zlib bomb)"
        ))),
        // A metadata stream that is corrupt (a bad checksum, a cut stream) is no bomb: the
        // decoders skip such a profile or comment, and providers accept the image. What it
        // inflated to still counts against the budget.
        Err(e) => Ok(budget.saturating_sub(e.output.len())),
    }
}

/// Markers from SOI to EOI: every segment inside the file, a frame header before the first
/// scan, at most [`JPEG_MAX_SCANS`] scans. Bytes after EOI are ignored.
fn jpeg(bytes: &[u8]) -> Result<(), Broken> {
    let mut at = 2; // SOI, checked by the gate
    let mut scans = 0usize;
    let mut frame = false;
    loop {
        // Fill bytes (0xFF runs) may precede a marker.
        while bytes.get(at) == Some(&0xFF) && bytes.get(at + 1) == Some(&0xFF) {
            at += 1;
        }
        let (Some(&0xFF), Some(&marker)) = (bytes.get(at), bytes.get(at + 1)) else {
            if at >= bytes.len() {
                return broken("the JPEG ends before its end-of-image marker (truncated)");
            }
            return broken(format!("the JPEG has no marker where one must be (byte {at})"));
        };
        at += 2;
        match marker {
            0xD9 => {
                return if scans == 0 { broken("the JPEG has no image data (no scan before EOI)") } else { Ok(()) };
            }
            // Standalone markers: restart markers, TEM.
            0xD0..=0xD7 | 0x01 => continue,
            0xD8 => return broken("the JPEG starts a second image inside the first"),
            _ => {}
        }
        let Some(len) = bytes.get(at..at + 2).map(|l| usize::from(u16::from_be_bytes([l[0], l[1]]))) else {
            return broken("the JPEG ends inside a segment header (truncated)");
        };
        if len < 2 || at + len > bytes.len() {
            return broken(format!("the JPEG's segment {marker:#04X} runs past the end of the file (truncated)"));
        }
        // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
        if matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
            frame = true;
        }
        at += len;
        if marker == 0xDA {
            if !frame {
                return broken("the JPEG has a scan before any frame header");
            }
            scans += 1;
            if scans > JPEG_MAX_SCANS {
                return broken(format!(
                    "the JPEG has more than {JPEG_MAX_SCANS} scans (a decoding-time bomb); not decoded"
                ));
            }
            at = entropy_coded_end(bytes, at)?;
        }
    }
}

/// The index of the marker that ends the entropy-coded data starting at `at`: the first 0xFF not
/// followed by a stuffed zero, a restart marker or fill.
pub(crate) fn entropy_coded_end(bytes: &[u8], mut at: usize) -> Result<usize, Broken> {
    loop {
        let Some(offset) = bytes.get(at..).and_then(|rest| memchr::memchr(0xFF, rest)) else {
            return Err(Broken("the JPEG ends inside its image data (truncated)".into()));
        };
        at += offset;
        match bytes.get(at + 1) {
            None => return Err(Broken("the JPEG ends inside its image data (truncated)".into())),
            Some(0x00) | Some(0xD0..=0xD7) => at += 2,
            Some(0xFF) => at += 1,
            Some(_) => return Ok(at),
        }
    }
}

/// The RIFF container holds the bytes it claims.
fn webp(bytes: &[u8]) -> Result<(), Broken> {
    let claimed = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize;
    if claimed.saturating_add(8) > bytes.len() {
        return broken(format!(
            "the WebP's RIFF header claims {} bytes but the file has {} (truncated)",
            claimed.saturating_add(8),
            bytes.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_images::{encode, gradient, png};
    use image::ImageFormat;

    fn jpeg_bytes() -> Vec<u8> {
        encode(&gradient(64, 48), ImageFormat::Jpeg)
    }

    #[test]
    fn whole_images_pass() {
        assert_eq!(check(&png(16, 16), ImageType::Png), Ok(()));
        assert_eq!(check(&jpeg_bytes(), ImageType::Jpeg), Ok(()));
        let webp = encode(&gradient(16, 16), ImageFormat::WebP);
        assert_eq!(check(&webp, ImageType::WebP), Ok(()));
        let mut trailing = jpeg_bytes();
        trailing.extend_from_slice(b"camera maker notes after EOI");
        assert_eq!(check(&trailing, ImageType::Jpeg), Ok(()));
    }

    #[test]
    fn every_cut_is_caught() {
        let png = png(32, 32);
        for len in 8..png.len() {
            assert!(check(&png[..len], ImageType::Png).is_err(), "PNG cut at {len} of {}", png.len());
        }
        let jpeg = jpeg_bytes();
        for len in 2..jpeg.len() {
            assert!(check(&jpeg[..len], ImageType::Jpeg).is_err(), "JPEG cut at {len} of {}", jpeg.len());
        }
        let webp = encode(&gradient(16, 16), ImageFormat::WebP);
        assert!(check(&webp[..webp.len() - 1], ImageType::WebP).is_err());
    }

    #[test]
    fn a_zlib_bomb_in_a_metadata_chunk_is_refused() {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&vec![0u8; ANCILLARY_INFLATE_MAX + 1]).unwrap();
        let bomb = z.finish().unwrap();
        for (kind, prefix) in
            [(b"iCCP", &b"icc\0\0"[..]), (b"zTXt", &b"Comment\0\0"[..]), (b"iTXt", &b"k\0\x01\0\0\0"[..])]
        {
            let mut data = prefix.to_vec();
            data.extend_from_slice(&bomb);
            let bytes = crate::test_images::png_with_chunk_after_ihdr(kind, &data);
            let err = check(&bytes, ImageType::Png).unwrap_err();
            assert!(err.0.contains("zlib bomb"), "{}: {}", String::from_utf8_lossy(kind), err.0);
        }
    }

    #[test]
    fn a_corrupt_metadata_stream_is_no_bomb() {
        // An ICC profile whose zlib checksum is wrong (as in the MCP reference servers' logo).
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&[7u8; 3000]).unwrap();
        let mut stream = z.finish().unwrap();
        let last = stream.len() - 1;
        stream[last] ^= 0xFF;
        let mut data = b"icc\0\0".to_vec();
        data.extend_from_slice(&stream);
        let bytes = crate::test_images::png_with_chunk_after_ihdr(b"iCCP", &data);
        assert_eq!(check(&bytes, ImageType::Png), Ok(()));
    }

    #[test]
    fn too_many_scans_are_refused_before_decoding() {
        let jpeg = jpeg_bytes();
        // Repeat the first scan (SOS segment + its entropy-coded data) past the limit.
        let sos = jpeg.windows(2).position(|w| w == [0xFF, 0xDA]).unwrap();
        let eoi = jpeg.len() - 2;
        let mut bombed = jpeg[..sos].to_vec();
        for _ in 0..=JPEG_MAX_SCANS {
            bombed.extend_from_slice(&jpeg[sos..eoi]);
        }
        bombed.extend_from_slice(&[0xFF, 0xD9]);
        let err = check(&bombed, ImageType::Jpeg).unwrap_err();
        assert!(err.0.contains("scans"), "{}", err.0);
    }
}
