use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::*;
use crate::Verify;
use crate::profile::Rule;
use crate::test_images::{encode, gradient, noise, png};

fn b64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

fn anthropic_image(bytes: &[u8]) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(bytes)}})
}

fn anthropic(content: Vec<Value>) -> String {
    json!({"model": "claude", "max_tokens": 10, "messages": [{"role": "user", "content": content}]}).to_string()
}

fn no_downsample() -> Options {
    Options { downsample: false, verify: Verify::Header, ..Options::default() }
}

fn admitted(v: RequestVerdict) -> AdmittedRequest {
    v.unwrap_or_else(|r| panic!("refused: {r:?}"))
}

fn request_value(a: &AdmittedRequest) -> Value {
    serde_json::from_str(a.request.as_deref().expect("changed")).unwrap()
}

#[test]
fn a_request_with_good_media_stands_byte_for_byte() {
    let text = anthropic(vec![json!({"type": "text", "text": "look"}), anthropic_image(&png(8, 8))]);
    let a = admitted(admit_request(Api::Anthropic, &text, &Options::default()));
    assert_eq!(a, AdmittedRequest { request: None, changes: vec![], conversions: vec![] });
    // No media at all, odd spacing kept.
    let text = r#"{ "messages" : [ {"role":"user","content":"hi"} ], "x": 1.50 }"#;
    assert_eq!(admitted(admit_request(Api::Anthropic, text, &Options::default())).request, None);
}

#[test]
fn refused_blocks_are_replaced_in_their_slots_wherever_they_sit() {
    let svg = b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>";
    let tool_result = json!({"type": "tool_result", "tool_use_id": "t1", "content": [anthropic_image(svg)]});
    let text = json!({"messages": [
        {"role": "user", "content": [{"type": "text", "text": "a"}, anthropic_image(svg)]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shot",
            "input": {"type": "image", "url": "not media, arguments"}}]},
        {"role": "user", "content": [tool_result]},
    ]})
    .to_string();
    let a = admitted(admit_request(Api::Anthropic, &text, &Options::default()));
    let paths: Vec<(&str, ChangeKind, Option<Reason>)> =
        a.changes.iter().map(|c| (c.path.as_str(), c.what, c.reason)).collect();
    assert_eq!(
        paths,
        vec![
            ("/messages/0/content/1", ChangeKind::Refused, Some(Reason::MagicMismatch)),
            ("/messages/2/content/0/content/0", ChangeKind::Refused, Some(Reason::MagicMismatch)),
        ]
    );
    let out = request_value(&a);
    assert_eq!(out["messages"][0]["content"][1]["type"], "text");
    assert!(out["messages"][0]["content"][1]["text"].as_str().unwrap().contains("in this request"));
    assert_eq!(out["messages"][2]["content"][0]["content"][0]["type"], "text");
    // The tool call's arguments are not media: kept as they were.
    assert_eq!(out["messages"][1]["content"][0]["input"], json!({"type": "image", "url": "not media, arguments"}));
}

#[test]
fn more_than_20_images_fit_2000_px_or_are_refused_naming_the_rule() {
    let wide = png(2500, 10);
    let many = |n: usize| {
        let mut content: Vec<Value> = (0..n).map(|_| anthropic_image(&png(8, 8))).collect();
        content.push(anthropic_image(&wide));
        anthropic(content)
    };
    // 20 images in all: 8000 px holds, a 2500 px side passes with downsampling off.
    let a = admitted(admit_request(Api::Anthropic, &many(19), &no_downsample()));
    assert!(a.changes.is_empty(), "{:?}", a.changes);
    // 21 images: refused in its slot, naming the rule.
    let a = admitted(admit_request(Api::Anthropic, &many(20), &no_downsample()));
    assert_eq!(a.changes.len(), 1);
    let c = &a.changes[0];
    assert_eq!((c.what, c.reason, c.limit), (ChangeKind::Refused, Some(Reason::DimensionsTooLarge), Some(2000)));
    assert_eq!(c.rule, Some("anthropic.many_images_max_side"));
    assert!(c.message.contains("more than 20 images"), "{}", c.message);
    // With downsampling on it is fitted instead, and the rule named.
    let a = admitted(admit_request(Api::Anthropic, &many(20), &Options::default()));
    let c = &a.changes[0];
    assert_eq!((c.what, c.rule), (ChangeKind::Downsampled, Some("anthropic.many_images_max_side")));
    assert_eq!(c.before.dimensions, Some(Dimensions { width: 2500, height: 10 }));
    assert_eq!(c.after.as_ref().unwrap().dimensions, Some(Dimensions { width: 2000, height: 8 }));
    // Fewer images: the gate's own ladder fits it; no request rule is named.
    let a = admitted(admit_request(Api::Anthropic, &many(3), &Options::default()));
    assert_eq!((a.changes[0].what, a.changes[0].rule), (ChangeKind::Downsampled, None));
}

