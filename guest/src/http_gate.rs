//! The gate as an HTTP service (the `http-gate` world), as plain Rust: a request's method, path,
//! query and headers become a [`Plan`] (or an answer at once: 404, 405, 400, 413, 415), the body
//! read under the plan's cap becomes an answer. `bindings/http_gate.rs` only moves bytes between
//! `wasi:http` and these functions.
//!
//! Every answer is JSON. A verdict is the CLI's `admit --json` object, plus `data` (the admitted
//! bytes, base64) when admitted; every error is `{"error": {"status": N, "message": "…"}}`.

use serde_json::{Value, json};

use crate::limits::{PDF_RAW_CAP, RAW_CAP, RAW_CAP_DOWNSAMPLE, TOOL_RESULT_MAX_BYTES};
use crate::signature::{PDF_MIME, normalize_mime};
use crate::walks::request::RequestVerdict;
use crate::walks::tool_result::ToolResultAdmission;
use crate::{Api, Options, Provider, Verify, entry, verdict_json};

/// The JSON routes (tool results, requests) read at most this much: the gate's own cap on the JSON
/// it reads (`TOOL_RESULT_MAX_BYTES`, the CLI's `admit-request` cap too); a larger body would be
/// refused whole, unread, so it is refused here before it is read.
pub const JSON_BODY_CAP: u64 = TOOL_RESULT_MAX_BYTES;
/// A body that sends nothing for this long is answered `408`.
pub const BODY_IDLE_TIMEOUT_MS: u64 = 5_000;
/// A body not complete after this long is answered `408`, however it trickles.
pub const BODY_DEADLINE_MS: u64 = 120_000;
/// The contract version the answers follow (the WIT package of the gate).
pub const CONTRACT: &str = "mediagate:gate@0.3.0";

/// One answer: a status and a JSON body (`Allow` set for `405`).
#[derive(Debug, PartialEq)]
pub struct Response {
    pub status: u16,
    /// The `Allow` header of a `405`.
    pub allow: Option<&'static str>,
    pub body: String,
}

impl Response {
    fn json(status: u16, body: &Value) -> Response {
        Response { status, allow: None, body: body.to_string() }
    }

    /// `{"error": {"status": N, "message": "…"}}`.
    pub fn error(status: u16, message: impl Into<String>) -> Response {
        Response::json(status, &json!({"error": {"status": status, "message": message.into()}}))
    }
}

/// What the request head asks for, before its body is read.
#[derive(Debug, PartialEq)]
pub struct Plan {
    route: Route,
    /// The most body bytes read; more is `413`.
    pub cap: u64,
}

#[derive(Debug, PartialEq)]
enum Route {
    Health,
    Contract,
    /// `claimed`: the Content-Type, normalised; `None`: sniff the body.
    Admit {
        claimed: Option<String>,
        options: Options,
    },
    ToolResult {
        tool: String,
        options: Options,
    },
    Request {
        api: Api,
        options: Options,
    },
}

/// The head of a request as the binding read it: each header at most once, as text.
pub struct Head<'a> {
    pub method: &'a str,
    pub path_with_query: &'a str,
    pub content_type: Option<&'a str>,
    pub content_length: Option<&'a str>,
    pub content_encoding: Option<&'a str>,
}

