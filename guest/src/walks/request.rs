//! The request seat: a whole provider request (Anthropic Messages, OpenAI Chat Completions or
//! Gemini `generateContent` JSON) with every image and document block in its messages admitted in
//! place, and the rules the
//! provider enforces on a request as a whole (images per request, a tighter side for many images,
//! bytes per request) applied as data from [`crate::profile::RequestRules`].
//!
//! It is the tool-result seat's walk ([`super::tool_result::walk`]) with other rules: the same
//! shapes, the same checks, refusals in their slots, the input kept byte for byte outside the
//! blocks. Blocks past a count or byte budget are refused in their slots with `request_limit` and
//! the rule's name; a request that cannot be made to fit at all (its text alone is over the cap) is
//! refused whole. Input that is not a request of the API is unusable, never guessed at.

use jiter::{Jiter, Peek};

use super::tool_result::scan::Object;
use super::tool_result::{Block, Ruled, Rules, readable, scan, shape, walk};
use crate::options::{Options, SideRule};
use crate::profile::{Api, RequestRules, Rule};
use crate::signature::ImageType;
use crate::verdict::{Admitted, ConversionMade, Dimensions, Kind, Reason, Refusal, Unit};

/// The endpoints whose request bodies the SDK wrappers admit, by the end of the URL's path (a
/// gateway, Azure or Vertex puts anything before it; `*` is one path segment), and the dialect
/// each body is read in: `openai` (Chat Completions), `anthropic` (Messages, also on Vertex), or
/// `responses` (Responses and Conversations items: in [`responses_envelope`]), `gemini`
/// (`generateContent`, also on Vertex), `anthropic-batch` (Message Batches). `gen-facts` writes
/// them into the JavaScript and Python hosts; no host keeps a list of its own.
pub const ENDPOINTS: [(&str, &str); 14] = [
    ("/chat/completions", "openai"),
    ("/responses", "responses"),
    ("/responses/input_tokens", "responses"),
    ("/responses/compact", "responses"),
    ("/conversations", "responses"),
    ("/conversations/*/items", "responses"),
    // Anthropic's carry the `/v1` its SDK always writes, so OpenAI's `/threads/{id}/messages` is
    // not taken for one.
    ("/v1/messages", "anthropic"),
    ("/v1/messages/count_tokens", "anthropic"),
    (":rawPredict", "anthropic"),
    (":streamRawPredict", "anthropic"),
    ("/v1/messages/batches", "anthropic-batch"),
    (":generateContent", "gemini"),
    (":streamGenerateContent", "gemini"),
    (":countTokens", "gemini"),
];

/// How a host hands an OpenAI Responses request to this walk (the contract's dialects are Chat
/// Completions and Messages): the body as the one block of one user message. Every media block
/// anywhere in it (`input_image`, `input_file`, a computer-use screenshot, in any item) is then
/// judged under the OpenAI request rules, refused ones in the Responses API's own `input_text`;
/// the walk keeps the text byte for byte outside the changed blocks, so the body is cut back out
/// of the answer exactly. `gen-facts` writes these into the JavaScript and Python hosts.
pub mod responses_envelope {
    /// What goes before the body.
    pub const PREFIX: &str = r#"{"messages":[{"role":"user","content":[{"responses_request":"#;
    /// What goes after it.
    pub const SUFFIX: &str = "}]}]}";
    /// Where the body sits: the start of every change's path in it.
    pub const POINTER: &str = "/messages/0/content/0/responses_request";
}

/// Room kept for each block not yet judged, in case it is replaced by a placeholder: the words of
/// a refusal are a few hundred bytes. The final length is checked against the cap regardless.
const PLACEHOLDER_RESERVE: u64 = 2048;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    /// Fitted to fewer pixels (and re-encoded).
    Downsampled,
    /// Re-encoded at the same pixel size (upright rotation, JPEG ladder).
    Reencoded,
    /// The same bytes written in canonical form (media type spelling, unwrapped base64).
    Normalized,
    /// Replaced in its slot by a text block.
    Refused,
}

/// A block's media as the gate measured it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaFacts {
    pub mime: Option<String>,
    /// Raw (decoded) bytes; 0 when nothing could be decoded.
    pub bytes: u64,
    pub dimensions: Option<Dimensions>,
}

