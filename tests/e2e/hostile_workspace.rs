//! A hostile workspace, end to end: the real component reads through its one WASI preopen while
//! the workspace holds traversals, symlinks out, special files, sparse giants, files that change
//! under the reader and names that are not UTF-8. Nothing escapes, hangs or reads past the cap; a
//! refused path never reaches the VLM (a loopback server that counts requests).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common::vlm_server::*;
use crate::common::*;
use mediagate::ReadImageTool;
use mediagate::gate::{Admission, AdmitOptions};
use mediagate::tool::{AdmittedData, FileError, FileErrorCode, WorkspaceFile};
use mediagate::tool::{AsWorkspace, ToolError, ToolErrorCode};
use mediagate::vlm::{Api, VlmConfig};

/// A hang guard around every call.
const GUARD: Duration = Duration::from_secs(60);
/// The read cap of the tool (docs/design.md §2: 64 MiB with a downsampler).
const CAP: u64 = 64 * 1024 * 1024;

use ToolErrorCode::{NotAFile, NotFound, OutsideWorkspace, TooLarge};

struct Setup {
    server: VlmServer,
    tool: ReadImageTool,
    /// The workspace (canonical path) and, beside it, a directory that must stay unreachable.
    ws: tempfile::TempDir,
    outside: tempfile::TempDir,
}

impl Setup {
    async fn new() -> Setup {
        let server = VlmServer::start(vec![openai_reply(&["fine"], 0)]).await;
        let mut config = VlmConfig::new(Api::OpenAi, server.openai_url(), "test-vlm");
        config.idle_timeout = Duration::from_secs(10);
        let tool = ReadImageTool::new(runtime(), Some(config)).unwrap();
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::copy(icon_path(), ws.path().join("icon.png")).unwrap();
        std::fs::create_dir(ws.path().join("sub")).unwrap();
        std::fs::copy(icon_path(), ws.path().join("sub/inner.png")).unwrap();
        std::fs::copy(icon_path(), outside.path().join("secret.png")).unwrap();
        Setup { server, tool, ws, outside }
    }

    fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.ws.path()).unwrap()
    }

    fn at(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.ws.path().join(rel)
    }

    async fn call(&self, path: &str) -> Result<String, ToolError> {
        let call = self.tool.read_image(self.ws.path(), path, None, None, Arc::new(|_, _| {}));
        tokio::time::timeout(GUARD, call)
            .await
            .unwrap_or_else(|_| panic!("{path:?} hung the tool"))
            .unwrap_or_else(|e| panic!("{path:?} broke the sandbox: {e}"))
            .answer
    }

    /// The call is refused with `code`, and no request reaches the VLM.
    async fn refused(&self, path: &str, code: ToolErrorCode) -> ToolError {
        let before = self.server.requests().len();
        let err = self.call(path).await.expect_err(path);
        assert_eq!(err.code, code, "{path:?}: {}", err.message);
        assert!(err.message.starts_with("error: "), "{}", err.message);
        assert_eq!(self.server.requests().len(), before, "{path:?} reached the VLM");
        err
    }

    async fn works(&self, path: &str) {
        let before = self.server.requests().len();
        assert_eq!(self.call(path).await.unwrap_or_else(|e| panic!("{path:?}: {}", e.message)), "fine");
        assert_eq!(self.server.requests().len(), before + 1);
    }

    /// The same path through the other entry point, `workspace-admission.admit-file`.
    async fn admit(&self, path: &str) -> Result<Admission, FileError> {
        admit_in(&self.tool, self.ws.path(), path).await
    }
}

async fn admit_in(tool: &ReadImageTool, ws: &(impl AsWorkspace + ?Sized), path: &str) -> Result<Admission, FileError> {
    let file = WorkspaceFile {
        path: path.into(),
        claimed_mime: None,
        convert: false,
        page: None,
        data: AdmittedData::Payload,
    };
    let call = tool.admit_workspace_file(ws, &file, AdmitOptions::UNSET);
    tokio::time::timeout(GUARD, call)
        .await
        .expect("admit_file hung")
        .expect("the sandbox itself never fails here")
        .answer
}

