//! Writes the facts the Rust sources define into the files other languages read, so that no
//! number, word or name is written twice by hand: the JavaScript package's `src/facts.js` (and its
//! types), the Python host's `facts.py`, and the docs' tables between `<!-- facts:NAME … -->` and
//! `<!-- /facts:NAME -->`. The sources: `lib/src/facts.rs` (the runtime limits, the words for a
//! call that did not answer, the environment's names, the VLM client's bounds and retry policy)
//! and the guest (refusal reasons, profiles).
//!
//! `gen-facts` writes the files; `gen-facts --check` writes nothing and fails, naming each file,
//! when one differs from what it would write (scripts/check-facts.sh; scripts/test.sh runs the same
//! check as this crate's unit test `the_repository_s_generated_files_are_current`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

// The host's facts, read from their source file: `lib/src/facts.rs` holds `const`s only, so the
// generator needs none of the library's dependencies. As a dependency on the library it compiled
// wasmtime and Cranelift with its own feature set, a second time beside the command's release build.
#[path = "../../lib/src/facts.rs"]
mod facts;
use facts::{call_error, env, vlm, vlm_retry};
use mediagate_guest::profile::{Api, Provider};
use mediagate_guest::verdict::Reason;
use mediagate_guest::verdict_json::PAGE_ERROR_REASONS;
use mediagate_guest::walks::request::{ENDPOINTS, responses_envelope};

const COMMAND: &str = "cargo run --release --locked -p mediagate-facts --bin gen-facts";

fn main() -> ExitCode {
    let check = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--check") => true,
        Some(other) => {
            eprintln!("gen-facts: unknown argument {other:?} (usage: gen-facts [--check])");
            return ExitCode::from(2);
        }
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("facts/ sits in the repository").to_path_buf();
    match run(&root, check) {
        Ok(stale) if stale.is_empty() => ExitCode::SUCCESS,
        Ok(stale) => {
            for path in &stale {
                eprintln!("gen-facts: {path} is not what the facts make of it");
            }
            eprintln!("gen-facts: run `{COMMAND}` and commit what it writes");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("gen-facts: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Writes (or, with `check`, compares) every generated file and section; answers the paths that
/// differed.
fn run(root: &Path, check: bool) -> Result<Vec<String>, String> {
    contract_agrees(root)?;
    let mut stale = Vec::new();
    let mut targets: Vec<(&str, String)> = vec![
        ("js/src/facts.js", js()),
        ("js/src/facts.d.ts", js_types()),
        ("hosts/python/mediagate_host/facts.py", python()),
    ];
    let sections: [(&str, &str, String); 3] = [
        ("SECURITY.md", "runtime-limits", runtime_limits_table()),
        ("SECURITY.md", "vlm-client", vlm_client_table()),
        ("docs/design.md", "profiles", profiles_table()),
    ];
    let mut documents: Vec<(&str, String)> = Vec::new();
    for (file, name, table) in sections {
        let text = match documents.iter().position(|(f, _)| *f == file) {
            Some(i) => documents.remove(i).1,
            None => read(&root.join(file))?,
        };
        documents.push((file, replace_section(&text, file, name, &table)?));
    }
    targets.extend(documents);
    for (file, want) in targets {
        let path = root.join(file);
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have == want {
            continue;
        }
        stale.push(file.to_string());
        if !check {
            std::fs::write(&path, want).map_err(|e| format!("writing {}: {e}", path.display()))?;
            eprintln!("gen-facts: wrote {file}");
        }
    }
    Ok(if check { stale } else { Vec::new() })
}

fn read(path: &PathBuf) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

/// Every refusal reason a verdict may carry: the gate's, then a PDF page's own.
fn refusal_reasons() -> Vec<&'static str> {
    Reason::ALL.iter().map(|r| r.as_str()).chain(PAGE_ERROR_REASONS).collect()
}

fn profiles() -> Vec<&'static str> {
    Provider::ALL.iter().map(|p| p.name()).collect()
}

/// The request dialects `admit-request` reads.
fn request_apis() -> Vec<&'static str> {
    Api::ALL.iter().map(|a| a.name()).collect()
}

/// The dialects the endpoint list names: the request dialects and `responses` (an envelope).
fn endpoint_dialects() -> Vec<&'static str> {
    let mut dialects: Vec<&str> = Vec::new();
    for (_, dialect) in ENDPOINTS {
        if !dialects.contains(&dialect) {
            dialects.push(dialect);
        }
    }
    dialects
}