/// One block the gate changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// JSON Pointer (RFC 6901) of the block in the request.
    pub path: String,
    pub block_type: String,
    pub what: ChangeKind,
    pub before: MediaFacts,
    /// What was admitted; `None` when refused.
    pub after: Option<MediaFacts>,
    /// Why it was refused (refused only).
    pub reason: Option<Reason>,
    pub limit: Option<u64>,
    /// The change in words.
    pub message: String,
    /// The request-level rule that caused it (`anthropic.many_images_max_side`, …); `None` when
    /// the gate's own checks did.
    pub rule: Option<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmittedRequest {
    /// The admitted request JSON; `None` when it is byte for byte the input.
    pub request: Option<String>,
    pub changes: Vec<Change>,
    /// The blocks converted from a type no provider takes (`Options::convert`), in document
    /// order; each is also a change (`downsampled` or `re-encoded`, its words "converted from …").
    pub conversions: Vec<ConversionMade>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRefusal {
    /// The input is not a request the gate can read (not JSON, not this API's shape, over the
    /// read cap); otherwise it was read and cannot be made to fit a rule.
    pub unusable: bool,
    pub reason: Reason,
    pub bytes: u64,
    pub limit: Option<u64>,
    pub rule: Option<&'static str>,
    pub message: String,
}

pub type RequestVerdict = Result<AdmittedRequest, RequestRefusal>;

fn unusable(reason: Reason, bytes: u64, limit: Option<u64>, message: String) -> RequestVerdict {
    Err(RequestRefusal { unusable: true, reason, bytes, limit, rule: None, message })
}

/// Admits one request of `api` (a Message Batches body is many: [`super::admit_request`] reads it
/// item by item).
pub fn admit_request(api: Api, request_json: &str, options: &Options) -> RequestVerdict {
    admit_request_under(api, api.rules(), request_json, options)
}

/// [`admit_request`] under the given rules (tests use smaller numbers).
fn admit_request_under(
    api: Api,
    rules: &'static RequestRules,
    request_json: &str,
    options: &Options,
) -> RequestVerdict {
    let raw = request_json.len() as u64;
    let readable = match readable(request_json) {
        Ok(text) => text,
        Err(r) => return unusable(r.reason, r.raw_bytes, r.limit, r.message),
    };
    let scanned = match scan(&readable) {
        Ok(s) => s,
        Err(e) => {
            return unusable(Reason::Undecodable, raw, None, format!("not JSON the gate can read: {}", e.0));
        }
    };
    let shape_checked = match api {
        Api::Gemini => check_gemini_shape(&readable),
        Api::AnthropicBatch => Err("a batch is many requests, each judged alone".into()),
        // Any JSON: its shape is not known, so nothing in it is ruled out.
        Api::Other => Ok(()),
        Api::Anthropic | Api::OpenAi => check_shape(api, &readable),
    };
    if let Err(why) = shape_checked {
        return unusable(Reason::Undecodable, raw, None, format!("not an {} request: {why}", api_title(api)));
    }
    // Audio is not media the gate judges: it goes to the provider as it is.
    let blocks: Vec<Block> = shape::media_blocks(&readable, &scanned)
        .into_iter()
        .filter(|b| judged_where_it_sits(api, &scanned.objects[b.object]) && !b.is_audio())
        .collect();

    // The images the request will carry (those the gate can judge, and URLs the provider fetches:
    // it counts them too), up to the count the API takes.
    let images = blocks.iter().filter(|b| b.counts_as_image()).count() as u64;
    let carried = rules.max_images.as_ref().map_or(images, |rule| images.min(u64::from(rule.limit)));
    let mut options = *options;
    let mut many_images = None;
    if let Some(rule) = &rules.many_images
        && carried > u64::from(rule.limit.over)
    {
        options.side_rule = Some(SideRule { max_side: rule.limit.max_side, why: rule.words });
        many_images = Some(rule);
    }

    let spans: u64 = blocks.iter().map(|b| scanned.objects[b.object].span.len() as u64).sum();
    let fixed = raw - spans;
    if let Some(cap) = &rules.max_request_bytes
        && fixed > cap.limit
    {
        return Err(over_cap(cap.name, cap.limit, cap.words, fixed, "its text alone (without its media)"));
    }

    let mut seat =
        RequestSeat { rules, images_seen: 0, image_bytes: 0, used: fixed, left_to_judge: blocks.len() as u64 };
    let (text, outcomes) = walk(request_json, &readable, &scanned, &blocks, &options, &mut seat);
    if let Some(cap) = &rules.max_request_bytes
        && text.len() as u64 > cap.limit
    {
        return Err(over_cap(cap.name, cap.limit, cap.words, text.len() as u64, "even with its media admitted"));
    }

    let conversions =
        outcomes.iter().filter_map(|o| ConversionMade::of(&o.path, &o.verdict.as_ref().ok()?.0)).collect();
    let changes = outcomes
        .into_iter()
        .filter_map(|outcome| {
            let before = |bytes: u64, dimensions| MediaFacts { mime: outcome.mime.clone(), bytes, dimensions };
            match outcome.verdict {
                Ok((admitted, changed)) => {
                    let what = if admitted.resized {
                        ChangeKind::Downsampled
                    } else if admitted.reencoded && changed {
                        ChangeKind::Reencoded
                    } else if changed {
                        ChangeKind::Normalized
                    } else {
                        return None;
                    };
                    // The many-images rule caused a fit when the original was over its side.
                    let rule = many_images.filter(|rule| {
                        what == ChangeKind::Downsampled
                            && admitted.original_dimensions.is_some_and(|d| d.width.max(d.height) > rule.limit.max_side)
                    });
                    let message = match (&admitted.converted, what) {
                        (Some(c), _) => format!("converted from {} to {}: {}", c.from, admitted.mime, c.note),
                        (None, ChangeKind::Downsampled) => format!(
                            "fitted from {} to {}{}",
                            dims(admitted.original_dimensions),
                            dims(admitted.dimensions),
                            rule.map(|r| format!(" ({} px largest side {})", r.limit.max_side, r.words))
                                .unwrap_or_default()
                        ),
                        (None, ChangeKind::Reencoded) => {
                            "re-encoded at the same size (upright, or smaller as JPEG)".into()
                        }
                        _ if relabelled(outcome.mime.as_deref(), admitted.mime) => format!(
                            "relabelled: the bytes are {}, not {}",
                            admitted.mime,
                            outcome.mime.as_deref().unwrap_or_default()
                        ),
                        _ => "the same bytes, written in canonical form".into(),
                    };
                    let message = match admitted.repaired() {
                        Some(words) => format!("{message}; repaired, and the model is told: {words}"),
                        None => message,
                    };
                    Some(Change {
                        path: outcome.path,
                        block_type: outcome.block_type,
                        what,
                        before: match &admitted.converted {
                            // The source type, canonical (the block may have spelt it otherwise).
                            Some(c) => MediaFacts {
                                mime: Some(c.from.to_string()),
                                bytes: admitted.original_size,
                                dimensions: admitted.original_dimensions,
                            },
                            None => before(admitted.original_size, admitted.original_dimensions),
                        },
                        after: Some(MediaFacts {
                            mime: Some(admitted.mime.to_string()),
                            bytes: decoded_len(&admitted),
                            dimensions: admitted.dimensions,
                        }),
                        reason: None,
                        limit: None,
                        message,
                        rule: rule.map(|r| r.name),
                    })
                }
                Err((refusal, rule)) => {
                    let rule = rule.or_else(|| {
                        let side = options.side_rule?;
                        (refusal.reason == Reason::DimensionsTooLarge
                            && refusal.limit == Some(u64::from(side.max_side)))
                        .then(|| many_images.map(|r| r.name))
                        .flatten()
                    });
                    Some(Change {
                        path: outcome.path,
                        block_type: outcome.block_type,
                        what: ChangeKind::Refused,
                        before: before(refusal.raw_bytes, None),
                        after: None,
                        reason: Some(refusal.reason),
                        limit: refusal.limit,
                        message: refusal.message,
                        rule,
                    })
                }
            }
        })
        .collect();
    let request = (text != request_json).then_some(text);
    Ok(AdmittedRequest { request, changes, conversions })
}

fn over_cap(name: &'static str, limit: u64, words: &str, bytes: u64, what: &str) -> RequestRefusal {
    RequestRefusal {
        unusable: false,
        reason: Reason::RequestLimit,
        bytes,
        limit: Some(limit),
        rule: Some(name),
        message: format!("{words}; this request cannot be made to fit: {what} is {bytes} bytes"),
    }
}

fn dims(d: Option<Dimensions>) -> String {
    d.map(|d| format!("{}x{} px", d.width, d.height)).unwrap_or_else(|| "an unmeasured size".into())
}

fn decoded_len(a: &Admitted) -> u64 {
    a.len()
}

fn api_title(api: Api) -> &'static str {
    match api {
        Api::Anthropic => "Anthropic Messages",
        Api::OpenAi => "OpenAI Chat Completions",
        Api::Gemini => "Gemini generateContent",
        Api::AnthropicBatch => "Anthropic Message Batches",
        Api::Other => "JSON",
    }
}

