//! The pooled linear memories backed by 2 MiB pages, on Linux where transparent huge pages are
//! given only to memory that asks for them (`enabled` set to `madvise`, as on these machines).
//!
//! Why: a fit touches tens of MiB of fresh linear memory every call (the pool gives a slot's pages
//! back between calls), and with 4 KiB pages each one is a fault: about 8,700 a call for the 12 MP
//! PNG photo, 6–10% of its time in two A/B runs (BENCHMARKS.md, `huge_pages_ab`). A 2 MiB page is
//! one fault, zeroed in one go.
//!
//! wasmtime's pooling allocator reserves every memory slot in one mapping when the engine is made
//! and does not say where; that mapping is found here as the largest anonymous mapping making the
//! engine added, and advised once. The advice is a flag of the mapping: the `mprotect`s that grow
//! a memory and the `madvise(DONTNEED)` that resets a slot keep it. The kernel gives a huge page
//! only where a whole one lies in memory the guest may touch, so a trivial call still faults 4 KiB
//! pages (the kernel's `thp_fault_alloc` count stays put through the per-call bench), and the
//! guest grows its memory in whole 2 MiB (`guest/src/heap.rs`).

/// The anonymous mappings of this process, (start, end), read from /proc/self/maps (none when it
/// cannot be read).
pub fn anonymous_mappings() -> Vec<(usize, usize)> {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return Vec::new();
    };
    maps.lines()
        .filter_map(|line| {
            // start-end perms offset device inode [path]
            let mut fields = line.split_ascii_whitespace();
            let (range, inode, path) = (fields.next()?, fields.nth(3)?, fields.next());
            if inode != "0" || path.is_some() {
                return None;
            }
            let (start, end) = range.split_once('-')?;
            Some((usize::from_str_radix(start, 16).ok()?, usize::from_str_radix(end, 16).ok()?))
        })
        .collect()
}

/// The largest anonymous mapping of at least `least` bytes that is not in `before`: the pool of an
/// engine made in between.
pub fn new_mapping(before: &[(usize, usize)], least: usize) -> Option<(usize, usize)> {
    anonymous_mappings().into_iter().filter(|m| !before.contains(m) && m.1 - m.0 >= least).max_by_key(|m| m.1 - m.0)
}

/// Advises huge pages for [`new_mapping`]. `false`: there is none, or the kernel has no transparent
/// huge pages; the memory then faults 4 KiB pages, as it would unadvised.
pub fn advise_new_mapping(before: &[(usize, usize)], least: usize) -> bool {
    let Some((start, end)) = new_mapping(before, least) else {
        return false;
    };
    // SAFETY: MADV_HUGEPAGE sets a flag on the mapping; no page is moved, freed or changed.
    unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) == 0 }
}

#[cfg(test)]
mod tests {
    use crate::{Runtime, RuntimeConfig};

    /// The mappings of at least `least` bytes whose flags say huge pages were advised (`hg`).
    fn advised_mappings(least: usize) -> usize {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut size = 0;
        let mut advised = 0;
        for line in smaps.lines() {
            if let Some(kib) = line.strip_prefix("Size:") {
                size = kib.trim().trim_end_matches(" kB").trim().parse::<usize>().unwrap() << 10;
            } else if let Some(flags) = line.strip_prefix("VmFlags:") {
                advised += usize::from(size >= least && flags.split_whitespace().any(|f| f == "hg"));
            }
        }
        advised
    }

    #[test]
    fn a_pooling_runtime_advises_its_memory_slots() {
        let config = RuntimeConfig { cache_dir: None, ..RuntimeConfig::default() };
        let least = config.limits.max_concurrent_calls as usize * 2 * config.limits.memory_bytes;
        let _runtime = Runtime::new(config).unwrap();
        // A kernel built without transparent huge pages refuses the advice; this one has them.
        if std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            assert!(advised_mappings(least) >= 1, "no mapping of {least} bytes or more is advised");
        }
    }
}
