//! `mediagate admit` over many files: paths, directories (`-r`) and lists of paths, judged `--jobs`
//! at a time on one engine (a fresh instance per file), the verdicts printed in input order (a
//! line, or a JSON line with the path), what passed written under `--out-dir`, a progress bar on a
//! terminal and a summary. Memory is bounded by the window of files in flight, whatever the count:
//! the walk runs ahead by at most a channel's length, and a file's bytes are dropped once judged.
//! One file that cannot be read or judged is reported in its line and never stops the rest.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::io::{BufRead, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use mediagate::Gate;
use mediagate::gate::{AdmitOptions, InputMedia, Verdict};
use tokio::sync::mpsc;

use super::input::read_capped;
use super::progress::Progress;
use super::report::{check_json, convert_hint, verdict_line, with_head};
use super::{Exit, fail};

/// Paths the walk may run ahead of the judging: bounds what a walk of a million files holds.
const WALK_AHEAD: usize = 256;
/// Files handed out and not yet printed; at most `jobs` of them are being read and judged.
const WINDOW: usize = 256;

/// What to judge and how; from `mediagate admit`'s arguments.
pub struct Bulk {
    pub roots: Vec<PathBuf>,
    /// A file (or `-`, stdin) with one path a line.
    pub files_from: Option<PathBuf>,
    pub recursive: bool,
    pub jobs: usize,
    pub jsonl: bool,
    pub out_dir: Option<PathBuf>,
    pub mime: Option<String>,
    pub convert: bool,
    pub options: AdmitOptions,
}

/// One path the walk found, or a path it could not walk.
enum Walked {
    File(PathBuf),
    Unwalkable(PathBuf, String),
}

/// What became of one file.
enum Fate {
    Admitted {
        resized: bool,
        reencoded: bool,
        converted: bool,
    },
    Refused(&'static str),
    /// It could not be judged (unreadable, the sandbox failed, the output not written).
    Error,
}

struct Judged {
    /// The line printed for it: the verdict in words, or its JSON line.
    line: String,
    fate: Fate,
    bytes_in: u64,
    bytes_out: u64,
}

#[derive(Default)]
struct Summary {
    files: u64,
    admitted: u64,
    downsampled: u64,
    reencoded: u64,
    converted: u64,
    refused: BTreeMap<&'static str, u64>,
    errors: u64,
    bytes_in: u64,
    bytes_out: u64,
}

impl Summary {
    fn add(&mut self, judged: &Judged) {
        self.files += 1;
        self.bytes_in += judged.bytes_in;
        self.bytes_out += judged.bytes_out;
        match judged.fate {
            Fate::Admitted { resized, reencoded, converted } => {
                self.admitted += 1;
                self.downsampled += u64::from(resized);
                self.reencoded += u64::from(reencoded && !resized);
                self.converted += u64::from(converted);
            }
            Fate::Refused(reason) => *self.refused.entry(reason).or_default() += 1,
            Fate::Error => self.errors += 1,
        }
    }

    fn refused_total(&self) -> u64 {
        self.refused.values().sum()
    }

