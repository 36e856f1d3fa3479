"""The real LiteLLM proxy (`litellm --config`, from .venv-litellm) with the mediagate guardrail,
configured by the config.yaml in docs/integrations.md as written, in front of the loopback
provider. Clients are the OpenAI and Anthropic SDKs, and httpx for the proxy's Gemini route; what
the provider receives is asserted."""

from __future__ import annotations

import base64
import json
import os
import secrets
import socket
import subprocess
import time
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from conftest import decoded_data_url
from docs_snippets import snippet
from media import GIF, PDF, SVG, b64, data_url, small_png
from provider import ANSWER, Provider

HERE = Path(__file__).resolve().parent
PY_HOST = HERE.parent
LITELLM = PY_HOST / ".venv-litellm" / "bin" / "litellm"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proxy:
    def __init__(self, url: str, key: str):
        self.url = url
        self.key = key


@pytest.fixture(scope="module")
def upstream():
    p = Provider()
    yield p
    p.close()


def _start(config_text: str, work: Path, upstream: Provider) -> tuple:
    work.mkdir(parents=True, exist_ok=True)
    config = work / "config.yaml"
    config.write_text(config_text)
    port = free_port()
    master_key = "sk-" + secrets.token_hex(32)
    env = dict(os.environ)
    env.update({
        "LITELLM_MASTER_KEY": master_key,
        "PYTHONPATH": str(PY_HOST),
        "OPENAI_API_KEY": "test-key", "OPENAI_API_BASE": upstream.base_url,
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_API_BASE": upstream.root_url,
        "GEMINI_API_KEY": "test-key", "GEMINI_API_BASE": upstream.root_url + "/v1beta",
        # Offline: the bundled model cost map, no telemetry.
        "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False",
        "NO_PROXY": "*", "HTTP_PROXY": "", "HTTPS_PROXY": "",
    })
    log = (work / "proxy.log").open("wb")
    process = subprocess.Popen([str(LITELLM), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work)
    return process, log, Proxy(f"http://127.0.0.1:{port}", master_key), work / "proxy.log"


def _wait(process, proxy: "Proxy", log_path: Path, deadline: float) -> None:
    while True:
        if process.poll() is not None:
            pytest.fail(f"the LiteLLM proxy exited ({process.returncode}):\n{log_path.read_text()[-4000:]}")
        try:
            if httpx.get(proxy.url + "/health/liveliness", timeout=2, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"the LiteLLM proxy did not start in time:\n{log_path.read_text()[-4000:]}")
        time.sleep(0.5)


#: LiteLLM refuses to download media from loopback addresses unless told: the tests' media URLs
#: are served by the loopback provider.
LOOPBACK_DOWNLOADS = "\nlitellm_settings:\n  user_url_allowed_hosts: [\"127.0.0.1\"]\n"


@pytest.fixture(scope="module")
def proxies(upstream, tmp_path_factory):
    """Two proxies on free 127.0.0.1 ports in front of the loopback provider: the docs' config as
    written, and the same without its `guardrails` (what the proxy sends with no gate)."""
    if not LITELLM.is_file():
        pytest.fail(f"{LITELLM} is missing: run test-integrations.sh, which installs requirements-litellm.txt")
    config = snippet("yaml", "litellm-config")
    assert "\nguardrails:" in config and "litellm_settings:" not in config
    work = tmp_path_factory.mktemp("litellm")
    started = [_start(config + LOOPBACK_DOWNLOADS, work / "gated", upstream),
               _start(config.split("\nguardrails:")[0] + "\n" + LOOPBACK_DOWNLOADS, work / "plain", upstream)]
    try:
        deadline = time.monotonic() + 300
        for process, _, proxy, log_path in started:
            _wait(process, proxy, log_path, deadline)
        yield started[0][2], started[1][2]
    finally:
        for process, log, _, _ in started:
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.close()


@pytest.fixture
def proxy(proxies):
    return proxies[0]


@pytest.fixture
def plain_proxy(proxies):
    return proxies[1]


@pytest.fixture
def records(upstream):
    upstream.records.clear()
    return upstream.records


def chat(proxy: Proxy, model: str, content: list, **extra):
    c = openai.OpenAI(base_url=proxy.url, api_key=proxy.key, max_retries=0, timeout=120)
    return c.chat.completions.create(model=model, messages=[{"role": "user", "content": content}], **extra)


def image_url(mime: str, data: bytes) -> dict:
    return {"type": "image_url", "image_url": {"url": data_url(mime, data)}}


def arrived_media(record: dict) -> list:
    """`(mime, bytes)` of every media block the provider received (either dialect)."""
    out = []
    for message in record["body"]["messages"]:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "image_url":
                out.append(decoded_data_url(block["image_url"]["url"]))
            elif block.get("type") == "file":
                out.append(decoded_data_url(block["file"]["file_data"]))
            elif block.get("type") in ("image", "document") and block["source"].get("type") == "base64":
                out.append((block["source"]["media_type"], base64.b64decode(block["source"]["data"])))
    return out


def texts(record: dict) -> list:
    return [b["text"] for m in record["body"]["messages"] if isinstance(m.get("content"), list)
            for b in m["content"] if b.get("type") == "text"]


MODELS = {"gpt-4o": ("openai", "/v1/chat/completions"), "claude-sonnet": ("anthropic", "/v1/messages")}


@pytest.mark.parametrize("model", MODELS)
def test_a_request_with_no_media_arrives_byte_for_byte(proxy, plain_proxy, records, model):
    """The provider gets from the gated proxy the very body the proxy sends with no guardrail."""
    content = [{"type": "text", "text": "What is 2 + 2?"}]
    chat(plain_proxy, model, content)
    chat(proxy, model, content)
    without, gated = records
    assert gated["path"] == without["path"] == MODELS[model][1]
    assert gated["raw"] == without["raw"]


@pytest.mark.parametrize("model", MODELS)
def test_a_good_image_arrives_unchanged(proxy, plain_proxy, records, gate, model):
    png = small_png()
    assert base64.b64decode(gate.admit_bytes(png, include_data=True, provider=MODELS[model][0])["data"]) == png
    content = [{"type": "text", "text": "What is it?"}, image_url("image/png", png)]
    chat(plain_proxy, model, content)
    chat(proxy, model, content)
    without, gated = records
    assert arrived_media(gated) == [("image/png", png)]
    assert gated["raw"] == without["raw"]


@pytest.mark.parametrize("model", MODELS)
def test_an_svg_claimed_as_png_never_arrives(proxy, records, model):
    chat(proxy, model, [{"type": "text", "text": "Look:"}, image_url("image/png", SVG)])
    [record] = records
    assert arrived_media(record) == []
    assert b"<svg" not in record["raw"] and b64(SVG).encode() not in record["raw"]
    assert any("magic_mismatch" in t and "image/svg+xml" in t for t in texts(record)), texts(record)


def test_the_strict_guardrail_refuses_the_request_in_words(proxy, records):
    with pytest.raises(openai.BadRequestError) as caught:
        chat(proxy, "gpt-4o", [image_url("image/png", SVG)], extra_body={"guardrails": ["mediagate-strict"]})
    assert records == []
    assert "magic_mismatch" in str(caught.value) and "image/svg+xml" in str(caught.value)


@pytest.mark.parametrize("model", MODELS)
def test_a_6mb_screenshot_arrives_downsampled_within_the_target_limit(proxy, records, gate, screenshot, model):
    profile = MODELS[model][0]
    chat(proxy, model, [image_url("image/png", screenshot)])
    [record] = records
    [(mime, arrived)] = arrived_media(record)
    expected = gate.admit_bytes(screenshot, "image/png", provider=profile, include_data=True)
    assert expected["resized"] and arrived == base64.b64decode(expected["data"]) and mime == expected["mime"]
    again = gate.admit_bytes(arrived, mime, provider=profile, downsample=False)
    assert again["ok"] and not again["resized"], again


@pytest.mark.parametrize("model", MODELS)
def test_a_pdf_arrives(proxy, records, model):
    chat(proxy, model, [{"type": "text", "text": "Summarise:"},
                        {"type": "file", "file": {"filename": "hello.pdf",
                                                  "file_data": data_url("application/pdf", PDF)}}])
    [record] = records
    assert arrived_media(record) == [("application/pdf", PDF)]


def test_anthropic_messages_through_the_proxy_are_admitted_too(proxy, records):
    """The proxy's own `/v1/messages` endpoint (Anthropic's dialect in, Anthropic's out)."""
    c = anthropic.Anthropic(base_url=proxy.url, api_key=proxy.key, max_retries=0, timeout=120)
    c.messages.create(model="claude-sonnet", max_tokens=16, messages=[{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(SVG)}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(small_png())}}]}])
    [record] = records
    assert arrived_media(record) == [("image/png", small_png())]
    assert any("magic_mismatch" in t for t in texts(record)), texts(record)