/// The contract names the reasons and the request dialects too (it is the interface, not a copy
/// to generate): it must name the same ones, or the packages would list names the component
/// never answers or takes.
fn contract_agrees(root: &Path) -> Result<(), String> {
    let wit = read(&root.join("wit/admission.wit"))?;
    let cases = |name: &str| -> Result<Vec<String>, String> {
        let body = wit
            .split_once(&format!("enum {name} {{"))
            .and_then(|(_, rest)| rest.split_once('}'))
            .ok_or(format!("wit/admission.wit has no `enum {name}`"))?
            .0;
        let mut cases: Vec<String> = body
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("//"))
            .map(|l| l.trim_end_matches(',').to_string())
            .collect();
        cases.sort();
        Ok(cases)
    };
    let sorted = |names: Vec<&str>| {
        let mut names: Vec<String> = names.into_iter().map(String::from).collect();
        names.sort();
        names
    };
    let contract: Vec<String> = cases("refusal-reason")?.iter().map(|c| c.replace('-', "_")).collect();
    let ours = sorted(refusal_reasons());
    if contract != ours {
        return Err(format!(
            "wit/admission.wit's refusal-reason names {contract:?}; the guest (Reason::ALL, PAGE_ERROR_REASONS) {ours:?}"
        ));
    }
    let (contract, ours) = (cases("request-api")?, sorted(request_apis()));
    if contract != ours {
        return Err(format!("wit/admission.wit's request-api names {contract:?}; the guest (Api::ALL) {ours:?}"));
    }
    Ok(())
}

fn js_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("'{s}'")).collect();
    format!("Object.freeze([{}])", quoted.join(", "))
}

fn env_names() -> [(&'static str, &'static str); 8] {
    [
        ("VLM_URL", env::VLM_URL),
        ("VLM_MODEL", env::VLM_MODEL),
        ("VLM_API", env::VLM_API),
        ("VLM_API_KEY", env::VLM_API_KEY),
        ("OPENAI_API_KEY", env::OPENAI_API_KEY),
        ("ANTHROPIC_API_KEY", env::ANTHROPIC_API_KEY),
        ("CACHE_DIR", env::CACHE_DIR),
        ("AGENT_TOOL_WASM", env::AGENT_TOOL_WASM),
    ]
}

fn call_error_kinds() -> [(&'static str, &'static str); 5] {
    [
        ("DEADLINE", call_error::DEADLINE),
        ("WALL_DEADLINE", call_error::WALL_DEADLINE),
        ("OUT_OF_MEMORY", call_error::OUT_OF_MEMORY),
        ("TRAP", call_error::TRAP),
        ("HOST", call_error::HOST),
    ]
}

