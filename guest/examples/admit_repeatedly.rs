//! Admits one file N times natively (default options, converting what needs it when built with
//! `--features convert`) and prints the most heap one call held: the guest's own code for a
//! profiler to attribute (`valgrind --tool=callgrind`, BENCHMARKS.md "Where the time goes"), and
//! a load-independent memory figure beside the sandbox's (the guest's linear memory also holds its
//! stack and data, ~1–2 MiB).
//!
//!     cargo build --release --locked -p mediagate-guest --features convert --example admit_repeatedly
//!     valgrind --tool=callgrind target/release/examples/admit_repeatedly FILE MIME [N]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

struct Meter;

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Meter {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static METER: Meter = Meter;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(file), Some(mime)) = (args.next(), args.next()) else { panic!("usage: admit_repeatedly FILE MIME [N]") };
    let n: usize = args.next().map_or(1, |n| n.parse().expect("N is a number"));
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let options = mediagate_guest::Options { convert: true, ..Default::default() };
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    for _ in 0..n {
        let verdict = mediagate_guest::admit_image(&bytes, &mime, &options);
        assert!(verdict.is_ok(), "{file} must be admitted: {:?}", verdict.err());
    }
    let peak = PEAK.load(Ordering::Relaxed) - before;
    eprintln!(
        "peak heap of a call {:.1} MiB (the input's {:.1} MiB included)",
        mib(peak + bytes.len()),
        mib(bytes.len())
    );
}

fn mib(b: usize) -> f64 {
    b as f64 / (1 << 20) as f64
}
