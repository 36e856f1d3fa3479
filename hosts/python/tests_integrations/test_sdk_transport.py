"""The OpenAI and Anthropic Python SDKs (the real, pinned packages) with `GateTransport` /
`AsyncGateTransport`, in front of the loopback provider: what arrives there is what is asserted."""

from __future__ import annotations

import asyncio
import base64

import anthropic
import openai
import pytest

from conftest import decoded_data_url
from media import PDF, SVG, b64, data_url, small_png
from mediagate_host.transport import AsyncGateTransport, GateTransport, MediaRefused, api_for_path

ENDPOINTS = ("chat", "responses", "messages")
MODES = ("sync", "async")
#: The profile each endpoint is admitted under by default.
PROFILE = {"chat": "openai", "responses": "openai", "messages": "anthropic"}


def client(endpoint: str, mode: str, base, transport):
    """The SDK client for the endpoint, sending through `transport` (None: no gate)."""
    if endpoint == "messages":
        http = (anthropic.DefaultHttpxClient if mode == "sync" else anthropic.DefaultAsyncHttpxClient)(
            transport=transport) if transport is not None else None
        cls = anthropic.Anthropic if mode == "sync" else anthropic.AsyncAnthropic
        return cls(base_url=base.root_url, api_key="test-key", http_client=http, max_retries=0)
    http = (openai.DefaultHttpxClient if mode == "sync" else openai.DefaultAsyncHttpxClient)(
        transport=transport) if transport is not None else None
    cls = openai.OpenAI if mode == "sync" else openai.AsyncOpenAI
    return cls(base_url=base.base_url, api_key="test-key", http_client=http, max_retries=0)


def gated(endpoint: str, mode: str, server, gate, **options):
    transport = (GateTransport if mode == "sync" else AsyncGateTransport)(gate=gate, **options)
    return client(endpoint, mode, server, transport)


def send(endpoint: str, mode: str, c, content: list):
    if endpoint == "chat":
        call = lambda: c.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": content}])
    elif endpoint == "responses":
        call = lambda: c.responses.create(model="gpt-test", input=[{"role": "user", "content": content}])
    else:
        call = lambda: c.messages.create(model="claude-test", max_tokens=16,
                                         messages=[{"role": "user", "content": content}])
    if mode == "sync":
        return call()

    async def run():
        try:
            return await call()
        finally:
            await c.close()

    return asyncio.run(run())


def text(endpoint: str, words: str) -> dict:
    return {"type": "input_text" if endpoint == "responses" else "text", "text": words}


def image(endpoint: str, mime: str, data: bytes) -> dict:
    if endpoint == "chat":
        return {"type": "image_url", "image_url": {"url": data_url(mime, data)}}
    if endpoint == "responses":
        return {"type": "input_image", "image_url": data_url(mime, data)}
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": b64(data)}}


def pdf(endpoint: str, data: bytes) -> dict:
    if endpoint == "chat":
        return {"type": "file", "file": {"filename": "hello.pdf", "file_data": data_url("application/pdf", data)}}
    if endpoint == "responses":
        return {"type": "input_file", "filename": "hello.pdf", "file_data": data_url("application/pdf", data)}
    return {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(data)}}


def arrived_content(endpoint: str, record: dict) -> list:
    body = record["body"]
    return (body["input"] if endpoint == "responses" else body["messages"])[0]["content"]


def media_of(endpoint: str, block: dict) -> tuple:
    """`(mime, bytes)` of an arrived image or document block."""
    if endpoint == "chat":
        url = block["image_url"]["url"] if block["type"] == "image_url" else block["file"]["file_data"]
        return decoded_data_url(url)
    if endpoint == "responses":
        return decoded_data_url(block["image_url"] if block["type"] == "input_image" else block["file_data"])
    return block["source"]["media_type"], base64.b64decode(block["source"]["data"])


