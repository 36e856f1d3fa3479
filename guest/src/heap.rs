//! The guest's allocator on wasm32: dlmalloc (what std uses there), fed first the heap the module's
//! initial memory already holds (`--initial-heap`, build.rs), then memory grown page by page.
//!
//! Why: a call whose allocations fit in that heap never grows linear memory. A grown memory costs
//! the instance's pool slot two `mprotect`s, each a TLB shootdown across the host's threads: one at
//! `memory.grow`, one when the next call instantiates in the slot and shrinks it back (per-call
//! overhead p50 about 30 → 23 µs, BENCHMARKS.md). Std's dlmalloc grows memory at its first
//! allocation whatever the initial memory holds; dlmalloc's own `System` (0.2.14) starts in the
//! initial heap only when the first request fits there, and never uses it otherwise. Here a first
//! request larger than the initial heap (a multi-megabyte input lowered into the guest) grows
//! memory by the rest only, so the initial heap is never memory a call holds for nothing.
//!
//! Memory grows to a whole number of 2 MiB: the host backs linear memory with 2 MiB pages
//! (lib/src/huge_pages.rs), and the kernel gives a 2 MiB span one only when all of it is accessible
//! when it is first touched. Grown by the exact request, the last span of every growth stayed in
//! 4 KiB pages, each its own fault (a 12 MP PNG fit: 1,930 faults a call, 397 rounded). dlmalloc
//! still gets exactly the pages it asks for, the part of a growth past them going to its next
//! request: given the rounded region whole, it kept the part as free space at the top of its heap
//! and asked the system for the whole of each later request that did not fit there, so the unused
//! parts added up (a 4000×3000 TIFF conversion's peak 44.8 → 50.0 MiB). Now every call places its
//! allocations as before, and its memory is at most the next 2 MiB past what it was.

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32;
use core::cell::{Cell, UnsafeCell};
use core::ptr;

use dlmalloc::{Allocator, Dlmalloc};

const PAGE: usize = 64 * 1024;

/// Pages of linear memory a 2 MiB host page spans.
const HUGE_PAGE_PAGES: usize = (2 << 20) / PAGE;

unsafe extern "C" {
    /// Where the linker put the end of the data and stack: the heap starts here.
    static __heap_base: u8;
    /// The end of the initial memory, `--initial-heap` bytes past `__heap_base` (page-aligned).
    static __heap_end: u8;
}

/// The memory dlmalloc gets: the initial heap with its first request, then grown pages.
struct Pages {
    initial_heap_given: Cell<bool>,
    /// Where the memory handed to dlmalloc ends, and where the memory grown for it ends: grown to
    /// a whole number of 2 MiB, the part past what a request took goes to the next request.
    held_end: Cell<usize>,
    grown_end: Cell<usize>,
}

impl Pages {
    /// `pages` more pages for dlmalloc, right after those it holds, memory grown where they are
    /// not yet (to a whole number of 2 MiB, or exactly when that would pass the memory limit):
    /// their start; `None` past the memory limit.
    fn take(&self, pages: usize) -> Option<usize> {
        let end = wasm32::memory_size(0) * PAGE;
        // Memory grown by something else since: none of it is dlmalloc's to take.
        if self.grown_end.get() != end {
            self.held_end.set(end);
            self.grown_end.set(end);
        }
        let start = self.held_end.get();
        let taken_end = start + pages * PAGE;
        if taken_end > end {
            let (size, more) = (end / PAGE, (taken_end - end) / PAGE);
            let rounded = (size + more).next_multiple_of(HUGE_PAGE_PAGES) - size;
            if !(rounded > more && Pages::grow_exactly(rounded).is_some()) {
                Pages::grow_exactly(more)?;
            }
            self.grown_end.set(wasm32::memory_size(0) * PAGE);
        }
        self.held_end.set(taken_end);
        Some(start)
    }

    /// `pages` more pages of linear memory; their start, `None` past the memory limit.
    fn grow_exactly(pages: usize) -> Option<usize> {
        let previous = wasm32::memory_grow(0, pages);
        (previous != usize::MAX).then(|| previous * PAGE)
    }
}

// SAFETY: regions handed out are either the initial heap (given once) or freshly grown pages, never
// in use by anything else; both read as zeros (a fresh instance, and `memory.grow` zero-fills).
unsafe impl Allocator for Pages {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        if !self.initial_heap_given.replace(true) {
            // Linker-defined symbols: only their addresses are taken.
            let (base, end) = (&raw const __heap_base as usize, &raw const __heap_end as usize);
            let room = end.saturating_sub(base);
            if size <= room {
                return (base as *mut u8, room, 0);
            }
            // Grown memory starts where the initial memory ends: one region from the heap's base.
            let more = (size - room).div_ceil(PAGE);
            match self.take(more) {
                Some(start) if start == end => return (base as *mut u8, room + more * PAGE, 0),
                // Not adjacent (memory grew before the first request: never, with this linker
                // layout): those pages stay unused and the request gets its own below.
                Some(_) => {}
                None => return (ptr::null_mut(), 0, 0),
            }
        }
        let pages = size.div_ceil(PAGE);
        match self.take(pages) {
            Some(start) => (start as *mut u8, pages * PAGE, 0),
            None => (ptr::null_mut(), 0, 0),
        }
    }

    fn remap(&self, _ptr: *mut u8, _old: usize, _new: usize, _can_move: bool) -> *mut u8 {
        ptr::null_mut()
    }

    fn free_part(&self, _ptr: *mut u8, _old: usize, _new: usize) -> bool {
        false
    }

    fn free(&self, _ptr: *mut u8, _size: usize) -> bool {
        false
    }

    fn can_release_part(&self, _flags: u32) -> bool {
        false
    }

    fn allocates_zeros(&self) -> bool {
        true
    }

    fn page_size(&self) -> usize {
        PAGE
    }
}

pub(crate) struct Heap(UnsafeCell<Dlmalloc<Pages>>);

// SAFETY: the guest is single-threaded wasm32 (no `atomics` target feature): no two calls into the
// allocator ever overlap.
unsafe impl Sync for Heap {}

impl Heap {
    pub(crate) const fn new() -> Heap {
        let pages = Pages { initial_heap_given: Cell::new(false), held_end: Cell::new(0), grown_end: Cell::new(0) };
        Heap(UnsafeCell::new(Dlmalloc::new_with_allocator(pages)))
    }
}

// SAFETY: each method forwards to dlmalloc's own with the layout's size and alignment, as its
// `GlobalAlloc` does; `&mut` access is exclusive as `Sync` above says.
//
// Each method stays one function: inlined under fat LTO, dlmalloc's fast path is copied into every
// allocating call site (the preflight component 63 KB larger).
unsafe impl GlobalAlloc for Heap {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { (*self.0.get()).malloc(layout.size(), layout.align()) }
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe { (*self.0.get()).calloc(layout.size(), layout.align()) }
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { (*self.0.get()).free(ptr, layout.size(), layout.align()) }
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe { (*self.0.get()).realloc(ptr, layout.size(), layout.align(), new_size) }
    }
}
