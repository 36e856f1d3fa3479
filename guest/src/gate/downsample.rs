//! The downsample ladder (docs/design.md §2), run inside the sandbox: fit inside 2000×2000 keeping the
//! aspect, keep the format when it then fits, else JPEG 80/60/40/20 on white, last 1000 px at 20.

use fast_image_resize::{FilterType as ResizeFilter, PixelType, ResizeAlg, ResizeOptions, Resizer};
use image::codecs::gif::GifEncoder;
use image::codecs::webp::WebPEncoder;
use image::imageops::FilterType;
use image::metadata::Orientation;
use image::{DynamicImage, ImageEncoder, ImageError, RgbImage};

use super::decode::{Header, decode};
use super::planar_jpeg;
use super::png_rows::{Filtered, PngRows};
use super::row_resize::RowResizer;
use crate::limits::{FIT_SIDE, JPEG_LADDER, LAST_RESORT_SIDE, PASS_THROUGH_RAW};
use crate::profile::Profile;
use crate::remux::jpeg_planes::{self, Plane, Planes};
use crate::signature::ImageType;
use crate::verdict::{Dimensions, base64_len};

pub struct Reencoded {
    pub bytes: Vec<u8>,
    pub image_type: ImageType,
    pub dimensions: Dimensions,
}

/// Whether the image must be re-encoded rather than passed through unchanged. An image stored
/// sideways (an EXIF orientation not 1: a JPEG's APP1, a PNG's eXIf, a WebP's EXIF) is always
/// re-encoded upright: providers do not all honour the tag, and the model must see what a person
/// sees.
pub fn needs_work(raw: u64, header: &Header, _t: ImageType) -> bool {
    raw > PASS_THROUGH_RAW
        || header.width > FIT_SIDE
        || header.height > FIT_SIDE
        || header.orientation != Orientation::NoTransforms
}

pub use crate::limits::fit_inside;

/// Lanczos3 (what sharp uses by default) with fast_image_resize: SIMD where the target has it
/// (wasm `simd128` when the guest is built with it), alpha premultiplied while filtering. 8-bit
/// layouts go band by band through [`RowResizer`] (no whole-image intermediate pass: 18 MB less
/// for a 12 MP photo); the others in one call.
pub(crate) fn resize_to_fit(img: DynamicImage, side: u32) -> DynamicImage {
    let (w, h) = fit_inside(img.width(), img.height(), side);
    if (w, h) == (img.width(), img.height()) {
        return img;
    }
    if let Some(mut rows) = RowResizer::new((img.width(), img.height()), (w, h), img.color()) {
        let row_bytes = img.as_bytes().len() / img.height() as usize;
        let fed = img.as_bytes().chunks_exact(row_bytes).try_for_each(|row| rows.push_row(row));
        if let Ok(fitted) = fed.and_then(|()| rows.finish()) {
            return fitted;
        }
    }
    let mut dst = DynamicImage::new(w, h, img.color());
    let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(ResizeFilter::Lanczos3));
    match Resizer::new().resize(&img, &mut dst, &options) {
        Ok(()) => dst,
        // Pixel layouts fast_image_resize does not take fall back to the image crate.
        Err(_) => img.resize_exact(w, h, FilterType::Lanczos3),
    }
}

/// A PNG decoded row by row straight into the fit ([`RowResizer`]): the 4000×3000 decode of a
/// 12 MP PNG (36 MB) is never held, only the rows under the filter and the fitted image. Every row
/// is decoded and checked as the whole decode does (same crate as the image crate's PNG decoder;
/// the zlib checksum checked too, [`png_reader`]). `Ok(None)`: a PNG this path does not take (interlaced, 16-bit, nothing to
/// shrink), decoded whole instead.
fn png_fitted_by_rows(bytes: &[u8], side: u32) -> Result<Option<DynamicImage>, ImageError> {
    let mut reader = png_reader(bytes, png::Transformations::EXPAND)?;
    let (width, height, interlaced) = (reader.info().width, reader.info().height, reader.info().interlaced);
    let color = match reader.output_color_type() {
        (png::ColorType::Grayscale, png::BitDepth::Eight) => image::ColorType::L8,
        (png::ColorType::GrayscaleAlpha, png::BitDepth::Eight) => image::ColorType::La8,
        (png::ColorType::Rgb, png::BitDepth::Eight) => image::ColorType::Rgb8,
        (png::ColorType::Rgba, png::BitDepth::Eight) => image::ColorType::Rgba8,
        _ => return Ok(None),
    };
    if interlaced {
        return Ok(None);
    }
    let Some(mut rows) = RowResizer::new((width, height), fit_inside(width, height, side), color) else {
        return Ok(None);
    };
    let broken = |e: String| ImageError::Decoding(image::error::DecodingError::new(image::ImageFormat::Png.into(), e));
    // Each row is read straight into the resizer's window.
    while rows.wants_rows() {
        if reader.read_row(rows.next_row().map_err(broken)?).map_err(png_error)?.is_none() {
            break;
        }
        rows.row_written().map_err(broken)?;
    }
    rows.finish().map(Some).map_err(broken)
}

/// A PNG the row-by-row fit does not take (interlaced, 16-bit, stored sideways, nothing to
/// shrink) decoded whole, as the image crate's decoder does it (`EXPAND`: palettes, low bit depths
/// and transparency expanded, 16-bit samples kept), but by [`png_reader`]: the zlib checksum
/// checked, chunk CRCs not. The re-mux leaves a re-encoded PNG's IDAT CRCs unchecked
/// (`remux::canonical_with_planes`), and the image crate's decoder would refuse one that fails.
fn png_decoded_whole(bytes: &[u8]) -> Result<DynamicImage, ImageError> {
    use png::BitDepth::{Eight, Sixteen};
    use png::ColorType::{Grayscale, GrayscaleAlpha, Rgb, Rgba};
    let mut reader = png_reader(bytes, png::Transformations::EXPAND)?;
    let size = reader.output_buffer_size().ok_or_else(|| png_error(png::DecodingError::LimitsExceeded))?;
    let (width, height) = (reader.info().width, reader.info().height);
    let img = match reader.output_color_type() {
        (colour, Eight) => {
            let mut buf = vec![0; size];
            reader.next_frame(&mut buf).map_err(png_error)?;
            match colour {
                Grayscale => image::ImageBuffer::from_raw(width, height, buf).map(DynamicImage::ImageLuma8),
                GrayscaleAlpha => image::ImageBuffer::from_raw(width, height, buf).map(DynamicImage::ImageLumaA8),
                Rgb => image::ImageBuffer::from_raw(width, height, buf).map(DynamicImage::ImageRgb8),
                Rgba => image::ImageBuffer::from_raw(width, height, buf).map(DynamicImage::ImageRgba8),
                _ => None,
            }
        }
        (colour, Sixteen) => {
            let mut samples = vec![0u16; size / 2];
            reader.next_frame(bytemuck::cast_slice_mut(&mut samples)).map_err(png_error)?;
            // PNG stores samples big-endian.
            samples.iter_mut().for_each(|s| *s = u16::from_be(*s));
            match colour {
                Grayscale => image::ImageBuffer::from_raw(width, height, samples).map(DynamicImage::ImageLuma16),
                GrayscaleAlpha => image::ImageBuffer::from_raw(width, height, samples).map(DynamicImage::ImageLumaA16),
                Rgb => image::ImageBuffer::from_raw(width, height, samples).map(DynamicImage::ImageRgb16),
                Rgba => image::ImageBuffer::from_raw(width, height, samples).map(DynamicImage::ImageRgba16),
                _ => None,
            }
        }
        _ => None,
    };
    img.ok_or_else(|| {
        let why = "the PNG's expanded layout is not 8- or 16-bit grey, grey + alpha, RGB or RGBA";
        ImageError::Decoding(image::error::DecodingError::new(image::ImageFormat::Png.into(), why))
    })
}

