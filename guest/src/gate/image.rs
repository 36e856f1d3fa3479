//! The admission gate for images: claimed type, raw size, signature, header, then the optional
//! downsample and the provider's base64 limit — in that order.

use super::decode::{Budget, Header, decode, is_animated_gif, png_ihdr, read_header};
use super::downsample::{self, Reencoded};
use crate::container::{self, Broken};
use crate::limits::*;
use crate::options::{Options, Verify};
use crate::profile::Profile;
use crate::remux::jpeg_planes;
use crate::remux::{self, Canonical};
use crate::signature::{ImageType, sniff};
use crate::verdict::{Admitted, Data, Dimensions, Kind, Reason, Refusal, Unit, Verdict, base64_len};
use image::DynamicImage;

pub fn admit_image(bytes: &[u8], claimed_mime: &str, options: &Options) -> Verdict {
    let mut budget = Budget::UNLIMITED;
    admit_image_within(bytes, claimed_mime, options, &mut budget)
}

/// The gate, charging the pixels it decodes to `budget`.
pub fn admit_image_within(bytes: &[u8], claimed_mime: &str, options: &Options, budget: &mut Budget) -> Verdict {
    admit(bytes, claimed_mime, options, budget, None)
}

/// The gate for a PNG the caller has just written from `pixels` with
/// [`downsample::encode_png_fast`] (a conversion): the same rules as any PNG, but its pixels are
/// not decoded again, and over the limit the ladder does not write that same PNG a second time.
#[cfg(feature = "convert")]
pub(crate) fn admit_png_written_from(
    png: &[u8],
    pixels: DynamicImage,
    options: &Options,
    budget: &mut Budget,
) -> Verdict {
    admit(png, ImageType::Png.mime(), options, budget, Some(pixels))
}

