//! One wasmtime `Engine` for the process: pooling allocator, epoch interruption, the compiled
//! component cache, and a fresh `Store` per call with a memory limit and a CPU deadline.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use wasmtime::component::{Component, Instance, InstancePre, ResourceTable};
use wasmtime::{
    Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, StoreLimits, StoreLimitsBuilder,
    UpdateDeadline,
};

use crate::cache::{self, Origin};
use crate::component::World;
use crate::error::CallError;
use crate::facts;

/// How often the epoch advances; the granularity of the CPU deadline and of cooperative yields.
const EPOCH_TICK: Duration = Duration::from_millis(facts::EPOCH_TICK_MS);

/// Bytes of each pooled table kept resident (zeroed in place) when its slot is reused.
const TABLE_KEEP_RESIDENT: usize = 64 << 10;

/// Most bytes of each pooled memory put back in place (not given back) when its slot is reused.
const MEMORY_KEEP_RESIDENT: usize = 1 << 20;

/// The limits of one call. Defaults are safe for untrusted files.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Most linear memory one call's instance may grow to.
    pub memory_bytes: usize,
    /// Most time the guest may spend running in one call: time waiting for a worker thread (other
    /// calls running) or in host imports (the VLM) does not count.
    pub cpu_deadline: Duration,
    /// Instances that may exist at once (the pool's size).
    pub max_concurrent_calls: u32,
    /// Calls whose guest may be instantiated and running at once; the others wait for a turn
    /// before they instantiate. A call gives its turn back while it waits on the VLM and takes one
    /// again after, so a slow model does not hold up other calls. The guest's work is CPU-bound:
    /// more calls running than cores only time-slice them, each holding its linear memory (a 4 MB
    /// screenshot's fit touches ~50 MiB) the whole while. Default: one per core.
    pub max_running_calls: u32,
    /// Most wall-clock time one call may take, waiting included (a blocked open, a slow VLM);
    /// past it the call is dropped with an error.
    pub wall_deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: facts::MEMORY_BYTES,
            cpu_deadline: Duration::from_secs(facts::CPU_DEADLINE_SECS),
            max_concurrent_calls: facts::MAX_CONCURRENT_CALLS,
            max_running_calls: std::thread::available_parallelism().map_or(2, |n| n.get() as u32),
            wall_deadline: Duration::from_secs(facts::WALL_DEADLINE_SECS),
        }
    }
}

#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    pub limits: Limits,
    /// Compiled-component cache directory; `None` compiles in memory every time.
    pub cache_dir: Option<PathBuf>,
    /// Use the pooling allocator (the default). Off, instances are allocated on demand.
    pub pooling: bool,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig { limits: Limits::default(), cache_dir: cache::default_dir(), pooling: true }
    }
}

pub struct Runtime {
    engine: Engine,
    config: RuntimeConfig,
    /// Turns to run a guest ([`Limits::max_running_calls`]).
    turns: Arc<tokio::sync::Semaphore>,
}

