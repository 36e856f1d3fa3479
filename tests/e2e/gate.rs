//! The gate through the real component and host: the corpus, the benchmark images, traps.

use std::time::Duration;

use crate::common::*;
use mediagate::gate::{AdmitOptions, Answered, RefusalReason, Verdict, Verify};
use mediagate::{CallError, Gate, Limits, Runtime, RuntimeConfig};

/// The gate's own defaults (from the component's `default-options`).
fn defaults() -> AdmitOptions {
    gate().default_options()
}

fn full() -> AdmitOptions {
    AdmitOptions { verify: Some(Verify::Full), ..defaults() }
}

async fn admit_file(gate: &Gate, path: &std::path::Path, mime: &str, options: AdmitOptions) -> Verdict {
    let bytes = std::fs::read(path).unwrap();
    admit_claimed(gate, &bytes, mime, options).await.unwrap()
}

#[tokio::test]
async fn every_valid_pngsuite_file_is_admitted_and_every_corrupt_one_refused_but_an_idat_crc() {
    let gate = gate();
    let files = files_in(&corpus().join("pngsuite"), "png");
    assert!(files.len() > 150, "PngSuite has 170-odd files");
    let (mut admitted, mut refused) = (0, 0);
    for path in files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let verdict = admit_file(&gate, &path, "image/png", full()).await;
        if name == "xcsn0g01.png" {
            // Its only fault is an IDAT CRC over intact data: Pillow and libvips decode it, so the
            // gate admits it with the CRC written afresh (docs/design.md, "Canonical form").
            let Verdict::Admitted(a) = verdict else { panic!("{name}: {verdict:?}") };
            assert!(a.dropped.iter().any(|k| k == "bad-crc"), "{name}: {:?}", a.dropped);
            admitted += 1;
        } else if name.starts_with('x') {
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
    assert!(admitted > 140 && refused >= 13, "admitted {admitted}, refused {refused}");
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
    let no_ds = AdmitOptions { downsample: Some(false), ..defaults() };
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
    // A file cut after its header: the rows that arrived are written by the gate, the rest zero, as
    // browsers show it; the verdict says so.
    let Verdict::Admitted(a) = admit_file(&gate, &fixture("truncated.png"), "image/png", full()).await else {
        panic!()
    };
    assert!(a.reencoded && a.dropped.iter().any(|k| k == "cut-data"), "{:?}", a.dropped);
}

#[tokio::test]
async fn documents_are_admitted_by_signature() {
    let gate = gate();
    let pdf = std::fs::read(fixture("hello.pdf")).unwrap();
    let Verdict::Admitted(a) = admit_claimed(&gate, &pdf, "application/pdf", defaults()).await.unwrap() else {
        panic!()
    };
    assert_eq!(a.mime, "application/pdf");
    assert!(a.dimensions.is_none());
    let fake = std::fs::read(fixture("fake.pdf")).unwrap();
    let Verdict::Refused(r) = admit_claimed(&gate, &fake, "application/pdf", defaults()).await.unwrap() else {
        panic!()
    };
    assert_eq!(r.reason, RefusalReason::MagicMismatch);
}

#[tokio::test]
async fn sniff_names_what_the_bytes_are() {
    let gate = gate();
    assert_eq!(sniff(&gate, &std::fs::read(fixture("hello.pdf")).unwrap()).await, "application/pdf");
    assert_eq!(sniff(&gate, &std::fs::read(fixture("icon-svg.png")).unwrap()).await, "image/svg+xml");
    assert_eq!(sniff(&gate, b"").await, "application/x-empty");
}

fn tight_runtime(limits: Limits) -> Gate {
    let runtime = Runtime::new(RuntimeConfig { limits, ..runtime_config() }).unwrap();
    Gate::new(runtime).unwrap()
}

#[tokio::test]
async fn out_of_memory_fails_the_call_and_the_host_goes_on() {
    let gate = tight_runtime(Limits { memory_bytes: 8 << 20, ..Limits::default() });
    let photo = std::fs::read(corpus().join("bench/photo-12mp.jpg")).unwrap();
    let err = admit_claimed(&gate, &photo, "image/jpeg", defaults()).await.unwrap_err();
    assert!(matches!(err, CallError::OutOfMemory { limit_mib: 8 }), "{err}");
    assert!(err.to_string().contains("out of memory"));
    let small = std::fs::read(corpus().join("pngsuite/basn0g01.png")).unwrap();
    let ok = admit_claimed(&gate, &small, "image/png", defaults()).await.unwrap();
    assert!(matches!(ok, Verdict::Admitted(_)), "the next call on the same gate succeeds");
}

#[tokio::test]
async fn a_deadline_interrupts_the_call_and_the_host_goes_on() {
    let gate = tight_runtime(Limits { cpu_deadline: Duration::from_millis(20), ..Limits::default() });
    let photo = std::fs::read(corpus().join("bench/photo-12mp.jpg")).unwrap();
    let err = admit_claimed(&gate, &photo, "image/jpeg", defaults()).await.unwrap_err();
    assert!(matches!(err, CallError::DeadlineExceeded(_)), "{err}");
    let small = std::fs::read(corpus().join("pngsuite/basn0g01.png")).unwrap();
    assert!(matches!(admit_claimed(&gate, &small, "image/png", defaults()).await.unwrap(), Verdict::Admitted(_)));
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
        tokio::spawn(async move { admit_claimed(&gate, &bytes, "image/png", defaults()).await.unwrap() })
    });
    for call in calls {
        assert!(matches!(call.await.unwrap(), Verdict::Admitted(_)));
    }
}

