//! Old-style JPEG (compression 6: TIFF 6.0's section 22, withdrawn by TIFF Technical Note 2 but
//! still written by scanners and fax software of the 1990s, and still read by libtiff, so by
//! Pillow and ImageMagick). The page is one JPEG stream: either the whole JFIF stream the
//! JPEGInterchangeFormat tag points at, or one put together here from the tables the JPEGQTables,
//! JPEGDCTables and JPEGACTables tags point at, a frame header from the page's size and YCbCr
//! subsampling, and the strip's or tile's entropy-coded data (what libtiff's OJPEG reader does).
//! That stream is decoded (zune-jpeg, the JPEG decoder under the gate's) to YCbCr after its frame
//! header is checked against the page, then turned to RGB as libtiff turns a YCbCr page, by the
//! page's YCbCrCoefficients and ReferenceBlackWhite (scanners wrote studio swing, 16..235, which a
//! JPEG decoder's own full-range conversion would show washed out). One strip or tile only: libtiff joins the scans of several into one stream with
//! rules of its own, and files of more than one are rarer still.

use std::io::Cursor;

use image::{DynamicImage, GrayImage, RgbImage};
use tiff::decoder::Decoder;
use tiff::tags::Tag;
use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;

use super::{ChunkPlaces, PHOTOMETRIC_YCBCR, YCbCrToRgb, words};
use crate::limits::DECODE_MAX_ALLOC;

const JPEG_PROC: u16 = 512;
const JPEG_INTERCHANGE_FORMAT: u16 = 513;
const JPEG_INTERCHANGE_FORMAT_LENGTH: u16 = 514;
const JPEG_RESTART_INTERVAL: u16 = 515;
const JPEG_Q_TABLES: u16 = 519;
const JPEG_DC_TABLES: u16 = 520;
const JPEG_AC_TABLES: u16 = 521;
const JPEG_PROC_BASELINE: u16 = 1;

/// The first page of an old-style JPEG TIFF, `width` x `height`.
pub(super) fn decode(decoder: &mut Decoder<Cursor<&[u8]>>, width: u32, height: u32) -> Result<DynamicImage, String> {
    let tag = |decoder: &mut Decoder<Cursor<&[u8]>>, t: u16| decoder.find_tag_unsigned::<u32>(Tag::Unknown(t));
    let places = ChunkPlaces::of(decoder)?;
    if places.offsets.len() != 1 {
        return Err(format!(
            "an old-style JPEG TIFF in {} strips or tiles is not converted (one only)",
            places.offsets.len()
        ));
    }
    let file = places.file;
    let interchange = tag(decoder, JPEG_INTERCHANGE_FORMAT).map_err(words)?;
    let stream = match interchange {
        Some(at) if at > 0 => {
            let at = at as usize;
            let len = tag(decoder, JPEG_INTERCHANGE_FORMAT_LENGTH).map_err(words)?.map(|n| n as usize);
            let end = len.and_then(|n| at.checked_add(n)).unwrap_or(file.len()).min(file.len());
            let stream = file.get(at..end).filter(|s| s.starts_with(&[0xFF, 0xD8]));
            stream.ok_or("the TIFF's JPEGInterchangeFormat does not point at a JPEG stream")?.to_vec()
        }
        _ => from_tables(decoder, &places, width, height)?,
    };
    let broken = |e: zune_jpeg::errors::DecodeErrors| format!("the TIFF's old-style JPEG data cannot be decoded: {e}");
    // JPEG's own conversion is libtiff's with the default tags: the decoder's (closer to
    // libjpeg's rounding and upsampling) is kept then.
    let to_rgb = YCbCrToRgb::of(decoder)?;
    let out = if to_rgb.is_jpegs() { ColorSpace::RGB } else { ColorSpace::YCbCr };
    let options = DecoderOptions::default()
        .jpeg_set_out_colorspace(out)
        .set_max_width(usize::from(u16::MAX))
        .set_max_height(usize::from(u16::MAX));
    let mut jpeg = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(&stream[..]), options);
    jpeg.decode_headers().map_err(broken)?;
    let (w, h) = jpeg.dimensions().ok_or("the TIFF's old-style JPEG stream has no frame")?;
    let (w, h) = (w as u32, h as u32);
    // The stream covers the page, or a whole tile (or strip) round it: no more than one chunk.
    let (cw, ch) = decoder.chunk_dimensions();
    let fits = w >= width && h >= height && w <= width.max(cw) && h <= height.max(ch);
    if !fits || u64::from(w) * u64::from(h) * 3 > DECODE_MAX_ALLOC {
        return Err(format!("the TIFF's old-style JPEG stream is {w}x{h}, its page {width}x{height}"));
    }
    let pixels = jpeg.decode().map_err(broken)?;
    let channels = jpeg.output_colorspace().map_or(3, |c| c.num_components());
    let (stride, page) = (w as usize * channels, width as usize * channels);
    let rows = pixels.chunks_exact(stride).take(height as usize);
    let mut kept: Vec<u8> = rows.flat_map(|row| &row[..page]).copied().collect();
    match channels {
        1 => GrayImage::from_raw(width, height, kept).map(DynamicImage::ImageLuma8),
        3 => {
            if !to_rgb.is_jpegs() {
                kept.chunks_exact_mut(3).for_each(|p| p.copy_from_slice(&to_rgb.convert(p[0], p[1], p[2])));
            }
            RgbImage::from_raw(width, height, kept).map(DynamicImage::ImageRgb8)
        }
        n => return Err(format!("the TIFF's old-style JPEG stream has {n} components")),
    }
    .ok_or_else(|| "the TIFF's old-style JPEG stream holds fewer rows than its page".into())
}