    fn words(&self, seconds: f64, jobs: usize) -> String {
        let rate = if seconds > 0.0 { self.files as f64 / seconds } else { 0.0 };
        let refused = if self.refused.is_empty() {
            String::new()
        } else {
            let by_reason: Vec<String> = self.refused.iter().map(|(r, n)| format!("{r} {n}")).collect();
            format!(" ({})", by_reason.join(", "))
        };
        format!(
            "{} files in {seconds:.1} s ({rate:.1} files/s, {jobs} jobs): {} admitted ({} downsampled, {} \
             re-encoded, {} converted), {} refused{refused}, {} could not be judged; {} bytes in, {} bytes out",
            self.files,
            self.admitted,
            self.downsampled,
            self.reencoded,
            self.converted,
            self.refused_total(),
            self.errors,
            self.bytes_in,
            self.bytes_out
        )
    }
}

/// Checks the roots before anything is judged: a directory needs `-r`, a missing path is named.
pub fn check_roots(roots: &[PathBuf], recursive: bool) -> Result<(), String> {
    for root in roots {
        if !recursive && root.is_dir() {
            return Err(format!("{} is a directory: -r admits the files in it and below", root.display()));
        }
    }
    Ok(())
}

pub async fn admit_many(bulk: Bulk, gate: Gate) -> u8 {
    let started = Instant::now();
    let bulk = Arc::new(bulk);
    let (sender, mut receiver) = mpsc::channel::<Walked>(WALK_AHEAD);
    let walk = {
        let bulk = bulk.clone();
        std::thread::spawn(move || walk(&bulk, &sender))
    };
    let progress = Progress::new("files");
    let gate = Arc::new(gate);
    let written = Arc::new(std::sync::Mutex::new(HashSet::new()));
    let mut in_flight = VecDeque::new();
    let mut summary = Summary::default();
    let mut queued = 0u64;
    let mut walk_done = false;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    // `jobs` files are read and judged at once; the window of files handed out is far wider, so a
    // slow file at the head of the line (the verdicts are printed in input order) does not leave
    // the other jobs idle: a judged file waiting for its turn to be printed holds only its line.
    let judging = Arc::new(tokio::sync::Semaphore::new(bulk.jobs));
    loop {
        while !walk_done && in_flight.len() < WINDOW {
            match receiver.recv().await {
                Some(walked) => {
                    queued += 1;
                    let (bulk, gate, written, judging) = (bulk.clone(), gate.clone(), written.clone(), judging.clone());
                    in_flight.push_back(tokio::spawn(async move {
                        let _turn = judging.acquire_owned().await.expect("the semaphore is never closed");
                        judge(&bulk, &gate, &written, walked).await
                    }));
                }
                None => {
                    walk_done = true;
                    progress.set_total(queued, "files");
                }
            }
        }
        let Some(next) = in_flight.pop_front() else { break };
        let judged = match next.await {
            Ok(j) => j,
            Err(e) => return fail(format!("a judging task failed: {e}")),
        };
        summary.add(&judged);
        progress.advance();
        if summary.refused_total() + summary.errors > 0 {
            progress.message(format!("{} refused, {} could not be judged", summary.refused_total(), summary.errors));
        }
        let line = if bulk.jsonl { judged.line } else { super::terminal_text(&judged.line).into_owned() };
        if progress.suspend(|| writeln!(out, "{line}").and_then(|()| out.flush())).is_err() {
            // Stdout cannot be written (a full disk; a closed pipe ends the process at its write,
            // see main.rs): the rest would be judged for nobody.
            break;
        }
    }
    drop(receiver); // a walk blocked on a full channel ends
    let _ = walk.join();
    progress.finish();
    eprintln!("mediagate: {}", summary.words(started.elapsed().as_secs_f64(), bulk.jobs));
    let unjudged = if summary.errors > 0 { Exit::Unjudged } else { Exit::Done };
    unjudged.worst(Exit::judged(summary.refused_total() > 0)).code()
}

/// Sends every file the roots and the list name, in order: a directory's entries sorted by name,
/// hidden ones (a leading `.`) left out, symbolic links to files followed, to directories not.
fn walk(bulk: &Bulk, sender: &mpsc::Sender<Walked>) {
    let send = |w: Walked| sender.blocking_send(w).is_ok();
    let walk_root = |root: &Path| -> bool {
        if !root.is_dir() {
            return send(Walked::File(root.to_path_buf()));
        }
        if !bulk.recursive {
            let why = "a directory: -r admits the files in it and below".to_string();
            return send(Walked::Unwalkable(root.to_path_buf(), why));
        }
        let entries = walkdir::WalkDir::new(root)
            .follow_links(false)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
        for entry in entries {
            let ok = match entry {
                Ok(e) if e.file_type().is_file() => send(Walked::File(e.into_path())),
                Ok(e) if e.file_type().is_symlink() && e.path().is_file() => send(Walked::File(e.into_path())),
                Ok(_) => true,
                Err(e) => {
                    let path = e.path().map_or_else(|| root.to_path_buf(), Path::to_path_buf);
                    send(Walked::Unwalkable(path, e.to_string()))
                }
            };
            if !ok {
                return false;
            }
        }
        true
    };
    for root in &bulk.roots {
        if !walk_root(root) {
            return;
        }
    }
    let Some(list) = &bulk.files_from else { return };
    let reader: Box<dyn BufRead> = if list == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        match std::fs::File::open(list) {
            Ok(f) => Box::new(std::io::BufReader::new(f)),
            Err(e) => {
                send(Walked::Unwalkable(list.clone(), format!("cannot read the list of paths: {e}")));
                return;
            }
        }
    };
    for line in reader.lines() {
        match line {
            Ok(line) if line.trim().is_empty() => {}
            Ok(line) => {
                if !walk_root(Path::new(line.trim_end_matches('\r'))) {
                    return;
                }
            }
            Err(e) => {
                send(Walked::Unwalkable(list.clone(), format!("cannot read the list of paths: {e}")));
                return;
            }
        }
    }
}

