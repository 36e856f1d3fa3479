//! The command line's own reads of the files and stdin it is given: regular files only, never more
//! than a ceiling held in memory, a cut-off input never gated as if it were the whole.

use std::io::Read;
use std::path::Path;

/// The host never reads more than this into memory; the gate's own caps are far lower.
const HOST_READ_CEILING: u64 = 256 << 20;

/// Reads a file the command line named, refusing before it is opened what is not a regular file
/// (a FIFO would block the open until a writer appears, a device or `/proc` file never ends) and
/// what is larger than [`HOST_READ_CEILING`]. The open is non-blocking and the opened file is
/// checked again, so a FIFO swapped in between `stat` and `open` is refused too.
pub fn read_capped(path: &Path) -> Result<Vec<u8>, String> {
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

/// Stdin, whole, or an error when it holds more than [`HOST_READ_CEILING`]: a cut-off input is
/// never gated as if it were the whole.
pub fn read_stdin_bytes() -> Result<Vec<u8>, String> {
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
pub fn read_stdin_text() -> Result<String, String> {
    String::from_utf8(read_stdin_bytes()?).map_err(|_| "stdin is not UTF-8 text".to_string())
}