/// The import names of a built component, as the engine reads its type (what `jco wit` and
/// `wasm-tools component wit` list), with `mediagate:gate`'s own version left off.
pub(crate) fn imports_of(wasm: &[u8]) -> std::collections::BTreeSet<String> {
    let runtime = runtime();
    let (component, _) = runtime.load(wasm).unwrap();
    component
        .component_type()
        .imports(runtime.engine())
        .map(|(name, _)| match name.split_once('@') {
            Some((interface, _)) if interface.starts_with("mediagate:gate/") => interface.to_string(),
            _ => name.to_string(),
        })
        .collect()
}

#[test]
fn the_preflight_component_imports_nothing() {
    let imports = imports_of(mediagate::component::PREFLIGHT);
    assert!(imports.is_empty(), "the preflight world declares no import; the component imports {imports:?}");
}

#[test]
fn the_agent_tool_component_imports_exactly_what_its_world_declares() {
    // `import wasi:filesystem/preopens@0.2.12` in wit/worlds.wit brings in the interfaces whose
    // types it uses; the component imports those its functions mention (the `datetime` of a stat),
    // and nothing of WASI's cli, random, environment or exit.
    let expected = [
        "wasi:clocks/wall-clock@0.2.12",
        "wasi:filesystem/types@0.2.12",
        "wasi:filesystem/preopens@0.2.12",
        "mediagate:gate/vlm",
        "mediagate:gate/output",
    ];
    let imports = imports_of(mediagate::component::AGENT_TOOL);
    assert_eq!(imports, expected.iter().map(|s| s.to_string()).collect());
    let world = std::fs::read_to_string(repo_root().join("wit/worlds.wit")).unwrap();
    assert!(world.contains("import wasi:filesystem/preopens@0.2.12;"), "the agent-tool world declares the preopen");
}

#[test]
fn a_trap_is_named_as_the_gate_trapping() {
    // The components import nothing to print with, so no panic message comes out: the trap is named.
    let err = CallError::classify(wasmtime::Trap::UnreachableCodeReached.into(), 512 << 20);
    assert!(matches!(err, CallError::Trap { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "the gate trapped: wasm `unreachable` instruction executed (a fault in the gate, not a verdict on the input)"
    );
}

/// Deserialising is running native code: a cache file someone else could have written (a planted
/// one, with the right name and a valid checksum) is refused and the component compiled instead.
#[cfg(unix)]
#[test]
fn a_planted_cache_file_is_not_deserialised() {
    use std::fs;
    use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

    use mediagate::cache::{Origin, check_file, key, load};
    // The smallest component (magic, version, component layer): compiles in microseconds.
    const EMPTY: &[u8] = b"\0asm\x0d\x00\x01\x00";
    let mode = |p: &std::path::Path| fs::metadata(p).unwrap().mode() & 0o777;
    let chmod = |p: &std::path::Path, m: u32| fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();

    let runtime = Runtime::new(RuntimeConfig { cache_dir: None, pooling: false, ..RuntimeConfig::default() }).unwrap();
    let engine = runtime.engine();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("cache");
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Compiled);
    let file = dir.join(format!("{}.cwasm", key(engine, EMPTY)));
    assert_eq!((mode(&dir), mode(&file)), (0o700, 0o600), "created for this user alone");
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Cache);
    let valid = fs::read(&file).unwrap();

    // The same valid file, but group-writable: refused, recompiled, replaced by a private one.
    chmod(&file, 0o664);
    let why = check_file(&dir, &file).unwrap_err().to_string();
    assert!(why.contains("writable by group or others"), "{why}");
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Compiled);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Cache);

    // A symlink to a valid file elsewhere: not followed.
    let planted = root.path().join("planted.cwasm");
    fs::write(&planted, &valid).unwrap();
    chmod(&planted, 0o600);
    fs::remove_file(&file).unwrap();
    symlink(&planted, &file).unwrap();
    assert!(check_file(&dir, &file).is_err());
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Compiled);
    assert!(!fs::symlink_metadata(&file).unwrap().file_type().is_symlink(), "replaced by a file of ours");

    // A file owned by someone else (only root can make one).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
        let why = check_file(&dir, &file).unwrap_err().to_string();
        assert!(why.contains("not by the current user"), "{why}");
        assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Compiled);
        assert_eq!(fs::metadata(&file).unwrap().uid(), 0);
    }

    // A directory others can write: nothing in it is read, nothing is written to it.
    chmod(&dir, 0o777);
    let why = check_file(&dir, &file).unwrap_err().to_string();
    assert!(why.contains("writable by group or others"), "{why}");
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Compiled);
    fs::remove_file(&file).unwrap();
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Compiled);
    assert!(!file.exists(), "no file written into a directory others can write");
}