def test_the_profile_follows_the_deployments_provider():
    """LiteLLM's provider names to the gate's profiles (in the proxy's environment)."""
    cases = [("anthropic", "claude-x", "anthropic"), ("bedrock", "anthropic.claude-3-7", "anthropic"),
             ("bedrock", "amazon.nova-pro", "openai"), ("vertex_ai", "claude-sonnet", "anthropic"),
             ("vertex_ai", "gemini-2.5-pro", "gemini"), ("gemini", "gemini-2.5-pro", "gemini"),
             ("ollama", "llava", "ollama"), ("openai", "gpt-4o", "openai"), ("groq", "llama", "openai"),
             (None, "whatever", "anthropic")]
    assert in_the_proxys_environment("profile_for_provider", [c[:2] for c in cases]) == [c[2] for c in cases]


def test_the_pre_call_hook_leaves_to_the_wire_the_deployments_it_reads():
    """Which deployments' requests the pre-call hook only judges (the wire admits what LiteLLM
    sends them, in the dialect read there), by LiteLLM's own routing (in the proxy's environment)."""
    cases = [("openai", "gpt-4o", {}, True), ("anthropic", "claude-x", {}, True),
             ("gemini", "gemini-2.5-flash", {}, True), ("vertex_ai_beta", "gemini-2.5-pro", {}, True),
             ("vertex_ai", "gemini-2.5-pro", {}, True), ("vertex_ai", "claude-sonnet-4", {}, True),
             ("vertex_ai", "tuned", {"base_model": "gemini-2.5-flash"}, True),
             ("vertex_ai", "mistral-large-2411", {}, False), ("vertex_ai", "jamba-1.5-mini", {}, False),
             ("vertex_ai", "meta/llama-3.1-405b-instruct-maas", {}, False), ("vertex_ai", "chat-bison", {}, False),
             ("vertex_ai", "gemma/gemma-3-12b-it", {}, False), ("bedrock", "anthropic.claude-3-7", {}, False),
             ("ollama", "llava", {}, False), ("groq", "llama", {}, False), (None, "whatever", {}, False)]
    assert in_the_proxys_environment("read_at_the_wire", [c[:3] for c in cases]) == [c[3] for c in cases]


