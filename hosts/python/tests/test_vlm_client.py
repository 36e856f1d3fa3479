"""The streaming VLM client on its own (no component), against the loopback server: both dialects,
the environment, and the bounds on what a reply may cost."""

from __future__ import annotations

import json

import pytest

import time

from conftest import ANTHROPIC_EVENTS, delta, finish, text_delta
from mediagate_host import facts
from mediagate_host import (AnthropicVlm, Chunk, NoVlm, OpenAICompatibleVlm, SseDecoder, VlmConfigError, VlmError,
                            vlm_from_env)
from mediagate_host import vlm as vlm_module
from mediagate_host.vlm import FALLBACK_KEYS


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
    if status == 404:  # a 404 also names the URL requested (the base URL has its /v1: no hint)
        expected += f" at {vlm_server.base_url}/chat/completions"
    assert (e.value.kind, e.value.status, e.value.message) == ("refused", status, expected)


@pytest.fixture
def short_backoff(monkeypatch):
    """The policy's waits (half a second, doubling) shortened: the tests count attempts, not time."""
    monkeypatch.setattr(vlm_module, "RETRY_INITIAL_BACKOFF_S", 0.01)


def test_the_retry_policy_is_the_rust_hosts():
    assert OpenAICompatibleVlm(base_url="http://x/v1", model="m").retries == facts.VLM_MAX_RETRIES == 2
    assert [vlm_module._backoff(n) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert vlm_module._backoff(20) == facts.VLM_MAX_WAIT_S == 30.0

    class Response:
        def __init__(self, value):
            self.headers = {"retry-after": value}

    assert vlm_module._retry_after(Response("3600")) == facts.VLM_MAX_WAIT_S
    assert vlm_module._retry_after(Response("2")) == 2.0


def test_5xx_and_429_are_retried_before_the_first_byte(vlm_server, short_backoff):
    vlm_server.status_sequence = [503, 429]
    chunks = drain(client(vlm_server, retries=2).ask("p", "image/png", "AAAA"))
    assert chunks and len(vlm_server.requests) == 3


def test_retries_run_out(vlm_server, short_backoff):
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
    decoder = SseDecoder()
    events = decoder.feed(b"\xef\xbb\xbf: keep-alive\nevent: message\ndata: one\ndata:two\n\n\nid: 3\r\nda")
    events += decoder.feed(b"ta: three\r\n\r")
    events += decoder.feed(b"\nevent: x\rdata: four\r\rdata: fi")
    events += decoder.feed("ve \u2603".encode()[:-1])
    events += decoder.feed("\u2603".encode()[-1:])
    events += decoder.finish()
    assert [(e.event, e.data) for e in events] == [("message", "one\ntwo"), ("message", "three"), ("x", "four"),
                                                  ("message", "five \u2603")]


def test_sse_decoder_bounds_one_event_and_refuses_bad_utf8():
    decoder = SseDecoder(max_event_bytes=100)
    for _ in range(50):  # many events, each small: fine
        assert len(decoder.feed(b"data: " + b"x" * 40 + b"\n\n")) == 1
    with pytest.raises(VlmError) as e:  # one line that never ends
        for _ in range(10):
            decoder.feed(b"data: " + b"y" * 30)
    assert e.value.kind == "malformed-stream" and "limit of 100 bytes" in e.value.message
    with pytest.raises(VlmError) as e:  # many lines but no blank line: one event
        SseDecoder(max_event_bytes=100).feed(b"data: 123456789\n" * 10)
    assert "limit of 100 bytes" in e.value.message
    with pytest.raises(VlmError) as e:
        SseDecoder().feed(b"data: \xff\n\n")
    assert "not valid UTF-8" in e.value.message


# ---- the Anthropic dialect -------------------------------------------------------------------


def anthropic(server, **kw):
    kw.setdefault("retries", 0)
    return AnthropicVlm(base_url=server.root_url, model="claude-test", **kw)


def test_anthropic_request_and_chunks(vlm_server):
    vlm_server.events = list(ANTHROPIC_EVENTS)
    chunks = drain(anthropic(vlm_server, api_key="sk-ant-test").ask("the prompt", "image/jpeg", "QUJD"))
    assert chunks == [Chunk("reasoning", "Looking at the pixels. "), Chunk("content", "The image "),
                      Chunk("content", "is a tiny grey square.")]
    request = vlm_server.requests[0]
    assert request["path"] == "/v1/messages"
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert headers["x-api-key"] == "sk-ant-test"
    assert headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers
    assert request["body"] == {"model": "claude-test", "max_tokens": 8192, "stream": True, "messages": [
        {"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "QUJD"}},
            {"type": "text", "text": "the prompt"}]}]}