/// Typed blocks are judged in the request's messages, at any depth (Anthropic `tool_result`
/// content, documents; Gemini's `contents` and system instruction): elsewhere a `"type": "image"`
/// is a schema's words, not a block. A string that carries media by itself is judged wherever it
/// sits: whatever the shape around it, the provider may read it. Neither is judged inside a
/// `tool_use` block's `input` or a Gemini `functionCall`'s `args`: those are the arguments of an
/// earlier call, JSON the model reads as text, not media.
fn judged_where_it_sits(api: Api, object: &Object) -> bool {
    let mut segments = object.pointer.split('/').skip(1);
    let first = segments.next();
    let rest: Vec<&str> = segments.collect();
    let (in_messages, in_call_arguments) = match api {
        // Fail-closed: where a block sits in a shape nobody named is not known to be harmless.
        Api::Other => (true, false),
        Api::Gemini => (
            first.is_some_and(|f| GEMINI_CONTENT_KEYS.contains(&f)),
            rest.iter().any(|s| matches!(*s, "functionCall" | "function_call")),
        ),
        _ => (
            first == Some("messages"),
            first == Some("messages") && rest.len() > 3 && rest[1] == "content" && rest[3] == "input",
        ),
    };
    (in_messages || object.loose.is_some()) && !in_call_arguments
}

