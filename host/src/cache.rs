//! The on-disk cache of compiled components. A file is keyed by the component's bytes and the
//! engine's compatibility hash, and carries a SHA-256 of its own body: a stale or corrupt file is
//! rebuilt, never handed to `deserialize` unchecked.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

const MAGIC: &[u8; 8] = b"MGCWASM1";

/// Where compiled components live: `$MEDIAGATE_CACHE_DIR`, else `$XDG_CACHE_HOME/mediagate`,
/// else `~/.cache/mediagate`.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MEDIAGATE_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("mediagate"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("mediagate"))
}

/// How a component was obtained, for diagnostics and benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Cache,
    Compiled,
}

pub fn key(engine: &Engine, wasm: &[u8]) -> String {
    let mut engine_hash = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut engine_hash);
    let mut h = Sha256::new();
    h.update(wasm);
    h.update(engine_hash.finish().to_le_bytes());
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    hex(&h.finalize()[..16])
}

/// Loads the compiled form of `wasm` from `dir`, or compiles and stores it. Cache failures never
/// fail the load: the component is then compiled in memory.
pub fn load(engine: &Engine, wasm: &[u8], dir: Option<&Path>) -> Result<(Component, Origin)> {
    let Some(dir) = dir else {
        return Ok((compile(engine, wasm)?, Origin::Compiled));
    };
    let path = dir.join(format!("{}.cwasm", key(engine, wasm)));
    if let Some(component) = read_verified(engine, &path) {
        return Ok((component, Origin::Cache));
    }
    let component = compile(engine, wasm)?;
    if let Ok(serialized) = component.serialize() {
        let _ = write_atomically(dir, &path, serialized.as_slice());
    }
    Ok((component, Origin::Compiled))
}

fn compile(engine: &Engine, wasm: &[u8]) -> Result<Component> {
    Component::new(engine, wasm).map_err(anyhow::Error::from).context("compiling the component")
}

fn read_verified(engine: &Engine, path: &Path) -> Option<Component> {
    let file = std::fs::read(path).ok()?;
    let body = verified_body(&file)?;
    // SAFETY: the body was written by `write_atomically` from `Component::serialize` of an engine
    // with the same compatibility hash (part of the file name) and its SHA-256 matches.
    unsafe { Component::deserialize(engine, body) }.ok()
}

fn verified_body(file: &[u8]) -> Option<&[u8]> {
    let rest = file.strip_prefix(MAGIC.as_slice())?;
    if rest.len() < 32 {
        return None;
    }
    let (digest, body) = rest.split_at(32);
    (Sha256::digest(body).as_slice() == digest).then_some(body)
}

fn write_atomically(dir: &Path, path: &Path, body: &[u8]) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".{}.{}.tmp", std::process::id(), unique()));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(MAGIC)?;
    f.write_all(&Sha256::digest(body))?;
    f.write_all(body)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    Ok(())
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_trusted_only_with_its_digest() {
        let body = b"compiled code".to_vec();
        let mut file = MAGIC.to_vec();
        file.extend_from_slice(&Sha256::digest(&body));
        file.extend_from_slice(&body);
        assert_eq!(verified_body(&file), Some(body.as_slice()));

        let mut flipped = file.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(verified_body(&flipped), None);
        assert_eq!(verified_body(&file[..20]), None);
        assert_eq!(verified_body(b"not a cache file at all"), None);
    }
}
