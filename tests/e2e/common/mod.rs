//! Shared by the end-to-end tests: the corpus, one runtime and one gate per process (the binary
//! carries the components precompiled; on a CPU that cannot use that code, the compiled component
//! is cached on disk under target/, so no test pays for compilation twice), the `mediagate` binary
//! with the tests' settings, running a test alone, small helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, OnceLock};

pub mod process;
/// The deadline of the tests of hostile input, shared with the guest's unit tests.
#[path = "../../../guest/src/test_deadline.rs"]
pub mod test_deadline;
/// The guest's unit tests' images and documents made on the fly, and their oracles: written once,
/// for both (each side uses some of them).
#[allow(dead_code)]
#[path = "../../../guest/src/test_images.rs"]
pub mod test_images;
#[path = "../../../guest/src/test_oracles.rs"]
pub mod test_oracles;
pub mod vlm_server;

use mediagate::gate::{AdmitOptions, Answered, InputMedia, Verdict};
use mediagate::{CallError, Gate, Runtime, RuntimeConfig};

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

/// `bytes` claimed as `claimed` (neither converted nor a page) through the one entry,
/// `Gate::admit`: its verdict.
pub async fn admit_claimed(
    gate: &Gate,
    bytes: &[u8],
    claimed: &str,
    options: AdmitOptions,
) -> Result<Verdict, CallError> {
    admit_claimed_answered(gate, bytes, claimed, options).await.map(|a| a.answer)
}

/// [`admit_claimed`], with what the call cost the sandbox.
pub async fn admit_claimed_answered(
    gate: &Gate,
    bytes: &[u8],
    claimed: &str,
    options: AdmitOptions,
) -> Result<Answered<Verdict>, CallError> {
    let input = InputMedia::new(bytes.to_vec(), Some(claimed));
    Ok(gate.admit(&input, options).await?.map(|answer| answer.expect("no page is asked").verdict))
}

/// The type `bytes` carry, as the gate names it (`Admission::sniffed`).
pub async fn sniff(gate: &Gate, bytes: &[u8]) -> String {
    let input = InputMedia::new(bytes.to_vec(), None);
    gate.admit(&input, AdmitOptions::UNSET).await.unwrap().answer.expect("no page is asked").sniffed
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
    command.env(mediagate::facts::env::CACHE_DIR, cache_dir());
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

/// The child's output once it ends; a child still running after `limit` is killed and the test
/// fails (the bugs these tests guard against include a process that never ends).
pub fn finish_within(mut child: std::process::Child, limit: std::time::Duration, what: &str) -> Output {
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            panic!("{what}: mediagate did not end within {limit:?} (blocked)");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
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

/// `jpeg` with an EXIF APP1 segment after its JFIF APP0 (or SOI): the camera's make and model, and
/// a GPS position (48°51'30"N) — what must not reach a provider by default.
pub fn with_gps_exif(jpeg: &[u8]) -> Vec<u8> {
    let mut t = b"MM\0\x2a\0\0\0\x08".to_vec();
    let entry = |t: &mut Vec<u8>, tag: u16, kind: u16, count: u32, value: u32| {
        t.extend_from_slice(&tag.to_be_bytes());
        t.extend_from_slice(&kind.to_be_bytes());
        t.extend_from_slice(&count.to_be_bytes());
        t.extend_from_slice(&value.to_be_bytes());
    };
    // IFD0 at 8 (42 bytes), Make at 50, Model at 60, the GPS IFD at 74 (30 bytes), its latitude at 104.
    t.extend_from_slice(&3u16.to_be_bytes());
    entry(&mut t, 0x010F, 2, 10, 50);
    entry(&mut t, 0x0110, 2, 14, 60);
    entry(&mut t, 0x8825, 4, 1, 74);
    t.extend_from_slice(&0u32.to_be_bytes());
    t.extend_from_slice(b"SecretCam\0Model-SN-0042\0");
    t.extend_from_slice(&2u16.to_be_bytes());
    entry(&mut t, 0x0001, 2, 2, u32::from_be_bytes(*b"N\0\0\0"));
    entry(&mut t, 0x0002, 5, 3, 104);
    t.extend_from_slice(&0u32.to_be_bytes());
    for (n, d) in [(48u32, 1u32), (51, 1), (30, 1)] {
        t.extend_from_slice(&n.to_be_bytes());
        t.extend_from_slice(&d.to_be_bytes());
    }
    let mut app1 = vec![0xFF, 0xE1];
    app1.extend_from_slice(&((t.len() + 8) as u16).to_be_bytes());
    app1.extend_from_slice(b"Exif\0\0");
    app1.extend_from_slice(&t);
    let at = if jpeg[2..4] == [0xFF, 0xE0] { 4 + usize::from(u16::from_be_bytes([jpeg[4], jpeg[5]])) } else { 2 };
    [&jpeg[..at], &app1[..], &jpeg[at..]].concat()
}

/// A PNG as the gate's canonical form writes it (docs/design.md, "Canonical form"), for a PNG
/// with no `eXIf` and no `iCCP`: its chunks in order, only the critical ones, `tRNS` and the colour
/// chunks kept. Written from the rule, not from the guest's code, to check that code against.
pub fn canonical_png(png: &[u8]) -> Vec<u8> {
    const KEPT: [&[u8; 4]; 9] = [b"IHDR", b"PLTE", b"IDAT", b"IEND", b"tRNS", b"sRGB", b"gAMA", b"cHRM", b"cICP"];
    let mut out = png[..8].to_vec();
    let mut at = 8;
    while at < png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let chunk = &png[at..at + 12 + len];
        assert!(&chunk[4..8] != b"eXIf" && &chunk[4..8] != b"iCCP", "not for this oracle");
        if KEPT.iter().any(|k| &chunk[4..8] == *k) {
            out.extend_from_slice(chunk);
        }
        at += 12 + len;
    }
    out
}

/// A PNG (`good` with one more chunk after IHDR) whose `iCCP` profile inflates to 1 GiB.
pub fn png_with_iccp_bomb(good: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        z.write_all(&zeros).unwrap();
    }
    let mut chunk = b"iCCP".to_vec();
    chunk.extend_from_slice(b"icc\0\0");
    chunk.extend_from_slice(&z.finish().unwrap());
    let len = (chunk.len() - 4) as u32;
    let crc = crc32fast::hash(&chunk);
    let after_ihdr = 8 + 25;
    [&good[..after_ihdr], &len.to_be_bytes(), &chunk[..], &crc.to_be_bytes(), &good[after_ihdr..]].concat()
}

pub use test_deadline::HOSTILE;

/// [`test_deadline::within`] for an async test body, run on its own runtime: a current-thread one
/// as `#[tokio::test]` builds (`workers` 0), or one of `workers` worker threads.
pub fn within_async<F: std::future::Future>(
    limit: std::time::Duration,
    what: &str,
    workers: usize,
    body: impl FnOnce() -> F + Send + 'static,
) -> F::Output
where
    F::Output: Send + 'static,
{
    test_deadline::within(limit, what, move || {
        let runtime = match workers {
            0 => tokio::runtime::Builder::new_current_thread().enable_all().build(),
            n => tokio::runtime::Builder::new_multi_thread().worker_threads(n).enable_all().build(),
        };
        runtime.expect("a tokio runtime").block_on(body())
    })
}