fn js() -> String {
    let mut s = format!(
        "// Generated by `{COMMAND}` from lib/src/facts.rs and the guest (verdict.rs,\n\
         // verdict_json.rs, profile.rs); do not edit.\n\n"
    );
    let _ = writeln!(s, "/** Every refusal reason a verdict may carry. */");
    let _ = writeln!(s, "export const REFUSAL_REASONS = {};", js_list(&refusal_reasons()));
    let _ = writeln!(s, "/** The profiles (providers), the default first. */");
    let _ = writeln!(s, "export const PROFILES = {};", js_list(&profiles()));
    let _ = writeln!(s, "/** What a call that did not answer ran into (`GateError.kind`), in every host's words. */");
    let _ = writeln!(s, "export const CALL_ERROR_KINDS = {};", js_list(&call_error::KINDS));
    let _ = writeln!(s, "export const CALL_ERROR_KIND = Object.freeze({{");
    for (name, value) in call_error_kinds() {
        let _ = writeln!(s, "  {name}: '{value}',");
    }
    let _ = writeln!(s, "}});");
    let _ =
        writeln!(s, "/** The CLI's limits of one call: its instance's memory, its CPU and wall-clock deadlines. */");
    let _ = writeln!(s, "export const MEMORY_LIMIT_BYTES = {};", facts::MEMORY_BYTES);
    let _ = writeln!(s, "/** Memory for all calls' instances together, by default, where calls run side by side. */");
    let _ = writeln!(s, "export const MEMORY_BUDGET_BYTES = {};", facts::MEMORY_BUDGET_BYTES);
    let _ = writeln!(s, "export const CPU_DEADLINE_MS = {};", facts::CPU_DEADLINE_SECS * 1000);
    let _ = writeln!(s, "export const WALL_DEADLINE_MS = {};", facts::WALL_DEADLINE_SECS * 1000);
    let _ = writeln!(s, "/** The environment variables the hosts read. */");
    let _ = writeln!(s, "export const ENV = Object.freeze({{");
    for (key, name) in env_names() {
        let _ = writeln!(s, "  {key}: '{name}',");
    }
    let _ = writeln!(s, "}});");
    let _ = writeln!(s, "/** How the VLM client retries before the first byte (connect errors, 429, 5xx). */");
    let _ = writeln!(
        s,
        "export const VLM_RETRY = Object.freeze({{ maxRetries: {}, initialBackoffMs: {}, maxWaitMs: {} }});",
        vlm_retry::MAX_RETRIES,
        vlm_retry::INITIAL_BACKOFF_MS,
        vlm_retry::MAX_WAIT_MS
    );
    let _ = writeln!(s, "/** The request dialects `admitRequest` reads (each with its request-level rules). */");
    let _ = writeln!(s, "export const REQUEST_APIS = {};", js_list(&request_apis()));
    let _ = writeln!(
        s,
        "/** The endpoints whose bodies the wrappers admit: [the end of the URL's path (`*`: one segment), its dialect]. */"
    );
    let _ = writeln!(s, "export const REQUEST_ENDPOINTS = Object.freeze([");
    for (path, dialect) in ENDPOINTS {
        let _ = writeln!(s, "  Object.freeze([{}, {}]),", json_string(path), json_string(dialect));
    }
    let _ = writeln!(s, "]);");
    let _ =
        writeln!(s, "/** How a Responses request is handed to admit-request's OpenAI walk: the body between these. */");
    let _ = writeln!(
        s,
        "export const RESPONSES_ENVELOPE = Object.freeze({{ prefix: {}, suffix: {}, pointer: {} }});",
        json_string(responses_envelope::PREFIX),
        json_string(responses_envelope::SUFFIX),
        json_string(responses_envelope::POINTER)
    );
    s
}

/// A printable ASCII string as a string literal that JavaScript and Python read alike.
fn json_string(text: &str) -> String {
    assert!(text.bytes().all(|b| (b' '..=b'~').contains(&b)), "only printable ASCII is written: {text}");
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

fn ts_union(items: &[&str]) -> String {
    items.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(" | ")
}

fn js_types() -> String {
    let mut s = format!("// Generated by `{COMMAND}`; do not edit.\n\n");
    let _ = writeln!(s, "export type RefusalReason = {};", ts_union(&refusal_reasons()));
    let _ = writeln!(s, "export type Provider = {};", ts_union(&profiles()));
    let _ = writeln!(s, "export type CallErrorKind = {};", ts_union(&call_error::KINDS));
    let _ = writeln!(s, "export const REFUSAL_REASONS: readonly RefusalReason[];");
    let _ = writeln!(s, "export const PROFILES: readonly Provider[];");
    let _ = writeln!(s, "export const CALL_ERROR_KINDS: readonly CallErrorKind[];");
    let kinds: Vec<String> = call_error_kinds().iter().map(|(k, v)| format!("{k}: '{v}'")).collect();
    let _ = writeln!(s, "export const CALL_ERROR_KIND: Readonly<{{ {} }}>;", kinds.join("; "));
    let _ = writeln!(s, "export const MEMORY_LIMIT_BYTES: number;");
    let _ = writeln!(s, "export const MEMORY_BUDGET_BYTES: number;");
    let _ = writeln!(s, "export const CPU_DEADLINE_MS: number;");
    let _ = writeln!(s, "export const WALL_DEADLINE_MS: number;");
    let keys: Vec<String> = env_names().iter().map(|(k, n)| format!("{k}: '{n}'")).collect();
    let _ = writeln!(s, "export const ENV: Readonly<{{ {} }}>;", keys.join("; "));
    let _ = writeln!(
        s,
        "export const VLM_RETRY: Readonly<{{ maxRetries: number; initialBackoffMs: number; maxWaitMs: number }}>;"
    );
    let _ = writeln!(s, "export type RequestApi = {};", ts_union(&request_apis()));
    let _ = writeln!(s, "export const REQUEST_APIS: readonly RequestApi[];");
    let _ = writeln!(
        s,
        "export const REQUEST_ENDPOINTS: readonly (readonly [string, {}])[];",
        ts_union(&endpoint_dialects())
    );
    let _ = writeln!(
        s,
        "export const RESPONSES_ENVELOPE: Readonly<{{ prefix: string; suffix: string; pointer: string }}>;"
    );
    s
}

fn py_tuple(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("\"{s}\"")).collect();
    format!("({},)", quoted.join(", "))
}

