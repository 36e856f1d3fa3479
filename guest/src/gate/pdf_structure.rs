//! The structure of a PDF, checked without interpreting it: what every provider's parser needs
//! before it can open the file. A file that starts with `%PDF-` and is otherwise junk, cut short,
//! or locked with a password is refused here in words, instead of reaching a provider that
//! refuses the request (and with it the session).
//!
//! In order: a header with a version (`%PDF-1.7`); `%%EOF` in the last 1024 bytes (where readers
//! look for it; a cut file has none); `startxref` and its offset before it; at that offset a
//! cross-reference table (`xref` … `trailer <<…>>`) or a cross-reference stream (an object whose
//! dictionary says `/Type /XRef`); a trailer with `/Root`; no `/Encrypt` (an encrypted file is
//! refused as encrypted: providers take no encrypted PDF); at least one page object
//! (`/Type /Page`), looked for in the file and, when it is not there, in its Flate-compressed
//! object streams, inflated under [`PDF_OBJECT_STREAMS_INFLATE_MAX`] in all. Nothing else is
//! decoded: no content stream, no image, no font.

use crate::limits::PDF_OBJECT_STREAMS_INFLATE_MAX;

/// Why a PDF is refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Problem {
    /// The trailer names an `/Encrypt` dictionary.
    Encrypted,
    /// The structure is broken or missing, in words.
    Broken(String),
}

fn broken<T>(message: impl Into<String>) -> Result<T, Problem> {
    Err(Problem::Broken(message.into()))
}

/// Readers look for `%%EOF` this far from the end.
const EOF_WINDOW: usize = 1024;
/// A trailer or cross-reference stream dictionary is at most this long.
const DICT_MAX: usize = 1 << 20;

pub fn check(bytes: &[u8]) -> Result<(), Problem> {
    let versioned = matches!(bytes.get(..8), Some([b'%', b'P', b'D', b'F', b'-', major, b'.', minor])
        if major.is_ascii_digit() && minor.is_ascii_digit());
    if !versioned {
        return broken("its header names no version (`%PDF-1.7`)");
    }
    let tail_start = bytes.len().saturating_sub(EOF_WINDOW);
    let Some(eof) = rfind(&bytes[tail_start..], b"%%EOF").map(|i| tail_start + i) else {
        return broken("it has no `%%EOF` in its last 1024 bytes: it is cut short, or not a whole PDF");
    };
    let Some(startxref) = rfind(&bytes[..eof], b"startxref") else {
        return broken("it has no `startxref` before its `%%EOF`: it is cut short, or not a whole PDF");
    };
    let after = skip_space(bytes, startxref + b"startxref".len());
    let digits = bytes[after..eof].iter().take_while(|b| b.is_ascii_digit()).count();
    let offset = std::str::from_utf8(&bytes[after..after + digits]).ok().and_then(|d| d.parse::<usize>().ok());
    let Some(offset) = offset.filter(|&o| o < startxref) else {
        return broken("its `startxref` names no offset of a cross-reference section inside the file");
    };

    let trailer = trailer_at(bytes, offset)?;
    if trailer.iter().any(|n| n == b"Encrypt") {
        return Err(Problem::Encrypted);
    }
    if !trailer.iter().any(|n| n == b"Root") {
        return broken("its trailer names no `/Root` (the document catalog)");
    }
    if !has_page(bytes)? {
        return broken("it has no page object (`/Type /Page`)");
    }
    Ok(())
}

/// The names (decoded) at the top level of the trailer of the cross-reference section at
/// `offset`: a table's `trailer` dictionary, or a cross-reference stream's own dictionary.
fn trailer_at(bytes: &[u8], offset: usize) -> Result<Vec<Vec<u8>>, Problem> {
    let at = skip_space(bytes, offset);
    if bytes[at..].starts_with(b"xref") {
        let Some(keyword) = find(&bytes[at..], b"trailer").map(|i| at + i) else {
            return broken("its cross-reference table has no `trailer`");
        };
        return dict_names(bytes, skip_space(bytes, keyword + b"trailer".len()))
            .ok_or_else(|| Problem::Broken("its trailer is not a dictionary the gate can read".into()));
    }
    // `N G obj <<…>>`: a cross-reference stream.
    let Some(obj) = object_header(bytes, at) else {
        return broken(format!("its `startxref` offset {offset} points at neither an xref table nor an xref stream"));
    };
    let names = dict_names(bytes, skip_space(bytes, obj))
        .ok_or_else(|| Problem::Broken("its cross-reference stream has no dictionary the gate can read".into()))?;
    let is_xref = names.windows(2).any(|w| w[0] == b"Type" && w[1] == b"XRef");
    if !is_xref {
        return broken(format!("its `startxref` offset {offset} points at an object that is not an xref stream"));
    }
    Ok(names)
}

/// `N G obj` at `at`: the position after `obj`.
fn object_header(bytes: &[u8], at: usize) -> Option<usize> {
    let number = |i: usize| {
        let n = bytes.get(i..)?.iter().take_while(|b| b.is_ascii_digit()).count();
        (n > 0).then_some(i + n)
    };
    let i = skip_space(bytes, number(at)?);
    let i = skip_space(bytes, number(i)?);
    bytes[i..].starts_with(b"obj").then_some(i + 3)
}