/// The members of a Gemini request that hold content: `contents`, the system instruction (in
/// both of the API's spellings), and `countTokens`' whole request.
const GEMINI_CONTENT_KEYS: [&str; 4] =
    ["contents", "systemInstruction", "system_instruction", "generateContentRequest"];

struct RequestSeat {
    rules: &'static RequestRules,
    /// Images judged so far that the request carries.
    images_seen: u32,
    /// Decoded bytes of the images admitted so far.
    image_bytes: u64,
    /// Bytes of the request written so far: its text outside the blocks, and the blocks judged.
    used: u64,
    left_to_judge: u64,
}

impl RequestSeat {
    fn room(&self) -> Option<u64> {
        let cap = self.rules.max_request_bytes.as_ref()?.limit;
        // Every block still to judge may become a placeholder.
        Some(cap.saturating_sub(self.used + PLACEHOLDER_RESERVE * self.left_to_judge.saturating_sub(1)))
    }
}

/// A block refused under a request-level `rule`: its limit, its words then `detail`, and its name.
fn over<T: Copy + Into<u64>>(rule: &Rule<T>, raw: u64, detail: String) -> Ruled {
    let message = format!("{}; {detail}", rule.words);
    (Refusal::new(Reason::RequestLimit, raw, Some(rule.limit.into()), message), Some(rule.name))
}

impl Rules for RequestSeat {
    fn before(&mut self, block: &Block) -> Result<(), Ruled> {
        if block.counts_as_image() {
            if let Some(rule) = &self.rules.max_images
                && self.images_seen >= rule.limit
            {
                let (refusal, name) = over(rule, 0, format!("this is image {} of the request", self.images_seen + 1));
                return Err((refusal.in_unit(Unit::Images), name));
            }
            self.images_seen = self.images_seen.saturating_add(1);
        }
        Ok(())
    }