fn seconds(ms: u64) -> String {
    format!("{:?}", ms as f64 / 1000.0)
}

fn python() -> String {
    let mut s = format!(
        "\"\"\"Generated by `{COMMAND}` from lib/src/facts.rs and the guest\n\
         (verdict.rs, verdict_json.rs, profile.rs); do not edit.\"\"\"\n\n"
    );
    let _ = writeln!(s, "#: Every refusal reason a verdict may carry.");
    let _ = writeln!(s, "REFUSAL_REASONS = {}", py_tuple(&refusal_reasons()));
    let _ = writeln!(s, "#: The profiles (providers), the default first.");
    let _ = writeln!(s, "PROFILES = {}", py_tuple(&profiles()));
    let _ = writeln!(s, "#: What a call that did not answer ran into (`GuestTrap.kind`), in every host's words.");
    let _ = writeln!(s, "CALL_ERROR_KINDS = {}", py_tuple(&call_error::KINDS));
    for (name, value) in call_error_kinds() {
        let _ = writeln!(s, "KIND_{name} = \"{value}\"");
    }
    let _ = writeln!(s, "\n#: The CLI's limits of one call: its instance's memory, its CPU and wall-clock deadlines.");
    let _ = writeln!(s, "MEMORY_LIMIT_BYTES = {}", facts::MEMORY_BYTES);
    let _ = writeln!(s, "#: Memory for all calls' instances together, by default, where calls run side by side.");
    let _ = writeln!(s, "MEMORY_BUDGET_BYTES = {}", facts::MEMORY_BUDGET_BYTES);
    let _ = writeln!(s, "CPU_DEADLINE_S = {}", seconds(facts::CPU_DEADLINE_SECS * 1000));
    let _ = writeln!(s, "WALL_DEADLINE_S = {}", seconds(facts::WALL_DEADLINE_SECS * 1000));
    let _ = writeln!(s, "\n#: The environment variables the hosts read.");
    for (key, name) in env_names() {
        let _ = writeln!(s, "ENV_{key} = \"{name}\"");
    }
    let _ =
        writeln!(s, "\n#: The VLM client: its bounds, and how it retries before the first byte (connect errors, 429,");
    let _ =
        writeln!(s, "#: 5xx): the backoff doubles from the first wait, each wait at most the last (Retry-After too).");
    let _ = writeln!(s, "VLM_CONNECT_TIMEOUT_S = {}", seconds(vlm::CONNECT_TIMEOUT_SECS * 1000));
    let _ = writeln!(s, "VLM_IDLE_TIMEOUT_S = {}", seconds(vlm::IDLE_TIMEOUT_SECS * 1000));
    let _ = writeln!(s, "VLM_MAX_REPLY_S = {}", seconds(vlm::MAX_REPLY_SECS * 1000));
    let _ = writeln!(s, "VLM_MAX_EVENT_BYTES = {}", vlm::MAX_EVENT_BYTES);
    let _ = writeln!(s, "VLM_MAX_ERROR_BODY_BYTES = {}", vlm::MAX_ERROR_BODY_BYTES);
    let _ = writeln!(s, "VLM_ERROR_BODY_WAIT_S = {}", seconds(vlm::ERROR_BODY_WAIT_SECS * 1000));
    let _ = writeln!(s, "VLM_MAX_RETRIES = {}", vlm_retry::MAX_RETRIES);
    let _ = writeln!(s, "VLM_INITIAL_BACKOFF_S = {}", seconds(vlm_retry::INITIAL_BACKOFF_MS));
    let _ = writeln!(s, "VLM_MAX_WAIT_S = {}", seconds(vlm_retry::MAX_WAIT_MS));
    let _ = writeln!(
        s,
        "\n#: The endpoints whose bodies the wrappers admit: (the end of the URL's path (`*`: one segment),"
    );
    let _ = writeln!(s, "#: its dialect).");
    let _ = writeln!(s, "REQUEST_ENDPOINTS = (");
    for (path, dialect) in ENDPOINTS {
        let _ = writeln!(s, "    ({}, {}),", json_string(path), json_string(dialect));
    }
    let _ = writeln!(s, ")");
    let _ =
        writeln!(s, "\n#: How a Responses request is handed to admit-request's OpenAI walk: the body between these.");
    let _ = writeln!(s, "RESPONSES_PREFIX = {}", json_string(responses_envelope::PREFIX));
    let _ = writeln!(s, "RESPONSES_SUFFIX = {}", json_string(responses_envelope::SUFFIX));
    let _ = writeln!(s, "RESPONSES_POINTER = {}", json_string(responses_envelope::POINTER));
    s
}

