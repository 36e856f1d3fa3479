//! The canonical form of an admitted image: the gate writes what it passes, from the parts it
//! understood, instead of handing on the caller's bytes with whatever it skipped. A lossless
//! re-mux: segments and chunks are copied or left out, no pixel is re-encoded.
//!
//! What is kept is what a decoder needs to show the pixels as meant — PNG: the critical chunks,
//! `tRNS` and the colour information (`sRGB`, `gAMA`, `cHRM`, `cICP`, an `iCCP` that inflates
//! within bounds); JPEG: the frame, tables, scans, JFIF `APP0` (its thumbnail is metadata), the
//! 12 bytes of a well-formed Adobe `APP14` (it decides CMYK/YCCK) and a complete ICC profile; GIF:
//! the screen, colour tables, frames, graphic control and the looping extension's count; WebP: the
//! image, alpha, animation and ICC chunks. Everything else — EXIF, XMP, IPTC, comments, text,
//! APNG animation chunks, unknown chunks, bytes between or after the structure — is dropped, and
//! named in [`Canonical::dropped`].
//!
//! An EXIF orientation other than upright is not lost with its EXIF block: a minimal EXIF block
//! holding only the orientation takes its place, so an image the ladder does not rotate (the
//! downsampler off) still shows upright and no other EXIF field leaves. The ladder, when it runs,
//! rotates the pixels and writes no EXIF at all.
//!
//! With `keep_metadata` the metadata segments are copied too; repairs (stray and trailing bytes)
//! and the refusals of broken structure (APNG frame sequence, GIF frames off the screen, metadata
//! bombs) apply either way.

use image::metadata::Orientation;

use crate::container::{self, Broken};
use crate::limits::{ANCILLARY_INFLATE_MAX, DECODE_MAX_ALLOC, DECODE_MAX_PIXELS, GIF_FRAMES_MAX_PIXELS};
use crate::signature::ImageType;

/// What the gate admits in place of the input, and what it left out.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Canonical {
    /// The canonical bytes; `None` when they equal the input (the input is admitted unchanged).
    pub bytes: Option<Vec<u8>>,
    /// What was left out, by kind, each named once, in the order met. The names are
    /// [`DROPPED_KINDS`].
    pub dropped: Vec<&'static str>,
    /// Pixels were re-encoded (losslessly) to repair the file: a cut PNG's rows re-compressed, a
    /// GIF frame clipped or cut re-encoded in its own indices.
    pub reencoded: bool,
    /// A JPEG whose scan data libjpeg-turbo warns about and Pillow and Chromium show anyway (cut
    /// short, a restart marker out of sequence, a code no table holds): `bytes` is then a file the
    /// gate's decoder reads (cut files end with EOI), never admitted as it is — the gate admits
    /// its decoded pixels re-encoded ([`Repair`]).
    pub repair: Option<Repair>,
}

/// What a JPEG repair knows: why, and which MCUs of a sequential scan the data never reached
/// (libjpeg leaves them mid-grey; the gate's decoder repeats the last colour, so the gate paints
/// them grey as the references show them).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Repair {
    pub why: String,
    pub lost: Vec<(u32, u32)>,
    pub grid: jpeg_scan::McuGrid,
}

/// Every name [`Canonical::dropped`] uses (the verdict's `dropped` key; docs/design.md lists them).
pub const DROPPED_KINDS: [&str; 15] = [
    "exif",
    "xmp",
    "iptc",
    "comment",
    "text",
    "animation",
    "icc-profile",
    "other-metadata",
    "stray-bytes",
    "trailing-bytes",
    "cut-data",
    "broken-frames",
    "off-screen",
    "bad-crc",
    "broken-scan",
];

struct Out<'a> {
    input: &'a [u8],
    bytes: Vec<u8>,
    dropped: Vec<&'static str>,
    keep_metadata: bool,
    reencoded: bool,
}

impl<'a> Out<'a> {
    fn new(input: &'a [u8], keep_metadata: bool) -> Self {
        Out { input, bytes: Vec::with_capacity(input.len()), dropped: Vec::new(), keep_metadata, reencoded: false }
    }

    fn drop(&mut self, kind: &'static str) {
        debug_assert!(DROPPED_KINDS.contains(&kind));
        if !self.dropped.contains(&kind) {
            self.dropped.push(kind);
        }
    }

    /// Metadata: copied with `keep_metadata`, otherwise dropped as `kind`.
    fn metadata(&mut self, part: &[u8], kind: &'static str) {
        if self.keep_metadata {
            self.bytes.extend_from_slice(part);
        } else {
            self.drop(kind);
        }
    }

    fn finish(self) -> Canonical {
        let bytes = if same_bytes(&self.bytes, self.input) { None } else { Some(self.bytes) };
        Canonical { bytes, dropped: self.dropped, reencoded: self.reencoded, repair: None }
    }
}

/// `a == b`, sixteen bytes at a time: in the wasm32 guest `==` on byte slices is the runtime's
/// `memcmp`, which compares one byte at a time (2.4% of a 12 MP JPEG's fit, for the one compare
/// of the re-mux with its input).
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let word = |w: &[u8]| u128::from_ne_bytes(w.try_into().expect("chunks of 16"));
    let (x, y) = (a.chunks_exact(16), b.chunks_exact(16));
    a.len() == b.len() && x.remainder() == y.remainder() && x.zip(y).all(|(p, q)| word(p) == word(q))
}

/// The JFIF `APP0` payload without a thumbnail; the Adobe `APP14` payload (libjpeg's lengths).
const JFIF_HEADER: usize = 14;

/// A JPEG marker segment appended to `out`: the marker, the length (its two bytes and the
/// payload's), the payload's parts in order. Callers keep the payload under 65,534 bytes.
fn push_segment(out: &mut Vec<u8>, marker: u8, parts: &[&[u8]]) {
    let len = 2 + parts.iter().map(|p| p.len()).sum::<usize>();
    out.extend_from_slice(&[0xFF, marker]);
    out.extend_from_slice(&(len as u16).to_be_bytes());
    for part in parts {
        out.extend_from_slice(part);
    }
}
const ADOBE_LEN: usize = 12;

