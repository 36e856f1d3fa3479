//! One entry per input: the bytes, the type the caller claims (if any), the file's name (the
//! extension hint), whether to convert and which PDF page. Sniff → claim → dispatch (image,
//! document, conversion, PDF page) happens here, once, for every host; the answer carries its
//! JSON (`verdict_json`), the one every host prints.

use crate::convert::{self, PageError};
use crate::judged_type::{CONVERTIBLE, claimed_type};
use crate::signature::{PDF_MIME, normalize_mime, sniff};
use crate::tool::{self, ToolError, Workspace};
use crate::verdict::{Admitted, Reason, Refusal};
use crate::{Options, verdict_json};

/// One input to judge.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub bytes: &'a [u8],
    /// The type the caller claims; `None`: [`claimed_type`] picks it.
    pub claimed_mime: Option<&'a str>,
    /// The file's name (its extension is the hint when the bytes carry no type the gate admits).
    pub name: Option<&'a str>,
    pub convert: bool,
    /// A PDF page (1-based) to render and admit as an image; implies `convert`.
    pub page: Option<u32>,
}

/// Why an input was refused: by the gate's rules, or because a PDF page did not become an image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    Gate(Refusal),
    Page(PageError),
}

/// The answer to one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub verdict: Result<Admitted, Refused>,
    /// The type the bytes carry.
    pub sniffed: String,
    /// Set (the type the bytes carry) when the input was refused for its type, was not converted,
    /// and the converting components convert that type: the hint a host can give.
    pub convertible: Option<&'static str>,
}

/// Why an input could not be judged as asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputError {
    /// A page was asked of an input judged as this (non-PDF) type.
    PageOfNonPdf(String),
}

pub fn admit(input: Input, options: &Options) -> Result<Entry, InputError> {
    let converting = input.convert || input.page.is_some();
    let sniffed = sniff(input.bytes);
    let mime = match input.claimed_mime {
        Some(m) => m.to_string(),
        None => claimed_type(&sniffed, input.name, converting),
    };
    let is_document = normalize_mime(&mime) == PDF_MIME;
    let verdict = match (input.page, is_document) {
        (Some(page), true) => admit_page(input.bytes, page, options).map_err(Refused::Page),
        (Some(_), false) => return Err(InputError::PageOfNonPdf(mime)),
        (None, true) => crate::admit_document(input.bytes, &mime).map_err(Refused::Gate),
        (None, false) if input.convert => {
            let options = Options { convert: true, ..*options };
            convert::admit_converting(input.bytes, &mime, &options)
                .unwrap_or_else(|| crate::admit_image(input.bytes, &mime, &options))
                .map_err(Refused::Gate)
        }
        (None, false) => crate::admit_image(input.bytes, &mime, options).map_err(Refused::Gate),
    };
    let type_refusal = matches!(&verdict, Err(Refused::Gate(r)) if matches!(r.reason, Reason::MagicMismatch | Reason::MimeUnsupported));
    let convertible = match CONVERTIBLE.iter().find(|t| **t == sniffed) {
        Some(t) if !converting && type_refusal => Some(*t),
        _ => None,
    };
    Ok(Entry { verdict, sniffed, convertible })
}

/// Page `page` of a PDF rendered and admitted as an image.
#[cfg(not(feature = "http-gate"))]
fn admit_page(bytes: &[u8], page: u32, options: &Options) -> Result<Admitted, PageError> {
    convert::admit_pdf_page(bytes, page, &Options { convert: true, ..*options })
}

/// The `http-gate` world renders no page (its routes ask for none), so its component does not
/// link the page renderer: 3.6 MB less, which keeps the crate that carries all four components
/// under crates.io's 10 MB.
#[cfg(feature = "http-gate")]
fn admit_page(bytes: &[u8], _page: u32, _options: &Options) -> Result<Admitted, PageError> {
    Err(PageError::Refused(Refusal::new(
        Reason::MimeUnsupported,
        bytes.len() as u64,
        None,
        "the HTTP gate renders no PDF page; the `convert` component (the CLI's `--page`) does",
    )))
}

impl Entry {
    /// The verdict as JSON (`verdict_json`); `input_len` is the input's length (a page error's
    /// `raw_bytes`).
    pub fn json_value(&self, input_len: u64) -> serde_json::Value {
        match &self.verdict {
            Ok(a) => verdict_json::admitted(a),
            Err(Refused::Gate(r)) => verdict_json::refusal(r),
            Err(Refused::Page(e)) => verdict_json::page_refusal(e, input_len),
        }
    }

    /// [`Entry::json_value`] plus `data`, the admitted bytes' base64, when admitted (`input` is
    /// what was judged): the HTTP component's answer, and a workspace file's for a host that
    /// takes the bytes that way.
    pub fn json_value_with_data(&self, input: &[u8]) -> serde_json::Value {
        let mut v = self.json_value(input.len() as u64);
        if let Ok(a) = &self.verdict {
            v["data"] = serde_json::Value::String(a.base64(input));
        }
        v
    }
}

/// A workspace file to judge: [`Input`] with the file's path for its bytes and its name.
#[derive(Clone, Copy, Debug)]
pub struct FileInput<'a> {
    /// Workspace-relative, or absolute inside the workspace.
    pub path: &'a str,
    pub claimed_mime: Option<&'a str>,
    pub convert: bool,
    pub page: Option<u32>,
}

/// Why a workspace file was not judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileError {
    /// It could not be read (not found, not a regular file, outside the workspace, too large).
    Unreadable(ToolError),
    Input(InputError),
}

/// The file at `file.path` read from the workspace (confined to it, under the read cap) and judged
/// by [`admit`] with the path as its name: one entry, whatever the bytes arrive through. Answers
/// the entry and the bytes that were judged.
pub fn admit_file(
    workspace: &dyn Workspace,
    file: FileInput,
    options: &Options,
) -> Result<(Entry, Vec<u8>), FileError> {
    let bytes = tool::read_workspace_file(workspace, file.path).map_err(FileError::Unreadable)?;
    let input = Input {
        bytes: &bytes,
        claimed_mime: file.claimed_mime,
        name: Some(file.path),
        convert: file.convert,
        page: file.page,
    };
    let entry = admit(input, options).map_err(FileError::Input)?;
    Ok((entry, bytes))
}

#[cfg(test)]
mod tests;