/// A digest is not a MAC: a file with the right name and a valid digest that this cache did not
/// write (a checkout, an unpacked archive, a copy: mode 0644, the user's own) is not deserialised,
/// nor is one under a directory someone else could swap, nor a second link to a file.
#[cfg(unix)]
#[test]
fn a_cache_file_this_cache_did_not_write_is_not_deserialised() {
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use mediagate::cache::{Origin, check_file, key, load};
    const EMPTY: &[u8] = b"\0asm\x0d\x00\x01\x00";
    let chmod = |p: &std::path::Path, m: u32| fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
    let mode = |p: &std::path::Path| {
        use std::os::unix::fs::MetadataExt;
        fs::metadata(p).unwrap().mode() & 0o777
    };
    let runtime = Runtime::new(RuntimeConfig { cache_dir: None, pooling: false, ..RuntimeConfig::default() }).unwrap();
    let engine = runtime.engine();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("cache");
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Compiled);
    let file = dir.join(format!("{}.cwasm", key(engine, EMPTY)));
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Cache);

    // The user's own file, valid digest, mode 0644: refused, recompiled, replaced by a 0600 file.
    chmod(&file, 0o644);
    let why = check_file(&dir, &file).unwrap_err().to_string();
    assert!(why.contains("mode 644") && why.contains("0600"), "{why}");
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Compiled);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Cache);

    // A second link to the file (it can be changed through a name in another directory).
    let other = root.path().join("other.cwasm");
    fs::hard_link(&file, &other).unwrap();
    assert!(check_file(&dir, &file).unwrap_err().to_string().contains("links"));
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Compiled);
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Cache, "replaced by a file of its own");

    // A directory that only its owner can write but others can read is narrowed to 0700.
    chmod(&dir, 0o755);
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Cache);
    assert_eq!(mode(&dir), 0o700);

    // A directory above it that others can write (no sticky bit): they could swap the cache
    // directory, so nothing is read or written.
    chmod(root.path(), 0o777);
    let why = check_file(&dir, &file).unwrap_err().to_string();
    assert!(why.contains("directory above it") && why.contains("sticky"), "{why}");
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Compiled);
    // With the sticky bit (as /tmp), others cannot rename what is not theirs: trusted again.
    chmod(root.path(), 0o1777);
    assert_eq!(load(engine, EMPTY, Some(&dir)).unwrap().1, Origin::Cache);
    chmod(root.path(), 0o700);
}

/// The binary carries both components precompiled: loading them compiles nothing and touches no
/// cache.
#[test]
fn the_embedded_components_come_precompiled_with_the_binary() {
    use mediagate::cache::Origin;
    use mediagate::component::World;
    let cache = tempfile::tempdir().unwrap();
    let runtime =
        Runtime::new(RuntimeConfig { cache_dir: Some(cache.path().join("c")), ..RuntimeConfig::default() }).unwrap();
    for world in [World::Preflight, World::Convert, World::AgentTool] {
        assert!(!world.precompiled().is_empty(), "{} carried precompiled", world.name());
        let (_, origin) = runtime.load(world.bytes()).unwrap();
        assert_eq!(origin, Origin::Carried, "{}", world.name());
    }
    assert!(!cache.path().join("c").exists(), "no cache directory made");
}