/// `n` bytes in the largest binary unit that divides them.
fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n.is_multiple_of(1 << 20) => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n.is_multiple_of(1 << 10) => format!("{} KiB", n >> 10),
        n => format!("{} bytes", thousands(n)),
    }
}

fn millis(ms: u64) -> String {
    if ms.is_multiple_of(1000) { format!("{} s", ms / 1000) } else { format!("{ms} ms") }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn runtime_limits_table() -> String {
    let source = "`lib/src/facts.rs`";
    format!(
        "| limit | default | where |\n\
         |---|---|---|\n\
         | guest linear memory | {memory} (`memory_bytes`); growth past it traps | {source} |\n\
         | CPU deadline | {cpu} of guest running time (`cpu_deadline`): the stretches the guest actually ran, summed between yields (time waiting for a worker while other calls run, and time in host imports such as the VLM, do not count), checked every {tick} epoch tick | {source} |\n\
         | wall-clock deadline | {wall} per call (`wall_deadline`), waiting included; past it the call is dropped with `WallDeadlineExceeded` | {source} |\n\
         | instances at once | {instances} (`max_concurrent_calls`, the pooling allocator's size); `mediagate mcp` sizes it from its memory budget (below) | {source} |\n\
         | guests running at once | one per core (`max_running_calls`): more calls wait for a turn before they instantiate; a call waiting on the VLM gives its turn back and takes one again after, so a slow model holds no turn (a call waiting there keeps its linear memory) | `lib/src/runtime.rs` |\n\
         | wasm stack | 1 MiB | `lib/src/engine_config.rs` |\n",
        memory = bytes(facts::MEMORY_BYTES as u64),
        cpu = millis(facts::CPU_DEADLINE_SECS * 1000),
        tick = millis(facts::EPOCH_TICK_MS),
        wall = millis(facts::WALL_DEADLINE_SECS * 1000),
        instances = facts::MAX_CONCURRENT_CALLS,
    )
}

fn vlm_client_table() -> String {
    format!(
        "| limit | default |\n\
         |---|---|\n\
         | connect timeout | {connect} |\n\
         | idle timeout (response start; between two pieces of text — events without text do not count) | {idle} |\n\
         | whole reply | {reply} (`max_reply_time`): a model streaming text forever is cut off |\n\
         | retries before the first byte (connect errors, 429, 5xx) | {retries}, backoff {backoff} doubling, each wait ≤ {wait} whatever `Retry-After` says (seconds or an HTTP date; `1e20`, `inf` clamped, `NaN`, negative ignored); the Python host's the same |\n\
         | an API key over plain http | only to loopback (127.0.0.0/8, `::1`, `localhost`); refused before connecting otherwise |\n\
         | one SSE event | {event} (`max_event_bytes`) |\n\
         | an error body | first {body}, read for at most {body_wait} |\n\
         | redirects | not followed |\n\
         | the API key in streamed text | redacted (`<redacted>`), across chunk boundaries |\n",
        connect = millis(vlm::CONNECT_TIMEOUT_SECS * 1000),
        idle = millis(vlm::IDLE_TIMEOUT_SECS * 1000),
        reply = millis(vlm::MAX_REPLY_SECS * 1000),
        retries = vlm_retry::MAX_RETRIES,
        backoff = millis(vlm_retry::INITIAL_BACKOFF_MS),
        wait = millis(vlm_retry::MAX_WAIT_MS),
        event = bytes(vlm::MAX_EVENT_BYTES as u64),
        body = bytes(vlm::MAX_ERROR_BODY_BYTES as u64),
        body_wait = millis(vlm::ERROR_BODY_WAIT_SECS * 1000),
    )
}

fn profiles_table() -> String {
    let mut s = String::from("| profile | image types | base64 limit | largest side |\n|---|---|---|---|\n");
    for provider in Provider::ALL {
        let profile = provider.profile();
        let mut types: Vec<String> = profile
            .image_types
            .iter()
            .map(|t| {
                let name = t.mime().trim_start_matches("image/");
                if name == "gif" && profile.still_gif_only { "still gif".to_string() } else { name.to_string() }
            })
            .collect();
        if !profile.image_types.iter().any(|t| t.mime() == "image/gif") {
            types.last_mut().expect("a profile takes some type").push_str(" (no gif)");
        }
        let limit = profile.max_base64_len;
        let limit = if limit.is_multiple_of(1 << 20) {
            format!("{} ({})", thousands(limit), bytes(limit))
        } else {
            thousands(limit)
        };
        let side = profile.max_side.map_or("—".to_string(), |px| format!("{px} px"));
        let default = if provider == Provider::default() { " (default)" } else { "" };
        let _ = writeln!(s, "| `{}`{default} | {} | {limit} | {side} |", provider.name(), types.join(", "));
    }
    s
}

/// `text` with the section `name` (between `<!-- facts:name … -->` and `<!-- /facts:name -->`)
/// holding `body`.
fn replace_section(text: &str, file: &str, name: &str, body: &str) -> Result<String, String> {
    let open = format!("<!-- facts:{name} ");
    let close = format!("<!-- /facts:{name} -->");
    let start = text.find(&open).ok_or_else(|| format!("{file} has no `{open}…-->` marker"))?;
    let end = text[start..].find(&close).ok_or_else(|| format!("{file} has no `{close}` marker"))? + start;
    Ok(format!(
        "{}<!-- facts:{name} (generated by `{COMMAND}`; do not edit) -->\n{body}{}",
        &text[..start],
        &text[end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy of what the generator reads and writes, in a fresh directory.
    fn scratch(name: &str) -> PathBuf {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let dir = std::env::temp_dir().join(format!("gen-facts-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for file in ["wit/admission.wit", "SECURITY.md", "docs/design.md"] {
            std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
            std::fs::copy(repo.join(file), dir.join(file)).unwrap();
        }
        std::fs::create_dir_all(dir.join("js/src")).unwrap();
        std::fs::create_dir_all(dir.join("hosts/python/mediagate_host")).unwrap();
        dir
    }

    /// The check itself, on the repository: scripts/test.sh runs it inside `cargo test --workspace`,
    /// whose build this crate shares (`cargo run -p mediagate-facts` alone unifies the guest's
    /// dependencies' features another way and compiles them a second time).
    #[test]
    fn the_repository_s_generated_files_are_current() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let stale = run(repo, true).unwrap();
        assert!(stale.is_empty(), "{stale:?} are not what the facts make of them: run `{COMMAND}` and commit it");
    }

    #[test]
    fn check_fails_on_a_file_edited_by_hand_and_passes_once_regenerated() {
        let dir = scratch("edit");
        assert!(run(&dir, false).unwrap().is_empty());
        assert_eq!(run(&dir, true).unwrap(), Vec::<String>::new(), "what it wrote is current");

        let py = dir.join("hosts/python/mediagate_host/facts.py");
        let text = std::fs::read_to_string(&py).unwrap();
        std::fs::write(&py, text.replace("VLM_MAX_RETRIES = 2", "VLM_MAX_RETRIES = 5")).unwrap();
        let security = dir.join("SECURITY.md");
        let text = std::fs::read_to_string(&security).unwrap();
        std::fs::write(&security, text.replacen("| guest linear memory | 512 MiB", "| guest linear memory | 1 GiB", 1))
            .unwrap();
        assert_eq!(run(&dir, true).unwrap(), ["hosts/python/mediagate_host/facts.py", "SECURITY.md"]);

        assert!(run(&dir, false).unwrap().is_empty());
        assert!(run(&dir, true).unwrap().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_marker_or_a_reason_the_contract_lacks_is_an_error() {
        let dir = scratch("markers");
        let design = dir.join("docs/design.md");
        let text = std::fs::read_to_string(&design).unwrap();
        std::fs::write(&design, text.replace("<!-- /facts:profiles -->", "")).unwrap();
        assert!(run(&dir, true).unwrap_err().contains("<!-- /facts:profiles -->"));

        let wit = dir.join("wit/admission.wit");
        let text = std::fs::read_to_string(&wit).unwrap();
        std::fs::write(&wit, text.replacen("        blank,", "", 1)).unwrap();
        assert!(run(&dir, true).unwrap_err().contains("refusal-reason"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn numbers_read_as_the_docs_write_them() {
        assert_eq!(thousands(5_242_880), "5,242,880");
        assert_eq!(thousands(100), "100");
        assert_eq!(bytes(512 << 20), "512 MiB");
        assert_eq!(bytes(64 << 10), "64 KiB");
        assert_eq!(millis(500), "500 ms");
        assert_eq!(millis(30_000), "30 s");
        assert_eq!(seconds(500), "0.5");
    }
}
