//! The proxy's pass over a server message (`cli/src/servers/proxy/inspect.rs`, compiled in here as
//! it is in the host), in each class of message the proxy gates, against the gate's walk.
//!
//! The first byte chooses where the rest (UTF-8, lossily) goes: the whole line; the `result` of an
//! answer; an error's `data`; the content of a `sampling/createMessage` request; a notification's
//! `params`; an icon's `src` in `tools/list`. Besides no panic it checks what the proxy relies on:
//! - a message with no `type` member has no block the gate's walk would judge (the proxy skips the
//!   gate call for it);
//! - every `data:` URL span is a JSON string a URL parser reads as a `data:` URL, every blob span
//!   an object, all inside the message;
//! - the pass reads what serde_json reads: JSON to one is JSON to the other, unless a number or
//!   a lone surrogate is past what serde_json holds (the pass reads those; the proxy mends
//!   surrogates first, as the gate does).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mediagate_guest::walks::tool_result::scan::with_lone_surrogates_mended;
use mediagate_guest::{Options, admit_tool_result};

#[path = "../../cli/src/servers/proxy/inspect.rs"]
#[allow(dead_code)]
mod proxy_inspect;

use proxy_inspect::{inspect, is_data_url};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let message = match selector % 6 {
        0 => text.into_owned(),
        1 => format!(r#"{{"jsonrpc":"2.0","id":1,"result":{text}}}"#),
        2 => format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32000,"message":"m","data":{text}}}}}"#),
        3 => format!(
            r#"{{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{{"messages":[{{"role":"user","content":{text}}}],"maxTokens":5}}}}"#
        ),
        4 => format!(r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{text}}}"#),
        _ => format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{{"name":"t","icons":[{{"src":{text}}}]}}]}}}}"#),
    };
    let mended = with_lone_surrogates_mended(&message);
    let Ok(found) = inspect(&mended) else { return };
    for span in &found.data_urls {
        let literal = &mended[span.clone()];
        let url: String = serde_json::from_str(literal).expect("a data URL span is a JSON string");
        assert!(is_data_url(&url), "{literal}");
    }
    for blob in &found.blobs {
        let object = &mended[blob.span.clone()];
        assert!(object.starts_with('{') && object.ends_with('}'), "{object}");
    }
    if !found.typed {
        let admission = admit_tool_result("fuzz", &message, &Options::default());
        // Nothing judged: no block (content `None`), or the whole message unreadable to the gate.
        assert!(
            admission.refused.iter().all(|r| r.path.is_empty())
                && (admission.content.is_none() || !admission.refused.is_empty()),
            "a block in a message without `type`: {message}"
        );
    }
});
