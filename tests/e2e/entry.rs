//! The one entry per input (`Gate::admit`) through the real components: the type it picks when
//! none is claimed is the one a caller would claim, it fills what a caller leaves out with the
//! gate's defaults, and its JSON is the CLI's.

use crate::common::*;
use mediagate::gate::{AdmitOptions, InputError, InputMedia, Payload, Provider, RequestApi, Verdict, Verify};

fn unset() -> AdmitOptions {
    AdmitOptions::UNSET
}

fn input(bytes: Vec<u8>, name: Option<&str>) -> InputMedia {
    InputMedia { bytes, claimed_mime: None, name: name.map(str::to_string), convert: false, page: None }
}

#[tokio::test]
async fn the_type_picked_is_the_one_a_caller_would_claim_on_the_corpus() {
    let gate = gate();
    let mut files = files_in(&corpus().join("pngsuite"), "png");
    files.extend(files_in(&corpus().join("photos"), "png"));
    files.extend(files_in(&corpus().join("pdf"), "pdf"));
    assert!(files.len() > 150);
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let answer = gate.admit(&input(bytes.clone(), path.to_str()), unset()).await.unwrap().answer.unwrap();
        // The entry's rule, spelt out: the bytes' type when the gate admits it, else the name's.
        let admissible = ["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"];
        let by_name = if path.extension().is_some_and(|e| e == "pdf") { "application/pdf" } else { "image/png" };
        let sniffed = answer.sniffed.as_str();
        let claim = if admissible.contains(&sniffed) { sniffed } else { by_name };
        let claimed = gate.admit(&InputMedia::new(bytes.clone(), Some(claim)), unset()).await.unwrap().answer.unwrap();
        assert_eq!(claimed.sniffed, answer.sniffed, "{}", path.display());
        let json: serde_json::Value = serde_json::from_str(&answer.json).unwrap();
        match (&claimed.verdict, &answer.verdict) {
            (Verdict::Admitted(o), Verdict::Admitted(n)) => {
                assert_eq!((o.mime.as_str(), o.base64_len, o.resized), (n.mime.as_str(), n.base64_len, n.resized));
                assert_eq!(o.bytes(&bytes), n.bytes(&bytes), "{}", path.display());
                assert_eq!(json["base64_len"], n.base64_len, "{}", path.display());
                assert_eq!(json["width"].as_u64(), o.dimensions.as_ref().map(|d| u64::from(d.width)));
            }
            (Verdict::Refused(o), Verdict::Refused(n)) => {
                assert_eq!((o.reason.as_str(), &o.message), (n.reason.as_str(), &n.message), "{}", path.display());
                assert_eq!(json["reason"], n.reason.as_str());
            }
            (o, n) => panic!("{}: claimed {claim}: {o:?}, picked: {n:?}", path.display()),
        }
    }
}

