//! The on-disk cache of compiled components, for code the binary does not carry precompiled (another
//! component, or a CPU the carried code does not fit). A file is keyed by the component's bytes and
//! the engine's compatibility hash, and carries a SHA-256 of its own body: a stale or corrupt file is
//! rebuilt, never handed to `deserialize` unchecked.
//!
//! Deserialising is running native code, and a digest is not a MAC: anyone who can put a file
//! there can put its digest beside it. So a file is read only if it has the shape only this cache
//! gives its files, in a place only this user (or root) can change:
//! - the file: a regular file (not a symlink, opened with `O_NOFOLLOW`), one link, owned by the
//!   current user, with no permission at all for group or others (0600, as written here; the
//!   Python host's rule) — checked on the opened file. A file made by a checkout, an unpacked
//!   archive or a copy under the usual umask (0644) is refused: a git repository cannot even record
//!   a 0600 file;
//! - the directory: owned by the current user, not writable by group or others (one that only
//!   its owner can write but others can read is narrowed to 0700, as the Python host does);
//! - every directory above it (resolved, so a symlink in the path is judged by its target): owned
//!   by the user or root and not writable by group or others unless sticky (`/tmp`), so nobody
//!   else can rename the cache directory away and put another in its place.
//!
//! Anything else is ignored and the component compiled in memory; a directory that fails the
//! check is not written to either. New files are created exclusively (`create_new`, mode 0600)
//! under a temporary name and renamed into place; a new directory is created with mode 0700.
//! What this does not stop: a process already running as this user can write such a file (it
//! could as well replace the binary). Where ownership cannot be checked (not Unix), the cache is
//! not used.

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
    if let Some(dir) = std::env::var_os(crate::facts::env::CACHE_DIR) {
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
    /// The code compiled at build time that the binary carries.
    Carried,
    /// A valid file of the on-disk cache.
    Cache,
    /// Compiled now.
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
/// fail the load: the component is then compiled in memory. A directory or file that someone else
/// could have written is never read (see the module's documentation).
pub fn load(engine: &Engine, wasm: &[u8], dir: Option<&Path>) -> Result<(Component, Origin)> {
    let Some(dir) = dir.filter(|dir| ensure_private_dir(dir).is_ok()) else {
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

/// Why a cache directory or file is not trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted(pub String);

impl std::fmt::Display for Untrusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Creates `dir` (mode 0700) if it is missing, and checks that only the current user can change
/// it: a directory owned by the current user, not writable by group or others (narrowed to 0700
/// if others may read it), below directories only the user or root can change (see the module's
/// documentation).
pub fn ensure_private_dir(dir: &Path) -> Result<(), Untrusted> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        if !dir.exists() {
            let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir);
        }
        let untrusted = |why: String| Untrusted(format!("{}: {why}", dir.display()));
        let resolved = std::fs::canonicalize(dir).map_err(|e| untrusted(e.to_string()))?;
        let meta = std::fs::metadata(&resolved).map_err(|e| untrusted(e.to_string()))?;
        if !meta.is_dir() {
            return Err(Untrusted(format!("{} is not a directory", dir.display())));
        }
        only_mine(&meta).map_err(untrusted)?;
        if mode_of(&meta) & 0o077 != 0 {
            std::fs::set_permissions(&resolved, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| untrusted(format!("cannot make it private (mode 0700): {e}")))?;
        }
        for above in resolved.ancestors().skip(1) {
            let meta = std::fs::metadata(above).map_err(|e| untrusted(format!("{}: {e}", above.display())))?;
            safe_above(&meta)
                .map_err(|why| untrusted(format!("the directory above it, {}, is {why}", above.display())))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        Err(Untrusted(format!("{}: ownership cannot be checked on this platform", dir.display())))
    }
}

#[cfg(unix)]
fn current_user() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::MetadataExt;
    meta.mode() & 0o7777
}

/// Owned by the current user and not writable by group or others.
#[cfg(unix)]
fn only_mine(meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let me = current_user();
    if meta.uid() != me {
        return Err(format!("owned by uid {}, not by the current user (uid {me})", meta.uid()));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!("writable by group or others (mode {:o})", mode_of(meta)));
    }
    Ok(())
}

/// A directory above the cache: owned by the user or root, and writable by nobody else unless
/// sticky (where others cannot rename what is not theirs).
#[cfg(unix)]
fn safe_above(meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    if meta.uid() != 0 && meta.uid() != current_user() {
        return Err(format!("owned by uid {}, neither the current user nor root", meta.uid()));
    }
    if meta.mode() & 0o022 != 0 && meta.mode() & 0o1000 == 0 {
        return Err(format!("writable by group or others without the sticky bit (mode {:o})", mode_of(meta)));
    }
    Ok(())
}

/// A file this cache could have written: one link, owned by the current user, no permission for
/// group or others.
#[cfg(unix)]
fn written_here(meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    only_mine(meta)?;
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "readable or writable by group or others (mode {:o}); this cache writes its files 0600",
            mode_of(meta)
        ));
    }
    if meta.nlink() != 1 {
        return Err(format!("has {} links; this cache's files have one", meta.nlink()));
    }
    Ok(())
}

/// The file's bytes, if it is a regular file (not a symlink) that only the current user can write,
/// checked on the opened file so that it cannot be swapped between the check and the read.
#[cfg(unix)]
fn read_private(path: &Path) -> Result<Vec<u8>, Untrusted> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let untrusted = |why: String| Untrusted(format!("{}: {why}", path.display()));
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| untrusted(e.to_string()))?;
    let meta = file.metadata().map_err(|e| untrusted(e.to_string()))?;
    if !meta.is_file() {
        return Err(untrusted("not a regular file".into()));
    }
    written_here(&meta).map_err(untrusted)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes).map_err(|e| untrusted(e.to_string()))?;
    Ok(bytes)
}

#[cfg(not(unix))]
fn read_private(path: &Path) -> Result<Vec<u8>, Untrusted> {
    Err(Untrusted(format!("{}: ownership cannot be checked on this platform", path.display())))
}

/// Whether `load` would read the cache file at `path` (for diagnostics and tests): `Err` says why not.
pub fn check_file(dir: &Path, path: &Path) -> Result<(), Untrusted> {
    ensure_private_dir(dir)?;
    let file = read_private(path)?;
    verified_body(&file).map(|_| ()).ok_or_else(|| Untrusted(format!("{}: not a valid cache file", path.display())))
}

fn compile(engine: &Engine, wasm: &[u8]) -> Result<Component> {
    Component::new(engine, wasm).map_err(anyhow::Error::from).context("compiling the component")
}

fn read_verified(engine: &Engine, path: &Path) -> Option<Component> {
    let file = read_private(path).ok()?;
    let body = verified_body(&file)?;
    // SAFETY: the file is in a directory only this user can change, below directories only this
    // user or root can change, is itself owned by this user with no access for anyone else, has one
    // link and is not a symlink (all checked by `ensure_private_dir` and `read_private`); it was
    // written by `write_atomically` from `Component::serialize` of an engine
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

/// Writes the file under a temporary name created exclusively (never an existing file or a
/// symlink someone left there), mode 0600, then renames it into place.
fn write_atomically(dir: &Path, path: &Path, body: &[u8]) -> Result<()> {
    let tmp = dir.join(format!(".{}.{}.tmp", std::process::id(), unique()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(&tmp)?;
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
