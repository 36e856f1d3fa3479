//! What 2 MiB pages save a fit (`lib/src/huge_pages.rs`): calls of `Gate::admit` on one file in one
//! process, taking turns between the pool's memory advised for huge pages and advised against them,
//! so both sides run under the same machine state. Prints each side's median and minimum time and
//! the page faults a call took (the process's, so the host's own count too).
//!
//!   cargo build --release --locked -p mediagate-bench --example huge_pages_ab
//!   target/release/examples/huge_pages_ab target/bench-photo-12mp.png image/png 15
//!
//! Linux only: the advice is Linux's `madvise`.

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("huge_pages_ab measures Linux's transparent huge pages; this is not Linux");
}

#[cfg(target_os = "linux")]
use std::time::Instant;

#[cfg(target_os = "linux")]
use mediagate::gate::{AdmitOptions, InputMedia};
#[cfg(target_os = "linux")]
use mediagate::huge_pages::{anonymous_mappings, new_mapping};
#[cfg(target_os = "linux")]
use mediagate::{Gate, Runtime, RuntimeConfig};

/// The process's minor page faults so far (field 10 of /proc/self/stat).
#[cfg(target_os = "linux")]
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // After the command name in parentheses: state is the first field, minflt the eighth.
    stat.rsplit(')').next().unwrap().split_whitespace().nth(7).unwrap().parse().unwrap()
}

#[cfg(target_os = "linux")]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, mime, rounds] = &args[..] else { panic!("usage: huge_pages_ab FILE MIME ROUNDS") };
    let bytes = std::fs::read(file).unwrap();
    let rounds: usize = rounds.parse().expect("ROUNDS is a number");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let before = anonymous_mappings();
    let config = RuntimeConfig { cache_dir: None, ..RuntimeConfig::default() };
    let least = config.limits.max_concurrent_calls as usize * 2 * config.limits.memory_bytes;
    let runtime = Runtime::new(config).unwrap();
    // The pool, found as the runtime finds it.
    let (start, end) = new_mapping(&before, least).expect("the runtime's pool mapping");
    let gate = Gate::new(runtime).unwrap();
    let mut times = [Vec::new(), Vec::new()];
    let mut faults = [0u64; 2];
    rt.block_on(async {
        // One warm-up call each side, then the rounds.
        for turn in 0..2 * (rounds + 1) {
            let huge = turn % 2;
            let advice = if huge == 1 { libc::MADV_HUGEPAGE } else { libc::MADV_NOHUGEPAGE };
            // SAFETY: the advice sets a flag on the pool's mapping; no page changes.
            assert_eq!(unsafe { libc::madvise(start as *mut libc::c_void, end - start, advice) }, 0);
            let input = InputMedia::new(bytes.clone(), Some(mime));
            let (faults_before, started) = (minor_faults(), Instant::now());
            let answer = gate.admit(&input, AdmitOptions::UNSET).await.unwrap().answer;
            let ms = started.elapsed().as_secs_f64() * 1e3;
            assert!(answer.is_ok(), "{file} is admitted");
            if turn >= 2 {
                times[huge].push(ms);
                faults[huge] += minor_faults() - faults_before;
            }
        }
    });
    for (huge, name) in [(0, "4 KiB pages"), (1, "2 MiB pages")] {
        let t = &mut times[huge];
        t.sort_by(f64::total_cmp);
        println!(
            "{file} {name}: median {:.1} ms, min {:.1} ms, {} page faults a call",
            t[t.len() / 2],
            t[0],
            faults[huge] / rounds as u64
        );
    }
}
