//! Shared by the end-to-end tests: the corpus, one runtime (compiled component cached on disk
//! under target/, so no test pays for compilation twice), small helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
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