def test_anthropic_stream_without_message_stop_is_malformed(vlm_server):
    vlm_server.events = [text_delta("half")]
    reply = anthropic(vlm_server).ask("p", "image/png", "AAAA")
    assert reply.next_chunk() == Chunk("content", "half")
    with pytest.raises(VlmError) as e:
        reply.next_chunk()
    assert e.value.kind == "malformed-stream" and "ended before the reply was complete" in e.value.message


def test_anthropic_error_event(vlm_server):
    vlm_server.events = [text_delta("a"), ("error", {"type": "error", "error": {"type": "overloaded_error",
                                                                                 "message": "Overloaded"}})]
    reply = anthropic(vlm_server).ask("p", "image/png", "AAAA")
    reply.next_chunk()
    with pytest.raises(VlmError) as e:
        reply.next_chunk()
    assert e.value.kind == "malformed-stream" and "Overloaded" in e.value.message


def test_anthropic_refusal_carries_the_message(vlm_server):
    vlm_server.status = 401
    vlm_server.error_body = b'{"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}'
    with pytest.raises(VlmError) as e:
        anthropic(vlm_server).ask("p", "image/png", "AAAA")
    assert (e.value.kind, e.value.status, e.value.message) == ("refused", 401, "invalid x-api-key")


# ---- the environment, as the Rust host reads it ------------------------------------------------


def test_from_env_no_url_is_no_vlm():
    assert isinstance(vlm_from_env({facts.ENV_VLM_MODEL: "m"}), NoVlm)


def test_from_env_api_and_key_fallbacks():
    base = {facts.ENV_VLM_URL: "https://api.openai.com/v1", facts.ENV_VLM_MODEL: "m",
            "OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant"}
    vlm = vlm_from_env(base)
    assert (type(vlm), vlm.api, vlm.api_key, vlm.url) == (OpenAICompatibleVlm, "openai", "sk-openai",
                                                         "https://api.openai.com/v1/chat/completions")
    vlm = vlm_from_env({**base, facts.ENV_VLM_API: "Anthropic", facts.ENV_VLM_URL: "https://api.anthropic.com"})
    assert (type(vlm), vlm.api, vlm.api_key, vlm.url) == (AnthropicVlm, "anthropic", "sk-ant",
                                                         "https://api.anthropic.com/v1/messages")
    vlm = vlm_from_env({**base, facts.ENV_VLM_API: "anthropic", facts.ENV_VLM_API_KEY: "sk-mediagate"})
    assert vlm.api_key == "sk-mediagate"
    assert vlm_from_env({facts.ENV_VLM_URL: "http://x", facts.ENV_VLM_MODEL: "m"}).api_key is None
    assert "sk-ant" not in repr(vlm_from_env({**base, facts.ENV_VLM_API: "anthropic"}))


@pytest.mark.parametrize("api,url", [
    ("openai", "https://collector.example/v1"),
    ("openai", "http://127.0.0.1:9/v1"),
    ("openai", "http://api.openai.com/v1"),
    ("openai", "https://api.openai.com:8443/v1"),
    ("openai", "https://api.openai.com.example/v1"),
    ("openai", "https://me@api.openai.com/v1"),
    ("openai", "https://api.anthropic.com"),
    ("anthropic", "https://api.openai.com/v1"),
])
def test_the_vendors_key_goes_only_to_the_vendors_api(api, url):
    env = {facts.ENV_VLM_URL: url, facts.ENV_VLM_MODEL: "m", facts.ENV_VLM_API: api,
           "OPENAI_API_KEY": "sk-openai", "ANTHROPIC_API_KEY": "sk-ant"}
    vlm = vlm_from_env(env)
    assert vlm.api_key is None and vlm.withheld_key == FALLBACK_KEYS[api]
    # The own key variable names this configuration's key: it goes wherever the URL says (over
    # https, or plain http to this machine only).
    if url != "http://api.openai.com/v1":
        assert vlm_from_env({**env, facts.ENV_VLM_API_KEY: "sk-own"}).api_key == "sk-own"


