//! The gate through the real component and host: the corpus, the benchmark images, traps.

mod common;

use std::time::Duration;

use common::*;
use mediagate::gate::{AdmitOptions, RefusalReason, Verdict, Verify};
use mediagate::{CallError, Gate, Limits, Runtime, RuntimeConfig};

/// The gate's own defaults (from the component's `default-options`).
fn defaults() -> AdmitOptions {
    gate().default_options()
}

fn full() -> AdmitOptions {
    AdmitOptions { verify: Verify::Full, ..defaults() }
}

async fn admit_file(gate: &Gate, path: &std::path::Path, mime: &str, options: AdmitOptions) -> Verdict {
    let bytes = std::fs::read(path).unwrap();
    gate.admit_image(&bytes, mime, options).await.unwrap()
}

#[tokio::test]
async fn every_valid_pngsuite_file_is_admitted_and_every_corrupt_one_refused() {
    let gate = gate();
    let files = files_in(&corpus().join("pngsuite"), "png");
    assert!(files.len() > 150, "PngSuite has 170-odd files");
    let (mut admitted, mut refused) = (0, 0);
    for path in files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let verdict = admit_file(&gate, &path, "image/png", full()).await;
        if name.starts_with('x') {
            match verdict {
                Verdict::Refused(r) => {
                    assert!(
                        matches!(r.reason, RefusalReason::MagicMismatch | RefusalReason::Undecodable),
                        "{name}: {r:?}"
                    );
                    refused += 1;
                }
                Verdict::Admitted(_) => panic!("{name} is corrupt and must be refused under verify full"),
            }
        } else {
            match verdict {
                Verdict::Admitted(a) => {
                    assert_eq!(a.mime, "image/png", "{name}");
                    assert!(a.dimensions.is_some(), "{name}");
                    assert!(!a.reencoded, "{name}: small PNGs pass through");
                    admitted += 1;
                }
                Verdict::Refused(r) => panic!("{name} is valid and must be admitted: {r:?}"),
            }
        }
    }
    assert!(admitted > 140 && refused >= 14, "admitted {admitted}, refused {refused}");
}

#[tokio::test]
async fn the_photos_are_admitted_with_their_dimensions() {
    let gate = gate();
    for path in files_in(&corpus().join("photos"), "png") {
        match admit_file(&gate, &path, "image/png", full()).await {
            Verdict::Admitted(a) => {
                let d = a.dimensions.unwrap();
                assert!(d.width > 0 && d.height > 0);
                assert!(a.base64_len <= 5_242_880);
            }
            Verdict::Refused(r) => panic!("{}: {r:?}", path.display()),
        }
    }
    let kodim = corpus().join("photos/kodim23.png");
    let Verdict::Admitted(a) = admit_file(&gate, &kodim, "image/png", defaults()).await else { panic!() };
    let d = a.dimensions.unwrap();
    assert_eq!((d.width, d.height), (768, 512));
}

#[tokio::test]
async fn the_retina_screenshot_is_downsampled_under_the_base64_limit() {
    let path = corpus().join("bench/screenshot-3456x2234.png");
    let raw = std::fs::metadata(&path).unwrap().len();
    assert!(raw.div_ceil(3) * 4 > 5_242_880, "the original is over the limit once encoded");
    let Verdict::Admitted(a) = admit_file(&gate(), &path, "image/png", defaults()).await else {
        panic!("the screenshot must be admitted after downsampling")
    };
    assert!(a.base64_len <= 5_242_880);
    let d = a.dimensions.unwrap();
    assert_eq!((d.width, d.height), (2000, 1293));
    assert!(a.resized && a.reencoded);
    assert_eq!(a.original_size, raw);

    // Without the downsampler the same file is refused with the bound it exceeds.
    let no_ds = AdmitOptions { downsample: false, ..defaults() };
    let Verdict::Refused(r) = admit_file(&gate(), &path, "image/png", no_ds).await else { panic!() };
    assert_eq!((r.reason, r.limit), (RefusalReason::Base64TooLarge, Some(5_242_880)));
}

#[tokio::test]
async fn the_12mp_photo_is_fit_to_2000x1500() {
    let path = corpus().join("bench/photo-12mp.jpg");
    let Verdict::Admitted(a) = admit_file(&gate(), &path, "image/jpeg", defaults()).await else { panic!() };
    let d = a.dimensions.unwrap();
    assert_eq!((d.width, d.height, a.mime.as_str(), a.resized), (2000, 1500, "image/jpeg", true));
}

