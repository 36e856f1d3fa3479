//! `mediagate admit` and `mediagate admit-tool-result`.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;
use mediagate::gate::{PageError, RefusalReason, Verdict};

use super::report::{block_json, conversion_json, conversion_list_json, verdict_json, verdict_line};
use super::{Code, EXIT_REFUSED, GateArgs, Report, fail};

/// The host never reads more than this into memory; the gate's own caps are far lower.
const HOST_READ_CEILING: u64 = 256 << 20;

#[derive(Args)]
pub struct AdmitArgs {
    /// The image or PDF file; `-` reads stdin.
    file: PathBuf,
    /// The claimed media type, checked against the bytes. By default the one the bytes carry when
    /// it is a type the gate admits (a PDF named `x.png` is the document it is), else the one the
    /// extension names; with --convert (or --page) the one the bytes carry whenever they are an
    /// image, as `view_image` does (an SVG named `x.png` is converted).
    #[arg(long)]
    mime: Option<String>,
    #[command(flatten)]
    gate: GateArgs,
    /// Print one JSON object instead of a line.
    #[arg(long)]
    json: bool,
    /// Write the admitted bytes (possibly downsampled) to this file.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Write the admitted content block (Anthropic shape, JSON) to this file.
    #[arg(long, value_name = "FILE")]
    block_out: Option<PathBuf>,
    /// Render this page (1-based) of a PDF and admit it as an image (implies --convert).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    page: Option<u32>,
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

/// The media type a file's extension names, as an agent's Read tool infers it.
pub fn mime_from_extension(path: &Path) -> String {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" | "jpe" | "jfif" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "svg" => "image/svg+xml",
        "bmp" => "image/bmp",
        "tif" | "tiff" => "image/tiff",
        "ico" => "image/vnd.microsoft.icon",
        "heic" => "image/heic",
        "avif" => "image/avif",
        "txt" => "text/plain",
        "html" | "htm" => "text/html",
        _ => "application/octet-stream",
    }
    .to_string()
}

/// Reads a file the command line named, refusing before it is opened what is not a regular file
/// (a FIFO would block the open until a writer appears, a device or `/proc` file never ends) and
/// what is larger than [`HOST_READ_CEILING`]. The open is non-blocking and the opened file is
/// checked again, so a FIFO swapped in between `stat` and `open` is refused too.
fn read_capped(path: &Path) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let metadata = std::fs::metadata(path).map_err(cannot)?;
    check_regular(path, &metadata)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(cannot)?;
    check_regular(path, &file.metadata().map_err(cannot)?)?;
    let mut bytes = Vec::new();
    file.take(HOST_READ_CEILING + 1).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() as u64 > HOST_READ_CEILING {
        return Err(over_ceiling(&path.display().to_string())); // it grew while being read
    }
    Ok(bytes)
}

/// A regular file within the ceiling; anything else is named and refused.
fn check_regular(path: &Path, metadata: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    let what = if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("a directory")
    } else if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else {
        Some("a special file")
    };
    if let Some(what) = what {
        return Err(format!("{} is not a regular file ({what}); it was not read", path.display()));
    }
    if metadata.len() > HOST_READ_CEILING {
        return Err(over_ceiling(&path.display().to_string()));
    }
    Ok(())
}

fn over_ceiling(what: &str) -> String {
    format!("{what} is larger than the {} MiB mediagate reads at most; nothing was admitted", HOST_READ_CEILING >> 20)
}

pub async fn admit(args: AdmitArgs) -> u8 {
    let report = Report::json(args.json);
    let from_stdin = args.file == Path::new("-");
    let bytes = match if from_stdin { read_stdin_bytes() } else { read_capped(&args.file) } {
        Ok(b) => b,
        Err(e) => return report.fail(Code::Io, e),
    };
    // What the verdict line calls the input.
    let name = if from_stdin { Path::new("stdin") } else { args.file.as_path() };
    let converting = args.gate.convert || args.page.is_some();
    let gate = match super::gate_reporting(super::Calls::One, report) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let sniffed = match gate.sniff(&bytes).await {
        Ok(sniffed) => sniffed,
        Err(e) => return report.fail(Code::Sandbox, format!("{}: {e}", name.display())),
    };
    let mime = match &args.mime {
        Some(m) => m.clone(),
        None => claimed_type(&sniffed, &args.file, converting),
    };
    let options = args.gate.options(gate.default_options());
    let is_document = mediagate_mime_is_pdf(&mime);
    let converted = match (args.page, is_document) {
        (Some(page), true) => match gate.admit_pdf_page(&bytes, page, options).await {
            Ok(Ok(c)) => Ok((c.verdict, c.conversion)),
            Ok(Err(e)) => return page_refused(&args, name, &bytes, &e),
            Err(e) => Err(e),
        },
        (Some(_), false) => {
            return report.fail(Code::Usage, format!("--page applies to PDFs; {} is {mime}", name.display()));
        }
        (None, true) => gate.admit_document(&bytes, &mime, options).await.map(|v| (v, None)),
        (None, false) if args.gate.convert => {
            gate.admit_image_converting(&bytes, &mime, options).await.map(|c| (c.verdict, c.conversion))
        }
        (None, false) => gate.admit_image(&bytes, &mime, options).await.map(|v| (v, None)),
    };
    let (verdict, conversion) = match converted {
        Ok(v) => v,
        Err(e) => return report.fail(Code::Sandbox, format!("{}: {e}", name.display())),
    };
    if let Verdict::Admitted(admitted) = &verdict {
        if let Some(out) = &args.out
            && let Err(e) = std::fs::write(out, admitted.bytes(&bytes))
        {
            return report.fail(Code::Io, format!("cannot write {}: {e}", out.display()));
        }
        if let Some(out) = &args.block_out
            && let Err(e) = std::fs::write(out, block_json(admitted, &bytes).to_string())
        {
            return report.fail(Code::Io, format!("cannot write {}: {e}", out.display()));
        }
    }
    if args.json {
        let mut json = verdict_json(&verdict);
        if let Some(c) = &conversion {
            json["converted"] = conversion_json(c);
        }
        println!("{json}");
    } else {
        let mut line = verdict_line(name, &verdict);
        if let Some(c) = &conversion {
            line.push_str(&format!(" (converted from {}: {})", c.from, c.note));
        }
        // (A type the gate admits as it is is not named: whether --convert helps there, an
        // animated GIF, depends on the profile.)
        let other_type = !ADMISSIBLE.contains(&sniffed.as_str());
        if !converting && other_type && is_type_refusal(&verdict) && gate_converts(&gate, &sniffed).await {
            line.push_str(&format!("; the bytes are {sniffed}, which --convert converts"));
        }
        println!("{}", super::terminal_text(&line));
    }
    match verdict {
        Verdict::Admitted(_) => 0,
        Verdict::Refused(_) => EXIT_REFUSED,
    }
}

