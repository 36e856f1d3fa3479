//! PDFs written in the test (objects + a correct xref), rendered natively.

use std::time::Instant;

use super::*;
use crate::test_deadline::{HOSTILE, within};

/// A PDF from its objects' bodies (object `i + 1` is `objects[i]`), catalog = object 1.
fn pdf(objects: &[Vec<u8>]) -> Vec<u8> {
    pdf_with_trailer(objects, "")
}

fn pdf_with_trailer(objects: &[Vec<u8>], extra_trailer: &str) -> Vec<u8> {
    crate::test_images::pdf_of_objects(objects, extra_trailer)
}

fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    crate::test_images::pdf_stream(dict, data)
}

fn zlib(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Pages: each (MediaBox, content stream, resources).
fn doc(pages: &[(&str, &[u8], &str)]) -> Vec<u8> {
    let n = pages.len();
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 3 + 2 * i)).collect();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!("<< /Type /Pages /Kids [{}] /Count {n} >>", kids.join(" ")).into_bytes(),
    ];
    for (i, (media_box, content, resources)) in pages.iter().enumerate() {
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [{media_box}] /Contents {} 0 R /Resources << {resources} >> >>",
                4 + 2 * i
            )
            .into_bytes(),
        );
        objects.push(stream("", content));
    }
    pdf(&objects)
}

/// One page (`media_box`) whose content `draw` paints the image XObject `/Im1` (`image`, `data`).
fn image_page(media_box: &str, draw: &[u8], image: &str, data: &[u8]) -> Vec<u8> {
    pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!("<< /Type /Page /Parent 2 0 R /MediaBox [{media_box}] /Contents 4 0 R /Resources << /XObject << /Im1 5 0 R >> >> >>")
            .into_bytes(),
        stream("", draw),
        stream(&format!("/Type /XObject /Subtype /Image {image}"), data),
    ])
}

const A4: &str = "0 0 595 842";
const HELVETICA: &str = "/Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >>";
const TEXT: &[u8] = b"BT /F1 36 Tf 72 700 Td (Hello, mediagate) Tj ET";
const RED_BOX: &[u8] = b"1 0 0 rg 100 100 200 200 re f";
const SMALL_BOX: &[u8] = b"1 0 0 rg 10 10 50 50 re f";

fn dark_pixels(img: &RgbaImage) -> usize {
    img.pixels().filter(|p| p.0[0] < 128 && p.0[1] < 128 && p.0[2] < 128).count()
}

#[test]
fn a_text_page_in_a_standard_font_renders_at_the_fit() {
    let bytes = doc(&[(A4, TEXT, HELVETICA)]);
    let start = Instant::now();
    let (img, note) = render_page(&bytes, 1, 2000).unwrap();
    eprintln!("A4 text page rendered natively in {:?}", start.elapsed());
    // A4 at 200 dpi is 1654x2339: fitted into 2000², 2000/842 pt = 171 dpi.
    assert_eq!((img.width(), img.height()), (1413, 2000));
    assert_eq!(note, "page 1 of 1 at 171 dpi, 1413x2000");
    // The glyphs are there (Helvetica from the embedded standard fonts): black ink, top left.
    assert!(dark_pixels(&img) > 2000, "{} dark pixels", dark_pixels(&img));
    let top_third = img.enumerate_pixels().filter(|(_, y, p)| *y < 700 && p.0[0] < 128).count();
    assert_eq!(top_third, dark_pixels(&img), "the text is near the top of the page");
    assert!(img.pixels().all(|p| p.0[3] == 255), "paper is opaque");
}

#[test]
fn a_small_page_is_not_rendered_above_200_dpi() {
    let bytes = doc(&[("0 0 144 72", SMALL_BOX, "")]);
    let (img, note) = render_page(&bytes, 1, 2000).unwrap();
    assert_eq!((img.width(), img.height()), (400, 200));
    assert_eq!(note, "page 1 of 1 at 200 dpi, 400x200");
}

#[test]
fn vector_shapes_are_painted_where_the_page_puts_them() {
    let bytes = doc(&[("0 0 400 400", RED_BOX, "")]);
    let (img, _) = render_page(&bytes, 1, 800).unwrap();
    // 400 pt into 800 px: scale 2 (144 dpi); the box spans 200..600 px, y flipped.
    assert_eq!(img.dimensions(), (800, 800));
    assert_eq!(img.get_pixel(400, 400).0, [255, 0, 0, 255]);
    assert_eq!(img.get_pixel(100, 100).0, [255, 255, 255, 255]);
    assert_eq!(img.get_pixel(300, 700).0, [255, 255, 255, 255]);
    assert_eq!(img.get_pixel(300, 500).0, [255, 0, 0, 255]);
}