#[tokio::test]
async fn the_sideways_photo_is_admitted_upright() {
    let path = corpus().join("bench/photo-exif-rotated.jpg");
    let Verdict::Admitted(a) = admit_file(&gate(), &path, "image/jpeg", defaults()).await else { panic!() };
    let d = a.dimensions.unwrap();
    assert_eq!((d.width, d.height), (2000, 1500), "stored 1500x2000 with EXIF orientation 6");
    assert!(a.reencoded && !a.resized);
}

#[tokio::test]
async fn misnamed_and_broken_files_are_refused() {
    let gate = gate();
    for (name, reason) in [
        ("icon-svg.png", RefusalReason::MagicMismatch),
        ("page-html.png", RefusalReason::MagicMismatch),
        ("empty.png", RefusalReason::MagicMismatch),
        ("truncated-header.png", RefusalReason::Undecodable),
    ] {
        let Verdict::Refused(r) = admit_file(&gate, &fixture(name), "image/png", defaults()).await else {
            panic!("{name} must be refused")
        };
        assert_eq!(r.reason, reason, "{name}: {}", r.message);
    }
    // A file cut after its header passes the header check, and is caught by the full decode.
    let Verdict::Refused(r) = admit_file(&gate, &fixture("truncated.png"), "image/png", full()).await else { panic!() };
    assert_eq!(r.reason, RefusalReason::Undecodable);
}

#[tokio::test]
async fn documents_are_admitted_by_signature() {
    let gate = gate();
    let pdf = std::fs::read(fixture("hello.pdf")).unwrap();
    let Verdict::Admitted(a) = gate.admit_document(&pdf, "application/pdf", defaults()).await.unwrap() else {
        panic!()
    };
    assert_eq!(a.mime, "application/pdf");
    assert!(a.dimensions.is_none());
    let fake = std::fs::read(fixture("fake.pdf")).unwrap();
    let Verdict::Refused(r) = gate.admit_document(&fake, "application/pdf", defaults()).await.unwrap() else {
        panic!()
    };
    assert_eq!(r.reason, RefusalReason::MagicMismatch);
}

#[tokio::test]
async fn sniff_names_what_the_bytes_are() {
    let gate = gate();
    assert_eq!(gate.sniff(&std::fs::read(fixture("hello.pdf")).unwrap()).await.unwrap(), "application/pdf");
    assert_eq!(gate.sniff(&std::fs::read(fixture("icon-svg.png")).unwrap()).await.unwrap(), "image/svg+xml");
    assert_eq!(gate.sniff(b"").await.unwrap(), "application/x-empty");
}

fn tight_runtime(limits: Limits) -> Gate {
    let runtime = Runtime::new(RuntimeConfig { limits, ..runtime_config() }).unwrap();
    Gate::new(runtime).unwrap()
}

#[tokio::test]
async fn out_of_memory_fails_the_call_and_the_host_goes_on() {
    let gate = tight_runtime(Limits { memory_bytes: 8 << 20, ..Limits::default() });
    let photo = std::fs::read(corpus().join("bench/photo-12mp.jpg")).unwrap();
    let err = gate.admit_image(&photo, "image/jpeg", defaults()).await.unwrap_err();
    assert!(matches!(err, CallError::OutOfMemory { limit_mib: 8 }), "{err}");
    assert!(err.to_string().contains("out of memory"));
    let small = std::fs::read(corpus().join("pngsuite/basn0g01.png")).unwrap();
    let ok = gate.admit_image(&small, "image/png", defaults()).await.unwrap();
    assert!(matches!(ok, Verdict::Admitted(_)), "the next call on the same gate succeeds");
}

#[tokio::test]
async fn a_deadline_interrupts_the_call_and_the_host_goes_on() {
    let gate = tight_runtime(Limits { cpu_deadline: Duration::from_millis(20), ..Limits::default() });
    let photo = std::fs::read(corpus().join("bench/photo-12mp.jpg")).unwrap();
    let err = gate.admit_image(&photo, "image/jpeg", defaults()).await.unwrap_err();
    assert!(matches!(err, CallError::DeadlineExceeded(_)), "{err}");
    let small = std::fs::read(corpus().join("pngsuite/basn0g01.png")).unwrap();
    assert!(matches!(gate.admit_image(&small, "image/png", defaults()).await.unwrap(), Verdict::Admitted(_)));
}

