//! `mediagate-bench`: every figure of BENCHMARKS.md in one run, side by side, as medians and
//! ratios measured in the same run. Benchmarks, not tests: nothing here asserts a time.
//!
//! Run through `bench/run.sh` (it installs sharp and builds in release).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use image::{DynamicImage, ImageFormat};
use mediagate::gate::{AdmitOptions, InputMedia, Verdict};
use mediagate::{Gate, Runtime, RuntimeConfig};
use wasmtime_wasi::WasiCtxBuilder;

struct Args {
    runs: usize,
    /// Only the per-call overhead rows (quick, for tuning the engine).
    per_call_only: bool,
    /// Only the conversion rows and the component sizes (`--only convert`).
    convert_only: bool,
    /// Only the canonical re-mux rows (`--only remux`).
    remux_only: bool,
    /// Only the fits against sharp (`--only fit`).
    fits_only: bool,
}

fn parse_args() -> Args {
    let mut runs = 11;
    let mut per_call_only = false;
    let mut convert_only = false;
    let mut remux_only = false;
    let mut fits_only = false;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = it.next().and_then(|v| v.parse().ok()).expect("--runs N"),
            "--quick" => runs = 3,
            "--per-call" => per_call_only = true,
            "--only" => match it.next().as_deref() {
                Some("convert") => convert_only = true,
                Some("remux") => remux_only = true,
                Some("fit") => fits_only = true,
                other => panic!(
                    "--only takes `convert` (the conversion rows and the sizes), `remux` or `fit`, not {other:?}"
                ),
            },
            other => panic!("unknown argument {other}; use --runs N, --quick, --per-call or --only convert|remux|fit"),
        }
    }
    Args { runs, per_call_only, convert_only, remux_only, fits_only }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn corpus(rel: &str) -> PathBuf {
    root().join("tests/corpus").join(rel)
}

/// This process's virtual memory size (`VmSize` of /proc/self/status), in KiB.
fn vm_size_kib() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmSize:")).expect("VmSize in /proc/self/status");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn time<R>(runs: usize, mut f: impl FnMut() -> R) -> (Duration, R) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        last = Some(f());
        times.push(t.elapsed());
    }
    (median(times), last.unwrap())
}

struct Row {
    figure: String,
    measured: String,
    goal: String,
}