/// The plan for a request head, or its answer when the head alone decides it.
pub fn plan(head: &Head) -> Result<Plan, Response> {
    let (path, query) = match head.path_with_query.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (head.path_with_query, None),
    };
    let (allow, takes_body) = match path {
        "/healthz" | "/v1/contract" => ("GET", false),
        "/v1/admit" | "/v1/admit-tool-result" | "/v1/admit-request" => ("POST", true),
        _ => return Err(Response::error(404, format!("no route {path}; see GET /v1/contract for the routes"))),
    };
    if head.method != allow {
        let mut r = Response::error(405, format!("{path} answers {allow} only, not {}", head.method));
        r.allow = Some(allow);
        return Err(r);
    }
    let query = Query::parse(query.unwrap_or(""))?;
    let route = match path {
        "/healthz" => query.only(&[]).map(|_| Route::Health)?,
        "/v1/contract" => query.only(&[]).map(|_| Route::Contract)?,
        "/v1/admit" => {
            query.only(&["profile", "downsample", "verify", "convert", "keep_metadata"])?;
            let options = query.options(None)?;
            Route::Admit { claimed: claimed_type(head.content_type)?, options }
        }
        "/v1/admit-tool-result" => {
            query.only(&["tool", "profile", "downsample", "verify", "convert", "keep_metadata"])?;
            let tool = query.get("tool").ok_or_else(|| bad("the query must name the tool: ?tool=NAME"))?;
            let options = query.options(None)?;
            json_content_type(head.content_type)?;
            Route::ToolResult { tool: tool.to_string(), options }
        }
        _ => {
            query.only(&["api", "profile", "downsample", "verify", "convert", "keep_metadata"])?;
            let names = || Api::ALL.map(Api::name).join(", ");
            let api = match query.get("api") {
                Some(name) => match Api::parse(name) {
                    Some(api) => api,
                    None => return Err(bad(format!("api={name}: the APIs are {}", names()))),
                },
                None => return Err(bad(format!("the query must name the request's API: ?api= one of {}", names()))),
            };
            let options = query.options(Some(api))?;
            json_content_type(head.content_type)?;
            Route::Request { api, options }
        }
    };
    let cap = if takes_body { body_cap(&route) } else { 0 };
    if takes_body {
        identity_coding(head.content_encoding)?;
    }
    let plan = Plan { route, cap };
    check_declared_length(&plan, head.content_length)?;
    Ok(plan)
}

/// The cap of each route: the admission cap of the claimed type (PDF 20 MiB; an image 64 MiB with
/// the downsampler, 5 MiB without; the larger of the two when the type is sniffed), the gate's JSON
/// cap for tool results and requests.
fn body_cap(route: &Route) -> u64 {
    match route {
        Route::Health | Route::Contract => 0,
        Route::Admit { claimed, options } => {
            let image = if options.downsample { RAW_CAP_DOWNSAMPLE } else { RAW_CAP };
            match claimed.as_deref() {
                Some(PDF_MIME) => PDF_RAW_CAP,
                Some(_) => image,
                None => image.max(PDF_RAW_CAP),
            }
        }
        Route::ToolResult { .. } | Route::Request { .. } => JSON_BODY_CAP,
    }
}

/// `413` when `Content-Length` declares more than the cap (nothing is read); `400` when it is not
/// a number, or a GET declares a body.
fn check_declared_length(plan: &Plan, content_length: Option<&str>) -> Result<(), Response> {
    let Some(text) = content_length else { return Ok(()) };
    let declared: u64 = text.trim().parse().map_err(|_| bad(format!("Content-Length {text:?} is not a number")))?;
    if declared > plan.cap {
        return Err(if plan.cap == 0 { bad("this route takes no body") } else { over_cap(plan, Some(declared)) });
    }
    Ok(())
}

/// `413`: the body passes the plan's cap (`declared`: what `Content-Length` said, when it did).
pub fn over_cap(plan: &Plan, declared: Option<u64>) -> Response {
    let what = match declared {
        Some(n) => format!("the body declares {n} bytes"),
        None => "the body is longer".to_string(),
    };
    Response::error(413, format!("{what}; this route reads at most {} bytes (see GET /v1/contract)", plan.cap))
}

/// `408`: the body stopped arriving (`idle`) or did not finish within the deadline.
pub fn timed_out(idle: bool) -> Response {
    let message = if idle {
        format!("the body sent nothing for {} ms; nothing was judged", BODY_IDLE_TIMEOUT_MS)
    } else {
        format!("the body did not finish within {} ms; nothing was judged", BODY_DEADLINE_MS)
    };
    Response::error(408, message)
}