/// The canonical form of `bytes` (whose signature and type the gate has checked). `Err`: the
/// structure is broken in a way no repair makes safe; the gate refuses it as `undecodable`.
pub fn canonical(bytes: &[u8], t: ImageType, keep_metadata: bool) -> Result<Canonical, Broken> {
    canonical_with_planes(bytes, t, keep_metadata, None, false).map(|(c, _)| c)
}

/// [`canonical`], and a JPEG's planes for the fit (`remux::jpeg_planes`) decoded from the same
/// walk of its scans where `planes` asks for them: the fit then reads no code again. The verdicts
/// are [`canonical`]'s; the planes `None` wherever `jpeg_planes::decode` would give none (an image
/// stored sideways has them too: the fit turns them).
///
/// `pixels_reencoded`: the caller passes the image on only as a new encoding of its decoded pixels
/// (the downsample ladder's fit). A PNG's IDAT CRCs are then not computed (a 12 MP photo's 17.6 MB,
/// 4.5% of its fit): the fit's decoder checks the image data whole (the zlib stream, its Adler-32,
/// the scanlines) and ignores chunk CRCs, so a wrong IDAT CRC over intact data changes no pixel, as
/// when the re-mux repairs it; it is just not listed as `bad-crc`. Other chunks' CRCs are checked.
pub fn canonical_with_planes(
    bytes: &[u8],
    t: ImageType,
    keep_metadata: bool,
    planes: Option<crate::remux::jpeg_planes::Target>,
    pixels_reencoded: bool,
) -> Result<(Canonical, Option<crate::remux::jpeg_planes::Planes>), Broken> {
    let idat_crcs = if pixels_reencoded { IdatCrcs::Unchecked } else { IdatCrcs::Checked };
    // Checked before the output buffer is taken: a 20 MB PNG would otherwise be copied whole
    // only to be found equal to its input (a converted image's PNG always is).
    if t == ImageType::Png && png_is_canonical(bytes, idat_crcs) {
        return Ok((Canonical::default(), None));
    }
    let out = Out::new(bytes, keep_metadata);
    let canonical = match t {
        ImageType::Png => png(bytes, out, idat_crcs),
        ImageType::Jpeg => {
            let mut reader = planes.map(crate::remux::jpeg_planes::PlanesReader::new);
            let made = jpeg(bytes, out, reader.as_mut())?;
            return Ok((made, reader.and_then(|r| r.finish())));
        }
        ImageType::Gif => gif_frames::gif(bytes, out),
        ImageType::WebP => webp(bytes, out),
    };
    canonical.map(|c| (c, None))
}

fn broken<T>(message: impl Into<String>) -> Result<T, Broken> {
    Err(Broken(message.into()))
}

/// A TIFF-structured EXIF block holding one entry: the orientation.
fn orientation_only_exif(o: Orientation) -> Vec<u8> {
    let mut tiff = b"MM\0\x2a\0\0\0\x08".to_vec();
    tiff.extend_from_slice(&1u16.to_be_bytes()); // one entry
    tiff.extend_from_slice(&0x0112u16.to_be_bytes()); // Orientation
    tiff.extend_from_slice(&3u16.to_be_bytes()); // SHORT
    tiff.extend_from_slice(&1u32.to_be_bytes()); // one value
    tiff.extend_from_slice(&u16::from(o.to_exif()).to_be_bytes());
    tiff.extend_from_slice(&[0, 0]); // the value's padding
    tiff.extend_from_slice(&0u32.to_be_bytes()); // no next IFD
    tiff
}

/// The orientation an EXIF block declares, when it declares one other than upright.
fn turned(tiff: &[u8]) -> Option<Orientation> {
    let tiff = tiff.strip_prefix(b"Exif\0\0").unwrap_or(tiff);
    Orientation::from_exif_chunk(tiff).filter(|o| *o != Orientation::NoTransforms)
}

// ---------------------------------------------------------------------------------------------
// PNG

/// Whether the PNG re-mux computes the image data's chunk CRCs ([`canonical_with_planes`]).
#[derive(Clone, Copy, PartialEq)]
enum IdatCrcs {
    Checked,
    Unchecked,
}

impl IdatCrcs {
    /// Whether the chunk `whole` (length, type, data, CRC) fails its CRC; an IDAT chunk never
    /// does when its CRC goes unchecked.
    fn fails(self, kind: &[u8; 4], whole: &[u8]) -> bool {
        let data_end = whole.len() - 4;
        !(self == IdatCrcs::Unchecked && kind == b"IDAT")
            && crc32fast::hash(&whole[4..data_end]).to_be_bytes() != whole[data_end..]
    }
}

/// A PNG chunk appended to `out`: length, type, data, and the CRC of type and data.
pub(crate) fn png_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// The frame chunks of an APNG, checked as strict decoders check them: sequence numbers from 0
/// without a gap or repeat, each frame's control before its data, as many frames as `acTL`
/// declares.
#[derive(Default)]
struct Apng {
    declared: Option<u32>,
    next_sequence: u32,
    frames: u32,
}

impl Apng {
    fn sequence(&mut self, kind: &[u8; 4], data: &[u8]) -> Result<(), Broken> {
        if self.declared.is_none() {
            return broken(format!("the PNG has an {} chunk without acTL", String::from_utf8_lossy(kind)));
        }
        let Some(n) = data.get(..4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]])) else {
            return broken(format!("the APNG's {} chunk is too short", String::from_utf8_lossy(kind)));
        };
        if n != self.next_sequence {
            return broken(format!(
                "the APNG's frame chunks are out of sequence (number {n} where {} belongs)",
                self.next_sequence
            ));
        }
        self.next_sequence += 1;
        if kind == b"fcTL" {
            self.frames += 1;
        } else if self.frames == 0 {
            return broken("the APNG has frame data (fdAT) before any frame control (fcTL)");
        }
        Ok(())
    }

    fn end(&self) -> Result<(), Broken> {
        match self.declared {
            Some(declared) if declared != self.frames => {
                broken(format!("the APNG declares {declared} frames in acTL but holds {}", self.frames))
            }
            _ => Ok(()),
        }
    }
}