/// A baseline JPEG stream put together from the tables the tags point at and the one chunk's data.
fn from_tables(
    decoder: &mut Decoder<Cursor<&[u8]>>,
    places: &ChunkPlaces<'_>,
    width: u32,
    height: u32,
) -> Result<Vec<u8>, String> {
    let proc = decoder.find_tag_unsigned::<u16>(Tag::Unknown(JPEG_PROC)).map_err(words)?;
    if proc.unwrap_or(JPEG_PROC_BASELINE) != JPEG_PROC_BASELINE {
        return Err("an old-style JPEG TIFF of lossless JPEG is not converted".into());
    }
    let offsets = |decoder: &mut Decoder<Cursor<&[u8]>>, t: u16, what: &str| {
        decoder
            .find_tag_unsigned_vec::<u32>(Tag::Unknown(t))
            .map_err(words)?
            .filter(|v| !v.is_empty())
            .ok_or_else(|| format!("the old-style JPEG TIFF has no {what} tables and no JPEG stream"))
    };
    let q = offsets(decoder, JPEG_Q_TABLES, "quantisation")?;
    let dc = offsets(decoder, JPEG_DC_TABLES, "DC Huffman")?;
    let ac = offsets(decoder, JPEG_AC_TABLES, "AC Huffman")?;
    let photometric = decoder.find_tag_unsigned::<u16>(Tag::PhotometricInterpretation).map_err(words)?;
    let samples = decoder.find_tag_unsigned::<u16>(Tag::SamplesPerPixel).map_err(words)?.unwrap_or(1);
    // Three components are YCbCr to the JPEG decoder (no Adobe marker says otherwise).
    let ycbcr = photometric == Some(PHOTOMETRIC_YCBCR);
    if !(samples == 1 || samples == 3 && ycbcr) {
        return Err(format!(
            "an old-style JPEG TIFF of {samples} samples (photometric {photometric:?}) is not converted"
        ));
    }
    // Luma's sampling factors: YCbCrSubSampling's (2x2 by default) for YCbCr, 1x1 otherwise.
    let (sx, sy) = if samples == 3 {
        match decoder.find_tag_unsigned_vec::<u16>(Tag::ChromaSubsampling).map_err(words)?.as_deref() {
            None => (2, 2),
            Some(&[x, y]) if matches!(x, 1 | 2 | 4) && matches!(y, 1 | 2 | 4) => (x as u8, y as u8),
            Some(other) => return Err(format!("the TIFF's YCbCr subsampling {other:?} is not one TIFF allows")),
        }
    } else {
        (1, 1)
    };
    let (cw, ch) = decoder.chunk_dimensions();
    let tiled = decoder.find_tag(Tag::TileWidth).map_err(words)?.is_some();
    let (fw, fh) = if tiled { (cw, ch) } else { (width, ch.min(height)) };
    let (fw, fh) = (u16::try_from(fw).map_err(|_| "too wide")?, u16::try_from(fh).map_err(|_| "too high")?);
    let table = |offsets: &[u32], i: usize| offsets[i.min(offsets.len() - 1)] as usize;
    let file = places.file;
    let outside = || "an old-style JPEG table of the TIFF is outside the file".to_string();
    let mut out = vec![0xFF, 0xD8];
    let mut segment = |marker: u8, body: &[u8]| {
        out.extend_from_slice(&[0xFF, marker]);
        out.extend_from_slice(&(body.len() as u16 + 2).to_be_bytes());
        out.extend_from_slice(body);
    };
    let components = usize::from(samples);
    let mut dqt = Vec::new();
    for i in 0..q.len().min(components) {
        let at = table(&q, i);
        dqt.push(i as u8);
        dqt.extend_from_slice(file.get(at..at + 64).ok_or_else(outside)?);
    }
    segment(0xDB, &dqt);
    let mut dht = Vec::new();
    for (class, tables) in [(0u8, &dc), (1, &ac)] {
        for i in 0..tables.len().min(components) {
            let at = table(tables, i);
            let counts = file.get(at..at + 16).ok_or_else(outside)?;
            let n: usize = counts.iter().map(|&c| usize::from(c)).sum();
            dht.push(class << 4 | i as u8);
            dht.extend_from_slice(file.get(at..at + 16 + n).ok_or_else(outside)?);
        }
    }
    segment(0xC4, &dht);
    if let Some(interval) = decoder.find_tag_unsigned::<u16>(Tag::Unknown(JPEG_RESTART_INTERVAL)).map_err(words)?
        && interval > 0
    {
        segment(0xDD, &interval.to_be_bytes());
    }
    let id = |i: usize, n: usize| (i.min(n - 1)) as u8;
    let mut sof = vec![8];
    sof.extend_from_slice(&fh.to_be_bytes());
    sof.extend_from_slice(&fw.to_be_bytes());
    sof.push(samples as u8);
    for c in 0..components {
        let factors = if c == 0 { sx << 4 | sy } else { 0x11 };
        sof.extend_from_slice(&[c as u8 + 1, factors, id(c, q.len())]);
    }
    segment(0xC0, &sof);
    let mut sos = vec![samples as u8];
    for c in 0..components {
        sos.extend_from_slice(&[c as u8 + 1, id(c, dc.len()) << 4 | id(c, ac.len())]);
    }
    sos.extend_from_slice(&[0, 63, 0]);
    segment(0xDA, &sos);
    out.extend_from_slice(places.bytes(0)?);
    out.extend_from_slice(&[0xFF, 0xD9]);
    Ok(out)
}