#[test]
fn a_corrupt_cache_file_is_rebuilt_not_trusted() {
    use mediagate::cache::{Origin, key, load};
    let dir = tempfile::tempdir().unwrap();
    let runtime =
        Runtime::new(RuntimeConfig { cache_dir: Some(dir.path().to_path_buf()), ..RuntimeConfig::default() }).unwrap();
    let wasm = mediagate::component::PREFLIGHT;
    let (_, origin) = load(runtime.engine(), wasm, Some(dir.path())).unwrap();
    assert_eq!(origin, Origin::Compiled);
    let (_, origin) = load(runtime.engine(), wasm, Some(dir.path())).unwrap();
    assert_eq!(origin, Origin::Cache);

    let file = dir.path().join(format!("{}.cwasm", key(runtime.engine(), wasm)));
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&file, &bytes).unwrap();
    let (_, origin) = load(runtime.engine(), wasm, Some(dir.path())).unwrap();
    assert_eq!(origin, Origin::Compiled, "a corrupt file is recompiled");
    let (_, origin) = load(runtime.engine(), wasm, Some(dir.path())).unwrap();
    assert_eq!(origin, Origin::Cache, "and rewritten");

    std::fs::write(&file, b"garbage").unwrap();
    assert_eq!(load(runtime.engine(), wasm, Some(dir.path())).unwrap().1, Origin::Compiled);
}

#[tokio::test]
async fn concurrent_calls_each_get_their_own_instance() {
    let gate = gate();
    let small = std::fs::read(corpus().join("photos/kodim02.png")).unwrap();
    let calls = (0..16).map(|_| {
        let gate = gate.clone();
        let bytes = small.clone();
        tokio::spawn(async move { gate.admit_image(&bytes, "image/png", defaults()).await.unwrap() })
    });
    for call in calls {
        assert!(matches!(call.await.unwrap(), Verdict::Admitted(_)));
    }
}

#[tokio::test]
async fn an_admitted_block_crosses_as_bytes_or_as_unchanged() {
    use base64::Engine as _;
    use mediagate::gate::Payload;
    let gate = gate();
    // Passed through: nothing is copied back, the host encodes the caller's own bytes.
    let small = std::fs::read(corpus().join("photos/kodim23.png")).unwrap();
    let Verdict::Admitted(a) = gate.admit_image(&small, "image/png", defaults()).await.unwrap() else { panic!() };
    assert_eq!(a.payload, Payload::Unchanged);
    assert_eq!(a.bytes(&small), &small[..]);
    assert_eq!(a.base64(&small), base64::engine::general_purpose::STANDARD.encode(&small));
    assert_eq!(a.base64_len, a.base64(&small).len() as u64);
    // Re-encoded: the gate's bytes cross, and `base64_len` is their encoded length.
    let photo = std::fs::read(corpus().join("bench/photo-12mp.jpg")).unwrap();
    let Verdict::Admitted(a) = gate.admit_image(&photo, "image/jpeg", defaults()).await.unwrap() else { panic!() };
    let Payload::Bytes(made) = &a.payload else { panic!("a fitted photo carries its new bytes") };
    assert_eq!(a.base64(&photo), base64::engine::general_purpose::STANDARD.encode(made));
    assert_eq!(a.base64_len, a.base64(&photo).len() as u64);
    let img = image::load_from_memory(a.bytes(&photo)).unwrap();
    assert_eq!((img.width(), img.height()), (2000, 1500));
    // A document passes through unchanged too.
    let pdf = std::fs::read(fixture("hello.pdf")).unwrap();
    let Verdict::Admitted(a) = gate.admit_document(&pdf, "application/pdf", defaults()).await.unwrap() else {
        panic!()
    };
    assert_eq!(a.payload, Payload::Unchanged);
}

#[tokio::test]
async fn the_defaults_are_the_components_and_every_rust_entry_point_reads_them() {
    use mediagate::gate::Provider;
    let gate = gate();
    let expected = AdmitOptions { downsample: true, provider: Provider::Anthropic, verify: Verify::Full };
    assert_eq!(gate.default_options(), expected, "guest/src/options.rs `Options::default`");
    let tool = mediagate::ReadImageTool::new(runtime(), None).unwrap();
    assert_eq!(tool.default_options(), expected, "the agent-tool component answers the same");
}

/// A host built against the frozen 0.1.0 contract (`wit/deps/mediagate-gate-0.1.0`), as a user
/// who pinned it has one: it loads today's component and admits and refuses with 0.1.0's types.
mod contract_0_1_0 {
    wasmtime::component::bindgen!({
        world: "preflight",
        path: "wit/deps/mediagate-gate-0.1.0",
        exports: { default: async },
    });
}