fn icon_path() -> PathBuf {
    corpus().join("photos/tango-icon-address-book-new-16.png")
}

#[tokio::test]
async fn traversal_and_absolute_paths_outside_are_refused() {
    let s = Setup::new().await;
    let root = s.root();
    let ws_name = root.file_name().unwrap().to_str().unwrap().to_string();
    let outside_name = s.outside.path().file_name().unwrap().to_str().unwrap().to_string();
    let secret = std::fs::canonicalize(s.outside.path()).unwrap().join("secret.png");
    let paths = [
        "..".to_string(),
        "../".to_string(),
        "../icon.png".to_string(),
        "a/../../x".to_string(),
        "sub/../../icon.png".to_string(),
        "./../icon.png".to_string(),
        "sub/./../../..".to_string(),
        "sub/inner.png/../../../icon.png".to_string(),
        format!("../{outside_name}/secret.png"),
        format!("../{ws_name}/icon.png"),
        "/".to_string(),
        "/etc/passwd".to_string(),
        "/proc/self/mem".to_string(),
        "/dev/zero".to_string(),
        secret.to_str().unwrap().to_string(),
        root.parent().unwrap().to_str().unwrap().to_string(),
        format!("{}/../{outside_name}/secret.png", root.display()),
        format!("{}/../{ws_name}/icon.png", root.display()),
        format!("{}x/icon.png", root.display()),
    ];
    for path in &paths {
        let err = s.refused(path, OutsideWorkspace).await;
        assert!(err.message.contains("outside the workspace"), "{}", err.message);
        assert!(matches!(s.admit(path).await, Err(e) if e.code == FileErrorCode::OutsideWorkspace), "{path}");
    }
    // What normalises to a path inside is fine, relative or absolute.
    s.works("sub/../icon.png").await;
    s.works("./sub/./inner.png").await;
    s.works(&format!("{}/sub/../icon.png", root.display())).await;
}

#[tokio::test]
async fn encoded_and_odd_forms_are_just_names_that_do_not_exist() {
    let s = Setup::new().await;
    for path in [
        "%2e%2e/icon.png",
        "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "..%2f..%2fetc%2fpasswd",
        "%252e%252e/icon.png",
        "..\\..\\etc\\passwd",
        "..;/icon.png",
        "．．/icon.png",
        "....//icon.png",
        "...",
        "icon.png%00.txt",
        "icon.png\0",
        "icon.png\0/../../etc/passwd",
        "file:///etc/passwd",
        "~/icon.png",
        "$HOME/icon.png",
    ] {
        s.refused(path, NotFound).await;
    }
    // Names too long for the filesystem: a clear error, whatever the filesystem calls it.
    for path in ["a/".repeat(5000) + "x.png", "x".repeat(100_000)] {
        let err = s.call(&path).await.expect_err("too long");
        assert!(matches!(err.code, NotFound | ToolErrorCode::Io), "{}", err.message);
    }
    assert!(s.server.requests().is_empty());
}