def in_the_proxys_environment(function: str, calls: list) -> list:
    """What `mediagate_host.litellm_guardrail.FUNCTION` answers each argument list of `calls`,
    run by the proxy's Python (its LiteLLM), as JSON."""
    code = (f"import json, sys; from mediagate_host.litellm_guardrail import {function} as f; "
            "print(json.dumps([f(*c) for c in json.loads(sys.argv[1])]))")
    env = dict(os.environ, PYTHONPATH=str(PY_HOST), LITELLM_LOCAL_MODEL_COST_MAP="True")
    out = subprocess.run([str(LITELLM.parent / "python"), "-c", code, json.dumps(calls)], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# At the wire: LiteLLM downloads URL media after the guardrail's pre-call hook and inlines the
# bytes in the body it builds for the provider; what arrives is asserted.

def served(upstream: Provider, name: str, content_type: str, data: bytes) -> str:
    """A URL on the loopback provider serving `data` (a new one each time: LiteLLM keeps what it
    downloaded by URL)."""
    path = f"/media/{secrets.token_hex(8)}/{name}"
    upstream.files[path] = (content_type, data)
    return upstream.root_url + path


def through_both(plain_proxy, proxy, records: list, model: str, content: list, path: str) -> tuple:
    """What the provider received of one chat sent through the proxy without the guardrail, then
    with it: both at `path`."""
    chat(plain_proxy, model, content)
    chat(proxy, model, content)
    without, gated = records
    assert gated["path"] == without["path"] == path
    return without, gated


def placeholders(record: dict) -> list:
    return [t for t in texts(record) if t.startswith("[mediagate]")]


def test_a_downloaded_svg_claimed_as_png_never_reaches_anthropic(proxy, plain_proxy, upstream, records):
    url = served(upstream, "diagram.png", "image/png", SVG)
    content = [{"type": "text", "text": "Look:"}, {"type": "image_url", "image_url": {"url": url}}]
    without, gated = through_both(plain_proxy, proxy, records, "claude-sonnet", content, "/v1/messages")
    # With no gate the proxy downloads the SVG and sends its bytes to the provider.
    assert b64(SVG).encode() in without["raw"]
    assert arrived_media(gated) == []
    assert b"<svg" not in gated["raw"] and b64(SVG).encode() not in gated["raw"]
    [words] = placeholders(gated)
    assert "image/svg+xml" in words, words


def test_a_downloaded_svg_under_the_strict_guardrail_is_refused_in_words(proxy, upstream, records):
    url = served(upstream, "diagram.png", "image/png", SVG)
    with pytest.raises(openai.BadRequestError) as caught:
        chat(proxy, "claude-sonnet", [{"type": "image_url", "image_url": {"url": url}}],
             extra_body={"guardrails": ["mediagate-strict"]})
    assert records == []
    assert "image/svg+xml" in str(caught.value), str(caught.value)


def test_a_downloaded_pdf_that_is_not_one_never_reaches_openai(proxy, plain_proxy, upstream, records):
    """`file.file_id` with a URL: LiteLLM downloads it and sends it as `file_data`."""
    fake = b"%PDF-1.4\n"
    url = served(upstream, "report.pdf", "application/pdf", fake)
    content = [{"type": "text", "text": "Summarise:"}, {"type": "file", "file": {"file_id": url}}]
    without, gated = through_both(plain_proxy, proxy, records, "gpt-4o", content, "/v1/chat/completions")
    assert arrived_media(without) == [("application/pdf", fake)]
    assert arrived_media(gated) == []
    assert b64(fake).encode() not in gated["raw"]
    [words] = placeholders(gated)
    assert "application/pdf" in words, words


def test_a_downloaded_6mb_screenshot_arrives_fitted_to_anthropic(proxy, upstream, records, gate, screenshot):
    url = served(upstream, "screen.png", "image/png", screenshot)
    chat(proxy, "claude-sonnet", [{"type": "image_url", "image_url": {"url": url}}])
    [record] = records
    [(mime, arrived)] = arrived_media(record)
    again = gate.admit_bytes(arrived, mime, provider="anthropic", downsample=False)
    assert again["ok"] and not again["resized"], again
    assert max(again["width"], again["height"]) <= 2000 and again["base64_len"] <= 5 * 1024 * 1024, again
    expected = gate.admit_bytes(screenshot, "image/png", provider="anthropic", include_data=True)
    assert arrived == base64.b64decode(expected["data"]) and mime == expected["mime"]


# Gemini: LiteLLM sends `generateContent` for a `gemini/` deployment, whether the client spoke
# Gemini to the proxy's own `/v1beta/models/{model}:generateContent` or Chat Completions.

def generate_content(proxy: Proxy, model: str, parts: list) -> httpx.Response:
    """A Gemini-format request to the proxy's Google GenAI route (as a google-genai client sends it)."""
    r = httpx.post(f"{proxy.url}/v1beta/models/{model}:generateContent", timeout=120, trust_env=False,
                   headers={"Authorization": f"Bearer {proxy.key}"},
                   json={"contents": [{"role": "user", "parts": parts}]})
    assert r.status_code == 200, r.text
    return r


def gemini_parts(record: dict) -> list:
    assert record["path"].split("?")[0].endswith((":generateContent", ":streamGenerateContent")), record["path"]
    return [p for c in record["body"]["contents"] for p in c.get("parts", [])]


def gemini_media(record: dict) -> list:
    """`(mime, bytes)` of every inline part the provider received (either spelling)."""
    out = []
    for part in gemini_parts(record):
        inline = part.get("inline_data") or part.get("inlineData")
        if inline is not None:
            mime = inline.get("mime_type") or inline.get("mimeType")
            out.append((mime, base64.b64decode(inline["data"])))
    return out


def gemini_placeholders(record: dict) -> list:
    return [p["text"] for p in gemini_parts(record) if str(p.get("text", "")).startswith("[mediagate]")]


def inline_part(mime: str, data: bytes) -> dict:
    return {"inline_data": {"mime_type": mime, "data": b64(data)}}


def test_an_svg_claimed_as_png_never_reaches_gemini_from_the_gemini_route(proxy, plain_proxy, records):
    parts = [{"text": "Look:"}, inline_part("image/png", SVG)]
    generate_content(plain_proxy, "gemini-flash", parts)
    generate_content(proxy, "gemini-flash", parts)
    without, gated = records
    # With no gate the route passes the client's parts through to the provider.
    assert gemini_media(without) == [("image/png", SVG)]
    assert gemini_media(gated) == []
    assert b"<svg" not in gated["raw"] and b64(SVG).encode() not in gated["raw"]
    [words] = gemini_placeholders(gated)
    assert "magic_mismatch" in words and "image/svg+xml" in words, words


def test_a_gif_in_a_chat_request_never_reaches_gemini(proxy, plain_proxy, records, gate):
    """Chat Completions in, `generateContent` out: Gemini takes no GIF, so what arrives is what
    the gate makes of it under the Gemini profile (converted, or a placeholder)."""
    content = [{"type": "text", "text": "What moves?"}, image_url("image/gif", GIF)]
    chat(plain_proxy, "gemini-flash", content)
    chat(proxy, "gemini-flash", content)
    without, gated = records
    assert gemini_media(without) == [("image/gif", GIF)]
    assert b64(GIF).encode() not in gated["raw"]
    assert all(mime != "image/gif" and not data.startswith(b"GIF8") for mime, data in gemini_media(gated))
    expected = gate.admit_bytes(GIF, "image/gif", provider="gemini", include_data=True)
    if expected["ok"]:
        assert gemini_media(gated) == [(expected["mime"], base64.b64decode(expected["data"]))]
    else:
        assert gemini_media(gated) == []
        [words] = gemini_placeholders(gated)
        assert expected["reason"] in words and "image/gif" in words, words


def test_a_streamed_chat_request_to_gemini_is_judged_too(proxy, records):
    """`stream` makes LiteLLM call `:streamGenerateContent`, another endpoint of the list."""
    answer = "".join(chunk.choices[0].delta.content or "" for chunk in
                     chat(proxy, "gemini-flash", [{"type": "text", "text": "Look:"}, image_url("image/png", SVG)],
                          stream=True) if chunk.choices)
    assert answer == ANSWER
    [record] = records
    assert record["path"].split("?")[0].endswith(":streamGenerateContent"), record["path"]
    assert gemini_media(record) == [] and b64(SVG).encode() not in record["raw"]
    [words] = gemini_placeholders(record)
    assert "image/svg+xml" in words, words


def test_a_good_png_reaches_gemini_byte_for_byte_from_the_gemini_route(proxy, plain_proxy, records):
    png = small_png()
    parts = [{"text": "What is it?"}, inline_part("image/png", png)]
    generate_content(plain_proxy, "gemini-flash", parts)
    generate_content(proxy, "gemini-flash", parts)
    without, gated = records
    assert gemini_media(gated) == [("image/png", png)]
    assert gated["raw"] == without["raw"]


def test_a_good_png_in_a_chat_request_reaches_gemini_byte_for_byte(proxy, plain_proxy, records):
    png = small_png()
    content = [{"type": "text", "text": "What is it?"}, image_url("image/png", png)]
    chat(plain_proxy, "gemini-flash", content)
    chat(proxy, "gemini-flash", content)
    without, gated = records
    assert gemini_media(gated) == [("image/png", png)]
    assert gated["raw"] == without["raw"]


def test_the_strict_guardrail_refuses_a_gemini_route_request_in_words(proxy, records):
    """The Google GenAI route has no pre-call walk: the refusal is the wire's, answered as
    Gemini answers a request it rejects, which the proxy passes on in its words."""
    r = httpx.post(f"{proxy.url}/v1beta/models/gemini-flash:generateContent", timeout=120, trust_env=False,
                   headers={"Authorization": f"Bearer {proxy.key}"},
                   json={"contents": [{"role": "user", "parts": [inline_part("image/png", SVG)]}],
                         "guardrails": ["mediagate-strict"]})
    assert records == []
    assert r.status_code == 400, r.text
    assert "magic_mismatch" in r.text and "image/svg+xml" in r.text, r.text
    assert "INVALID_ARGUMENT" in r.text, r.text