#[tokio::test]
async fn an_old_contract_host_still_works() {
    use base64::Engine as _;
    use contract_0_1_0::exports::mediagate::gate::admission::{AdmitOptions, Provider, RefusalReason, Verdict, Verify};
    use wasmtime_wasi::{ResourceTable, WasiCtx, WasiCtxView, WasiView};

    struct Old {
        wasi: WasiCtx,
        table: ResourceTable,
    }
    impl WasiView for Old {
        fn ctx(&mut self) -> WasiCtxView<'_> {
            WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
        }
    }

    let runtime = runtime();
    let (component, _) = mediagate::cache::load(runtime.engine(), mediagate::component::PREFLIGHT, Some(&cache_dir()))
        .expect("today's preflight component");
    let mut linker = wasmtime::component::Linker::<Old>::new(runtime.engine());
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).unwrap();
    let pre = contract_0_1_0::PreflightPre::new(linker.instantiate_pre(&component).unwrap())
        .expect("the component still exports mediagate:gate/admission@0.1.0");
    let options = AdmitOptions { downsample: true, provider: Provider::Anthropic, verify: Verify::Full };
    let small = std::fs::read(corpus().join("photos/kodim23.png")).unwrap();
    let photo = std::fs::read(corpus().join("bench/photo-12mp.jpg")).unwrap();
    let svg = std::fs::read(fixture("icon-svg.png")).unwrap();
    let mut verdicts = Vec::new();
    for (bytes, mime) in [(&small, "image/png"), (&photo, "image/jpeg"), (&svg, "image/png")] {
        let mut store = wasmtime::Store::new(
            runtime.engine(),
            Old { wasi: wasmtime_wasi::WasiCtxBuilder::new().build(), table: ResourceTable::new() },
        );
        // The engine interrupts on epochs; this store's deadline is far away.
        store.set_epoch_deadline(1 << 40);
        let gate = pre.instantiate_async(&mut store).await.unwrap();
        let admission = gate.mediagate_gate_admission();
        verdicts.push(admission.call_admit_image(&mut store, bytes, mime, options).await.unwrap());
        assert_eq!(
            admission.call_sniff(&mut store, bytes).await.unwrap(),
            if bytes == &svg { "image/svg+xml" } else { mime }
        );
    }
    let [small_v, photo_v, svg_v] = <[Verdict; 3]>::try_from(verdicts).unwrap();
    let Verdict::Admitted(a) = small_v else { panic!("{small_v:?}") };
    assert_eq!(
        a.data,
        base64::engine::general_purpose::STANDARD.encode(&small),
        "0.1.0 carries base64, built in the guest"
    );
    assert_eq!((a.base64_len, a.reencoded), (a.data.len() as u64, false));
    let Verdict::Admitted(a) = photo_v else { panic!() };
    let fitted = image::load_from_memory(&base64::engine::general_purpose::STANDARD.decode(&a.data).unwrap()).unwrap();
    assert_eq!((fitted.width(), fitted.height(), a.resized), (2000, 1500, true));
    let Verdict::Refused(r) = svg_v else { panic!() };
    assert_eq!(r.reason, RefusalReason::MagicMismatch);
}

#[test]
fn the_names_users_see_are_the_wit_case_names() {
    use mediagate::gate::ChangeKind;
    // Derived from the generated types (the WIT), not written again in the host; these are the
    // strings of `--json` output and MCP/proxy messages, unchanged from 0.1.0.
    let reasons = [
        (RefusalReason::Undecodable, "undecodable"),
        (RefusalReason::MimeUnsupported, "mime_unsupported"),
        (RefusalReason::RawTooLarge, "raw_too_large"),
        (RefusalReason::MagicMismatch, "magic_mismatch"),
        (RefusalReason::Base64TooLarge, "base64_too_large"),
        (RefusalReason::DimensionsTooLarge, "dimensions_too_large"),
        (RefusalReason::RequestLimit, "request_limit"),
    ];
    for (reason, name) in reasons {
        assert_eq!(reason.as_str(), name);
    }
    let kinds = [
        (ChangeKind::Downsampled, "downsampled"),
        (ChangeKind::ReEncoded, "re-encoded"),
        (ChangeKind::Normalized, "normalized"),
        (ChangeKind::Refused, "refused"),
    ];
    for (kind, name) in kinds {
        assert_eq!(kind.as_str(), name);
    }
}
