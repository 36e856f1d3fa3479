"""The Python snippets of docs/integrations.md, run as written (in a directory holding the
`screenshot.png` / `photo.png` they open, with the SDKs' environment pointed at the loopback
provider). The LiteLLM config snippet is the one test_litellm_proxy.py starts the proxy with."""

from __future__ import annotations

import base64
import contextlib
import io
import json

import pytest

from docs_snippets import snippet
from media import SVG, small_png


@pytest.fixture
def in_docs_dir(tmp_path, monkeypatch, provider):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", provider.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", provider.root_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    return tmp_path


def run(name: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(snippet("python", name), f"docs/integrations.md:{name}", "exec"), {"__name__": "__snippet__"})
    return out.getvalue()


def test_the_openai_snippet_replaces_an_svg_claimed_as_png_by_the_gates_words(in_docs_dir, provider):
    (in_docs_dir / "screenshot.png").write_bytes(SVG)
    assert run("openai").strip() == "a loopback answer"
    [record] = provider.records
    assert record["path"] == "/v1/chat/completions"
    _, placeholder = record["body"]["messages"][0]["content"]
    assert placeholder["type"] == "text" and "magic_mismatch" in placeholder["text"]
    assert b"<svg" not in record["raw"]


def test_the_openai_snippet_sends_a_good_screenshot_as_it_is(in_docs_dir, provider):
    (in_docs_dir / "screenshot.png").write_bytes(small_png())
    run("openai")
    [record] = provider.records
    url = record["body"]["messages"][0]["content"][1]["image_url"]["url"]
    assert base64.b64decode(url.split(",", 1)[1]) == small_png()


def test_the_async_anthropic_snippet_raises_and_sends_nothing(in_docs_dir, provider):
    (in_docs_dir / "screenshot.png").write_bytes(SVG)
    assert run("anthropic-async").strip() == "not sent: magic_mismatch"
    assert provider.records == []
    (in_docs_dir / "screenshot.png").write_bytes(small_png())
    assert run("anthropic-async").strip() == "a loopback answer"
    [record] = provider.records
    assert record["path"] == "/v1/messages"
    assert base64.b64decode(record["body"]["messages"][0]["content"][0]["source"]["data"]) == small_png()


def test_the_pydantic_ai_snippet_gates_the_users_photo(in_docs_dir, provider):
    (in_docs_dir / "photo.png").write_bytes(SVG)
    (in_docs_dir / "screenshot.png").write_bytes(small_png())
    assert run("pydantic-ai").strip() == "a loopback answer"
    [record] = provider.records
    assert record["path"] == "/v1/messages"
    raw = json.dumps(record["body"])
    assert "magic_mismatch" in raw and "<svg" not in raw


def test_the_pydantic_ai_wire_snippet_gates_what_leaves(in_docs_dir, provider):
    (in_docs_dir / "screenshot.png").write_bytes(SVG)
    assert run("pydantic-ai-wire").strip()
    [record] = provider.records
    assert record["path"] == "/v1/messages"
    assert base64.b64encode(SVG).decode() not in record["raw"].decode()
    assert "magic_mismatch" in record["raw"].decode()
