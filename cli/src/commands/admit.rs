//! `mediagate admit` and `mediagate admit-tool-result`.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;
use mediagate::gate::{InputError, InputMedia, Verdict};

use super::input::{read_capped, read_stdin_bytes, read_stdin_text};
use super::report::{block_json, check_json, convert_hint, verdict_line, with_head};
use super::{Code, Exit, GateArgs, Report, fail};

#[derive(Args)]
pub struct AdmitArgs {
    /// The image or PDF files, and with -r directories; `-` reads stdin (one input).
    #[arg(required_unless_present = "files_from")]
    files: Vec<PathBuf>,
    /// The claimed media type, checked against the bytes. By default the one the bytes carry when
    /// it is a type the gate admits (a PDF named `x.png` is the document it is), else the one the
    /// extension names; with --convert (or --page) the one the bytes carry whenever they are an
    /// image, as `view_image` does (an SVG named `x.png` is converted).
    #[arg(long)]
    mime: Option<String>,
    #[command(flatten)]
    gate: GateArgs,
    /// Print one JSON object instead of a line (one input; with many, --jsonl); a refusal `--convert`
    /// would undo carries `convertible` and `hint`, as the line does.
    #[arg(long)]
    json: bool,
    /// Write the admitted bytes (possibly downsampled) to this file (one input; with many,
    /// --out-dir).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Write the admitted content block (Anthropic shape, JSON) to this file (one input).
    #[arg(long, value_name = "FILE")]
    block_out: Option<PathBuf>,
    /// Render this page (1-based) of a PDF and admit it as an image (implies --convert; one input).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    page: Option<u32>,
    /// Admit the files in the directories named, and below (sorted by name; hidden entries left
    /// out; links to files followed, to directories not).
    #[arg(short = 'r', long)]
    recursive: bool,
    /// Also admit the paths listed in FILE, one a line (`-`: stdin).
    #[arg(long, value_name = "FILE")]
    files_from: Option<PathBuf>,
    /// Files judged at once, each in its own sandbox [default: the number of cores].
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    jobs: Option<u32>,
    /// Print one JSON line per file, in input order: `{"path", "out"?, "convertible"?, "hint"?, …the
    /// verdict}`.
    #[arg(long)]
    jsonl: bool,
    /// Write what passed under DIR at the path it was given (a leading `/` and `..` left out),
    /// the admitted type's extension added when the name does not say it (`a.svg` -> `a.svg.png`).
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

impl AdmitArgs {
    /// Many inputs, directories (`-r`) or a list, or a flag only many take: the bulk command
    /// (`bulk.rs`). One path with none of those is the single command, as it always was (a
    /// directory is refused there as not a regular file).
    pub fn is_bulk(&self) -> bool {
        self.files.len() != 1
            || self.recursive
            || self.files_from.is_some()
            || self.jsonl
            || self.out_dir.is_some()
            || self.jobs.is_some()
    }

    /// The worker threads the command runs on: the jobs of a bulk run, none for one file.
    pub fn worker_threads(&self) -> Option<usize> {
        self.is_bulk().then(|| self.jobs().max(1))
    }

    fn jobs(&self) -> usize {
        self.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j as usize)
    }
}

#[derive(Args)]
pub struct ToolResultArgs {
    /// The tool's name, used in the text that replaces a refused block.
    #[arg(long)]
    tool: String,
    /// The tool result's content as JSON (a list of blocks, an object with `content`, or one
    /// block); `-` or nothing reads stdin.
    file: Option<PathBuf>,
    #[command(flatten)]
    gate: GateArgs,
}

pub async fn admit(args: AdmitArgs) -> u8 {
    if args.is_bulk() {
        return admit_many(args).await;
    }
    let report = Report::json(args.json);
    let file = &args.files[0];
    let from_stdin = file == Path::new("-");
    let bytes = match if from_stdin { read_stdin_bytes() } else { read_capped(file) } {
        Ok(b) => b,
        Err(e) => return report.fail(Code::Io, e),
    };
    // What the verdict line calls the input.
    let name = if from_stdin { Path::new("stdin") } else { file.as_path() };
    let gate = match super::gate_reporting(super::Calls::One, report) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let options = args.gate.options();
    // Sniff → claim → dispatch happen in the gate, in this one call.
    let input = InputMedia {
        bytes,
        claimed_mime: args.mime.clone(),
        name: (!from_stdin).then(|| file.to_string_lossy().into_owned()),
        convert: args.gate.convert,
        page: args.page,
    };
    let answer = match gate.admit(&input, options).await.map(|a| a.answer) {
        Ok(Ok(answer)) => answer,
        Ok(Err(InputError::PageOfNonPdf(mime))) => {
            return report.fail(Code::Usage, format!("--page applies to PDFs; {} is {mime}", name.display()));
        }
        Err(e) => return report.fail(Code::Sandbox, format!("{}: {e}", name.display())),
    };
    let bytes = &input.bytes;
    if let Verdict::Admitted(admitted) = &answer.verdict {
        if let Some(out) = &args.out
            && let Err(e) = std::fs::write(out, admitted.bytes(bytes))
        {
            return report.fail(Code::Io, format!("cannot write {}: {e}", out.display()));
        }
        if let Some(out) = &args.block_out
            && let Err(e) = std::fs::write(out, block_json(admitted, bytes).to_string())
        {
            return report.fail(Code::Io, format!("cannot write {}: {e}", out.display()));
        }
    }
    if args.json {
        if let Err(e) = check_json(&answer.json, "verdict") {
            return report.fail(Code::GuestOutput, e);
        }
        // The line's `--convert` hint, as fields: `convertible` (the type) and `hint` (the words).
        let head = match &answer.convertible {
            Some(sniffed) => vec![("convertible", serde_json::json!(sniffed)), ("hint", convert_hint(sniffed).into())],
            None => Vec::new(),
        };
        println!("{}", with_head(&head, &answer.json));
    } else {
        let mut line = verdict_line(name, &answer.verdict);
        if let Some(c) = &answer.conversion {
            line.push_str(&format!(" (converted from {}: {})", c.from, c.note));
        }
        if let Some(sniffed) = &answer.convertible {
            line.push_str(&format!("; {}", convert_hint(sniffed)));
        }
        println!("{}", super::terminal_text(&line));
    }
    Exit::judged(matches!(answer.verdict, Verdict::Refused(_))).code()
}

