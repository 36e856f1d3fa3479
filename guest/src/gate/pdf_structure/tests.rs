use std::path::PathBuf;

use super::*;
use crate::test_images::pdf;

fn corpus(path: &str) -> Vec<u8> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    std::fs::read(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn words(r: Result<(), Problem>) -> String {
    match r {
        Err(Problem::Broken(w)) => w,
        other => panic!("not broken: {other:?}"),
    }
}

#[test]
fn pdfs_made_by_real_tools_pass() {
    for path in [
        "convert/pdf-3-pages.pdf",
        "convert/pdf-blank.pdf",
        "convert/pdf-cairo-chart.pdf",
        "convert/pdf-image-pillow.pdf",
        "convert/pdf-page2-blank.pdf",
        "convert/pdf-text-chromium.pdf",
        "convert/pdf-text-standard14.pdf",
        // Page objects only inside a compressed object stream, an xref stream.
        "pdf/qpdf-object-streams.pdf",
        "pdf/qpdf-linearized.pdf",
        "pdf/gs-pdfwrite.pdf",
        // The fixture the end-to-end tests admit.
        "../fixtures/hello.pdf",
    ] {
        assert_eq!(check(&corpus(path)), Ok(()), "{path}");
    }
    assert_eq!(check(&pdf(0)), Ok(()));
}

#[test]
fn encrypted_pdfs_are_refused_as_encrypted() {
    // With a user password, and with only an owner password (any reader opens it, but the
    // providers take no encrypted PDF).
    for path in ["convert/pdf-encrypted-user-password.pdf", "convert/pdf-encrypted-owner-only.pdf"] {
        assert_eq!(check(&corpus(path)), Err(Problem::Encrypted), "{path}");
    }
}

#[test]
fn what_is_not_a_whole_pdf_is_refused_in_words() {
    let whole = pdf(0);
    let text = String::from_utf8(whole.clone()).unwrap();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"%PDF-1.4".to_vec(), "%%EOF"),
        (b"%PDF-".to_vec(), "version"),
        ([b"%PDF-1.7".as_slice(), &[b'j'; 500]].concat(), "%%EOF"),
        (whole[..whole.len() - 10].to_vec(), "%%EOF"),
        (corpus("convert/pdf-3-pages.pdf")[..2000].to_vec(), "%%EOF"),
        (corpus("convert/hostile-pdf-truncated.pdf"), "%%EOF"),
        (b"%PDF-1.4\n%%EOF\n".to_vec(), "startxref"),
        (text.replace("startxref\n", "startxref\nx").into_bytes(), "offset"),
        (text.replace("xref\n0 4", "yref\n0 4").into_bytes(), "neither an xref table"),
        (text.replace("trailer", "tryler").into_bytes(), "no `trailer`"),
        (text.replace("/Root", "/Rooty").into_bytes(), "/Root"),
        (text.replace("/Type /Page ", "/Type /Pages ").into_bytes(), "no page object"),
        (corpus("convert/hostile-pdf-cyclic-page-tree.pdf"), "no page object"),
    ];
    for (bytes, expected) in cases {
        let w = words(check(&bytes));
        assert!(w.contains(expected), "{expected}: {w}");
    }
}

#[test]
fn names_are_read_as_pdf_writes_them() {
    // `#xx` escapes, comments and strings inside the trailer, no spaces between tokens.
    let text = String::from_utf8(pdf(0)).unwrap();
    let odd = text
        .replace("/Type /Page ", "/Type/P#61ge ")
        .replace("<< /Size 4 /Root 1 0 R >>", "<</Size 4%comment >>\n/ID[(a>>)<3E3E>]/R#6F#6Ft 1 0 R>>");
    assert_eq!(check(odd.as_bytes()), Ok(()));
    let encrypted = text.replace("/Root 1 0 R", "/Root 1 0 R/#45ncrypt 5 0 R");
    assert_eq!(check(encrypted.as_bytes()), Err(Problem::Encrypted));
}

#[test]
fn object_streams_are_inflated_within_a_bound() {
    // A page tree whose objects sit in an object stream that inflates past the bound.
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&vec![b' '; PDF_OBJECT_STREAMS_INFLATE_MAX + 1]).unwrap();
    let stream = z.finish().unwrap();
    let mut bomb = b"%PDF-1.5\n".to_vec();
    let obj = bomb.len();
    bomb.extend_from_slice(
        format!("1 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Length {} /Filter /FlateDecode >>\nstream\n", stream.len())
            .as_bytes(),
    );
    bomb.extend_from_slice(&stream);
    bomb.extend_from_slice(b"\nendstream\nendobj\n");
    let xref = bomb.len();
    bomb.extend_from_slice(
        format!("xref\n0 2\n0000000000 65535 f \n{obj:010} 00000 n \ntrailer\n<< /Size 2 /Root 2 0 R >>\nstartxref\n{xref}\n%%EOF\n")
            .as_bytes(),
    );
    assert!(words(check(&bomb)).contains("inflate to more than"));
}
