"""Batch API files made here, byte by byte: OpenAI and Anthropic JSON lines and an Anthropic
`{"requests": [...]}` document, each holding the cases the batch contract names (images that pass,
one to fit, an SVG claimed as PNG, text only, a blank line, a CRLF line, a last line without a line
break, a line that is not UTF-8, an endpoint that takes no media)."""

from __future__ import annotations

import base64
import json
from typing import List

from images import SVG, png


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


#: Fitted to 2000 px a side by the gate's first rule.
WIDE_PNG = png(2400, 40, (20, 120, 220))
SMALL_PNG = png(16, 12, (200, 30, 30))


def _openai_chat(custom_id: str, content: list) -> dict:
    return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "gpt-4o", "messages": [{"role": "user", "content": content}]}}


def _image_url(data: bytes, mime: str = "image/png") -> dict:
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{b64(data)}"}}


def _line(value: dict) -> bytes:
    return json.dumps(value).encode()


def openai_jsonl() -> bytes:
    """Ten physical lines, eight requests: see the comments for what each one is."""
    lines: List[bytes] = [
        _line(_openai_chat("small", [{"type": "text", "text": "What is this?"}, _image_url(SMALL_PNG)])),
        _line(_openai_chat("wide", [_image_url(WIDE_PNG), {"type": "text", "text": "Describe it."}])),
        # An SVG whose data URL claims PNG: the block is refused, the request goes on.
        _line(_openai_chat("svg-as-png", [{"type": "text", "text": "And this?"}, _image_url(SVG)])),
        _line(_openai_chat("text-only", [{"type": "text", "text": "No image here: \u00e9t\u00e9 \u2014 ok"}])),
        b"   ",  # blank: copied, not counted
        _line(_openai_chat("crlf", [{"type": "text", "text": "a CRLF line"}])) + b"\r",  # the \r is the break's
        _line({"custom_id": "embed", "method": "POST", "url": "/v1/embeddings",
               "body": {"model": "text-embedding-3-small", "input": "hello"}}),
        b'{"custom_id": "latin1", "text": "caf\xe9"}',  # not UTF-8: refused by the host
        b"",
        _line(_openai_chat("last", [_image_url(SMALL_PNG)])),  # no line break after it
    ]
    return b"\n".join(lines)


def anthropic_params(content: list) -> dict:
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [{"role": "user", "content": content}]}


def anthropic_image(data: bytes, mime: str = "image/png") -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": b64(data)}}


def anthropic_requests() -> List[dict]:
    return [
        {"custom_id": "small", "params": anthropic_params([anthropic_image(SMALL_PNG), {"type": "text", "text": "Hi"}])},
        {"custom_id": "wide", "params": anthropic_params([anthropic_image(WIDE_PNG)])},
        # Brackets and quotes inside strings: an item is cut at its outer braces, never inside a string.
        {"custom_id": "svg-as-png", "params": anthropic_params([{"type": "text", "text": "a ] } \" [ { \\ text"},
                                                                anthropic_image(SVG)])},
        {"custom_id": "text-only", "params": anthropic_params([{"type": "text", "text": "plain"}])},
        # Not a Message Batches request (no params): refused whole, left out.
        {"custom_id": "no-params"},
        {"custom_id": "last", "params": anthropic_params([anthropic_image(SMALL_PNG)])},
    ]


def anthropic_jsonl() -> bytes:
    return b"\n".join(_line(r) for r in anthropic_requests()) + b"\n"


def anthropic_json_form() -> bytes:
    """The document `POST /v1/messages/batches` takes, pretty-printed: separators with newlines."""
    return (json.dumps({"requests": anthropic_requests()}, indent=2) + "\n").encode()


def long_line_jsonl(length: int) -> bytes:
    """A first line of `length` bytes (a JSON string of `a`s), then a text-only request."""
    head = b'{"custom_id": "long", "text": "'
    tail = b'"}'
    return (head + b"a" * (length - len(head) - len(tail)) + tail + b"\n"
            + _line(_openai_chat("after-long", [{"type": "text", "text": "still judged"}])) + b"\n")
