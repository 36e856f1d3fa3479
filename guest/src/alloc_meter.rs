//! Test-only: the peak heap a closure allocates on this thread, so memory bounds are asserted on
//! what the code holds, not on the process (tests run on many threads at once).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

struct Meter;

// SAFETY: every call is forwarded to the system allocator unchanged; the counters are
// const-initialised thread-locals (no allocation) reached with `try_with` (no panic at teardown).
unsafe impl GlobalAlloc for Meter {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = LIVE.try_with(|live| {
            live.set(live.get() + layout.size());
            let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
        });
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // Memory freed here may have been allocated before the measure began, or on another thread.
        let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(layout.size())));
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static METER: Meter = Meter;

/// `f`'s result and the most heap it held at once on this thread, in bytes.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LIVE.with(|live| live.set(0));
    PEAK.with(|peak| peak.set(0));
    let result = f();
    (result, PEAK.with(Cell::get))
}