#[test]
fn images_past_the_count_are_refused_in_their_slots() {
    let content: Vec<Value> = (0..102).map(|_| anthropic_image(&png(4, 4))).collect();
    let a = admitted(admit_request(Api::Anthropic, &anthropic(content), &Options::default()));
    let refused: Vec<(&str, Option<&str>, Option<Reason>)> =
        a.changes.iter().map(|c| (c.path.as_str(), c.rule, c.reason)).collect();
    let rule = Some("anthropic.images_per_request");
    assert_eq!(
        refused,
        vec![
            ("/messages/0/content/100", rule, Some(Reason::RequestLimit)),
            ("/messages/0/content/101", rule, Some(Reason::RequestLimit)),
        ]
    );
    let out = request_value(&a);
    assert_eq!(out["messages"][0]["content"][99]["type"], "image");
    assert!(out["messages"][0]["content"][100]["text"].as_str().unwrap().contains("at most 100 images"));
}

#[test]
fn a_request_over_32_mb_is_refused_whole_or_its_blocks_in_their_slots() {
    // Its text alone is over the cap: nothing can make it fit.
    let big = anthropic(vec![json!({"type": "text", "text": "x".repeat(32_000_000)})]);
    let r = admit_request(Api::Anthropic, &big, &Options::default()).unwrap_err();
    assert!(!r.unusable);
    assert_eq!((r.reason, r.rule, r.limit), (Reason::RequestLimit, Some("anthropic.request_bytes"), Some(32_000_000)));
    assert!(r.message.contains("32 MB"), "{}", r.message);

    // Its text fits, the image does not: the image is refused in its slot and the request fits.
    let photo = encode(&noise(300, 300), image::ImageFormat::Png);
    let filler = 32_000_000 - 100_000;
    let text = anthropic(vec![json!({"type": "text", "text": "x".repeat(filler)}), anthropic_image(&photo)]);
    assert!(text.len() > 32_000_000);
    let a = admitted(admit_request(Api::Anthropic, &text, &no_downsample()));
    assert_eq!(a.changes.len(), 1);
    assert_eq!((a.changes[0].reason, a.changes[0].rule), (Some(Reason::RequestLimit), Some("anthropic.request_bytes")));
    assert!(a.request.unwrap().len() <= 32_000_000);
}

static SMALL_OPENAI: RequestRules = RequestRules {
    api: Api::OpenAi,
    max_images: Some(Rule { name: "test.images", limit: 3, words: "three images" }),
    many_images: None,
    max_request_bytes: None,
    max_image_bytes: Some(Rule { name: "test.image_bytes", limit: 1000, words: "1000 image bytes" }),
};

fn openai_image(bytes: &[u8], mime: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{}", b64(bytes)), "detail": "high"}})
}

#[test]
fn openai_data_urls_are_admitted_in_place_and_byte_budgets_refuse_in_slots() {
    let small = png(4, 4);
    let big = encode(&gradient(40, 40), image::ImageFormat::Png);
    assert!(small.len() < 500 && big.len() > 1000);
    let text = json!({"model": "gpt", "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [openai_image(&small, "image/png"), openai_image(&big, "image/png"),
            openai_image(b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>", "image/png")]},
        {"role": "assistant", "content": null, "tool_calls": []},
    ]})
    .to_string();
    let a = admitted(admit_request_under(Api::OpenAi, &SMALL_OPENAI, &text, &Options::default()));
    let got: Vec<(&str, Option<Reason>, Option<&str>)> =
        a.changes.iter().map(|c| (c.path.as_str(), c.reason, c.rule)).collect();
    assert_eq!(
        got,
        vec![
            ("/messages/1/content/1", Some(Reason::RequestLimit), Some("test.image_bytes")),
            ("/messages/1/content/2", Some(Reason::MagicMismatch), None),
        ]
    );
    let out = request_value(&a);
    assert_eq!(out["messages"][1]["content"][0]["image_url"]["detail"], "high");
    assert_eq!(out["messages"][1]["content"][1]["type"], "text");
}

