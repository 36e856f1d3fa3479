//! How a call into the sandbox can fail, in words a person or a model can act on.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("the guest exceeded its CPU deadline of {0:?} and was interrupted")]
    DeadlineExceeded(Duration),
    #[error("the call took longer than its wall-clock deadline of {0:?} and was dropped")]
    WallDeadlineExceeded(Duration),
    #[error("the guest ran out of memory (limit {limit_mib} MiB) and was stopped")]
    OutOfMemory { limit_mib: usize },
    #[error("the guest crashed (wasm trap: {trap}){}", panic_suffix(.panic))]
    Trap { trap: String, panic: String },
    #[error("the sandbox could not run the call: {0:#}")]
    Host(anyhow::Error),
}

fn panic_suffix(panic: &str) -> String {
    if panic.is_empty() { String::new() } else { format!(": {panic}") }
}

impl CallError {
    /// Classifies the error of a call; `stderr` is what the guest printed (its panic message).
    pub fn classify(err: wasmtime::Error, stderr: String, memory_limit: usize) -> CallError {
        match err.downcast_ref::<CallError>() {
            Some(CallError::DeadlineExceeded(d)) => return CallError::DeadlineExceeded(*d),
            Some(CallError::WallDeadlineExceeded(d)) => return CallError::WallDeadlineExceeded(*d),
            _ => {}
        }
        let text = format!("{err:#}");
        if text.contains("forcing trap when growing memory") || text.contains("forcing a memory growth failure") {
            return CallError::OutOfMemory { limit_mib: memory_limit >> 20 };
        }
        if let Some(trap) = err.downcast_ref::<wasmtime::Trap>() {
            if *trap == wasmtime::Trap::Interrupt {
                return CallError::DeadlineExceeded(Duration::ZERO);
            }
            return CallError::Trap { trap: trap.to_string(), panic: stderr };
        }
        CallError::Host(err.into())
    }
}