fn png_error(e: png::DecodingError) -> ImageError {
    match e {
        png::DecodingError::LimitsExceeded => {
            ImageError::Limits(image::error::LimitError::from_kind(image::error::LimitErrorKind::InsufficientMemory))
        }
        e => ImageError::Decoding(image::error::DecodingError::new(image::ImageFormat::Png.into(), e)),
    }
}

/// A PNG reader under the decoder's bound that checks the image data's Adler-32 checksum: libpng,
/// Pillow and libvips refuse a PNG whose checksum fails, so the gate does not pass one. Chunk CRCs
/// are not computed again: what this reads is the re-mux's output, whose walk checked every
/// chunk's CRC (and wrote a repaired file's afresh) but a re-encoded PNG's IDAT CRCs, which
/// guard nothing the decode's own checks of the image data do not.
fn png_reader(
    bytes: &[u8],
    transformations: png::Transformations,
) -> Result<png::Reader<std::io::Cursor<&[u8]>>, ImageError> {
    let mut options = png::DecodeOptions::default();
    options.set_ignore_adler32(false);
    options.set_ignore_crc(true);
    let mut decoder = png::Decoder::new_with_options(std::io::Cursor::new(bytes), options);
    decoder.set_limits(png::Limits { bytes: crate::limits::DECODE_MAX_ALLOC as usize });
    decoder.set_transformations(transformations);
    decoder.read_info().map_err(png_error)
}

/// Reads a PNG's chunks up to its image data as the png crate does (a header, palette or
/// transparency it refuses is refused); the image data themselves are read by the re-mux
/// (`remux::png_image_data`), which also finds where their zlib stream ends.
pub fn verify_png(bytes: &[u8]) -> Result<(), ImageError> {
    let reader = png_reader(bytes, png::Transformations::IDENTITY)?;
    // Read as stored, the indices need no palette; shown, they do, and libpng stops ("IDAT must
    // follow PLTE in palette image").
    let info = reader.info();
    if info.color_type == png::ColorType::Indexed && info.palette.is_none() {
        return Err(ImageError::Decoding(image::error::DecodingError::new(
            image::ImageFormat::Png.into(),
            "the palette image has no PLTE chunk before its image data",
        )));
    }
    Ok(())
}

/// Decodes a JPEG at the smallest DCT scale (1/8, 1/4, 1/2 or 1) that still covers the size the
/// ladder fits it to: shrink-on-load, as libvips does. Far less IDCT and colour-conversion work,
/// and a quarter of the memory at 1/2.
fn decode_jpeg_shrunk(bytes: &[u8], header: &Header) -> Result<DynamicImage, ImageError> {
    let (tw, th) = fit_inside(header.width, header.height, FIT_SIDE);
    decode_jpeg_scaled(bytes, tw, th)
}

/// Decodes every block of a JPEG at the smallest DCT scale (1/8): every Huffman code and every
/// coefficient is read, so a corrupt or cut scan fails as it would at full size, for an eighth of
/// the IDCT work and a sixty-fourth of the memory.
pub fn verify_jpeg(bytes: &[u8], header: &Header) -> Result<(), ImageError> {
    decode_jpeg_scaled(bytes, header.width.div_ceil(8), header.height.div_ceil(8)).map(drop)
}

/// A JPEG repaired from what its damaged scans hold (`remux::Repair`): decoded at the fit's DCT
/// scale, the MCUs the data never reached painted mid-grey, as libjpeg (and so Pillow and
/// Chromium) leaves them; the ladder then re-encodes it.
pub fn decode_repaired_jpeg(
    bytes: &[u8],
    header: &Header,
    repair: &crate::remux::Repair,
) -> Result<DynamicImage, ImageError> {
    let mut img = decode_jpeg_shrunk(bytes, header)?;
    let g = repair.grid;
    if g.mcus_x == 0 || repair.lost.is_empty() {
        return Ok(img);
    }
    let (w, h) = (img.width(), img.height());
    // The decode's scale (1/8 to 1) maps the frame's MCU grid onto its pixels.
    let scale = |v: u32, full: u32, scaled: u32| (u64::from(v) * u64::from(scaled)).div_ceil(u64::from(full)) as u32;
    let grey = |img: &mut DynamicImage, x0: u32, y0: u32, x1: u32, y1: u32| {
        let (x0, x1) = (scale(x0, header.width, w).min(w), scale(x1, header.width, w).min(w));
        let (y0, y1) = (scale(y0, header.height, h).min(h), scale(y1, header.height, h).min(h));
        for y in y0..y1 {
            for x in x0..x1 {
                match img {
                    DynamicImage::ImageRgb8(i) => i.put_pixel(x, y, image::Rgb([128; 3])),
                    DynamicImage::ImageLuma8(i) => i.put_pixel(x, y, image::Luma([128])),
                    DynamicImage::ImageLuma16(i) => i.put_pixel(x, y, image::Luma([32896])),
                    _ => {}
                }
            }
        }
    };
    for &(start, end) in &repair.lost {
        let mut m = start;
        while m < end {
            let (row, col) = (m / g.mcus_x, m % g.mcus_x);
            let last = end.min((row + 1) * g.mcus_x);
            let (y0, y1) = (row * g.mcu_height, (row + 1) * g.mcu_height);
            grey(&mut img, col * g.mcu_width, y0, (last - row * g.mcus_x) * g.mcu_width, y1);
            m = last;
        }
    }
    Ok(img)
}

/// A copy of the JPEG whose quantization tables hold 1 where they hold 0: the gate's decoder
/// refuses a zero entry, libjpeg-turbo decodes it (multiplying that coefficient by 0, where the
/// copy multiplies by 1: encoders that write a zero leave the coefficient zero too). `None`: no
/// table has a zero. The copy is only decoded; what is admitted keeps the tables as they are.
fn zero_quant_patched(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut copy = bytes.to_vec();
    let mut patched = false;
    let mut at = 2;
    while let (Some(&0xFF), Some(&marker)) = (copy.get(at), copy.get(at + 1)) {
        if marker == 0xFF {
            at += 1;
            continue;
        }
        if matches!(marker, 0xD0..=0xD7 | 0x01) {
            at += 2;
            continue;
        }
        if marker == 0xD9 {
            break;
        }
        let len = usize::from(u16::from_be_bytes([*copy.get(at + 2)?, *copy.get(at + 3)?]));
        let end = (at + 2 + len).min(copy.len());
        if marker == 0xDB {
            let mut t = at + 4;
            while t < end {
                let wide = copy[t] >> 4 != 0;
                let n = if wide { 128 } else { 64 };
                let table = (t + 1)..(t + 1 + n).min(end);
                if wide {
                    for pair in copy[table].chunks_exact_mut(2) {
                        if pair == [0, 0] {
                            pair[1] = 1;
                            patched = true;
                        }
                    }
                } else {
                    for q in &mut copy[table] {
                        if *q == 0 {
                            *q = 1;
                            patched = true;
                        }
                    }
                }
                t += 1 + n;
            }
        }
        at = end;
        if marker == 0xDA {
            at = crate::container::entropy_coded_end(&copy, at).ok()?;
        }
    }
    patched.then_some(copy)
}

fn decode_jpeg_scaled(bytes: &[u8], tw: u32, th: u32) -> Result<DynamicImage, ImageError> {
    match decode_jpeg_scaled_as_is(bytes, tw, th) {
        Err(e) => match zero_quant_patched(bytes) {
            Some(patched) => decode_jpeg_scaled_as_is(&patched, tw, th),
            None => Err(e),
        },
        decoded => decoded,
    }
}

