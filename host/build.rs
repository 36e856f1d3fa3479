//! Builds the guest into its two WASI components (the `preflight` world and the `agent-tool`
//! world) so that `cargo build` alone yields a self-contained `mediagate`. The guest has its own
//! target directory: a nested cargo cannot share the outer one's lock.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir.parent().unwrap().to_path_buf();
    for watched in ["guest/src", "guest/Cargo.toml", "wit", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    println!("cargo:rerun-if-env-changed=MEDIAGATE_GUEST_RUSTFLAGS");

    let target_root = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let guest_target = target_root.join("guest");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());

    for (world, features) in [("preflight", None), ("agent-tool", Some("agent-tool"))] {
        build_guest(&root, &guest_target, features);
        let built = guest_target.join("wasm32-wasip2/guest/mediagate_guest.wasm");
        let name = format!("mediagate-{world}.wasm");
        // A stable path for the JS and Python hosts, and the copy this crate embeds.
        copy(&built, &guest_target.join(&name));
        copy(&built, &out_dir.join(&name));
    }
}

fn build_guest(root: &Path, target_dir: &Path, features: Option<&str>) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "-p", "mediagate-guest", "--target", "wasm32-wasip2", "--profile", "guest"])
        .arg("--target-dir")
        .arg(target_dir)
        // The outer build's flags are for the host, not the guest.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        // `cargo clippy` of the host must not lint the guest build as a side effect.
        .env_remove("RUSTC_WORKSPACE_WRAPPER");
    // wasm SIMD (simd128) speeds up resizing and base64; wasmtime, jco's targets (browsers,
    // Node) and wasmtime-py all run it. MEDIAGATE_GUEST_RUSTFLAGS overrides, e.g. for comparison.
    let flags = std::env::var("MEDIAGATE_GUEST_RUSTFLAGS").unwrap_or_else(|_| "-C target-feature=+simd128".into());
    cmd.env("RUSTFLAGS", flags);
    if let Some(f) = features {
        cmd.args(["--features", f]);
    }
    let status = cmd.status().expect("cargo must be runnable from the build script");
    if !status.success() {
        panic!(
            "building the guest component failed ({status}). Is the target installed? \
             Run: rustup target add wasm32-wasip2"
        );
    }
}

fn copy(from: &Path, to: &Path) {
    std::fs::copy(from, to).unwrap_or_else(|e| panic!("copy {} -> {}: {e}", from.display(), to.display()));
}