fn main() {
    let args = parse_args();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let config = RuntimeConfig { cache_dir: Some(cache.path().to_path_buf()), ..RuntimeConfig::default() };
    let runtime = Runtime::new(config.clone()).unwrap();
    let gate = Gate::new(runtime.clone()).unwrap();
    let mut rows = Vec::new();
    let mut notes = Vec::new();

    print_machine();

    if args.remux_only {
        rows.extend(remux_rows(&rt, &gate, args.runs));
        print_table(args.runs, &rows, &notes);
        return;
    }

    if args.convert_only {
        rows.extend(conversion_rows(&rt, &gate, args.runs, &mut notes));
        rows.extend(size_rows());
        print_table(args.runs, &rows, &notes);
        return;
    }

    let opts = gate.default_options();
    let native_opts = mediagate_guest::Options::default();
    // `--only fit` skips to the fits.
    if !args.fits_only {
        // 1. Per-call overhead: new Store + instantiate from InstancePre + one trivial call (`admit` of
        // no bytes) + drop.
        let nothing = InputMedia::new(Vec::new(), None);
        let per_call = |gate: &Gate, n: usize| {
            rt.block_on(async {
                for _ in 0..200 {
                    gate.admit(&nothing, AdmitOptions::UNSET).await.unwrap().answer.unwrap();
                }
                let mut times = Vec::with_capacity(n);
                for _ in 0..n {
                    let t = Instant::now();
                    gate.admit(&nothing, AdmitOptions::UNSET).await.unwrap().answer.unwrap();
                    times.push(t.elapsed());
                }
                (median(times.clone()), percentile(times, 0.99))
            })
        };
        let (p50, p99) = per_call(&gate, 5000);
        let ondemand = Gate::new(Runtime::new(RuntimeConfig { pooling: false, ..config.clone() }).unwrap()).unwrap();
        let (od50, _) = per_call(&ondemand, 2000);
        rows.push(Row {
            figure: "per-call overhead (Store + instantiate + trivial call + drop), pooling".into(),
            measured: format!("p50 {} (p99 {}); on-demand allocator p50 {}", us(p50), us(p99), us(od50)),
            goal: "≤ 20 µs p50".into(),
        });
        // Its parts: the per-call Store as the gate makes it (limits, epoch callback; no WASI context:
        // the preflight component imports nothing), a bare wasmtime Store, and a WASI context alone
        // (what the gate no longer builds per call).
        let parts = |calls_store: bool| {
            let mut times = Vec::with_capacity(20_000);
            for _ in 0..20_000 {
                let t = Instant::now();
                if calls_store {
                    drop(runtime.store(()));
                } else {
                    drop(wasmtime::Store::new(runtime.engine(), ()));
                }
                times.push(t.elapsed());
            }
            median(times)
        };
        let (store_call, store_bare) = (parts(true), parts(false));
        let (wasi_ctx, _) = time(20_000, || WasiCtxBuilder::new().build());
        rows.push(Row {
            figure: "  of which: the call's Store (limits, epoch callback); a bare Store; a WasiCtx (no longer built)"
                .into(),
            measured: format!("p50 {}; {}; {}", us(store_call), us(store_bare), us(wasi_ctx)),
            goal: "reported".into(),
        });
        // What the pool costs in address space (reserved, not resident): the runtime's VmSize.
        let pooled = |pooling: bool| {
            let before = vm_size_kib();
            let runtime = Runtime::new(RuntimeConfig { pooling, ..config.clone() }).unwrap();
            let reserved = vm_size_kib() - before;
            drop(runtime);
            reserved
        };
        let (pool_kib, on_demand_kib) = (pooled(true), pooled(false));
        rows.push(Row {
            figure: "  the pool's address-space reservation (VmSize of one more runtime): pooling; on-demand".into(),
            measured: format!(
                "{:.1} GiB; {:.1} MiB (limits: {} instances, {} MiB memory each)",
                pool_kib as f64 / (1 << 20) as f64,
                on_demand_kib as f64 / 1024.0,
                config.limits.max_concurrent_calls,
                config.limits.memory_bytes >> 20
            ),
            goal: "reported".into(),
        });
        if args.per_call_only {
            for row in &rows {
                println!("{}: {}", row.figure, row.measured);
            }
            return;
        }

        // 2. Admit a 3 MB PNG (sniff + base64): sandbox ÷ the same Rust code natively. Both end with
        // the block's base64 `data`: the sandbox's bytes cross as `unchanged` and the host encodes them
        // (SIMD); natively the same gate code, then the same encoder (and, for the record, the guest's
        // scalar `base64` crate).
        let png3 = three_mb_png();
        let input = InputMedia::new(png3.clone(), Some("image/png"));
        let (sandbox, data) = time(args.runs * 3, || {
            let v = rt.block_on(gate.admit(&input, opts)).unwrap().answer.unwrap().verdict;
            let Verdict::Admitted(a) = v else { panic!("the 3 MB PNG is admitted") };
            assert!(!a.reencoded, "the 3 MB PNG passes through");
            a.base64(&png3)
        });
        let (native, native_data) = time(args.runs * 3, || {
            let a = mediagate_guest::admit_image(&png3, "image/png", &native_opts).unwrap();
            mediagate::gate::base64(a.bytes(&png3))
        });
        assert_eq!(data, native_data);
        let (native_scalar, _) = time(args.runs * 3, || {
            mediagate_guest::admit_image(&png3, "image/png", &native_opts).unwrap().base64(&png3)
        });
        rows.push(Row {
            figure: format!("admit a {:.1} MB PNG (sniff + base64): sandbox ÷ native", png3.len() as f64 / 1e6),
            measured: format!(
                "{} ÷ {} = {:.2}× (native with scalar base64 {})",
                ms(sandbox),
                ms(native),
                ratio(sandbox, native),
                ms(native_scalar)
            ),
            goal: "≤ 1.25×".into(),
        });
    }

    // 3, 4. Fits against sharp, with the quality guard: the two corpus images, then inputs made
    // from the corpus into target/ (a 12 MP PNG photo, a lossy 4000x3000 WebP, a 50-frame GIF).
    // sharp writes the type the gate produced for the same input.
    let made = [png_photo_12mp(), webp_4000x3000(), gif_50_frames()];
    // The speed goals: the two corpus images at or past sharp, the made ones ≤ 1.5×.
    let at_sharp = "≤ 1.0× (never worse than 2.0×)";
    let fits: [(&str, PathBuf, &str, &str, &str); 5] = [
        ("fit photo-12mp.jpg into 2000² (JPEG out)", corpus("bench/photo-12mp.jpg"), "image/jpeg", ".jpg", at_sharp),
        (
            "fit screenshot-3456x2234.png under the base64 limit",
            corpus("bench/screenshot-3456x2234.png"),
            "image/png",
            ".png",
            at_sharp,
        ),
        ("fit a 12 MP PNG photo (photo-12mp.jpg as a 4000x3000 PNG)", made[0].clone(), "image/png", ".png", "≤ 1.5×"),
        ("fit a 4000x3000 lossy WebP (photo-12mp.jpg, sharp q80)", made[1].clone(), "image/webp", ".webp", "≤ 1.5×"),
        ("fit a 50-frame 2400x1600 GIF (kodim23 upscaled)", made[2].clone(), "image/gif", ".gif", "≤ 1.5×"),
    ];
    for (name, path, mime, ext, goal) in fits {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let mut peak = 0;
        let input = InputMedia::new(bytes.clone(), Some(mime));
        let mut admit = || {
            let answered = rt.block_on(gate.admit(&input, opts)).unwrap();
            peak = peak.max(answered.stats.peak_memory);
            answered.answer.unwrap().verdict
        };
        // A first admission (its verdict names the type sharp writes) and a first fit by sharp
        // warm both up; then the three sides take turns, one fit each, so that a machine whose
        // speed drifts moves all three medians alike and the ratios stay where they are.
        let Verdict::Admitted(admitted) = admit() else { panic!("{file} must be admitted") };
        let sharp_format = admitted.mime.strip_prefix("image/").unwrap();
        let mut sharp_fits = SharpFits::start("fit.mjs", [std::ffi::OsStr::new(sharp_format), path.as_os_str()]);
        sharp_fits.run();
        let (mut sandbox, mut native, mut sharp_times) = (Vec::new(), Vec::new(), Vec::new());
        let mut verdict = None;
        for _ in 0..args.runs {
            let t = Instant::now();
            verdict = Some(admit());
            sandbox.push(t.elapsed());
            let t = Instant::now();
            mediagate_guest::admit_image(&bytes, mime, &native_opts).unwrap();
            native.push(t.elapsed());
            sharp_times.push(sharp_fits.run());
        }
        let (sandbox, native) = (median(sandbox), median(native));
        let Some(Verdict::Admitted(admitted)) = verdict else { panic!("{file} must be admitted") };
        let ours = admitted.bytes(&bytes).to_vec();
        let sharp = sharp_fits.end(sharp_times);
        let d = admitted.dimensions.unwrap();
        let reference = reference_fit(&bytes, (d.width, d.height));
        let psnr_ours = psnr(&image::load_from_memory(&ours).unwrap(), &reference);
        let sharp_img = image::load_from_memory(&sharp.output).unwrap();
        let psnr_sharp = psnr(&sharp_img, &reference);
        rows.push(Row {
            figure: format!("{name}: sandbox ÷ sharp"),
            measured: format!(
                "{} ÷ {} = {:.2}× (native {}; {}x{} {})",
                ms(sandbox),
                ms(sharp.median),
                ratio(sandbox, sharp.median),
                ms(native),
                d.width,
                d.height,
                admitted.mime
            ),
            goal: goal.into(),
        });
        rows.push(Row {
            figure: "  quality: PSNR vs float Lanczos3 reference; bytes vs sharp; guest peak memory".to_string(),
            measured: format!(
                "ours {psnr_ours:.1} dB, sharp {psnr_sharp:.1} dB; {} vs {} bytes = {:.2}×; {:.1} MiB",
                ours.len(),
                sharp.output.len(),
                ours.len() as f64 / sharp.output.len() as f64,
                peak as f64 / (1 << 20) as f64
            ),
            goal: "≥ 32 dB; ≤ 1.25× sharp's size".into(),
        });
        if ext == ".jpg" {
            rows.push(Row {
                figure: "guest peak linear memory while fitting the 12 MP photo".into(),
                measured: format!("{:.1} MiB", peak as f64 / (1 << 20) as f64),
                goal: "≤ 64 MiB".into(),
            });
        }
        if notes.is_empty() {
            notes.push(format!("sharp {}", sharp.version));
        }
    }

    if args.fits_only {
        print_table(args.runs, &rows, &notes);
        return;
    }

    // 5. `mediagate admit` of a small PNG, whole process.
    let bin = root().join("target/release/mediagate");
    let icon = root().join("examples/icon.png");
    let warm_dir = tempfile::tempdir().unwrap();
    let admit = |cache_dir: &Path| {
        let out = Command::new(&bin)
            .args(["admit", "--json"])
            .arg(&icon)
            .env(mediagate::facts::env::CACHE_DIR, cache_dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    admit(warm_dir.path());
    let (warm, _) = time(args.runs * 3, || admit(warm_dir.path()));
    let (cold, _) = time(args.runs.min(5), || {
        let empty = tempfile::tempdir().unwrap();
        admit(empty.path())
    });
    rows.push(Row {
        figure: "`mediagate admit` of a small PNG, whole process, warm (second and later runs)".into(),
        measured: ms(warm),
        goal: "≤ 15 ms wall".into(),
    });
    rows.push(Row {
        figure: "the same, first run on a machine with an empty cache (the carried precompiled code)".into(),
        measured: ms(cold),
        goal: "≤ 50 ms wall".into(),
    });

    // 6. Throughput of the 12 MP fit with concurrent calls: 2 cores ÷ 1 core.
    let photo = Arc::new(InputMedia::new(std::fs::read(corpus("bench/photo-12mp.jpg")).unwrap(), Some("image/jpeg")));
    let calls = (args.runs * 2).max(8);
    let throughput = |workers: usize| {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().unwrap();
        let gate = gate.clone();
        let photo = photo.clone();
        rt.block_on(async move {
            let t = Instant::now();
            let tasks: Vec<_> = (0..calls)
                .map(|_| {
                    let (gate, photo) = (gate.clone(), photo.clone());
                    tokio::spawn(async move { gate.admit(&photo, opts).await.unwrap().answer.unwrap() })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
            calls as f64 / t.elapsed().as_secs_f64()
        })
    };
    let one = throughput(1);
    let two = throughput(2);
    rows.push(Row {
        figure: "throughput of the 12 MP fit, concurrent calls: 2 cores ÷ 1 core".into(),
        measured: format!("{two:.2} ÷ {one:.2} fits/s = {:.2}×", two / one),
        goal: "≥ 1.8×".into(),
    });

    // 7. One read_image call on the 12 MP photo, outside the VLM: a loopback server that answers at
    // once, so the time is admission + instantiation + workspace I/O + the HTTP upload.
    let vlm_url = instant_vlm_server();
    let tool = mediagate::ReadImageTool::new(
        runtime.clone(),
        Some(mediagate::VlmConfig::new(mediagate::Api::OpenAi, vlm_url, "bench")),
    )
    .unwrap();
    let ws = corpus("bench");
    let (tool_time, answer) = time(args.runs, || {
        rt.block_on(tool.read_image(&ws, "photo-12mp.jpg", None, None, Arc::new(|_, _| {}))).unwrap().answer.unwrap()
    });
    assert_eq!(answer, "ok");
    rows.push(Row {
        figure: "read_image on photo-12mp.jpg, time outside the VLM (instant loopback server)".into(),
        measured: ms(tool_time),
        goal: "reported".into(),
    });

    // 8. Conversions, each beside what a user would use instead.
    rows.extend(conversion_rows(&rt, &gate, args.runs, &mut notes));

    // 9. The canonical re-mux alone, beside libjpeg-turbo's least checking read.
    rows.extend(remux_rows(&rt, &gate, args.runs));

    // Component sizes.
    rows.extend(size_rows());

    print_table(args.runs, &rows, &notes);
}

/// The canonical re-mux (guest/src/remux.rs) on the benchmark photo and screenshot: natively (the
/// re-mux alone: walk, copy, compare with the input) and the whole admission through the sandbox
/// with nothing else to do (`verify = header`, downsampling off, OpenAI's 20 MB base64 limit so
/// the screenshot fits) — once as the corpus has them (no metadata: admitted `unchanged`) and once
/// with a GPS EXIF segment added to the photo (the re-mux's bytes cross back).
fn remux_rows(rt: &tokio::runtime::Runtime, gate: &Gate, runs: usize) -> Vec<Row> {
    use mediagate::gate::Provider;
    let photo = std::fs::read(corpus("bench/photo-12mp.jpg")).unwrap();
    let tagged = {
        let exif = std::fs::read(corpus("metadata/gps-exif.jpg")).unwrap();
        // The fixture's EXIF segment (right after its JFIF APP0), put into the photo at the same place.
        let app0 = 4 + usize::from(u16::from_be_bytes([exif[4], exif[5]]));
        let app1 = app0 + 2 + usize::from(u16::from_be_bytes([exif[app0 + 2], exif[app0 + 3]]));
        let at = 4 + usize::from(u16::from_be_bytes([photo[4], photo[5]]));
        [&photo[..at], &exif[app0..app1], &photo[at..]].concat()
    };
    let shot = std::fs::read(corpus("bench/screenshot-3456x2234.png")).unwrap();
    let options = AdmitOptions {
        downsample: Some(false),
        provider: Some(Provider::Openai),
        verify: Some(mediagate::gate::Verify::Header),
        keep_metadata: Some(false),
    };
    let cases: [(&str, &[u8], mediagate_guest::signature::ImageType, &str); 3] = [
        ("photo-12mp.jpg", &photo, mediagate_guest::signature::ImageType::Jpeg, "image/jpeg"),
        ("photo-12mp.jpg + GPS EXIF", &tagged, mediagate_guest::signature::ImageType::Jpeg, "image/jpeg"),
        ("screenshot-3456x2234.png", &shot, mediagate_guest::signature::ImageType::Png, "image/png"),
    ];
    let mut rows = Vec::new();
    // libjpeg-turbo asked for the least it can decode of the photo: every code read, only the DC
    // coefficient transformed (`djpeg -scale 1/8`). Its wall time counts the process's start
    // (about a millisecond), which the re-mux does not pay.
    let djpeg = time(runs * 3, || {
        let status = std::process::Command::new("djpeg")
            .args(["-scale", "1/8", "-outfile", "/dev/null"])
            .arg(corpus("bench/photo-12mp.jpg"))
            .status()
            .expect("djpeg (libjpeg-turbo-progs) runs");
        assert!(status.success(), "djpeg reads the photo");
    })
    .0;
    for (name, bytes, t, mime) in cases {
        let (native, canonical) = time(runs * 3, || mediagate_guest::remux::canonical(bytes, t, false).unwrap());
        let input = InputMedia::new(bytes.to_vec(), Some(mime));
        let (sandbox, verdict) =
            time(runs * 3, || rt.block_on(gate.admit(&input, options)).unwrap().answer.unwrap().verdict);
        let Verdict::Admitted(a) = verdict else { panic!("{name} is admitted") };
        rows.push(Row {
            figure: format!(
                "re-mux {name} ({:.1} MB): native; whole admission in the sandbox (header, no downsample)",
                bytes.len() as f64 / 1e6
            ),
            measured: format!(
                "{}; {} ({}, dropped {:?})",
                ms(native),
                ms(sandbox),
                if canonical.bytes.is_some() { "new bytes" } else { "unchanged" },
                a.dropped
            ),
            goal: "≤ 5 ms (the re-mux)".into(),
        });
        if name == "photo-12mp.jpg" {
            let ratio = |d: Duration| d.as_secs_f64() / djpeg.as_secs_f64();
            rows.push(Row {
                figure: "  the re-mux of photo-12mp.jpg ÷ `djpeg -scale 1/8` of it (wall, its process start included): native; the sandbox's whole admission".into(),
                measured: format!("{:.2}×; {:.2}× (djpeg {})", ratio(native), ratio(sandbox), ms(djpeg)),
                goal: "≤ 1.0×".into(),
            });
        }
    }
    rows
}

fn print_table(runs: usize, rows: &[Row], notes: &[String]) {
    println!("\n| figure | measured (median of {runs} runs) | goal |\n|---|---|---|");
    for r in rows {
        println!("| {} | {} | {} |", r.figure, r.measured, r.goal);
    }
    for n in notes {
        println!("\n{n}");
    }
}

/// Every component the host carries, raw and gzip -9 (what a download costs).
fn size_rows() -> Vec<Row> {
    use mediagate::component::{AGENT_TOOL, CONVERT, HTTP_GATE, PREFLIGHT};
    [
        ("preflight", PREFLIGHT, "≤ 1 MB gzip (browsers download it)"),
        ("convert", CONVERT, "reported (loaded only by a converting call)"),
        ("agent-tool", AGENT_TOOL, "reported"),
        ("http-gate", HTTP_GATE, "reported"),
    ]
    .into_iter()
    .map(|(name, wasm, goal)| Row {
        figure: format!("{name} component size (raw / gzip -9)"),
        measured: format!("{} KB / {} KB", wasm.len() / 1000, gzip_len(wasm) / 1000),
        goal: goal.into(),
    })
    .collect()
}

/// What the user would run instead of the gate's conversion.
enum Other {
    /// sharp (libvips; librsvg for SVG, libtiff, libnsgif `pages: 1`) to the same size and type.
    Sharp,
    /// `pdftoppm -png -scale-to-x W -scale-to-y H -f 1 -l 1` (poppler), the same pixel size.
    Pdftoppm,
    /// Neither reads it (sharp has no BMP or ICO loader): ours alone, PSNR vs the fixture's
    /// Pillow reference.
    Nothing(PathBuf),
}

/// The conversions through the real host and the `convert` component: time (median of
/// `runs`, after one warm-up call that also loads the component), output, guest peak memory, and
/// the same beside the other tool, PSNR between the two outputs composited over white.
fn conversion_rows(rt: &tokio::runtime::Runtime, gate: &Gate, runs: usize, notes: &mut Vec<String>) -> Vec<Row> {
    let conv = |f: &str| corpus(&format!("convert/{f}"));
    let openai = AdmitOptions { provider: Some(mediagate::gate::Provider::Openai), ..gate.default_options() };
    let opts = gate.default_options();
    let cases: Vec<(&str, PathBuf, &str, AdmitOptions, Other)> = vec![
        ("SVG → PNG: svg-flowchart.svg (corpus)", conv("svg-flowchart.svg"), "image/svg+xml", opts, Other::Sharp),
        (
            "SVG → PNG: svg-chart-gradients.svg (corpus)",
            conv("svg-chart-gradients.svg"),
            "image/svg+xml",
            opts,
            Other::Sharp,
        ),
        (
            "SVG → PNG: a generated 1600x1200 diagram (600 boxes, gradients, text)",
            svg_diagram_large(),
            "image/svg+xml",
            opts,
            Other::Sharp,
        ),
        ("TIFF (LZW) → PNG: tiff-lzw.tif (corpus)", conv("tiff-lzw.tif"), "image/tiff", opts, Other::Sharp),
        ("TIFF (LZW) 4000x3000 (photo-12mp.jpg, sharp) → fitted", tiff_4000x3000(), "image/tiff", opts, Other::Sharp),
        (
            "BMP 24-bit 192x128 → PNG",
            conv("bmp-24bit-bottom-up.bmp"),
            "image/bmp",
            opts,
            Other::Nothing(conv("bmp-24bit-bottom-up.ref.png")),
        ),
        (
            "ICO (16–256, PNG entries) → PNG of the largest",
            conv("ico-multi-pillow.ico"),
            "image/vnd.microsoft.icon",
            opts,
            Other::Nothing(conv("ico-multi-pillow.ref.png")),
        ),
        (
            "PDF page 1 → image: pdf-cairo-chart.pdf",
            conv("pdf-cairo-chart.pdf"),
            "application/pdf",
            opts,
            Other::Pdftoppm,
        ),
        (
            "PDF page 1 → image: pdf-text-chromium.pdf",
            conv("pdf-text-chromium.pdf"),
            "application/pdf",
            opts,
            Other::Pdftoppm,
        ),
        (
            "animated GIF → first frame (OpenAI): gif-animated-pillow.gif",
            conv("gif-animated-pillow.gif"),
            "image/gif",
            openai,
            Other::Sharp,
        ),
        (
            "animated GIF → first frame (OpenAI): the 50-frame 2400x1600 GIF",
            gif_50_frames(),
            "image/gif",
            openai,
            Other::Sharp,
        ),
    ];
    let mut rows = Vec::new();
    for (name, path, mime, options, other) in cases {
        let bytes = std::fs::read(&path).unwrap();
        let input = InputMedia::new(bytes.clone(), Some(mime)).converting();
        let input = if mime == "application/pdf" { input.page(1) } else { input };
        let call = || {
            let answered = rt.block_on(gate.admit(&input, options)).unwrap();
            (answered.answer.unwrap_or_else(|e| panic!("{name}: {e:?}")), answered.stats)
        };
        // A first conversion warms the gate up and names what the other tool writes (its type
        // and size); after the other's first run, the two take turns, one run each.
        let Verdict::Admitted(first) = call().0.verdict else { panic!("{name}: not admitted") };
        let d = first.dimensions.unwrap();
        let format = first.mime.strip_prefix("image/").unwrap();
        let size = [d.width.to_string(), d.height.to_string()];
        let mut turns = match other {
            Other::Sharp => {
                let args = [std::ffi::OsStr::new(format), path.as_os_str(), size[0].as_ref(), size[1].as_ref()];
                Turns::Sharp(SharpFits::start("convert.mjs", args))
            }
            Other::Pdftoppm => Turns::Pdftoppm(PdftoppmRenders::new(&path, (d.width, d.height))),
            Other::Nothing(reference) => Turns::Nothing(reference),
        };
        turns.run();
        let (mut peak, mut ours_times, mut other_times, mut converted) = (0, Vec::new(), Vec::new(), None);
        for _ in 0..runs {
            let t = Instant::now();
            let (answer, stats) = call();
            ours_times.push(t.elapsed());
            peak = peak.max(stats.peak_memory);
            converted = Some(answer);
            other_times.extend(turns.run());
        }
        let ours_time = median(ours_times);
        let converted = converted.unwrap();
        let Verdict::Admitted(admitted) = converted.verdict else { panic!("{name}: not admitted") };
        let note = converted.conversion.map(|c| format!("from {}: {}", c.from, c.note)).unwrap_or_default();
        let ours = admitted.bytes(&bytes).to_vec();
        let ours_img = image::load_from_memory(&ours).unwrap();
        let d = admitted.dimensions.unwrap();
        let (tool, other_time, other_out) = match turns {
            Turns::Sharp(fits) => {
                let s = fits.end(other_times);
                let v = format!("sharp {}", s.version);
                if !notes.contains(&v) {
                    notes.push(v);
                }
                ("sharp", Some(s.median), Some(s.output))
            }
            Turns::Pdftoppm(renders) => {
                let v = pdftoppm_version();
                if !notes.contains(&v) {
                    notes.push(v);
                }
                ("pdftoppm", Some(median(other_times)), Some(renders.output()))
            }
            Turns::Nothing(reference) => ("nothing", None, Some(std::fs::read(reference).unwrap())),
        };
        let other_img = other_out.as_ref().map(|b| image::load_from_memory(b).unwrap());
        let psnr_text = match &other_img {
            Some(o) if (o.width(), o.height()) == (ours_img.width(), ours_img.height()) => {
                let db = psnr(&over_white(&ours_img), &over_white(o));
                if db >= 100.0 { "identical pixels".into() } else { format!("{db:.1} dB") }
            }
            Some(o) => format!("not comparable ({}x{} vs {}x{})", o.width(), o.height(), d.width, d.height),
            None => "—".into(),
        };
        let (figure, measured) = match other_time {
            Some(t) => (
                format!("{name}: sandbox ÷ {tool}"),
                format!(
                    "{} ÷ {} = {:.2}× ({} bytes in; {}x{} {}; {note})",
                    ms(ours_time),
                    ms(t),
                    ratio(ours_time, t),
                    bytes.len(),
                    d.width,
                    d.height,
                    admitted.mime
                ),
            ),
            None => (
                format!("{name}: sandbox (sharp reads neither BMP nor ICO)"),
                format!(
                    "{} ({} bytes in; {}x{} {}; {note})",
                    ms(ours_time),
                    bytes.len(),
                    d.width,
                    d.height,
                    admitted.mime
                ),
            ),
        };
        rows.push(Row { figure, measured, goal: "reported".into() });
        let out_len = other_out.as_ref().map(Vec::len).unwrap_or(0);
        rows.push(Row {
            figure: if other_time.is_some() {
                format!("  PSNR ours vs {tool} (over white); bytes vs {tool}; guest peak memory")
            } else {
                "  PSNR ours vs the fixture's Pillow reference (over white); bytes; guest peak memory".into()
            },
            measured: if other_time.is_some() {
                format!(
                    "{psnr_text}; {} vs {} bytes = {:.2}×; {:.1} MiB",
                    ours.len(),
                    out_len,
                    ours.len() as f64 / out_len as f64,
                    peak as f64 / (1 << 20) as f64
                )
            } else {
                format!("{psnr_text}; {} bytes; {:.1} MiB", ours.len(), peak as f64 / (1 << 20) as f64)
            },
            goal: "reported".into(),
        });
    }
    rows
}

/// An image as RGB composited over white (alpha-weighted), as the fixtures' references compare.
fn over_white(img: &DynamicImage) -> DynamicImage {
    let rgba = img.to_rgba32f();
    let mut out = image::Rgb32FImage::new(rgba.width(), rgba.height());
    for (o, p) in out.pixels_mut().zip(rgba.pixels()) {
        let a = p[3].clamp(0.0, 1.0);
        *o = image::Rgb([0, 1, 2].map(|c| p[c].clamp(0.0, 1.0) * a + (1.0 - a)));
    }
    DynamicImage::ImageRgb32F(out)
}

/// The other side of a conversion's turns: sharp, pdftoppm, or nothing (the fixture's reference
/// image to compare with).
enum Turns {
    Sharp(SharpFits),
    Pdftoppm(PdftoppmRenders),
    Nothing(PathBuf),
}

impl Turns {
    /// One run of the other tool; its time (none where there is no other tool).
    fn run(&mut self) -> Option<Duration> {
        match self {
            Turns::Sharp(fits) => Some(fits.run()),
            Turns::Pdftoppm(renders) => Some(renders.run()),
            Turns::Nothing(_) => None,
        }
    }
}

/// `pdftoppm` rendering page 1 at the gate's pixel size, a whole process each run (the way a user
/// runs it: the time includes its start-up, fontconfig's included).
struct PdftoppmRenders {
    input: PathBuf,
    size: (u32, u32),
    dir: tempfile::TempDir,
}

impl PdftoppmRenders {
    fn new(input: &Path, size: (u32, u32)) -> Self {
        PdftoppmRenders { input: input.to_path_buf(), size, dir: tempfile::tempdir().unwrap() }
    }

    fn run(&mut self) -> Duration {
        let t = Instant::now();
        let out = Command::new("pdftoppm")
            .args(["-png", "-singlefile", "-f", "1", "-l", "1"])
            .args(["-scale-to-x", &self.size.0.to_string(), "-scale-to-y", &self.size.1.to_string()])
            .arg(&self.input)
            .arg(self.dir.path().join("page"))
            .output()
            .expect("pdftoppm must be installed (bench/run.sh installs poppler-utils)");
        let elapsed = t.elapsed();
        assert!(out.status.success(), "pdftoppm failed: {}", String::from_utf8_lossy(&out.stderr));
        elapsed
    }

    /// The last run's page.
    fn output(&self) -> Vec<u8> {
        std::fs::read(self.dir.path().join("page.png")).unwrap()
    }
}

fn pdftoppm_version() -> String {
    let out = Command::new("pdftoppm").arg("-v").output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or("").trim().to_string();
    format!("pdftoppm: {text}")
}

/// A large diagram SVG: 600 rounded boxes (30 x 20) with linear gradients, a label each in DejaVu
/// Sans, and a curved connector between neighbours, on a 1600x1200 canvas. Made once into target/.
fn svg_diagram_large() -> PathBuf {
    use std::fmt::Write;
    let path = root().join("target/bench-diagram-1600x1200.svg");
    if !path.exists() {
        let mut s = String::from(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1600\" height=\"1200\" viewBox=\"0 0 1600 1200\">\n<defs>\n",
        );
        for g in 0..6 {
            let hue = g * 60;
            writeln!(
                s,
                "<linearGradient id=\"g{g}\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\"><stop offset=\"0\" stop-color=\"hsl({hue},70%,85%)\"/><stop offset=\"1\" stop-color=\"hsl({hue},60%,60%)\"/></linearGradient>"
            )
            .unwrap();
        }
        s.push_str("</defs>\n<rect width=\"1600\" height=\"1200\" fill=\"#fafafa\"/>\n");
        for row in 0..20 {
            for col in 0..30 {
                let (x, y) = (8 + col * 53, 10 + row * 59);
                let i = row * 30 + col;
                if col < 29 {
                    writeln!(
                        s,
                        "<path d=\"M{} {} C{} {} {} {} {} {}\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.2\"/>",
                        x + 44,
                        y + 15,
                        x + 48,
                        y + 15 + (i % 3) * 8 - 8,
                        x + 49,
                        y + 15,
                        x + 53,
                        y + 15
                    )
                    .unwrap();
                }
                writeln!(
                    s,
                    "<rect x=\"{x}\" y=\"{y}\" width=\"44\" height=\"30\" rx=\"5\" fill=\"url(#g{})\" stroke=\"#333\"/><text x=\"{}\" y=\"{}\" font-family=\"DejaVu Sans\" font-size=\"9\" text-anchor=\"middle\">n{i}</text>",
                    i % 6,
                    x + 22,
                    y + 19
                )
                .unwrap();
            }
        }
        s.push_str("</svg>\n");
        std::fs::write(&path, s).unwrap();
    }
    path
}

/// A 4000x3000 LZW TIFF: photo-12mp.jpg through sharp (bench/sharp/make-tiff.mjs), since the
/// bench's image crate writes no TIFF. Made once into target/.
fn tiff_4000x3000() -> PathBuf {
    let path = root().join("target/bench-photo-4000x3000-lzw.tif");
    if !path.exists() {
        let out = Command::new("node")
            .arg(root().join("bench/sharp/make-tiff.mjs"))
            .arg(corpus("bench/photo-12mp.jpg"))
            .arg(&path)
            .output()
            .expect("node must be installed");
        assert!(out.status.success(), "make-tiff.mjs failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    path
}

/// An OpenAI-compatible endpoint on 127.0.0.1 that reads each request and answers `ok` at once.
fn instant_vlm_server() -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                loop {
                    let mut len = 0usize;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap_or(0);
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; len];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let events = "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
                    let response = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{events}",
                        events.len()
                    );
                    if reader.get_mut().write_all(response.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    format!("http://{addr}/v1")
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn print_machine() {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let date = Command::new("date")
        .arg("-u")
        .arg("+%Y-%m-%d")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    println!("date {date}; {cores} cores ({cpu}); {rustc}; wasmtime 48.0.8; node {node}");
}

/// A ~3 MB PNG that passes through the gate (≤ 3.75 MiB, ≤ 2000 px): the 12 MP photo at 0.41×.
fn three_mb_png() -> Vec<u8> {
    let path = root().join("target/bench-3mb-v2.png");
    if let Ok(b) = std::fs::read(&path) {
        return b;
    }
    let img = image::open(corpus("bench/photo-12mp.jpg")).unwrap();
    let small = img.resize_exact(1640, 1230, image::imageops::FilterType::Lanczos3);
    let mut out = std::io::Cursor::new(Vec::new());
    small.write_to(&mut out, ImageFormat::Png).unwrap();
    let bytes = out.into_inner();
    std::fs::write(&path, &bytes).unwrap();
    bytes
}

/// A 12 MP PNG photo: photo-12mp.jpg (4000x3000) decoded and stored as PNG (level 6, adaptive
/// filters; about 20 MB). Made once into target/.
fn png_photo_12mp() -> PathBuf {
    let path = root().join("target/bench-photo-12mp.png");
    if !path.exists() {
        let img = image::open(corpus("bench/photo-12mp.jpg")).unwrap();
        let mut out = Vec::new();
        let encoder = image::codecs::png::PngEncoder::new_with_quality(
            &mut out,
            image::codecs::png::CompressionType::Default,
            image::codecs::png::FilterType::Adaptive,
        );
        img.write_with_encoder(encoder).unwrap();
        std::fs::write(&path, out).unwrap();
    }
    path
}

/// A 4000x3000 lossy WebP (quality 80): photo-12mp.jpg through sharp (bench/sharp/make-webp.mjs),
/// since the image crate writes lossless WebP only. Made once into target/.
fn webp_4000x3000() -> PathBuf {
    let path = root().join("target/bench-photo-4000x3000.webp");
    if !path.exists() {
        let out = Command::new("node")
            .arg(root().join("bench/sharp/make-webp.mjs"))
            .arg(corpus("bench/photo-12mp.jpg"))
            .arg(&path)
            .output()
            .expect("node must be installed");
        assert!(out.status.success(), "make-webp.mjs failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    path
}

/// A 50-frame GIF: kodim23 upscaled to 2400x1600 as the first frame (the one the gate and sharp
/// decode), then 49 frames of 480x320 patches at moving offsets, as an animation's later frames
/// usually are. Written with the image crate's GIF encoder. Made once into target/.
fn gif_50_frames() -> PathBuf {
    use image::{Delay, Frame, RgbaImage};
    let path = root().join("target/bench-anim-50.gif");
    if !path.exists() {
        let base = image::open(corpus("photos/kodim23.png"))
            .unwrap()
            .resize_exact(2400, 1600, image::imageops::FilterType::CatmullRom)
            .to_rgba8();
        let delay = Delay::from_numer_denom_ms(100, 1);
        let mut frames = vec![Frame::from_parts(base.clone(), 0, 0, delay)];
        for i in 1..50u32 {
            let (x, y) = ((i * 37) % (2400 - 480), (i * 23) % (1600 - 320));
            let patch: RgbaImage = image::imageops::crop_imm(&base, (x + 240) % 1920, y, 480, 320).to_image();
            frames.push(Frame::from_parts(patch, x, y, delay));
        }
        let mut out = Vec::new();
        {
            let mut encoder = image::codecs::gif::GifEncoder::new_with_speed(&mut out, 10);
            encoder.encode_frames(frames).unwrap();
        }
        std::fs::write(&path, out).unwrap();
    }
    path
}

struct Sharp {
    median: Duration,
    output: Vec<u8>,
    version: String,
}

/// A sharp pipeline of one input, run once each time it is asked (bench/sharp/serve.mjs, one node
/// process): the bench times its runs between its own. A run's time is sharp's own (node's clock
/// around the pipeline), so the pipe between the processes is not counted.
struct SharpFits {
    child: std::process::Child,
    requests: std::process::ChildStdin,
    answers: std::io::BufReader<std::process::ChildStdout>,
    out_file: tempfile::NamedTempFile,
}

impl SharpFits {
    /// `bench/sharp/<script>`, which takes the output's path then `args`.
    fn start<A: AsRef<std::ffi::OsStr>>(script: &str, args: impl IntoIterator<Item = A>) -> Self {
        use std::process::Stdio;
        let out_file = tempfile::NamedTempFile::new().unwrap();
        let mut child = Command::new("node")
            .arg(root().join("bench/sharp").join(script))
            .arg(out_file.path())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node must be installed");
        let requests = child.stdin.take().unwrap();
        let answers = std::io::BufReader::new(child.stdout.take().unwrap());
        SharpFits { child, requests, answers, out_file }
    }

    fn ask(&mut self, request: &str) -> serde_json::Value {
        use std::io::{BufRead, Write};
        writeln!(self.requests, "{request}").and_then(|()| self.requests.flush()).unwrap();
        let mut line = String::new();
        self.answers.read_line(&mut line).unwrap();
        serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("sharp failed (run bench/run.sh to install it); it answered {line:?}"))
    }

    /// One run; its time.
    fn run(&mut self) -> Duration {
        Duration::from_secs_f64(self.ask("run")["ms"].as_f64().unwrap() / 1e3)
    }

    /// The last run's output and sharp's version, with the median of `times`.
    fn end(mut self, times: Vec<Duration>) -> Sharp {
        let json = self.ask("end");
        drop(self.requests);
        assert!(self.child.wait().unwrap().success(), "sharp's process failed");
        Sharp {
            median: median(times),
            output: std::fs::read(self.out_file.path()).unwrap(),
            version: sharp_version(&json),
        }
    }
}

fn sharp_version(json: &serde_json::Value) -> String {
    format!(
        "{} (libvips {})",
        json["version"]["sharp"].as_str().unwrap_or("?"),
        json["version"]["vips"].as_str().unwrap_or("?")
    )
}

/// The high-quality reference: full decode, upright, float Lanczos3 to the same size.
fn reference_fit(bytes: &[u8], (w, h): (u32, u32)) -> DynamicImage {
    let img = image::load_from_memory(bytes).unwrap();
    DynamicImage::ImageRgb32F(img.to_rgb32f()).resize_exact(w, h, image::imageops::FilterType::Lanczos3)
}

fn psnr(a: &DynamicImage, reference: &DynamicImage) -> f64 {
    let (a, r) = (a.to_rgb32f(), reference.to_rgb32f());
    assert_eq!(a.dimensions(), r.dimensions(), "compared at the same size");
    let mse: f64 = a
        .as_raw()
        .iter()
        .zip(r.as_raw())
        .map(|(x, y)| f64::from((x.clamp(0.0, 1.0) - y.clamp(0.0, 1.0)).powi(2)))
        .sum::<f64>()
        / a.as_raw().len() as f64;
    10.0 * (1.0 / mse.max(1e-12)).log10()
}

fn gzip_len(bytes: &[u8]) -> usize {
    let mut child = Command::new("gzip")
        .arg("-9c")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = bytes.to_vec();
    let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &data));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out.stdout.len()
}