fn decode_jpeg_scaled_as_is(bytes: &[u8], tw: u32, th: u32) -> Result<DynamicImage, ImageError> {
    let mut decoder = jpeg_decoder::Decoder::new(bytes);
    decoder.set_max_decoding_buffer_size(crate::limits::DECODE_MAX_ALLOC as usize);
    let clamp = |v: u32| v.min(u32::from(u16::MAX)) as u16;
    let (w, h) = decoder.scale(clamp(tw), clamp(th)).map_err(jpeg_error)?;
    let pixels = decoder.decode().map_err(jpeg_error)?;
    let format = decoder.info().map(|i| i.pixel_format).ok_or_else(|| jpeg_error("no frame decoded"))?;
    let (w, h) = (u32::from(w), u32::from(h));
    let img = match format {
        jpeg_decoder::PixelFormat::RGB24 => RgbImage::from_raw(w, h, pixels).map(DynamicImage::ImageRgb8),
        jpeg_decoder::PixelFormat::L8 => image::GrayImage::from_raw(w, h, pixels).map(DynamicImage::ImageLuma8),
        jpeg_decoder::PixelFormat::L16 => {
            let px: Vec<u16> = pixels.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
            image::ImageBuffer::from_raw(w, h, px).map(DynamicImage::ImageLuma16)
        }
        jpeg_decoder::PixelFormat::CMYK32 => {
            // Adobe CMYK JPEGs are stored inverted; multiply by K as libjpeg users do.
            let rgb: Vec<u8> = pixels
                .chunks_exact(4)
                .flat_map(|p| {
                    let k = u16::from(p[3]);
                    [p[0], p[1], p[2]].map(|c| ((u16::from(c) * k + 127) / 255) as u8)
                })
                .collect();
            RgbImage::from_raw(w, h, rgb).map(DynamicImage::ImageRgb8)
        }
    };
    img.ok_or_else(|| jpeg_error("decoded size does not match the frame"))
}

fn jpeg_error(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> ImageError {
    ImageError::Decoding(image::error::DecodingError::new(image::ImageFormat::Jpeg.into(), e))
}

/// Runs the ladder. `Ok(None)`: no rung fits the provider's base64 limit. `Err`: the pixels could
/// not be decoded (the caller then refuses the image: unmeasured pixels are never passed on).
/// `written` is `bytes` when the caller wrote them itself with [`encode_png_fast`] from `decoded`
/// (a conversion): the ladder's first PNG would be those same bytes, so it is not written again.
/// `planes`: a JPEG's planes from the re-mux's walk (`remux::canonical_with_planes`); an upright
/// JPEG without them has them decoded here where it can.
pub fn fit(
    bytes: &[u8],
    t: ImageType,
    header: &Header,
    decoded: Option<DynamicImage>,
    planes: Option<Planes>,
    written: Option<&[u8]>,
    profile: &Profile,
) -> Result<Option<Reencoded>, ImageError> {
    if decoded.is_none() && t == ImageType::Jpeg {
        let fitted = match planes {
            Some(planes) => fitted_planes(planes, FIT_SIDE),
            None => fit_jpeg_planes(bytes, header),
        };
        if let Some(fitted) = fitted.and_then(|p| oriented(p, header.orientation)) {
            return ladder_from_planes(fitted, &JPEG_LADDER, profile);
        }
    }
    let by_rows = match decoded {
        None if t == ImageType::Png && header.orientation == Orientation::NoTransforms => {
            png_fitted_by_rows(bytes, FIT_SIDE)?
        }
        _ => None,
    };
    let mut img = match (by_rows, decoded) {
        (Some(fitted), _) => fitted,
        (None, Some(img)) => img,
        (None, None) if t == ImageType::Jpeg => decode_jpeg_shrunk(bytes, header)?,
        (None, None) if t == ImageType::Png => png_decoded_whole(bytes)?,
        (None, None) => decode(bytes, t)?,
    };
    let as_decoded = (img.width(), img.height());
    img.apply_orientation(header.orientation);
    let fitted = resize_to_fit(img, FIT_SIDE);
    let fits = |b: &[u8]| base64_len(b.len() as u64) <= profile.max_base64_len;
    let unchanged = header.orientation == Orientation::NoTransforms && (fitted.width(), fitted.height()) == as_decoded;
    let written = written.filter(|_| t == ImageType::Png && unchanged);

    // The sample's sizes, measured once: before any whole PNG where the caller wrote none and the
    // source's own compression, scaled to the fitted pixels, does not put the fast pass well
    // under the limit (small screenshots: they then pay no sample unless the fast pass misses).
    // The sample then picks the first level written: the fast pass only where it may fit.
    let mut sample = None;
    let mut effort = Some(Effort::Fast);
    let source_ratio = bytes.len() as f64 / header.decoded_bytes.max(1) as f64;
    let by_source = fitted.as_bytes().len() as f64 * source_ratio * SOURCE_UNDER_PREDICTS;
    if t == ImageType::Png && written.is_none() && !fits_by(by_source, profile.max_base64_len, 1.0) {
        effort = sample.insert(SampleSizes::of(&fitted)?).first_effort(profile.max_base64_len);
    }
    while let Some(this) = effort {
        let len = match written {
            Some(bytes) if this == Effort::Fast && fits(bytes) => {
                return Ok(Some(reencoded(bytes.to_vec(), t, &fitted)));
            }
            Some(bytes) if this == Effort::Fast => bytes.len(),
            _ => {
                let Some(bytes) = encode_as(&fitted, t, this)? else { break };
                if fits(&bytes) {
                    return Ok(Some(reencoded(bytes, t, &fitted)));
                }
                bytes.len()
            }
        };
        if t != ImageType::Png {
            break; // only PNG has slower encodings that come out smaller
        }
        let sizes = match &mut sample {
            Some(sizes) => sizes,
            none => none.insert(SampleSizes::of(&fitted)?),
        };
        effort = next_png_effort(sizes, this, len as u64, profile.max_base64_len);
    }
    drop(sample); // not held through the JPEG rungs

    // The JPEG rungs from the fitted image's 4:2:0 planes, made once (flattened on white): the
    // image itself is not held through them.
    let planes = match &fitted {
        DynamicImage::ImageRgb8(rgb) => planar_jpeg::planes_of_rgb(rgb),
        other => planar_jpeg::planes_of_rgb(&flatten_on_white(other)),
    };
    drop(fitted);
    // A JPEG's kept format was already the first rung.
    let rungs = if t == ImageType::Jpeg { &JPEG_LADDER[1..] } else { &JPEG_LADDER[..] };
    ladder_from_planes(planes, rungs, profile)
}

/// A baseline JPEG's planes ([`jpeg_planes`]) at the DCT scale that covers the fit, each resized
/// to the fit on its own: `None` where the JPEG has no planes (the caller decodes it to RGB).
fn fit_jpeg_planes(bytes: &[u8], header: &Header) -> Option<Planes> {
    let planes = jpeg_planes::decode(bytes, fit_inside(header.width, header.height, FIT_SIDE))?;
    fitted_planes(planes, FIT_SIDE)
}

/// The planes resized (Lanczos3, as [`resize_to_fit`]) to fit `side`: luma to the fitted size,
/// chroma to half of it rounded up (what 4:2:0 stores), a plane already that size untouched (the
/// 12 MP photo's chroma decoded at 1/2). `None`: a size fast_image_resize refuses.
pub(crate) fn fitted_planes(planes: Planes, side: u32) -> Option<Planes> {
    let (w, h) = fit_inside(planes.width, planes.height, side);
    let resized = planes
        .planes
        .into_iter()
        .enumerate()
        .map(|(i, plane)| {
            let size = if i == 0 { (w, h) } else { (w.div_ceil(2), h.div_ceil(2)) };
            resized_plane(plane, size)
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Planes { width: w, height: h, block: planes.block, planes: resized })
}

/// Planes turned upright as an EXIF orientation says, each plane on its own, as the RGB path turns
/// the decoded image (`apply_orientation`): a 4:2:0 chroma plane turned is the turned image's
/// (half a size rounded up, turned, is the turned size's half), its samples sited within a pixel
/// of where they were (a flip of an odd side moves the 2x2 boxes by one pixel).
fn oriented(planes: Planes, orientation: Orientation) -> Option<Planes> {
    if orientation == Orientation::NoTransforms {
        return Some(planes);
    }
    let transposed = matches!(
        orientation,
        Orientation::Rotate90 | Orientation::Rotate270 | Orientation::Rotate90FlipH | Orientation::Rotate270FlipH
    );
    let turned = planes
        .planes
        .into_iter()
        .map(|p| {
            let mut img = DynamicImage::ImageLuma8(image::GrayImage::from_raw(p.width, p.height, p.samples)?);
            img.apply_orientation(orientation);
            let (h, v) = if transposed { (p.v, p.h) } else { (p.h, p.v) };
            Some(Plane { width: img.width(), height: img.height(), h, v, samples: img.into_luma8().into_raw() })
        })
        .collect::<Option<Vec<_>>>()?;
    let (width, height) = (turned[0].width, turned[0].height);
    Some(Planes { width, height, block: planes.block, planes: turned })
}

fn resized_plane(plane: Plane, (w, h): (u32, u32)) -> Option<Plane> {
    if (plane.width, plane.height) == (w, h) {
        return Some(plane);
    }
    let src =
        fast_image_resize::images::ImageRef::new(plane.width, plane.height, &plane.samples, PixelType::U8).ok()?;
    let mut dst = fast_image_resize::images::Image::new(w, h, PixelType::U8);
    let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(ResizeFilter::Lanczos3));
    Resizer::new().resize(&src, &mut dst, &options).ok()?;
    Some(Plane { width: w, height: h, h: plane.h, v: plane.v, samples: dst.into_vec() })
}

/// The JPEG rungs written from fitted planes: `rungs` (80/60/40/20, or the last three where the
/// first was the kept format), then 1000 px at 20.
fn ladder_from_planes(fitted: Planes, rungs: &[u8], profile: &Profile) -> Result<Option<Reencoded>, ImageError> {
    let fits = |b: &[u8]| base64_len(b.len() as u64) <= profile.max_base64_len;
    let out = |bytes, p: &Planes| Reencoded {
        bytes,
        image_type: ImageType::Jpeg,
        dimensions: Dimensions { width: p.width, height: p.height },
    };
    let encoded =
        |p: &Planes, q| planar_jpeg::encode(p, q).ok_or_else(|| jpeg_error("the planes' size is one JPEG cannot hold"));
    for &q in rungs {
        let bytes = encoded(&fitted, q)?;
        if fits(&bytes) {
            return Ok(Some(out(bytes, &fitted)));
        }
    }
    let Some(small) = fitted_planes(fitted, LAST_RESORT_SIDE) else {
        return Err(jpeg_error("the planes could not be resized to the last rung"));
    };
    let bytes = encoded(&small, JPEG_LADDER[JPEG_LADDER.len() - 1])?;
    Ok(fits(&bytes).then(|| out(bytes, &small)))
}

fn reencoded(bytes: Vec<u8>, image_type: ImageType, img: &DynamicImage) -> Reencoded {
    Reencoded { bytes, image_type, dimensions: Dimensions { width: img.width(), height: img.height() } }
}

/// How hard the lossless PNG encoder works, tried in this order before giving up on PNG for JPEG:
/// fdeflate's single fast pass (a screenshot usually fits), then miniz_oxide at level 1 (a greedy
/// matcher with a real Huffman pass: on the 3456×2234 benchmark screenshot 30% smaller than the
/// fast pass for 2.6× its time), then level 6 (another 9% smaller for 10× the time of level 1).
/// All three with adaptive row filters. Level 1 replaced going straight from fast to level 6,
/// which made a screenshot cost two encodes, the second one slow (BENCHMARKS.md, the PNG levers).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Effort {
    Fast,
    Quick,
    Thorough,
}

