//! Provides the guest's WASI components (the `preflight`, `convert`, `agent-tool` and `http-gate` worlds) to
//! embed, so that `cargo build` alone yields a self-contained `mediagate`.
//!
//! - In the repository (the guest source `../guest` and the contract `../wit` beside this crate):
//!   builds the guest, once per world, into `target/guest/` (the guest has its own target
//!   directory: a nested cargo cannot share the outer one's lock). The guest is a core module for
//!   `wasm32-unknown-unknown` (no WASI, no libc), made into a component here with
//!   `wit_component::ComponentEncoder` from the world wit-bindgen embeds in it: the component
//!   imports exactly what its world declares (nothing for `preflight`; the filesystem preopen, the
//!   VLM and the output sink for `agent-tool`), not the ~14 WASI interfaces Rust's std on
//!   `wasm32-wasip2` links in.
//! - From the published crate (nothing beside it): uses the components the crate carries,
//!   `components/mediagate-{preflight,convert,agent-tool,http-gate}.wasm`. `scripts/check-components.sh` (run by
//!   `scripts/test.sh`) checks that they are byte for byte what the guest source builds to, and
//!   `scripts/check-components.sh --update` refreshes them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "src/engine_config.rs"]
mod engine_config;

/// Each world and the guest feature that selects it. The host runs the first three (and precompiles
/// them, `RUN_BY_HOST`); `http-gate` (the gate as a `wasi:http/proxy` service for `wasmtime serve`, `jco serve`,
/// Spin, wasmCloud) is only carried and written out (`mediagate component --world http-gate`).
/// `convert` (the pure gate with the converters; the guest's `convert` feature alone) is what the
/// host loads when a caller asks to convert; `preflight` stays without the converters.
const WORLDS: [(&str, Option<&str>); 4] = [
    ("preflight", None),
    ("convert", Some("convert")),
    ("agent-tool", Some("agent-tool")),
    ("http-gate", Some("http-gate")),
];
/// The worlds the host itself runs: precompiled.
const RUN_BY_HOST: [&str; 3] = ["preflight", "convert", "agent-tool"];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let root = manifest_dir.parent().unwrap().to_path_buf();
    if guest_source_beside(&root) {
        build_from_source(&root, &out_dir);
    } else {
        use_carried_components(&manifest_dir, &out_dir);
    }
    precompile(&out_dir);
}

/// Compiles each embedded component to native code now, so that the binary deserialises it from
/// its own bytes instead of compiling it (~1.3 s) on first use (`lib/src/component.rs`,
/// `Runtime::load`). Same code settings as the runtime's engine (`src/engine_config.rs`). Built for
/// the machine it runs on (no cross-compilation), the code uses this CPU's features, as run-time
/// compilation would: with the target's baseline features instead (SSE2 only on x86_64), wasm
/// SIMD lowers to slow sequences and the 12 MP fit took 1.9x as long. On a CPU that lacks one of
/// those features, `Component::deserialize` refuses the code and the binary compiles at run time
/// and caches, as before. Cross-compiled, the target's baseline is used. When the code cannot be made (a target
/// Cranelift was not built for, `MEDIAGATE_NO_PRECOMPILE` set) the file is empty and the binary
/// compiles at run time, as before, and caches the result.
///
/// `wasmtime` is a build-dependency with the same features as the normal one and
/// `[profile.release.build-override]` matches the release profile, so cargo compiles wasmtime and
/// Cranelift once for both (`cargo build --release -v` shows one `Running rustc --crate-name
/// wasmtime`).
fn precompile(out_dir: &Path) {
    println!("cargo:rerun-if-env-changed=MEDIAGATE_NO_PRECOMPILE");
    println!("cargo:rerun-if-changed=src/engine_config.rs");
    let engine = precompile_engine();
    for world in RUN_BY_HOST {
        let wasm_path = out_dir.join(format!("mediagate-{world}.wasm"));
        let wasm = std::fs::read(&wasm_path).unwrap_or_else(|e| panic!("read {}: {e}", wasm_path.display()));
        let code = match &engine {
            Some(engine) => engine.precompile_component(&wasm).unwrap_or_else(|e| {
                println!("cargo:warning=precompiling the {world} component failed ({e}); it is compiled at run time");
                Vec::new()
            }),
            None => Vec::new(),
        };
        let out = out_dir.join(format!("mediagate-{world}.cwasm"));
        std::fs::write(&out, code).unwrap_or_else(|e| panic!("write {}: {e}", out.display()));
    }
}

fn precompile_engine() -> Option<wasmtime::Engine> {
    if std::env::var_os("MEDIAGATE_NO_PRECOMPILE").is_some() {
        return None;
    }
    let target = std::env::var("TARGET").expect("cargo sets TARGET for build scripts");
    let host = std::env::var("HOST").expect("cargo sets HOST for build scripts");
    let mut config = engine_config::code_config();
    let made = if target == host {
        wasmtime::Engine::new(&config)
    } else {
        config.target(&target).and_then(|config| wasmtime::Engine::new(config))
    };
    match made {
        Ok(engine) => Some(engine),
        Err(e) => {
            println!("cargo:warning=no precompiled components for {target} ({e}); they are compiled at run time");
            None
        }
    }
}

