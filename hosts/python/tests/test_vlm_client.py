"""The OpenAI-compatible streaming client on its own (no component), against the loopback server."""

from __future__ import annotations

import json

import pytest

from conftest import delta, finish
from mediagate_host import Chunk, OpenAICompatibleVlm, VlmError
from mediagate_host.vlm import _SseEvents


def drain(reply):
    out = []
    while (chunk := reply.next_chunk()) is not None:
        out.append(chunk)
    return out


def client(server, **kw):
    kw.setdefault("retries", 0)
    return OpenAICompatibleVlm(base_url=server.base_url, model="m", **kw)


def test_chunks_in_order(vlm_server):
    chunks = drain(client(vlm_server).ask("p", "image/png", "AAAA"))
    assert chunks[:3] == [Chunk("reasoning", "Looking at the pixels. "), Chunk("reasoning", "Small PNG, mostly grey."),
                          Chunk("content", "<think>inline musing")]
    assert "".join(c.text for c in chunks if c.kind == "content").endswith("The image is a tiny grey square.")


def test_request_shape(vlm_server):
    vlm = OpenAICompatibleVlm(base_url=vlm_server.base_url + "/", model="the-model", api_key="k", retries=0)
    drain(vlm.ask("the prompt", "image/webp", "QUJD"))
    body = vlm_server.requests[0]["body"]
    assert vlm_server.requests[0]["path"] == "/v1/chat/completions"
    assert body == {"model": "the-model", "stream": True, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "the prompt"},
        {"type": "image_url", "image_url": {"url": "data:image/webp;base64,QUJD"}}]}]}


def test_no_api_key_no_authorization_header(vlm_server):
    drain(client(vlm_server).ask("p", "image/png", "AAAA"))
    assert "Authorization" not in vlm_server.requests[0]["headers"]


def test_not_configured():
    vlm = OpenAICompatibleVlm(base_url=None)
    assert not vlm.configured
    with pytest.raises(VlmError) as e:
        vlm.ask("p", "image/png", "AAAA")
    assert e.value.kind == "not-configured"


def test_the_reply_is_read_lazily(vlm_server):
    """`ask` returns once the status line is in; the body streams chunk by chunk."""
    vlm_server.hold_before = 2
    reply = client(vlm_server).ask("p", "image/png", "AAAA")
    assert reply.next_chunk() == Chunk("reasoning", "Looking at the pixels. ")
    assert vlm_server.released_in_time is None  # the server is still holding the rest back
    vlm_server.release.set()
    assert drain(reply)[-1] == Chunk("content", "is a tiny grey square.")


@pytest.mark.parametrize("status,body,expected", [
    (401, b'{"error": {"message": "bad key", "type": "auth"}}', "bad key"),
    (400, b'{"error": "image too big"}', "image too big"),
    (404, b'{"detail": "model not found"}', "model not found"),
    (422, b"plain words", "plain words"),
])
def test_refusals_carry_status_and_message(vlm_server, status, body, expected):
    vlm_server.status, vlm_server.error_body = status, body
    with pytest.raises(VlmError) as e:
        client(vlm_server).ask("p", "image/png", "AAAA")
    assert (e.value.kind, e.value.status, e.value.message) == ("refused", status, expected)


def test_5xx_and_429_are_retried_before_the_first_byte(vlm_server):
    vlm_server.status_sequence = [503, 429]
    chunks = drain(client(vlm_server, retries=2).ask("p", "image/png", "AAAA"))
    assert chunks and len(vlm_server.requests) == 3


def test_retries_run_out(vlm_server):
    vlm_server.status = 503
    vlm_server.error_body = b'{"error": {"message": "overloaded"}}'
    with pytest.raises(VlmError) as e:
        client(vlm_server, retries=1).ask("p", "image/png", "AAAA")
    assert (e.value.status, e.value.message) == (503, "overloaded")
    assert len(vlm_server.requests) == 2


def test_4xx_other_than_429_is_not_retried(vlm_server):
    vlm_server.status = 400
    with pytest.raises(VlmError):
        client(vlm_server, retries=3).ask("p", "image/png", "AAAA")
    assert len(vlm_server.requests) == 1


def test_stream_without_done_or_finish_is_malformed(vlm_server):
    vlm_server.events = [delta(content="half")]
    reply = client(vlm_server).ask("p", "image/png", "AAAA")
    assert reply.next_chunk() == Chunk("content", "half")
    with pytest.raises(VlmError) as e:
        reply.next_chunk()
    assert e.value.kind == "malformed-stream"


def test_finish_reason_without_done_is_complete(vlm_server):
    vlm_server.events = [delta(content="whole"), finish()]
    assert drain(client(vlm_server).ask("p", "image/png", "AAAA")) == [Chunk("content", "whole")]


def test_error_event_mid_stream(vlm_server):
    vlm_server.events = [delta(content="a"), {"error": {"message": "context overflow"}}]
    reply = client(vlm_server).ask("p", "image/png", "AAAA")
    reply.next_chunk()
    with pytest.raises(VlmError) as e:
        reply.next_chunk()
    assert e.value.kind == "malformed-stream" and "context overflow" in e.value.message


def test_a_non_streaming_json_answer_is_accepted(vlm_server):
    vlm_server.content_type = "application/json"
    vlm_server.raw_body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "one piece",
                                                               "reasoning_content": "hmm"}}]}).encode()
    assert drain(client(vlm_server).ask("p", "image/png", "AAAA")) == [Chunk("reasoning", "hmm"),
                                                                       Chunk("content", "one piece")]


def test_idle_timeout(vlm_server):
    vlm_server.events = [delta(content="slow"), finish(), "[DONE]"]
    vlm_server.hold_before = 1
    reply = client(vlm_server, idle_timeout=0.3).ask("p", "image/png", "AAAA")
    assert reply.next_chunk() == Chunk("content", "slow")
    with pytest.raises(VlmError) as e:
        reply.next_chunk()
    assert e.value.kind == "timed-out"


def test_sse_parsing():
    lines = [": keep-alive", "event: message", "data: one", "data:two", "", "", "id: 3", "data: three"]
    assert list(_SseEvents(iter(lines))) == ["one\ntwo", "three"]
