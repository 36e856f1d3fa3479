//! The converters bounded before they recurse, allocate or loop: nesting the guest's stack cannot
//! take, image headers that contradict their PDF dictionary, filter chains, operator counts and
//! form fan-out, long text runs and long outlines. Each bomb is generated here and goes through
//! the real `convert` component (the guest's own stack, not the test thread's): the verdict is an
//! admission or a refusal in words, never a trap, an out-of-memory or the deadline.

use crate::common::*;
use serde_json::Value;

/// `mediagate admit --json ARGS FILE` on `bytes`: the exit code and the JSON verdict. A trap, an
/// out-of-memory or a deadline is exit 2 with an error object: the test fails on it.
fn verdict(bytes: &[u8], name: &str, args: &[&str]) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    std::fs::write(&file, bytes).unwrap();
    let out = mediagate_command().arg("admit").arg("--json").args(args).arg(&file).output().unwrap();
    let code = out.status.code().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{name}: no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    assert!(code == 0 || code == 1, "{name}: not a verdict (exit {code}): {v}");
    (code, v)
}

fn admitted(bytes: &[u8], name: &str, args: &[&str]) {
    let (code, v) = verdict(bytes, name, args);
    assert_eq!(code, 0, "{name}: {v}");
}

fn refused_saying(bytes: &[u8], name: &str, args: &[&str], words: &str) {
    let (code, v) = verdict(bytes, name, args);
    assert_eq!(code, 1, "{name}: {v}");
    let message = v["message"].as_str().unwrap_or_default();
    assert!(message.contains(words), "{name}: {message}");
}

fn svg(body: &str) -> Vec<u8> {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="100">{body}</svg>"#
    )
    .into_bytes()
}

const RECT: &str = r#"<rect width="1" height="1" fill="red"/>"#;

fn nested(open: &str, close: &str, levels: usize, defs: &str) -> Vec<u8> {
    svg(&format!("{defs}{}{RECT}{}", open.repeat(levels), close.repeat(levels)))
}

