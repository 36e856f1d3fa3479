"""The OpenAI and Anthropic Python SDKs (the real, pinned packages) with `GateTransport` /
`AsyncGateTransport`, in front of the loopback provider: what arrives there is what is asserted."""

from __future__ import annotations

import asyncio
import base64
import json

import anthropic
import httpx
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


def test_other_endpoints_are_judged_wherever_their_media_sit(provider, gate):
    """A JSON body to an endpoint of no known dialect goes through the walk as `other`: text
    arrives byte for byte, media are judged wherever they sit, with no API's request rules."""
    c = gated("chat", "sync", provider, gate, on_refusal="raise")
    c.post("/embeddings", body={"model": "e", "input": "<svg"}, cast_to=object)
    assert provider.records[0]["path"] == "/v1/embeddings"
    assert provider.records[0]["body"] == {"model": "e", "input": "<svg"}
    c = gated("chat", "sync", provider, gate)
    c.post("/threads/thread_1/messages", body={"role": "user", "attachments": [
        {"preview": data_url("image/png", SVG)}]}, cast_to=object)
    record = provider.records[-1]
    assert b64(SVG).encode() not in record["raw"]
    assert "magic_mismatch" in record["body"]["attachments"][0]["preview"]
    with pytest.raises(MediaRefused):
        gated("chat", "sync", provider, gate, on_refusal="raise").post(
            "/images/edits", body={"images": [{"image_url": data_url("image/png", SVG)}]}, cast_to=object)
    assert provider.records[-1] is record
    cases = {
        "/v1/chat/completions": "openai", "/openai/deployments/d/chat/completions": "openai",
        "/v1/responses": "responses", "/v1/responses/input_tokens": "responses", "/v1/responses/compact": "responses",
        "/v1/conversations": "responses", "/v1/conversations/conv_1/items": "responses",
        "/v1/conversations/conv_1/items/item_1": None,
        "/v1/messages": "anthropic", "/v1/messages/count_tokens": "anthropic",
        "/v1/projects/p/locations/l/publishers/anthropic/models/claude:rawPredict": "anthropic",
        "/v1/messages/batches": "anthropic-batch", "/v1/messages/batches/msgbatch_1/cancel": None,
        "/v1beta/models/gemini-2.5-flash:generateContent": "gemini",
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent": "gemini",
        "/v1beta/models/gemini-2.5-flash:countTokens": "gemini",
        "/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-pro:generateContent": "gemini",
        "/v1beta/models/text-embedding-004:embedContent": None,
        "/v1/threads/thread_1/messages": None, "/v1/embeddings": None,
    }
    assert {path: api_for_path(path) for path in cases} == cases


def test_count_tokens_is_judged_and_an_openai_thread_message_is_not_taken_for_anthropic(provider, gate):
    c = client("messages", "sync", provider, GateTransport(gate=gate))
    c.messages.count_tokens(model="claude-test", messages=[{"role": "user", "content": [
        image("messages", "image/png", SVG)]}])
    [record] = provider.records
    assert record["path"].split("?")[0] == "/v1/messages/count_tokens"
    assert b64(SVG).encode() not in record["raw"]
    assert "magic_mismatch" in record["body"]["messages"][0]["content"][0]["text"]
    gated("chat", "sync", provider, gate, on_refusal="raise").post(
        "/threads/thread_1/messages", body={"role": "user", "content": "hi"}, cast_to=object)
    assert provider.records[-1]["path"] == "/v1/threads/thread_1/messages"


def test_a_body_the_gate_cannot_read_is_never_sent(provider, gate):
    c = gated("chat", "sync", provider, gate)
    with pytest.raises(MediaRefused) as caught:
        c.post("/chat/completions", body={"model": "m", "messages": "not a list"}, cast_to=object)
    assert provider.records == []
    assert caught.value.refusals[0]["path"] == ""


def computer_use_turn(screenshot: bytes) -> list:
    """A Responses computer-use turn: the screenshot the agent took after the model's action."""
    return [{"type": "computer_call_output", "call_id": "call_1",
             "output": {"type": "computer_screenshot", "image_url": data_url("image/png", screenshot)}}]


@pytest.mark.parametrize("mode", MODES)
def test_a_computer_use_screenshot_is_judged_like_any_image(provider, gate, mode):
    c = gated("responses", mode, provider, gate)
    if mode == "sync":
        c.responses.create(model="computer-use-preview", input=computer_use_turn(SVG))
    else:
        async def run():
            try:
                await c.responses.create(model="computer-use-preview", input=computer_use_turn(SVG))
            finally:
                await c.close()

        asyncio.run(run())
    [record] = provider.records
    assert b64(SVG).encode() not in record["raw"]
    output = record["body"]["input"][0]["output"]
    assert output["type"] == "input_text" and "magic_mismatch" in output["text"]
    with pytest.raises(MediaRefused) as caught:
        gated("responses", "sync", provider, gate, on_refusal="raise").responses.create(
            model="computer-use-preview", input=computer_use_turn(SVG))
    assert len(provider.records) == 1, "nothing more was sent"
    assert [r["path"] for r in caught.value.refusals] == ["/input/0/output"]