#[test]
fn an_embedded_image_is_drawn() {
    // A 2x1 RGB image (blue, green), Flate-compressed, stretched across the page.
    let bytes = image_page(
        "0 0 200 100",
        b"q 200 0 0 100 0 0 cm /Im1 Do Q",
        "/Width 2 /Height 1 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode",
        &zlib(&[0, 0, 255, 0, 255, 0]),
    );
    let (img, _) = render_page(&bytes, 1, 400).unwrap();
    assert_eq!(img.dimensions(), (400, 200));
    assert_eq!(img.get_pixel(50, 100).0, [0, 0, 255, 255]);
    assert_eq!(img.get_pixel(350, 100).0, [0, 255, 0, 255]);
}

#[test]
fn pages_are_numbered_from_one_and_each_renders_its_own_content() {
    let bytes = doc(&[(A4, b"", ""), ("0 0 400 400", RED_BOX, ""), (A4, TEXT, HELVETICA)]);
    assert_eq!(page_count(&bytes), Ok(3));
    let (img, note) = render_page(&bytes, 2, 2000).unwrap();
    assert_eq!(note, "page 2 of 3 at 200 dpi, 1111x1111");
    assert_eq!(img.get_pixel(555, 555).0, [255, 0, 0, 255]);
    assert_eq!(render_page(&bytes, 0, 2000).unwrap_err(), PageError::NoSuchPage { requested: 0, count: 3 });
    assert_eq!(render_page(&bytes, 4, 2000).unwrap_err(), PageError::NoSuchPage { requested: 4, count: 3 });
    assert_eq!(render_page(&bytes, 1, 2000).unwrap_err(), PageError::Blank { page: 1 });
    assert!(PageError::NoSuchPage { requested: 4, count: 3 }.message().contains("page 4 does not exist"));
}

#[test]
fn a_page_painted_white_is_blank() {
    let bytes = doc(&[(A4, b"1 1 1 rg 0 0 595 842 re f", "")]);
    assert_eq!(render_page(&bytes, 1, 2000).unwrap_err(), PageError::Blank { page: 1 });
}

#[test]
fn a_rotated_page_is_rendered_upright() {
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Rotate 90 /Contents 4 0 R >>".to_vec(),
        stream("", SMALL_BOX),
    ];
    let (img, _) = render_page(&pdf(&objects), 1, 2000).unwrap();
    assert_eq!(img.dimensions(), (278, 556));
    // Turned a quarter clockwise, the page's bottom-left corner, where the box is, is top left.
    assert_eq!(img.get_pixel(90, 90).0, [255, 0, 0, 255]);
    assert_eq!(img.get_pixel(190, 90).0, [255, 255, 255, 255]);
    assert_eq!(img.get_pixel(90, 465).0, [255, 255, 255, 255]);
}

/// A password-protected PDF: a standard security handler (RC4, revision 2) whose /U does not
/// match the empty password.
#[test]
fn a_pdf_that_needs_a_password_is_refused_in_words() {
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R >>".to_vec(),
        stream("", b"garbled"),
        format!("<< /Filter /Standard /V 1 /R 2 /Length 40 /P -4 /O <{}> /U <{}> >>", "11".repeat(32), "22".repeat(32))
            .into_bytes(),
    ];
    let bytes = pdf_with_trailer(
        &objects,
        "/Encrypt 5 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>] ",
    );
    let err = render_page(&bytes, 1, 2000).unwrap_err();
    let PageError::Encrypted(words) = &err else { panic!("{err:?}") };
    assert!(words.contains("encrypted with a password"), "{words}");
    assert!(words.contains("qpdf --decrypt"), "{words}");
    assert_eq!(page_count(&bytes).unwrap_err(), err);
}

#[test]
fn what_is_not_a_pdf_or_cannot_be_read_is_refused() {
    let Err(PageError::Refused(r)) = render_page(b"\x89PNG\r\n\x1a\n", 1, 2000) else { panic!() };
    assert_eq!(r.reason, Reason::MagicMismatch);
    let Err(PageError::Refused(r)) = render_page(b"%PDF-1.7\nthis is not a PDF at all\n%%EOF\n", 1, 2000) else {
        panic!()
    };
    assert_eq!(r.reason, Reason::Undecodable);
    assert!(r.message.contains("cannot be read"), "{}", r.message);
    let mut big = doc(&[(A4, TEXT, HELVETICA)]);
    big.resize(PDF_RAW_CAP as usize + 1, b' ');
    let Err(PageError::Refused(r)) = page_count(&big) else { panic!() };
    assert_eq!(r.reason, Reason::RawTooLarge);
}