fn admit(
    bytes: &[u8],
    claimed_mime: &str,
    options: &Options,
    budget: &mut Budget,
    written_from: Option<DynamicImage>,
) -> Verdict {
    let profile: &Profile = options.provider.profile();
    let raw = bytes.len() as u64;
    let provider = profile.provider.name();

    // 1. Claimed type.
    let Some(t) = ImageType::from_mime(claimed_mime).filter(|t| profile.accepts(*t)) else {
        let accepted: Vec<&str> = profile.image_types.iter().map(|t| t.mime()).collect();
        return Err(Refusal::new(
            Reason::MimeUnsupported,
            raw,
            None,
            format!(
                "{} is not an image type {provider} accepts (accepted: {})",
                display_mime(claimed_mime),
                accepted.join(", ")
            ),
        ));
    };

    // 2. Raw size.
    let cap = if options.downsample { RAW_CAP_DOWNSAMPLE } else { RAW_CAP };
    if let Some(r) = Refusal::over_raw_cap(raw, cap, "the read cap") {
        return Err(r);
    }

    // 3. Signature.
    if !t.matches(bytes) {
        return Err(Refusal::new(
            Reason::MagicMismatch,
            raw,
            None,
            format!("the bytes are not {} (they look like {})", t.mime(), sniff(bytes)),
        ));
    }

    // The canonical form the gate will admit instead of the input (remux.rs): metadata dropped,
    // stray bytes repaired, broken structure found. Every decoder below reads it, not the input,
    // so what is judged is what is passed. When it fails, the header is still read (a bomb is
    // named as one) from the input — for a PNG from its IHDR alone, so no metadata chunk is
    // inflated by a decoder (an iCCP zlib bomb is refused by the re-mux, in its slot).
    // A JPEG the ladder will re-encode has its planes decoded by the same walk (`jpeg_planes`),
    // so the fit reads no code again.
    let planes_for_fit = (options.downsample && t == ImageType::Jpeg)
        .then_some(jpeg_planes::Target::Fit { side: FIT_SIDE, reencoded: raw > PASS_THROUGH_RAW });
    // A PNG whose size or IHDR already says the ladder re-encodes it is passed on only as its
    // decoded pixels: the re-mux leaves its image data's CRCs to that decode.
    let pixels_reencoded = options.downsample
        && t == ImageType::Png
        && written_from.is_none()
        && png_ihdr(bytes).is_ok_and(|ihdr| downsample::needs_work(raw, &ihdr, t));
    let remuxed = remux::canonical_with_planes(bytes, t, options.keep_metadata, planes_for_fit, pixels_reencoded);
    let (canonical, planes) = match remuxed {
        Ok((c, planes)) => (Ok(c), planes),
        Err(e) => (Err(e), None),
    };
    let src: &[u8] = match &canonical {
        Ok(Canonical { bytes: Some(made), .. }) => made,
        _ => bytes,
    };

    // The header, read without decoding pixels; bombs are refused here.
    let header = match (&canonical, t) {
        (Err(_), ImageType::Png) => png_ihdr(bytes),
        _ => read_header(src, t),
    };
    let header = match header {
        Ok(h) => h,
        Err(image::ImageError::Limits(_)) => return Err(bomb(raw, None)),
        Err(e) => {
            return Err(Refusal::new(
                Reason::Undecodable,
                raw,
                None,
                format!("the {} header cannot be read: {e}", t.mime()),
            ));
        }
    };
    let pixels = u64::from(header.width) * u64::from(header.height);
    if pixels > DECODE_MAX_PIXELS {
        return Err(bomb(raw, Some(header)));
    }
    if header.width == 0 || header.height == 0 {
        return Err(Refusal::new(
            Reason::Undecodable,
            raw,
            None,
            format!("the {} header declares an empty canvas ({}x{})", t.mime(), header.width, header.height),
        ));
    }
    if header.decoded_bytes > DECODE_MAX_ALLOC {
        return Err(Refusal::new(
            Reason::DimensionsTooLarge,
            raw,
            None,
            format!(
                "{}x{} px decode to {} bytes, over the decoder's bound of {DECODE_MAX_ALLOC} bytes; not decoded",
                header.width, header.height, header.decoded_bytes
            ),
        ));
    }
    // A JPEG repaired from its damaged scans is admitted re-encoded, whatever its size.
    let repair = match &canonical {
        Ok(Canonical { repair: Some(r), .. }) => Some(r),
        _ => None,
    };
    let fits_as_is = repair.is_none() && !(options.downsample && downsample::needs_work(raw, &header, t));
    if options.verify == Verify::Full || !fits_as_is {
        budget.spend(raw, header.width, header.height)?;
    }

    // The container, walked: cut files, metadata bombs and scan bombs end here.
    let (mut dropped, repaired) = match &canonical {
        Ok(c) => (c.dropped.clone(), c.reencoded),
        Err(Broken(why)) => return Err(Refusal::new(Reason::Undecodable, raw, None, why.clone())),
    };
    if let Err(Broken(why)) = container::check(src, t) {
        return Err(Refusal::new(Reason::Undecodable, raw, None, why));
    }

    if profile.still_gif_only && t == ImageType::Gif {
        match is_animated_gif(src) {
            Ok(false) => {}
            Ok(true) => {
                return Err(Refusal::new(
                    Reason::MimeUnsupported,
                    raw,
                    None,
                    format!("{provider} accepts only still GIFs; this one is animated"),
                ));
            }
            Err(e) => return Err(undecodable(raw, t, &e)),
        }
    }

    // Every pixel decoded, unless the downsampler is about to decode them anyway (a JPEG it
    // decodes at a reduced DCT scale, which still reads every coefficient of every block; a PNG it
    // decodes row by row into the fit, never holding the whole decode).
    let written = written_from.is_some();
    // A PNG's image data ended at their zlib stream's end, when something followed it (read with
    // the pixels, so only when they are read).
    let mut ended_png = None;
    let decoded = match options.verify {
        _ if written => None,
        Verify::Full if matches!(t, ImageType::Jpeg | ImageType::Png) && !fits_as_is => None,
        Verify::Full if t == ImageType::Jpeg => match downsample::verify_jpeg(src, &header) {
            Ok(()) => None,
            Err(e) => return Err(undecodable(raw, t, &e)),
        },
        Verify::Full if t == ImageType::Png => {
            if let Err(e) = downsample::verify_png(src) {
                return Err(decode_failed(raw, t, &e));
            }
            match remux::png_image_data::end_image_data(src) {
                Ok(None) => {}
                Ok(Some((ended, stray))) => {
                    if stray && !dropped.contains(&"stray-bytes") {
                        dropped.push("stray-bytes");
                    }
                    ended_png = Some(ended);
                }
                Err(Broken(why)) => {
                    let message = format!("the {} pixels cannot be decoded: {why}", t.mime());
                    return Err(Refusal::new(Reason::Undecodable, raw, None, message));
                }
            }
            None
        }
        Verify::Full => match decode(src, t) {
            Ok(img) => Some(img),
            Err(e) => return Err(decode_failed(raw, t, &e)),
        },
        Verify::Header => None,
    };

    let decoded = match repair {
        Some(r) => match downsample::decode_repaired_jpeg(src, &header, r) {
            Ok(img) => Some(img),
            Err(e) => return Err(decode_failed(raw, t, &e)),
        },
        None => decoded.or(written_from),
    };

    // 4. Optional downsample, then the provider's base64 limit.
    if !fits_as_is {
        let written_png = written.then_some(bytes);
        return match downsample::fit(src, t, &header, decoded, planes, written_png, profile) {
            Ok(Some(out)) => Ok(admitted_reencoded(out, raw, &header, dropped)),
            Ok(None) => Err(Refusal::new(
                Reason::Base64TooLarge,
                raw,
                Some(profile.max_base64_len),
                format!(
                    "even at {LAST_RESORT_SIDE} px and JPEG quality {} the image exceeds {provider}'s limit of {} base64 bytes",
                    JPEG_LADDER[JPEG_LADDER.len() - 1],
                    profile.max_base64_len
                ),
            )),
            // Pixels that cannot be decoded cannot be measured: the declared size is no proof, and
            // is not reported.
            Err(e) => Err(decode_failed(raw, t, &e)),
        };
    }
    if !options.downsample
        && let Some(max_side) = profile.max_side
        && (header.width > max_side || header.height > max_side)
    {
        return Err(Refusal::new(
            Reason::DimensionsTooLarge,
            raw,
            Some(u64::from(max_side)),
            format!(
                "{}x{} px exceeds {provider}'s largest side of {max_side} px and downsampling is off",
                header.width, header.height
            ),
        )
        .in_unit(Unit::PixelsPerSide));
    }
    // A request-level rule (many images in one request) with downsampling off. With it on, the
    // ladder has already fitted every image inside FIT_SIDE, which no rule undercuts.
    if let Some(rule) = options.side_rule
        && (header.width > rule.max_side || header.height > rule.max_side)
    {
        return Err(Refusal::new(
            Reason::DimensionsTooLarge,
            raw,
            Some(u64::from(rule.max_side)),
            format!(
                "{}x{} px exceeds the largest side of {} px {} and downsampling is off",
                header.width, header.height, rule.max_side, rule.why
            ),
        )
        .in_unit(Unit::PixelsPerSide));
    }

    let b64 = base64_len(ended_png.as_ref().map_or(src.len(), Vec::len) as u64);
    if b64 > profile.max_base64_len {
        return Err(Refusal::new(
            Reason::Base64TooLarge,
            raw,
            Some(profile.max_base64_len),
            format!("{b64} base64 bytes exceed {provider}'s limit of {}", profile.max_base64_len),
        ));
    }
    Ok(Admitted {
        kind: Kind::Image,
        mime: t.mime(),
        data: match (ended_png, canonical) {
            (Some(ended), _) => Data::Bytes(ended),
            (None, Ok(Canonical { bytes: Some(made), .. })) => Data::Bytes(made),
            _ => Data::Unchanged,
        },
        original_size: raw,
        dimensions: Some(Dimensions { width: header.width, height: header.height }),
        original_dimensions: Some(Dimensions { width: header.width, height: header.height }),
        resized: false,
        reencoded: repaired,
        converted: None,
        dropped,
    })
}