    fn after(&mut self, _block: &Block, admitted: &Admitted, size: usize) -> Result<(), Ruled> {
        let image_bytes = if admitted.kind == Kind::Image { decoded_len(admitted) } else { 0 };
        if let Some(rule) = &self.rules.max_image_bytes {
            let bytes = image_bytes;
            if self.image_bytes + bytes > rule.limit {
                let total = self.image_bytes + bytes;
                let detail = format!("this image ({bytes} bytes) would take the request's images to {total} bytes");
                return Err(over(rule, admitted.original_size, detail));
            }
        }
        if let (Some(room), Some(rule)) = (self.room(), &self.rules.max_request_bytes)
            && size as u64 > room
        {
            let detail = format!(
                "the admitted block ({size} bytes of JSON) leaves no room for it in this request ({room} bytes left)"
            );
            return Err(over(rule, admitted.original_size, detail));
        }
        // Counted only once the block is sure to be carried.
        self.image_bytes += image_bytes;
        self.used += size as u64;
        self.left_to_judge -= 1;
        Ok(())
    }

    fn replaced(&mut self, size: usize) {
        self.used += size as u64;
        self.left_to_judge = self.left_to_judge.saturating_sub(1);
    }

    fn stood(&mut self, size: usize) {
        self.replaced(size);
    }

    fn origin(&self) -> String {
        "in this request".into()
    }
}

/// The request is an object with `messages`: a list of objects, each with a `role` string and
/// `content` (a string, a list of blocks, or — OpenAI, assistant turns — null). Roles are the
/// API's own. A repeated key here makes the request ambiguous: refused.
fn check_shape(api: Api, text: &str) -> Result<(), String> {
    let mut j = Jiter::new(text.as_bytes());
    if j.peek().map_err(jiter_error)? != Peek::Object {
        return Err("the request is not a JSON object".into());
    }
    let mut messages_seen = false;
    let mut key = j.known_object().map_err(jiter_error)?.map(str::to_string);
    while let Some(k) = key {
        if k == "messages" {
            if messages_seen {
                return Err("it repeats the key `messages`".into());
            }
            messages_seen = true;
            if j.peek().map_err(jiter_error)? != Peek::Array {
                return Err("`messages` is not a list".into());
            }
            let mut next = j.known_array().map_err(jiter_error)?;
            let mut i = 0;
            while let Some(peek) = next {
                check_message(api, &mut j, peek).map_err(|why| format!("message {i}: {why}"))?;
                i += 1;
                next = j.array_step().map_err(jiter_error)?;
            }
        } else {
            let peek = j.peek().map_err(jiter_error)?;
            j.known_skip(peek).map_err(jiter_error)?;
        }
        key = j.next_key().map_err(jiter_error)?.map(str::to_string);
    }
    if !messages_seen {
        return Err("it has no `messages` list".into());
    }
    Ok(())
}

fn check_message(api: Api, j: &mut Jiter, peek: Peek) -> Result<(), String> {
    if peek != Peek::Object {
        return Err("not an object".into());
    }
    let (mut role, mut content) = (None::<String>, None::<Peek>);
    let mut key = j.known_object().map_err(jiter_error)?.map(str::to_string);
    while let Some(k) = key {
        let peek = j.peek().map_err(jiter_error)?;
        match k.as_str() {
            "role" | "content" if (if k == "role" { role.is_some() } else { content.is_some() }) => {
                return Err(format!("it repeats the key `{k}`"));
            }
            "role" if peek == Peek::String => role = Some(j.known_str().map_err(jiter_error)?.to_string()),
            "role" => return Err("`role` is not a string".into()),
            "content" => {
                content = Some(peek);
                j.known_skip(peek).map_err(jiter_error)?;
            }
            _ => j.known_skip(peek).map_err(jiter_error)?,
        }
        key = j.next_key().map_err(jiter_error)?.map(str::to_string);
    }
    let role = role.ok_or("it has no `role`")?;
    let roles: &[&str] = match api {
        Api::OpenAi => &["system", "developer", "user", "assistant", "tool", "function"],
        _ => &["user", "assistant"],
    };
    if !roles.contains(&role.as_str()) {
        return Err(format!("`{role}` is not a role this API takes ({})", roles.join(", ")));
    }
    match content {
        Some(Peek::String | Peek::Array) => Ok(()),
        Some(Peek::Null) | None if api == Api::OpenAi && role == "assistant" => Ok(()),
        None => Err("it has no `content`".into()),
        Some(_) => Err("`content` is neither a string nor a list of blocks".into()),
    }
}

