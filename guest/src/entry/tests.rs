use super::*;
use crate::test_images;

fn input(bytes: &[u8]) -> Input<'_> {
    Input { bytes, claimed_mime: None, name: None, convert: false, page: None }
}

fn json(entry: &Entry, bytes: &[u8]) -> serde_json::Value {
    entry.json_value(bytes.len() as u64)
}

const SVG: &[u8] = br#"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><rect width="40" height="30" fill="red"/></svg>"#;

#[test]
fn the_bytes_type_wins_over_the_name_when_the_gate_admits_it() {
    let png = test_images::png(20, 10);
    let e = admit(Input { name: Some("photo.jpg"), ..input(&png) }, &Options::default()).unwrap();
    let v = json(&e, &png);
    assert_eq!(v["ok"], true);
    assert_eq!(v["mime"], "image/png");
    assert_eq!((v["width"].as_u64(), v["height"].as_u64()), (Some(20), Some(10)));
    assert_eq!(e.sniffed, "image/png");
    assert_eq!(e.convertible, None);
}

#[test]
fn a_pdf_is_the_document_it_is_whatever_its_name() {
    let pdf = test_images::pdf(0);
    let e = admit(Input { name: Some("report.png"), ..input(&pdf) }, &Options::default()).unwrap();
    assert_eq!(json(&e, &pdf)["kind"], "document");
}

#[test]
fn an_svg_named_png_is_refused_with_the_hint_unless_converting() {
    let e = admit(Input { name: Some("logo.png"), ..input(SVG) }, &Options::default()).unwrap();
    let v = json(&e, SVG);
    assert_eq!(v["ok"], false);
    assert_eq!(v["reason"], "magic_mismatch");
    assert_eq!(e.convertible, Some("image/svg+xml"));
    // Converting, the bytes' type is claimed: the preflight build refuses naming the component
    // that converts, a converting build converts.
    let e = admit(Input { name: Some("logo.png"), convert: true, ..input(SVG) }, &Options::default()).unwrap();
    assert_eq!(e.convertible, None);
    let v = json(&e, SVG);
    if convert::AVAILABLE {
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["converted"]["from"], "image/svg+xml");
        assert_eq!(v["converted"]["to"], v["mime"]);
    } else {
        assert_eq!(v["reason"], "mime_unsupported", "{v}");
    }
}

#[test]
fn a_claimed_type_is_checked_not_replaced() {
    let png = test_images::png(8, 8);
    let e = admit(Input { claimed_mime: Some("image/jpeg"), ..input(&png) }, &Options::default()).unwrap();
    assert_eq!(json(&e, &png)["reason"], "magic_mismatch");
    assert_eq!(e.convertible, None, "PNG bytes are admissible as they are: no conversion hint");
}

#[test]
fn unnamed_unknown_bytes_are_judged_as_octet_stream() {
    let bytes = b"\x00\x01\x02 not an image";
    let e = admit(input(bytes), &Options::default()).unwrap();
    let v = json(&e, bytes);
    assert_eq!(v["ok"], false);
    assert_eq!(v["reason"], "mime_unsupported");
    assert_eq!(v["raw_bytes"], bytes.len() as u64);
}

#[test]
fn a_page_of_a_non_pdf_is_an_input_error() {
    let png = test_images::png(4, 4);
    let e = admit(Input { page: Some(1), ..input(&png) }, &Options::default());
    assert_eq!(e, Err(InputError::PageOfNonPdf("image/png".into())));
}

#[test]
fn a_missing_page_is_refused_with_its_count() {
    let pdf = test_images::pdf(0);
    let e = admit(Input { page: Some(9), ..input(&pdf) }, &Options::default()).unwrap();
    let v = json(&e, &pdf);
    assert_eq!(v["ok"], false);
    assert_eq!(v["raw_bytes"], pdf.len() as u64);
    if cfg!(feature = "http-gate") {
        // Its component links no page renderer: the dispatch answers before reaching it.
        assert_eq!(v["reason"], "mime_unsupported", "{v}");
        assert!(v["message"].as_str().is_some_and(|m| m.contains("renders no PDF page")), "{v}");
    } else if convert::AVAILABLE {
        assert_eq!(v["reason"], "no_such_page", "{v}");
        assert_eq!(v["requested"], 9);
        assert_eq!(v["count"], 1);
    } else {
        assert_eq!(v["reason"], "mime_unsupported", "{v}");
        assert!(v.get("requested").is_none());
    }
}