/// `400`: the body could not be read (the connection failed mid-body).
pub fn unreadable(detail: &str) -> Response {
    bad(format!("the body could not be read: {detail}"))
}

fn bad(message: impl Into<String>) -> Response {
    Response::error(400, message)
}

/// The gate judges the bytes it is sent, so it takes them unencoded: a `Content-Encoding` other
/// than `identity` (gzip, br, …) is `415` — read as it is, a gzip-compressed PNG would be judged as
/// junk and a raw PNG labelled gzip passed to a client that inflates it.
fn identity_coding(content_encoding: Option<&str>) -> Result<(), Response> {
    let Some(codings) = content_encoding else { return Ok(()) };
    match codings.split(',').map(str::trim).find(|c| !c.is_empty() && !c.eq_ignore_ascii_case("identity")) {
        None => Ok(()),
        Some(coding) => Err(Response::error(
            415,
            format!("Content-Encoding {coding} is not decoded by the gate; send the body unencoded (identity)"),
        )),
    }
}

/// The type `/v1/admit` passes to the gate: the Content-Type, or `None` (sniff) when there is none
/// or it is `application/octet-stream`. `415` for a type that is neither an image nor a PDF.
fn claimed_type(content_type: Option<&str>) -> Result<Option<String>, Response> {
    let Some(ct) = content_type else { return Ok(None) };
    let mime = normalize_mime(ct);
    if mime.is_empty() || mime == "application/octet-stream" {
        return Ok(None);
    }
    if mime == PDF_MIME || (mime.starts_with("image/") && mime.len() > "image/".len()) {
        return Ok(Some(mime));
    }
    Err(Response::error(
        415,
        format!(
            "Content-Type {mime} is not an image or PDF type; send the type the bytes claim (image/png, image/jpeg, image/gif, image/webp, application/pdf), or none to have it sniffed"
        ),
    ))
}

/// The JSON routes take `application/json` (or a `+json` type), or no Content-Type.
fn json_content_type(content_type: Option<&str>) -> Result<(), Response> {
    let Some(ct) = content_type else { return Ok(()) };
    let mime = normalize_mime(ct);
    if mime == "application/json" || mime.ends_with("+json") {
        return Ok(());
    }
    Err(Response::error(415, format!("Content-Type {mime} is not JSON; this route reads application/json")))
}

/// The query: `name=value` pairs, percent-decoded; each name at most once.
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(query: &str) -> Result<Query, Response> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for part in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = part.split_once('=').unwrap_or((part, ""));
            let name = percent_decode(name)?;
            let value = percent_decode(value)?;
            if pairs.iter().any(|(n, _)| *n == name) {
                return Err(bad(format!("the query names {name} twice")));
            }
            pairs.push((name, value));
        }
        Ok(Query(pairs))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// `400` for a parameter the route does not take (nothing is ignored).
    fn only(&self, known: &[&str]) -> Result<(), Response> {
        match self.0.iter().find(|(n, _)| !known.contains(&n.as_str())) {
            None => Ok(()),
            Some((n, _)) if known.is_empty() => Err(bad(format!("this route takes no query; it was given {n}"))),
            Some((n, _)) => Err(bad(format!("unknown query parameter {n}; this route takes {}", known.join(", ")))),
        }
    }

    /// `profile`, `downsample`, `verify` over the gate's defaults (`Options::default`, the same
    /// `default-options` every host reads). A request's profile defaults to its API's.
    fn options(&self, api: Option<Api>) -> Result<Options, Response> {
        let mut o = Options::default();
        if let Some(api) = api {
            o.provider = api.provider();
        }
        if let Some(p) = self.get("profile") {
            o.provider = Provider::parse(p)
                .ok_or_else(|| bad(format!("profile={p}: the profiles are anthropic, openai, gemini and ollama")))?;
        }
        if let Some(d) = self.get("downsample") {
            o.downsample = match d {
                "true" => true,
                "false" => false,
                _ => return Err(bad(format!("downsample={d}: true or false"))),
            };
        }
        if let Some(v) = self.get("verify") {
            o.verify = match v {
                "full" => Verify::Full,
                "header" => Verify::Header,
                _ => return Err(bad(format!("verify={v}: full or header"))),
            };
        }
        if let Some(c) = self.get("convert") {
            o.convert = match c {
                "1" | "true" => true,
                "0" | "false" => false,
                _ => return Err(bad(format!("convert={c}: 1 or 0"))),
            };
        }
        if let Some(k) = self.get("keep_metadata") {
            o.keep_metadata = match k {
                "1" | "true" => true,
                "0" | "false" => false,
                _ => return Err(bad(format!("keep_metadata={k}: 1 or 0"))),
            };
        }
        Ok(o)
    }
}