#[test]
fn what_is_not_a_request_of_the_api_is_unusable() {
    let cases = [
        ("not json", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        (r#"{"model": "m"}"#, "no `messages`"),
        (r#"{"messages": {}}"#, "not a list"),
        (r#"{"messages": [], "messages": []}"#, "repeats the key `messages`"),
        (r#"{"messages": [{"role": "system", "content": "x"}]}"#, "not a role"),
        (r#"{"messages": [{"role": "user"}]}"#, "no `content`"),
        (r#"{"messages": [{"role": "user", "content": 1}]}"#, "neither a string"),
        (r#"{"messages": [{"role": "user", "role": "user", "content": "x"}]}"#, "repeats the key `role`"),
    ];
    for (text, expected) in cases {
        let r = admit_request(Api::Anthropic, text, &Options::default()).unwrap_err();
        assert!(r.unusable, "{text}");
        assert!(r.message.contains(expected), "{text}: {}", r.message);
    }
    // A system message is an OpenAI request, not an Anthropic one.
    let openai = r#"{"messages": [{"role": "system", "content": "x"}, {"role": "assistant", "content": null}]}"#;
    assert!(admit_request(Api::OpenAi, openai, &Options::default()).is_ok());
}

#[test]
fn url_images_count_for_the_request_rules() {
    let url = json!({"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}});
    // 20 URL images and one 2500 px PNG: 21 images, so the 2000 px rule applies to the PNG.
    let mut content: Vec<Value> = (0..20).map(|_| url.clone()).collect();
    content.push(anthropic_image(&png(2500, 10)));
    let a = admitted(admit_request(Api::Anthropic, &anthropic(content), &no_downsample()));
    assert_eq!(a.changes.len(), 1, "{:?}", a.changes);
    assert_eq!(a.changes[0].rule, Some("anthropic.many_images_max_side"));
    // 100 URL images then a base64 one: the base64 one is image 101, refused in its slot.
    let mut content: Vec<Value> = (0..100).map(|_| url.clone()).collect();
    content.push(anthropic_image(&png(4, 4)));
    let a = admitted(admit_request(Api::Anthropic, &anthropic(content), &Options::default()));
    let got: Vec<_> = a.changes.iter().map(|c| (c.path.as_str(), c.rule)).collect();
    assert_eq!(got, vec![("/messages/0/content/100", Some("anthropic.images_per_request"))]);
    // 101 URL images: the last is refused in its slot; the request stays under the count.
    let content: Vec<Value> = (0..101).map(|_| url.clone()).collect();
    let a = admitted(admit_request(Api::Anthropic, &anthropic(content), &Options::default()));
    assert_eq!(a.changes.len(), 1);
    assert_eq!(request_value(&a)["messages"][0]["content"][100]["type"], "text");
    // OpenAI's image_url URLs count for its 500.
    let o = json!({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}});
    let text =
        json!({"messages": [{"role": "user", "content": (0..4).map(|_| o.clone()).collect::<Vec<_>>()}]}).to_string();
    let a = admitted(admit_request_under(Api::OpenAi, &SMALL_OPENAI, &text, &Options::default()));
    assert_eq!(a.changes.iter().map(|c| c.rule).collect::<Vec<_>>(), vec![Some("test.images")]);
}

#[test]
fn repeated_keys_and_disguised_data_urls_are_refused_in_a_request() {
    let svg = b64(b"<svg xmlns='http://www.w3.org/2000/svg'/>");
    let png = format!("data:image/png;base64,{}", b64(&png(8, 8)));
    let text = format!(
        r#"{{"messages":[{{"role":"user","content":[{{"type":"image_url","image_url":{{"url":"{png}","url":"data:image/png;base64,{svg}"}}}},{{"type":"image_url","image_url":{{"url":" \tDA\nTA:image/png;base64,{svg}"}}}}]}}]}}"#
    );
    let a = admitted(admit_request(Api::OpenAi, &text, &Options::default()));
    let got: Vec<_> = a.changes.iter().map(|c| (c.path.as_str(), c.reason)).collect();
    assert_eq!(
        got,
        vec![
            ("/messages/0/content/0", Some(Reason::Undecodable)),
            ("/messages/0/content/1", Some(Reason::MagicMismatch)),
        ]
    );
    assert!(!a.request.unwrap().contains(&svg));
}

#[test]
fn an_image_labelled_as_another_image_type_is_relabelled_and_the_change_says_so() {
    let jpeg = encode(&gradient(8, 8), image::ImageFormat::Jpeg);
    let text = json!({"model": "gpt", "messages": [{"role": "user", "content": [
        openai_image(&jpeg, "image/png"), openai_image(&png(4, 4), "image/jpg"),
    ]}]})
    .to_string();
    let a = admitted(admit_request(Api::OpenAi, &text, &no_downsample()));
    let out = request_value(&a);
    let url = out["messages"][0]["content"][0]["image_url"]["url"].as_str().unwrap();
    assert!(url.starts_with("data:image/jpeg;base64,"), "{url:.40}");
    let change = &a.changes[0];
    assert_eq!((change.path.as_str(), change.what), ("/messages/0/content/0", ChangeKind::Normalized));
    assert_eq!(change.message, "relabelled: the bytes are image/jpeg, not image/png");
    assert_eq!(
        (change.before.mime.as_deref(), change.after.as_ref().and_then(|f| f.mime.as_deref())),
        (Some("image/png"), Some("image/jpeg"))
    );
    // A PNG labelled `image/jpg` is relabelled too; `image/jpg` for a JPEG would only be respelt.
    assert_eq!(a.changes[1].message, "relabelled: the bytes are image/png, not image/jpg");
}

#[test]
fn audio_goes_to_the_provider_as_it_is() {
    let text = json!({"model": "gpt-4o-audio-preview", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is said?"},
        {"type": "input_audio", "input_audio": {"data": "UklGRiQAAABXQVZFZm10IBAAAAABAAEA", "format": "wav"}},
    ]}]})
    .to_string();
    let a = admitted(admit_request(Api::OpenAi, &text, &Options::default()));
    assert_eq!(a, AdmittedRequest { request: None, changes: vec![], conversions: vec![] });
}

#[test]
fn media_outside_the_known_shapes_is_judged_wherever_the_provider_may_read_it() {
    let svg = b64(b"<svg xmlns='http://www.w3.org/2000/svg'/>");
    let good = b64(&png(8, 8));
    // Ollama's OpenAI-compatible messages carry bare base64 in `images`.
    let text = json!({"model": "llava", "metadata": {"preview": format!("data:image/png;base64,{svg}")},
    "messages": [
        {"role": "user", "content": "what is this?", "images": [good, svg]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n",
            "input": {"arg": format!("data:image/png;base64,{svg}")}}]},
    ]})
    .to_string();
    let a = admitted(admit_request(Api::OpenAi, &text, &Options::default()));
    let got: Vec<_> = a.changes.iter().map(|c| (c.path.as_str(), c.block_type.as_str(), c.reason)).collect();
    assert_eq!(
        got,
        vec![
            ("/messages/0/images/1", "base64", Some(Reason::MimeUnsupported)),
            ("/metadata/preview", "data_url", Some(Reason::MagicMismatch)),
        ]
    );
    let out = request_value(&a);
    assert_eq!(out["messages"][0]["images"][0], good);
    assert!(out["messages"][0]["images"][1].as_str().unwrap().starts_with("[mediagate] The base64 (image/svg+xml)"));
    assert_eq!(
        out["messages"][1]["content"][0]["input"]["arg"],
        format!("data:image/png;base64,{svg}"),
        "the arguments of an earlier call are text to the model"
    );
}

#[test]
fn a_responses_computer_use_screenshot_is_judged_as_an_image_of_the_request() {
    // The Responses request as the SDK wrappers hand it over: the body as one block of one message.
    let svg = b64(b"<svg xmlns='http://www.w3.org/2000/svg'/>");
    let body = json!({"model": "computer-use-preview", "input": [
        {"type": "computer_call_output", "call_id": "c1",
         "output": {"type": "computer_screenshot", "image_url": format!("data:image/png;base64,{svg}")}},
        {"role": "user", "content": [{"type": "input_image", "image_url": format!("data:image/png;base64,{}", b64(&png(2, 2)))}]},
    ]});
    let (prefix, suffix) = (responses_envelope::PREFIX, responses_envelope::SUFFIX);
    let text = format!("{prefix}{body}{suffix}");
    let a = admitted(admit_request(Api::OpenAi, &text, &Options::default()));
    let got: Vec<_> = a.changes.iter().map(|c| (c.path.as_str(), c.reason)).collect();
    let screenshot = format!("{}/input/0/output", responses_envelope::POINTER);
    assert_eq!(got, vec![(screenshot.as_str(), Some(Reason::MagicMismatch))]);
    let out = a.request.unwrap();
    let cut: Value = serde_json::from_str(&out[prefix.len()..out.len() - suffix.len()]).unwrap();
    assert_eq!(cut["input"][0]["output"]["type"], "input_text");
    assert_eq!(cut["input"][1], body["input"][1]);
}

fn gemini_part(mime: &str, bytes: &[u8]) -> Value {
    json!({"inline_data": {"mime_type": mime, "data": b64(bytes)}})
}

#[test]
fn a_gemini_request_is_judged_in_its_contents_and_system_instruction() {
    let svg = b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>";
    let text = json!({
        "systemInstruction": {"parts": [{"inlineData": {"mimeType": "image/png", "data": b64(svg)}}]},
        "contents": [
            {"role": "user", "parts": [{"text": "look"}, gemini_part("image/png", &png(8, 8)), gemini_part("image/png", svg)]},
            {"role": "model", "parts": [{"functionCall": {"name": "shot", "args": {"inline_data": {"mime_type": "image/png", "data": b64(svg)}}}}]},
        ],
        "generationConfig": {"temperature": null}
    })
    .to_string()
    // A number no float holds, as a client may send it: the text keeps it.
    .replace("null}", "1e400}");
    let a = admitted(admit_request(Api::Gemini, &text, &Options::default()));
    let paths: Vec<(&str, ChangeKind)> = a.changes.iter().map(|c| (c.path.as_str(), c.what)).collect();
    assert_eq!(
        paths,
        vec![("/contents/0/parts/2", ChangeKind::Refused), ("/systemInstruction/parts/0", ChangeKind::Refused)]
    );
    let request = a.request.unwrap();
    assert!(request.contains(r#""generationConfig":{"temperature":1e400}"#), "{request}");
    let out: Value = serde_json::from_str(&request.replace("1e400", "1")).unwrap();
    assert!(out["contents"][0]["parts"][2]["text"].as_str().unwrap().contains("in this request"));
    // A good part stands; the call's arguments are not media.
    assert_eq!(out["contents"][0]["parts"][1], gemini_part("image/png", &png(8, 8)));
    assert_eq!(out["contents"][1]["parts"][0]["functionCall"]["args"]["inline_data"]["data"], b64(svg));
    // Under the Gemini profile (the API's own, which the bindings give by default): no GIF.
    let gif = encode(&gradient(8, 8), image::ImageFormat::Gif);
    let text = json!({"contents": [{"parts": [gemini_part("image/gif", &gif)]}]}).to_string();
    let gemini = Options { provider: Api::Gemini.provider(), ..Options::default() };
    let a = admitted(admit_request(Api::Gemini, &text, &gemini));
    assert_eq!(a.changes.len(), 1, "{:?}", a.changes);
}

#[test]
fn a_gemini_request_needs_contents_of_parts() {
    for (text, why) in [
        (r#"{"messages": []}"#, "no `contents`"),
        (r#"{"contents": {}}"#, "not a list"),
        (r#"{"contents": [{"role": "user"}]}"#, "no `parts`"),
        (r#"{"contents": [], "contents": []}"#, "repeats"),
    ] {
        let r = admit_request(Api::Gemini, text, &Options::default()).unwrap_err();
        assert!(r.unusable && r.message.contains(why), "{text}: {}", r.message);
        assert!(r.message.contains("Gemini generateContent"), "{}", r.message);
    }
    // countTokens may carry the request whole.
    let text = json!({"generateContentRequest": {"model": "models/m", "contents": [{"parts": [{"text": "hi"}]}]}});
    assert_eq!(admitted(admit_request(Api::Gemini, &text.to_string(), &Options::default())).request, None);
}

#[test]
fn a_gemini_request_over_20_mb_of_text_is_refused_whole() {
    let text = json!({"contents": [{"parts": [{"text": "a".repeat(20_000_001)}]}]}).to_string();
    let r = admit_request(Api::Gemini, &text, &Options::default()).unwrap_err();
    assert_eq!((r.unusable, r.rule), (false, Some("gemini.request_bytes")));
}

#[test]
fn an_admitted_request_admitted_again_is_no_change() {
    // What a gate before the call wrote, judged again at the wire: nothing left to change, so no
    // change is reported (a report of a change with no request written cannot be sent).
    for (api, image) in [
        (Api::OpenAi, openai_image(&encode(&noise(2600, 1700), image::ImageFormat::Png), "image/png")),
        (Api::Anthropic, anthropic_image(&encode(&noise(2600, 1700), image::ImageFormat::Png))),
    ] {
        let text = json!({"messages": [{"role": "user", "content": [image]}]}).to_string();
        let options = Options { provider: api.provider(), ..Options::default() };
        let once = admitted(admit_request(api, &text, &options));
        assert!(!once.changes.is_empty(), "{:?}", once.changes);
        let again = admitted(admit_request(api, once.request.as_deref().unwrap(), &options));
        assert_eq!(again, AdmittedRequest { request: None, changes: vec![], conversions: vec![] }, "{api:?}");
    }
}

#[test]
fn a_body_of_no_known_dialect_has_its_media_judged_wherever_they_sit() {
    let svg = b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>";
    let good = png(8, 8);
    let text = json!({
        "input": [{"content": [anthropic_image(svg)]}],
        "images": [b64(&good), b64(svg)],
        "tool": {"input": {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(svg)}}},
        "prompt": "text stays",
    })
    .to_string();
    let a = admitted(admit_request(Api::Other, &text, &Options::default()));
    let mut paths: Vec<&str> = a.changes.iter().map(|c| c.path.as_str()).collect();
    paths.sort();
    // Nothing is ruled out where a shape is unknown: an `input` is not a `tool_use` input here.
    assert_eq!(paths, ["/images/1", "/input/0/content/0", "/tool/input"], "{:?}", a.changes);
    let out = request_value(&a);
    assert_eq!(out["images"][0], b64(&good));
    assert_eq!(out["prompt"], "text stays");
    // No request rule: more images than any API takes pass.
    let many: Vec<String> = (0..600).map(|_| b64(&good)).collect();
    let text = json!({"images": many}).to_string();
    assert_eq!(admitted(admit_request(Api::Other, &text, &Options::default())).request, None);
    // Any JSON, not only an object; text that is not JSON is unusable.
    assert_eq!(admitted(admit_request(Api::Other, "[1, \"a\"]", &Options::default())).request, None);
    assert!(admit_request(Api::Other, "{", &Options::default()).unwrap_err().unusable);
}

#[test]
fn a_repaired_image_reaches_the_model_with_its_note_and_the_change_says_so() {
    let cut = crate::test_images::cut_png(64, 64);
    let text = anthropic(vec![anthropic_image(&cut), json!({"type": "text", "text": "what is this?"})]);
    let a = admitted(admit_request(Api::Anthropic, &text, &Options::default()));
    let out = request_value(&a);
    let content = out["messages"][0]["content"].as_array().unwrap();
    assert_eq!(content.len(), 3, "{out}");
    assert_eq!(content[1]["type"], "text");
    let note = content[1]["text"].as_str().unwrap();
    assert!(note.starts_with("[mediagate] The image (image/png) in this request was repaired"), "{note}");
    assert_eq!(content[2]["text"], "what is this?");
    assert_eq!(a.changes.len(), 1);
    assert!(
        a.changes[0].message.contains("repaired, and the model is told: the file was cut short"),
        "{:?}",
        a.changes
    );

    // A Gemini part gets a text part beside it.
    let text = json!({"contents": [{"parts": [gemini_part("image/png", &cut)]}]}).to_string();
    let out = request_value(&admitted(admit_request(Api::Gemini, &text, &Options::default())));
    let parts = out["contents"][0]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2, "{out}");
    assert!(parts[1]["text"].as_str().unwrap().contains("was repaired"), "{out}");
}