/// The repository's layout: `../guest` is the guest crate and `../wit` its contract.
fn guest_source_beside(root: &Path) -> bool {
    let manifest = std::fs::read_to_string(root.join("guest/Cargo.toml")).unwrap_or_default();
    manifest.contains("name = \"mediagate-guest\"") && root.join("wit/worlds.wit").is_file()
}

fn use_carried_components(manifest_dir: &Path, out_dir: &Path) {
    for (world, _) in WORLDS {
        let name = format!("mediagate-{world}.wasm");
        let carried = manifest_dir.join("components").join(&name);
        println!("cargo:rerun-if-changed={}", carried.display());
        if !carried.is_file() {
            panic!(
                "{} is missing: this crate carries the guest components it embeds, and there is no guest \
                 source beside it (../guest, ../wit) to build them from",
                carried.display()
            );
        }
        copy(&carried, &out_dir.join(&name));
    }
}

fn build_from_source(root: &Path, out_dir: &Path) {
    for watched in ["guest/src", "guest/Cargo.toml", "wit", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    println!("cargo:rerun-if-env-changed=MEDIAGATE_GUEST_RUSTFLAGS");

    let target_root = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let guest_target = target_root.join("guest");
    for (world, features) in WORLDS {
        build_guest(root, &guest_target, features);
        let core = guest_target.join(format!("{GUEST_TARGET}/guest/mediagate_guest.wasm"));
        let component = componentize(&core);
        let name = format!("mediagate-{world}.wasm");
        // A stable path for the JS and Python hosts and the packages, and the copy this crate embeds.
        write(&guest_target.join(&name), &component);
        write(&out_dir.join(&name), &component);
    }
}

/// The guest's target: no WASI, no libc, so std imports nothing (printing, the environment, exit and
/// hash-map seeds are no-ops or constants there; a panic aborts with a trap).
const GUEST_TARGET: &str = "wasm32-unknown-unknown";

/// The core module → a component, typed by the world wit-bindgen embedded in its custom section.
/// Deterministic: the same module gives the same bytes.
fn componentize(core: &Path) -> Vec<u8> {
    let module = std::fs::read(core).unwrap_or_else(|e| panic!("read {}: {e}", core.display()));
    wit_component::ComponentEncoder::default()
        .module(&module)
        .and_then(|encoder| encoder.validate(true).encode())
        .unwrap_or_else(|e| panic!("making {} into a component: {e:#}", core.display()))
}

fn build_guest(root: &Path, target_dir: &Path, features: Option<&str>) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "--locked", "-p", "mediagate-guest", "--target", GUEST_TARGET, "--profile", "guest"])
        .arg("--target-dir")
        .arg(target_dir)
        // The outer build's flags are for the host, not the guest.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        // `cargo clippy` of the host must not lint the guest build as a side effect.
        .env_remove("RUSTC_WORKSPACE_WRAPPER");
    cmd.env("CARGO_ENCODED_RUSTFLAGS", guest_rustflags(target_dir));
    if let Some(f) = features {
        cmd.args(["--features", f]);
    }
    let status = cmd.status().expect("cargo must be runnable from the build script");
    if !status.success() {
        panic!(
            "building the guest component failed ({status}). Is the target installed? \
             Run: rustup target add {GUEST_TARGET} (or bash scripts/setup.sh)"
        );
    }
}

/// wasm SIMD (simd128) speeds up resizing and base64; wasmtime, jco's targets (browsers, Node) and
/// wasmtime-py all run it. MEDIAGATE_GUEST_RUSTFLAGS overrides, e.g. for comparison.
///
/// The machine's own paths (the cargo home with the dependencies' sources, the target directory)
/// are remapped to fixed ones: panic locations name source files, and the component must be the
/// same bytes on every machine for the carried copies (`components/`) to be checkable.
fn guest_rustflags(target_dir: &Path) -> OsString {
    let flags = std::env::var("MEDIAGATE_GUEST_RUSTFLAGS").unwrap_or_else(|_| "-C target-feature=+simd128".into());
    let mut args: Vec<OsString> = flags.split_whitespace().map(OsString::from).collect();
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    for (from, to) in [(cargo_home, "/cargo"), (Some(target_dir.to_path_buf()), "/target")] {
        if let Some(from) = from {
            let mut remap = OsString::from("--remap-path-prefix=");
            remap.push(from.as_os_str());
            remap.push("=");
            remap.push(to);
            args.push(remap);
        }
    }
    let mut encoded = OsString::new();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            encoded.push("\x1f");
        }
        encoded.push(arg);
    }
    encoded
}

fn write(to: &Path, bytes: &[u8]) {
    std::fs::write(to, bytes).unwrap_or_else(|e| panic!("write {}: {e}", to.display()));
}

fn copy(from: &Path, to: &Path) {
    std::fs::copy(from, to).unwrap_or_else(|e| panic!("copy {} -> {}: {e}", from.display(), to.display()));
}
