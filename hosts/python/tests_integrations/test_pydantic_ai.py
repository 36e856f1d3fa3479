"""pydantic-ai (the real, pinned package) with the `MediaGate` capability: an agent on the
OpenAI Chat and Anthropic models, pointed at the loopback provider, given user images and tools that
return images and PDFs. What the provider receives is asserted."""

from __future__ import annotations

import base64

import anthropic
import openai
import pytest
from pydantic_ai import Agent, BinaryContent, DocumentUrl, ToolReturn
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider

from conftest import decoded_data_url
from media import PDF, SVG, b64, small_png
from mediagate_host.pydantic_ai import MediaGate, profile_for_model
from mediagate_host.transport import AsyncGateTransport, MediaRefused

SYSTEMS = ("openai", "anthropic")


def model(system: str, server):
    if system == "openai":
        return OpenAIChatModel("gpt-test", provider=OpenAIProvider(base_url=server.base_url, api_key="test-key"))
    return AnthropicModel("claude-test", provider=AnthropicProvider(base_url=server.root_url, api_key="test-key"))


def tool_call(name: str) -> dict:
    """The loopback provider's Chat Completions answer that calls the tool `name`."""
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": "{}"}}]}


def media_in(record: dict) -> list:
    """`(mime, bytes)` of every image or document the provider received, in order."""
    out = []

    def walk(value):
        if isinstance(value, dict):
            t = value.get("type")
            if t == "image_url":
                out.append(decoded_data_url(value["image_url"]["url"]))
                return
            if t == "file" and "file" in value:
                out.append(decoded_data_url(value["file"]["file_data"]))
                return
            if t in ("image", "document") and isinstance(value.get("source"), dict) and "data" in value["source"]:
                out.append((value["source"]["media_type"], base64.b64decode(value["source"]["data"])))
                return
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(record["body"].get("messages"))
    return out


def texts_in(record: dict) -> str:
    return record["raw"].decode("utf-8")


@pytest.mark.parametrize("system", SYSTEMS)
def test_no_media_arrives_as_without_the_gate(provider, gate, system):
    Agent(model(system, provider)).run_sync("What is 2 + 2?")
    Agent(model(system, provider), capabilities=[MediaGate(gate=gate)]).run_sync("What is 2 + 2?")
    without, with_gate = provider.records
    assert with_gate["raw"] == without["raw"]


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_good_user_image_arrives_unchanged(provider, gate, system):
    png = small_png()
    Agent(model(system, provider), capabilities=[MediaGate(gate=gate)]).run_sync(
        ["What is it?", BinaryContent(png, media_type="image/png")])
    [record] = provider.records
    assert media_in(record) == [("image/png", png)]


@pytest.mark.parametrize("system", SYSTEMS)
def test_an_svg_claimed_as_png_never_arrives(provider, gate, system):
    Agent(model(system, provider), capabilities=[MediaGate(gate=gate)]).run_sync(
        ["Look:", BinaryContent(SVG, media_type="image/png")])
    [record] = provider.records
    assert media_in(record) == []
    raw = texts_in(record)
    assert "<svg" not in raw and b64(SVG) not in raw
    assert "magic_mismatch" in raw and "image/svg+xml" in raw


def test_an_svg_claimed_as_png_raises_when_asked_and_nothing_is_sent(provider, gate):
    agent = Agent(model("anthropic", provider), capabilities=[MediaGate(gate=gate, on_refusal="raise")])
    with pytest.raises(MediaRefused) as caught:
        agent.run_sync(["Look:", BinaryContent(SVG, media_type="image/png")])
    assert provider.records == []
    assert caught.value.refusals[0]["reason"] == "magic_mismatch"


def assert_downsampled(gate, screenshot, arrived_media, profile):
    [(mime, arrived)] = arrived_media
    expected = gate.admit_bytes(screenshot, "image/png", provider=profile, include_data=True)
    assert expected["resized"] and arrived == base64.b64decode(expected["data"]) and mime == expected["mime"]
    assert gate.admit_bytes(arrived, mime, provider=profile, downsample=False)["ok"]


def test_a_6mb_screenshot_from_a_tool_arrives_downsampled(provider, gate, screenshot):
    agent = Agent(model("openai", provider), capabilities=[MediaGate(gate=gate)])

    @agent.tool_plain
    def take_screenshot() -> BinaryContent:
        """The screen, as a PNG."""
        return BinaryContent(screenshot, media_type="image/png")

    provider.replies.append(tool_call("take_screenshot"))
    agent.run_sync("What is on the screen?")
    first, second = provider.records
    assert media_in(first) == []
    assert_downsampled(gate, screenshot, media_in(second), "openai")


def test_a_6mb_user_screenshot_arrives_downsampled_for_claude(provider, gate, screenshot):
    Agent(model("anthropic", provider), capabilities=[MediaGate(gate=gate)]).run_sync(
        ["What is on the screen?", BinaryContent(screenshot, media_type="image/png")])
    [record] = provider.records
    assert_downsampled(gate, screenshot, media_in(record), "anthropic")


