//! What the command line reads itself, before the sandbox sees anything: special files are refused
//! without being opened, and input over the host's 256 MiB ceiling is refused, never cut.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::common::*;

const CEILING: u64 = 256 << 20;

fn spawn(args: &[&str], stdin: Stdio) -> Child {
    mediagate_command()
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mediagate")
}

/// The process's output, within two minutes.
fn finish(child: Child, what: &str) -> Output {
    finish_within(child, Duration::from_secs(120), what)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn special_files_are_refused_before_they_are_opened() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.png");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let socket = dir.path().join("socket.png");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let folder = dir.path().join("folder.png");
    std::fs::create_dir(&folder).unwrap();
    // A link to a FIFO is followed to what it names, and refused for that.
    let link = dir.path().join("link.png");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let cases = [
        (fifo.as_path(), "a FIFO"),
        (socket.as_path(), "a socket"),
        (folder.as_path(), "a directory"),
        (link.as_path(), "a FIFO"),
        (Path::new("/dev/zero"), "a character device"),
    ];
    for (path, what) in cases {
        for args in [vec!["admit", p(path)], vec!["admit-tool-result", "--tool", "t", p(path)]] {
            let out = finish(spawn(&args, Stdio::null()), &format!("{args:?}"));
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
            let expected = format!("error: {} is not a regular file ({what}); it was not read", path.display());
            assert_eq!(stderr(&out).trim(), expected, "{args:?}");
            assert!(out.stdout.is_empty(), "{args:?}");
        }
    }
}

#[test]
fn input_over_the_ceiling_is_refused_not_cut() {
    let dir = tempfile::tempdir().unwrap();
    // Sparse: 256 MiB and one byte of zeros costs no disk.
    let big = dir.path().join("big.json");
    std::fs::File::create(&big).unwrap().set_len(CEILING + 1).unwrap();

    let out = finish(spawn(&["admit-tool-result", "--tool", "t", p(&big)], Stdio::null()), "FILE");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is larger than the 256 MiB mediagate reads at most"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());

    let out = finish(spawn(&["admit", p(&big)], Stdio::null()), "admit FILE");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is larger than the 256 MiB"), "{}", stderr(&out));

    // Stdin, from a file and from a pipe: refused, nothing gated, nothing printed.
    let stdin = Stdio::from(std::fs::File::open(&big).unwrap());
    let out = finish(spawn(&["admit-tool-result", "--tool", "t"], stdin), "stdin file");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim(),
        "error: stdin is larger than the 256 MiB mediagate reads at most; nothing was admitted"
    );
    assert!(out.stdout.is_empty(), "{} bytes written to stdout", out.stdout.len());

    let mut child = spawn(&["admit-tool-result", "--tool", "t", "-"], Stdio::piped());
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let zeros = vec![b' '; 1 << 20];
        // The reader stops at the ceiling and exits; a broken pipe then ends the writer.
        for _ in 0..=(CEILING >> 20) {
            if std::io::Write::write_all(&mut input, &zeros).is_err() {
                return;
            }
        }
    });
    let out = finish(child, "stdin pipe");
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("stdin is larger than the 256 MiB"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}