// --- hostile input: each ends in an Err or a page, quickly, without a panic ----------------------

#[test]
fn a_huge_mediabox_is_fitted() {
    within(HOSTILE, "a_huge_mediabox_is_fitted", a_huge_mediabox_is_fitted_body)
}

fn a_huge_mediabox_is_fitted_body() {
    let bytes = doc(&[("0 0 1000000000 1000000000", b"0 g 0 0 1000000000 1000000000 re f", "")]);
    let (img, note) = render_page(&bytes, 1, 2000).unwrap();
    assert_eq!(img.dimensions(), (2000, 2000));
    assert_eq!(note, "page 1 of 1 at under 1 dpi, 2000x2000");
    assert_eq!(img.get_pixel(1000, 1500).0, [0, 0, 0, 255]);
    // A sliver: one side rounds to a pixel, never to none.
    // (its ink covers a millionth of that row: blank, said so, not a panic on a 0-pixel side).
    let bytes = doc(&[("0 0 1000000000 1", b"0 g 0 0 1000000000 1 re f", "")]);
    assert_eq!(render_page(&bytes, 1, 2000).unwrap_err(), PageError::Blank { page: 1 });
    let bytes = doc(&[("0 0 100000 1", b"0 g 0 0 100000 1 re f", "")]);
    let (img, _) = render_page(&bytes, 1, 2000).unwrap();
    assert_eq!(img.dimensions(), (2000, 1));
}

#[test]
fn a_page_without_area_is_refused() {
    within(HOSTILE, "a_page_without_area_is_refused", a_page_without_area_is_refused_body)
}

fn a_page_without_area_is_refused_body() {
    let bytes = doc(&[("0 0 0 0", RED_BOX, "")]);
    let err = render_page(&bytes, 1, 2000).unwrap_err();
    assert!(matches!(err, PageError::Refused(_) | PageError::Blank { .. }), "{err:?}");
}

#[test]
fn a_form_that_draws_itself_twice_ends() {
    within(HOSTILE, "a_form_that_draws_itself_twice_ends", a_form_that_draws_itself_twice_ends_body)
}

fn a_form_that_draws_itself_twice_ends_body() {
    // Without a depth bound this is 2^n draws.
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R /Resources << /XObject << /X 5 0 R >> >> >>".to_vec(),
        stream("", b"0 g 10 10 50 50 re f /X Do"),
        stream("/Type /XObject /Subtype /Form /BBox [0 0 200 100] /Resources << /XObject << /X 5 0 R >> >>", b"0 g 1 1 2 2 re f /X Do /X Do"),
    ];
    let start = Instant::now();
    let result = render_page(&pdf(&objects), 1, 2000);
    assert!(start.elapsed().as_secs() < 20, "took {:?}", start.elapsed());
    // hayro's object resolution does not hand a form back to itself (nor does it to the page-work
    // walk, whose own cycle check is the backstop): drawn once.
    assert!(result.is_ok(), "{result:?}");
}

/// One A4 page whose content draws form `/X0`; `forms[i]` is object `5 + i`.
fn page_with_forms(content: &[u8], forms: Vec<Vec<u8>>) -> Vec<u8> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /XObject << /X0 5 0 R >> >> >>".to_vec(),
        stream("", content),
    ];
    objects.extend(forms);
    pdf(&objects)
}

/// Forms each drawing the next `fan` times, `levels` deep; the last fills a rectangle.
fn fan_out(levels: usize, fan: usize) -> Vec<u8> {
    let forms = (0..levels)
        .map(|i| {
            if i + 1 == levels {
                stream("/Type /XObject /Subtype /Form /BBox [0 0 595 842]", SMALL_BOX)
            } else {
                stream(
                    &format!(
                        "/Type /XObject /Subtype /Form /BBox [0 0 595 842] /Resources << /XObject << /X {} 0 R >> >>",
                        6 + i
                    ),
                    &b"/X Do ".repeat(fan),
                )
            }
        })
        .collect();
    page_with_forms(b"/X0 Do", forms)
}

#[test]
fn form_fan_out_is_multiplied_out_before_rendering() {
    within(
        HOSTILE,
        "form_fan_out_is_multiplied_out_before_rendering",
        form_fan_out_is_multiplied_out_before_rendering_body,
    )
}