/// `%XX` and `+` (space) decoded; `400` for a broken escape or text that is not UTF-8.
fn percent_decode(s: &str) -> Result<String, Response> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
                let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
                out.push(byte.ok_or_else(|| bad(format!("the query has a broken %-escape in {s:?}")))?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| bad("the query is not UTF-8 once decoded"))
}

/// The answer to a planned request whose body (at most `plan.cap` bytes) has been read.
pub fn answer(plan: Plan, body: Vec<u8>) -> Response {
    if body.len() as u64 > plan.cap && plan.cap > 0 {
        return over_cap(&plan, None);
    }
    match plan.route {
        Route::Health => Response::json(200, &json!({"status": "ok"})),
        Route::Contract => Response::json(200, &contract()),
        Route::Admit { claimed, options } => admit(claimed, &options, body),
        Route::ToolResult { tool, options } => match json_text(body) {
            Ok(text) => {
                let admission = crate::admit_tool_result(&tool, &text, &options);
                with_conversions(tool_result(&text, &admission), &options, &admission.conversions)
            }
            Err(r) => r,
        },
        Route::Request { api, options } => match json_text(body) {
            Ok(text) => {
                let verdict = crate::admit_request(api, &text, &options);
                let conversions = verdict.as_ref().map(|a| a.conversions.as_slice()).unwrap_or_default();
                with_conversions(request(api, &text, &verdict), &options, conversions)
            }
            Err(r) => r,
        },
    }
}

/// The whole exchange for a request already read (tests; the binding streams the body instead).
pub fn handle(head: &Head, body: Vec<u8>) -> Response {
    match plan(head) {
        Ok(plan) => answer(plan, body),
        Err(r) => r,
    }
}

/// With `convert=1`, an answer object gains `"conversions": […]` (the CLI's `--convert` key); the
/// key is there even when the list is empty, so clients can rely on it.
fn with_conversions(mut r: Response, options: &Options, conversions: &[crate::verdict::ConversionMade]) -> Response {
    if options.convert && r.body.ends_with('}') && r.status != 400 {
        r.body = verdict_json::with_conversions(r.body, conversions);
    }
    r
}

/// `400` unless the body is UTF-8 text holding one JSON value.
fn json_text(body: Vec<u8>) -> Result<String, Response> {
    let text = String::from_utf8(body).map_err(|_| bad("the body is not UTF-8 text"))?;
    serde_json::from_str::<serde::de::IgnoredAny>(&text).map_err(|e| bad(format!("the body is not JSON: {e}")))?;
    Ok(text)
}

