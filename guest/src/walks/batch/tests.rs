use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::*;
use crate::Provider;
use crate::test_images::{encode, gradient, png};

const SVG: &[u8] = b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>";

fn openai_options() -> Options {
    Options { provider: Provider::OpenAi, ..Options::default() }
}

fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!("data:{mime};base64,{}", STANDARD.encode(bytes))
}

fn chat_line(custom_id: &str, image: &[u8]) -> String {
    json!({"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": {
        "model": "gpt-4o", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": data_url("image/png", image)}}]}]}})
    .to_string()
}

/// The answer with its report line, as the binding writes it.
struct Answered {
    outcome: Outcome,
    custom_id: Option<String>,
    line: Option<String>,
    json: String,
}

fn answered(api: BatchApi, line: &str, number: u64, options: &Options) -> Answered {
    let answer = admit_batch_line(api, line, options);
    let json = crate::verdict_json::batch_line(number, &answer);
    Answered { outcome: answer.outcome, custom_id: answer.custom_id, line: answer.line, json }
}

fn report(line: &Answered) -> Value {
    serde_json::from_str(&line.json).unwrap_or_else(|e| panic!("report is not JSON ({e}): {}", line.json))
}

#[test]
fn a_good_request_is_unchanged_and_its_report_names_it() {
    let line = chat_line("req-1", &png(8, 8));
    let answer = answered(BatchApi::OpenAi, &line, 7, &openai_options());
    assert_eq!(
        (answer.outcome, answer.line.as_deref(), answer.custom_id.as_deref()),
        (Outcome::Unchanged, None, Some("req-1"))
    );
    let r = report(&answer);
    assert_eq!((r["number"].as_u64(), r["outcome"].as_str()), (Some(7), Some("unchanged")));
    assert!(answer.json.starts_with("{\"number\":7,\"custom_id\":\"req-1\",\"outcome\":\"unchanged\",\"url\":"));
}

#[test]
fn a_refused_block_is_replaced_and_only_the_body_changes() {
    // Odd spacing and key order outside the body are kept byte for byte.
    let body = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": data_url("image/png", SVG)}}]}]});
    let line = format!(
        "{{ \"url\" : \"/v1/chat/completions\",\"body\": {body} ,\"method\":\"POST\", \"custom_id\":\"x\\u0031\"}}"
    );
    let answer = answered(BatchApi::OpenAi, &line, 1, &openai_options());
    assert_eq!(answer.outcome, Outcome::RefusedBlocks);
    assert_eq!(answer.custom_id.as_deref(), Some("x1"));
    let out = answer.line.clone().expect("spliced");
    let start = line.find("\"body\": ").unwrap() + 8;
    assert_eq!(&out[..start], &line[..start]);
    assert!(out.ends_with(" ,\"method\":\"POST\", \"custom_id\":\"x\\u0031\"}"));
    let v: Value = serde_json::from_str(&out).unwrap();
    let block = &v["body"]["messages"][0]["content"][0];
    assert_eq!(block["type"], "text");
    assert!(block["text"].as_str().unwrap().contains("magic_mismatch"), "{block}");
    let r = report(&answer);
    assert_eq!(r["outcome"], "refused_blocks");
    assert_eq!(r["refused"], json!(["/messages/0/content/0"]));
    assert_eq!(r["changed"][0]["reason"], "magic_mismatch");
}

#[test]
fn an_oversized_image_is_fitted_and_the_line_is_changed() {
    let big = encode(&gradient(2600, 1400), image::ImageFormat::Png);
    let line = chat_line("big", &big);
    let answer = answered(BatchApi::OpenAi, &line, 2, &openai_options());
    assert_eq!(answer.outcome, Outcome::Changed);
    let v: Value = serde_json::from_str(answer.line.as_deref().unwrap()).unwrap();
    assert_eq!(v["custom_id"], "big");
    assert_eq!(report(&answer)["changed"][0]["what"], "downsampled");
}

#[test]
fn anthropic_params_are_a_messages_request() {
    let params = json!({"model": "claude", "max_tokens": 10, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": STANDARD.encode(SVG)}}]}]});
    let line = json!({"custom_id": "a", "params": params}).to_string();
    let answer = answered(BatchApi::Anthropic, &line, 3, &Options::default());
    assert_eq!(answer.outcome, Outcome::RefusedBlocks);
    // The same item is not an OpenAI Batch line.
    let answer = answered(BatchApi::OpenAi, &line, 3, &openai_options());
    assert_eq!(answer.outcome, Outcome::Refused);
    let r = report(&answer);
    assert_eq!(r["refusal"]["unusable"], true);
    assert!(r["refusal"]["message"].as_str().unwrap().contains("no \"body\""), "{r}");
}

#[test]
fn text_only_endpoints_pass_and_endpoints_without_a_walk_pass_only_without_media() {
    let embed =
        r#"{"custom_id":"e","method":"POST","url":"/v1/embeddings","body":{"model":"m","input":"data:x;base64,AAAA"}}"#;
    assert_eq!(answered(BatchApi::OpenAi, embed, 1, &openai_options()).outcome, Outcome::Unchanged);
    let text = r#"{"custom_id":"r","method":"POST","url":"/v1/responses","body":{"model":"m","input":"hello"}}"#;
    assert_eq!(answered(BatchApi::OpenAi, text, 1, &openai_options()).outcome, Outcome::Unchanged);
    let image = json!({"custom_id": "r2", "method": "POST", "url": "/v1/responses", "body": {"model": "m",
        "input": [{"role": "user", "content": [{"type": "input_image", "image_url": data_url("image/png", &png(4, 4))}]}]}})
    .to_string();
    let answer = answered(BatchApi::OpenAi, &image, 1, &openai_options());
    assert_eq!(answer.outcome, Outcome::Refused);
    let message = report(&answer)["refusal"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("no request walk for /v1/responses"), "{message}");
    // A shape no walk knows, media only as a data: URL somewhere: refused all the same.
    let hidden = json!({"custom_id": "r3", "method": "POST", "url": "/v1/moderations", "body": {"model": "m",
        "input": [{"kind": "picture", "where": data_url("image/png", &png(4, 4))}]}})
    .to_string();
    assert_eq!(answered(BatchApi::OpenAi, &hidden, 1, &openai_options()).outcome, Outcome::Refused);
}

#[test]
fn lines_that_are_not_requests_are_refused_whole_with_words() {
    for (line, words) in [
        ("not json", "not an OpenAI Batch request"),
        ("[1,2]", "not a JSON object"),
        (r#"{"custom_id":"a","url":"/v1/chat/completions","body":{"messages":[]}} trailing"#, "column"),
        (r#"{"custom_id":"a","method":"GET","url":"/v1/chat/completions","body":{"messages":[]}}"#, "POST"),
        (r#"{"custom_id":"a","url":"/v1/chat/completions","body":{"messages":[]},"body":{}}"#, "twice"),
        (r#"{"custom_id":"a","body":{"messages":[]}}"#, "no \"url\""),
        (r#"{"custom_id":1,"url":"/v1/chat/completions","body":{"messages":[]}}"#, "not a string"),
        (r#"{"custom_id":"a","url":"/v1/chat/completions","body":"{}"}"#, "not an object"),
    ] {
        let answer = answered(BatchApi::OpenAi, line, 9, &openai_options());
        assert_eq!(answer.outcome, Outcome::Refused, "{line}");
        let message = report(&answer)["refusal"]["message"].as_str().unwrap().to_string();
        assert!(message.contains(words), "{line}: {message}");
    }
    // A body that is not a Chat request is the request walk's refusal, in its words.
    let line = r#"{"custom_id":"a","url":"/v1/chat/completions","body":{"model":"m"}}"#;
    let answer = answered(BatchApi::OpenAi, line, 1, &openai_options());
    assert_eq!(answer.outcome, Outcome::Refused);
    assert_eq!(answer.custom_id.as_deref(), Some("a"));
}

#[test]
fn file_rules_name_what_is_over() {
    assert!(check_batch_file(BatchApi::OpenAi, 50_000, 200_000_000).is_empty());
    let broken = check_batch_file(BatchApi::OpenAi, 50_001, 200_000_001);
    let names: Vec<&str> = broken.iter().map(|r| r.rule).collect();
    assert_eq!(names, ["openai.batch_requests", "openai.batch_file_bytes"]);
    assert!(broken[0].message.contains("50001 requests") && broken[0].message.contains("split"));
    let broken = check_batch_file(BatchApi::Anthropic, 100_001, 1);
    assert_eq!((broken.len(), broken[0].limit, broken[0].actual), (1, 100_000, 100_001));
    assert_eq!(check_batch_file(BatchApi::Anthropic, 1, 256_000_001)[0].rule, "anthropic.batch_bytes");
}

fn batch_item(custom_id: &str, image: &[u8]) -> Value {
    json!({"custom_id": custom_id, "params": {"model": "claude", "max_tokens": 10, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": STANDARD.encode(image)}}]}]}})
}

#[test]
fn a_message_batch_request_is_judged_item_by_item_and_spliced_back() {
    let good = png(8, 8);
    let text = format!(
        "{{ \"requests\" : [{}, {}, {}] }}",
        batch_item("a", &good),
        batch_item("b", SVG),
        batch_item("c", &encode(&gradient(9000, 20), image::ImageFormat::Png))
    );
    let a = admit_message_batch(&text, &Options::default()).unwrap();
    let paths: Vec<&str> = a.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["/requests/1/params/messages/0/content/1", "/requests/2/params/messages/0/content/1"]);
    assert!(a.changes[0].after.is_none() && a.changes[1].after.is_some());
    let request = a.request.unwrap();
    // Outside the changed blocks the text is the input's, spacing and all.
    assert!(request.starts_with(&format!("{{ \"requests\" : [{}, ", batch_item("a", &good))), "{request}");
    assert!(request.ends_with("}] }"));
    let out: Value = serde_json::from_str(&request).unwrap();
    assert_eq!(out["requests"][1]["params"]["messages"][0]["content"][1]["type"], "text");
    // Nothing to change: byte for byte.
    let text = json!({"requests": [batch_item("a", &good)]}).to_string();
    assert_eq!(admit_message_batch(&text, &Options::default()).unwrap().request, None);
}

#[test]
fn an_item_that_cannot_go_refuses_the_batch_in_its_words() {
    let text = json!({"requests": [batch_item("a", &png(8, 8)), {"custom_id": "b", "params": {"messages": "no"}}]});
    let r = admit_message_batch(&text.to_string(), &Options::default()).unwrap_err();
    assert!(r.unusable);
    assert!(r.message.starts_with("request 1 (\"b\") of the batch cannot go"), "{}", r.message);
    for (text, why) in [
        (r#"[]"#, "not a JSON object"),
        (r#"{"requests": {}}"#, "not a list"),
        (r#"{"requests": [], "requests": []}"#, "repeats"),
        (r#"{"params": {}}"#, "no `requests`"),
    ] {
        let r = admit_message_batch(text, &Options::default()).unwrap_err();
        assert!(r.unusable && r.message.contains(why), "{text}: {}", r.message);
    }
}
