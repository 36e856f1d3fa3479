//! The wasm32 module's initial memory holds a heap of `INITIAL_HEAP` bytes past its data, so that
//! the allocator (heap.rs) serves a small call without growing memory. Untouched pages cost nothing:
//! a pooled instance slot maps them lazily and resets only the pages a call wrote.

/// Room for what a trivial or small call allocates (the per-call overhead bench's `sniff`, a verdict
/// of a small image); a larger input grows memory as before.
const INITIAL_HEAP: u32 = 2 << 20;

fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-cdylib=--initial-heap={INITIAL_HEAP}");
    }
}