/// The colour chunks before the image data, each read once as libpng reads it: a second copy is
/// ignored ("duplicate"), and so is one of the wrong length ("invalid"; Pillow fails on a short
/// one, "Truncated cHRM chunk"), so neither goes on. `tRNS` must fit the colour type (and the
/// palette before it).
#[derive(Default)]
struct ColourChunks {
    seen: Vec<[u8; 4]>,
    colour_type: Option<u8>,
    palette_entries: Option<usize>,
}

impl ColourChunks {
    /// Notes what the header and the palette say that `tRNS` is judged by.
    fn read(&mut self, kind: &[u8; 4], data: &[u8]) {
        match kind {
            b"IHDR" => self.colour_type = self.colour_type.or(data.get(9).copied()),
            b"PLTE" => self.palette_entries = self.palette_entries.or(Some(data.len() / 3)),
            _ => {}
        }
    }

    /// Whether the colour chunk `kind` with `data` is the first of its kind and well formed.
    fn keeps(&mut self, kind: &[u8; 4], data: &[u8]) -> bool {
        let right_length = match kind {
            b"gAMA" | b"cICP" => data.len() == 4,
            b"cHRM" => data.len() == 32,
            b"sRGB" => data.len() == 1,
            b"tRNS" => match self.colour_type {
                Some(0) => data.len() == 2,
                Some(2) => data.len() == 6,
                Some(3) => !data.is_empty() && self.palette_entries.is_some_and(|n| data.len() <= n),
                _ => false,
            },
            _ => true,
        };
        if !right_length || self.seen.contains(kind) {
            return false;
        }
        self.seen.push(*kind);
        true
    }
}

/// Whether [`png`] would write `bytes` back unchanged: whole chunks with right CRCs, only the
/// critical ones and the colour chunks it keeps as they are, those before the image data, the
/// standard IEND last. Anything else (an `iCCP` to inflate, metadata, a repair) takes the re-mux.
fn png_is_canonical(bytes: &[u8], idat_crcs: IdatCrcs) -> bool {
    let mut at = 8;
    let mut seen_idat = false;
    let mut colours = ColourChunks::default();
    while let Some(head) = bytes.get(at..at + 8) {
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let Some(whole) = at.checked_add(12 + len).and_then(|end| bytes.get(at..end)) else { return false };
        let kind = [head[4], head[5], head[6], head[7]];
        if idat_crcs.fails(&kind, whole) {
            return false;
        }
        at += 12 + len;
        colours.read(&kind, &whole[8..8 + len]);
        match &kind {
            b"IDAT" => seen_idat = true,
            // Its pixels may index past it: the whole re-mux reads them (`pad_palette`).
            b"PLTE" if palette_may_fall_short(bytes, len) => return false,
            b"IHDR" | b"PLTE" => {}
            b"tRNS" | b"sRGB" | b"gAMA" | b"cHRM" | b"cICP"
                if !seen_idat && colours.keeps(&kind, &whole[8..8 + len]) => {}
            b"IEND" => return len == 0 && at == bytes.len(),
            _ => return false,
        }
    }
    false
}