fn admit(claimed: Option<String>, options: &Options, body: Vec<u8>) -> Response {
    let mime = match claimed {
        Some(m) => m,
        None => {
            let sniffed = crate::sniff(&body);
            let convertible = options.convert && crate::convert::source_of(&sniffed).is_some();
            if !crate::judged_type::ADMISSIBLE.contains(&sniffed.as_str()) && !convertible {
                return Response::error(
                    415,
                    format!("no Content-Type, and the bytes carry no type the gate admits (they look like {sniffed})"),
                );
            }
            sniffed
        }
    };
    let input =
        entry::Input { bytes: &body, claimed_mime: Some(&mime), name: None, convert: options.convert, page: None };
    let answer = match entry::admit(input, options) {
        Ok(answer) => answer,
        // No page is asked here, so this does not happen; answered in words all the same.
        Err(entry::InputError::PageOfNonPdf(mime)) => {
            return bad(format!("a page applies to PDFs; the body is {mime}"));
        }
    };
    let status = if answer.verdict.is_ok() { 200 } else { 422 };
    // The CLI's `admit --json` object, plus `data` (the admitted bytes, base64) when admitted.
    Response::json(status, &answer.json_value_with_data(&body))
}

/// The CLI's `admit-tool-result` output (`verdict_json::tool_result`).
fn tool_result(input: &str, admission: &ToolResultAdmission) -> Response {
    Response { status: 200, allow: None, body: verdict_json::tool_result(input, admission) }
}

/// The CLI's `admit-request --json` report; `200` admitted (changed or not), `422` refused, `400`
/// when the body is not a request of that API the gate can read.
fn request(api: Api, input: &str, verdict: &RequestVerdict) -> Response {
    match verdict {
        Err(r) if r.unusable => {
            bad(format!("the body is not a {} request the gate can read: {}", api.name(), r.message))
        }
        Ok(_) => Response { status: 200, allow: None, body: verdict_json::request(api, input, verdict) },
        Err(_) => Response { status: 422, allow: None, body: verdict_json::request(api, input, verdict) },
    }
}

