use fast_image_resize::{FilterType, ResizeAlg, ResizeOptions, Resizer};
use image::DynamicImage;

use super::RowResizer;
use crate::gate::downsample::fit_inside;

fn corpus_photo() -> DynamicImage {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/photos/kodim23.png");
    image::open(path).expect("tests/corpus/photos/kodim23.png")
}

/// The whole-image resize the ladder used before rows were streamed.
fn whole(img: &DynamicImage, (w, h): (u32, u32)) -> DynamicImage {
    let mut dst = DynamicImage::new(w, h, img.color());
    let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3));
    Resizer::new().resize(img, &mut dst, &options).unwrap();
    dst
}

fn by_rows(img: &DynamicImage, dst: (u32, u32)) -> DynamicImage {
    let mut rows =
        RowResizer::new((img.width(), img.height()), dst, img.color()).expect("an 8-bit layout that shrinks");
    let row_bytes = img.as_bytes().len() / img.height() as usize;
    for row in img.as_bytes().chunks_exact(row_bytes) {
        rows.push_row(row).unwrap();
    }
    rows.finish().unwrap()
}

/// PSNR over every channel byte (identical buffers: infinity).
fn psnr(a: &DynamicImage, b: &DynamicImage) -> f64 {
    assert_eq!((a.width(), a.height(), a.color()), (b.width(), b.height(), b.color()));
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mse = a.iter().zip(b).map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2)).sum::<f64>() / a.len() as f64;
    10.0 * (255.0f64.powi(2) / mse).log10()
}

/// The output the fit hands on is the whole-image resize's, to within fixed-point rounding of a
/// band's coefficients: ≥ 50 dB PSNR (the bar this change is held to; in practice all but a few
/// bytes are equal) on a photo upscaled to 12 MP proportions and fitted as the ladder fits it,
/// in every 8-bit layout, with odd sizes and scales.
#[test]
fn rows_in_give_the_whole_image_resize() {
    let photo = corpus_photo().resize_exact(2400, 1600, image::imageops::FilterType::Triangle);
    let layouts = [
        DynamicImage::ImageRgb8(photo.to_rgb8()),
        DynamicImage::ImageRgba8(photo.to_rgba8()),
        DynamicImage::ImageLuma8(photo.to_luma8()),
        DynamicImage::ImageLumaA8(photo.to_luma_alpha8()),
    ];
    for img in layouts {
        for dst in [fit_inside(2400, 1600, 2000), (1000, 667), (601, 399), (2400, 1599), (37, 25)] {
            let (a, b) = (by_rows(&img, dst), whole(&img, dst));
            let db = psnr(&a, &b);
            let differ = a.as_bytes().iter().zip(b.as_bytes()).filter(|(x, y)| x != y).count();
            assert!(db >= 50.0, "{:?} to {dst:?}: {db:.1} dB ({differ} bytes differ)", img.color());
        }
    }
}

/// Rows are held only under the filter: fitting a 2400×4800 RGB image (34.6 MB) fed row by row
/// holds the fitted image, the window (two bands' worth of source rows) and fast_image_resize's
/// buffer for one band's vertical pass: well under half the source.
#[test]
fn rows_in_hold_a_window_not_the_image() {
    let (w, h) = (2400, 4800);
    let img =
        DynamicImage::ImageRgb8(corpus_photo().resize_exact(w, h, image::imageops::FilterType::Triangle).to_rgb8());
    let dst = (1200, 2400);
    let row_bytes = w as usize * 3;
    let rows: Vec<Vec<u8>> = img.as_bytes().chunks_exact(row_bytes).map(<[u8]>::to_vec).collect();
    let (fitted, peak) = crate::alloc_meter::peak_during(|| {
        let mut resizer = RowResizer::new((w, h), dst, image::ColorType::Rgb8).unwrap();
        for row in &rows {
            resizer.push_row(row).unwrap();
        }
        resizer.finish().unwrap()
    });
    assert_eq!((fitted.width(), fitted.height()), dst);
    let fitted_bytes = 1200 * 2400 * 3;
    let working = (4 * super::BAND_ROWS as usize + 64) * row_bytes;
    assert!(working < h as usize * row_bytes / 2);
    assert!(peak < fitted_bytes + working, "held {peak} bytes for a {fitted_bytes}-byte output");
}

/// A decoder that gives fewer rows than declared, or a row of the wrong length, is an error, not
/// a half-black image.
#[test]
fn short_or_wrong_rows_are_errors() {
    let mut resizer = RowResizer::new((40, 30), (20, 15), image::ColorType::Rgb8).unwrap();
    assert!(resizer.push_row(&[0; 40 * 3 - 1]).is_err());
    for _ in 0..29 {
        resizer.push_row(&[7; 40 * 3]).unwrap();
    }
    assert!(resizer.finish().is_err());
}

/// A decoder that gives more rows than the header declares, or fewer, gets an error, not a fit:
/// through a copy (`push_row`) or written in place (`next_row`, `row_written`).
#[test]
fn rows_past_or_short_of_the_declared_height_are_errors() {
    let row = [7u8; 30];
    let mut rows = RowResizer::new((10, 4), (5, 2), image::ColorType::Rgb8).unwrap();
    for _ in 0..4 {
        rows.next_row().unwrap().copy_from_slice(&row);
        rows.row_written().unwrap();
    }
    assert!(!rows.wants_rows());
    assert!(rows.next_row().is_err());
    assert!(rows.row_written().is_err());
    assert!(rows.push_row(&row).is_err());
    assert_eq!(rows.finish().unwrap().as_bytes(), [7u8; 5 * 2 * 3]);

    let mut short = RowResizer::new((10, 4), (5, 2), image::ColorType::Rgb8).unwrap();
    short.push_row(&row).unwrap();
    assert!(short.push_row(&row[..29]).is_err());
    assert!(short.finish().unwrap_err().contains("gave 1 of the image's 4 rows"));
}