/// Rows of each band of the sample that predicts the PNG levels' sizes, and one band in how many.
const SAMPLE_BAND: u32 = 16;
const SAMPLE_EVERY: u32 = 8;
/// Level 6 over level 1 on the images measured (BENCHMARKS.md, the PNG levers): 0.80–0.93 on photos,
/// screenshots and diagrams over 300 KB. Level 6 is tried only when level 1's size times this
/// would fit: it costs ten times level 1, and a photo is never saved by it.
const THOROUGH_OVER_QUICK: f64 = 0.85;

/// The next, slower PNG level worth its time after `effort` gave `len` bytes over `limit` base64
/// bytes, from a cheap estimate instead of encoding to find out: `None` gives up on PNG for JPEG.
/// Level 1 is as large as the fast pass on photos and 30–55% smaller on screenshots, so its size
/// is predicted from the sample's (`sizes`); level 6 from level 1's size by
/// [`THOROUGH_OVER_QUICK`]. An estimate only chooses: whatever is chosen is still encoded and
/// measured against the limit.
fn next_png_effort(sizes: &mut SampleSizes, effort: Effort, len: u64, limit: u64) -> Option<Effort> {
    match effort {
        Effort::Fast => {
            let predicted = len as f64 * sizes.quick_over_fast();
            if fits_by(predicted, limit, QUICK_TRIED_OVER) {
                Some(Effort::Quick)
            } else if fits_by(predicted * THOROUGH_OVER_QUICK, limit, 1.0) {
                Some(Effort::Thorough)
            } else {
                None
            }
        }
        Effort::Quick => fits_by(len as f64 * THOROUGH_OVER_QUICK, limit, 1.0).then_some(Effort::Thorough),
        Effort::Thorough => None,
    }
}

/// How far over the limit a predicted quick level is still written: the half of the sample that
/// predicts it over-predicts the whole image's quick level by at most 3.8% on the corpus
/// (`the_half_sample_predicts_the_quick_level_within_its_margin`): there, no quick level that fits
/// is skipped for a lossy JPEG.
const QUICK_TRIED_OVER: f64 = 1.05;

/// How much larger than the whole image's fast pass the sample may predict it: on the corpus
/// photos the largest over-prediction is 9% (kodim02, 768x512;
/// `the_row_sample_predicts_the_fast_pass_within_its_margin`).
const SAMPLE_OVER_PREDICTS: f64 = 1.10;

/// How much smaller than the fitted image's fast pass its source's compression ratio may predict
/// it: a fitted image compresses worse than its source, and the fast pass less than most PNG
/// writers (the benchmark screenshot: 0.18 of its pixels' bytes as stored, 0.55 fitted by the
/// fast pass, 3.06 times; the 12 MP photo as a PNG: 0.49, 0.57). Under it, a fitted image the
/// source puts under the limit even so much larger skips the sample.
const SOURCE_UNDER_PREDICTS: f64 = 3.5;

/// The rows of every [`SAMPLE_EVERY`]th band of [`SAMPLE_BAND`] rows of the image, filtered as the
/// whole image's rows are (its content in proportion, an eighth of its rows): the size the fast
/// pass gives them, and the quick level's size over the fast pass's, measured when first asked for
/// on every other band of the sample (the quick level costs six times the fast pass, and the ratio
/// of two sizes of the same rows needs fewer rows than a size); `rows` the image's rows over the
/// sample's.
struct SampleSizes {
    filtered: Filtered,
    fast: f64,
    quick_over_fast: Option<f64>,
    rows: f64,
}

impl SampleSizes {
    fn of(img: &DynamicImage) -> Result<Self, ImageError> {
        let png = PngRows::of(img)?;
        let height = png.height();
        let bands = (0..height).step_by((SAMPLE_BAND * SAMPLE_EVERY) as usize);
        let filtered = png.filtered(bands.flat_map(|y| y..(y + SAMPLE_BAND).min(height)));
        let rows = f64::from(height) / filtered.rows().max(1) as f64;
        Ok(SampleSizes { fast: filtered.fast_len().max(1) as f64, filtered, quick_over_fast: None, rows })
    }