#[test]
fn the_json_keys_are_the_clis() {
    let png = test_images::png(3000, 1000);
    let e = admit(input(&png), &Options::default()).unwrap();
    let text = json(&e, &png).to_string();
    // Sorted keys, snake_case: the text the CLI has always printed.
    assert!(
        text.starts_with(r#"{"base64_len":"#)
            && text.contains(r#","height":667,"kind":"image","mime":"image/png","ok":true,"original_size":"#),
        "{text}"
    );
    assert!(text.contains(r#""reencoded":true,"resized":true,"width":2000}"#), "{text}");
}

/// One directory of files, as the `agent-tool` preopen shows it.
struct Files(Vec<(&'static str, Vec<u8>)>);

impl crate::tool::Workspace for Files {
    fn stat(&self, rel: &str) -> Result<(crate::tool::EntryType, u64), crate::tool::FsError> {
        let (_, b) = self.0.iter().find(|(n, _)| *n == rel).ok_or(crate::tool::FsError::NotFound)?;
        Ok((crate::tool::EntryType::File, b.len() as u64))
    }
    fn read(&self, rel: &str, max: u64) -> Result<Vec<u8>, crate::tool::FsError> {
        let (_, b) = self.0.iter().find(|(n, _)| *n == rel).ok_or(crate::tool::FsError::NotFound)?;
        Ok(b[..b.len().min(max as usize)].to_vec())
    }
    fn root(&self) -> &str {
        "/ws"
    }
}

fn file(path: &str) -> FileInput<'_> {
    FileInput { path, claimed_mime: None, convert: false, page: None }
}

#[test]
fn a_workspace_file_is_judged_by_the_same_entry_with_its_path_for_a_name() {
    let jpeg = test_images::jpeg_with_orientation(24, 16, 1);
    let ws = Files(vec![("photo.png", jpeg.clone()), ("logo.png", SVG.to_vec())]);
    // A JPEG named .png is the JPEG it is, as `mediagate admit` judges it.
    let (e, bytes) = admit_file(&ws, file("photo.png"), &Options::default()).unwrap();
    assert_eq!(bytes, jpeg);
    let direct = admit(Input { name: Some("photo.png"), ..input(&jpeg) }, &Options::default()).unwrap();
    assert_eq!(e, direct);
    assert_eq!(json(&e, &bytes)["mime"], "image/jpeg");
    // The path's extension is the name's hint: an SVG named .png is refused for its signature,
    // with the hint that converting takes it.
    let (e, _) = admit_file(&ws, file("logo.png"), &Options::default()).unwrap();
    assert_eq!(json(&e, SVG)["reason"], "magic_mismatch");
    assert_eq!(e.convertible, Some("image/svg+xml"));
}

#[test]
fn a_workspace_file_that_cannot_be_read_or_paged_is_an_error_not_a_verdict() {
    let ws = Files(vec![("a.png", test_images::png(4, 4))]);
    match admit_file(&ws, file("missing.png"), &Options::default()) {
        Err(FileError::Unreadable(e)) => {
            assert_eq!(e.code, crate::tool::ToolErrorCode::NotFound);
            assert!(e.message.starts_with("error: ") && e.message.contains("missing.png"), "{}", e.message);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        admit_file(&ws, file("../outside.png"), &Options::default()),
        Err(FileError::Unreadable(crate::tool::ToolError { code: crate::tool::ToolErrorCode::OutsideWorkspace, .. }))
    ));
    assert_eq!(
        admit_file(&ws, FileInput { page: Some(1), ..file("a.png") }, &Options::default()),
        Err(FileError::Input(InputError::PageOfNonPdf("image/png".into())))
    );
}

#[test]
fn json_with_data_carries_the_admitted_bytes_base64() {
    use base64::Engine as _;
    let b64 = |v: &serde_json::Value| base64::engine::general_purpose::STANDARD.decode(v.as_str().unwrap()).unwrap();
    // Unchanged: the input's own bytes.
    let png = test_images::png(20, 10);
    let e = admit(input(&png), &Options::default()).unwrap();
    let v = e.json_value_with_data(&png);
    assert_eq!(b64(&v["data"]), e.verdict.as_ref().unwrap().bytes(&png));
    assert_eq!(v["base64_len"].as_u64(), Some(v["data"].as_str().unwrap().len() as u64));
    let without = e.json_value(png.len() as u64);
    let mut with = v.clone();
    with.as_object_mut().unwrap().remove("data");
    assert_eq!(with, without, "data is the one key added");
    // Made by the gate (fitted into 2000²): the bytes it made.
    let big = test_images::png(2400, 100);
    let e = admit(input(&big), &Options::default()).unwrap();
    let a = e.verdict.as_ref().unwrap();
    assert!(a.resized);
    assert_eq!(b64(&e.json_value_with_data(&big)["data"]), a.bytes(&big));
    // Refused: no data.
    let e = admit(Input { claimed_mime: Some("image/jpeg"), ..input(&png) }, &Options::default()).unwrap();
    assert!(e.json_value_with_data(&png).get("data").is_none());
}