fn form_fan_out_is_multiplied_out_before_rendering_body() {
    let pdf = open(&fan_out(12, 10)).unwrap();
    let page = &pdf.pages()[0];
    let Err(PageError::Refused(r)) = check_page_work(page, 1, 0) else { panic!() };
    assert!(r.message.contains("form XObject draws") || r.message.contains("operators"), "{}", r.message);
    // x10 over 4 levels: 1 + 10 + 100 + 1,000 form draws, 1,000 rectangles filled.
    let bytes = fan_out(4, 10);
    let pdf = open(&bytes).unwrap();
    let mut walk = PageWork { raw: 0, memo: Default::default(), open: Vec::new() };
    let work = walk.stream(pdf.pages()[0].page_stream().unwrap(), pdf.pages()[0].resources(), 0).unwrap();
    assert_eq!((work.forms, work.paints), (1_111, 1_111 + 1_000));
    assert!(render_page(&bytes, 1, 2000).is_ok());
}

#[test]
fn operators_paints_and_inline_images_are_counted() {
    within(
        HOSTILE,
        "operators_paints_and_inline_images_are_counted",
        operators_paints_and_inline_images_are_counted_body,
    )
}

fn operators_paints_and_inline_images_are_counted_body() {
    let over = |content: &[u8], words: &str| {
        let Err(PageError::Refused(r)) = render_page(&doc(&[(A4, content, "")]), 1, 2000) else { panic!("{words}") };
        assert!(r.message.contains(words), "{}", r.message);
    };
    over(&b"0 0 m ".repeat(1_000_001), "operators");
    over(&b"10 10 m 500 800 l S\n".repeat(6_001), "painting operators");
    over(b"BI /W 7000 /H 7000 /BPC 8 /CS /RGB ID \0\0\0 EI", "7000x7000");
    over(b"BI /W 8000 /H 7000 /BPC 8 /CS /G ID \0\0\0 EI", "8000x7000");
    // A grey 7000x7000 (245 MB to draw by the count) is within it.
    let grey = stream("/Width 7000 /Height 7000 /BitsPerComponent 8 /ColorSpace /DeviceGray", b"");
    let pdf = open(&page_with_forms(b"", vec![grey])).unwrap();
    for object in pdf.objects() {
        if let Object::Stream(s) = object {
            assert!(check_image_size(&s, 0).is_ok());
        }
    }
    // At the painting limit: drawn.
    assert!(render_page(&doc(&[(A4, &b"10 10 m 500 800 l S\n".repeat(6_000), "")]), 1, 2000).is_ok());
}

#[test]
fn image_codecs_are_sized_by_their_data() {
    within(HOSTILE, "image_codecs_are_sized_by_their_data", image_codecs_are_sized_by_their_data_body)
}

fn image_codecs_are_sized_by_their_data_body() {
    // JBIG2: a page-information segment (number 0, type 48, one page byte, 19 bytes of data).
    let mut jbig2 = vec![0, 0, 0, 0, 48, 0, 1, 0, 0, 0, 19];
    jbig2.extend_from_slice(&65_535u32.to_be_bytes());
    jbig2.extend_from_slice(&65_535u32.to_be_bytes());
    jbig2.extend_from_slice(&[0; 11]);
    // A generic region segment (type 38) after it, referring to segment 0, of 40x30.
    jbig2.extend_from_slice(&[0, 0, 0, 1, 38, 0b0010_0000, 0, 1, 0, 0, 0, 18]);
    jbig2.extend_from_slice(&40u32.to_be_bytes());
    jbig2.extend_from_slice(&30u32.to_be_bytes());
    jbig2.extend_from_slice(&[0; 10]);
    assert_eq!(jbig2_sizes(&jbig2), vec![(65_535, 65_535), (40, 30)]);
    // A striped page of unknown height: its regions bound it.
    let mut striped = jbig2.clone();
    striped[15..19].copy_from_slice(&u32::MAX.to_be_bytes());
    assert_eq!(jbig2_sizes(&striped), vec![(65_535, 0), (40, 30)]);
    // JPEG 2000: a JP2 header box and a bare codestream.
    let mut jp2 = b"\0\0\0\x16ihdr".to_vec();
    jp2.extend_from_slice(&20_000u32.to_be_bytes());
    jp2.extend_from_slice(&30_000u32.to_be_bytes());
    assert_eq!(jpx_sizes(&jp2), vec![(30_000, 20_000)]);
    let mut siz = vec![0xff, 0x4f, 0xff, 0x51, 0, 41, 0, 0];
    for v in [10_000u32, 9_000, 100, 0] {
        siz.extend_from_slice(&v.to_be_bytes());
    }
    assert_eq!(jpx_sizes(&siz), vec![(9_900, 9_000)]);
    // In a PDF: the 10x10 dictionary is not believed.
    let image = stream(
        "/Type /XObject /Subtype /Image /Width 10 /Height 10 /BitsPerComponent 1 /ColorSpace /DeviceGray /Filter /JBIG2Decode",
        &jbig2,
    );
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /XObject << /I 5 0 R >> >> >>".to_vec(),
        stream("", b"q 100 0 0 100 0 0 cm /I Do Q"),
    ];
    objects.push(image);
    let Err(PageError::Refused(r)) = render_page(&pdf(&objects), 1, 2000) else { panic!() };
    assert!(r.message.contains("65535x"), "{}", r.message);
    // JPEG: an 8x8 grey JPEG whose frame header is made to say 60000x50000, in a 10x10 dictionary.
    let mut jpeg = Vec::new();
    jpeg_encoder::Encoder::new(&mut jpeg, 90).encode(&[128; 64], 8, 8, jpeg_encoder::ColorType::Luma).unwrap();
    let sof = jpeg.windows(2).position(|m| m == [0xff, 0xc0]).unwrap();
    jpeg[sof + 5..sof + 9].copy_from_slice(&[0xc3, 0x50, 0xea, 0x60]); // height 50000, width 60000
    objects.pop();
    objects.push(stream(
        "/Type /XObject /Subtype /Image /Width 10 /Height 10 /BitsPerComponent 8 /ColorSpace /DeviceGray /Filter /DCTDecode",
        &jpeg,
    ));
    let Err(PageError::Refused(r)) = render_page(&pdf(&objects), 1, 2000) else { panic!() };
    assert!(r.message.contains("60000x50000"), "{}", r.message);
    // The same JPEG with its own 8x8 header is drawn.
    jpeg[sof + 5..sof + 9].copy_from_slice(&[0, 8, 0, 8]);
    objects.pop();
    objects.push(stream(
        "/Type /XObject /Subtype /Image /Width 8 /Height 8 /BitsPerComponent 8 /ColorSpace /DeviceGray /Filter /DCTDecode",
        &jpeg,
    ));
    assert!(render_page(&pdf(&objects), 1, 2000).is_ok());
}

