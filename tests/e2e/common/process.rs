//! What this test process holds, read from /proc: resident memory and open file descriptors.
#![allow(dead_code)]

/// A `kB` field of /proc/self/status (`VmRSS`, `VmHWM`, …), in bytes.
pub fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with(field) && l[field.len()..].starts_with(':'))
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"));
    let kib: u64 = line[field.len() + 1..].trim().trim_end_matches("kB").trim().parse().unwrap();
    kib * 1024
}

/// Resident set size now.
pub fn rss() -> u64 {
    status_bytes("VmRSS")
}

/// Peak resident set size (since start, or since the last [`reset_peak_rss`]).
pub fn peak_rss() -> u64 {
    status_bytes("VmHWM")
}

/// Resets `VmHWM` to the current RSS (Linux ≥ 4.0: write 5 to clear_refs). `false` where the
/// kernel refuses; the peak is then the process's whole-life peak.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Open file descriptors of this process.
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd").count()
}

pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
