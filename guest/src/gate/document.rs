//! The admission gate for documents: `application/pdf` only, 20 MiB raw, `%PDF-`, and the
//! structure a provider's parser needs ([`super::pdf_structure`]).

use super::pdf_structure::{self, Problem};
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
    if let Some(r) = Refusal::over_raw_cap(raw, PDF_RAW_CAP, "the document cap") {
        return Err(r);
    }
    if !is_pdf(bytes) {
        return Err(Refusal::new(
            Reason::MagicMismatch,
            raw,
            None,
            format!("the bytes are not {PDF_MIME} (they look like {})", sniff(bytes)),
        ));
    }
    match pdf_structure::check(bytes) {
        Ok(()) => {}
        Err(Problem::Encrypted) => {
            return Err(Refusal::new(
                Reason::Undecodable,
                raw,
                None,
                "the PDF is encrypted (its trailer names /Encrypt); providers take no encrypted PDF",
            ));
        }
        Err(Problem::Broken(why)) => {
            return Err(Refusal::new(Reason::Undecodable, raw, None, format!("the PDF is not whole: {why}")));
        }
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
        let pdf = crate::test_images::pdf(0);
        let v = admit_document(&pdf, "application/pdf").unwrap();
        assert_eq!(v.kind, Kind::Document);
        assert_eq!(v.dimensions, None);
        assert_eq!(v.original_size, pdf.len() as u64);
    }

    #[test]
    fn a_pdf_that_is_not_whole_is_refused_in_words() {
        let whole = crate::test_images::pdf(0);
        let junk = [b"%PDF-1.7".as_slice(), &[b'j'; 500]].concat();
        let encrypted = String::from_utf8(whole.clone()).unwrap().replace("/Root 1 0 R", "/Root 1 0 R /Encrypt 9 0 R");
        for (bytes, words) in [
            (b"%PDF-1.4".to_vec(), "%%EOF"),
            (junk, "%%EOF"),
            (whole[..whole.len() / 2].to_vec(), "%%EOF"),
            (encrypted.into_bytes(), "encrypted"),
        ] {
            let r = admit_document(&bytes, "application/pdf").unwrap_err();
            assert_eq!(r.reason, Reason::Undecodable, "{words}");
            assert!(r.message.contains(words), "{words}: {}", r.message);
        }
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
        let small = crate::test_images::pdf(0).len();
        let at_cap = crate::test_images::pdf(PDF_RAW_CAP as usize - small);
        assert_eq!(at_cap.len() as u64, PDF_RAW_CAP);
        assert!(admit_document(&at_cap, "application/pdf").is_ok());
        let over = crate::test_images::pdf(PDF_RAW_CAP as usize - small + 1);
        let r = admit_document(&over, "application/pdf").unwrap_err();
        assert_eq!((r.reason, r.limit), (Reason::RawTooLarge, Some(PDF_RAW_CAP)));
    }
}
