//! The conversion contract through the real host and binary: the `convert` component (a fourth world,
//! loaded only by the converting calls), the `--convert` and `--page` flags, and the rule that
//! without them the admission rules are exactly as before.

use std::io::Write as _;
use std::process::Output;

use crate::common::*;
use mediagate::component::{self, World};
use serde_json::{Value, json};

/// What browsers download: the preflight component, gzip -9, stays under this (≤ 1 MB: the converters live in their own component so it does).
const PREFLIGHT_GZIP_MAX: usize = 1_000_000;

fn mediagate(args: &[&str]) -> Output {
    mediagate_command().args(args).output().expect("run mediagate")
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

fn gzip_best(bytes: &[u8]) -> usize {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap().len()
}

/// The interface names a component exports, versions left off.
fn exports_of(wasm: &[u8]) -> Vec<String> {
    let runtime = runtime();
    let (c, _) = runtime.load(wasm).unwrap();
    c.component_type().exports(runtime.engine()).map(|(name, _)| name.split('@').next().unwrap().to_string()).collect()
}

/// `admission.convertible-types` of a component, called on it directly (a `Gate` runs it on the
/// `convert` component whatever it was given).
fn convertible_types_of(wasm: &[u8]) -> Vec<String> {
    let runtime = runtime();
    let (component, _) = runtime.load(wasm).unwrap();
    let pre = wasmtime::component::Linker::new(runtime.engine()).instantiate_pre(&component).unwrap();
    let store = runtime.store(());
    runtime
        .call_blocking(&pre, store, async |store, instance| {
            let admission = instance
                .get_export_index(&mut *store, None, "mediagate:gate/admission@0.3.0")
                .expect("the component exports admission");
            let func = instance
                .get_export_index(&mut *store, Some(&admission), "convertible-types")
                .expect("admission has convertible-types");
            let convertible = instance.get_typed_func::<(), (Vec<String>,)>(&mut *store, &func)?;
            Ok(convertible.call_async(&mut *store, ()).await?.0)
        })
        .unwrap()
        .answer
}

const SVG: &str =
    r#"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="red"/></svg>"#;

fn png_bytes(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| image::Rgb([x as u8, y as u8, (x ^ y) as u8]));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

#[test]
fn the_convert_component_imports_nothing_and_converts_behind_the_same_interface() {
    let imports = crate::gate::imports_of(component::CONVERT);
    assert!(imports.is_empty(), "the convert world declares no import; the component imports {imports:?}");
    assert_eq!(exports_of(component::CONVERT), ["mediagate:gate/admission"]);
    assert!(convertible_types_of(component::CONVERT).contains(&"image/svg+xml".to_string()));
    // The agent-tool component carries the converters too (read_image converts by default): its
    // workspace entry converts as `Gate::admit` does (entry.rs).
}

#[test]
fn the_preflight_component_carries_no_converters_and_stays_small() {
    assert_eq!(exports_of(component::PREFLIGHT), ["mediagate:gate/admission"]);
    assert_eq!(convertible_types_of(component::PREFLIGHT), Vec::<String>::new());
    let gzip = gzip_best(component::PREFLIGHT);
    eprintln!(
        "preflight {} bytes, {gzip} gzip -9; convert {} bytes, {} gzip -9",
        component::PREFLIGHT.len(),
        component::CONVERT.len(),
        gzip_best(component::CONVERT)
    );
    assert!(gzip <= PREFLIGHT_GZIP_MAX, "preflight is {gzip} bytes gzip -9, over {PREFLIGHT_GZIP_MAX}");
}

#[test]
fn the_convert_component_comes_precompiled_and_is_written_by_the_cli() {
    assert!(!World::Convert.precompiled().is_empty());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("convert.wasm");
    assert_eq!(mediagate(&["component", "--world", "convert", "--out", path(&out)]).status.code(), Some(0));
    assert_eq!(std::fs::read(&out).unwrap(), component::CONVERT);
    assert_eq!(World::of(component::CONVERT), Some(World::Convert));
}

#[tokio::test]
async fn the_convert_component_is_loaded_by_the_first_converting_call_only() {
    // A gate of its own: the shared one may have loaded the converter in another test.
    let gate = mediagate::Gate::new(runtime()).unwrap();
    let png = png_bytes(8, 8);
    let verdict = admit_claimed(&gate, &png, "image/png", gate.default_options()).await.unwrap();
    assert!(matches!(verdict, mediagate::gate::Verdict::Admitted(_)));
    assert!(!gate.converter_loaded(), "the preflight path never loads the convert component");
    let types = gate.convertible_types().await.unwrap();
    assert!(gate.converter_loaded());
    for t in ["image/svg+xml", "image/bmp", "image/tiff", "image/vnd.microsoft.icon"] {
        assert!(types.contains(&t.to_string()), "{t} in {types:?}");
    }
    // A PNG through the converting call: admitted as by the plain gate, no conversion reported.
    let input = mediagate::gate::InputMedia::new(png, Some("image/png")).converting();
    let converted = gate.admit(&input, gate.default_options()).await.unwrap().answer.unwrap();
    assert_eq!(converted.verdict, verdict);
    assert_eq!(converted.conversion, None);
    // Clones share the loaded component.
    assert!(gate.clone().converter_loaded());
}

#[test]
fn without_convert_an_svg_is_refused_exactly_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("diagram.svg");
    std::fs::write(&svg, SVG).unwrap();
    let out = mediagate(&["admit", "--json", path(&svg)]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["reason"], "mime_unsupported");
    assert_eq!(v.get("converted"), None);
}