/// A Gemini request is an object with `contents`, a list of objects each with a `parts` list
/// (`countTokens` may carry them inside `generateContentRequest`). A repeated key here makes the
/// request ambiguous: refused.
fn check_gemini_shape(text: &str) -> Result<(), String> {
    let mut j = Jiter::new(text.as_bytes());
    if j.peek().map_err(jiter_error)? != Peek::Object {
        return Err("the request is not a JSON object".into());
    }
    let found = check_gemini_request(&mut j)?;
    if !found {
        return Err("it has no `contents` list".into());
    }
    Ok(())
}

fn jiter_error(e: jiter::JiterError) -> String {
    format!("{}", e.error_type)
}

/// Checks the object `j` is at; whether it holds `contents` (directly, or in
/// `generateContentRequest`).
fn check_gemini_request(j: &mut Jiter) -> Result<bool, String> {
    let (mut contents_seen, mut nested_seen, mut found) = (false, false, false);
    let mut key = j.known_object().map_err(jiter_error)?.map(str::to_string);
    while let Some(k) = key {
        let peek = j.peek().map_err(jiter_error)?;
        match k.as_str() {
            "contents" => {
                if std::mem::replace(&mut contents_seen, true) {
                    return Err("it repeats the key `contents`".into());
                }
                if peek != Peek::Array {
                    return Err("`contents` is not a list".into());
                }
                let mut next = j.known_array().map_err(jiter_error)?;
                let mut i = 0;
                while let Some(peek) = next {
                    check_gemini_content(j, peek).map_err(|why| format!("content {i}: {why}"))?;
                    i += 1;
                    next = j.array_step().map_err(jiter_error)?;
                }
                found = true;
            }
            "generateContentRequest" => {
                if std::mem::replace(&mut nested_seen, true) {
                    return Err("it repeats the key `generateContentRequest`".into());
                }
                if peek != Peek::Object {
                    return Err("`generateContentRequest` is not an object".into());
                }
                found |= check_gemini_request(j).map_err(|why| format!("generateContentRequest: {why}"))?;
            }
            _ => j.known_skip(peek).map_err(jiter_error)?,
        }
        key = j.next_key().map_err(jiter_error)?.map(str::to_string);
    }
    Ok(found)
}

fn check_gemini_content(j: &mut Jiter, peek: Peek) -> Result<(), String> {
    if peek != Peek::Object {
        return Err("not an object".into());
    }
    let mut parts_seen = false;
    let mut key = j.known_object().map_err(jiter_error)?.map(str::to_string);
    while let Some(k) = key {
        let peek = j.peek().map_err(jiter_error)?;
        match k.as_str() {
            "parts" if parts_seen => return Err("it repeats the key `parts`".into()),
            "parts" if peek != Peek::Array => return Err("`parts` is not a list".into()),
            "parts" => parts_seen = true,
            "role" if peek != Peek::String => return Err("`role` is not a string".into()),
            _ => {}
        }
        j.known_skip(peek).map_err(jiter_error)?;
        key = j.next_key().map_err(jiter_error)?.map(str::to_string);
    }
    if !parts_seen {
        return Err("it has no `parts` list".into());
    }
    Ok(())
}

/// Whether the block named another image type than its bytes are (`image/jpg` for a JPEG is the
/// same type, spelt otherwise).
fn relabelled(labelled: Option<&str>, admitted: &str) -> bool {
    let same = |m: &str| ImageType::from_mime(m).zip(ImageType::from_mime(admitted)).is_some_and(|(a, b)| a == b);
    labelled.is_some_and(|m| !same(m) && crate::signature::normalize_mime(m) != admitted)
}

#[cfg(test)]
mod tests;