fn png(bytes: &[u8], mut out: Out, idat_crcs: IdatCrcs) -> Result<Canonical, Broken> {
    out.bytes.extend_from_slice(&bytes[..8]);
    let mut at = 8;
    let mut apng = Apng::default();
    let mut inflate_budget = ANCILLARY_INFLATE_MAX;
    let mut orientation = None;
    // Where the orientation-only eXIf goes: before the image data, where decoders read the header.
    let mut first_idat = None;
    // What a cut file's repair needs: the header, the whole IDAT chunks and where they sit.
    let mut ihdr = None;
    let mut idats: Vec<&[u8]> = Vec::new();
    let mut idat_end = 0;
    let mut idat_crc_fails = false;
    let mut colours = ColourChunks::default();
    let mut plte_at = None;
    // `Some(the part of a cut IDAT chunk's data that arrived)` when the file ends before IEND.
    let cut = loop {
        let Some(head) = bytes.get(at..at + 8) else {
            break Some(&[][..]);
        };
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let kind = [head[4], head[5], head[6], head[7]];
        let Some(whole) = at.checked_add(12 + len).and_then(|end| bytes.get(at..end)) else {
            let arrived = &bytes[at + 8..bytes.len().min((at + 8).saturating_add(len))];
            break Some(if &kind == b"IDAT" { arrived } else { &[][..] });
        };
        let data = &whole[8..8 + len];
        at += 12 + len;
        // A chunk whose CRC fails, as libpng treats it: an ancillary one is skipped, a critical
        // one stops the decode — except the image data, which the world's lenient decoders show
        // and whose own zlib checksum and length are checked whole below; IEND is written anyway.
        let crc_fails = idat_crcs.fails(&kind, whole);
        if crc_fails && !matches!(&kind, b"IDAT" | b"IEND") {
            let name = String::from_utf8_lossy(&kind);
            if kind[0] & 0x20 == 0 {
                return broken(format!("the PNG's {name} chunk fails its CRC (its content cannot be trusted)"));
            }
            out.drop("bad-crc");
            continue;
        }
        colours.read(&kind, data);
        match &kind {
            b"IDAT" => {
                first_idat.get_or_insert(out.bytes.len());
                if crc_fails {
                    idat_crc_fails = true;
                    png_chunk(&mut out.bytes, b"IDAT", data);
                } else {
                    out.bytes.extend_from_slice(whole);
                }
                idats.push(whole);
                idat_end = out.bytes.len();
            }
            // Colour information and transparency belong before the image data; met after it,
            // libpng ignores them ("out of place") and pngcheck refuses the order, so they go.
            b"tRNS" | b"sRGB" | b"gAMA" | b"cHRM" | b"cICP" | b"iCCP" if first_idat.is_some() => {
                out.drop("other-metadata")
            }
            b"IHDR" => {
                ihdr.get_or_insert(data);
                out.bytes.extend_from_slice(whole)
            }
            b"PLTE" => {
                plte_at.get_or_insert(out.bytes.len());
                out.bytes.extend_from_slice(whole)
            }
            b"tRNS" | b"sRGB" | b"gAMA" | b"cHRM" | b"cICP" => {
                if colours.keeps(&kind, data) {
                    out.bytes.extend_from_slice(whole)
                } else {
                    out.drop("other-metadata")
                }
            }
            // A second profile is ignored by libpng ("duplicate iCCP").
            b"iCCP" if !colours.keeps(&kind, data) => out.drop("icc-profile"),
            b"IEND" => {
                if at < bytes.len() {
                    out.drop("trailing-bytes");
                }
                break None;
            }
            b"iCCP" => match icc_inflated(data, &mut inflate_budget)? {
                Some(_) if out.keep_metadata => out.bytes.extend_from_slice(whole),
                Some(profile) => {
                    // The profile is what decoders use; its name and anything after its zlib
                    // stream are free text that would otherwise pass: written anew from the
                    // profile alone, under one name.
                    let rewritten = iccp_data(&profile);
                    if rewritten == data {
                        out.bytes.extend_from_slice(whole);
                    } else {
                        if !data.starts_with(ICCP_NAME)
                            || zlib_stream_len(&data[ICCP_NAME.len()..]) != Some(data.len() - ICCP_NAME.len())
                        {
                            out.drop("other-metadata");
                        }
                        png_chunk(&mut out.bytes, b"iCCP", &rewritten);
                    }
                }
                // A profile libpng would skip with a warning is left out, the image kept.
                None => out.drop("icc-profile"),
            },
            b"acTL" => {
                if apng.declared.is_some() {
                    return broken("the APNG has more than one acTL chunk");
                }
                let Some(n) = data.get(..4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]])) else {
                    return broken("the APNG's acTL chunk is too short");
                };
                apng.declared = Some(n);
                out.metadata(whole, "animation");
            }
            b"fcTL" | b"fdAT" => {
                apng.sequence(&kind, data)?;
                out.metadata(whole, "animation");
            }
            b"eXIf" => {
                orientation = turned(data);
                out.metadata(whole, "exif");
            }
            b"tEXt" | b"zTXt" | b"iTXt" => {
                // Kept text is bounded as the decoders inflate it; dropped text is never inflated.
                if out.keep_metadata {
                    text_within_bounds(&kind, data, &mut inflate_budget)?;
                }
                let xmp = &kind == b"iTXt" && data.starts_with(b"XML:com.adobe.xmp\0");
                out.metadata(whole, if xmp { "xmp" } else { "text" });
            }
            _ if kind[0] & 0x20 == 0 => {
                return broken(format!("the PNG has an unknown critical chunk {}", String::from_utf8_lossy(&kind)));
            }
            _ => out.metadata(whole, "other-metadata"),
        }
    };
    match cut {
        Some(arrived) => {
            // Cut before IEND: what arrived is kept, the image data repaired (png_cut.rs). An
            // APNG's frame count cannot be checked, and its animation is dropped anyway.
            out.drop("cut-data");
            let idat_span = first_idat.map(|start| (start, idat_end));
            png_cut::repair(&mut out, ihdr, &idats, arrived, idat_span)?;
        }
        None => {
            apng.end()?;
            if idat_crc_fails {
                png_image_data::check_after_bad_crc(ihdr, &idats)?;
                out.drop("bad-crc");
            }
        }
    }
    // Written, not copied: IEND carries nothing, and a copied one could carry a wrong CRC that
    // libpng and pngcheck refuse.
    png_chunk(&mut out.bytes, b"IEND", &[]);
    if let Some(o) = orientation.filter(|_| !out.keep_metadata) {
        let mut exif = Vec::new();
        png_chunk(&mut exif, b"eXIf", &orientation_only_exif(o));
        let at = first_idat.unwrap_or(out.bytes.len() - 12);
        out.bytes.splice(at..at, exif);
    }
    // After the eXIf, which goes after the palette: the palette's place is unchanged by it.
    if let Some(at) = plte_at {
        pad_palette(&mut out.bytes, at);
    }
    Ok(out.finish())
}

/// A palette image whose pixels use indices past its palette: libpng shows them black (it
/// zero-fills the palette), Pillow and Chromium show them, and ImageMagick refuses the file
/// ("invalid colormap index"). The palette (the `PLTE` chunk at `at` in `png`, a whole PNG) is
/// written padded with black up to the highest index used, so every decoder shows what libpng
/// does. The indices are read only when the palette is shorter than the bit depth can address.
fn pad_palette(png: &mut Vec<u8>, at: usize) {
    let len = u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]) as usize;
    if !palette_may_fall_short(png, len) {
        return;
    }
    // A file the decoder cannot read is judged by the gate's own decode after this.
    let Some(highest) = highest_palette_index(png, png[24]) else { return };
    if highest < len / 3 {
        return;
    }
    let mut palette = png[at + 8..at + 8 + len].to_vec();
    palette.resize((highest + 1) * 3, 0);
    let mut chunk = Vec::with_capacity(palette.len() + 12);
    png_chunk(&mut chunk, b"PLTE", &palette);
    png.splice(at..at + 12 + len, chunk);
}

/// Whether a palette PNG's `PLTE` of `len` bytes has fewer entries than its bit depth addresses
/// (read from IHDR, the first chunk: bit depth at byte 24, colour type at 25).
fn palette_may_fall_short(png: &[u8], len: usize) -> bool {
    let (Some(&depth), Some(&colour)) = (png.get(24), png.get(25)) else { return false };
    colour == 3 && len.is_multiple_of(3) && matches!(depth, 1 | 2 | 4 | 8) && len / 3 < 1 << depth
}

/// The highest palette index a palette PNG's pixels use, read row by row (padding bits at a row's
/// end are zero: they never raise it).
fn highest_palette_index(png: &[u8], depth: u8) -> Option<usize> {
    let limits = png::Limits { bytes: DECODE_MAX_ALLOC as usize };
    let mut decoder = png::Decoder::new_with_limits(std::io::Cursor::new(png), limits);
    decoder.set_transformations(png::Transformations::IDENTITY);
    let mut reader = decoder.read_info().ok()?;
    let mask = (1u16 << depth) - 1;
    let mut highest = 0u8;
    while let Some(row) = reader.next_row().ok()? {
        for &byte in row.data() {
            let mut bits = 0;
            while bits < 8 {
                highest = highest.max(((u16::from(byte) >> bits) & mask) as u8);
                bits += depth;
            }
        }
        if u16::from(highest) == mask {
            break; // as high as the depth goes
        }
    }
    Some(usize::from(highest))
}