def test_a_repository_url_does_not_collect_the_users_key(vlm_server, monkeypatch):
    """A configuration naming another URL gets no vendor key; the provider's 401 says why."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-openai-env")
    drain(client(vlm_server).ask("p", "image/png", "AAAA"))
    assert "Authorization" not in vlm_server.requests[0]["headers"]
    vlm_server.status = 401
    vlm_server.error_body = b'{"error": {"message": "missing key"}}'
    with pytest.raises(VlmError) as e:
        client(vlm_server).ask("p", "image/png", "AAAA")
    assert "missing key" in e.value.message and "OPENAI_API_KEY" in e.value.message
    assert facts.ENV_VLM_API_KEY in e.value.message


def test_from_env_refuses_what_it_cannot_use():
    with pytest.raises(VlmConfigError) as e:
        vlm_from_env({facts.ENV_VLM_URL: "http://x"})
    assert "no model" in str(e.value) and facts.ENV_VLM_MODEL in str(e.value)
    with pytest.raises(VlmConfigError) as e:
        vlm_from_env({facts.ENV_VLM_URL: "http://x", facts.ENV_VLM_MODEL: "m", facts.ENV_VLM_API: "grok"})
    assert "openai or anthropic" in str(e.value)


def test_the_client_reads_its_key_from_the_environment(vlm_server, monkeypatch):
    monkeypatch.setenv(facts.ENV_VLM_API_KEY, "sk-from-mediagate-env")
    drain(client(vlm_server).ask("p", "image/png", "AAAA"))
    assert vlm_server.requests[0]["headers"]["Authorization"] == "Bearer sk-from-mediagate-env"


def test_the_environments_proxy_is_never_used(vlm_server, monkeypatch):
    """HTTP_PROXY / ALL_PROXY name a listener that would receive the key: it gets nothing."""
    import socket

    trap = socket.socket()
    trap.bind(("127.0.0.1", 0))
    trap.listen(8)
    trap.settimeout(0.2)
    proxy = f"http://127.0.0.1:{trap.getsockname()[1]}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    drain(client(vlm_server, api_key="sk-secret-123").ask("p", "image/png", "AAAA"))
    assert vlm_server.requests[0]["headers"]["Authorization"] == "Bearer sk-secret-123"
    with pytest.raises(socket.timeout):
        trap.accept()
    trap.close()


def test_errors_show_the_url_without_credentials():
    """A connect error names the server, not its user, password or query."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens: connection refused
    vlm = OpenAICompatibleVlm(base_url=f"http://me:pw-secret@127.0.0.1:{port}/v1?key=q-secret", model="m",
                              retries=0)
    with pytest.raises(VlmError) as e:
        vlm.ask("p", "image/png", "AAAA")
    assert e.value.kind == "unreachable" and f"127.0.0.1:{port}/v1" in e.value.message
    assert "secret" not in e.value.message and "me@" not in e.value.message, e.value.message


def test_the_path_is_appended_before_the_query(vlm_server):
    vlm = OpenAICompatibleVlm(base_url=vlm_server.base_url + "?api-version=1", model="m", retries=0)
    assert vlm.url == vlm_server.base_url + "/chat/completions?api-version=1"
    drain(vlm.ask("p", "image/png", "AAAA"))
    assert vlm_server.requests[0]["path"] == "/v1/chat/completions?api-version=1"


@pytest.mark.parametrize("at", range(1990, 2000))
def test_an_error_body_is_redacted_before_it_is_cut(vlm_server, at):
    key = "sk-0123456789abcdef"
    vlm_server.status = 401
    vlm_server.error_body = ("x" * at + key + " and more").encode()
    with pytest.raises(VlmError) as e:
        client(vlm_server, api_key=key).ask("p", "image/png", "AAAA")
    assert "sk-0" not in e.value.message, e.value.message