#[tokio::test]
async fn symlinks_out_are_refused_and_links_inside_work() {
    let s = Setup::new().await;
    let out = std::fs::canonicalize(s.outside.path()).unwrap();
    let rel_out = format!("../{}", out.file_name().unwrap().to_str().unwrap());
    symlink(out.join("secret.png"), s.at("abs-file.png")).unwrap();
    symlink(format!("{rel_out}/secret.png"), s.at("rel-file.png")).unwrap();
    symlink(&out, s.at("abs-dir")).unwrap();
    symlink(&rel_out, s.at("rel-dir")).unwrap();
    symlink("/", s.at("root-dir")).unwrap();
    symlink("..", s.at("parent")).unwrap();
    // Chains: inside → inside → out, and a link in a subdirectory climbing out.
    symlink("abs-file.png", s.at("chain1.png")).unwrap();
    symlink("chain1.png", s.at("chain2.png")).unwrap();
    symlink("../rel-file.png", s.at("sub/up.png")).unwrap();
    symlink("../../", s.at("sub/upup")).unwrap();
    for path in [
        "abs-file.png",
        "rel-file.png",
        "abs-dir/secret.png",
        "rel-dir/secret.png",
        "root-dir/etc/passwd",
        "parent/icon.png",
        "chain1.png",
        "chain2.png",
        "sub/up.png",
        "sub/upup/icon.png",
    ] {
        s.refused(path, OutsideWorkspace).await;
        assert!(matches!(s.admit(path).await, Err(e) if e.code == FileErrorCode::OutsideWorkspace), "{path}");
    }
    // Inside the workspace, links and chains of links are followed.
    symlink("icon.png", s.at("in1.png")).unwrap();
    symlink("in1.png", s.at("in2.png")).unwrap();
    symlink("sub", s.at("subdir")).unwrap();
    symlink("../icon.png", s.at("sub/back.png")).unwrap();
    for path in ["in1.png", "in2.png", "subdir/inner.png", "sub/back.png", "subdir/back.png"] {
        s.works(path).await;
    }
    // An absolute link is treated as leaving the workspace even when it points inside: the
    // preopen resolves every link relative to the workspace and refuses absolute ones.
    symlink(s.root().join("icon.png"), s.at("abs-inside.png")).unwrap();
    s.refused("abs-inside.png", OutsideWorkspace).await;
}

#[tokio::test]
async fn symlink_loops_and_dangling_links_end_with_a_clear_error() {
    let s = Setup::new().await;
    symlink("self.png", s.at("self.png")).unwrap();
    symlink("loop-b.png", s.at("loop-a.png")).unwrap();
    symlink("loop-a.png", s.at("loop-b.png")).unwrap();
    symlink("loopdir", s.at("loopdir")).unwrap();
    symlink("nowhere.png", s.at("dangling.png")).unwrap();
    for path in ["self.png", "loop-a.png", "loopdir/x.png"] {
        let before = s.server.requests().len();
        let err = s.call(path).await.expect_err(path);
        assert_eq!(err.code, ToolErrorCode::Io, "{path}: {}", err.message);
        assert!(err.message.contains("too many levels of symbolic links"), "{}", err.message);
        assert_eq!(s.server.requests().len(), before);
    }
    s.refused("dangling.png", NotFound).await;
}

#[tokio::test]
async fn links_to_devices_and_process_memory_are_refused_without_reading() {
    let s = Setup::new().await;
    symlink("/dev/zero", s.at("zero.png")).unwrap();
    symlink("/dev/urandom", s.at("random.png")).unwrap();
    symlink("/proc/self/mem", s.at("mem.png")).unwrap();
    symlink("/proc/self/fd/0", s.at("stdin.png")).unwrap();
    let depth = s.root().components().count();
    symlink(format!("{}dev/zero", "../".repeat(depth)), s.at("rel-zero.png")).unwrap();
    symlink(format!("{}proc/self/mem", "../".repeat(depth)), s.at("rel-mem.png")).unwrap();
    for path in ["zero.png", "random.png", "mem.png", "stdin.png", "rel-zero.png", "rel-mem.png"] {
        s.refused(path, OutsideWorkspace).await;
        assert!(matches!(s.admit(path).await, Err(e) if e.code == FileErrorCode::OutsideWorkspace), "{path}");
    }
}

#[tokio::test]
async fn special_files_are_refused_without_being_opened() {
    let s = Setup::new().await;
    assert!(std::process::Command::new("mkfifo").arg(s.at("pipe.png")).status().unwrap().success());
    symlink("pipe.png", s.at("to-pipe.png")).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(s.at("socket.png")).unwrap();
    for path in ["pipe.png", "to-pipe.png", "socket.png"] {
        let err = s.refused(path, NotAFile).await;
        assert!(err.message.contains("not a regular file") && err.message.contains("not opened"), "{}", err.message);
        assert!(matches!(s.admit(path).await, Err(e) if e.code == FileErrorCode::NotAFile), "{path}");
    }
    symlink("sub", s.at("subdir-link")).unwrap();
    let root = s.root().display().to_string();
    for path in ["sub", "sub/", "subdir-link", ".", "./", &root] {
        s.refused(path, NotAFile).await;
    }
    // The tool is not stuck on any of them.
    s.works("icon.png").await;
}