/// The inflated ICC profile of an `iCCP` chunk, or `None` for one a decoder skips (an unknown
/// compression method, a corrupt stream, a profile whose header does not state its own length).
/// A stream that inflates past the bound is a bomb and refuses the image.
/// The name, its terminator and the compression method (zlib) an `iCCP` the gate writes starts
/// with: the name Pillow writes.
const ICCP_NAME: &[u8] = b"ICC Profile\0\0";

/// An `iCCP` chunk's data for `profile`: the one name, then the profile deflated.
fn iccp_data(profile: &[u8]) -> Vec<u8> {
    let mut data = ICCP_NAME.to_vec();
    data.extend_from_slice(&miniz_oxide::deflate::compress_to_vec_zlib(profile, 6));
    data
}

/// How many bytes of `stream` its zlib stream takes (the rest follows its end); `None` when it
/// does not end.
fn zlib_stream_len(stream: &[u8]) -> Option<usize> {
    use miniz_oxide::inflate::stream::{InflateState, inflate};
    use miniz_oxide::{DataFormat, MZFlush, MZStatus};
    let mut state = InflateState::new_boxed(DataFormat::Zlib);
    let mut sink = vec![0u8; 64 * 1024];
    let mut consumed = 0;
    loop {
        let result = inflate(&mut state, &stream[consumed..], &mut sink, MZFlush::None);
        consumed += result.bytes_consumed;
        match result.status {
            Ok(MZStatus::StreamEnd) => return Some(consumed),
            Ok(_) if result.bytes_consumed > 0 || result.bytes_written > 0 => {}
            _ => return None,
        }
    }
}

fn icc_inflated(data: &[u8], budget: &mut usize) -> Result<Option<Vec<u8>>, Broken> {
    let Some(nul) = data.iter().take(80).position(|&b| b == 0) else { return Ok(None) };
    if nul == 0 || data.get(nul + 1) != Some(&0) {
        return Ok(None);
    }
    let Some(profile) = inflate_bounded(b"iCCP", &data[nul + 2..], budget)? else { return Ok(None) };
    let declared = profile.get(..4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as usize);
    Ok((profile.len() >= 128 && declared == Some(profile.len())).then_some(profile))
}

/// A kept text chunk's compressed text inflates within the bound; a compression method other than
/// zlib (0) is refused: the PNG standard defines no other, and strict decoders stop on it.
fn text_within_bounds(kind: &[u8; 4], data: &[u8], budget: &mut usize) -> Result<(), Broken> {
    let name = String::from_utf8_lossy(kind);
    let after_nul = |d: &'_ [u8]| -> Option<usize> { d.iter().position(|&b| b == 0).map(|n| n + 1) };
    let malformed = || broken(format!("the PNG's {name} chunk is malformed"));
    // (compression method, compressed stream), for the chunks that are compressed.
    let (method, stream) = match kind {
        b"zTXt" => match after_nul(data).and_then(|n| data.get(n..)) {
            Some([method, stream @ ..]) => (*method, stream),
            _ => return malformed(),
        },
        b"iTXt" => match after_nul(data).and_then(|n| data.get(n..)) {
            Some([0, _, ..]) => return Ok(()),
            Some([1, method, rest @ ..]) => {
                let text =
                    after_nul(rest).and_then(|n| rest.get(n..)).and_then(|r| after_nul(r).and_then(|n| r.get(n..)));
                match text {
                    Some(stream) => (*method, stream),
                    None => return malformed(),
                }
            }
            _ => return malformed(),
        },
        _ => return Ok(()),
    };
    if method != 0 {
        return broken(format!("the PNG's {name} chunk names unknown compression method {method}"));
    }
    inflate_bounded(kind, stream, budget).map(drop)
}