def test_a_good_computer_use_screenshot_arrives_byte_for_byte(provider, gate):
    turn = computer_use_turn(small_png())
    openai_client = client("responses", "sync", provider, None)
    openai_client.responses.create(model="computer-use-preview", input=turn)
    expected = provider.records.pop()["raw"]
    gated("responses", "sync", provider, gate).responses.create(model="computer-use-preview", input=turn)
    assert [r["raw"] for r in provider.records] == [expected]


def test_audio_arrives_as_it_was_sent(provider, gate):
    content = [text("chat", "What is said?"),
               {"type": "input_audio", "input_audio": {"data": b64(b"RIFF\x24\0\0\0WAVEfmt "), "format": "wav"}}]
    expected = baseline("chat", "sync", provider, content)
    send("chat", "sync", gated("chat", "sync", provider, gate), content)
    assert [r["raw"] for r in provider.records] == [expected]


def test_what_python_cannot_write_again_arrives_as_it_was_written(provider, gate):
    """The gate's own text is sent, byte for byte outside the refused block: `1e400` and a lone
    surrogate escape are valid JSON that Python's `json` would write as `Infinity` or fail on."""
    body = ('{"model":"m","temperature":1e400,"messages":[{"role":"user","content":[{"type":"text",'
            '"text":"broken \\ud800 text"},' + json.dumps(image("chat", "image/png", SVG)) + ']}]}')
    with httpx.Client(transport=GateTransport(gate=gate)) as http:
        http.post(f"{provider.base_url}/chat/completions", content=body.encode(),
                  headers={"content-type": "application/json"})
    [record] = provider.records
    assert record["raw"].startswith(b'{"model":"m","temperature":1e400,')
    assert b'"text":"broken \\ud800 text"}' in record["raw"]
    assert b"magic_mismatch" in record["raw"] and b64(SVG).encode() not in record["raw"]


def test_media_in_a_shape_no_sdk_types_is_judged(provider, gate):
    """Ollama's `images` (bare base64 beside the message): the walk finds media wherever it sits."""
    c = gated("chat", "sync", provider, gate)
    c.post("/chat/completions", cast_to=object, body={"model": "llava", "messages": [
        {"role": "user", "content": "what is this?", "images": [b64(small_png()), b64(SVG)]}]})
    [record] = provider.records
    images = record["body"]["messages"][0]["images"]
    assert images[0] == b64(small_png())
    assert images[1].startswith("[mediagate]") and "image/svg+xml" in images[1]


def test_every_change_is_told_to_the_callback_and_the_log(provider, gate, screenshot, caplog):
    told = []
    content = [image("chat", "image/png", screenshot), image("chat", "image/png", SVG)]
    with caplog.at_level("INFO", logger="mediagate"):
        send("chat", "sync", gated("chat", "sync", provider, gate, on_change=told.append), content)
    assert [(c["path"], c["what"], c["api"]) for c in told] == [
        ("/messages/0/content/0", "downsampled", "openai"), ("/messages/0/content/1", "refused", "openai")]
    assert told[1]["reason"] == "magic_mismatch"
    levels = [(r.levelname, r.getMessage().split(":")[0]) for r in caplog.records if r.name == "mediagate"]
    assert levels == [("INFO", "mediagate downsampled /messages/0/content/0 of the openai request"),
                      ("WARNING", "mediagate refused /messages/0/content/1 of the openai request")]
    with pytest.raises(TypeError):
        GateTransport(on_change="not callable")


def test_the_gates_options_reach_it(provider, gate, screenshot):
    """`downsample`, `verify`, `keep_metadata`, `convert`: the same options as the JavaScript wrappers."""
    send("chat", "sync", gated("chat", "sync", provider, gate, downsample=False), [image("chat", "image/png", screenshot)])
    [block] = arrived_content("chat", provider.records.pop())
    assert block["type"] == "text" and "raw_too_large" in block["text"]
    send("messages", "sync", gated("messages", "sync", provider, gate, convert=True),
         [image("messages", "image/svg+xml", SVG)])
    [block] = arrived_content("messages", provider.records.pop())
    assert block["source"]["media_type"] == "image/png"
    with pytest.raises(TypeError, match="unknown gate option keepMetadata"):
        GateTransport(keepMetadata=True)