/// A page object: `/Type /Page` in the file, or in one of its Flate-compressed object streams.
fn has_page(bytes: &[u8]) -> Result<bool, Problem> {
    if has_page_type(bytes) {
        return Ok(true);
    }
    let mut budget = PDF_OBJECT_STREAMS_INFLATE_MAX;
    let mut at = 0;
    while let Some(i) = find(&bytes[at..], b"/ObjStm").map(|i| at + i) {
        at = i + b"/ObjStm".len();
        let Some(data) = object_stream_data(bytes, i) else { continue };
        match miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(data, budget) {
            Ok(inflated) => {
                if has_page_type(&inflated) {
                    return Ok(true);
                }
                budget -= inflated.len();
            }
            Err(e) if e.status == miniz_oxide::inflate::TINFLStatus::HasMoreOutput => {
                return broken(format!(
                    "its object streams inflate to more than {PDF_OBJECT_STREAMS_INFLATE_MAX} bytes before a page \
                     object is found"
                ));
            }
            Err(_) => {}
        }
    }
    Ok(false)
}

/// The raw data of the Flate-compressed object stream whose dictionary names `/ObjStm` at `at`.
fn object_stream_data(bytes: &[u8], at: usize) -> Option<&[u8]> {
    // The object's header is shortly before; its dictionary runs from there to `stream`.
    let from = at.saturating_sub(4096);
    let header = rfind(&bytes[from..at], b"obj").map(|i| from + i + 3)?;
    let names = dict_names(bytes, skip_space(bytes, header))?;
    let filters: Vec<&Vec<u8>> = names.iter().filter(|n| n.ends_with(b"Decode")).collect();
    if filters.len() != 1 || filters[0] != b"FlateDecode" || names.iter().any(|n| n == b"DecodeParms") {
        return None;
    }
    let keyword = find(&bytes[at..], b"stream").map(|i| at + i + b"stream".len())?;
    let start = if bytes[keyword..].starts_with(b"\r\n") { keyword + 2 } else { keyword + 1 };
    let end = find(&bytes[start.min(bytes.len())..], b"endstream").map(|i| start + i)?;
    Some(&bytes[start..end])
}

/// `/Type` followed by the name `/Page` (not `/Pages`).
fn has_page_type(bytes: &[u8]) -> bool {
    let mut at = 0;
    while let Some(i) = find(&bytes[at..], b"/Type").map(|i| at + i) {
        at = i + b"/Type".len();
        if bytes.get(at).is_some_and(|&b| is_regular(b)) {
            continue; // `/TypeX`
        }
        let value = skip_space(bytes, at);
        if bytes.get(value) == Some(&b'/') && name(bytes, value + 1).0 == b"Page" {
            return true;
        }
    }
    false
}

/// The names at the top level of the dictionary that opens at `at` (`<<`), decoded (`#xx`);
/// `None` when there is no dictionary there or it does not close within [`DICT_MAX`] bytes.
fn dict_names(bytes: &[u8], at: usize) -> Option<Vec<Vec<u8>>> {
    if !bytes[at..].starts_with(b"<<") {
        return None;
    }
    let end = bytes.len().min(at.saturating_add(DICT_MAX));
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut i = at;
    while i < end {
        match bytes[i] {
            b'<' if bytes.get(i + 1) == Some(&b'<') => {
                depth += 1;
                i += 2;
            }
            b'>' if bytes.get(i + 1) == Some(&b'>') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return Some(names);
                }
            }
            b'<' => i += bytes[i..end].iter().position(|&b| b == b'>')? + 1,
            b'(' => i = literal_string_end(&bytes[..end], i)?,
            b'%' => i += bytes[i..end].iter().position(|&b| b == b'\r' || b == b'\n').unwrap_or(end - i),
            b'/' => {
                let (n, next) = name(bytes, i + 1);
                if depth == 1 {
                    names.push(n);
                }
                i = next;
            }
            _ => i += 1,
        }
    }
    None
}

/// After the literal string that opens at `at` (balanced parentheses, `\` escapes).
fn literal_string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The name whose text starts at `at` (after `/`), `#xx` decoded, and the position after it.
fn name(bytes: &[u8], at: usize) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let mut i = at;
    while let Some(&b) = bytes.get(i).filter(|&&b| is_regular(b)) {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (b, hex) {
            (b'#', Some(decoded)) => {
                out.push(decoded);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    (out, i)
}

/// Not whitespace, not a delimiter.
fn is_regular(b: u8) -> bool {
    !is_space(b) && !b"()<>[]{}/%".contains(&b)
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\0' | b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// Past whitespace and comments.
fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while let Some(&b) = bytes.get(at) {
        if is_space(b) {
            at += 1;
        } else if b == b'%' && !bytes[at..].starts_with(b"%%EOF") {
            at += bytes[at..].iter().position(|&b| b == b'\r' || b == b'\n').unwrap_or(bytes.len() - at);
        } else {
            break;
        }
    }
    at.min(bytes.len())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let first = needle[0];
    let mut at = 0;
    while let Some(i) = haystack.get(at..)?.iter().position(|&b| b == first) {
        let start = at + i;
        if haystack[start..].starts_with(needle) {
            return Some(start);
        }
        at = start + 1;
    }
    None
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

#[cfg(test)]
mod tests;