    fn fast(&self) -> f64 {
        self.fast
    }

    fn quick_over_fast(&mut self) -> f64 {
        *self.quick_over_fast.get_or_insert_with(|| {
            let half = self.filtered.alternate_bands(SAMPLE_BAND as usize);
            half.level_len(1) as f64 / half.fast_len().max(1) as f64
        })
    }

    /// The first PNG level worth writing whole for `limit` base64 bytes: the fast pass where the
    /// sample predicts it fits, else the slower level [`next_png_effort`] would choose after the
    /// predicted fast pass; failing both, the same with the fast pass as it may come out
    /// ([`SAMPLE_OVER_PREDICTS`] smaller than predicted); else `None`: the ladder goes to JPEG.
    /// So a whole PNG is written only where it is predicted to fit, and JPEG is taken only where
    /// no PNG level may fit: a wrong guess costs time, never a lossy image. The quick level's
    /// sample is written only where the fast pass is not predicted to fit.
    fn first_effort(&mut self, limit: u64) -> Option<Effort> {
        let predicted = self.fast() * self.rows;
        for fast in [predicted, predicted / SAMPLE_OVER_PREDICTS] {
            if fits_by(fast, limit, 1.0) {
                return Some(Effort::Fast);
            }
            if let Some(slower) = next_png_effort(self, Effort::Fast, fast as u64, limit) {
                return Some(slower);
            }
        }
        None
    }
}

/// Whether `predicted` bytes fit `limit` base64 bytes, `slack` times over allowed.
fn fits_by(predicted: f64, limit: u64, slack: f64) -> bool {
    base64_len(predicted as u64) as f64 <= limit as f64 * slack
}

/// Encodes in the source's own format; `None` where that format cannot be written here.
fn encode_as(img: &DynamicImage, t: ImageType, effort: Effort) -> Result<Option<Vec<u8>>, ImageError> {
    let mut out = Vec::new();
    match t {
        ImageType::Jpeg => return encode_jpeg(img, JPEG_LADDER[0]).map(Some),
        ImageType::Png => {
            // Each level filters the rows afresh as it deflates them (one pass, cheaper than
            // inflating a fast pass already written to find them), so no PNG and no filtered
            // image is held while the next is written.
            let level = match effort {
                Effort::Fast => return encode_png_fast(img).map(Some),
                Effort::Quick => 1,
                Effort::Thorough => 6,
            };
            return Ok(Some(PngRows::of(img)?.at_level(level)));
        }
        ImageType::Gif => {
            let rgba = img.to_rgba8();
            let mut encoder = GifEncoder::new_with_speed(&mut out, 10);
            encoder.encode(rgba.as_raw(), rgba.width(), rgba.height(), image::ExtendedColorType::Rgba8)?;
        }
        ImageType::WebP => {
            let rgba = img.to_rgba8();
            WebPEncoder::new_lossless(&mut out).write_image(
                rgba.as_raw(),
                rgba.width(),
                rgba.height(),
                image::ExtendedColorType::Rgba8,
            )?;
        }
    }
    Ok(Some(out))
}

/// The ladder's first PNG: fdeflate's single fast pass, adaptive row filters. Also what a
/// conversion hands to the gate, so that a converted image over the limit is not written twice.
pub(crate) fn encode_png_fast(img: &DynamicImage) -> Result<Vec<u8>, ImageError> {
    Ok(PngRows::of(img)?.fast_pass())
}

/// The ladder's JPEG of an image (flattened on white where it has alpha or is not RGB), 4:2:0.
fn encode_jpeg(img: &DynamicImage, quality: u8) -> Result<Vec<u8>, ImageError> {
    let rgb;
    let rgb_ref = match img {
        DynamicImage::ImageRgb8(rgb) => rgb,
        other => {
            rgb = flatten_on_white(other);
            &rgb
        }
    };
    planar_jpeg::encode(&planar_jpeg::planes_of_rgb(rgb_ref), quality).ok_or_else(|| {
        ImageError::Encoding(image::error::EncodingError::new(
            image::ImageFormat::Jpeg.into(),
            format!("{}x{} px is over JPEG's largest side of 65535 px", rgb_ref.width(), rgb_ref.height()),
        ))
    })
}

