"""pydantic-ai as a front end of the wire suite: each prompt of a manifest run twice by an agent on
the model named (OpenAI Chat or Anthropic) pointed at the loopback provider, first without the gate,
then as docs/integrations.md puts it ("at the wire": the MediaGate capability, and the transport
on the model's own HTTP client). The provider records both requests, in this order; the suite
compares the second with the first as `mediagate admit-request` writes it.

    python pydantic_ai_wire.py MANIFEST.json
    # {"provider": URL, "prompts": [{"name", "system",
    #   "parts": [{"text"} | {"file", "media_type"} | {"image_url"} | {"document_url"}]}]}

A URL part is pydantic-ai's to download (`force_download`, 'allow-local' since the media are served
from 127.0.0.1), so what it fetched is in the body the transport judges.
"""

import json
import sys

from anthropic import DefaultAsyncHttpxClient as AnthropicHttpx
from openai import DefaultAsyncHttpxClient as OpenAIHttpx
from pydantic_ai import Agent, BinaryContent, DocumentUrl, ImageUrl
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider

from mediagate_host.pydantic_ai import MediaGate
from mediagate_host.transport import AsyncGateTransport


def model(system: str, url: str, gated: bool):
    if system == "openai":
        http = OpenAIHttpx(transport=AsyncGateTransport()) if gated else OpenAIHttpx()
        return OpenAIChatModel("gpt-wire", provider=OpenAIProvider(base_url=url + "/v1", api_key="test", http_client=http))
    http = AnthropicHttpx(transport=AsyncGateTransport()) if gated else AnthropicHttpx()
    return AnthropicModel("claude-wire", provider=AnthropicProvider(base_url=url, api_key="test", http_client=http))


def prompt(parts):
    out = []
    for part in parts:
        if "text" in part:
            out.append(part["text"])
        elif "image_url" in part:
            out.append(ImageUrl(part["image_url"], force_download="allow-local"))
        elif "document_url" in part:
            out.append(DocumentUrl(part["document_url"], force_download="allow-local"))
        else:
            with open(part["file"], "rb") as f:
                out.append(BinaryContent(f.read(), media_type=part["media_type"]))
    return out


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        manifest = json.load(f)
    for p in manifest["prompts"]:
        for gated in (False, True):
            agent = Agent(model(p["system"], manifest["provider"], gated),
                          capabilities=[MediaGate()] if gated else [])
            agent.run_sync(prompt(p["parts"]))
            print(json.dumps({"name": p["name"], "gated": gated}), flush=True)


if __name__ == "__main__":
    main()