def test_a_tools_svg_becomes_a_placeholder_that_names_the_tool(provider, gate):
    agent = Agent(model("openai", provider), capabilities=[MediaGate(gate=gate)])

    @agent.tool_plain
    def fetch_logo() -> BinaryContent:
        """The company logo."""
        return BinaryContent(SVG, media_type="image/png")

    provider.replies.append(tool_call("fetch_logo"))
    agent.run_sync("Show me the logo")
    second = provider.records[1]
    raw = texts_in(second)
    assert media_in(second) == [] and "<svg" not in raw
    assert 'returned by tool \\"fetch_logo\\"' in raw and "magic_mismatch" in raw


def test_a_tool_returns_content_is_admitted_too(provider, gate):
    """`ToolReturn(content=…)` reaches the model as a user prompt part: admitted as one."""
    agent = Agent(model("openai", provider), capabilities=[MediaGate(gate=gate)])
    png = small_png()

    @agent.tool_plain
    def fetch_images() -> ToolReturn:
        """Two images."""
        return ToolReturn(return_value="two images", content=[BinaryContent(SVG, media_type="image/png"),
                                                               BinaryContent(png, media_type="image/png")])

    provider.replies.append(tool_call("fetch_images"))
    agent.run_sync("Show me")
    second = provider.records[1]
    raw = texts_in(second)
    assert media_in(second) == [("image/png", png)]
    assert "<svg" not in raw and "magic_mismatch" in raw


def test_a_pdf_arrives(provider, gate):
    Agent(model("anthropic", provider), capabilities=[MediaGate(gate=gate)]).run_sync(
        ["Summarise:", BinaryContent(PDF, media_type="application/pdf")])
    [record] = provider.records
    assert media_in(record) == [("application/pdf", PDF)]


def test_the_profile_follows_the_model(provider):
    assert profile_for_model(model("openai", provider)) == "openai"
    assert profile_for_model(model("anthropic", provider)) == "anthropic"


def wire_gated(system: str, server, gate):
    """The model with the gate on its own HTTP client: what pydantic-ai sends is judged whole, after
    it has downloaded what it inlines."""
    if system == "openai":
        http = openai.DefaultAsyncHttpxClient(transport=AsyncGateTransport(gate=gate))
        return OpenAIChatModel("gpt-test", provider=OpenAIProvider(base_url=server.base_url, api_key="test-key",
                                                                   http_client=http))
    http = anthropic.DefaultAsyncHttpxClient(transport=AsyncGateTransport(gate=gate))
    return AnthropicModel("claude-test", provider=AnthropicProvider(base_url=server.root_url, api_key="test-key",
                                                                    http_client=http))


def test_at_the_wire_the_request_rules_hold_across_parts(provider, gate):
    """120 images in one Anthropic request: the capability judges each part alone and passes them
    all; the transport on the model's client judges the request, and the 100-image rule holds."""
    images = [BinaryContent(small_png(), media_type="image/png") for _ in range(120)]
    Agent(wire_gated("anthropic", provider, gate)).run_sync(["Look:", *images])
    [record] = provider.records
    content = record["body"]["messages"][0]["content"]
    kinds = [b["type"] for b in content]
    assert len(kinds) == 121 and kinds.count("image") == 100, kinds
    assert kinds[101:] == ["text"] * 20 and "request_limit" in content[-1]["text"]


def test_at_the_wire_what_pydantic_ai_downloads_is_judged(provider, gate):
    """pydantic-ai downloads a `DocumentUrl` for OpenAI Chat and inlines it after every hook: the
    transport on the model's client judges those bytes (an SVG served as a PDF never arrives)."""
    provider.files["/files/report.pdf"] = ("application/pdf", SVG)
    Agent(wire_gated("openai", provider, gate)).run_sync(
        ["Summarise:", DocumentUrl(url=f"{provider.root_url}/files/report.pdf", force_download="allow-local")])
    [record] = provider.records
    assert b64(SVG).encode() not in record["raw"]
    assert "[mediagate]" in texts_in(record) and media_in(record) == []


def test_the_gates_options_reach_it(provider, gate, screenshot):
    """`downsample`, `verify`, `keep_metadata`, `convert`: the same options as the transports."""
    Agent(model("anthropic", provider), capabilities=[MediaGate(gate=gate, downsample=False)]).run_sync(
        ["Look:", BinaryContent(screenshot, media_type="image/png")])
    record = provider.records.pop()
    assert "raw_too_large" in texts_in(record) and media_in(record) == []
    agent = Agent(model("openai", provider), capabilities=[MediaGate(gate=gate, convert=True)])

    @agent.tool_plain
    def draw() -> BinaryContent:
        return BinaryContent(SVG, media_type="image/svg+xml")

    provider.replies.append(tool_call("draw"))
    agent.run_sync("Draw it.")
    assert [mime for mime, _ in media_in(provider.records[-1])] == ["image/png"]