#[tokio::test]
async fn an_admitted_block_crosses_as_bytes_or_as_unchanged() {
    use base64::Engine as _;
    use mediagate::gate::Payload;
    let gate = gate();
    // Re-muxed (the tEXt chunk left out): the canonical bytes cross back.
    let tagged = std::fs::read(corpus().join("photos/kodim23.png")).unwrap();
    let Verdict::Admitted(a) = admit_claimed(&gate, &tagged, "image/png", defaults()).await.unwrap() else { panic!() };
    assert_eq!((&a.payload, &a.dropped[..]), (&Payload::Bytes(canonical_png(&tagged)), &["text".to_string()][..]));
    // Passed through: an image already canonical (the form is a fixed point) is not copied back,
    // the host encodes the caller's own bytes.
    let small = canonical_png(&tagged);
    let Verdict::Admitted(a) = admit_claimed(&gate, &small, "image/png", defaults()).await.unwrap() else { panic!() };
    assert_eq!((&a.payload, a.dropped.is_empty()), (&Payload::Unchanged, true));
    assert_eq!(a.bytes(&small), &small[..]);
    assert_eq!(a.base64(&small), base64::engine::general_purpose::STANDARD.encode(&small));
    assert_eq!(a.base64_len, a.base64(&small).len() as u64);
    // Re-encoded: the gate's bytes cross, and `base64_len` is their encoded length.
    let photo = std::fs::read(corpus().join("bench/photo-12mp.jpg")).unwrap();
    let Verdict::Admitted(a) = admit_claimed(&gate, &photo, "image/jpeg", defaults()).await.unwrap() else { panic!() };
    let Payload::Bytes(made) = &a.payload else { panic!("a fitted photo carries its new bytes") };
    assert_eq!(a.base64(&photo), base64::engine::general_purpose::STANDARD.encode(made));
    assert_eq!(a.base64_len, a.base64(&photo).len() as u64);
    let img = image::load_from_memory(a.bytes(&photo)).unwrap();
    assert_eq!((img.width(), img.height()), (2000, 1500));
    // A document passes through unchanged too.
    let pdf = std::fs::read(fixture("hello.pdf")).unwrap();
    let Verdict::Admitted(a) = admit_claimed(&gate, &pdf, "application/pdf", defaults()).await.unwrap() else {
        panic!()
    };
    assert_eq!(a.payload, Payload::Unchanged);
}

#[tokio::test]
async fn the_defaults_are_the_components_and_every_rust_entry_point_reads_them() {
    use mediagate::gate::Provider;
    let gate = gate();
    let expected = AdmitOptions {
        downsample: Some(true),
        provider: Some(Provider::Anthropic),
        verify: Some(Verify::Full),
        keep_metadata: Some(false),
    };
    assert_eq!(gate.default_options(), expected, "guest/src/options.rs `Options::default`");
    let tool = mediagate::ReadImageTool::new(runtime(), None).unwrap();
    assert_eq!(tool.default_options(), expected, "the agent-tool component answers the same");
}

/// The components export one contract version, and only its interfaces: a host pinned to an
/// earlier one is refused at instantiation rather than served a stale adapter.
#[test]
fn the_components_export_one_contract_version() {
    let exports_of = |wasm: &[u8]| -> std::collections::BTreeSet<String> {
        let runtime = runtime();
        let (component, _) = runtime.load(wasm).unwrap();
        component.component_type().exports(runtime.engine()).map(|(name, _)| name.to_string()).collect()
    };
    let admission = ["mediagate:gate/admission@0.3.0".to_string()];
    assert_eq!(exports_of(mediagate::component::PREFLIGHT), admission.iter().cloned().collect());
    assert_eq!(exports_of(mediagate::component::CONVERT), admission.iter().cloned().collect());
    let tool: std::collections::BTreeSet<String> =
        ["admission", "tool", "workspace-admission"].iter().map(|i| format!("mediagate:gate/{i}@0.3.0")).collect();
    assert_eq!(exports_of(mediagate::component::AGENT_TOOL), tool);
}

