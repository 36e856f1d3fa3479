//! The deadline every test of hostile input runs under, for the guest's unit tests and the
//! end-to-end tests (`tests/e2e/common` includes this file): such a test asserts that no input
//! panics or runs away, and a hang would otherwise stall CI until its own timeout, naming nothing.

use std::sync::mpsc;
use std::time::Duration;

/// How long a test of hostile input may take before it fails as a hang: far over what the slowest
/// takes on a loaded 2-core machine, far under a CI job's timeout.
pub const HOSTILE: Duration = Duration::from_secs(120);

/// Runs `body` on its own thread and gives its result; fails the test, naming `what`, when it has
/// not finished within `limit` (the thread is left behind: the test binary ends with the run). A
/// panic in `body` is the test's own panic, carried over as it is.
pub fn within<T: Send + 'static>(limit: Duration, what: &str, body: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, finished) = mpsc::channel();
    let worker = std::thread::Builder::new()
        .name(what.to_string())
        // The test threads' own stack size: a body recursing on hostile depth fails as it would
        // have on the test's thread.
        .stack_size(test_stack_size())
        .spawn(move || {
            let _ = done.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)));
        })
        .expect("spawn the test's thread");
    match finished.recv_timeout(limit) {
        Ok(Ok(value)) => {
            let _ = worker.join();
            value
        }
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("{what}: not finished within {} s (a hang on hostile input?)", limit.as_secs_f64()),
    }
}

/// What libtest gives a test's thread: `RUST_MIN_STACK`, else 2 MiB.
fn test_stack_size() -> usize {
    std::env::var("RUST_MIN_STACK").ok().and_then(|s| s.parse().ok()).unwrap_or(2 << 20)
}