#[test]
fn filter_chains_are_decoded_stage_by_stage() {
    within(HOSTILE, "filter_chains_are_decoded_stage_by_stage", filter_chains_are_decoded_stage_by_stage_body)
}

fn filter_chains_are_decoded_stage_by_stage_body() {
    let bomb = zlib(&zlib(&vec![0; 250_000_000]));
    let hex: String = bomb.iter().map(|b| format!("{b:02X}")).collect::<String>() + ">";
    for (filters, data) in [
        ("/Filter [/FlateDecode /FlateDecode]", bomb.clone()),
        ("/Filter [/ASCIIHexDecode /FlateDecode /FlateDecode]", hex.into_bytes()),
    ] {
        let objects = vec![
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>".to_vec(),
            stream(filters, &data),
        ];
        let Err(PageError::Refused(r)) = render_page(&pdf(&objects), 1, 2000) else { panic!("{filters}") };
        assert_eq!(r.limit, Some(OTHER_STREAM_DECODED_MAX), "{filters}: {}", r.message);
    }
    // An ordinary chain decodes to its text.
    let mut out = Sink { kept: None, len: 0, cap: u64::MAX };
    let text = zlib(TEXT);
    let hex: String = text.iter().map(|b| format!("{b:02x}")).collect();
    let mut stage = Sink { kept: Some(Vec::new()), len: 0, cap: u64::MAX };
    ascii_hex(hex.as_bytes(), &mut stage);
    inflate(&stage.kept.unwrap(), &mut out);
    assert_eq!(out.len, TEXT.len() as u64);
    // LZW (early change, as PDF writes it) counted past the cap.
    let mut encoded = Vec::new();
    weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
        .into_vec(&mut encoded)
        .encode_all(&vec![0u8; 1_000_000][..])
        .status
        .unwrap();
    assert_eq!(counted(|o| lzw(&encoded, true, o), u64::MAX), 1_000_000);
    assert_eq!(counted(|o| lzw(&encoded, true, o), 1000), 1000);
}

#[test]
fn a_huge_image_is_refused_before_it_is_decoded() {
    within(HOSTILE, "a_huge_image_is_refused_before_it_is_decoded", a_huge_image_is_refused_before_it_is_decoded_body)
}

fn a_huge_image_is_refused_before_it_is_decoded_body() {
    let bytes = image_page(
        "0 0 200 100",
        b"q 200 0 0 100 0 0 cm /Im1 Do Q",
        "/Width 100000 /Height 100000 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode",
        &zlib(&[7; 3000]),
    );
    let Err(PageError::Refused(r)) = render_page(&bytes, 1, 2000) else { panic!() };
    assert_eq!(r.reason, Reason::DimensionsTooLarge);
    assert!(r.message.contains("100000x100000"), "{}", r.message);
}