/// The bulk command: the flags only one input takes are refused, the roots checked, then
/// `bulk::admit_many` on a gate sized for the jobs.
async fn admit_many(args: AdmitArgs) -> u8 {
    let one_only = [
        (args.json, "--json prints one verdict; with many inputs, --jsonl prints one a line"),
        (args.out.is_some(), "--out writes one file; with many inputs, --out-dir writes each"),
        (args.block_out.is_some(), "--block-out writes one block; it takes one input"),
        (args.page.is_some(), "--page renders a page of one PDF; it takes one input"),
        (
            args.files.iter().any(|f| f == Path::new("-")),
            "`-` reads one input from stdin; a list of paths on stdin is --files-from -",
        ),
    ];
    if let Some((_, why)) = one_only.iter().find(|(given, _)| *given) {
        return super::Report::Text.fail(Code::Usage, why);
    }
    if let Err(e) = super::bulk::check_roots(&args.files, args.recursive) {
        return super::Report::Text.fail(Code::Usage, e);
    }
    let jobs = args.jobs();
    let gate = match super::gate_for_jobs(jobs as u32) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let bulk = super::bulk::Bulk {
        options: args.gate.options(),
        convert: args.gate.convert,
        roots: args.files,
        files_from: args.files_from,
        recursive: args.recursive,
        jobs,
        jsonl: args.jsonl,
        out_dir: args.out_dir,
        mime: args.mime,
    };
    super::bulk::admit_many(bulk, gate).await
}

/// JSON text from a file, or from stdin when `file` is `-` or absent; at most `cap` bytes, else an
/// error naming the cap (nothing past it is read).
pub(super) fn read_json_text(file: Option<&Path>, cap: u64) -> Result<String, String> {
    let (name, mut reader): (String, Box<dyn Read>) = match file {
        None => ("stdin".into(), Box::new(std::io::stdin())),
        Some(p) if p == Path::new("-") => ("stdin".into(), Box::new(std::io::stdin())),
        Some(p) => (
            p.display().to_string(),
            Box::new(std::fs::File::open(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?),
        ),
    };
    let mut bytes = Vec::new();
    reader.by_ref().take(cap + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read {name}: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(format!("{name} is larger than the {cap} bytes mediagate reads here"));
    }
    String::from_utf8(bytes).map_err(|_| format!("{name} is not UTF-8 text"))
}

pub async fn admit_tool_result(args: ToolResultArgs) -> u8 {
    let input = match args.file.as_deref() {
        None => read_stdin_text(),
        Some(p) if p == Path::new("-") => read_stdin_text(),
        Some(p) => {
            read_capped(p).and_then(|b| String::from_utf8(b).map_err(|_| format!("{} is not UTF-8 text", p.display())))
        }
    };
    let input = match input {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let gate = match super::gate(super::Calls::One) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let options = args.gate.options();
    let admission = match gate.admit_tool_result(&args.tool, &input, args.gate.convert, options).await {
        Ok(a) => a.answer,
        Err(e) => return fail(e),
    };
    // The gate's text is printed as it is: it must be JSON.
    if let Err(e) = check_json(&admission.json, "tool result") {
        return fail(e);
    }
    println!("{}", admission.json);
    // The gate refuses a result whole (its one refusal at path "") only when it cannot read it
    // (not JSON, over its read cap): the input, not a block, is what failed, as `admit-request`'s
    // unusable request.
    let unreadable = admission.refused.iter().any(|r| r.path.is_empty());
    let exit = if unreadable { Exit::Unjudged } else { Exit::judged(!admission.refused.is_empty()) };
    exit.code()
}
