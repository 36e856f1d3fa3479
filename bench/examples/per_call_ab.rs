//! The per-call overhead of component builds side by side, in one process, taking turns, so that a
//! lever in the guest (its allocator, its linker settings, what a trivial call runs) is measured
//! against the build before it under the same machine state: the same host, pool and engine settings
//! as `Gate`, a fresh Store and instance per call, `admit` of no bytes with every option left to the
//! gate (the `--per-call` row's trivial call), then `Gate::admit` of the component this binary
//! carries.
//!
//!   git show HEAD~1:lib/components/mediagate-preflight.wasm > /tmp/before.wasm
//!   cargo run --release --locked -p mediagate-bench --example per_call_ab -- 5000 /tmp/before.wasm lib/components/mediagate-preflight.wasm
//!
//! With `peak FILE MIME` before the components, it gives instead each build's guest peak (linear
//! memory size) for one `admit` of FILE claimed as MIME with the component's default options.

use std::time::{Duration, Instant};

use mediagate::gate::{Admission, AdmitOptions, InputError, InputMedia};
use mediagate::{Gate, Runtime, RuntimeConfig};

const ROUNDS: usize = 6;
const WARM_UP: usize = 200;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let peak_of = (args.first().map(String::as_str) == Some("peak")).then(|| {
        let file = args.get(1).cloned().expect("peak FILE MIME COMPONENT.wasm...");
        let mime = args.get(2).cloned().expect("peak FILE MIME COMPONENT.wasm...");
        args.splice(0..3, ["1".to_string()]);
        (file, mime)
    });
    let (Some(calls), paths) = (args.first().and_then(|n| n.parse::<usize>().ok()), &args[1.min(args.len())..]) else {
        panic!("usage: per_call_ab CALLS COMPONENT.wasm...");
    };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let runtime = Runtime::new(RuntimeConfig { cache_dir: None, ..RuntimeConfig::default() }).unwrap();
    let pres: Vec<_> = paths
        .iter()
        .map(|path| {
            let (component, _) = runtime.load(&std::fs::read(path).unwrap()).unwrap();
            // The preflight component imports nothing: an empty linker, as `Gate::new` makes.
            wasmtime::component::Linker::new(runtime.engine()).instantiate_pre(&component).unwrap()
        })
        .collect();
    if let Some((file, mime)) = peak_of {
        let bytes = std::fs::read(&file).unwrap();
        for (pre, path) in pres.iter().zip(paths) {
            let stats = rt
                .block_on(runtime.call(pre, runtime.store(()), async |store, instance| {
                    let input = InputMedia::new(bytes.clone(), Some(&mime));
                    Ok(admit_func(store, &instance)?.call_async(&mut *store, (&input, AdmitOptions::UNSET)).await?.0)
                }))
                .unwrap()
                .stats;
            println!("{path}: {file}: guest peak {} bytes", stats.peak_memory);
        }
        return;
    }
    let gate = Gate::new(runtime.clone()).unwrap();
    let nothing = InputMedia::new(Vec::new(), None);
    let mut p50s = vec![Vec::new(); paths.len() + 1];
    rt.block_on(async {
        for _ in 0..ROUNDS {
            for (i, pre) in pres.iter().enumerate() {
                p50s[i].push(
                    p50(calls, async || {
                        runtime
                            .call(pre, runtime.store(()), async |store, instance| {
                                let admit = admit_func(store, &instance)?;
                                Ok(admit.call_async(&mut *store, (&nothing, AdmitOptions::UNSET)).await?.0)
                            })
                            .await
                            .unwrap()
                            .answer
                            .expect("no page is asked");
                    })
                    .await,
                );
            }
            p50s[paths.len()]
                .push(p50(calls, async || drop(gate.admit(&nothing, AdmitOptions::UNSET).await.unwrap().answer)).await);
        }
    });
    let names = paths.iter().map(String::as_str).chain(["Gate::admit (the carried preflight)"]);
    for (name, runs) in names.zip(p50s) {
        let shown: Vec<String> = runs.iter().map(|d| format!("{:.1}", d.as_secs_f64() * 1e6)).collect();
        println!("{name}: p50 of each round {} µs", shown.join(", "));
    }
}

/// `admission.admit` as a typed function: its parameters and its result.
type AdmitFunc<'a> = wasmtime::component::TypedFunc<(&'a InputMedia, AdmitOptions), (Result<Admission, InputError>,)>;

/// The component's `admission.admit` export, typed.
fn admit_func<'a>(
    store: &mut wasmtime::Store<mediagate::runtime::CallState<()>>,
    instance: &wasmtime::component::Instance,
) -> wasmtime::Result<AdmitFunc<'a>> {
    let admission = instance
        .get_export_index(&mut *store, None, "mediagate:gate/admission@0.3.0")
        .expect("a preflight component exports admission@0.3.0");
    let func = instance.get_export_index(&mut *store, Some(&admission), "admit").expect("admission has admit");
    instance.get_typed_func(&mut *store, func)
}

/// The median time of `calls` calls, after a warm-up.
async fn p50(calls: usize, mut call: impl AsyncFnMut()) -> Duration {
    let mut times = Vec::with_capacity(calls);
    for i in 0..WARM_UP + calls {
        let start = Instant::now();
        call().await;
        if i >= WARM_UP {
            times.push(start.elapsed());
        }
    }
    times.sort();
    times[calls / 2]
}
