"""The gate in pydantic-ai: a capability that admits every image and PDF the model is about to see
— the user's (`BinaryContent` in a prompt) and the tools' (`BinaryContent` returned by a tool,
alone, in a list, or in a `ToolReturn`'s `content`) — under the profile of the model that will
serve the request.

    from pydantic_ai import Agent
    from mediagate_host.pydantic_ai import MediaGate

    agent = Agent("anthropic:claude-sonnet-4-5", capabilities=[MediaGate()])

It runs in `prepare_model_request`, the hook pydantic-ai calls before each attempt once the serving
model is known (so a fallback model gets its own limits), and changes what that request carries,
not the run's history. The bytes are admitted by the component: a tool's media through the
tool-result seat (its placeholder names the tool), a prompt's through `admit-request`. Results are
kept per bytes and profile, so an image is judged once however many steps it stays in the history.
`ImageUrl` / `DocumentUrl` (fetched by the provider) are left as they are.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import BinaryContent, ModelRequest, ToolReturnPart, UserPromptPart

from .host import Mediagate
from .transport import REFUSAL_MODES, MediaRefused, admit_json, gate_options, placeholder_words, shared_gate

#: pydantic-ai `Model.system` names whose per-image limits are another profile's than `openai`.
SYSTEM_PROFILES = {"anthropic": "anthropic", "google-gla": "gemini", "google-vertex": "gemini", "google": "gemini",
                   "ollama": "ollama"}

#: Judgements kept (per bytes, media type, origin and profile).
CACHE_ENTRIES = 256


def profile_for_model(model: Any) -> str:
    """The gate profile of a pydantic-ai model: by its `system`; Claude on Bedrock or Vertex takes
    Anthropic's; anything else (OpenAI and the OpenAI-compatible) OpenAI's."""
    system = str(getattr(model, "system", "") or "")
    name = str(getattr(model, "model_name", "") or "").lower()
    if system in ("bedrock", "google-vertex") and "claude" in name:
        return "anthropic"
    return SYSTEM_PROFILES.get(system, "openai")


def _is_media(item: Any) -> bool:
    return isinstance(item, BinaryContent) and (item.media_type.startswith("image/")
                                                or item.media_type == "application/pdf")


def _block(item: BinaryContent) -> Dict[str, Any]:
    kind = "document" if item.media_type == "application/pdf" else "image"
    return {"type": kind, "source": {"type": "base64", "media_type": item.media_type,
                                     "data": base64.b64encode(item.data).decode("ascii")}}


def _item(block: Dict[str, Any], original: BinaryContent) -> Any:
    """An admitted block back as pydantic-ai content: bytes as `BinaryContent` (the original's
    identifier and vendor metadata kept), a placeholder as its text."""
    if block.get("type") == "text":
        return block["text"]
    source = block["source"]
    data = base64.b64decode(source["data"])
    if data == original.data and source["media_type"] == original.media_type:
        return original
    return BinaryContent(data, media_type=source["media_type"], identifier=original.identifier,
                         vendor_metadata=original.vendor_metadata)


@dataclass
class MediaGate(AbstractCapability[Any]):
    """`gate`: the `Mediagate` (default: `transport.shared_gate()`); `profile`: the per-image limits
    (`anthropic`, `openai`, `gemini`, `ollama`; default: the serving model's); `on_refusal`:
    `"placeholder"` (a refused image or PDF becomes the gate's words, in its place) or `"raise"`
    (`MediaRefused` out of the run, nothing sent); `downsample`, `verify`, `keep_metadata`,
    `convert`: as the transports take them (`transport.GATE_OPTIONS`; default: the gate's)."""

    gate: Optional[Mediagate] = None
    profile: Optional[str] = None
    on_refusal: str = "placeholder"
    downsample: Optional[bool] = None
    verify: Optional[str] = None
    keep_metadata: Optional[bool] = None
    convert: Optional[bool] = None
    _cache: "OrderedDict[Tuple[str, ...], List[Any]]" = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def options(self) -> Dict[str, Any]:
        """The gate's options this capability names (the rest are the gate's defaults)."""
        return gate_options(downsample=self.downsample, verify=self.verify, keep_metadata=self.keep_metadata,
                            convert=self.convert)

    def __post_init__(self) -> None:
        if self.on_refusal not in REFUSAL_MODES:
            raise ValueError(f"on_refusal must be one of {REFUSAL_MODES}")
        if self.profile is not None:
            providers = (self.gate or shared_gate()).providers
            if self.profile not in providers:
                raise ValueError(f"profile must be one of {providers}")

    @classmethod
    def get_serialization_name(cls) -> Optional[str]:
        return None  # holds a live gate: not spec-serialisable

    async def prepare_model_request(self, ctx: Any, request_context: Any) -> Any:
        profile = self.profile or profile_for_model(request_context.model)
        # The gate works for up to seconds on a large image: off the event loop.
        request_context.messages = await asyncio.to_thread(self.admit_messages, list(request_context.messages),
                                                           profile)
        return request_context

    def admit_messages(self, messages: List[Any], profile: str) -> List[Any]:
        """The messages with every image and PDF of their requests admitted (new message and part
        objects where something changed; the history's own are left as they are)."""
        out = []
        for message in messages:
            if isinstance(message, ModelRequest):
                parts = [self._admit_part(p, profile) for p in message.parts]
                if any(new is not old for new, old in zip(parts, message.parts)):
                    message = dataclasses.replace(message, parts=parts)
            out.append(message)
        return out

    def _admit_part(self, part: Any, profile: str) -> Any:
        if isinstance(part, ToolReturnPart):
            origin = ("tool", part.tool_name)
        elif isinstance(part, UserPromptPart):
            origin = ("user", "")
        else:
            return part
        content = part.content
        items = list(content) if isinstance(content, (list, tuple)) else [content]
        media = [i for i in items if _is_media(i)]
        if not media:
            return part
        admitted = iter(self._admit_items(media, origin, profile))
        new_items = [next(admitted) if _is_media(i) else i for i in items]
        if all(a is b for a, b in zip(new_items, items)):
            return part
        new_content = new_items if isinstance(content, (list, tuple)) else new_items[0]
        return dataclasses.replace(part, content=new_content)

    def _admit_items(self, media: List[BinaryContent], origin: Tuple[str, str], profile: str) -> List[Any]:
        digest = hashlib.sha256()
        for m in media:
            digest.update(hashlib.sha256(m.data).digest() + m.media_type.encode() + b"\0")
        key = (digest.hexdigest(), origin[0], origin[1], profile, self.on_refusal, repr(sorted(self.options.items())))
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return [_item(b, m) for b, m in zip(self._cache[key], media)]
        blocks = self._admit_blocks([_block(m) for m in media], origin, profile)
        with self._lock:
            self._cache[key] = blocks
            while len(self._cache) > CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return [_item(b, m) for b, m in zip(blocks, media)]

    def _admit_blocks(self, blocks: List[Dict[str, Any]], origin: Tuple[str, str], profile: str) -> List[Any]:
        gate = self.gate or shared_gate()
        if origin[0] == "user":
            request = json.dumps({"messages": [{"role": "user", "content": blocks}]})
            admitted = admit_json(gate, "anthropic", request, provider=profile, on_refusal=self.on_refusal,
                                  **self.options)
            return blocks if admitted is None else json.loads(admitted)["messages"][0]["content"]
        report = gate.admit_tool_result(origin[1], blocks, provider=profile, **self.options)
        content = report["content"]
        if report["refused"] and (self.on_refusal == "raise" or not isinstance(content, list)
                                  or len(content) != len(blocks)):
            refusals = [{"path": r["path"], "reason": r["reason"],
                         "message": placeholder_words(content, r["path"])} for r in report["refused"]]
            raise MediaRefused("tool result", refusals, report)
        return content