def baseline(endpoint: str, mode: str, provider, content: list) -> bytes:
    """The body the SDK sends for `content` with no gate (to the same loopback provider)."""
    send(endpoint, mode, client(endpoint, mode, provider, None), content)
    return provider.records.pop()["raw"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_request_with_no_media_arrives_byte_for_byte(provider, gate, endpoint, mode):
    content = [text(endpoint, "What is 2 + 2?")]
    expected = baseline(endpoint, mode, provider, content)
    answer = send(endpoint, mode, gated(endpoint, mode, provider, gate), content)
    assert answer is not None
    assert [r["raw"] for r in provider.records] == [expected]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_good_image_arrives_unchanged(provider, gate, endpoint, mode):
    png = small_png()
    admitted = gate.admit_bytes(png, "image/png", provider=PROFILE[endpoint], include_data=True)
    assert base64.b64decode(admitted["data"]) == png, "the test image is one the gate passes as it is"
    content = [text(endpoint, "What is in the picture?"), image(endpoint, "image/png", png)]
    expected = baseline(endpoint, mode, provider, content)
    send(endpoint, mode, gated(endpoint, mode, provider, gate), content)
    [record] = provider.records
    assert record["raw"] == expected
    assert media_of(endpoint, arrived_content(endpoint, record)[1]) == ("image/png", png)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_an_svg_claimed_as_png_never_arrives_a_placeholder_says_why(provider, gate, endpoint, mode):
    content = [text(endpoint, "Look:"), image(endpoint, "image/png", SVG)]
    send(endpoint, mode, gated(endpoint, mode, provider, gate), content)
    [record] = provider.records
    assert b64(SVG).encode() not in record["raw"] and b"<svg" not in record["raw"]
    first, placeholder = arrived_content(endpoint, record)
    assert first == text(endpoint, "Look:")
    assert placeholder["type"] == text(endpoint, "")["type"]
    assert "magic_mismatch" in placeholder["text"] and "image/svg+xml" in placeholder["text"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_an_svg_claimed_as_png_raises_media_refused_and_nothing_is_sent(provider, gate, endpoint, mode):
    content = [text(endpoint, "Look:"), image(endpoint, "image/png", SVG)]
    with pytest.raises(MediaRefused) as caught:
        send(endpoint, mode, gated(endpoint, mode, provider, gate, on_refusal="raise"), content)
    assert provider.records == []
    [refusal] = caught.value.refusals
    assert refusal["reason"] == "magic_mismatch"
    assert refusal["path"].endswith("/content/1")
    assert "image/svg+xml" in refusal["message"] and "image/svg+xml" in str(caught.value)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_6mb_screenshot_arrives_downsampled_within_the_provider_limit(provider, gate, screenshot, endpoint, mode):
    assert len(screenshot) > 6_000_000
    content = [text(endpoint, "What does the screen say?"), image(endpoint, "image/png", screenshot)]
    send(endpoint, mode, gated(endpoint, mode, provider, gate), content)
    [record] = provider.records
    mime, arrived = media_of(endpoint, arrived_content(endpoint, record)[1])
    assert len(arrived) < len(screenshot)
    # Within the profile's limits: the gate, told not to downsample, passes it as it is.
    again = gate.admit_bytes(arrived, mime, provider=PROFILE[endpoint], downsample=False)
    assert again["ok"] and not again["resized"] and again["mime"] == mime, again
    assert max(again["width"], again["height"]) < 2560
    expected = gate.admit_bytes(screenshot, "image/png", provider=PROFILE[endpoint], include_data=True)
    assert arrived == base64.b64decode(expected["data"])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_pdf_arrives_where_the_api_takes_documents(provider, gate, endpoint, mode):
    content = [text(endpoint, "Summarise:"), pdf(endpoint, PDF)]
    expected = baseline(endpoint, mode, provider, content)
    send(endpoint, mode, gated(endpoint, mode, provider, gate), content)
    [record] = provider.records
    assert record["raw"] == expected
    assert media_of(endpoint, arrived_content(endpoint, record)[1]) == ("application/pdf", PDF)


def test_a_pdf_that_is_not_one_never_arrives(provider, gate):
    content = [pdf("messages", b"%PDF-1.7\nnot really\n")]
    send("messages", "sync", gated("messages", "sync", provider, gate), content)
    [record] = provider.records
    [block] = arrived_content("messages", record)
    assert block["type"] == "text" and "[mediagate]" in block["text"]


def test_the_profile_follows_the_endpoint_and_the_provider_option(provider, gate, screenshot):
    """A 6 MB screenshot under the Ollama profile, through an OpenAI client pointed at Ollama."""
    content = [image("chat", "image/png", screenshot)]
    send("chat", "sync", gated("chat", "sync", provider, gate, provider="ollama"), content)
    mime, arrived = media_of("chat", arrived_content("chat", provider.records[0])[0])
    expected = gate.admit_bytes(screenshot, "image/png", provider="ollama", include_data=True)
    assert arrived == base64.b64decode(expected["data"]) and mime == expected["mime"]


def test_other_endpoints_pass_untouched(provider, gate):
    """Embeddings and the rest are not admitted (nothing there is an image for a model)."""
    c = gated("chat", "sync", provider, gate, on_refusal="raise")
    c.post("/embeddings", body={"model": "e", "input": "<svg"}, cast_to=object)
    assert provider.records[0]["path"] == "/v1/embeddings"
    assert [api_for_path(p) for p in ("/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1/embeddings",
                                      "/openai/deployments/d/chat/completions")] == [
        "openai", "responses", "anthropic", None, "openai"]


def test_a_body_the_gate_cannot_read_is_never_sent(provider, gate):
    c = gated("chat", "sync", provider, gate)
    with pytest.raises(MediaRefused) as caught:
        c.post("/chat/completions", body={"model": "m", "messages": "not a list"}, cast_to=object)
    assert provider.records == []
    assert caught.value.refusals[0]["path"] == ""