/// `{…}` → `{…,"conversions":[…]}`: spliced, so the gate's text stays byte for byte as it was.
pub(super) fn with_conversions(object: String, list: &[mediagate::gate::ConversionMade]) -> String {
    let mut text = object;
    let end = text.trim_end().len();
    text.truncate(end.saturating_sub(1)); // the object's closing brace
    text.push_str(",\"conversions\":");
    text.push_str(&conversion_list_json(list).to_string());
    text.push('}');
    text
}

/// A PDF page that did not become an image: refused (exit 1), its kind and its own words.
fn page_refused(args: &AdmitArgs, name: &Path, bytes: &[u8], e: &PageError) -> u8 {
    let reason = match e {
        PageError::Refused(r) => r.reason.as_str(),
        other => other.kind(),
    };
    if args.json {
        let mut json = serde_json::json!({
            "ok": false,
            "reason": reason,
            "raw_bytes": bytes.len(),
            "message": e.message(),
        });
        if let PageError::NoSuchPage(c) = e {
            json["requested"] = c.requested.into();
            json["count"] = c.count.into();
        }
        println!("{json}");
    } else {
        let line = format!("refused {}: {reason} — {} ({} bytes)", name.display(), e.message(), bytes.len());
        println!("{}", super::terminal_text(&line));
    }
    EXIT_REFUSED
}

/// The types the gate admits as they are.
const ADMISSIBLE: [&str; 5] = ["image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf"];

/// The type a file without `--mime` claims. Converting, the one its bytes carry whenever they are
/// an image or a PDF — what `view_image` and `read_image` claim, so an SVG named `.png` converts
/// the same through each. Otherwise the rules stay exact: the bytes' type when the gate admits it
/// (a PDF named `report.png` is the document it is), else the one the extension names (so an SVG
/// named `.png` is refused for its signature, with a hint that `--convert` takes it).
fn claimed_type(sniffed: &str, file: &Path, converting: bool) -> String {
    let sniffed_wins = ADMISSIBLE.contains(&sniffed) || (converting && sniffed.starts_with("image/"));
    if sniffed_wins { sniffed.to_string() } else { mime_from_extension(file) }
}

/// A refusal for the type (claimed, or carried by the bytes): one `--convert` may lift.
fn is_type_refusal(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::Refused(r) if matches!(r.reason, RefusalReason::MagicMismatch | RefusalReason::MimeUnsupported))
}

/// Whether the converters take `mime` (asked of the convert component: its list is the one place).
async fn gate_converts(gate: &mediagate::Gate, mime: &str) -> bool {
    gate.convertible_types().await.is_ok_and(|types| types.iter().any(|t| t == mime))
}

fn mediagate_mime_is_pdf(mime: &str) -> bool {
    mime.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/pdf")
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
    let options = args.gate.options(gate.default_options());
    let admitted = if args.gate.convert {
        gate.admit_tool_result_converting(&args.tool, &input, options).await.map(|c| (c.admission, Some(c.conversions)))
    } else {
        gate.admit_tool_result(&args.tool, &input, options).await.map(|a| (a, None))
    };
    let (admission, conversions) = match admitted {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    let text = super::report::tool_result_json(&input, &admission).map(|text| match conversions {
        // `"conversions"` is added with --convert only, after the members the gate wrote.
        Some(list) => with_conversions(text, &list),
        None => text,
    });
    match text {
        Ok(text) => {
            println!("{text}");
            if admission.refused.is_empty() { 0 } else { EXIT_REFUSED }
        }
        Err(e) => fail(e),
    }
}

/// Stdin, whole, or an error when it holds more than [`HOST_READ_CEILING`]: a cut-off input is
/// never gated as if it were the whole.
fn read_stdin_bytes() -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(HOST_READ_CEILING + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    if bytes.len() as u64 > HOST_READ_CEILING {
        return Err(over_ceiling("stdin"));
    }
    Ok(bytes)
}

/// [`read_stdin_bytes`] as UTF-8 text.
fn read_stdin_text() -> Result<String, String> {
    String::from_utf8(read_stdin_bytes()?).map_err(|_| "stdin is not UTF-8 text".to_string())
}