impl Runtime {
    pub fn new(config: RuntimeConfig) -> Result<Arc<Self>> {
        let mut wasm = crate::engine_config::code_config();
        if config.pooling {
            let n = config.limits.max_concurrent_calls;
            let mut pool = PoolingAllocationConfig::default();
            pool.total_component_instances(n)
                .total_core_instances(n * 8)
                .total_memories(n * 2)
                .total_tables(n * 8)
                .total_stacks(n)
                .max_memory_size(config.limits.memory_bytes)
                // A reused slot's tables are zeroed in place (they are small) instead of given back
                // with madvise and faulted in again: per-call p50 41 -> 33 µs (BENCHMARKS.md).
                .table_keep_resident(TABLE_KEEP_RESIDENT);
            // A reused slot's memory: the pages the last call touched, found with the PAGEMAP_SCAN
            // ioctl (Linux 6.7+), put back from the image in place, up to 1 MiB; the rest given back
            // with madvise. The next call faults none of them in again: per-call p50 35.3 -> 21.3 µs,
            // p99 2-4 ms -> 60-75 µs (BENCHMARKS.md). Without the ioctl the whole first 1 MiB would
            // be reset by memset, slower than madvise (measured), so memories then stay at madvise.
            if PoolingAllocationConfig::is_pagemap_scan_available() {
                pool.pagemap_scan(Enabled::Yes).linear_memory_keep_resident(MEMORY_KEEP_RESIDENT);
            }
            wasm.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        }
        #[cfg(target_os = "linux")]
        let mappings_before = config.pooling.then(crate::huge_pages::anonymous_mappings);
        let engine = Engine::new(&wasm).map_err(anyhow::Error::from).context("creating the wasmtime engine")?;
        #[cfg(target_os = "linux")]
        if let Some(before) = mappings_before {
            // The pool's memory slots: one mapping of at least every slot's largest memory. Not
            // advised (no transparent huge pages), memories fault 4 KiB pages as before.
            let slots = config.limits.max_concurrent_calls as usize * 2;
            crate::huge_pages::advise_new_mapping(&before, slots * config.limits.memory_bytes);
        }
        spawn_epoch_ticker(&engine);
        let turns = Arc::new(tokio::sync::Semaphore::new(config.limits.max_running_calls.max(1) as usize));
        Ok(Arc::new(Runtime { engine, config, turns }))
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn limits(&self) -> &Limits {
        &self.config.limits
    }

    /// Runs one call's future within the wall-clock deadline.
    pub async fn bounded<R>(
        &self,
        call: impl std::future::Future<Output = wasmtime::Result<R>>,
    ) -> wasmtime::Result<R> {
        let wall = self.config.limits.wall_deadline;
        match tokio::time::timeout(wall, call).await {
            Ok(result) => result,
            Err(_) => Err(CallError::WallDeadlineExceeded(wall).into()),
        }
    }

    /// One call into the sandbox, the only way any export is called: `store` (fresh, from
    /// [`Runtime::store`]) → instantiate `pre` → `call` → the error classified, within the
    /// wall-clock deadline. The answer carries what the call cost the sandbox.
    pub async fn call<T: Send + 'static, R>(
        &self,
        pre: &InstancePre<CallState<T>>,
        mut store: Store<CallState<T>>,
        call: impl AsyncFnOnce(&mut Store<CallState<T>>, Instance) -> wasmtime::Result<R>,
    ) -> Result<Answered<R>, CallError> {
        let turns = self.turns.clone();
        let result = self
            .bounded(async {
                let turn = turns.clone().acquire_owned().await.expect("the semaphore is never closed");
                let state = store.data_mut();
                state.turn = Some(Turn { turns, held: Some(turn) });
                // The wait for a turn is not the guest's time.
                *state.running_since.lock().expect("never poisoned") = Instant::now();
                invoke(pre, &mut store, call).await
            })
            .await;
        store.data_mut().turn = None;
        self.finish(result, &store)
    }

    /// [`Runtime::call`] run to completion on this thread, for constructors (the call must not
    /// wait on I/O: the CPU deadline applies, the wall-clock one does not).
    pub fn call_blocking<T: Send + 'static, R>(
        &self,
        pre: &InstancePre<CallState<T>>,
        mut store: Store<CallState<T>>,
        call: impl AsyncFnOnce(&mut Store<CallState<T>>, Instance) -> wasmtime::Result<R>,
    ) -> Result<Answered<R>, CallError> {
        let result = futures_executor::block_on(invoke(pre, &mut store, call));
        self.finish(result, &store)
    }

    fn finish<T, R>(&self, result: wasmtime::Result<R>, store: &Store<CallState<T>>) -> Result<Answered<R>, CallError> {
        let stats = CallStats { peak_memory: store.data().peak_memory() };
        match result {
            Ok(answer) => Ok(Answered { answer, stats }),
            Err(e) => Err(CallError::classify(e, self.config.limits.memory_bytes)),
        }
    }

    /// The compiled component: for one of the embedded components, the code this binary carries
    /// (compiled at build time) when this CPU and engine can run it; otherwise from the disk cache
    /// when it holds a valid copy, or compiled now (and cached).
    pub fn load(&self, wasm: &[u8]) -> Result<(Component, Origin)> {
        if let Some(component) = World::of(wasm).and_then(|world| self.carried(world)) {
            return Ok((component, Origin::Carried));
        }
        cache::load(&self.engine, wasm, self.config.cache_dir.as_deref())
    }

    /// The precompiled code of `world` from the binary's own bytes, if it fits this engine:
    /// `deserialize` checks the target, the engine's settings and that this CPU has every feature
    /// the code was compiled for, and refuses otherwise (then the caller compiles).
    fn carried(&self, world: World) -> Option<Component> {
        let code = world.precompiled();
        if code.is_empty() || !matches!(Engine::detect_precompiled(code), Some(wasmtime::Precompiled::Component)) {
            return None;
        }
        // SAFETY: the bytes are part of this executable (`include_bytes!` in `component.rs`), written
        // by `Engine::precompile_component` in this crate's build script from the same component
        // and engine settings (`engine_config.rs`); they are as trusted as the binary's own code.
        unsafe { Component::deserialize(&self.engine, code) }.ok()
    }

    /// A fresh store for one call: memory limit, CPU deadline, and `extra` (the caller's state: nothing
    /// for the gate, whose component imports nothing; the WASI context of the workspace for the tool).
    pub fn store<T: Send + 'static>(&self, extra: T) -> Store<CallState<T>> {
        let limits =
            StoreLimitsBuilder::new().memory_size(self.config.limits.memory_bytes).trap_on_grow_failure(true).build();
        let state = CallState {
            table: ResourceTable::new(),
            limits: MemoryLimiter { limits, peak: 0 },
            running_since: Arc::new(std::sync::Mutex::new(Instant::now())),
            host_time: Duration::ZERO,
            host_time_at_resume: Duration::ZERO,
            guest_time: Duration::ZERO,
            cpu_deadline: self.config.limits.cpu_deadline,
            turn: None,
            extra,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut ctx| {
            let state = ctx.data_mut();
            // Count only the time the guest was running since it last resumed: not time spent
            // waiting for a worker thread while other calls ran, nor time in host imports (the VLM).
            let since = *state.running_since.lock().expect("never poisoned");
            let waiting_on_host = state.host_time.saturating_sub(state.host_time_at_resume);
            state.guest_time += since.elapsed().saturating_sub(waiting_on_host);
            if state.guest_time > state.cpu_deadline {
                return Err(CallError::DeadlineExceeded(state.cpu_deadline).into());
            }
            state.host_time_at_resume = state.host_time;
            // Let other calls and the runtime's I/O run: guest work never blocks the executor.
            let running_since = state.running_since.clone();
            Ok(UpdateDeadline::YieldCustom(
                1,
                Box::pin(async move {
                    YieldOnce(false).await;
                    *running_since.lock().expect("never poisoned") = Instant::now();
                }),
            ))
        });
        store
    }
}