#[test]
fn a_jpeg_larger_than_its_dictionary_says_is_refused() {
    within(
        HOSTILE,
        "a_jpeg_larger_than_its_dictionary_says_is_refused",
        a_jpeg_larger_than_its_dictionary_says_is_refused_body,
    )
}

fn a_jpeg_larger_than_its_dictionary_says_is_refused_body() {
    // The dictionary says 10x10; the JPEG's frame header says 60000x60000: an 8x8 JPEG, tables
    // and scan whole (what the decoder reads), its frame header patched.
    let mut jpeg = Vec::new();
    jpeg_encoder::Encoder::new(&mut jpeg, 90).encode(&[0; 192], 8, 8, jpeg_encoder::ColorType::Rgb).unwrap();
    let sof = jpeg.windows(2).position(|m| m == [0xff, 0xc0]).unwrap();
    jpeg[sof + 5..sof + 9].copy_from_slice(&[0xea, 0x60, 0xea, 0x60]);
    let bytes = image_page(
        "0 0 200 100",
        b"q 200 0 0 100 0 0 cm /Im1 Do Q",
        "/Width 10 /Height 10 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode",
        &jpeg,
    );
    let Err(PageError::Refused(r)) = render_page(&bytes, 1, 2000) else { panic!() };
    assert_eq!(r.reason, Reason::DimensionsTooLarge);
    assert!(r.message.contains("60000x60000"), "{}", r.message);
}

#[test]
fn a_content_stream_that_is_a_zlib_bomb_is_refused() {
    within(
        HOSTILE,
        "a_content_stream_that_is_a_zlib_bomb_is_refused",
        a_content_stream_that_is_a_zlib_bomb_is_refused_body,
    )
}

fn a_content_stream_that_is_a_zlib_bomb_is_refused_body() {
    // 300 MB of spaces (valid content, nothing drawn) in ~300 KB.
    let bomb = zlib(&vec![b' '; 300_000_000]);
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R >>".to_vec(),
        stream("/Filter /FlateDecode", &bomb),
    ];
    let Err(PageError::Refused(r)) = render_page(&pdf(&objects), 1, 2000) else { panic!() };
    assert_eq!(r.reason, Reason::DimensionsTooLarge);
    assert!(r.message.contains("decompression bomb"), "{}", r.message);
}

#[test]
fn many_streams_that_together_decode_past_the_file_cap_are_refused() {
    within(
        HOSTILE,
        "many_streams_that_together_decode_past_the_file_cap_are_refused",
        many_streams_that_together_decode_past_the_file_cap_are_refused_body,
    )
}

fn many_streams_that_together_decode_past_the_file_cap_are_refused_body() {
    // Each under the per-stream cap, nine together past the file's.
    let part = zlib(&vec![b' '; 60_000_000]);
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents [4 0 R 5 0 R 6 0 R 7 0 R 8 0 R 9 0 R 10 0 R 11 0 R 12 0 R] >>".to_vec(),
    ];
    for _ in 0..9 {
        objects.push(stream("/Filter /FlateDecode", &part));
    }
    let Err(PageError::Refused(r)) = render_page(&pdf(&objects), 1, 2000) else { panic!() };
    assert_eq!(r.limit, Some(FILE_DECODED_MAX));
}

fn counted(stage: impl Fn(&mut Sink), cap: u64) -> u64 {
    let mut out = Sink { kept: None, len: 0, cap };
    stage(&mut out);
    out.len
}

#[test]
fn filter_stages_are_counted_within_the_cap() {
    within(HOSTILE, "filter_stages_are_counted_within_the_cap", filter_stages_are_counted_within_the_cap_body)
}

fn filter_stages_are_counted_within_the_cap_body() {
    assert_eq!(counted(|o| run_length(&[129, b'a', 2, b'x', b'y', b'z', 128, 0, 0], o), u64::MAX), 128 + 3);
    let bomb: Vec<u8> = [129u8, 0].repeat(2_000_000);
    assert_eq!(counted(|o| run_length(&bomb, o), u64::MAX), 256_000_000);
    assert_eq!(counted(|o| inflate(&zlib(&[1; 100_000]), o), u64::MAX), 100_000);
    assert_eq!(counted(|o| inflate(&zlib(&[1; 100_000]), o), 5000), 5000);
    let mut hex = Sink { kept: Some(Vec::new()), len: 0, cap: 100 };
    ascii_hex(b"48 65 6c6C6\n f>junk", &mut hex);
    assert_eq!(hex.kept.unwrap(), b"Hello");
    let mut a85 = Sink { kept: Some(Vec::new()), len: 0, cap: 100 };
    ascii85(b"87cURD]i,\"Ebo80z~>", &mut a85);
    assert_eq!(a85.kept.unwrap(), b"Hello World!\0\0\0\0");
}