async fn judge(bulk: &Bulk, gate: &Gate, written: &std::sync::Mutex<HashSet<u64>>, walked: Walked) -> Judged {
    let (path, unwalkable) = match walked {
        Walked::File(p) => (p, None),
        Walked::Unwalkable(p, why) => (p, Some(why)),
    };
    let error = |code: &str, message: String| {
        let line = if bulk.jsonl {
            serde_json::json!({"path": path.to_string_lossy(), "error": {"code": code, "message": message}}).to_string()
        } else {
            format!("error {}: {message}", path.display())
        };
        Judged { line, fate: Fate::Error, bytes_in: 0, bytes_out: 0 }
    };
    if let Some(why) = unwalkable {
        return error("io", format!("{} could not be read: {why}", path.display()));
    }
    let bytes = match read_capped(&path) {
        Ok(b) => b,
        Err(e) => return error("io", e),
    };
    let input = InputMedia {
        bytes,
        claimed_mime: bulk.mime.clone(),
        name: Some(path.to_string_lossy().into_owned()),
        convert: bulk.convert,
        page: None,
    };
    let answer = match gate.admit(&input, bulk.options).await.map(|a| a.answer) {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => return error("usage", format!("{e:?}")),
        Err(e) => return error("sandbox", format!("{}: {e}", path.display())),
    };
    if let Err(e) = check_json(&answer.json, "verdict") {
        return error("guest_output", e);
    }
    let bytes_in = input.bytes.len() as u64;
    let (fate, bytes_out, out) = match &answer.verdict {
        Verdict::Admitted(a) => {
            let admitted = a.bytes(&input.bytes);
            let out = match &bulk.out_dir {
                Some(dir) => match write_under(dir, &path, &a.mime, admitted, written) {
                    Ok(out) => Some(out),
                    Err(e) => return error("io", e),
                },
                None => None,
            };
            let fate =
                Fate::Admitted { resized: a.resized, reencoded: a.reencoded, converted: answer.conversion.is_some() };
            (fate, admitted.len() as u64, out)
        }
        Verdict::Refused(r) => (Fate::Refused(r.reason.as_str()), 0, None),
    };
    let line = if bulk.jsonl {
        // The component's verdict with the path (and where it was written, and the type --convert
        // would convert, with the hint in words) in front:
        // `{"path": …, "out"?: …, "convertible"?: …, "hint"?: …, <the verdict's keys>}`.
        let mut head = vec![("path", serde_json::json!(path.to_string_lossy()))];
        if let Some(out) = &out {
            head.push(("out", serde_json::json!(out.to_string_lossy())));
        }
        if let Some(sniffed) = &answer.convertible {
            head.push(("convertible", serde_json::json!(sniffed)));
            head.push(("hint", convert_hint(sniffed).into()));
        }
        with_head(&head, &answer.json)
    } else {
        let mut line = verdict_line(&path, &answer.verdict);
        if let Some(c) = &answer.conversion {
            line.push_str(&format!(" (converted from {}: {})", c.from, c.note));
        }
        if let Some(sniffed) = &answer.convertible {
            line.push_str(&format!("; {}", convert_hint(sniffed)));
        }
        line
    };
    Judged { line, fate, bytes_in, bytes_out }
}