async fn invoke<T: Send + 'static, R>(
    pre: &InstancePre<CallState<T>>,
    store: &mut Store<CallState<T>>,
    call: impl AsyncFnOnce(&mut Store<CallState<T>>, Instance) -> wasmtime::Result<R>,
) -> wasmtime::Result<R> {
    let instance = pre.instantiate_async(&mut *store).await?;
    call(store, instance).await
}

/// What one call cost the sandbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallStats {
    /// The largest the guest's linear memory grew to, in bytes.
    pub peak_memory: usize,
}

/// What a call into the sandbox answered, and what it cost: every call gives both, so a caller
/// that watches memory asks no second API.
#[derive(Clone, Debug, PartialEq)]
pub struct Answered<T> {
    pub answer: T,
    pub stats: CallStats,
}

impl<T> Answered<T> {
    /// The same stats with the answer made into another.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Answered<U> {
        Answered { answer: f(self.answer), stats: self.stats }
    }
}

/// A future that is pending once (waking itself), so the executor runs other tasks in between.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

/// Advances the engine's epoch until the engine is dropped.
fn spawn_epoch_ticker(engine: &Engine) {
    let engine = engine.weak();
    std::thread::Builder::new()
        .name("mediagate-epoch".into())
        .spawn(move || {
            while let Some(engine) = engine.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .expect("spawning the epoch thread");
}

/// The data of one call's store.
pub struct CallState<T> {
    table: ResourceTable,
    limits: MemoryLimiter,
    /// When the guest last resumed after a yield (or the call started).
    running_since: Arc<std::sync::Mutex<Instant>>,
    /// Time spent waiting in host imports (the VLM); it does not count against the CPU deadline.
    pub host_time: Duration,
    host_time_at_resume: Duration,
    /// Time the guest itself ran, summed over its running stretches.
    guest_time: Duration,
    cpu_deadline: Duration,
    /// This call's turn to run ([`Limits::max_running_calls`]); `None` outside [`Runtime::call`].
    turn: Option<Turn>,
    pub extra: T,
}

struct Turn {
    turns: Arc<tokio::sync::Semaphore>,
    held: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl<T> CallState<T> {
    pub fn table(&mut self) -> &mut ResourceTable {
        &mut self.table
    }

    /// The caller's state and the resource table, borrowed together (a WASI view needs both).
    pub(crate) fn extra_and_table(&mut self) -> (&mut T, &mut ResourceTable) {
        (&mut self.extra, &mut self.table)
    }

    /// Gives this call's turn back before a host import waits on the network (the VLM): other
    /// calls' guests run meanwhile. [`CallState::take_turn`] after the wait.
    pub fn give_turn_back(&mut self) {
        if let Some(turn) = self.turn.as_mut() {
            turn.held = None;
        }
    }

    /// Takes a turn again after [`CallState::give_turn_back`], waiting for one if all are taken.
    pub async fn take_turn(&mut self) {
        if let Some(turn) = self.turn.as_mut()
            && turn.held.is_none()
        {
            turn.held = Some(turn.turns.clone().acquire_owned().await.expect("the semaphore is never closed"));
        }
    }

    /// The largest linear memory the call's instance grew to, in bytes.
    pub fn peak_memory(&self) -> usize {
        self.limits.peak
    }
}

/// `StoreLimits`, and the peak it allowed (for benchmarks and operators' metrics).
struct MemoryLimiter {
    limits: StoreLimits,
    peak: usize,
}

impl wasmtime::ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        let allowed = self.limits.memory_growing(current, desired, maximum)?;
        if allowed {
            self.peak = self.peak.max(desired);
        }
        Ok(allowed)
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.memory_grow_failed(error)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}
