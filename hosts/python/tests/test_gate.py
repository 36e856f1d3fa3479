"""The gate on bytes, tool results and requests (the Rust host's `Gate` calls, each option reaching
the component), and the default verify depth: bytes going to a model are decoded in full."""

from __future__ import annotations

import base64
import json

import pytest

from images import PDF, SVG, png, png_with_broken_pixels
from mediagate_host import Mediagate


@pytest.fixture
def gate(workspace):
    return Mediagate(workspace=workspace, vlm=False)


def test_admit_bytes_admits_a_good_image(gate):
    data = png(16, 9)
    v = gate.admit_bytes(data, "image/png", include_data=True)
    assert base64.b64decode(v.pop("data")) == data
    assert v == {"ok": True, "kind": "image", "mime": "image/png", "original_size": len(data), "resized": False,
                 "reencoded": False, "base64_len": len(base64.b64encode(data)), "width": 16, "height": 9}


def test_admit_bytes_refuses_a_lying_image(gate):
    v = gate.admit_bytes(SVG, "image/png")
    assert v["ok"] is False and v["reason"] == "magic_mismatch" and v["raw_bytes"] == len(SVG)
    assert gate.admit_bytes(SVG, "image/svg+xml")["reason"] == "mime_unsupported"


def test_admit_bytes_without_a_claim_uses_the_bytes_and_admits_documents(gate):
    assert gate.admit_bytes(png())["mime"] == "image/png"
    doc = gate.admit_bytes(PDF, "application/pdf")
    assert doc["ok"] is True and doc["kind"] == "document" and doc["original_size"] == len(PDF)
    assert gate.admit_bytes(b"", "image/png")["reason"] == "magic_mismatch"


def test_admit_bytes_equals_admit_file(gate, workspace):
    data = png(40, 30, (10, 200, 10))
    (workspace / "green.png").write_bytes(data)
    for kwargs in ({}, {"verify": "header"}, {"provider": "openai"}, {"downsample": False}):
        assert gate.admit_bytes(data, "image/png", **kwargs) == gate.admit_file("green.png", "image/png", **kwargs)


def test_the_default_verify_depth_is_full(gate, workspace):
    """A PNG whose header is right and whose pixels are not: refused by default (every pixel
    decoded), admitted only when the caller asks for a header check."""
    broken = png_with_broken_pixels()
    refused = gate.admit_bytes(broken, "image/png")
    assert refused["ok"] is False and refused["reason"] == "undecodable"
    assert "cannot be decoded" in refused["message"]
    assert gate.admit_bytes(broken, "image/png", verify="header")["ok"] is True

    (workspace / "broken.png").write_bytes(broken)
    assert gate.admit_file("broken.png", "image/png")["reason"] == "undecodable"
    blocks = [{"type": "image", "data": base64.b64encode(broken).decode(), "mimeType": "image/png"}]
    assert gate.admit_tool_result("t", blocks)["refused"][0]["reason"] == "undecodable"
    assert gate.admit_tool_result("t", blocks, verify="header")["refused"] == []


