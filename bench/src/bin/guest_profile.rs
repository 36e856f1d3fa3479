//! `guest_profile` (a binary of `mediagate-bench`): where one `admit` call (FILE claimed as MIME)
//! spends its time inside wasmtime.
//!
//! A sampling profiler of the guest's own code: the engine's epoch advances every
//! `--interval-us` (default 1000 µs) while the call runs, and on each tick the epoch callback
//! captures the guest's stack (`WasmBacktrace`, the frames wasmtime records for traps) and counts
//! it — the sampling `wasmtime::GuestProfiler` does, without the profiling feature and its
//! dependencies. It prints the functions by self and by inclusive share of the samples.
//!
//! Function names come from the component's name section, which the carried components strip
//! (`[profile.guest] strip = true`); profile an unstripped build of the same source (BENCHMARKS.md,
//! "Where the time goes", has the commands). The code is compiled with the host's own settings
//! (`lib/src/engine_config.rs`), so it is the code the gate runs.
//!
//!     target/release/guest_profile COMPONENT.wasm FILE MIME [--runs N] [--interval-us N] [--top N] [--folded PATH]
//!
//! `--folded` also writes every sampled stack (outermost frame first, `;`-joined, then its count).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, Linker, Val};
use wasmtime::{Engine, Store, UpdateDeadline, WasmBacktrace};

#[path = "../../../lib/src/engine_config.rs"]
mod engine_config;

#[derive(Default)]
struct Samples {
    total: u64,
    /// Samples whose innermost guest frame is this function.
    by_self: HashMap<String, u64>,
    /// Samples with this function anywhere on the stack (counted once per sample).
    by_inclusive: HashMap<String, u64>,
    /// Whole stacks, outermost frame first, joined by `;` (the "folded" format of flame graphs).
    folded: HashMap<String, u64>,
}