fn pattern_chain(levels: usize) -> Vec<u8> {
    let mut body = String::from(
        r#"<pattern id="p0" width="10" height="10" patternUnits="userSpaceOnUse"><rect width="5" height="5" fill="red"/></pattern>"#,
    );
    for i in 1..levels {
        body += &format!(
            r#"<pattern id="p{i}" width="10" height="10" patternUnits="userSpaceOnUse"><rect width="10" height="10" fill="url(#p{})"/></pattern>"#,
            i - 1
        );
    }
    body += &format!(r#"<rect width="100" height="100" fill="url(#p{})"/>"#, levels - 1);
    svg(&body)
}

fn mask_chain(levels: usize) -> Vec<u8> {
    let mut body = String::from(r#"<mask id="m0"><rect width="1" height="1" fill="white"/></mask>"#);
    for i in 1..levels {
        body += &format!(r#"<mask id="m{i}"><rect width="1" height="1" fill="white" mask="url(#m{})"/></mask>"#, i - 1);
    }
    body += &format!(r#"<rect width="1" height="1" fill="red" mask="url(#m{})"/>"#, levels - 1);
    svg(&body)
}

fn clip_chain(levels: usize) -> Vec<u8> {
    let mut body = String::from(r#"<clipPath id="c0"><rect width="1" height="1"/></clipPath>"#);
    for i in 1..levels {
        body += &format!(r#"<clipPath id="c{i}" clip-path="url(#c{})"><rect width="1" height="1"/></clipPath>"#, i - 1);
    }
    body += &format!(r#"<rect width="1" height="1" fill="red" clip-path="url(#c{})"/>"#, levels - 1);
    svg(&body)
}

const NEST: &str = "nest";

#[test]
fn svg_nesting_deeper_than_the_guest_stack_takes_is_refused_in_words() {
    let filter = r#"<filter id="f"><feOffset dx="1"/></filter>"#;
    // At the limit (the root, 198 groups and the rectangle: 200 deep) drawn; one more refused.
    admitted(&nested("<g>", "</g>", 198, ""), "g-198.svg", &["--convert"]);
    refused_saying(&nested("<g>", "</g>", 199, ""), "g-199.svg", &["--convert"], NEST);
    admitted(&nested(r#"<g opacity="0.9">"#, "</g>", 198, ""), "opacity-198.svg", &["--convert"]);
    admitted(&nested(r#"<g filter="url(#f)">"#, "</g>", 197, filter), "filter-197.svg", &["--convert"]);
    // What trapped the guest's stack before (out of bounds memory access): every depth from 350
    // groups up to roxmltree's 1024, 400 with opacity or a filter, 400 masks, 5,000 clip paths,
    // 200 nested patterns.
    for levels in [350, 700, 1023] {
        refused_saying(&nested("<g>", "</g>", levels, ""), &format!("g-{levels}.svg"), &["--convert"], NEST);
    }
    refused_saying(&nested(r#"<g opacity="0.9">"#, "</g>", 400, ""), "opacity-400.svg", &["--convert"], NEST);
    refused_saying(&nested(r#"<g filter="url(#f)">"#, "</g>", 400, filter), "filter-400.svg", &["--convert"], NEST);
    refused_saying(&mask_chain(400), "masks-400.svg", &["--convert"], NEST);
    refused_saying(&clip_chain(5_000), "clips-5000.svg", &["--convert"], NEST);
    refused_saying(&pattern_chain(200), "patterns-200.svg", &["--convert"], NEST);
    // Chains at the limit: a pattern level is two elements (the pattern and what it fills), the
    // root and the filled rectangle one each.
    admitted(&pattern_chain(99), "patterns-99.svg", &["--convert"]);
    refused_saying(&pattern_chain(100), "patterns-100.svg", &["--convert"], NEST);
    admitted(&mask_chain(99), "masks-99.svg", &["--convert"]);
    admitted(&clip_chain(197), "clips-197.svg", &["--convert"]);
    refused_saying(&clip_chain(198), "clips-198.svg", &["--convert"], NEST);
}

#[test]
fn svg_text_runs_and_outlines_over_the_time_budget_are_refused_in_words() {
    // 190,000 glyphs in one run (190 KB): refused; the same in runs of 200 characters: drawn.
    let run = svg(&format!(r#"<text x="0" y="50" font-size="5">{}</text>"#, "x".repeat(190_000)));
    refused_saying(&run, "glyphs-one-run.svg", &["--convert"], "text runs unbroken");
    let lines: String =
        (0..950).map(|i| format!(r#"<text x="0" y="{}" font-size="5">{}</text>"#, i % 100, "x".repeat(200))).collect();
    admitted(&svg(&lines), "glyphs-in-lines.svg", &["--convert"]);
    // A textPath of 100,000 characters.
    let text_path = svg(&format!(
        r##"<path id="p" d="M0 50 {}"/><text font-size="5"><textPath href="#p">{}</textPath></text>"##,
        "c10 10 20 10 30 0 ".repeat(30),
        "x".repeat(100_000)
    ));
    refused_saying(&text_path, "text-path.svg", &["--convert"], "text runs unbroken");
    // 350,000 stroked curve segments; 20,000 stroked curves across the canvas.
    let loops = svg(&format!(r#"<path d="M50 50{}" fill="none" stroke="black"/>"#, " c1 1 2 2 0 0".repeat(350_000)));
    refused_saying(&loops, "curves.svg", &["--convert"], "outline work");
    let big = svg(&format!(
        r#"<path d="M0 0{}" fill="none" stroke="black"/>"#,
        " C100 0 0 100 100 100 C0 100 100 0 0 0".repeat(10_000)
    ));
    refused_saying(&big, "big-curves.svg", &["--convert"], "outline work");
}

/// A PDF from its objects' bodies (object `i + 1` is `objects[i]`), catalog = object 1, pages = 2.
fn pdf(objects: &[Vec<u8>]) -> Vec<u8> {
    test_images::pdf_of_objects(objects, "")
}

fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    test_images::pdf_stream(dict, data)
}

/// One A4 page drawing `content` with `resources`; `more` objects follow (from object 5).
fn page(content: &[u8], resources: &str, more: Vec<Vec<u8>>) -> Vec<u8> {
    page_with_filter("", content, resources, more)
}

fn page_with_filter(filter: &str, content: &[u8], resources: &str, more: Vec<Vec<u8>>) -> Vec<u8> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources {resources} /Contents 4 0 R >>")
            .into_bytes(),
        stream(filter, content),
    ];
    objects.extend(more);
    pdf(&objects)
}

fn zlib(data: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

const PAGE: &[&str] = &["--page", "1"];

#[test]
fn a_jbig2_image_larger_than_its_dictionary_says_is_refused_in_words() {
    // Embedded JBIG2: a page-information segment (type 48) that declares 65535x65535, inside an
    // image dictionary that says 10x10.
    let mut jbig2 = vec![0, 0, 0, 0, 48, 0, 1, 0, 0, 0, 19];
    jbig2.extend_from_slice(&65_535u32.to_be_bytes());
    jbig2.extend_from_slice(&65_535u32.to_be_bytes());
    jbig2.extend_from_slice(&[0; 11]);
    let image = stream(
        "/Type /XObject /Subtype /Image /Width 10 /Height 10 /BitsPerComponent 1 /ColorSpace /DeviceGray /Filter /JBIG2Decode",
        &jbig2,
    );
    let bytes = page(b"q 100 0 0 100 0 0 cm /Im0 Do Q", "<< /XObject << /Im0 5 0 R >> >>", vec![image]);
    refused_saying(&bytes, "jbig2.pdf", PAGE, "65535x65535");
}

#[test]
fn pdf_decompression_bombs_are_refused_before_hayro_decodes() {
    // Each the page's content stream. Flate inside Flate: 300 MB of zeros, twice compressed (1 KB).
    let zeros = vec![0u8; 300 * 1024 * 1024];
    let inner = zlib(&zeros);
    drop(zeros);
    let twice = zlib(&inner);
    let bytes = page_with_filter("/Filter [/FlateDecode /FlateDecode]", &twice, "<< >>", vec![]);
    refused_saying(&bytes, "flate-flate.pdf", PAGE, "decodes to more than");
    // ASCIIHex, then Flate.
    let hex: String = inner.iter().map(|b| format!("{b:02x}")).collect::<String>() + ">";
    let bytes = page_with_filter("/Filter [/ASCIIHexDecode /FlateDecode]", hex.as_bytes(), "<< >>", vec![]);
    refused_saying(&bytes, "hex-flate.pdf", PAGE, "decodes to more than");
    // LZW: 250 MB of zeros.
    let mut lzw = Vec::new();
    let zeros = vec![0u8; 250 * 1024 * 1024];
    let mut encoder = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
    encoder.into_vec(&mut lzw).encode_all(&zeros[..]).status.unwrap();
    drop(zeros);
    let bytes = page_with_filter("/Filter /LZWDecode", &lzw, "<< >>", vec![]);
    refused_saying(&bytes, "lzw.pdf", PAGE, "decodes to more than");
    // An inline image of 7000x7000.
    // An inline RGB image of 7000x7000 (49 MP, under the pixel cap; 147 MB of samples in 143 KB,
    // hex-encoded): it ran out of memory.
    let samples: String = zlib(&vec![0u8; 7000 * 7000 * 3]).iter().map(|b| format!("{b:02x}")).collect();
    let content = format!("q 100 0 0 100 0 0 cm BI /W 7000 /H 7000 /BPC 8 /CS /RGB /F [/AHx /Fl] ID {samples}> EI Q");
    refused_saying(&page(content.as_bytes(), "<< >>", vec![]), "inline.pdf", PAGE, "7000x7000");
    // A content stream of 10^6 operators... and of 12,000 long strokes.
    let many = b"0 0 m ".repeat(1_000_001);
    let bytes = page_with_filter("/Filter /FlateDecode", &zlib(&many), "<< >>", vec![]);
    refused_saying(&bytes, "operators.pdf", PAGE, "operators");
    let strokes = b"10 10 m 500 800 l S\n".repeat(12_000);
    refused_saying(&page(&strokes, "<< >>", vec![]), "strokes.pdf", PAGE, "painting operators");
}

/// Forms that each draw the next `fan` times, `levels` deep; the last fills a rectangle.
fn form_fan_out(levels: usize, fan: usize) -> Vec<u8> {
    let mut forms = Vec::new();
    for i in 0..levels {
        let (body, resources) = if i + 1 == levels {
            (b"0 0 10 10 re f".to_vec(), "<< >>".to_string())
        } else {
            (b"/X Do ".repeat(fan), format!("<< /XObject << /X {} 0 R >> >>", 6 + i))
        };
        forms.push(stream(&format!("/Type /XObject /Subtype /Form /BBox [0 0 595 842] /Resources {resources}"), &body));
    }
    page(b"/X0 Do", "<< /XObject << /X0 5 0 R >> >>", forms)
}

#[test]
fn pdf_form_fan_out_is_counted_before_rendering() {
    // x10 over 12 levels: 10^11 form draws from 5.5 KB.
    let bomb = form_fan_out(12, 10);
    assert!(bomb.len() < 6_000, "{}", bomb.len());
    refused_saying(&bomb, "fan-out.pdf", PAGE, "too costly to render");
    // A form that draws itself.
    let cycle = page(
        b"/X0 Do",
        "<< /XObject << /X0 5 0 R >> >>",
        vec![stream(
            "/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << /XObject << /X0 5 0 R >> >>",
            b"/X0 Do /X0 Do",
        )],
    );
    // (hayro's object resolution does not hand the form back to itself: a verdict at once.)
    verdict(&cycle, "form-cycle.pdf", PAGE);
    // x10 over 4 levels (1,111 draws): rendered.
    admitted(&form_fan_out(4, 10), "fan-out-4.pdf", PAGE);
}

#[test]
fn no_converter_fixture_in_the_corpus_traps() {
    let mut files: Vec<_> = std::fs::read_dir(corpus().join("convert")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for file in files {
        let name = file.file_name().unwrap().to_str().unwrap().to_string();
        let kind = match file.extension().and_then(|e| e.to_str()) {
            Some("pdf") => PAGE.to_vec(),
            Some("svg" | "bmp" | "tif" | "tiff" | "ico" | "gif" | "heic" | "avif") => vec!["--convert"],
            _ => continue,
        };
        let bytes = std::fs::read(&file).unwrap();
        verdict(&bytes, &name, &kind);
    }
}