/// Inflates a metadata stream within what is left of the file's bound. `None`: the stream is
/// corrupt (a decoder skips it); past the bound: a zlib bomb, refused.
fn inflate_bounded(kind: &[u8; 4], stream: &[u8], budget: &mut usize) -> Result<Option<Vec<u8>>, Broken> {
    match miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(stream, *budget) {
        Ok(inflated) => {
            *budget -= inflated.len();
            Ok(Some(inflated))
        }
        Err(e) if e.status == miniz_oxide::inflate::TINFLStatus::HasMoreOutput => broken(format!(
            "the PNG's compressed metadata ({}) inflates past {ANCILLARY_INFLATE_MAX} bytes (a zlib bomb)",
            String::from_utf8_lossy(kind)
        )),
        Err(e) => {
            *budget = budget.saturating_sub(e.output.len());
            Ok(None)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// JPEG

/// An arithmetic-coded JPEG is first transcoded to Huffman coding (`jpeg_arithmetic`), which most
/// decoders read and the gate's own does; the walk then judges that file, whose bytes are the
/// canonical form even when the walk changes nothing. The transcoding is lossless: nothing is
/// dropped or repaired by it.
fn jpeg(
    bytes: &[u8],
    out: Out,
    planes: Option<&mut crate::remux::jpeg_planes::PlanesReader>,
) -> Result<Canonical, Broken> {
    let Some(huffman) = jpeg_arithmetic::to_huffman(bytes)? else {
        return jpeg_walk(bytes, out, planes);
    };
    let mut made = jpeg_walk(&huffman, Out::new(&huffman, out.keep_metadata), planes)?;
    made.bytes.get_or_insert(huffman);
    Ok(made)
}

/// Markers from SOI to EOI. Bytes that are no marker where one must stand are skipped, as
/// libjpeg skips them ("extraneous bytes before marker"); so are APPn segments too short for what
/// they name, and the bytes after a scan's last used bit. Everything after EOI is dropped. Each
/// scan is walked as libjpeg-turbo reads it (`jpeg_scan`): a progression it rejects is refused;
/// data cut short or damaged, or a file cut after its first scan, is repaired ([`Repair`]).
fn jpeg_walk(
    bytes: &[u8],
    mut out: Out,
    mut planes: Option<&mut crate::remux::jpeg_planes::PlanesReader>,
) -> Result<Canonical, Broken> {
    out.bytes.extend_from_slice(&bytes[..2]);
    let mut at = 2;
    let mut icc = IccChunks::default();
    let mut orientation = None;
    // Where the orientation-only EXIF goes: after SOI, or after a JFIF APP0 that follows it.
    let mut exif_at = out.bytes.len();
    let mut walker = jpeg_scan::Walker::default();
    let mut repair: Option<Repair> = None;
    let mut saw_sof = false;
    let mut saw_scan = false;
    // After a damaged scan under a restart interval libjpeg resynchronises: a marker below SOF0
    // met there is skipped with the bytes up to the next marker, not read as a segment.
    let mut resyncing = false;
    loop {
        // A marker is 0xFF (any number of fill 0xFF) and a byte that is neither 0x00 nor 0xFF.
        while at < bytes.len()
            && !(bytes[at] == 0xFF && matches!(bytes.get(at + 1), Some(&b) if b != 0x00 && b != 0xFF))
        {
            if bytes[at] != 0xFF {
                out.drop("stray-bytes");
            }
            at += 1;
        }
        // A file cut before its end-of-image marker: libjpeg-turbo asks for more data, which Pillow
        // and Chromium refuse (djpeg and libvips warn), whatever arrived before the cut.
        let Some(&marker) = bytes.get(at + 1) else {
            return broken("the JPEG ends before its end-of-image marker (truncated)");
        };
        if std::mem::take(&mut resyncing) && marker < 0xC0 && marker != 0x01 {
            out.drop("stray-bytes");
            at += 2;
            resyncing = true;
            continue;
        }
        match marker {
            0xD9 => {
                out.bytes.extend_from_slice(&[0xFF, 0xD9]);
                if at + 2 < bytes.len() {
                    out.drop("trailing-bytes");
                }
                if let Some(o) = orientation.filter(|_| !out.keep_metadata) {
                    let mut app1 = Vec::new();
                    push_segment(&mut app1, 0xE1, &[b"Exif\0\0", &orientation_only_exif(o)]);
                    out.bytes.splice(exif_at..exif_at, app1);
                }
                if let Some(profile) = icc.finish(&mut out)? {
                    let at = exif_at;
                    out.bytes.splice(at..at, profile);
                }
                if let Some(mut r) = repair {
                    out.drop("broken-scan");
                    r.grid = walker.grid().unwrap_or_default();
                    let mut made = out.finish();
                    made.bytes.get_or_insert_with(|| bytes.to_vec());
                    made.repair = Some(r);
                    return Ok(made);
                }
                return Ok(out.finish());
            }
            // Before the first scan, restart markers and TEM are parameterless markers libjpeg
            // passes over, and the image crate's decoder cannot read a header after one that
            // follows SOI. After a scan they are kept: there a restart marker is where a
            // decoder resynchronises after damaged data, and counts in the restart sequence.
            0xD0..=0xD7 | 0x01 if !saw_scan => {
                out.drop("stray-bytes");
                at += 2;
                continue;
            }
            0xD0..=0xD7 | 0x01 => {
                out.bytes.extend_from_slice(&bytes[at..at + 2]);
                at += 2;
                continue;
            }
            0xD8 => return broken("the JPEG starts a second image inside the first"),
            _ => {}
        }
        let Some(len) = bytes.get(at + 2..at + 4).map(|l| usize::from(u16::from_be_bytes([l[0], l[1]]))) else {
            return broken("the JPEG ends inside a segment header (truncated)");
        };
        if len < 2 {
            // libjpeg-turbo skips an APPn or comment segment that short (nothing to skip) and
            // stops on any other.
            if !matches!(marker, 0xE0..=0xEF | 0xFE) {
                return broken(format!(
                    "the JPEG's segment {marker:#04X} has a length under 2 (a bogus marker length)"
                ));
            }
            out.drop("other-metadata");
            at += 4;
            continue;
        }
        let Some(segment) = bytes.get(at..at + 2 + len) else {
            return broken(format!("the JPEG's segment {marker:#04X} runs past the end of the file (truncated)"));
        };
        let payload = &segment[4..];
        if let Some(why) = libjpeg_stops(marker, payload, saw_sof) {
            return broken(why);
        }
        saw_sof |= is_sof(marker);
        at += 2 + len;
        if let Some(reader) = planes.as_deref_mut()
            && marker != 0xDA
        {
            reader.segment(marker, payload);
        }
        match marker {
            // JFIF: "JFIF", version, units, densities, thumbnail size — 14 bytes — then the
            // thumbnail's pixels, which no decoder shows: metadata, and a place for any bytes.
            0xE0 if payload.starts_with(b"JFIF\0") && out.bytes.len() == 2 => {
                if let Some(reader) = planes.as_deref_mut() {
                    reader.jfif();
                }
                if out.keep_metadata || (payload.len() == JFIF_HEADER && payload[12..14] == [0, 0]) {
                    out.bytes.extend_from_slice(segment);
                } else if payload.len() >= JFIF_HEADER {
                    push_segment(&mut out.bytes, 0xE0, &[&payload[..12], &[0, 0]]);
                    out.drop("other-metadata");
                } else {
                    // Too short for libjpeg to read as JFIF: it decides nothing.
                    out.drop("other-metadata");
                }
                exif_at = out.bytes.len();
            }
            // Adobe: "Adobe", version, flags0, flags1, transform — 12 bytes; a shorter one libjpeg
            // reads as no Adobe segment at all, and bytes after the 12 none reads at all.
            0xEE if payload.starts_with(b"Adobe") && payload.len() >= ADOBE_LEN => {
                if let Some(reader) = planes.as_deref_mut() {
                    reader.adobe(payload[11]);
                }
                push_segment(&mut out.bytes, 0xEE, &[&payload[..ADOBE_LEN]]);
                if payload.len() > ADOBE_LEN {
                    out.drop("other-metadata");
                }
            }
            0xE2 if payload.starts_with(b"ICC_PROFILE\0") => {
                if out.keep_metadata {
                    out.bytes.extend_from_slice(segment);
                } else {
                    icc.add(payload);
                }
            }
            0xE1 if payload.starts_with(b"Exif\0") => {
                orientation = turned(&payload[6.min(payload.len())..]);
                out.metadata(segment, "exif");
            }
            0xE1 if payload.starts_with(b"http://ns.adobe.com/") => out.metadata(segment, "xmp"),
            0xED => out.metadata(segment, "iptc"),
            0xFE => out.metadata(segment, "comment"),
            0xE0..=0xEF => out.metadata(segment, "other-metadata"),
            0xDA => {
                saw_scan = true;
                let Ok(end) = container::entropy_coded_end(bytes, at) else {
                    return broken("the JPEG ends inside its image data (truncated)");
                };
                let data = &bytes[at..end];
                let walked = match planes.as_deref_mut() {
                    Some(reader) => match reader.scan(payload) {
                        Some(sink) => walker.scan_into(payload, data, sink)?,
                        None => walker.scan(payload, data)?,
                    },
                    None => walker.scan(payload, data)?,
                };
                if let Some(reader) = planes.as_deref_mut() {
                    reader.scanned(walked.damage.is_some());
                }
                out.bytes.extend_from_slice(segment);
                match walked.trimmed {
                    Some(trimmed) => {
                        out.bytes.extend_from_slice(&trimmed);
                        out.drop("stray-bytes");
                    }
                    None => out.bytes.extend_from_slice(data),
                }
                if let Some(damage) = walked.damage {
                    let r =
                        repair.get_or_insert_with(|| Repair { why: damage.words().to_string(), ..Repair::default() });
                    r.lost.extend(walked.lost);
                    resyncing = walker.restarts();
                }
                at = end;
            }
            0xC4 => {
                walker.dht(payload);
                out.bytes.extend_from_slice(segment);
            }
            0xDD => {
                walker.dri(payload);
                out.bytes.extend_from_slice(segment);
            }
            0xC0..=0xCF if !matches!(marker, 0xC8 | 0xCC) => {
                walker.sof(marker, payload);
                out.bytes.extend_from_slice(segment);
            }
            _ => out.bytes.extend_from_slice(segment),
        }
    }
}

/// A frame header (SOFn) of any coding process.
fn is_sof(marker: u8) -> bool {
    matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC)
}

/// Why libjpeg-turbo's marker reader (jdmarker.c) stops on this segment, if it does. Pillow,
/// libvips, Chromium and djpeg all read JPEGs through libjpeg-turbo, so none of them shows such a
/// file: the gate refuses it rather than repair what nobody can see.
fn libjpeg_stops(marker: u8, payload: &[u8], saw_sof: bool) -> Option<String> {
    match marker {
        0x02..=0xBF | 0xC8 | 0xDE | 0xDF | 0xF0..=0xFD => {
            Some(format!("the JPEG holds marker {marker:#04X}, which libjpeg-turbo does not know and stops on"))
        }
        0xC3 | 0xC5..=0xC7 | 0xCB | 0xCD..=0xCF => Some(format!(
            "the JPEG's frame uses coding process {marker:#04X} (lossless or hierarchical), which libjpeg-turbo does not decode"
        )),
        _ if is_sof(marker) && saw_sof => Some("the JPEG has two frame headers (SOF markers)".into()),
        _ if is_sof(marker) => {
            let n = usize::from(*payload.get(5)?);
            (payload.len() != 6 + 3 * n)
                .then(|| "the JPEG's frame header has the wrong length for its components".into())
        }
        0xDA if !saw_sof => Some("the JPEG has a scan before its frame header".into()),
        0xDA => {
            let n = usize::from(*payload.first()?);
            (payload.len() != 2 * n + 4 || !(1..=4).contains(&n))
                .then(|| "the JPEG's scan header has the wrong length for its components".into())
        }
        0xDD => (payload.len() != 2).then(|| "the JPEG's restart interval segment has the wrong length".into()),
        0xDB => {
            let mut rest = payload;
            while let [pq_tq, tail @ ..] = rest {
                if pq_tq & 0x0F >= 4 {
                    return Some(format!("the JPEG names quantization table {} (0 to 3 allowed)", pq_tq & 0x0F));
                }
                // libjpeg-turbo reads a short last table as far as it goes.
                let n = if pq_tq >> 4 != 0 { 128 } else { 64 };
                rest = tail.get(n..).unwrap_or(&[]);
            }
            None
        }
        0xC4 => {
            let mut rest = payload;
            while rest.len() > 16 {
                let index = rest[0];
                let count: usize = rest[1..17].iter().map(|&c| usize::from(c)).sum();
                rest = &rest[17..];
                if count > 256 || count > rest.len() {
                    return Some("the JPEG's Huffman table definition is bogus (more symbols than it holds)".into());
                }
                rest = &rest[count..];
                if index & !0x10 >= 4 {
                    return Some(format!("the JPEG names Huffman table {index:#04X} (0 to 3 allowed)"));
                }
            }
            (!rest.is_empty()).then(|| "the JPEG's Huffman table segment has the wrong length".into())
        }
        _ => None,
    }
}

/// The `APP2` chunks of an ICC profile, kept only when they make one whole profile: numbered 1 to
/// n without a gap, each saying n, the header stating the profile's length.
#[derive(Default)]
struct IccChunks {
    chunks: Vec<(u8, u8, Vec<u8>)>,
}

impl IccChunks {
    fn add(&mut self, payload: &[u8]) {
        if let [seq, count, data @ ..] = &payload[12..] {
            self.chunks.push((*seq, *count, data.to_vec()));
        } else {
            self.chunks.push((0, 0, Vec::new()));
        }
    }

    /// The segments to write, or `None` (the profile dropped, and said so, when it is not whole).
    fn finish(&mut self, out: &mut Out) -> Result<Option<Vec<u8>>, Broken> {
        if self.chunks.is_empty() {
            return Ok(None);
        }
        self.chunks.sort_by_key(|c| c.0);
        let n = self.chunks.len();
        let whole =
            n <= 255 && self.chunks.iter().enumerate().all(|(i, c)| usize::from(c.0) == i + 1 && usize::from(c.1) == n);
        let profile: Vec<u8> = self.chunks.iter().flat_map(|c| c.2.iter().copied()).collect();
        let declared = profile.get(..4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as usize);
        if !whole || profile.len() < 128 || declared != Some(profile.len()) {
            out.drop("icc-profile");
            return Ok(None);
        }
        let mut segments = Vec::with_capacity(profile.len() + n * 18);
        for (seq, count, data) in &self.chunks {
            push_segment(&mut segments, 0xE2, &[b"ICC_PROFILE\0", &[*seq, *count], data]);
        }
        Ok(Some(segments))
    }
}

// ---------------------------------------------------------------------------------------------
// WebP

/// The RIFF chunks: `VP8`, `VP8L`, `VP8X`, `ALPH`, `ANIM`, `ANMF`, `ICCP` kept; `EXIF`, `XMP `
/// and unknown chunks dropped, with the extended header's flags cleared to match. Bytes past the
/// size the RIFF header claims are dropped.
fn webp(bytes: &[u8], mut out: Out) -> Result<Canonical, Broken> {
    let riff_end = (u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize).saturating_add(8);
    if riff_end > bytes.len() {
        return broken("the WebP's RIFF header claims more bytes than the file has (truncated)");
    }
    if riff_end < bytes.len() {
        out.drop("trailing-bytes");
    }
    out.bytes.extend_from_slice(&bytes[..12]);
    let mut at = 12;
    let mut vp8x_at = None;
    let mut orientation = None;
    // Where each ANMF chunk (an animation frame) went in the output.
    let mut frames: Vec<std::ops::Range<usize>> = Vec::new();
    while at < riff_end {
        let Some(head) = bytes.get(at..at + 8).filter(|_| at + 8 <= riff_end) else {
            return broken("the WebP ends inside a chunk header (truncated)");
        };
        let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        let padded = len + (len & 1);
        let Some(chunk) = at.checked_add(8 + padded).filter(|&e| e <= riff_end).map(|e| &bytes[at..e]) else {
            return broken("a WebP chunk runs past the end of the RIFF (truncated)");
        };
        at += chunk.len();
        match &chunk[..4] {
            // libwebp reads a VP8X of exactly 10 bytes and refuses any other length (and so do
            // Pillow and Chromium, which decode with it); the image crate reads it anyway.
            b"VP8X" if len != 10 => {
                return broken(format!("the WebP's VP8X chunk is {len} bytes, not 10 (libwebp refuses it)"));
            }
            b"VP8X" => {
                vp8x_at = Some(out.bytes.len());
                out.bytes.extend_from_slice(chunk);
            }
            b"ANMF" => {
                frames.push(out.bytes.len()..out.bytes.len() + chunk.len());
                out.bytes.extend_from_slice(chunk)
            }
            b"VP8 " | b"VP8L" | b"ALPH" | b"ANIM" | b"ICCP" => out.bytes.extend_from_slice(chunk),
            b"EXIF" => {
                orientation = turned(&chunk[8..8 + len]);
                out.metadata(chunk, "exif");
            }
            b"XMP " => out.metadata(chunk, "xmp"),
            _ => out.metadata(chunk, "other-metadata"),
        }
    }
    if let Some(o) = orientation.filter(|_| !out.keep_metadata && vp8x_at.is_some()) {
        let tiff = orientation_only_exif(o);
        out.bytes.extend_from_slice(b"EXIF");
        out.bytes.extend_from_slice(&(tiff.len() as u32).to_le_bytes());
        out.bytes.extend_from_slice(&tiff); // 26 bytes: even, no padding
    }
    if let Some(x) = vp8x_at {
        let exif = has_chunk(&out.bytes, b"EXIF");
        let xmp = has_chunk(&out.bytes, b"XMP ");
        let flags = &mut out.bytes[x + 8];
        *flags = (*flags & !0x0C) | if exif { 0x08 } else { 0 } | if xmp { 0x04 } else { 0 };
    }
    let riff_len = (out.bytes.len() - 8) as u32;
    out.bytes[4..8].copy_from_slice(&riff_len.to_le_bytes());
    // A later frame that does not decode goes, with every frame after it (each is drawn on the
    // ones before): ImageMagick decodes every frame and fails on it, Pillow fails seeking to it,
    // a provider that plays the animation would too. The first frame is the gate's decode's.
    if frames.len() > 1
        && let Some(broken) = first_broken_frame(&out.bytes).filter(|&k| k > 0)
    {
        for frame in frames[broken.min(frames.len())..].iter().rev() {
            out.bytes.drain(frame.clone());
        }
        let riff_len = (out.bytes.len() - 8) as u32;
        out.bytes[4..8].copy_from_slice(&riff_len.to_le_bytes());
        out.drop("broken-frames");
    }
    Ok(out.finish())
}

/// The index of an animated WebP's first frame that does not decode, every frame drawn on its
/// canvas in turn; `None` when all do, or when that work would pass [`GIF_FRAMES_MAX_PIXELS`] of
/// canvas (a GIF's frames are bounded alike) or the decoder's bounds.
fn first_broken_frame(webp: &[u8]) -> Option<usize> {
    let mut decoder = image_webp::WebPDecoder::new(std::io::Cursor::new(webp)).ok()?;
    decoder.set_memory_limit(DECODE_MAX_ALLOC as usize);
    let (w, h) = decoder.dimensions();
    let canvas = u64::from(w) * u64::from(h);
    let frames = u64::from(decoder.num_frames());
    if !decoder.is_animated() || canvas > DECODE_MAX_PIXELS || canvas.saturating_mul(frames) > GIF_FRAMES_MAX_PIXELS {
        return None;
    }
    let mut buf = vec![0; decoder.output_buffer_size()?];
    (0..frames as usize).find(|_| decoder.read_frame(&mut buf).is_err())
}

/// Whether a top-level chunk of this kind is in the RIFF written so far.
fn has_chunk(riff: &[u8], kind: &[u8; 4]) -> bool {
    let mut at = 12;
    while let Some(head) = riff.get(at..at + 8) {
        if &head[..4] == kind {
            return true;
        }
        let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        at += 8 + len + (len & 1);
    }
    false
}

mod gif_frames;
pub(crate) mod huffman_writer;
mod jpeg_arithmetic;
pub(crate) mod jpeg_planes;
pub(crate) mod jpeg_scan;
mod png_cut;
pub mod png_image_data;

#[cfg(test)]
mod tests;