def test_a_body_cut_by_the_read_bound_loses_a_key_start_at_its_end():
    from mediagate_host.vlm import _provider_message

    assert _provider_message(b"sk-0123", "Unauthorized", "sk-0123456789", whole=False) == "Unauthorized"
    assert _provider_message(b"sk-0123", "Unauthorized", "sk-0123456789", whole=True) == "sk-0123"
    escaped = b'{"error": {"message": "bad key \\u0073k-0123456789"}}'
    assert _provider_message(escaped, "x", "sk-0123456789") == "bad key <redacted>"


def test_the_key_is_redacted_from_errors(vlm_server):
    vlm_server.status = 401
    vlm_server.error_body = b'{"error": {"message": "Incorrect API key provided: sk-secret-123."}}'
    with pytest.raises(VlmError) as e:
        client(vlm_server, api_key="sk-secret-123").ask("p", "image/png", "AAAA")
    assert "sk-secret-123" not in str(e.value) and "<redacted>" in e.value.message


# ---- a base URL without its /v1 -----------------------------------------------------------------


def test_a_404_names_the_url_and_hints_at_the_missing_v1(vlm_server):
    vlm_server.status, vlm_server.error_body = 404, b""
    vlm = OpenAICompatibleVlm(base_url=vlm_server.root_url, model="m", retries=0)
    with pytest.raises(VlmError) as e:
        vlm.ask("p", "image/png", "AAAA")
    assert e.value.status == 404
    assert e.value.message == (f"Not Found at {vlm_server.root_url}/chat/completions — "
                               "does the base URL need a /v1 path segment?")


def test_an_anthropic_404_names_the_url(vlm_server):
    vlm_server.status, vlm_server.error_body = 404, b'{"error": {"message": "Not Found"}}'
    with pytest.raises(VlmError) as e:
        AnthropicVlm(base_url=vlm_server.base_url, model="m", retries=0).ask("p", "image/png", "AAAA")
    assert f"at {vlm_server.root_url}/v1/v1/messages" in e.value.message
    assert "mediagate adds /v1/messages" in e.value.message


# ---- what a reply may cost ---------------------------------------------------------------------


def endless(piece: bytes, pause: float = 0.005):
    def write(wfile):
        while True:
            wfile.write(piece)
            wfile.flush()
            time.sleep(pause)

    return write


def test_a_line_that_never_ends_is_an_error_with_memory_bounded(vlm_server):
    """The server sends one `data:` line forever, never a newline. Unbounded line buffering would
    wait for ever (and grow without end); the decoder stops at `max_event_bytes`."""
    import tracemalloc

    vlm_server.writer = endless(b"x" * 4096, pause=0)
    reply = client(vlm_server, max_event_bytes=256 << 10).ask("p", "image/png", "AAAA")
    tracemalloc.start()
    try:
        with pytest.raises(VlmError) as e:
            reply.next_chunk()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert e.value.kind == "malformed-stream"
    assert "exceeded the limit of 262144 bytes" in e.value.message
    assert peak < 4 << 20, f"{peak} bytes allocated while reading one bounded line"


def test_an_event_that_never_ends_is_an_error(vlm_server):
    """Lines, but never the blank line that ends an event."""
    vlm_server.writer = endless(b"data: " + b"y" * 1000 + b"\n", pause=0)
    reply = client(vlm_server, max_event_bytes=64 << 10).ask("p", "image/png", "AAAA")
    with pytest.raises(VlmError) as e:
        reply.next_chunk()
    assert e.value.kind == "malformed-stream" and "limit of 65536 bytes" in e.value.message


