//! Shared by the end-to-end tests: the corpus, one runtime and one gate per process (the binary
//! carries the components precompiled; on a CPU that cannot use that code, the compiled component
//! is cached on disk under target/, so no test pays for compilation twice), the `mediagate` binary
//! with the tests' settings, running a test alone, small helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, OnceLock};

pub mod process;
pub mod vlm_server;

use mediagate::{Gate, Runtime, RuntimeConfig};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `tests/corpus`: the images the tests read, carried in the repository (see its README).
pub fn corpus() -> PathBuf {
    let dir = repo_root().join("tests/corpus");
    assert!(dir.is_dir(), "the test corpus is expected at {}", dir.display());
    dir
}

pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("tests/fixtures").join(name)
}

pub fn cache_dir() -> PathBuf {
    repo_root().join("target/test-component-cache")
}

pub fn runtime_config() -> RuntimeConfig {
    RuntimeConfig { cache_dir: Some(cache_dir()), ..RuntimeConfig::default() }
}

pub fn runtime() -> Arc<Runtime> {
    static RUNTIME: OnceLock<Arc<Runtime>> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::new(runtime_config()).unwrap()).clone()
}

pub fn gate() -> Gate {
    static GATE: OnceLock<Gate> = OnceLock::new();
    GATE.get_or_init(|| Gate::new(runtime()).unwrap()).clone()
}

pub fn files_in(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

/// The `mediagate` binary under test, with the tests' compiled-component cache.
pub fn mediagate_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mediagate"));
    command.env("MEDIAGATE_CACHE_DIR", cache_dir());
    command
}

/// Runs `command` with `input` on its stdin, collecting its output.
pub fn run_with_stdin(mut command: Command, input: &[u8]) -> Output {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // A separate writer: a large input must not deadlock against a full stdout pipe.
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// For a test that measures this process (resident memory, open file descriptors): all the tests
/// share one binary and run side by side, so the test runs alone in a child process of this binary.
/// Returns `true` in that child (go on with the test) and `false` in the parent once the child
/// passed (return at once); panics with the child's output if it failed.
///
/// `module` is `module_path!()`, `test` the test function's name.
pub fn isolated(module: &str, test: &str) -> bool {
    const ALONE: &str = "MEDIAGATE_E2E_ALONE";
    let name = format!("{}::{test}", module.split_once("::").map_or("", |(_, rest)| rest));
    if std::env::var(ALONE).is_ok_and(|alone| alone == name) {
        return true;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([name.as_str(), "--exact", "--include-ignored", "--nocapture", "--test-threads", "1"])
        .env(ALONE, &name)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprint!("{stderr}");
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name} alone in a child process:\n{stdout}\n{stderr}"
    );
    false
}
