//! What a URL in a media block is, read the way the WHATWG URL standard reads it (browsers,
//! Node's `URL`, the `url` crate and the HTTP clients built on them): leading and trailing C0
//! controls and spaces are stripped, ASCII tabs and newlines anywhere are removed, the scheme is
//! case-insensitive. A `data:` URL is then read as the fetch standard's data-URL processor reads
//! it, but only in the one form the gate checks, `data:<type>[;param…];base64,<base64>`: anything
//! else that is, or might be, a data URL is refused in words, never passed. An `http`/`https` URL
//! is fetched by the provider and stands; any other scheme, or no scheme, is refused (no provider
//! fetches it, and a lenient one might read it as data).

/// What a media block's URL is.
#[derive(Debug, PartialEq, Eq)]
pub enum MediaUrl {
    /// `http`/`https`: the provider fetches it; the gate has no bytes to check.
    Fetched,
    /// A base64 data URL: the type it claims and its base64 text.
    Data { mime: String, base64: String },
    /// Neither, or a data URL the gate cannot read exactly as a client would: why, in words.
    Refused(String),
}

/// C0 control or space: what the URL parser strips from both ends.
fn c0_or_space(c: char) -> bool {
    c <= ' '
}

pub fn classify(url: &str) -> MediaUrl {
    // The parser's first two steps, in its order.
    let stripped = url.trim_matches(c0_or_space);
    let cleaned: String = stripped.chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
    let Some(scheme) = scheme(&cleaned) else {
        return MediaUrl::Refused(
            "the URL has no scheme; the gate passes http(s) URLs (the provider fetches them) and base64 data: URLs \
             (it checks them)"
                .into(),
        );
    };
    match scheme.to_ascii_lowercase().as_str() {
        "http" | "https" => MediaUrl::Fetched,
        "data" => data_url(&cleaned[scheme.len() + 1..]),
        other => MediaUrl::Refused(format!(
            "the URL's scheme `{other}` is neither http(s) (the provider fetches it) nor data: (the gate checks it)"
        )),
    }
}

/// Whether a URL parser reads `text` as a `data:` URL (the scheme after its stripping steps),
/// whatever follows the scheme.
pub fn is_data_url(text: &str) -> bool {
    let head: String =
        text.trim_start_matches(c0_or_space).chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).take(5).collect();
    head.eq_ignore_ascii_case("data:")
}

/// The media type a `data:` URL declares (lower case, without parameters), read as the data-URL
/// processor reads it; also for one the gate cannot read as plain base64.
pub fn declared_type(text: &str) -> Option<String> {
    let cleaned: String = text.trim_matches(c0_or_space).chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
    let rest = cleaned.get(5..).filter(|_| is_data_url(&cleaned))?;
    let head = rest.split(',').next()?;
    let mime = head.split(';').next()?.trim_matches(|c: char| c.is_ascii_whitespace());
    (!mime.is_empty()).then(|| mime.to_ascii_lowercase())
}

/// A URL rather than bare base64: it has a `:` (base64's alphabet has none).
pub fn is_url(text: &str) -> bool {
    text.contains(':')
}

/// The scheme as the URL parser's scheme states read it: an ASCII letter, then letters, digits,
/// `+`, `-`, `.`, up to the first `:`.
fn scheme(url: &str) -> Option<&str> {
    let end = url.find(':')?;
    let scheme = &url[..end];
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some(scheme)
}

/// The part after `data:`.
fn data_url(rest: &str) -> MediaUrl {
    let refused = |why: &str| MediaUrl::Refused(format!("the block's data: URL {why}"));
    let Some((head, body)) = rest.split_once(',') else {
        return refused("has no `,` before its data");
    };
    // The data-URL processor: the type is what precedes `,`, without ASCII whitespace at its ends;
    // the data are base64 only when the type ends with `;base64` (spaces allowed after the `;`).
    let head = head.trim_matches(|c: char| c.is_ascii_whitespace());
    let Some((mime_and_params, last)) = head.rsplit_once(';') else {
        return refused("is not base64 (`data:<type>;base64,<data>`); the gate checks only base64 data");
    };
    if !last.trim_start_matches(' ').eq_ignore_ascii_case("base64") {
        return refused("is not base64 (`data:<type>;base64,<data>`); the gate checks only base64 data");
    }
    let mime = mime_and_params.split(';').next().unwrap_or("").trim_matches(|c: char| c.is_ascii_whitespace());
    if mime.is_empty() {
        return refused("names no media type");
    }
    // A client percent-decodes the data and drops a fragment; the gate reads plain base64 only.
    if body.contains(['%', '#']) {
        return refused(
            "carries percent-encoded text or a fragment (`%`, `#`) in its data; the gate reads plain base64",
        );
    }
    MediaUrl::Data { mime: mime.to_string(), base64: body.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(mime: &str, base64: &str) -> MediaUrl {
        MediaUrl::Data { mime: mime.into(), base64: base64.into() }
    }

    #[test]
    fn data_urls_are_found_as_a_url_parser_finds_them() {
        let cases = [
            "data:image/png;base64,AAAA",
            "  data:image/png;base64,AAAA",
            "\t\tdata:image/png;base64,AAAA",
            "\0data:image/png;base64,AAAA",
            "\u{1}\u{1f} data:image/png;base64,AAAA\u{0}\n ",
            "da\tta:image/png;base64,AAAA",
            "dat\ra:image/png;base64,AAAA",
            "d\na\r\nta:image/png;base64,AAAA",
            "DATA:image/png;base64,AAAA",
            "DaTa:image/png;BASE64,AAAA",
            "data:image/png;base64,AA\nAA",
            "data: image/png ;charset=x; base64,AAAA",
        ];
        for url in cases {
            let got = classify(url);
            match &got {
                MediaUrl::Data { mime, base64 } => {
                    assert_eq!(mime, "image/png", "{url:?}");
                    assert_eq!(base64.replace(['\n'], ""), "AAAA", "{url:?}");
                }
                _ => panic!("{url:?} → {got:?}"),
            }
        }
    }

    #[test]
    fn what_might_be_data_but_is_not_plain_base64_is_refused() {
        for url in [
            "data:image/png,AAAA",
            "data:image/png;base64;charset=utf-8,AAAA",
            "data:;base64,AAAA",
            "data:image/png;base64",
            "data:image/png;base64,AA%41A",
            "data:image/png;base64,AAAA#x",
            "\u{a0}data:image/png;base64,AAAA",
            "da ta:image/png;base64,AAAA",
            "iVBORw0KGgo=",
            "//example.com/a.png",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "",
        ] {
            assert!(matches!(classify(url), MediaUrl::Refused(_)), "{url:?} → {:?}", classify(url));
        }
    }

    #[test]
    fn http_urls_are_fetched_by_the_provider() {
        for url in ["https://example.com/a.png", " HTTP://example.com/a.png", "ht\ttps://example.com/a.png"] {
            assert_eq!(classify(url), MediaUrl::Fetched, "{url:?}");
        }
        assert_eq!(classify("data:image/png;base64,AAAA"), data("image/png", "AAAA"));
    }
}
