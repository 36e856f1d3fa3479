//! The host's facts that other languages repeat: the runtime limits, the words for a call that did
//! not answer, the environment's names and the VLM retry policy. The gate's own facts (refusal
//! reasons, profiles, caps) stay in the guest. `mediagate-facts` (`facts/`) writes both into the
//! JavaScript and Python packages and the docs' tables, and checks them current; so nothing here
//! may need more than `const` to read.

/// Most linear memory one call's instance may grow to.
pub const MEMORY_BYTES: usize = 512 << 20;
/// Most guest running time one call may take, in seconds.
pub const CPU_DEADLINE_SECS: u64 = 20;
/// Most wall-clock time one call may take, waiting included, in seconds.
pub const WALL_DEADLINE_SECS: u64 = 900;
/// Memory for all calls' instances together, by default, in a host that runs calls side by side
/// (`mediagate mcp --memory-budget`, the Python host's `memory_budget`): calls run at once up to
/// this divided by [`MEMORY_BYTES`]; more wait their turn.
pub const MEMORY_BUDGET_BYTES: usize = 2048 << 20;
/// Instances that may exist at once (the pooling allocator's size).
pub const MAX_CONCURRENT_CALLS: u32 = 64;
/// How often the engine's epoch advances: the granularity of the CPU deadline, in milliseconds.
pub const EPOCH_TICK_MS: u64 = 5;

/// What a call that did not answer ran into (`CallError::kind`), in every host's words.
pub mod call_error {
    /// The guest ran past its CPU deadline.
    pub const DEADLINE: &str = "deadline";
    /// The call ran past its wall-clock deadline.
    pub const WALL_DEADLINE: &str = "wall_deadline";
    /// The instance would have grown past its memory limit.
    pub const OUT_OF_MEMORY: &str = "out_of_memory";
    /// The guest trapped: a fault in the gate (a panic is an `unreachable`).
    pub const TRAP: &str = "trap";
    /// The sandbox itself could not run the call.
    pub const HOST: &str = "host";
    pub const KINDS: [&str; 5] = [DEADLINE, WALL_DEADLINE, OUT_OF_MEMORY, TRAP, HOST];
}

/// The environment variables the hosts read.
pub mod env {
    /// The VLM's base URL; none, no VLM.
    pub const VLM_URL: &str = "MEDIAGATE_VLM_URL";
    /// The model to ask.
    pub const VLM_MODEL: &str = "MEDIAGATE_VLM_MODEL";
    /// The dialect it speaks: `openai` (the default) or `anthropic`.
    pub const VLM_API: &str = "MEDIAGATE_VLM_API";
    /// The key sent to whatever URL `VLM_URL` names.
    pub const VLM_API_KEY: &str = "MEDIAGATE_VLM_API_KEY";
    /// The vendors' own key variables, sent only to that vendor's API.
    pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
    pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";
    /// Where compiled components are cached.
    pub const CACHE_DIR: &str = "MEDIAGATE_CACHE_DIR";
    /// The agent-tool component the Python host loads instead of its own (a clone's build).
    pub const AGENT_TOOL_WASM: &str = "MEDIAGATE_AGENT_TOOL_WASM";
}

/// How the VLM client retries before the first byte (connect errors, 429, 5xx).
pub mod vlm_retry {
    /// Retries after the first attempt.
    pub const MAX_RETRIES: u32 = 2;
    /// The first wait; each retry doubles it.
    pub const INITIAL_BACKOFF_MS: u64 = 500;
    /// Bound on one wait, the backoff's or what `Retry-After` asks for.
    pub const MAX_WAIT_MS: u64 = 30_000;
}

/// The VLM client's other bounds.
pub mod vlm {
    pub const CONNECT_TIMEOUT_SECS: u64 = 10;
    /// Longest wait for the response to start, and between two pieces of the stream.
    pub const IDLE_TIMEOUT_SECS: u64 = 120;
    /// Longest a whole reply may stream.
    pub const MAX_REPLY_SECS: u64 = 600;
    pub const MAX_EVENT_BYTES: usize = 1 << 20;
    /// What is read of an error response's body, and for how long: an endless body costs nothing.
    pub const MAX_ERROR_BODY_BYTES: usize = 64 << 10;
    pub const ERROR_BODY_WAIT_SECS: u64 = 10;
}