def tool_result_blocks():
    good = base64.b64encode(png(12, 12)).decode()
    lie = base64.b64encode(SVG).decode()
    return [
        {"type": "text", "text": "two screenshots"},
        {"type": "image", "data": good, "mimeType": "image/png"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": lie}},
    ]


def test_admit_tool_result(gate):
    out = gate.admit_tool_result("screenshot", tool_result_blocks())
    content = out["content"]
    assert content[0] == {"type": "text", "text": "two screenshots"}
    assert content[1]["type"] == "image" and base64.b64decode(content[1]["data"]) == png(12, 12)
    assert content[2]["type"] == "text" and "screenshot" in content[2]["text"]
    assert out["refused"] == [{"index": 2, "path": "/2", "type": "image", "reason": "magic_mismatch",
                               "bytes": len(SVG), "mime": "image/png"}]


def test_admit_tool_result_without_media_stands_as_it_is(gate):
    assert gate.admit_tool_result("t", '[{"type": "text", "text": "hi"}]') == {
        "content": [{"type": "text", "text": "hi"}], "refused": []}
    # What cannot be read cannot be checked: refused whole, never passed.
    refused = gate.admit_tool_result("t", "not json")
    assert refused["content"][0]["type"] == "text" and len(refused["content"]) == 1
    assert refused["refused"][0]["reason"] == "undecodable" and refused["refused"][0]["path"] == ""


@pytest.mark.parametrize("verify", ["full", "header"])
def test_admit_tool_result_passes_its_options(gate, verify):
    """`verify` reaches the walk: a block whose pixels do not decode passes a header check only."""
    text = json.dumps(tool_result_blocks() + [{"type": "image", "data": base64.b64encode(
        png_with_broken_pixels()).decode(), "mimeType": "image/png"}])
    refused = gate.admit_tool_result("screenshot", text, verify=verify)["refused"]
    expected = [(2, "magic_mismatch")] + ([(3, "undecodable")] if verify == "full" else [])
    assert [(r["index"], r["reason"]) for r in refused] == expected, refused


def _anthropic_request(*blocks):
    return {"model": "claude", "max_tokens": 10, "messages": [{"role": "user", "content": list(blocks)}]}


def _image(data, mime="image/png"):
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": base64.b64encode(data).decode()}}


@pytest.mark.parametrize("downsample", [True, False])
def test_admit_request_passes_its_options(gate, downsample):
    # 21 images, one 2400 px wide: fitted to 2000 px (or refused with downsampling off), naming the rule.
    request = _anthropic_request(*([_image(png(4, 4))] * 19 + [_image(SVG), _image(png(2400, 6))]))
    report = gate.admit_request("anthropic", json.dumps(request), downsample=downsample)
    wide = report["changed"][1]
    assert report["refused"][:1] == ["/messages/0/content/19"]
    assert wide["rule"] == "anthropic.many_images_max_side"
    assert wide["what"] == ("downsampled" if downsample else "refused"), wide


def test_admit_request_unusable_and_unchanged(gate):
    r = gate.admit_request("anthropic", "not json")
    assert r["request"] is None and r["refusal"]["unusable"] is True
    request = {"messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "hi"}]}
    assert gate.admit_request("anthropic", request)["refusal"]["unusable"] is True
    assert gate.admit_request("openai", request) == {"api": "openai", "request": request, "changed": [],
                                                     "refused": [], "refusal": None}
    with pytest.raises(ValueError):
        gate.admit_request("mistral", request)


def test_the_defaults_come_from_the_component(gate):
    # `default-options` of the component: the one place the defaults live (guest/src/options.rs).
    assert gate.defaults == {"downsample": True, "provider": "anthropic", "verify": "full", "keep_metadata": False}
    big = png(2400, 300)
    assert gate.admit_bytes(big, "image/png")["resized"] is True, "downsample is on by default"
    assert gate.admit_bytes(big, "image/png", downsample=False)["resized"] is False


def test_the_option_names_come_from_the_component(gate):
    # The names the component's `admit-options` and `request-input` enums take, read from its types.
    assert gate.providers == ("anthropic", "openai", "gemini", "ollama")
    with pytest.raises(ValueError, match="provider must be one of"):
        gate.admit_bytes(png(), provider="mistral")
    with pytest.raises(ValueError, match="verify must be one of"):
        gate.admit_bytes(png(), verify="pixels")
    with pytest.raises(ValueError, match="api must be one of"):
        gate.admit_request("mistral", "{}")


def test_a_reencoded_image_comes_back_as_its_base64(gate):
    # admit-file puts the admitted bytes in its JSON as base64 (`data`: one string, which
    # wasmtime-py lifts in one copy), never in a `list<u8>`.
    big = png(2400, 300)
    v = gate.admit_bytes(big, "image/png", include_data=True)
    assert v["reencoded"] is True and v["width"] == 2000
    assert len(v["data"]) == v["base64_len"]
    assert base64.b64decode(v["data"]).startswith(b"\x89PNG") or base64.b64decode(v["data"])[:2] == b"\xff\xd8"


def test_the_walks_close_their_holes(gate):
    """A PDF that is not whole, a repeated key in a holder, a data: URL behind a NUL and a tab."""
    for cut, words in ((b"%PDF-1.4\n", "%%EOF"), (PDF[: len(PDF) - 20], "%%EOF"),
                       (PDF.replace(b"/Root 1 0 R", b"/Root 1 0 R /Encrypt 9 0 R"), "encrypted")):
        v = gate.admit_bytes(cut, "application/pdf")
        assert v["ok"] is False and v["reason"] == "undecodable" and words in v["message"], v
    good = base64.b64encode(png()).decode()
    svg = base64.b64encode(SVG).decode()
    text = (f'[{{"type":"image_url","image_url":{{"url":"data:image/png;base64,{good}","url":"data:image/png;base64,{svg}"}}}},'
            f'{{"type":"image_url","image_url":{{"url":"\\u0000 Da\\tta:image/png;base64,{svg}"}}}}]')
    out = gate.admit_tool_result("t", text)
    assert [r["reason"] for r in out["refused"]] == ["undecodable", "magic_mismatch"], out["refused"]