fn main() -> wasmtime::Result<()> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: guest_profile COMPONENT.wasm FILE MIME [--runs N] [--interval-us N] [--top N] [--folded PATH]";
    let (Some(component_path), Some(file), Some(mime)) = (args.next(), args.next(), args.next()) else {
        panic!("{usage}")
    };
    let (mut runs, mut interval_us, mut top, mut folded) = (5usize, 1000u64, 40usize, None);
    while let Some(a) = args.next() {
        if a == "--folded" {
            folded = Some(args.next().unwrap_or_else(|| panic!("{usage}")));
            continue;
        }
        let value = args.next().and_then(|v| v.parse::<u64>().ok()).unwrap_or_else(|| panic!("{usage}"));
        match a.as_str() {
            "--runs" => runs = value as usize,
            "--interval-us" => interval_us = value,
            "--top" => top = value as usize,
            _ => panic!("{usage}"),
        }
    }
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{file}: {e}"));

    let engine = Engine::new(&engine_config::code_config())?;
    let component = Component::from_file(&engine, &component_path)?;
    let linker = Linker::<Samples>::new(&engine);
    let pre = linker.instantiate_pre(&component)?;

    let running = Arc::new(AtomicBool::new(true));
    let ticker = {
        let (engine, running) = (engine.clone(), running.clone());
        std::thread::spawn(move || {
            while running.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_micros(interval_us));
                engine.increment_epoch();
            }
        })
    };

    let mut samples = Samples::default();
    let mut times = Vec::new();
    for _ in 0..runs {
        let mut store = Store::new(&engine, std::mem::take(&mut samples));
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut ctx| {
            let trace = WasmBacktrace::capture(&ctx);
            let names: Vec<String> = trace
                .frames()
                .iter()
                .map(|f| f.func_name().map_or_else(|| format!("function[{}]", f.func_index()), demangle))
                .collect();
            let s = ctx.data_mut();
            s.total += 1;
            if let Some(leaf) = names.first() {
                *s.by_self.entry(leaf.clone()).or_default() += 1;
            }
            let stack: Vec<&str> = names.iter().rev().map(String::as_str).collect();
            *s.folded.entry(stack.join(";")).or_default() += 1;
            let mut seen = std::collections::HashSet::new();
            for n in names {
                if seen.insert(n.clone()) {
                    *s.by_inclusive.entry(n).or_default() += 1;
                }
            }
            Ok(UpdateDeadline::Continue(1))
        });
        let instance = pre.instantiate(&mut store)?;
        let admission = instance
            .get_export_index(&mut store, None, "mediagate:gate/admission@0.3.0")
            .expect("the component exports mediagate:gate/admission@0.3.0");
        let func = |store: &mut Store<Samples>, name: &str| {
            let index = instance.get_export_index(&mut *store, Some(&admission), name).expect("export");
            instance.get_func(&mut *store, index).expect("a function")
        };
        let default_options = func(&mut store, "default-options");
        let mut options = [Val::Bool(false)];
        default_options.call(&mut store, &[], &mut options)?;
        let admit = func(&mut store, "admit");
        let input = Val::Record(vec![
            ("bytes".into(), Val::List(bytes.iter().map(|b| Val::U8(*b)).collect())),
            ("claimed-mime".into(), Val::Option(Some(Box::new(Val::String(mime.clone()))))),
            ("name".into(), Val::Option(None)),
            ("convert".into(), Val::Bool(false)),
            ("page".into(), Val::Option(None)),
        ]);
        let params = [input, options[0].clone()];
        let mut answer = [Val::Bool(false)];
        let (before, started, cpu) = (store.data().total, Instant::now(), thread_cpu_time());
        admit.call(&mut store, &params, &mut answer)?;
        let (wall, cpu) = (started.elapsed(), thread_cpu_time() - cpu);
        times.push(cpu);
        let case = match &answer[0] {
            Val::Result(Ok(Some(admission))) => match &**admission {
                Val::Record(fields) => fields
                    .iter()
                    .find_map(|(name, v)| match v {
                        Val::Variant(case, _) if name == "verdict" => Some(case.as_str()),
                        _ => None,
                    })
                    .unwrap_or("answered"),
                _ => "answered",
            },
            Val::Result(Err(_)) => "input error",
            _ => "answered",
        };
        eprintln!(
            "{case}: {:.1} ms of CPU ({:.1} ms wall), {} samples",
            cpu.as_secs_f64() * 1e3,
            wall.as_secs_f64() * 1e3,
            store.data().total - before
        );
        samples = store.into_data();
    }
    running.store(false, Ordering::Relaxed);
    ticker.join().expect("the ticker thread");

    times.sort();
    println!(
        "{file} ({mime}): {runs} calls, median {:.1} ms of the calling thread's CPU; {} samples every {interval_us} µs",
        times[times.len() / 2].as_secs_f64() * 1e3,
        samples.total
    );
    let table = |title: &str, counts: &HashMap<String, u64>| {
        let mut rows: Vec<_> = counts.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        println!("\n{title}");
        for (name, n) in rows.into_iter().take(top) {
            println!("{:6.1}%  {n:6}  {name}", 100.0 * *n as f64 / samples.total.max(1) as f64);
        }
    };
    if let Some(path) = folded {
        let lines: String = samples.folded.iter().map(|(stack, n)| format!("{stack} {n}\n")).collect();
        std::fs::write(&path, lines).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    table("self (innermost guest frame)", &samples.by_self);
    table("inclusive (anywhere on the stack)", &samples.by_inclusive);
    Ok(())
}

/// The CPU time this thread has run (the scheduler's own count, `/proc/thread-self/schedstat`):
/// on a shared machine the wall time of a call is mostly other processes' time.
fn thread_cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").expect("Linux's /proc/thread-self/schedstat");
    Duration::from_nanos(stat.split_whitespace().next().and_then(|ns| ns.parse().ok()).expect("nanoseconds on CPU"))
}

/// A Rust legacy-mangled name (`_ZN` length-prefixed segments, then the `17h...E` hash) as a path;
/// other names as they are.
fn demangle(name: &str) -> String {
    let Some(mut rest) = name.strip_prefix("_ZN") else { return name.to_string() };
    let mut parts = Vec::new();
    while let Some(digits) = rest.find(|c: char| !c.is_ascii_digit()).filter(|&n| n > 0) {
        let len: usize = rest[..digits].parse().unwrap_or(usize::MAX);
        let Some(part) = rest.get(digits..digits + len) else { break };
        if !(part.starts_with('h') && part.len() == 17) {
            parts.push(part.replace("$LT$", "<").replace("$GT$", ">").replace("$u20$", " ").replace("..", "::"));
        }
        rest = &rest[digits + len..];
    }
    if parts.is_empty() { name.to_string() } else { parts.join("::") }
}