#[tokio::test]
async fn a_sparse_giant_is_refused_from_its_size_without_reading() {
    let s = Setup::new().await;
    let sizes = [(10u64 << 30, "giant.png"), (CAP + 1, "one-over.png"), (u64::MAX >> 2, "absurd.png")];
    for (size, name) in sizes {
        let f = std::fs::File::create(s.at(name)).unwrap();
        if f.set_len(size).is_err() {
            continue; // beyond what this filesystem allows
        }
        let err = s.refused(name, TooLarge).await;
        assert!(err.message.contains(&format!("{size} bytes")) && err.message.contains("not read"), "{}", err.message);
        assert!(matches!(s.admit(name).await, Err(e) if e.code == FileErrorCode::TooLarge), "{name}");
    }
    // Exactly at the cap is read (all of it, zeros) and then judged by its bytes.
    std::fs::File::create(s.at("at-cap.png")).unwrap().set_len(CAP).unwrap();
    let err = s.refused("at-cap.png", ToolErrorCode::NotAnImage).await;
    assert!(err.message.contains("detected application/octet-stream"), "{}", err.message);
}

#[tokio::test]
async fn a_file_that_changes_while_being_read_gets_a_clean_answer() {
    let s = Setup::new().await;
    let icon = std::fs::read(icon_path()).unwrap();
    let path = s.at("growing.png");
    std::fs::write(&path, &icon).unwrap();
    // A writer appends as fast as it can, then truncates back and starts again, until stopped.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = std::thread::spawn({
        let (stop, path, icon) = (stop.clone(), path.clone(), icon.clone());
        move || {
            use std::io::Write;
            let piece = vec![0u8; 1 << 20];
            let mut rounds = 0;
            while !stop.load(Ordering::Relaxed) {
                let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
                for _ in 0..(CAP >> 20) + 16 {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    f.write_all(&piece).unwrap();
                }
                std::fs::write(&path, &icon).unwrap();
                rounds += 1;
            }
            rounds
        }
    });
    let mut outcomes = Vec::new();
    for _ in 0..12 {
        match s.call("growing.png").await {
            Ok(answer) => {
                assert_eq!(answer, "fine");
                outcomes.push("answer".to_string());
            }
            Err(e) => {
                // Grown past the cap (at stat or while read), or judged by the bytes read.
                assert!(
                    matches!(e.code, TooLarge | ToolErrorCode::Refused | ToolErrorCode::NotAnImage),
                    "{:?}: {}",
                    e.code,
                    e.message
                );
                outcomes.push(format!("{:?}", e.code));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = writer.join().unwrap();
    eprintln!("outcomes while the file changed ({rounds} writer rounds): {outcomes:?}");

    // Truncated to nothing between two calls: not an image, then fine again.
    std::fs::write(&path, &icon).unwrap();
    s.works("growing.png").await;
    std::fs::File::options().write(true).open(&path).unwrap().set_len(0).unwrap();
    let err = s.refused("growing.png", ToolErrorCode::NotAnImage).await;
    assert!(err.message.contains("detected application/x-empty"), "{}", err.message);
    std::fs::write(&path, &icon).unwrap();
    s.works("growing.png").await;
}

#[tokio::test]
async fn names_that_are_not_utf8_do_not_disturb_the_rest() {
    let s = Setup::new().await;
    let bad_file = s.at(OsStr::from_bytes(b"bad\xff.png"));
    let bad_dir = s.at(OsStr::from_bytes(b"dir\xfe"));
    std::fs::copy(icon_path(), &bad_file).unwrap();
    std::fs::create_dir(&bad_dir).unwrap();
    std::fs::copy(icon_path(), bad_dir.join("icon.png")).unwrap();
    symlink(OsStr::from_bytes(b"bad\xff.png"), s.at("to-bad.png")).unwrap();
    // The tool takes a string: the lossy spelling is simply another name.
    for path in ["bad\u{fffd}.png", "dir\u{fffd}/icon.png", "bad\\xff.png", "bad%ff.png"] {
        s.refused(path, NotFound).await;
    }
    // The other files work, and a link with a UTF-8 name to the odd one is followed.
    s.works("icon.png").await;
    s.works("to-bad.png").await;
}

#[tokio::test]
async fn a_workspace_whose_own_path_is_not_utf8_is_a_clear_error() {
    let s = Setup::new().await;
    let odd = s.at(OsStr::from_bytes(b"ws\xff"));
    std::fs::create_dir(&odd).unwrap();
    std::fs::copy(icon_path(), odd.join("icon.png")).unwrap();
    let call = s.tool.read_image(&odd, "icon.png", None, None, Arc::new(|_, _| {}));
    let err = tokio::time::timeout(GUARD, call).await.unwrap().unwrap().answer.unwrap_err();
    assert_eq!(err.code, ToolErrorCode::Io, "{}", err.message);
    assert!(err.message.contains("UTF-8"), "{}", err.message);
    // A workspace that is missing or a file: clear errors too.
    for ws in [s.at("missing"), s.at("icon.png")] {
        let call = s.tool.read_image(&ws, "icon.png", None, None, Arc::new(|_, _| {}));
        let err = tokio::time::timeout(GUARD, call).await.unwrap().unwrap().answer.unwrap_err();
        assert_eq!(err.code, ToolErrorCode::Io, "{}", err.message);
    }
    assert!(s.server.requests().is_empty());
    s.works("icon.png").await;
}

/// A workspace is resolved and opened once: a directory renamed away and replaced by a symlink to
/// somewhere else after it was opened is not followed — calls keep reading the directory opened.
/// (A path given per call is resolved for that call, and so reads wherever it points now.)
#[tokio::test]
async fn an_opened_workspace_is_not_looked_up_again() {
    use mediagate::tool::WorkspaceDir;
    let s = Setup::new().await;
    let parent = tempfile::tempdir().unwrap();
    let path = parent.path().join("project");
    std::fs::create_dir(&path).unwrap();
    std::fs::copy(icon_path(), path.join("only-inside.png")).unwrap();
    let opened = WorkspaceDir::open(&path).unwrap();
    assert_eq!(opened.path(), std::fs::canonicalize(&path).unwrap());

    std::fs::rename(&path, parent.path().join("moved")).unwrap();
    symlink(s.outside.path(), &path).unwrap();

    let before = s.server.requests().len();
    let call = s.tool.read_image(&opened, "only-inside.png", None, None, Arc::new(|_, _| {}));
    assert_eq!(tokio::time::timeout(GUARD, call).await.unwrap().unwrap().answer.unwrap(), "fine");
    let call = s.tool.read_image(&opened, "secret.png", None, None, Arc::new(|_, _| {}));
    let err = tokio::time::timeout(GUARD, call).await.unwrap().unwrap().answer.unwrap_err();
    assert_eq!(err.code, NotFound, "{}", err.message);
    assert_eq!(admit_in(&s.tool, &opened, "secret.png").await.unwrap_err().code, FileErrorCode::NotFound);
    assert_eq!(s.server.requests().len(), before + 1, "only the file inside reached the VLM");
    // The path looked up now leads elsewhere; the opened workspace never went there.
    let call = s.tool.read_image(&path, "only-inside.png", None, None, Arc::new(|_, _| {}));
    assert_eq!(tokio::time::timeout(GUARD, call).await.unwrap().unwrap().answer.unwrap_err().code, NotFound);
}