/// Drops alpha by compositing onto white (JPEG has no alpha; black would hide dark content).
fn flatten_on_white(img: &DynamicImage) -> RgbImage {
    if !img.color().has_alpha() {
        return img.to_rgb8();
    }
    let rgba = img.to_rgba8();
    let mut rgb = RgbImage::new(rgba.width(), rgba.height());
    for (dst, src) in rgb.pixels_mut().zip(rgba.pixels()) {
        let a = u16::from(src[3]);
        for c in 0..3 {
            let v = u16::from(src[c]) * a + 255 * (255 - a);
            dst[c] = ((v + 127) / 255) as u8;
        }
    }
    rgb
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3000×2000 RGB PNG made from a corpus photo (upscaled), and its whole decode.
    fn big_png() -> (Vec<u8>, DynamicImage) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/photos/kodim23.png");
        let photo = image::open(path).expect("tests/corpus/photos/kodim23.png");
        let big = DynamicImage::ImageRgb8(photo.resize_exact(3000, 2000, FilterType::Triangle).to_rgb8());
        let png = crate::test_images::encode(&big, image::ImageFormat::Png);
        (png, big)
    }

    /// The fit of a PNG decoded row by row is the whole decode's fit (fast_image_resize on the whole
    /// image, what the ladder did before): ≥ 50 dB PSNR, the bar for this change.
    #[test]
    fn a_png_fitted_by_rows_matches_the_whole_decode_fitted() {
        let (png, big) = big_png();
        let by_rows = png_fitted_by_rows(&png, FIT_SIDE).unwrap().expect("an 8-bit non-interlaced PNG");
        let mut whole = DynamicImage::new(2000, 1333, big.color());
        let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(ResizeFilter::Lanczos3));
        Resizer::new().resize(&big, &mut whole, &options).unwrap();
        let (a, b) = (by_rows.as_bytes(), whole.as_bytes());
        assert_eq!(a.len(), b.len());
        let mse = a.iter().zip(b).map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2)).sum::<f64>() / a.len() as f64;
        let db = 10.0 * (255.0f64.powi(2) / mse).log10();
        assert!(db >= 50.0, "{db:.1} dB");
    }

    /// The decode is never held whole: fitting the 3000×2000 PNG (18 MB decoded) holds the fitted
    /// image (8 MB) and a window of rows (a quarter of the decode); the whole decode and resize held
    /// more than both.
    #[test]
    fn a_png_fitted_by_rows_holds_less_than_its_decode() {
        let (png, _) = big_png();
        let (fitted, peak) = crate::alloc_meter::peak_during(|| png_fitted_by_rows(&png, FIT_SIDE).unwrap().unwrap());
        let decoded = 3000 * 2000 * 3;
        let out = fitted.as_bytes().len();
        assert!(peak < out + decoded / 2, "held {peak} bytes (fitted image {out}, decode {decoded})");
        let (_, whole_peak) =
            crate::alloc_meter::peak_during(|| resize_to_fit(decode(&png, ImageType::Png).unwrap(), FIT_SIDE));
        assert!(whole_peak > decoded + out, "the whole decode held {whole_peak}");
    }

    /// A PNG cut inside its image data fails by rows as it fails whole: an error, no image.
    #[test]
    fn a_cut_png_fails_by_rows() {
        let (png, _) = big_png();
        let cut = &png[..png.len() / 2];
        assert!(png_fitted_by_rows(cut, FIT_SIDE).is_err());
        assert!(decode(cut, ImageType::Png).is_err());
    }

    #[test]
    fn fit_keeps_aspect_and_never_enlarges() {
        assert_eq!(fit_inside(4000, 3000, 2000), (2000, 1500));
        assert_eq!(fit_inside(3000, 4000, 2000), (1500, 2000));
        assert_eq!(fit_inside(3456, 2234, 2000), (2000, 1293));
        assert_eq!(fit_inside(800, 600, 2000), (800, 600));
        assert_eq!(fit_inside(2000, 2000, 2000), (2000, 2000));
        assert_eq!(fit_inside(100_000, 1, 2000), (2000, 1));
    }

    /// The sampling factors of a baseline JPEG's components, from its SOF0 segment.
    fn sampling_factors(jpeg: &[u8]) -> Vec<u8> {
        let sof = jpeg.windows(2).position(|w| w == [0xFF, 0xC0]).expect("a baseline SOF0 segment");
        let components = usize::from(jpeg[sof + 9]);
        (0..components).map(|i| jpeg[sof + 10 + 3 * i + 1]).collect()
    }

    /// The ladder's JPEGs subsample chroma 4:2:0, as sharp does at these qualities: half the
    /// chroma blocks to transform and code (the image crate's encoder wrote 4:4:4, 1.2x sharp's
    /// bytes for the 12 MP photo).
    #[test]
    fn jpeg_rungs_subsample_chroma_4_2_0() {
        let img = DynamicImage::ImageRgb8(RgbImage::from_fn(64, 48, |x, y| image::Rgb([x as u8 * 4, y as u8 * 5, 90])));
        for q in JPEG_LADDER {
            let jpeg = encode_jpeg(&img, q).unwrap();
            assert_eq!(sampling_factors(&jpeg), [0x22, 0x11, 0x11], "quality {q}");
            let back = image::load_from_memory(&jpeg).unwrap();
            assert_eq!((back.width(), back.height()), (64, 48));
        }
    }

    /// The benchmark screenshot (3456×2234) under Anthropic's 5 MiB of base64: the fast pass is
    /// over the limit, and the quick level (miniz_oxide level 1) fits it, losslessly — before,
    /// the second pass was level 6, seven times slower for 9% fewer bytes.
    #[test]
    fn a_screenshot_over_the_fast_pass_fits_at_the_quick_level_losslessly() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/bench/screenshot-3456x2234.png");
        let bytes = std::fs::read(path).expect("tests/corpus/bench/screenshot-3456x2234.png");
        let options = crate::Options::default();
        let limit = options.provider.profile().max_base64_len;
        let a = crate::admit_image(&bytes, "image/png", &options).unwrap();
        assert_eq!(a.mime, "image/png");
        let ours = a.bytes(&[]);

        let fitted = resize_to_fit(decode(&bytes, ImageType::Png).unwrap(), FIT_SIDE);
        let encoded = |effort| encode_as(&fitted, ImageType::Png, effort).unwrap().unwrap();
        assert!(base64_len(encoded(Effort::Fast).len() as u64) > limit, "the fast pass must not fit for this test");
        assert_eq!(ours, encoded(Effort::Quick).as_slice(), "the second rung is the quick level");
        // The source's compression does not put the fitted fast pass under the limit, so the row
        // sample is taken first, and it names the quick level: the fast pass is never written.
        let header = crate::gate::decode::read_header(&bytes, ImageType::Png).unwrap();
        let source_ratio = bytes.len() as f64 / header.decoded_bytes as f64;
        assert!(!fits_by(fitted.as_bytes().len() as f64 * source_ratio * SOURCE_UNDER_PREDICTS, limit, 1.0));
        let mut sizes = SampleSizes::of(&fitted).unwrap();
        // `--nocapture` prints the figures BENCHMARKS.md cites.
        eprintln!(
            "limit {limit}, fast pass predicted {}, written {} (base64 bytes)",
            base64_len((sizes.fast() * sizes.rows) as u64),
            base64_len(encoded(Effort::Fast).len() as u64)
        );
        assert_eq!(sizes.first_effort(limit), Some(Effort::Quick));
        assert!(base64_len(ours.len() as u64) <= limit);
        assert_eq!(image::load_from_memory(ours).unwrap().to_rgb8(), fitted.to_rgb8(), "lossless");
    }

    /// A photo stored as PNG gains nothing from the slower levels (level 1 is as large as the fast
    /// pass, level 6 a few percent smaller): over the limit, it goes straight to JPEG instead of
    /// spending two more encodes (5.1 s for a 12 MP PNG photo in the sandbox before).
    #[test]
    fn a_photo_over_the_limit_skips_the_slower_png_levels() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/photos/kodim23.png");
        let photo = image::open(path).unwrap();
        let fast = encode_as(&photo, ImageType::Png, Effort::Fast).unwrap().unwrap().len() as u64;
        // A limit the fast pass misses by a fifth: no lossless level of a photo comes close.
        let limit = base64_len(fast) * 5 / 6;
        let mut sizes = SampleSizes::of(&photo).unwrap();
        assert_eq!(next_png_effort(&mut sizes, Effort::Fast, fast, limit), None);
        assert_eq!(next_png_effort(&mut sizes, Effort::Quick, fast, limit), None);
        // Within 4% of it, level 1 is not predicted smaller, but level 6 is.
        let limit = base64_len(fast) * 100 / 104;
        assert_eq!(next_png_effort(&mut sizes, Effort::Fast, fast, limit), Some(Effort::Thorough));
    }

    /// The row sample's fast pass, scaled by its rows, against the whole image's, on the corpus
    /// photos and screenshots of a sample's size or more (`--nocapture` prints each ratio): never
    /// [`SAMPLE_OVER_PREDICTS`] over, which [`SampleSizes::first_effort`] relies on.
    #[test]
    fn the_row_sample_predicts_the_fast_pass_within_its_margin() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/photos");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let img = image::open(&path).unwrap();
            if img.height() < 256 {
                continue; // fewer rows than two sample bands apart: the sample is the image
            }
            let sizes = SampleSizes::of(&img).unwrap();
            let ratio = sizes.fast() * sizes.rows / encode_png_fast(&img).unwrap().len() as f64;
            eprintln!("{}: sample predicts {ratio:.3} of the fast pass", path.display());
            assert!(ratio <= SAMPLE_OVER_PREDICTS, "{}: {ratio:.3}", path.display());
            seen += 1;
        }
        assert!(seen >= 5, "{seen} images");
    }

    /// The quick level's size over the fast pass's, measured on every other band of the row
    /// sample, against the whole fitted image's, on the corpus photos, screenshots and diagrams of
    /// several bands (`--nocapture` prints each): never [`QUICK_TRIED_OVER`] over, so a quick level
    /// that fits is written. Measured: 0.966–1.038.
    #[test]
    fn the_half_sample_predicts_the_quick_level_within_its_margin() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
        let names = ["photos/kodim02.png", "photos/kodim07.png", "photos/kodim17.png", "photos/kodim23.png"];
        let others = [
            "photos/lorem_ipsum_screenshot.png",
            "photos/exoplanet_phase_curve_diagram.png",
            "convert/pdf-image-pillow.p1.ref.png",
            "bench/screenshot-3456x2234.png",
        ];
        for name in names.iter().chain(&others) {
            let fitted = resize_to_fit(image::open(root.join(name)).unwrap(), FIT_SIDE);
            let predicted = SampleSizes::of(&fitted).unwrap().quick_over_fast();
            let png = PngRows::of(&fitted).unwrap();
            let whole = png.filtered(0..png.height());
            let ratio = predicted / (whole.level_len(1) as f64 / whole.fast_len() as f64);
            eprintln!("{name}: the half sample predicts {ratio:.3} of the quick level over the fast pass");
            assert!(ratio <= QUICK_TRIED_OVER, "{name}: {ratio:.3}");
            assert!(ratio >= 0.9, "{name}: {ratio:.3} (a quick level predicted this much smaller is written in vain)");
        }
    }

    /// The sample holds its rows alone, an eighth of the image's (with their filter bytes and the
    /// row buffers), not room for the whole image.
    #[test]
    fn the_row_sample_holds_an_eighth_of_the_image() {
        let (_, big) = big_png();
        let (sizes, peak) = crate::alloc_meter::peak_during(|| SampleSizes::of(&big).unwrap());
        let image = big.as_bytes().len();
        assert_eq!(sizes.rows, 2000.0 / 256.0);
        assert!(peak < image / 7, "held {peak} bytes for a sample of a {image}-byte image");
    }

    /// Before any whole PNG is written, the sample says whether any PNG level can fit: a photo
    /// twice over the limit goes to JPEG without one; one the fast pass fits, or a screenshot
    /// whose quick level would fit, is written and measured.
    #[test]
    fn no_png_is_written_where_the_sample_puts_every_level_over() {
        let open = |name: &str| {
            image::open(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/photos").join(name))
                .unwrap()
        };
        let fast_len = |img: &DynamicImage| encode_png_fast(img).unwrap().len() as u64;
        let photo = open("kodim23.png");
        let mut sizes = SampleSizes::of(&photo).unwrap();
        // The sample is within 10% of the fast pass (the test above): at 1.1 times it, it fits.
        assert_eq!(sizes.first_effort(base64_len(fast_len(&photo)) * 11 / 10), Some(Effort::Fast));
        assert_eq!(sizes.quick_over_fast, None, "the fast pass is predicted to fit: its sample alone decided");
        assert_eq!(sizes.first_effort(base64_len(fast_len(&photo)) / 2), None);
        // A screenshot whose fast pass is over but whose level 1 fits: level 1 is written first.
        let shot = open("lorem_ipsum_screenshot.png");
        let mut sizes = SampleSizes::of(&shot).unwrap();
        assert_eq!(sizes.first_effort(base64_len(fast_len(&shot)) * 6 / 10), Some(Effort::Quick));
        assert_eq!(sizes.first_effort(base64_len(fast_len(&shot)) / 5), None);
    }

    #[test]
    fn a_screenshot_predicts_the_quick_level() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/photos/lorem_ipsum_screenshot.png");
        let shot = image::open(path).unwrap();
        let fast = encode_as(&shot, ImageType::Png, Effort::Fast).unwrap().unwrap().len() as u64;
        // Level 1 is less than half the fast pass on this text: a limit at 60% of it is met.
        let limit = base64_len(fast) * 6 / 10;
        let mut sizes = SampleSizes::of(&shot).unwrap();
        assert_eq!(next_png_effort(&mut sizes, Effort::Fast, fast, limit), Some(Effort::Quick));
        let expected: u32 = (0..shot.height()).step_by(128).map(|y| (shot.height() - y).min(16)).sum();
        assert_eq!(sizes.rows, f64::from(shot.height()) / f64::from(expected));
    }

    #[test]
    fn transparent_pixels_flatten_to_white() {
        let mut img = image::RgbaImage::new(2, 1);
        img.put_pixel(0, 0, image::Rgba([0, 0, 0, 0]));
        img.put_pixel(1, 0, image::Rgba([10, 20, 30, 255]));
        let flat = flatten_on_white(&DynamicImage::ImageRgba8(img));
        assert_eq!(flat.get_pixel(0, 0).0, [255, 255, 255]);
        assert_eq!(flat.get_pixel(1, 0).0, [10, 20, 30]);
    }

    /// What the JPEG rungs wrote before the chroma was averaged as the rows are handed over:
    /// `jpeg-encoder` converting the RGB itself and averaging each 2x2 block (`Average`).
    fn encode_jpeg_by_the_encoder(rgb: &RgbImage, quality: u8) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = jpeg_encoder::Encoder::new(&mut out, quality);
        encoder.set_sampling_factor(jpeg_encoder::SamplingFactor::F_2_2);
        encoder.set_chroma_subsampling_method(jpeg_encoder::ChromaSubsamplingMethod::Average);
        encoder.encode(rgb.as_raw(), rgb.width() as u16, rgb.height() as u16, jpeg_encoder::ColorType::Rgb).unwrap();
        out
    }

    fn photo_crop(width: u32, height: u32) -> RgbImage {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/photos/kodim23.png");
        let photo = image::open(path).expect("tests/corpus/photos/kodim23.png").to_rgb8();
        image::imageops::crop_imm(&photo, 101, 20, width, height).to_image()
    }

    fn decoded_psnr(a: &[u8], b: &[u8]) -> f64 {
        let (a, b) = (image::load_from_memory(a).unwrap().to_rgb8(), image::load_from_memory(b).unwrap().to_rgb8());
        assert_eq!(a.dimensions(), b.dimensions());
        let mse = a.as_raw().iter().zip(b.as_raw()).map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2)).sum::<f64>()
            / a.as_raw().len() as f64;
        if mse == 0.0 { f64::INFINITY } else { 10.0 * (255.0f64 * 255.0 / mse).log10() }
    }

    /// Where the encoder pads no column (a width that is a multiple of 16), the rows averaged as they
    /// are handed over give the very bytes of the encoder's own `Average` method: heights that are
    /// and are not a multiple of 16 (the bottom rows repeated), at every rung's quality.
    #[test]
    fn the_jpeg_rungs_are_the_encoders_own_averaging_byte_for_byte() {
        for (w, h) in [(640, 480), (512, 333), (16, 1), (32, 17)] {
            let rgb = photo_crop(w, h);
            for q in JPEG_LADDER {
                let ours = encode_jpeg(&DynamicImage::ImageRgb8(rgb.clone()), q).unwrap();
                assert!(ours == encode_jpeg_by_the_encoder(&rgb, q), "{w}x{h} at q{q}");
            }
        }
    }

    /// Other widths differ only in the padding's chroma past the right edge: the decoded images
    /// stay within 40 dB of the encoder's own averaging (they are far closer).
    #[test]
    fn the_jpeg_rungs_at_any_width_decode_as_the_encoders_own_averaging() {
        for (w, h) in [(641, 481), (638, 479), (1, 1), (3, 2), (17, 9), (333, 200)] {
            let rgb = photo_crop(w, h);
            let ours = encode_jpeg(&DynamicImage::ImageRgb8(rgb.clone()), 80).unwrap();
            let psnr = decoded_psnr(&ours, &encode_jpeg_by_the_encoder(&rgb, 80));
            assert!(psnr >= 40.0, "{w}x{h}: {psnr:.1} dB");
        }
    }

    /// What the ladder wrote for a JPEG before it was fitted from its planes: jpeg-decoder's scaled
    /// RGB decode, fitted whole, written from its YCbCr planes.
    fn jpeg_rgb_path(bytes: &[u8], header: &Header, side: u32, quality: u8) -> Vec<u8> {
        let fitted = resize_to_fit(decode_jpeg_shrunk(bytes, header).unwrap(), FIT_SIDE);
        encode_jpeg(&resize_to_fit(fitted, side), quality).unwrap()
    }

    fn corpus_file(path: &str) -> Vec<u8> {
        std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus").join(path)).unwrap()
    }

    /// JPEGs of each kind the planes take: the 12 MP photo (4:2:0, decoded at 1/2, nothing to
    /// resize), one made 2999x1999 at 4:2:0 (decoded whole, every plane resized), one made
    /// 3000x2000 at 4:4:4 (chroma halved by the resize), 4:2:2, small ones the fit keeps, grey.
    fn planar_inputs() -> Vec<(String, Vec<u8>)> {
        let (_, big) = big_png();
        let jpeg = |img: &DynamicImage, sampling| {
            let rgb = img.to_rgb8();
            let mut out = Vec::new();
            let mut encoder = jpeg_encoder::Encoder::new(&mut out, 90);
            encoder.set_sampling_factor(sampling);
            encoder
                .encode(rgb.as_raw(), rgb.width() as u16, rgb.height() as u16, jpeg_encoder::ColorType::Rgb)
                .unwrap();
            out
        };
        let odd = DynamicImage::ImageRgb8(image::imageops::crop_imm(&big.to_rgb8(), 0, 0, 2999, 1999).to_image());
        let mut inputs = vec![
            ("made 2999x1999 4:2:0".to_string(), jpeg(&odd, jpeg_encoder::SamplingFactor::F_2_2)),
            ("made 3000x2000 4:4:4".to_string(), jpeg(&big, jpeg_encoder::SamplingFactor::F_1_1)),
        ];
        for path in [
            "bench/photo-12mp.jpg",
            "conformance/jpeg/peacock.s2x1-422.jpeg",
            "conformance/jpeg/peacock.default.jpeg",
            "conformance/jpeg/peacock.s1x1-444.jpeg",
            "conformance/jpeg/testorig.jpg",
            "conformance/jpeg/jpg-size-17x17.jpg",
            "conformance/jpeg/peacock.grayscale.jpeg",
        ] {
            inputs.push((path.to_string(), corpus_file(path)));
        }
        inputs
    }

    /// A JPEG fitted from its planes against the RGB path on the same input, at every rung's
    /// quality: the same size, at most 5% larger, within 38 dB decoded where the fit resizes (41-48
    /// dB on these), at least as close to the source where it keeps the size; grey stays grey.
    #[test]
    fn a_jpeg_fitted_from_its_planes_matches_the_rgb_path() {
        for (name, bytes) in planar_inputs() {
            let header = super::super::decode::read_header(&bytes, ImageType::Jpeg).unwrap();
            let fitted = fit_jpeg_planes(&bytes, &header).unwrap_or_else(|| panic!("{name}: no planes"));
            for q in JPEG_LADDER {
                let ours = planar_jpeg::encode(&fitted, q).unwrap();
                let theirs = jpeg_rgb_path(&bytes, &header, FIT_SIDE, q);
                let psnr = decoded_psnr(&ours, &theirs);
                let ratio = ours.len() as f64 / theirs.len() as f64;
                eprintln!("{name} q{q}: {psnr:.1} dB, {} / {} bytes ({ratio:.3})", ours.len(), theirs.len());
                if (header.width, header.height) == (fitted.width, fitted.height) {
                    // Kept at its size: requantising two slightly different inputs of a small,
                    // detailed image differs by 31-44 dB from rung to rung, so each is held to the
                    // source instead.
                    let source = image::load_from_memory(&bytes).unwrap().to_rgb8();
                    let source = crate::test_images::encode(&DynamicImage::ImageRgb8(source), image::ImageFormat::Png);
                    let (ours_db, theirs_db) = (decoded_psnr(&ours, &source), decoded_psnr(&theirs, &source));
                    eprintln!("  to the source: {ours_db:.1} dB, the RGB path {theirs_db:.1} dB");
                    assert!(ours_db + 0.5 >= theirs_db, "{name} q{q}: {ours_db:.1} dB, the RGB path {theirs_db:.1} dB");
                } else {
                    assert!(psnr >= 38.0, "{name} q{q}: {psnr:.1} dB");
                }
                assert!(ratio <= 1.05, "{name} q{q}: {ratio:.3}");
            }
            let grey = fitted.planes.len() == 1;
            let written = planar_jpeg::encode(&fitted, 80).unwrap();
            let decoded = image::load_from_memory(&written).unwrap();
            assert_eq!(decoded.color() == image::ColorType::L8, grey, "{name}");
        }
    }

    fn with_limit(max_base64_len: u64) -> Profile {
        let p = crate::Options::default().provider.profile();
        Profile {
            provider: p.provider,
            image_types: p.image_types,
            max_base64_len,
            max_side: p.max_side,
            still_gif_only: false,
        }
    }

    /// The ladder's later rungs from planes: a limit only quality 20 meets, one only the last
    /// resort (1000 px at 20) meets, one nothing meets; each as the RGB path sizes them.
    #[test]
    fn the_planar_ladder_steps_down_as_the_rgb_ladder() {
        let bytes = corpus_file("bench/photo-12mp.jpg");
        let header = super::super::decode::read_header(&bytes, ImageType::Jpeg).unwrap();
        let q20 = jpeg_rgb_path(&bytes, &header, FIT_SIDE, 20).len() as u64;
        let last = jpeg_rgb_path(&bytes, &header, LAST_RESORT_SIDE, 20).len() as u64;
        let fitted = |limit| {
            fit(&bytes, ImageType::Jpeg, &header, None, None, None, &with_limit(limit)).unwrap().map(|r| {
                let back = image::load_from_memory(&r.bytes).unwrap();
                assert_eq!((back.width(), back.height()), (r.dimensions.width, r.dimensions.height));
                (r.dimensions.width, r.dimensions.height, r.bytes.len() as u64)
            })
        };
        let (w, h, len) = fitted(base64_len(q20 * 21 / 20)).unwrap();
        assert_eq!((w, h), (2000, 1500));
        assert!(len * 10 <= q20 * 11, "{len} for quality 20's {q20}");
        let (w, h, _) = fitted(base64_len(last * 21 / 20)).unwrap();
        assert_eq!((w, h), (1000, 750));
        assert_eq!(fitted(base64_len(last / 2)), None);
    }

    /// A baseline JPEG is fitted from its planes, upright or stored sideways: upright, the first
    /// rung is the planes' own; sideways, each EXIF orientation turns the planes as the RGB path
    /// turns its decode (the same size, within 38 dB decoded, on a frame of odd sides whose flips
    /// move the chroma boxes by a pixel).
    #[test]
    fn a_jpeg_is_fitted_from_its_planes_upright_or_turned() {
        let bytes = corpus_file("bench/photo-12mp.jpg");
        let header = super::super::decode::read_header(&bytes, ImageType::Jpeg).unwrap();
        let profile = crate::Options::default().provider.profile();
        let upright = fit(&bytes, ImageType::Jpeg, &header, None, None, None, profile).unwrap().unwrap();
        let planar = planar_jpeg::encode(&fit_jpeg_planes(&bytes, &header).unwrap(), JPEG_LADDER[0]).unwrap();
        assert!(upright.bytes == planar, "the first rung from the planes");

        let (name, odd) = planar_inputs().into_iter().find(|(name, _)| name.contains("2999x1999")).unwrap();
        let mut header = super::super::decode::read_header(&odd, ImageType::Jpeg).unwrap();
        for orientation in [
            Orientation::Rotate90,
            Orientation::Rotate180,
            Orientation::Rotate270,
            Orientation::FlipHorizontal,
            Orientation::FlipVertical,
            Orientation::Rotate90FlipH,
            Orientation::Rotate270FlipH,
        ] {
            header.orientation = orientation;
            let turned = fit(&odd, ImageType::Jpeg, &header, None, None, None, profile).unwrap().unwrap();
            let mut rgb = decode_jpeg_shrunk(&odd, &header).unwrap();
            rgb.apply_orientation(orientation);
            let rgb = encode_jpeg(&resize_to_fit(rgb, FIT_SIDE), JPEG_LADDER[0]).unwrap();
            let back = image::load_from_memory(&turned.bytes).unwrap();
            assert_eq!((back.width(), back.height()), (turned.dimensions.width, turned.dimensions.height));
            let psnr = decoded_psnr(&turned.bytes, &rgb);
            eprintln!("{name} {orientation:?}: {}x{}, {psnr:.1} dB", back.width(), back.height());
            assert!(psnr >= 38.0, "{name} {orientation:?}: {psnr:.1} dB");
        }
    }
}