/// `GET /v1/contract`: the contract version, the defaults and every limit in force.
fn contract() -> Value {
    let d = Options::default();
    json!({
        "contract": CONTRACT,
        "world": "http-gate",
        "version": env!("CARGO_PKG_VERSION"),
        "defaults": {
            "profile": d.provider.name(),
            "downsample": d.downsample,
            "verify": match d.verify { Verify::Full => "full", Verify::Header => "header" },
        },
        "limits": {
            "admit_image_bytes": RAW_CAP_DOWNSAMPLE,
            "admit_image_bytes_without_downsample": RAW_CAP,
            "admit_document_bytes": PDF_RAW_CAP,
            "admit_tool_result_bytes": JSON_BODY_CAP,
            "admit_request_bytes": JSON_BODY_CAP,
            "body_idle_timeout_ms": BODY_IDLE_TIMEOUT_MS,
            "body_deadline_ms": BODY_DEADLINE_MS,
        },
        "routes": [
            "POST /v1/admit?profile=&downsample=&verify=&convert=&keep_metadata=",
            "POST /v1/admit-tool-result?tool=&profile=&downsample=&verify=&convert=&keep_metadata=",
            format!(
                "POST /v1/admit-request?api={}&profile=&downsample=&verify=&convert=&keep_metadata=",
                Api::ALL.map(Api::name).join("|")
            ),
            "GET /healthz",
            "GET /v1/contract",
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_images;

    fn head<'a>(method: &'a str, path: &'a str, ct: Option<&'a str>) -> Head<'a> {
        Head { method, path_with_query: path, content_type: ct, content_length: None, content_encoding: None }
    }

    fn call(method: &str, path: &str, ct: Option<&str>, body: &[u8]) -> (u16, Value) {
        let r = handle(&head(method, path, ct), body.to_vec());
        let v: Value = serde_json::from_str(&r.body).expect("every answer is JSON");
        (r.status, v)
    }

    fn error_status(v: &Value) -> u64 {
        v["error"]["status"].as_u64().expect("an error object")
    }

    #[test]
    fn routes_methods_and_unknown_paths() {
        assert_eq!(call("GET", "/healthz", None, b"").0, 200);
        let (s, v) = call("GET", "/v1/contract", None, b"");
        assert_eq!(s, 200);
        assert_eq!(v["contract"], CONTRACT);
        assert_eq!(v["limits"]["admit_image_bytes"], RAW_CAP_DOWNSAMPLE);
        assert_eq!(v["limits"]["admit_request_bytes"], JSON_BODY_CAP);
        assert_eq!(v["defaults"]["verify"], "full");
        let (s, v) = call("GET", "/nope", None, b"");
        assert_eq!((s, error_status(&v)), (404, 404));
        let r = handle(&head("GET", "/v1/admit", None), vec![]);
        assert_eq!((r.status, r.allow), (405, Some("POST")));
        let r = handle(&head("POST", "/healthz", None), vec![]);
        assert_eq!((r.status, r.allow), (405, Some("GET")));
        // A query a route does not take is refused, not ignored.
        assert_eq!(call("GET", "/healthz?x=1", None, b"").0, 400);
    }

    #[test]
    fn query_values_are_checked() {
        let png = test_images::png(8, 8);
        for q in [
            "profile=nobody",
            "downsample=yes",
            "verify=some",
            "convert=webp",
            "profile=openai&profile=openai",
            "profile=%zz",
        ] {
            let (s, v) = call("POST", &format!("/v1/admit?{q}"), Some("image/png"), &png);
            assert_eq!((s, error_status(&v)), (400, 400), "{q}");
        }
        assert_eq!(
            call("POST", "/v1/admit?profile=openai&downsample=false&verify=header", Some("image/png"), &png).0,
            200
        );
        assert_eq!(call("POST", "/v1/admit-request", None, b"{}").0, 400);
        assert_eq!(call("POST", "/v1/admit-request?api=mistral", None, b"{}").0, 400);
        assert_eq!(call("POST", "/v1/admit-tool-result", None, b"[]").0, 400);
        // A bad query is named before the Content-Type is judged.
        assert_eq!(call("POST", "/v1/admit-request?api=mistral", Some("text/plain"), b"{}").0, 400);
        assert_eq!(call("POST", "/v1/admit-tool-result", Some("text/plain"), b"[]").0, 400);
        assert_eq!(call("POST", "/v1/admit?verify=no", Some("text/plain"), b"x").0, 400);
    }

    #[test]
    fn admitted_image_is_the_cli_object_plus_data() {
        let png = test_images::png(16, 9);
        let (s, v) = call("POST", "/v1/admit", Some("image/png"), &png);
        assert_eq!(s, 200);
        assert_eq!(
            (v["ok"].as_bool(), v["mime"].as_str(), v["width"].as_u64()),
            (Some(true), Some("image/png"), Some(16))
        );
        use base64::Engine as _;
        let data = base64::engine::general_purpose::STANDARD.decode(v["data"].as_str().unwrap()).unwrap();
        assert_eq!(data, png);
        assert_eq!(v["base64_len"].as_u64(), Some(v["data"].as_str().unwrap().len() as u64));
        // No Content-Type (or octet-stream): the bytes' own type, as the CLI sniffs.
        assert_eq!(call("POST", "/v1/admit", None, &png).1["mime"], "image/png");
        assert_eq!(call("POST", "/v1/admit", Some("application/octet-stream"), &png).1["mime"], "image/png");
    }

    #[test]
    fn refusals_are_422_with_the_reason() {
        let png = test_images::png(8, 8);
        let (s, v) = call("POST", "/v1/admit", Some("image/jpeg"), &png);
        assert_eq!((s, v["ok"].as_bool(), v["reason"].as_str()), (422, Some(false), Some("magic_mismatch")));
        assert!(v.get("data").is_none());
        let (s, v) = call("POST", "/v1/admit", Some("image/svg+xml"), b"<svg/>");
        assert_eq!((s, v["reason"].as_str()), (422, Some("mime_unsupported")));
        let (s, v) = call("POST", "/v1/admit", Some("application/pdf"), b"not a pdf");
        assert_eq!((s, v["reason"].as_str()), (422, Some("magic_mismatch")));
    }

    #[test]
    fn content_encodings_it_does_not_decode_are_415() {
        let png = crate::test_images::png(8, 8);
        let with = |coding: Option<&str>, path: &str, ct: Option<&str>, body: &[u8]| {
            let h = Head {
                method: "POST",
                path_with_query: path,
                content_type: ct,
                content_length: None,
                content_encoding: coding,
            };
            let r = handle(&h, body.to_vec());
            (r.status, serde_json::from_str::<Value>(&r.body).unwrap())
        };
        for coding in ["gzip", "br", "deflate", "identity, gzip", "x-gzip"] {
            let (status, v) = with(Some(coding), "/v1/admit", Some("image/png"), &png);
            assert_eq!((status, error_status(&v)), (415, 415), "{coding}");
            assert!(v["error"]["message"].as_str().unwrap().contains("Content-Encoding"), "{v}");
            assert_eq!(with(Some(coding), "/v1/admit-tool-result?tool=t", None, b"[]").0, 415, "{coding}");
            assert_eq!(with(Some(coding), "/v1/admit-request?api=openai", None, b"{}").0, 415, "{coding}");
        }
        for coding in [None, Some("identity"), Some("Identity"), Some("")] {
            assert_eq!(with(coding, "/v1/admit", Some("image/png"), &png).0, 200, "{coding:?}");
        }
        // Routes without a body are not concerned.
        let h = Head {
            method: "GET",
            path_with_query: "/healthz",
            content_type: None,
            content_length: None,
            content_encoding: Some("gzip"),
        };
        assert_eq!(handle(&h, Vec::new()).status, 200);
    }

    #[test]
    fn types_it_cannot_claim_are_415() {
        for ct in ["text/plain", "application/json", "image/", "multipart/form-data; boundary=x"] {
            let (s, v) = call("POST", "/v1/admit", Some(ct), b"hello");
            assert_eq!((s, error_status(&v)), (415, 415), "{ct}");
        }
        let (s, _) = call("POST", "/v1/admit", None, b"hello, not an image");
        assert_eq!(s, 415);
        assert_eq!(call("POST", "/v1/admit-tool-result?tool=t", Some("text/plain"), b"[]").0, 415);
        assert_eq!(call("POST", "/v1/admit-request?api=openai", Some("image/png"), b"{}").0, 415);
    }

    #[test]
    fn declared_length_over_the_cap_is_413_before_reading() {
        let over = |path: &str, ct: Option<&str>, n: u64| {
            let n = n.to_string();
            let h = Head {
                method: "POST",
                path_with_query: path,
                content_type: ct,
                content_length: Some(&n),
                content_encoding: None,
            };
            match plan(&h) {
                Err(r) => r.status,
                Ok(p) => panic!("planned {p:?}"),
            }
        };
        assert_eq!(over("/v1/admit", Some("image/png"), RAW_CAP_DOWNSAMPLE + 1), 413);
        assert_eq!(over("/v1/admit?downsample=false", Some("image/png"), RAW_CAP + 1), 413);
        assert_eq!(over("/v1/admit", Some("application/pdf"), PDF_RAW_CAP + 1), 413);
        assert_eq!(over("/v1/admit-tool-result?tool=t", None, JSON_BODY_CAP + 1), 413);
        assert_eq!(over("/v1/admit-request?api=openai", None, JSON_BODY_CAP + 1), 413);
        let h = Head {
            method: "POST",
            path_with_query: "/v1/admit",
            content_type: None,
            content_length: Some("x"),
            content_encoding: None,
        };
        assert_eq!(plan(&h).unwrap_err().status, 400);
        let h = Head {
            method: "POST",
            path_with_query: "/v1/admit",
            content_type: None,
            content_length: Some("10"),
            content_encoding: None,
        };
        assert_eq!(plan(&h).map(|p| p.cap), Ok(RAW_CAP_DOWNSAMPLE));
        // A body longer than the plan's cap (streamed past it) is 413 too.
        let p = plan(&head("POST", "/v1/admit?downsample=false", Some("image/png"))).unwrap();
        assert_eq!(answer(p, vec![0; RAW_CAP as usize + 1]).status, 413);
    }

    #[test]
    fn json_routes_refuse_malformed_json_with_400() {
        for path in ["/v1/admit-tool-result?tool=t", "/v1/admit-request?api=anthropic"] {
            for body in [&b"{\"content\": ["[..], b"\xff\xfe", b""] {
                let (s, v) = call("POST", path, Some("application/json"), body);
                assert_eq!((s, error_status(&v)), (400, 400), "{path} {body:?}");
            }
        }
        // JSON, but not a request of that API: unreadable as a request, 400.
        assert_eq!(call("POST", "/v1/admit-request?api=anthropic", None, b"[1]").0, 400);
    }

    #[test]
    fn tool_results_and_requests_answer_as_the_cli() {
        let (s, v) = call("POST", "/v1/admit-tool-result?tool=read", None, br#"[{"type":"text","text":"hi"}]"#);
        assert_eq!(s, 200);
        assert_eq!(v, json!({"content": [{"type":"text","text":"hi"}], "refused": []}));
        let bad_image = r#"[{"type":"image","data":"aGVsbG8=","mimeType":"image/png"}]"#;
        let (s, v) = call("POST", "/v1/admit-tool-result?tool=read%20file", None, bad_image.as_bytes());
        assert_eq!(s, 200);
        assert_eq!(v["refused"][0]["reason"], "magic_mismatch");
        assert!(v["content"][0]["text"].as_str().unwrap().contains("read file"));
        let request = r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}"#;
        let (s, v) = call("POST", "/v1/admit-request?api=anthropic", None, request.as_bytes());
        assert_eq!((s, v["api"].as_str(), v["refusal"].is_null()), (200, Some("anthropic"), true));
        assert_eq!(v["request"], serde_json::from_str::<Value>(request).unwrap());
    }

    #[test]
    fn convert_query_adds_the_conversion_keys_and_is_off_by_default() {
        // Off (absent or 0): exactly the answers without it, no new key.
        let text = br#"[{"type":"text","text":"hi"}]"#;
        for q in ["", "&convert=0", "&convert=false"] {
            let (s, v) = call("POST", &format!("/v1/admit-tool-result?tool=read{q}"), None, text);
            assert_eq!((s, v.get("conversions")), (200, None), "{q}");
        }
        // On: the tool result and the request answers gain `conversions`.
        for q in ["convert=1", "convert=true"] {
            let (s, v) = call("POST", &format!("/v1/admit-tool-result?tool=read&{q}"), None, text);
            assert_eq!(s, 200);
            assert_eq!(v, json!({"content": [{"type":"text","text":"hi"}], "refused": [], "conversions": []}));
        }
        let request = r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}"#;
        let (s, v) = call("POST", "/v1/admit-request?api=anthropic&convert=1", None, request.as_bytes());
        assert_eq!((s, v["conversions"].clone()), (200, json!([])));
        let (_, v) = call("POST", "/v1/admit-request?api=anthropic", None, request.as_bytes());
        assert_eq!(v.get("conversions"), None);
        // A type no conversion applies to is admitted as without the option: no `converted` key.
        let png = test_images::png(16, 9);
        let (s, v) = call("POST", "/v1/admit?convert=1", Some("image/png"), &png);
        assert_eq!((s, v["ok"].as_bool(), v.get("converted")), (200, Some(true), None));
        // Without the option an SVG is refused exactly as before.
        let svg = br#"<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>"#;
        let (s, v) = call("POST", "/v1/admit", Some("image/svg+xml"), svg);
        assert_eq!((s, v["reason"].as_str()), (422, Some("mime_unsupported")));
    }
}