fn admitted_reencoded(out: Reencoded, raw: u64, header: &Header, dropped: Vec<&'static str>) -> Admitted {
    let upright = header.upright();
    Admitted {
        kind: Kind::Image,
        mime: out.image_type.mime(),
        data: Data::Bytes(out.bytes),
        original_size: raw,
        dimensions: Some(out.dimensions),
        original_dimensions: Some(Dimensions { width: header.width, height: header.height }),
        resized: out.dimensions != upright,
        reencoded: true,
        converted: None,
        dropped,
    }
}

/// Refused from the header, before any pixel is decoded: the size named is the one it declares.
fn bomb(raw: u64, header: Option<Header>) -> Refusal {
    let declared = match header {
        Some(h) => format!("the declared {}x{} px", h.width, h.height),
        None => "its declared size".to_string(),
    };
    Refusal::new(
        Reason::DimensionsTooLarge,
        raw,
        Some(DECODE_MAX_PIXELS),
        format!(
            "{declared} exceeds the decoder's strict limits ({DECODE_MAX_SIDE} px per side, {DECODE_MAX_PIXELS} pixels); not decoded"
        ),
    )
}

/// The header passed but the pixels did not decode. Nothing was measured, so no dimensions are
/// reported (the header's are a claim the pixels did not bear out): over the decoder's strict
/// limits it is `dimensions_too_large`, otherwise `undecodable`.
fn decode_failed(raw: u64, t: ImageType, e: &image::ImageError) -> Refusal {
    match e {
        image::ImageError::Limits(_) => decode_over_limits(raw, t),
        other => undecodable(raw, t, other),
    }
}

fn decode_over_limits(raw: u64, t: ImageType) -> Refusal {
    Refusal::new(
        Reason::DimensionsTooLarge,
        raw,
        Some(DECODE_MAX_PIXELS),
        format!(
            "the {} pixels cannot be decoded within the decoder's strict limits ({DECODE_MAX_SIDE} px per side, \
             {DECODE_MAX_PIXELS} pixels, {DECODE_MAX_ALLOC} bytes); not decoded",
            t.mime()
        ),
    )
}

fn undecodable(raw: u64, t: ImageType, e: &image::ImageError) -> Refusal {
    Refusal::new(Reason::Undecodable, raw, None, format!("the {} pixels cannot be decoded: {e}", t.mime()))
}

fn display_mime(claimed: &str) -> String {
    let m = claimed.trim();
    if m.is_empty() { "an empty media type".to_string() } else { m.to_string() }
}

#[cfg(test)]
mod tests;