def test_a_reply_that_never_ends_hits_the_whole_reply_deadline(vlm_server):
    """Text arrives steadily, for ever: the idle timeout never fires, the whole-reply one does."""
    event = ("data: " + __import__("json").dumps(delta(content="more "))).encode() + b"\n\n"
    vlm_server.writer = endless(event, pause=0.01)
    reply = client(vlm_server, max_reply_time=0.5).ask("p", "image/png", "AAAA")
    with pytest.raises(VlmError) as e:
        while True:
            assert reply.next_chunk() == Chunk("content", "more ")
    assert e.value.kind == "timed-out"
    assert e.value.message == "the reply took longer than 0.5 s in all"


def test_pings_without_text_do_not_keep_a_reply_alive(vlm_server):
    vlm_server.writer = endless(b": ping\n\n", pause=0.02)
    reply = client(vlm_server, idle_timeout=0.3).ask("p", "image/png", "AAAA")
    with pytest.raises(VlmError) as e:
        reply.next_chunk()
    assert e.value.kind == "timed-out" and e.value.message == "no text for 0.3 s while streaming the reply"


def test_the_whole_reply_deadline_ends_a_read_that_waits(vlm_server):
    """The server sends the headers, then nothing. The read waits on the socket (idle timeout 60 s);
    the watchdog shuts the socket at the whole-reply deadline, so the error names that deadline."""
    vlm_server.writer = lambda wfile: vlm_server.release.wait(30)
    reply = client(vlm_server, idle_timeout=60, max_reply_time=0.5).ask("p", "image/png", "AAAA")
    with pytest.raises(VlmError) as e:
        reply.next_chunk()
    assert e.value.kind == "timed-out"
    assert e.value.message == "the reply took longer than 0.5 s in all"


def test_the_callers_deadline_bounds_the_reply(vlm_server):
    vlm_server.writer = lambda wfile: vlm_server.release.wait(30)
    reply = client(vlm_server, idle_timeout=60).ask("p", "image/png", "AAAA", deadline=time.monotonic() + 0.5)
    with pytest.raises(VlmError) as e:
        reply.next_chunk()
    assert e.value.message == "the call's wall-clock deadline passed while the reply streamed"


def test_a_reply_that_is_not_an_event_stream_is_refused(vlm_server):
    vlm_server.content_type = "text/html"
    vlm_server.raw_body = b"<html>login page</html>"
    with pytest.raises(VlmError) as e:
        client(vlm_server).ask("p", "image/png", "AAAA")
    assert e.value.kind == "malformed-stream" and "text/html" in e.value.message


def test_a_reply_stopped_at_the_output_limit_ends_with_stopped_early(vlm_server):
    # finish_reason "length" is a cut reply, never one handed out as if complete.
    length = finish()
    length["choices"][0]["finish_reason"] = "length"
    vlm_server.events = [delta(content="half of it"), length]
    reply = client(vlm_server).ask("p", "image/png", "AAAA")
    assert reply.next_chunk() == Chunk("content", "half of it")
    with pytest.raises(VlmError) as e:
        reply.next_chunk()
    assert e.value.kind == "stopped-early"
    assert "output limit" in e.value.message and "length" in e.value.message


def test_an_anthropic_reply_stopped_at_max_tokens_ends_with_stopped_early(vlm_server):
    vlm_server.events = [e for e in ANTHROPIC_EVENTS if e[0] != "message_stop"] + [
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    reply = anthropic(vlm_server).ask("p", "image/png", "AAAA")
    with pytest.raises(VlmError) as e:
        drain(reply)
    assert e.value.kind == "stopped-early" and "max_tokens" in e.value.message


def test_an_api_key_is_never_sent_over_plain_http_to_another_host():
    for url in ("http://192.0.2.1/v1", "http://example.com/v1", "http://[2001:db8::1]/v1"):
        with pytest.raises(VlmConfigError) as e:
            OpenAICompatibleVlm(base_url=url, model="m", api_key="sk-secret-key")
        assert "clear text" in str(e.value) and "use https" in str(e.value) and "sk-secret" not in str(e.value)
    for url in ("https://192.0.2.1/v1", "http://127.0.0.1:9/v1", "http://localhost:9", "http://[::1]:9/v1"):
        OpenAICompatibleVlm(base_url=url, model="m", api_key="sk-secret-key")
    OpenAICompatibleVlm(base_url="http://192.0.2.1/v1", model="m")  # no key, nothing secret