#[test]
fn the_names_users_see_are_the_wit_case_names() {
    use mediagate::gate::ChangeKind;
    // Derived from the generated types (the WIT), not written again in the host; these are the
    // strings of `--json` output and MCP/proxy messages.
    let reasons = [
        (RefusalReason::Undecodable, "undecodable"),
        (RefusalReason::MimeUnsupported, "mime_unsupported"),
        (RefusalReason::RawTooLarge, "raw_too_large"),
        (RefusalReason::MagicMismatch, "magic_mismatch"),
        (RefusalReason::Base64TooLarge, "base64_too_large"),
        (RefusalReason::DimensionsTooLarge, "dimensions_too_large"),
        (RefusalReason::RequestLimit, "request_limit"),
        (RefusalReason::NoSuchPage, "no_such_page"),
        (RefusalReason::Encrypted, "encrypted"),
        (RefusalReason::Blank, "blank"),
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

/// A photo with GPS EXIF comes out without it, its pixels the same; with `keep_metadata` the
/// input stands byte for byte; without EXIF it stands too.
#[tokio::test]
async fn gps_exif_never_reaches_the_provider_unless_kept() {
    let gate = gate();
    let photo = std::fs::read(corpus().join("bench/photo-12mp.jpg")).unwrap();
    let tagged = with_gps_exif(&photo);
    let no_ds = AdmitOptions { downsample: Some(false), ..full() };
    let Verdict::Admitted(a) = admit_claimed(&gate, &tagged, "image/jpeg", no_ds).await.unwrap() else {
        panic!("the tagged photo is admitted")
    };
    let mediagate::gate::Payload::Bytes(out) = &a.payload else { panic!("a re-mux, not the input") };
    assert_eq!(out, &photo, "the canonical form is the photo without its EXIF segment");
    assert_eq!((a.dropped.as_slice(), a.reencoded), (&["exif".to_string()][..], false));
    assert!(!out.windows(9).any(|w| w == b"SecretCam"));
    let keeping = AdmitOptions { keep_metadata: Some(true), ..no_ds };
    let Verdict::Admitted(kept) = admit_claimed(&gate, &tagged, "image/jpeg", keeping).await.unwrap() else { panic!() };
    assert!(matches!(kept.payload, mediagate::gate::Payload::Unchanged) && kept.dropped.is_empty());
    let Verdict::Admitted(plain) = admit_claimed(&gate, &photo, "image/jpeg", no_ds).await.unwrap() else { panic!() };
    assert!(matches!(plain.payload, mediagate::gate::Payload::Unchanged) && plain.dropped.is_empty());
}

/// A JPEG whose scan data end early, at the next marker (libjpeg-turbo: "premature end of data
/// segment", a warning djpeg and libvips fail on; Pillow and Chromium show it, the rest grey): a
/// real-world file of the conformance corpus admitted as its pixels re-encoded, `broken-scan`
/// named; what is admitted is a whole JPEG an independent decoder reads at the input's size, and
/// the gate then finds nothing to repair in it.
#[tokio::test]
async fn a_jpeg_whose_scan_ends_early_is_admitted_reencoded() {
    let gate = gate();
    let path = corpus().join("conformance/jpeg/1cbb1bb37d62c44f67374cd451643dc4.jpg");
    let input = std::fs::read(&path).unwrap();
    let Verdict::Admitted(a) = admit_claimed(&gate, &input, "image/jpeg", full()).await.unwrap() else {
        panic!("the file is admitted")
    };
    assert!(a.reencoded && a.dropped.iter().any(|k| k == "broken-scan"), "{:?}", a.dropped);
    let mediagate::gate::Payload::Bytes(out) = &a.payload else { panic!("re-encoded bytes, not the input") };
    let decoded =
        image::load_from_memory_with_format(out, image::ImageFormat::Jpeg).expect("the image crate decodes it");
    let declared = image::ImageReader::with_format(std::io::Cursor::new(&input), image::ImageFormat::Jpeg)
        .into_dimensions()
        .unwrap();
    assert_eq!((decoded.width(), decoded.height()), declared);
    let Verdict::Admitted(again) = admit_claimed(&gate, out, "image/jpeg", full()).await.unwrap() else { panic!() };
    assert!(!again.dropped.iter().any(|k| k == "broken-scan"), "{:?}", again.dropped);
}

/// A small call runs in the memory the component starts with: the guest's allocator takes the heap
/// the initial memory holds before it grows memory (guest/src/heap.rs), so a 1-bit 32x32 PNG and a
/// 300x300 RGBA one (360 KB decoded) report the same peak. Grown memory would cost the instance's
/// pool slot two `mprotect`s per call.
#[tokio::test]
async fn small_calls_run_in_the_initial_memory_without_growing_it() {
    let gate = gate();
    let mut peaks = Vec::new();
    for name in ["pngsuite/basn0g01.png", "photos/Transparency.png"] {
        let bytes = std::fs::read(corpus().join(name)).unwrap();
        let Answered { answer: verdict, stats } =
            admit_claimed_answered(&gate, &bytes, "image/png", full()).await.unwrap();
        assert!(matches!(verdict, Verdict::Admitted(_)), "{name}: {verdict:?}");
        peaks.push(stats.peak_memory);
    }
    assert_eq!(peaks[0], peaks[1], "the larger call grew memory: peaks {peaks:?}");
}