/// Writes what passed under `dir` at the path it was given (a leading `/` and any `..` left out),
/// with the admitted type's extension added when the name's does not say it (a converted SVG
/// `a.svg` is written `a.svg.png`). Two inputs that would land on one output are an error for the
/// second: nothing is overwritten that this run wrote.
fn write_under(
    dir: &Path,
    input: &Path,
    mime: &str,
    bytes: &[u8],
    written: &std::sync::Mutex<HashSet<u64>>,
) -> Result<PathBuf, String> {
    let relative: PathBuf = input.components().filter(|c| matches!(c, Component::Normal(_))).collect();
    let mut out = dir.join(&relative);
    if let Some(extension) = extension_for(mime)
        && !names_type(input, extension)
    {
        let mut name = out.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{extension}"));
        out.set_file_name(name);
    }
    // A hash of each path written, not the path: a million outputs hold 16 MB, not their names.
    let key = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        out.hash(&mut h);
        h.finish()
    };
    if !written.lock().unwrap_or_else(|e| e.into_inner()).insert(key) {
        return Err(format!("another input was already written to {}; {} was not", out.display(), input.display()));
    }
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(&out, bytes).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(out)
}

fn extension_for(mime: &str) -> Option<&'static str> {
    Some(match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "application/pdf" => "pdf",
        _ => return None,
    })
}

/// Whether the file's extension already names the type (`jpeg` and `jpg` alike).
fn names_type(path: &Path, extension: &str) -> bool {
    let Some(own) = path.extension().and_then(|e| e.to_str()) else { return false };
    let own = own.to_ascii_lowercase();
    own == extension || (extension == "jpg" && own == "jpeg")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_mirror_the_given_path_and_say_their_type() {
        let dir = std::env::temp_dir().join(format!("mediagate-bulk-{}", std::process::id()));
        let written = std::sync::Mutex::new(HashSet::new());
        let out = write_under(&dir, Path::new("/abs/../shots/a.PNG"), "image/png", b"x", &written).unwrap();
        assert_eq!(out, dir.join("abs/shots/a.PNG"));
        let out = write_under(&dir, Path::new("./d/diagram.svg"), "image/png", b"x", &written).unwrap();
        assert_eq!(out, dir.join("d/diagram.svg.png"));
        let out = write_under(&dir, Path::new("p.jpeg"), "image/jpeg", b"x", &written).unwrap();
        assert_eq!(out, dir.join("p.jpeg"));
        let again = write_under(&dir, Path::new("abs/shots/a.PNG"), "image/png", b"y", &written);
        assert!(again.unwrap_err().contains("already written"));
        assert_eq!(std::fs::read(dir.join("abs/shots/a.PNG")).unwrap(), b"x");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_summary_counts_each_fate() {
        let mut s = Summary::default();
        let judged = |fate, bytes_in, bytes_out| Judged { line: String::new(), fate, bytes_in, bytes_out };
        s.add(&judged(Fate::Admitted { resized: true, reencoded: true, converted: false }, 10, 5));
        s.add(&judged(Fate::Admitted { resized: false, reencoded: true, converted: true }, 10, 5));
        s.add(&judged(Fate::Refused("magic_mismatch"), 3, 0));
        s.add(&judged(Fate::Refused("magic_mismatch"), 3, 0));
        s.add(&judged(Fate::Error, 0, 0));
        let words = s.words(2.0, 2);
        assert!(words.starts_with("5 files in 2.0 s (2.5 files/s, 2 jobs): 2 admitted (1 downsampled, 1 re-encoded, 1 converted), 2 refused (magic_mismatch 2), 1 could not be judged; 26 bytes in, 10 bytes out"), "{words}");
    }
}
