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
    /// A fault in the gate, not a verdict. The components import nothing to print with, so a panic's
    /// message stays inside the sandbox: the trap (an `unreachable` for a panic) is what is known.
    #[error("the gate trapped: {trap} (a fault in the gate, not a verdict on the input)")]
    Trap { trap: String },
    #[error("the sandbox could not run the call: {0:#}")]
    Host(anyhow::Error),
}

impl CallError {
    /// What the call ran into, in the words every host uses (`facts::call_error`).
    pub fn kind(&self) -> &'static str {
        use crate::facts::call_error::*;
        match self {
            CallError::DeadlineExceeded(_) => DEADLINE,
            CallError::WallDeadlineExceeded(_) => WALL_DEADLINE,
            CallError::OutOfMemory { .. } => OUT_OF_MEMORY,
            CallError::Trap { .. } => TRAP,
            CallError::Host(_) => HOST,
        }
    }

    /// Classifies the error of a call.
    pub fn classify(err: wasmtime::Error, memory_limit: usize) -> CallError {
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
            let trap = trap.to_string();
            return CallError::Trap { trap: trap.trim_start_matches("wasm trap: ").to_string() };
        }
        CallError::Host(err.into())
    }
}
