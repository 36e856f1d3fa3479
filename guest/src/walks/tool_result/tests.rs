use serde_json::{Value, json};

use super::*;
use crate::test_images::{encode, gradient, noise, png};

fn b64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

fn admit_text(text: &str) -> ToolResultAdmission {
    admit_tool_result("screenshot", text, &Options::default())
}

fn admit(json: &Value) -> (Option<Value>, Vec<RefusedBlock>) {
    let a = admit_text(&json.to_string());
    (a.content.map(|c| serde_json::from_str(&c).unwrap()), a.refused)
}

fn svg_as_png() -> Value {
    json!({"type": "image", "data": b64(b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>"), "mimeType": "image/png"})
}

#[test]
fn content_without_media_stands_as_it_is() {
    let (content, refused) = admit(&json!([{"type": "text", "text": "hello"}]));
    assert_eq!((content, refused.len()), (None, 0));
    let (content, _) =
        admit(&json!({"type": "resource", "resource": {"uri": "x", "text": "t", "mimeType": "text/plain"}}));
    assert_eq!(content, None);
    assert_eq!(admit_text("\"just a string\"").content, None);
    assert_eq!(admit_text(r#"[{"type":"resource_link","uri":"file:///a.png","mimeType":"image/png"}]"#).content, None);
}

#[test]
fn what_cannot_be_read_is_refused_whole() {
    let deep = format!("{}{}{}", "[".repeat(200), svg_as_png(), "]".repeat(200));
    for bad in ["not json {", "[1,]", "", &deep] {
        let a = admit_text(bad);
        let content: Value = serde_json::from_str(a.content.as_deref().unwrap()).unwrap();
        assert_eq!(content.as_array().unwrap().len(), 1, "{bad:.40}");
        assert_eq!(content[0]["type"], "text");
        assert!(content[0]["text"].as_str().unwrap().contains("not JSON the gate can read"), "{content}");
        assert_eq!(a.refused.len(), 1);
        assert_eq!((a.refused[0].reason, a.refused[0].path.as_str()), (Reason::Undecodable, ""));
        assert_eq!(a.refused[0].block_type, "content");
    }
}

#[test]
fn what_json_allows_is_read_and_the_rest_kept_byte_for_byte() {
    // A lone surrogate, a number past f64, a huge integer, odd spacing and key order: all JSON.
    let text = format!(
        r#"{{ "z": 1e400, "content": [ {{"type":"text", "text":"\ud800 broken"}}, {}, {{"n": 123456789012345678901234567890 }} ], "a": 1.50 }}"#,
        svg_as_png()
    );
    let a = admit_text(&text);
    assert_eq!(a.refused.len(), 1);
    assert_eq!(
        (a.refused[0].reason, a.refused[0].path.as_str(), a.refused[0].index),
        (Reason::MagicMismatch, "/content/1", 1)
    );
    let out = a.content.unwrap();
    assert!(
        out.starts_with(r#"{ "z": 1e400, "content": [ {"type":"text", "text":"\ud800 broken"}, {"text":"#),
        "{out}"
    );
    assert!(out.ends_with(r#"}, {"n": 123456789012345678901234567890 } ], "a": 1.50 }"#), "{out}");
}

#[test]
fn mcp_blocks_one_good_one_bad() {
    let good = png(8, 8);
    let input = json!([
        {"type": "text", "text": "before"},
        {"type": "image", "data": b64(&good), "mimeType": "image/png"},
        {"type": "image", "data": b64(b"<svg/>"), "mimeType": "image/png"},
    ]);
    let (content, refused) = admit(&input);
    let content = content.unwrap();
    let blocks = content.as_array().unwrap();
    assert_eq!(blocks.len(), 3, "every slot keeps a block");
    assert_eq!(blocks[0], input[0]);
    assert_eq!(blocks[1]["data"], b64(&good));
    assert_eq!(blocks[1]["mimeType"], "image/png");
    assert_eq!(blocks[2]["type"], "text");
    let text = blocks[2]["text"].as_str().unwrap();
    assert!(text.contains("\"screenshot\"") && text.contains("magic_mismatch") && text.contains("6 bytes"), "{text}");
    assert!(!text.contains(&b64(b"<svg/>")), "never the bytes");
    assert_eq!(
        refused,
        vec![RefusedBlock {
            index: 2,
            path: "/2".into(),
            block_type: "image".into(),
            mime: Some("image/png".into()),
            reason: Reason::MagicMismatch,
            raw_bytes: 6,
            limit: None
        }]
    );
}

#[test]
fn anthropic_blocks_one_good_one_bad() {
    let good = png(8, 8);
    let jpeg = encode(&gradient(8, 8), image::ImageFormat::Jpeg);
    let input = json!([
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpg", "data": b64(&jpeg)}, "cache_control": {"type": "ephemeral"}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(b"not a pdf")}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(&good)}},
    ]);
    let (content, refused) = admit(&input);
    let blocks = content.unwrap();
    assert_eq!(blocks[0]["source"]["media_type"], "image/jpeg", "rebuilt with the canonical type");
    assert_eq!(blocks[0]["cache_control"]["type"], "ephemeral", "other fields are kept");
    assert_eq!(blocks[1]["type"], "text");
    assert_eq!(blocks[2]["source"]["data"], b64(&good));
    assert_eq!(refused.len(), 1);
    assert_eq!((refused[0].index, refused[0].reason), (1, Reason::MagicMismatch));
}

#[test]
fn blocks_without_bytes_stand() {
    for block in [
        json!({"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}),
        json!({"type": "document", "source": {"type": "file", "file_id": "file_123"}}),
        json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain"}}),
        json!({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}),
        json!({"type": "input_image", "file_id": "file_123"}),
    ] {
        let (content, refused) = admit(&json!([block]));
        assert_eq!((content, refused.len()), (None, 0), "{block}");
    }
}

#[test]
fn an_mcp_block_is_checked_whatever_its_source_field_says() {
    for source in [json!(null), json!("x"), json!({"type": "url", "url": "https://example.com/a.png"}), json!(7)] {
        let mut block = svg_as_png();
        block["source"] = source.clone();
        let (content, refused) = admit(&json!([block]));
        assert_eq!(refused.len(), 1, "source {source}");
        assert_eq!(refused[0].reason, Reason::MagicMismatch, "source {source}");
        assert_eq!(content.unwrap()[0]["type"], "text");
    }
    // Bytes in both places: which one a client sends is not defined.
    let mut both = svg_as_png();
    both["source"] = json!({"type": "base64", "media_type": "image/png", "data": b64(&png(4, 4))});
    let (_, refused) = admit(&json!([both]));
    assert_eq!(refused[0].reason, Reason::Undecodable);
}

#[test]
fn sources_the_gate_cannot_check_are_refused() {
    for source in
        [json!(null), json!("x"), json!({"type": "sideways", "data": "AAAA"}), json!({"media_type": "image/png"})]
    {
        let (_, refused) = admit(&json!([{"type": "image", "source": source}]));
        assert_eq!(refused.len(), 1, "source {source}");
        assert_eq!(refused[0].reason, Reason::Undecodable, "source {source}");
    }
}

#[test]
fn undecodable_blocks_are_replaced() {
    let input = json!([
        {"type": "image", "data": "!!!not base64!!!", "mimeType": "image/png"},
        {"type": "image", "mimeType": "image/png"},
        {"type": "image", "data": 42, "mimeType": "image/png"},
    ]);
    let (content, refused) = admit(&input);
    assert!(content.unwrap().as_array().unwrap().iter().all(|b| b["type"] == "text"));
    assert!(refused.iter().all(|r| r.reason == Reason::Undecodable && r.raw_bytes == 0));
    assert_eq!(refused.len(), 3);
}

#[test]
fn embedded_resources_and_object_results() {
    let good = png(8, 8);
    let input = json!({"content": [
        {"type": "resource", "resource": {"uri": "file:///a.png", "mimeType": "image/png", "blob": b64(&good)}},
        {"type": "resource", "resource": {"uri": "file:///a.zip", "mimeType": "application/zip", "blob": b64(b"PK\x03\x04")}},
    ], "isError": false});
    let (content, refused) = admit(&input);
    let content = content.unwrap();
    assert_eq!(content["isError"], false, "the result object keeps its other fields");
    assert_eq!(content["content"][0]["resource"]["blob"], b64(&good));
    assert_eq!(content["content"][1]["type"], "text");
    assert_eq!((refused[0].index, refused[0].reason), (1, Reason::MimeUnsupported));
}

#[test]
fn a_single_block_comes_back_as_a_single_block() {
    let input = json!({"type": "image", "data": b64(b"<svg/>"), "mimeType": "image/webp"});
    let (content, refused) = admit(&input);
    assert_eq!(content.unwrap()["type"], "text");
    assert_eq!(refused[0].reason, Reason::MagicMismatch);
    assert_eq!(refused[0].path, "");
}

#[test]
fn media_is_found_wherever_it_sits() {
    let bad = svg_as_png();
    let anthropic_bad =
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(b"<svg/>")}});
    let cases = [
        // An Anthropic tool_result block holding content.
        (json!([{"type": "tool_result", "tool_use_id": "t1", "content": [anthropic_bad.clone()]}]), "/0/content/0"),
        // A whole JSON-RPC response envelope.
        (
            json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [bad.clone()], "isError": false}}),
            "/result/content/0",
        ),
        // structuredContent.
        (json!({"content": [], "structuredContent": {"shots": [bad.clone()]}}), "/structuredContent/shots/0"),
        // {"content": {one block}}.
        (json!({"content": bad.clone()}), "/content"),
        // Types in another case.
        (
            json!([{"type": "Image", "source": {"type": "Base64", "media_type": "image/png", "data": b64(b"<svg/>")}}]),
            "/0",
        ),
    ];
    for (input, path) in cases {
        let (content, refused) = admit(&input);
        assert_eq!(refused.len(), 1, "{input}");
        assert_eq!((refused[0].path.as_str(), refused[0].reason), (path, Reason::MagicMismatch), "{input}");
        assert!(!content.unwrap().to_string().contains(&b64(b"<svg/>")), "{input}");
    }
}

#[test]
fn a_base64_source_in_another_case_is_written_back_canonical() {
    let good = png(8, 8);
    let input = json!([{"type": "image", "source": {"type": "BASE64", "media_type": "IMAGE/PNG", "data": b64(&good)}}]);
    let (content, refused) = admit(&input);
    assert!(refused.is_empty());
    let source = &content.unwrap()[0]["source"];
    assert_eq!((source["type"].as_str(), source["media_type"].as_str()), (Some("base64"), Some("image/png")));
}

#[test]
fn openai_data_urls_are_gated() {
    let good = png(8, 8);
    let input = json!([
        {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", b64(&good)), "detail": "high"}},
        {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", b64(b"<svg/>"))}},
        {"type": "input_image", "image_url": format!("data:image/jpeg;base64,{}", b64(b"<html>"))},
        {"type": "input_file", "filename": "a.pdf", "file_data": format!("data:application/pdf;base64,{}", b64(&crate::test_images::pdf(0)))},
        {"type": "image_url", "image_url": {"url": "data:image/png,notbase64"}},
    ]);
    let (content, refused) = admit(&input);
    let content = content.unwrap();
    assert_eq!(content[0]["image_url"]["url"], format!("data:image/png;base64,{}", b64(&good)));
    assert_eq!(content[0]["image_url"]["detail"], "high");
    assert_eq!(content[1]["type"], "text");
    assert_eq!(content[2]["type"], "input_text", "the Responses API's own text type");
    assert_eq!(content[3]["file_data"], format!("data:application/pdf;base64,{}", b64(&crate::test_images::pdf(0))));
    let reasons: Vec<_> = refused.iter().map(|r| (r.index, r.reason)).collect();
    assert_eq!(reasons, vec![(1, Reason::MagicMismatch), (2, Reason::MagicMismatch), (4, Reason::Undecodable)]);
}

#[test]
fn a_block_whose_keys_repeat_is_refused() {
    let good = b64(&png(8, 8));
    let cases = [
        format!(r#"[{{"type":"image","data":"{good}","data":"PHN2Zy8+","mimeType":"image/png"}}]"#),
        format!(r#"[{{"type":"text","type":"image","data":"{good}","mimeType":"image/png"}}]"#),
        format!(
            r#"[{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{good}","data":"PHN2Zy8+"}}}}]"#
        ),
    ];
    for text in cases {
        let a = admit_text(&text);
        assert_eq!(a.refused.len(), 1, "{text}");
        assert_eq!(a.refused[0].reason, Reason::Undecodable, "{text}");
        assert!(!a.content.unwrap().contains("PHN2Zy8+"), "{text}");
    }
    // Repeated keys outside any block do not hide a block: both values are walked.
    let text = r#"{"content":[{"type":"image","data":"PHN2Zy8+","mimeType":"image/png"}],"content":[]}"#.to_string();
    assert_eq!(admit_text(&text).refused.len(), 1);
}

#[test]
fn a_media_block_inside_another_is_refused_whole() {
    let mut outer = json!({"type": "image", "data": b64(&png(8, 8)), "mimeType": "image/png"});
    outer["extra"] = svg_as_png();
    let (content, refused) = admit(&json!([outer]));
    assert_eq!(refused.len(), 1);
    assert_eq!((refused[0].path.as_str(), refused[0].reason), ("/0", Reason::Undecodable));
    assert_eq!(content.unwrap()[0]["type"], "text");
}

#[test]
fn one_bad_block_never_sinks_its_neighbours() {
    let good = png(8, 8);
    // A zlib bomb in iCCP, a PNG cut before any row arrived and a 16-bit 7071² PNG header between
    // two good blocks.
    let cut = crate::test_images::png_header_only_with(64, 64, 8, 2);
    let sixteen_bit = crate::test_images::png_header_only_with(7071, 7071, 16, 6);
    let bomb = {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&vec![0u8; 64 << 20]).unwrap();
        let mut data = b"icc\0\0".to_vec();
        data.extend_from_slice(&z.finish().unwrap());
        crate::test_images::png_with_chunk_after_ihdr(b"iCCP", &data)
    };
    let input = json!([
        {"type": "image", "data": b64(&bomb), "mimeType": "image/png"},
        {"type": "image", "data": b64(&good), "mimeType": "image/png"},
        {"type": "image", "data": b64(&cut), "mimeType": "image/png"},
        {"type": "image", "data": b64(&sixteen_bit), "mimeType": "image/png"},
        {"type": "image", "data": b64(&good), "mimeType": "image/png"},
    ]);
    let (content, refused) = admit(&input);
    let content = content.unwrap();
    assert_eq!(content[1]["data"], b64(&good));
    assert_eq!(content[4]["data"], b64(&good));
    let reasons: Vec<_> = refused.iter().map(|r| (r.index, r.reason)).collect();
    assert_eq!(reasons, vec![(0, Reason::Undecodable), (2, Reason::Undecodable), (3, Reason::DimensionsTooLarge)]);
}

#[test]
fn the_whole_result_has_a_base64_budget() {
    // Incompressible 3 MB PNGs: each passes alone; together they would carry ~40 MB of base64.
    let big = encode(&noise(1000, 750), image::ImageFormat::Png);
    assert!(big.len() > 2_000_000);
    let blocks: Vec<Value> =
        (0..10).map(|_| json!({"type": "image", "data": b64(&big), "mimeType": "image/png"})).collect();
    let options = Options { verify: crate::Verify::Header, ..Options::default() };
    let a = admit_tool_result("t", &Value::Array(blocks).to_string(), &options);
    let content: Value = serde_json::from_str(&a.content.unwrap()).unwrap();
    let admitted = content.as_array().unwrap().iter().filter(|b| b["type"] == "image").count();
    let carried: u64 =
        content.as_array().unwrap().iter().filter_map(|b| b["data"].as_str()).map(|d| d.len() as u64).sum();
    assert!(admitted >= 1 && carried <= TOOL_RESULT_BASE64_BUDGET, "{admitted} blocks, {carried} bytes");
    assert_eq!(a.refused.len(), 10 - admitted);
    assert!(a.refused.iter().all(|r| r.reason == Reason::Base64TooLarge && r.limit == Some(TOOL_RESULT_BASE64_BUDGET)));
}

#[test]
fn the_whole_result_has_a_decoding_budget() {
    // Each block declares 40 MP; the decoding budget covers six of them.
    let header = crate::test_images::png_header_only_with(8000, 5000, 8, 0);
    let blocks: Vec<Value> =
        (0..8).map(|_| json!({"type": "image", "data": b64(&header), "mimeType": "image/png"})).collect();
    let a = admit_text(&Value::Array(blocks).to_string());
    let over_budget = a.refused.iter().filter(|r| r.reason == Reason::DimensionsTooLarge).count();
    assert_eq!(a.refused.len(), 8, "header-only PNGs have no pixels to show");
    assert_eq!(over_budget, 8 - (TOOL_RESULT_PIXEL_BUDGET / 40_000_000) as usize);
}

#[test]
fn a_result_over_the_read_cap_is_refused_whole() {
    let text = format!("[\"{}\"]", "a".repeat(TOOL_RESULT_MAX_BYTES as usize));
    let a = admit_text(&text);
    assert_eq!(a.refused[0].reason, Reason::RawTooLarge);
    assert_eq!(a.refused[0].limit, Some(TOOL_RESULT_MAX_BYTES));
}

#[test]
fn line_wrapped_base64_is_accepted() {
    let good = png(8, 8);
    let wrapped: String =
        b64(&good).as_bytes().chunks(20).map(|c| format!("{}\n", std::str::from_utf8(c).unwrap())).collect();
    let (content, refused) = admit(&json!([{"type": "image", "data": wrapped, "mimeType": "image/png"}]));
    assert!(refused.is_empty());
    assert_eq!(content.unwrap()[0]["data"], b64(&good));
}

#[test]
fn the_placeholder_names_the_unit_of_every_limit() {
    use crate::verdict::{Reason, Refusal, Unit};
    let words = |r: Refusal| super::limit_words(&r);
    assert_eq!(words(Refusal::new(Reason::RawTooLarge, 9, Some(5), "")), ", limit 5 bytes");
    assert_eq!(words(Refusal::new(Reason::Base64TooLarge, 9, Some(5), "")), ", limit 5 base64 bytes");
    assert_eq!(words(Refusal::new(Reason::DimensionsTooLarge, 9, Some(5), "")), ", limit 5 pixels");
    let side = Refusal::new(Reason::DimensionsTooLarge, 9, Some(8000), "").in_unit(Unit::PixelsPerSide);
    assert_eq!(words(side), ", limit 8000 px per side");
    assert_eq!(words(Refusal::new(Reason::RequestLimit, 9, Some(5), "")), ", limit 5 bytes");
    let count = Refusal::new(Reason::RequestLimit, 0, Some(100), "").in_unit(Unit::Images);
    assert_eq!(words(count), ", limit 100 images");
    assert_eq!(words(Refusal::new(Reason::Undecodable, 9, None, "")), "");
    // End to end: an 8001-px-wide PNG with downsampling off is refused for its side, in px per side.
    let wide = png(8001, 1);
    let content = json!([{"type": "image", "data": b64(&wide), "mimeType": "image/png"}]).to_string();
    let options = crate::Options { downsample: false, verify: crate::Verify::Header, ..crate::Options::default() };
    let a = admit_tool_result("t", &content, &options);
    let text = a.content.unwrap();
    assert!(text.contains("dimensions_too_large") && text.contains("limit 8000 px per side"), "{text}");
    assert!(!text.contains("8000 bytes"), "{text}");
}

#[test]
fn a_holder_whose_keys_repeat_is_refused_in_its_slot() {
    // Every JSON parser in use reads the last copy of a repeated key: the gate must not check the
    // first and pass the block. Each holder the walk reads, each key it reads there.
    let png = format!("data:image/png;base64,{}", b64(&png(8, 8)));
    let svg = format!("data:image/png;base64,{}", b64(b"<svg xmlns='http://www.w3.org/2000/svg'/>"));
    let raw_svg = b64(b"<svg/>");
    let pdf = format!("data:application/pdf;base64,{}", b64(&crate::test_images::pdf(0)));
    let cases = [
        format!(r#"[{{"type":"image_url","image_url":{{"url":"{png}","url":"{svg}"}}}}]"#),
        format!(r#"[{{"type":"image_url","image_url":{{"url":"{png}","detail":"low","\u0075rl":"{svg}"}}}}]"#),
        format!(r#"[{{"type":"image_url","image_url":{{"url":"{png}"}},"image_url":{{"url":"{svg}"}}}}]"#),
        format!(r#"[{{"type":"file","file":{{"file_data":"{pdf}","file_data":"{svg}"}}}}]"#),
        format!(r#"[{{"type":"file","file":{{"filename":"a.pdf","filename":"b.pdf","file_data":"{pdf}"}}}}]"#),
        format!(r#"[{{"type":"input_file","file_data":"{pdf}","file_data":"{svg}"}}]"#),
        format!(r#"[{{"type":"input_image","image_url":"{png}","image_url":"{svg}"}}]"#),
        format!(r#"[{{"type":"image","source":{{"type":"url","url":"{png}","url":"{svg}"}}}}]"#),
        format!(
            r#"[{{"type":"image","source":{{"type":"base64","media_type":"image/png","media_type":"image/svg+xml","data":"{raw_svg}"}}}}]"#
        ),
        format!(
            r#"[{{"type":"resource","resource":{{"uri":"a","mimeType":"image/png","blob":"{raw_svg}","blob":"{raw_svg}"}}}}]"#
        ),
        format!(r#"[{{"type":"image","mimeType":"image/png","mimeType":"image/svg+xml","data":"{raw_svg}"}}]"#),
    ];
    for text in cases {
        let a = admit_text(&text);
        assert_eq!(a.refused.len(), 1, "{text:.120}");
        assert_eq!(a.refused[0].reason, Reason::Undecodable, "{text:.120}");
        let content: Value = serde_json::from_str(a.content.as_deref().unwrap()).unwrap();
        let words = content[0]["text"].as_str().unwrap();
        assert!(words.contains("repeats the key"), "{words}");
        assert!(!a.content.unwrap().contains("base64,"), "{text:.120}");
    }
}

#[test]
fn data_urls_are_read_as_a_url_parser_reads_them() {
    // Each variant is a data: URL to a WHATWG URL parser: the SVG inside must be refused.
    let svg = b64(b"<svg xmlns='http://www.w3.org/2000/svg'/>");
    let variants = [
        format!("data:image/png;base64,{svg}"),
        format!("  data:image/png;base64,{svg}"),
        format!("\\tdata:image/png;base64,{svg}"),
        format!("\\u0000data:image/png;base64,{svg}"),
        format!("\\u001f\\u0001data:image/png;base64,{svg}\\u0000 "),
        format!("da\\tta:image/png;base64,{svg}"),
        format!("dat\\ra:image/png;base64,{svg}"),
        format!("d\\na\\r\\nta:image/png;base64,{svg}"),
        format!("DATA:image/png;base64,{svg}"),
        format!("DaTa:image/png;BASE64,{svg}"),
    ];
    for url in &variants {
        for block in [
            format!(r#"{{"type":"image_url","image_url":{{"url":"{url}"}}}}"#),
            format!(r#"{{"type":"input_image","image_url":"{url}"}}"#),
            format!(r#"{{"type":"image","source":{{"type":"url","url":"{url}"}}}}"#),
        ] {
            let a = admit_text(&format!("[{block}]"));
            assert_eq!(a.refused.len(), 1, "{block}");
            assert_eq!(a.refused[0].reason, Reason::MagicMismatch, "{block}");
            assert!(!a.content.unwrap().contains(&svg), "{block}");
        }
    }
    // A good PNG behind the same variants is admitted and written back canonical.
    let good = b64(&png(8, 8));
    let a = admit_text(&format!(
        r#"[{{"type":"image_url","image_url":{{"url":"\u0000 Da\tta:image/png;base64,{good}"}}}}]"#
    ));
    assert!(a.refused.is_empty());
    let content: Value = serde_json::from_str(&a.content.unwrap()).unwrap();
    assert_eq!(content[0]["image_url"]["url"], format!("data:image/png;base64,{good}"));
    // What might be data but is not plain base64, and schemes no provider fetches: refused.
    for url in [
        format!("data:image/png,{svg}"),
        format!("data:image/png;base64;x=y,{svg}"),
        format!("data:image/png;base64,{}%3D", &svg[..svg.len() - 1]),
        format!("\\u00a0data:image/png;base64,{svg}"),
        format!("da ta:image/png;base64,{svg}"),
        svg.clone(),
        "file:///etc/passwd".into(),
    ] {
        let a = admit_text(&format!(r#"[{{"type":"image_url","image_url":{{"url":"{url}"}}}}]"#));
        assert_eq!(a.refused.len(), 1, "{url}");
        assert_eq!(a.refused[0].reason, Reason::Undecodable, "{url}");
    }
}

#[test]
fn raw_base64_file_data_is_judged_as_a_pdf() {
    let pdf = b64(&crate::test_images::pdf(0));
    let svg = b64(b"<svg/>");
    let input = json!([
        {"type": "file", "file": {"filename": "a.pdf", "file_data": pdf}},
        {"type": "file", "file": {"filename": "a.pdf", "file_data": svg}},
        {"type": "input_file", "filename": "a.pdf", "file_data": svg},
        {"type": "file", "file": {"file_data": "https://example.com/a.pdf"}},
    ]);
    let (content, refused) = admit(&input);
    let content = content.unwrap();
    assert_eq!(content[0]["file"]["file_data"], pdf, "a whole PDF stands, still raw base64");
    let reasons: Vec<_> = refused.iter().map(|r| (r.index, r.reason)).collect();
    assert_eq!(reasons, vec![(1, Reason::MagicMismatch), (2, Reason::MagicMismatch), (3, Reason::Undecodable)]);
}

#[test]
fn a_tool_result_carries_at_most_its_cap_of_images() {
    let cap = TOOL_RESULT_MAX_IMAGES as usize;
    let tiny = b64(&png(1, 1));
    // URL images count too: the provider counts them.
    let mut blocks: Vec<Value> =
        (0..10).map(|_| json!({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}})).collect();
    blocks.extend((10..cap + 5).map(|_| json!({"type": "image", "data": tiny, "mimeType": "image/png"})));
    let a = admit_text(&Value::Array(blocks).to_string());
    assert_eq!(a.refused.len(), 5);
    assert!(a.refused.iter().all(|r| r.reason == Reason::RequestLimit && r.limit == Some(cap as u64)));
    assert_eq!(a.refused[0].index as usize, cap);
    let content: Value = serde_json::from_str(&a.content.unwrap()).unwrap();
    assert!(content[cap]["text"].as_str().unwrap().contains(&format!("limit {cap} images")), "{}", content[cap]);
    // URLs alone, under the cap: the content stands as it was given.
    let urls = json!([{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]);
    assert_eq!(admit(&urls), (None, vec![]));
}

#[test]
fn an_image_labelled_as_another_image_type_is_relabelled_to_its_bytes_type() {
    let jpeg = encode(&gradient(8, 8), image::ImageFormat::Jpeg);
    let input = json!([
        {"type": "image", "data": b64(&jpeg), "mimeType": "image/png"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": b64(&png(4, 4))}},
    ]);
    let (content, refused) = admit(&input);
    assert_eq!(refused, vec![]);
    let blocks = content.unwrap();
    assert_eq!(blocks[0]["mimeType"], "image/jpeg", "the label the provider checks is the bytes' type");
    assert_eq!(blocks[1]["source"]["media_type"], "image/png");
    // Only between images: a PDF labelled as an image, or an SVG without converting, is refused.
    let (_, refused) = admit(&json!([
        {"type": "image", "data": b64(&crate::test_images::pdf(0)), "mimeType": "image/png"},
        svg_as_png(),
    ]));
    assert_eq!(refused.iter().map(|r| r.reason).collect::<Vec<_>>(), vec![Reason::MagicMismatch; 2]);
}

#[test]
fn media_in_a_shape_the_walk_does_not_know_is_judged_where_it_sits() {
    let svg = b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"/>";
    let good = png(8, 8);
    let input = json!({
        "first": {"kind": "picture", "payload": format!("data:image/png;base64,{}", b64(svg))},
        "images": [b64(&good), b64(svg)],
        "pdf": b64(&crate::test_images::pdf(0)),
        "note": "kept",
    });
    let a = admit_text(&input.to_string());
    let got: Vec<_> = a.refused.iter().map(|r| (r.path.as_str(), r.block_type.as_str(), r.reason)).collect();
    assert_eq!(
        got,
        vec![("/first/payload", "data_url", Reason::MagicMismatch), ("/images/1", "base64", Reason::MimeUnsupported)]
    );
    let content: Value = serde_json::from_str(&a.content.unwrap()).unwrap();
    // A refused string becomes the refusal's words, a string where the string was; never the bytes.
    let words = content["first"]["payload"].as_str().unwrap();
    assert!(
        words.starts_with("[mediagate] The data_url (image/png) returned by tool") && words.contains("magic_mismatch")
    );
    assert!(content["images"][1].as_str().unwrap().contains("image/svg+xml"), "{}", content["images"][1]);
    assert!(!content.to_string().contains(&b64(svg)));
    // What passed stands in its own form; the rest is kept.
    assert_eq!(content["images"][0], b64(&good));
    assert_eq!(content["pdf"], input["pdf"]);
    assert_eq!(content["note"], "kept");
}

#[test]
fn strings_that_carry_no_media_are_not_judged() {
    for input in [
        json!({"text": "data:text/plain;base64,aGVsbG8=", "audio": "data:audio/wav;base64,UklGRiQAAABXQVZF"}),
        json!({"token": "QkFTRTY0IHRleHQ=", "hash": "iVBORw", "prose": "iVBOR is how a PNG starts"}),
        json!({"words": "a data: URL is written data:<type>;base64,<data>"}),
        // A `text` member is text to every API, whatever it spells.
        json!([{"type": "text", "text": format!("data:image/png;base64,{}", b64(b"<svg/>"))}]),
    ] {
        assert_eq!(admit(&input), (None, vec![]), "{input}");
    }
}

#[test]
fn a_media_string_inside_a_block_is_its_payload_or_the_block_is_refused() {
    let good = format!("data:image/png;base64,{}", b64(&png(8, 8)));
    // The payload itself: judged once, as the block.
    let (content, refused) = admit(&json!([{"type": "image_url", "image_url": {"url": good}}]));
    assert_eq!((content.is_some(), refused), (true, vec![]));
    // Media beside the payload: which of the two a client reads is not defined.
    let (content, refused) =
        admit(&json!([{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}, "alt": good}]));
    assert_eq!(
        refused.iter().map(|r| (r.path.as_str(), r.reason)).collect::<Vec<_>>(),
        vec![("/0", Reason::Undecodable)]
    );
    assert_eq!(content.unwrap()[0]["type"], "text");
}

#[test]
fn a_gemini_part_is_judged_and_a_refused_one_becomes_a_text_part() {
    let good = png(8, 8);
    let svg = b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>";
    let input = json!({"contents": [{"role": "user", "parts": [
        {"text": "look"},
        {"inline_data": {"mime_type": "image/jpg", "data": b64(&encode(&gradient(8, 8), image::ImageFormat::Jpeg))}},
        {"inlineData": {"mimeType": "image/png", "data": b64(svg)}},
        {"inline_data": {"mime_type": "image/png", "data": b64(&good)}},
    ]}]});
    let (content, refused) = admit(&input);
    assert_eq!(
        refused.iter().map(|r| (r.path.as_str(), r.reason)).collect::<Vec<_>>(),
        vec![("/contents/0/parts/2", Reason::MagicMismatch)]
    );
    let parts = content.unwrap()["contents"][0]["parts"].clone();
    assert_eq!(parts[1]["inline_data"]["mime_type"], "image/jpeg", "the canonical type");
    let placeholder = parts[2].as_object().unwrap();
    assert_eq!(placeholder.keys().collect::<Vec<_>>(), vec!["text"], "a part, in Gemini's own shape");
    assert!(placeholder["text"].as_str().unwrap().contains("magic_mismatch"));
    assert_eq!(parts[3]["inline_data"]["data"], b64(&good));
    // Its type named twice: which one a client reads is not defined.
    let twice = json!([{"inline_data": {"mime_type": "image/png", "mimeType": "image/png", "data": b64(&good)}}]);
    assert_eq!(admit(&twice).1[0].reason, Reason::Undecodable);
}

#[test]
fn a_computer_screenshot_and_a_file_url_are_judged() {
    let svg = b64(b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>");
    let input = json!([
        {"type": "computer_call_output", "call_id": "c1",
         "output": {"type": "computer_screenshot", "image_url": format!("data:image/png;base64,{svg}")}},
        {"type": "input_file", "filename": "a.pdf", "file_url": "data:application/pdf;base64,JVBERi0xLjQ="},
        {"type": "input_file", "file_url": "https://example.com/a.pdf"},
    ]);
    let (content, refused) = admit(&input);
    let got: Vec<_> = refused.iter().map(|r| (r.path.as_str(), r.block_type.as_str(), r.reason)).collect();
    assert_eq!(
        got,
        vec![("/0/output", "computer_screenshot", Reason::MagicMismatch), ("/1", "input_file", Reason::Undecodable),]
    );
    let content = content.unwrap();
    assert_eq!(content[0]["output"]["type"], "input_text", "the Responses API's text type");
    assert_eq!(content[1]["type"], "input_text");
    assert_eq!(content[2], input[2], "a URL the provider fetches stands");
}

#[test]
fn a_pdf_a_server_labels_octet_stream_is_admitted_as_the_pdf_it_is() {
    // The MCP filesystem server's `read_media_file` on a PDF.
    let pdf = crate::test_images::pdf(0);
    let input = json!([
        {"type": "resource", "resource": {"uri": "file:///r.pdf", "mimeType": "application/octet-stream", "blob": b64(&pdf)}},
        {"type": "image", "data": b64(b"plain words"), "mimeType": "application/octet-stream"},
    ]);
    let (content, refused) = admit(&input);
    let content = content.unwrap();
    assert_eq!(content[0]["resource"]["mimeType"], "application/pdf");
    assert_eq!(content[0]["resource"]["blob"], b64(&pdf));
    assert_eq!(refused.iter().map(|r| (r.index, r.reason)).collect::<Vec<_>>(), vec![(1, Reason::MimeUnsupported)]);
}

#[test]
fn a_repaired_image_has_a_note_beside_it_and_a_whole_one_none() {
    let cut = b64(&crate::test_images::cut_png(64, 64));
    let (content, refused) = admit(&json!({"content": [
        {"type": "image", "data": cut, "mimeType": "image/png"},
        {"type": "text", "text": "after"},
        {"type": "image", "data": b64(&png(8, 8)), "mimeType": "image/png"},
    ]}));
    assert!(refused.is_empty());
    let content = content.expect("the cut image was rewritten");
    let blocks = content["content"].as_array().unwrap();
    let types: Vec<&str> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["image", "text", "text", "image"], "one note, after the repaired image only");
    let note = blocks[1]["text"].as_str().unwrap();
    assert!(
        note.starts_with("[mediagate] The image (image/png) returned by tool \"screenshot\" was repaired")
            && note.contains("cut short"),
        "{note}"
    );
    assert_eq!(blocks[2]["text"], "after");

    // MCP's and the Responses API's shapes: a text block of their own vocabulary.
    let (content, _) = admit(&json!([{"type": "input_image", "image_url": format!("data:image/png;base64,{cut}")}]));
    let content = content.unwrap();
    assert_eq!(content[1]["type"], "input_text", "{content}");

    // No array holds it: nowhere to set a note, and the image passes repaired all the same.
    let (content, refused) = admit(&json!({"type": "image", "data": cut, "mimeType": "image/png"}));
    assert!(refused.is_empty());
    assert_eq!(content.unwrap()["type"], "image");
}