#[test]
fn admit_with_convert_reports_no_conversion_for_a_type_providers_take() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("small.png");
    std::fs::write(&png, png_bytes(16, 9)).unwrap();
    let plain = mediagate(&["admit", "--json", path(&png)]);
    let converting = mediagate(&["admit", "--json", "--convert", path(&png)]);
    assert_eq!((plain.status.code(), converting.status.code()), (Some(0), Some(0)));
    let (plain, converting): (Value, Value) =
        (serde_json::from_slice(&plain.stdout).unwrap(), serde_json::from_slice(&converting.stdout).unwrap());
    assert_eq!(plain, converting, "no `converted` key when nothing was converted");
}

#[test]
fn page_applies_to_pdfs_only_and_counts_from_1() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("small.png");
    std::fs::write(&png, png_bytes(4, 4)).unwrap();
    let out = mediagate(&["admit", "--json", "--page", "1", path(&png)]);
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"]["message"].as_str().unwrap().contains("--page applies to PDFs"), "{v}");
    let out = mediagate(&["admit", "--page", "0", path(&png)]);
    assert_eq!(out.status.code(), Some(2), "page 0 is a usage error");
}

#[test]
fn tool_results_and_requests_gain_conversions_with_convert_only() {
    let input = json!({"content": [{"type": "text", "text": "ok"}]}).to_string();
    let run = |args: &[&str]| {
        let mut command = mediagate_command();
        command.args(args);
        let out = run_with_stdin(command, input.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let plain = run(&["admit-tool-result", "--tool", "t"]);
    assert_eq!(plain.get("conversions"), None);
    let converting = run(&["admit-tool-result", "--tool", "t", "--convert"]);
    assert_eq!(
        converting,
        json!({"content": {"content": [{"type": "text", "text": "ok"}]}, "refused": [], "conversions": []})
    );

    let request = json!({"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}).to_string();
    let report = |args: &[&str]| {
        let mut command = mediagate_command();
        command.args(args);
        let out = run_with_stdin(command, request.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let plain = report(&["admit-request", "--api", "anthropic", "--json"]);
    let converting = report(&["admit-request", "--api", "anthropic", "--json", "--convert"]);
    assert_eq!(plain.get("conversions"), None);
    assert_eq!(converting["conversions"], json!([]));
    assert_eq!(converting["request"], plain["request"]);
}

/// The conformance files every host's parity test runs (`tests/corpus/conformance/parity.txt`):
/// the Rust library admits the bytes `mediagate admit --convert` admits, re-mux or conversion.
#[tokio::test]
async fn the_library_admits_the_clis_bytes_for_the_conformance_parity_files() {
    let gate = gate();
    let conformance = corpus().join("conformance");
    let list = std::fs::read_to_string(conformance.join("parity.txt")).unwrap();
    let names: Vec<&str> = list.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    assert!(names.len() >= 6, "{names:?}");
    let dir = tempfile::tempdir().unwrap();
    for name in names {
        let file = conformance.join(name);
        let mime = match file.extension().and_then(|e| e.to_str()) {
            Some("png") => "image/png",
            Some("jpg") => "image/jpeg",
            Some("gif") => "image/gif",
            Some("webp") => "image/webp",
            Some("tif") => "image/tiff",
            Some("bmp") => "image/bmp",
            Some("ico") => "image/vnd.microsoft.icon",
            other => panic!("{name}: no media type for {other:?}"),
        };
        let out = dir.path().join("admitted");
        let run = mediagate(&["admit", "--convert", "--mime", mime, "--out", path(&out), path(&file)]);
        assert_eq!(run.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&run.stderr));
        let bytes = std::fs::read(&file).unwrap();
        let input = mediagate::gate::InputMedia::new(bytes.clone(), Some(mime)).converting();
        let converted = gate.admit(&input, gate.default_options()).await.unwrap().answer.unwrap();
        let mediagate::gate::Verdict::Admitted(admitted) = converted.verdict else { panic!("{name}: refused") };
        assert!(admitted.bytes(&bytes) == std::fs::read(&out).unwrap().as_slice(), "{name}: the same bytes");
    }
}