#[test]
fn a_cyclic_page_tree_and_a_lying_count_end() {
    within(HOSTILE, "a_cyclic_page_tree_and_a_lying_count_end", a_cyclic_page_tree_and_a_lying_count_end_body)
}

fn a_cyclic_page_tree_and_a_lying_count_end_body() {
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [2 0 R 5 0 R 3 0 R] /Count 1000000 /Parent 5 0 R >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R >>".to_vec(),
        stream("", SMALL_BOX),
        b"<< /Type /Pages /Kids [2 0 R 5 0 R] /Count 7 /Parent 2 0 R >>".to_vec(),
    ];
    let bytes = pdf(&objects);
    assert_eq!(page_count(&bytes), Ok(1));
    assert!(render_page(&bytes, 1, 2000).is_ok());
    assert_eq!(render_page(&bytes, 2, 2000).unwrap_err(), PageError::NoSuchPage { requested: 2, count: 1 });
}

#[test]
fn an_object_stream_that_points_at_itself_ends() {
    within(HOSTILE, "an_object_stream_that_points_at_itself_ends", an_object_stream_that_points_at_itself_ends_body)
}

fn an_object_stream_that_points_at_itself_ends_body() {
    // Object 5 is an object stream whose only entry claims to be object 5 again, and the xref
    // stream says objects 1-3 live inside it.
    let inner = b"5 0 << /Type /ObjStm /N 1 /First 4 >>";
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R >>".to_vec(),
        stream("", RED_BOX),
        stream("/Type /ObjStm /N 1 /First 4 /Extends 5 0 R", inner),
    ];
    let bytes = pdf(&objects);
    // Whatever hayro makes of it, it is an answer.
    let _ = render_page(&bytes, 1, 2000);
}

#[test]
fn deeply_nested_arrays_and_dictionaries_do_not_overflow_the_stack() {
    within(
        HOSTILE,
        "deeply_nested_arrays_and_dictionaries_do_not_overflow_the_stack",
        deeply_nested_arrays_and_dictionaries_do_not_overflow_the_stack_body,
    )
}

fn deeply_nested_arrays_and_dictionaries_do_not_overflow_the_stack_body() {
    let mut content = b"0 g ".to_vec();
    content.extend(std::iter::repeat_n(b'[', 200_000));
    content.extend_from_slice(b" 0 d ");
    let mut deep = b"<< /Type /Catalog /Pages 2 0 R /X ".to_vec();
    deep.extend(std::iter::repeat_n(b"<< /A ".as_slice(), 50_000).flatten());
    let objects = vec![
        deep,
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R >>".to_vec(),
        stream("", &content),
    ];
    let _ = render_page(&pdf(&objects), 1, 2000);
}

#[test]
fn truncated_and_mutated_pdfs_never_panic() {
    within(HOSTILE, "truncated_and_mutated_pdfs_never_panic", truncated_and_mutated_pdfs_never_panic_body)
}

fn truncated_and_mutated_pdfs_never_panic_body() {
    let good = doc(&[(A4, TEXT, HELVETICA), ("0 0 400 400", RED_BOX, "")]);
    for cut in (0..good.len()).step_by(7) {
        let _ = render_page(&good[..cut], 1, 300);
    }
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..300 {
        let mut m = good.clone();
        for _ in 0..4 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let i = (state % m.len() as u64) as usize;
            m[i] = (state >> 32) as u8;
        }
        let _ = render_page(&m, 1, 300);
        let _ = render_page(&m, 2, 300);
    }
}

