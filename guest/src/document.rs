//! The admission gate for documents: `application/pdf` only, 20 MiB raw, `%PDF-`.

use crate::limits::PDF_RAW_CAP;
use crate::signature::{PDF_MIME, is_pdf, normalize_mime, sniff};
use crate::verdict::{Admitted, Data, Kind, Reason, Refusal, Verdict};

pub fn admit_document(bytes: &[u8], claimed_mime: &str) -> Verdict {
    let raw = bytes.len() as u64;
    if normalize_mime(claimed_mime) != PDF_MIME {
        return Err(Refusal::new(
            Reason::MimeUnsupported,
            raw,
            None,
            format!("{} is not a document type the gate accepts (accepted: {PDF_MIME})", claimed_mime.trim()),
        ));
    }
    if raw > PDF_RAW_CAP {
        return Err(Refusal::new(
            Reason::RawTooLarge,
            raw,
            Some(PDF_RAW_CAP),
            format!("{raw} bytes exceed the document cap of {PDF_RAW_CAP} bytes"),
        ));
    }
    if !is_pdf(bytes) {
        return Err(Refusal::new(
            Reason::MagicMismatch,
            raw,
            None,
            format!("the bytes are not {PDF_MIME} (they look like {})", sniff(bytes)),
        ));
    }
    Ok(Admitted {
        dropped: Vec::new(),
        kind: Kind::Document,
        mime: PDF_MIME,
        data: Data::Unchanged,
        original_size: raw,
        dimensions: None,
        original_dimensions: None,
        resized: false,
        reencoded: false,
        converted: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pdf_is_admitted_as_a_document() {
        let v = admit_document(b"%PDF-1.4\n%%EOF\n", "application/pdf").unwrap();
        assert_eq!(v.kind, Kind::Document);
        assert_eq!(v.dimensions, None);
        assert_eq!(v.original_size, 15);
    }

    #[test]
    fn refusals_name_their_reason() {
        let r = admit_document(b"%PDF-1.4", "application/msword").unwrap_err();
        assert_eq!(r.reason, Reason::MimeUnsupported);
        let r = admit_document(b"<html>not a pdf</html>", "application/pdf").unwrap_err();
        assert_eq!(r.reason, Reason::MagicMismatch);
        let r = admit_document(b"", "application/pdf").unwrap_err();
        assert_eq!(r.reason, Reason::MagicMismatch);
    }

    #[test]
    fn the_cap_is_inclusive() {
        let mut at_cap = vec![b' '; PDF_RAW_CAP as usize];
        at_cap[..5].copy_from_slice(b"%PDF-");
        assert!(admit_document(&at_cap, "application/pdf").is_ok());
        at_cap.push(b' ');
        let r = admit_document(&at_cap, "application/pdf").unwrap_err();
        assert_eq!((r.reason, r.limit), (Reason::RawTooLarge, Some(PDF_RAW_CAP)));
    }
}