#[tokio::test]
async fn options_left_out_are_the_gates_defaults() {
    let gate = gate();
    let d = gate.default_options();
    let named = AdmitOptions {
        downsample: d.downsample,
        provider: Some(Provider::Anthropic),
        verify: Some(Verify::Full),
        keep_metadata: d.keep_metadata,
    };
    assert_eq!(d.provider, Some(Provider::Anthropic));
    let photo = std::fs::read(corpus().join("bench/photo-exif-rotated.jpg")).unwrap();
    let left_out = gate.admit(&input(photo.clone(), None), unset()).await.unwrap().answer.unwrap();
    let spelt = gate.admit(&input(photo, None), named).await.unwrap().answer.unwrap();
    assert_eq!(left_out.json, spelt.json);
    let no_downsample = AdmitOptions { downsample: Some(false), ..unset() };
    let large = std::fs::read(corpus().join("bench/photo-12mp.jpg")).unwrap();
    let fitted = gate.admit(&input(large.clone(), None), unset()).await.unwrap().answer.unwrap();
    assert!(fitted.json.contains(r#""resized":true"#), "{}", fitted.json);
    let kept = gate.admit(&input(large, None), no_downsample).await.unwrap().answer.unwrap();
    assert!(kept.json.contains(r#""resized":false"#) && kept.json.contains(r#""width":4000"#), "{}", kept.json);
}

#[tokio::test]
async fn a_requests_profile_defaults_to_its_api() {
    let gate = gate();
    let request = r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
    let left_out = gate.admit_request(RequestApi::Openai, request, false, unset()).await.unwrap().answer;
    let openai = AdmitOptions { provider: Some(Provider::Openai), ..unset() };
    let spelt = gate.admit_request(RequestApi::Openai, request, false, openai).await.unwrap().answer;
    assert_eq!(left_out.json, spelt.json);
    assert!(left_out.json.starts_with(r#"{"api":"openai","request":{"model":"m""#), "{}", left_out.json);
}

#[tokio::test]
async fn the_name_is_the_hint_and_a_page_needs_a_pdf() {
    // A gate of its own: the shared one may have loaded the converter in another test.
    let gate = mediagate::Gate::new(runtime()).unwrap();
    let svg = std::fs::read(fixture("icon-svg.png")).unwrap();
    let plain = gate.admit(&input(svg.clone(), Some("icon.png")), unset()).await.unwrap().answer.unwrap();
    assert_eq!(plain.convertible.as_deref(), Some("image/svg+xml"), "{}", plain.json);
    assert!(plain.json.contains(r#""reason":"magic_mismatch""#), "{}", plain.json);
    assert!(!gate.converter_loaded(), "a call that does not convert never loads the convert component");
    let converting = InputMedia { convert: true, ..input(svg.clone(), Some("icon.png")) };
    let converted = gate.admit(&converting, unset()).await.unwrap().answer.unwrap();
    assert_eq!(converted.conversion.as_ref().map(|c| c.from.as_str()), Some("image/svg+xml"), "{}", converted.json);
    let page = InputMedia { page: Some(1), ..input(svg, Some("icon.png")) };
    assert_eq!(gate.admit(&page, unset()).await.unwrap().answer, Err(InputError::PageOfNonPdf("image/svg+xml".into())));
    let pdf = std::fs::read(corpus().join("pdf").read_dir().unwrap().next().unwrap().unwrap().path()).unwrap();
    let missing = InputMedia { page: Some(9999), ..input(pdf, None) };
    let answer = gate.admit(&missing, unset()).await.unwrap().answer.unwrap();
    let Verdict::Refused(r) = &answer.verdict else { panic!("{}", answer.json) };
    assert_eq!(r.reason.as_str(), "no_such_page");
    assert_eq!(r.pages.as_ref().map(|p| p.requested), Some(9999));
    assert!(answer.json.contains(r#""reason":"no_such_page","requested":9999"#), "{}", answer.json);
}

/// Contract 0.3.0's workspace entry (`agent-tool`'s `workspace-admission.admit-file`) reads the
/// file through the preopen and calls the same entry with its path for a name: the answer is
/// `Gate::admit`'s for the file's bytes and name, JSON for JSON. Its payload is the admitted bytes
/// (the caller has none of its own), or, asked so, the JSON's `data` carries them as base64.
#[tokio::test]
async fn the_workspace_entry_is_the_entry_on_the_files_bytes_and_name() {
    use base64::Engine as _;
    use mediagate::tool::{AdmittedData, FileErrorCode, WorkspaceFile};
    let gate = gate();
    let tool = mediagate::ReadImageTool::new(runtime(), None).unwrap();
    let ws = tempfile::tempdir().unwrap();
    let photo = std::fs::read(corpus().join("bench/photo-exif-rotated.jpg")).unwrap();
    let large = std::fs::read(corpus().join("bench/photo-12mp.jpg")).unwrap();
    let pdf = std::fs::read(corpus().join("pdf/gs-pdfwrite.pdf")).unwrap();
    let png = std::fs::read(corpus().join("pngsuite").read_dir().unwrap().next().unwrap().unwrap().path()).unwrap();
    let files: [(&str, &[u8]); 6] = [
        // A JPEG named .png is the JPEG it is, as `mediagate admit` judges it.
        ("photo.png", &photo),
        ("large.jpg", &large),
        ("report.pdf", &pdf),
        ("icon.png", &std::fs::read(fixture("icon-svg.png")).unwrap()),
        ("notes.txt", b"not an image"),
        ("plain.png", &png),
    ];
    for (name, bytes) in &files {
        std::fs::write(ws.path().join(name), bytes).unwrap();
    }
    for (name, bytes) in &files {
        for (convert, page) in [(false, None), (true, None), (true, Some(1))] {
            let direct = InputMedia { convert, page, ..input(bytes.to_vec(), Some(*name)) };
            let expected = gate.admit(&direct, unset()).await.unwrap().answer;
            for data in [AdmittedData::Payload, AdmittedData::JsonBase64] {
                let file = WorkspaceFile { path: name.to_string(), claimed_mime: None, convert, page, data };
                let got = tool.admit_workspace_file(ws.path(), &file, unset()).await.unwrap().answer;
                let what = format!("{name} convert={convert} page={page:?} {data:?}");
                let expected = match &expected {
                    Ok(answer) => answer,
                    Err(InputError::PageOfNonPdf(_)) => {
                        let e = got.expect_err(&what);
                        assert_eq!(e.code, FileErrorCode::PageOfNonPdf, "{what}");
                        assert!(e.message.starts_with("error: a page applies to PDFs"), "{what}: {}", e.message);
                        continue;
                    }
                };
                let got = got.unwrap_or_else(|e| panic!("{what}: {e:?}"));
                assert_eq!(
                    (&got.sniffed, &got.convertible, &got.conversion),
                    (&expected.sniffed, &expected.convertible, &expected.conversion),
                    "{what}"
                );
                let mut json: serde_json::Value = serde_json::from_str(&got.json).unwrap();
                let shown = json.as_object_mut().unwrap().remove("data");
                assert_eq!(json, serde_json::from_str::<serde_json::Value>(&expected.json).unwrap(), "{what}");
                match (&got.verdict, &expected.verdict) {
                    (Verdict::Admitted(g), Verdict::Admitted(e)) => {
                        let admitted = e.bytes(bytes);
                        match data {
                            AdmittedData::Payload => {
                                assert_eq!(g.payload, Payload::Bytes(admitted.to_vec()), "{what}");
                                assert!(shown.is_none(), "{what}");
                            }
                            AdmittedData::JsonBase64 => {
                                assert_eq!(g.payload, Payload::Unchanged, "{what}");
                                let shown = shown.unwrap_or_else(|| panic!("{what}: no data"));
                                let decoded =
                                    base64::engine::general_purpose::STANDARD.decode(shown.as_str().unwrap()).unwrap();
                                assert_eq!(decoded, admitted, "{what}");
                            }
                        }
                        assert_eq!(g.base64_len, e.base64_len, "{what}");
                    }
                    (Verdict::Refused(g), Verdict::Refused(e)) => {
                        assert_eq!(g, e, "{what}");
                        assert!(shown.is_none(), "{what}");
                    }
                    (g, e) => panic!("{what}: workspace {g:?}, entry {e:?}"),
                }
            }
        }
    }
    let missing = WorkspaceFile {
        path: "missing.png".into(),
        claimed_mime: None,
        convert: false,
        page: None,
        data: AdmittedData::Payload,
    };
    let e = tool.admit_workspace_file(ws.path(), &missing, unset()).await.unwrap().answer.unwrap_err();
    assert_eq!(e.code, FileErrorCode::NotFound, "{}", e.message);
    let outside = WorkspaceFile { path: "../x.png".into(), ..missing };
    let e = tool.admit_workspace_file(ws.path(), &outside, unset()).await.unwrap().answer.unwrap_err();
    assert_eq!(e.code, FileErrorCode::OutsideWorkspace, "{}", e.message);
}
