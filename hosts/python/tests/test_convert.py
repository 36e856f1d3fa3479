"""Conversion through the Python host: `admit_file(convert=, page=)` over
`workspace-admission.admit-file`, `read_image(page=)` over `read-image`, the converting tool-result and
request calls; the exact rules kept when `convert` is off."""

from __future__ import annotations

import base64

import pytest

from convert_files import SVG, bmp, minimal_pdf
from mediagate_host import Mediagate, OpenAICompatibleVlm, ToolError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def files(tmp_path):
    ws = tmp_path / "conv"
    ws.mkdir()
    (ws / "diagram.svg").write_bytes(SVG)
    (ws / "scan.bmp").write_bytes(bmp(40, 30))
    (ws / "doc.pdf").write_bytes(minimal_pdf("page one"))
    return ws


def test_without_convert_the_exact_rules(files):
    gate = Mediagate(workspace=files, vlm=False)
    for name, mime in (("diagram.svg", "image/svg+xml"), ("scan.bmp", "image/bmp")):
        v = gate.admit_file(name, mime)
        assert v["ok"] is False and v["reason"] == "mime_unsupported", v
        assert "converted" not in v
    # A PDF without a page stays a document.
    assert gate.admit_file("doc.pdf", "application/pdf")["kind"] == "document"


def test_convert_makes_png_and_says_from_what(files):
    gate = Mediagate(workspace=files, vlm=False)
    for name, mime in (("diagram.svg", "image/svg+xml"), ("scan.bmp", "image/bmp")):
        v = gate.admit_file(name, mime, convert=True, include_data=True)
        assert v["ok"] is True, v
        assert v["mime"] == "image/png"
        assert v["converted"]["from"] == mime and v["converted"]["to"] == "image/png"
        assert v["converted"]["note"]
        assert v["original_size"] == (files / name).stat().st_size
        assert base64.b64decode(v.pop("data")).startswith(PNG_SIGNATURE)
        # The bytes path answers the same.
        same = gate.admit_bytes((files / name).read_bytes(), mime, convert=True)
        assert same == v
    bmp_verdict = gate.admit_file("scan.bmp", "image/bmp", convert=True)
    assert (bmp_verdict["width"], bmp_verdict["height"]) == (40, 30)
    svg_verdict = gate.admit_file("diagram.svg", None, convert=True)  # no claim: the type the bytes carry
    assert svg_verdict["ok"] is True and svg_verdict["width"] == 2 * svg_verdict["height"]
    assert "image/svg+xml" in gate.convertible_types()


def test_pdf_pages(files):
    gate = Mediagate(workspace=files, vlm=False)
    v = gate.admit_file("doc.pdf", "application/pdf", page=1)
    assert v["ok"] is True and v["kind"] == "image", v
    assert v["converted"]["from"] == "application/pdf"
    # A page the PDF does not have is a refused verdict, as `mediagate admit --page 3` prints it.
    missing = gate.admit_file("doc.pdf", page=3)
    assert missing["ok"] is False and missing["reason"] == "no_such_page", missing
    assert (missing["requested"], missing["count"]) == (3, 1)
    assert missing["raw_bytes"] == (files / "doc.pdf").stat().st_size
    # A page of a file that is not a PDF is not a verdict: the call was wrong.
    with pytest.raises(ToolError) as e:
        gate.admit_file("scan.bmp", page=1)
    assert e.value.code == "page-of-non-pdf" and e.value.message.startswith("error: a page applies to PDFs"), e.value


@pytest.mark.parametrize("page", [0, -1, True, 1.5, "2", 1 << 32])
def test_a_page_is_a_whole_number_from_1(files, page):
    gate = Mediagate(workspace=files, vlm=False)
    with pytest.raises(ValueError, match="page must be a whole number from 1"):
        gate.admit_file("doc.pdf", page=page)
    with pytest.raises(ValueError, match="page must be a whole number from 1"):
        gate.read_image("doc.pdf", page=page)


def test_tool_result_and_request_convert(files):
    gate = Mediagate(workspace=files, vlm=False)
    svg_b64 = base64.b64encode(SVG).decode()
    content = [{"type": "text", "text": "a diagram"}, {"type": "image", "data": svg_b64, "mimeType": "image/svg+xml"}]
    exact = gate.admit_tool_result("draw", content)
    assert len(exact["refused"]) == 1 and "conversions" not in exact
    got = gate.admit_tool_result("draw", content, convert=True)
    assert got["refused"] == []
    assert got["content"][1]["mimeType"] == "image/png"
    assert [(c["path"], c["from"], c["to"]) for c in got["conversions"]] == [("/1", "image/svg+xml", "image/png")]

    request = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/bmp",
                                     "data": base64.b64encode(bmp()).decode()}}]}]}
    answer = gate.admit_request("anthropic", request, convert=True)
    assert answer["refusal"] is None and answer["refused"] == []
    assert answer["request"]["messages"][0]["content"][0]["source"]["media_type"] == "image/png"
    assert [(c["path"], c["from"]) for c in answer["conversions"]] == [("/messages/0/content/0", "image/bmp")]


def test_read_image_renders_the_pdf_page_and_converts_svg(files, vlm_server):
    vlm = OpenAICompatibleVlm(base_url=vlm_server.base_url, model="m", api_key="sk-test", retries=0)
    gate = Mediagate(workspace=files, vlm=vlm)
    assert gate.read_image("doc.pdf", "What does it say?", page=1)
    assert gate.read_image("diagram.svg")
    urls = [p["image_url"]["url"] for r in vlm_server.requests for p in r["body"]["messages"][0]["content"]
            if p["type"] == "image_url"]
    assert len(urls) == 2
    for url in urls:
        assert url.startswith("data:image/png;base64,") or url.startswith("data:image/jpeg;base64,"), url[:40]
    with pytest.raises(ToolError) as e:
        gate.read_image("doc.pdf", page=2)
    assert e.value.code == "refused"
    assert len(vlm_server.requests) == 2, "no model call for a page that does not exist"