#[test]
fn a_page_content_stream_is_held_to_the_smaller_cap_and_an_image_to_the_image_cap() {
    // The fuzzers' find: zeros in Flate inside Flate, under the image cap, as a page's content.
    let zeros = zlib(&zlib(&vec![0; 100_000_000]));
    let page = |contents: &[u8]| {
        pdf(&[
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>".to_vec(),
            stream("/Filter [/FlateDecode /FlateDecode]", contents),
        ])
    };
    let Err(PageError::Refused(r)) = render_page(&page(&zeros), 1, 2000) else { panic!("rendered") };
    assert_eq!(r.limit, Some(OTHER_STREAM_DECODED_MAX), "{}", r.message);
    let text = zlib(&zlib(TEXT));
    assert!(render_page(&page(&text), 1, 2000).is_ok(), "an ordinary page");
    // An image's samples may decode past it: 3000x3000 RGB is 27 MB, and 9000x3000 81 MB.
    let samples = zlib(&vec![200u8; 9000 * 3000 * 3]);
    let image = stream(
        "/Type /XObject /Subtype /Image /Width 9000 /Height 3000 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode",
        &samples,
    );
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 900 300] /Contents 4 0 R /Resources << /XObject << /Im 5 0 R >> >> >>".to_vec(),
        stream("", b"q 900 0 0 300 0 0 cm /Im Do Q"),
        image,
    ];
    assert!(render_page(&pdf(&objects), 1, 2000).is_ok(), "an image past the smaller cap");
}

#[test]
fn a_small_page_is_drawn_finer_within_the_pixels_of_a_page_at_the_whole_fit() {
    // 4 times over while that is within max_side², then 2, then not at all.
    assert_eq!(supersampling(19, 14, 2000), 4);
    assert_eq!(supersampling(500, 500, 2000), 4);
    assert_eq!(supersampling(501, 500, 2000), 2);
    assert_eq!(supersampling(1000, 1000, 2000), 2);
    assert_eq!(supersampling(1001, 1000, 2000), 1);
    assert_eq!(supersampling(2000, 1414, 2000), 1);
    // A sliver: the product bounds the work, and each side must still fit hayro's u16 canvas.
    assert_eq!(supersampling(2000, 3, 2000), 4);
    assert_eq!(supersampling(u16::MAX, 1, u32::from(u16::MAX)), 1);
}

#[test]
fn the_work_walk_counts_the_images_a_page_draws() {
    // Only a page that draws an image is drawn finer: the walk before rendering counts them.
    let xobject = image_page(
        "0 0 3 1",
        b"q 3 0 0 1 0 0 cm /Im1 Do Q /Im1 Do",
        "/Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8",
        &[0],
    );
    let inline = doc(&[("0 0 10 10", b"q 10 0 0 10 0 0 cm BI /W 1 /H 1 /CS /G /BPC 8 ID \x00 EI Q", "")]);
    let paths_and_text = doc(&[(A4, &[RED_BOX, TEXT].join(&b' '), HELVETICA)]);
    for (bytes, images) in [(xobject, 2), (inline, 1), (paths_and_text, 0)] {
        let pdf = open(&bytes).unwrap();
        let work = check_page_work(&pdf.pages()[0], 1, bytes.len() as u64).unwrap();
        assert_eq!(work.images, images);
    }
}

#[test]
fn a_box_reduced_drawing_is_the_mean_of_each_block() {
    // 4x2 RGBA reduced by 2: two pixels, each the rounded mean of its 2x2 block.
    let drawing: Vec<u8> = [
        [0, 10, 20, 255],
        [4, 10, 20, 255],
        [100, 0, 0, 255],
        [200, 0, 0, 255],
        [0, 10, 21, 255],
        [4, 10, 20, 255],
        [100, 0, 0, 255],
        [201, 0, 0, 255],
    ]
    .concat();
    assert_eq!(box_reduced(&drawing, 4, 2), vec![2, 10, 20, 255, 150, 0, 0, 255]);
}

#[test]
fn an_image_drawn_a_few_times_up_has_its_pixel_edges_where_the_page_puts_them() {
    // A 3x1 grey image (black, white, black) on a 3x1 pt page: at 200 dpi each image pixel is
    // 2.78 px wide, so the page's third pixel column is 0.78 black and 0.22 white. Drawn at its
    // size, hayro's nearest-pixel sampling made it all black.
    let bytes = image_page(
        "0 0 3 1",
        b"q 3 0 0 1 0 0 cm /Im1 Do Q",
        "/Width 3 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8",
        &[0, 255, 0],
    );
    let (img, note) = render_page(&bytes, 1, 2000).unwrap();
    assert_eq!(note, "page 1 of 1 at 200 dpi, 8x3");
    let grey = |x: u32| img.get_pixel(x, 1).0[0];
    assert_eq!((grey(0), grey(1)), (0, 0));
    assert!((40..=80).contains(&grey(2)), "0.78 black, 0.22 white: {}", grey(2));
    assert_eq!((grey(3), grey(4)), (255, 255));
    // Drawn 4 times over, coverage is counted in quarters: 0.56 white shows as a half.
    assert!((100..=160).contains(&grey(5)), "0.56 white, 0.44 black: {}", grey(5));
    assert_eq!((grey(6), grey(7)), (0, 0));
}
