"""The host's VLM capability: a streaming client for OpenAI-compatible `/chat/completions` and
Anthropic `/v1/messages` (the two dialects of the Rust host's `lib/src/vlm/`).

The component imports `mediagate:gate/vlm`: `configured()`, `ask(prompt, image)` returning a `reply`
resource, and `reply.next-chunk()`. This module is that capability in plain Python (no wasmtime
here), so it can be used and tested on its own:

    vlm = OpenAICompatibleVlm(base_url="http://127.0.0.1:8080/v1", model="qwen2.5-vl")
    reply = vlm.ask("What is in this image?", "image/png", base64_data)
    while (chunk := reply.next_chunk()) is not None:
        print(chunk.kind, chunk.text)

`ask` sends the request and waits for the status line, so a refusal (HTTP 4xx/5xx) is reported by
`ask`; the body is read lazily, one chunk per `next_chunk` call. What a reply may cost is bounded:
one SSE event (a line with no newline included) is at most `max_event_bytes`, a reply streams for at
most `max_reply_time` seconds in all, and `idle_timeout` seconds without text end it.
"""

from __future__ import annotations

import codecs
import json
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator, List, Mapping, Optional, Tuple

import httpx

from . import facts

ENV_URL = facts.ENV_VLM_URL
ENV_MODEL = facts.ENV_VLM_MODEL
ENV_API = facts.ENV_VLM_API
ENV_API_KEY = facts.ENV_VLM_API_KEY
#: The key each API falls back to when `ENV_API_KEY` is not set — only for that
#: vendor's own API (`VENDOR_HOSTS`, over https on its standard port; see `vendor_key_variable`).
FALLBACK_KEYS = {"openai": facts.ENV_OPENAI_API_KEY, "anthropic": facts.ENV_ANTHROPIC_API_KEY}
VENDOR_HOSTS = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}
APIS = ("openai", "anthropic")

#: Chunk kinds, as the WIT enum `chunk-kind` spells them.
CONTENT = "content"
REASONING = "reasoning"

_ERROR_BODY_CAP = facts.VLM_MAX_ERROR_BODY_BYTES
_MESSAGE_CAP = 2000
#: The Rust host's retry policy (facts.py): the first wait, doubled each retry, and the bound on one
#: wait, whatever `Retry-After` asks. Module attributes so that a test may shorten them.
RETRY_INITIAL_BACKOFF_S = facts.VLM_INITIAL_BACKOFF_S
RETRY_MAX_WAIT_S = facts.VLM_MAX_WAIT_S
#: Longest wait for an error body (or a non-streamed answer).
_ERROR_BODY_WAIT_S = facts.VLM_ERROR_BODY_WAIT_S
#: Enough room for a full transcription of a dense screenshot (the Rust host's value).
ANTHROPIC_MAX_TOKENS = 8192
ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True)
class Chunk:
    """One piece of a streamed reply: `kind` is `"content"` or `"reasoning"`."""

    kind: str
    text: str


class VlmError(Exception):
    """A VLM failure, one of the WIT `vlm-error` cases.

    `kind` is `not-configured`, `unreachable`, `refused`, `timed-out`, `malformed-stream` or
    `stopped-early` (the model ended before its reply was complete: its output limit, a filter);
    `status` is the HTTP status for `refused`, else `None`.
    """

    KINDS = ("not-configured", "unreachable", "refused", "timed-out", "malformed-stream", "stopped-early")

    def __init__(self, kind: str, message: str, status: Optional[int] = None):
        if kind not in self.KINDS:
            raise ValueError(f"unknown vlm-error kind {kind!r}")
        self.kind = kind
        self.message = message
        self.status = status
        super().__init__(f"{kind}: HTTP {status}: {message}" if status is not None else f"{kind}: {message}")


class VlmConfigError(ValueError):
    """The environment names a VLM but not completely (no model, an unknown API)."""


class Reply:
    """A reply being streamed; `next_chunk()` returns the next `Chunk`, or `None` when complete."""

    def next_chunk(self) -> Optional[Chunk]:  # pragma: no cover - interface
        raise NotImplementedError

    def ready_text(self, kind: str, max_chars: int) -> str:
        """Text of `kind` that follows the last chunk and is already here (no waiting), up to about
        `max_chars` characters, taken out of the reply. The host sends it to the guest with that
        chunk: each crossing of the sandbox boundary costs wasmtime-py far more than the text does.
        A reply that cannot tell returns ""."""
        return ""

    def close(self) -> None:
        pass


class Vlm:
    """The interface the host needs from a VLM client (duck-typed; subclassing is optional).

    `ask` may take a keyword `deadline` (a `time.monotonic()` instant): the host passes the call's
    wall-clock deadline to clients that accept it."""

    @property
    def configured(self) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def ask(self, prompt: str, mime: str, data_base64: str) -> Reply:  # pragma: no cover - interface
        raise NotImplementedError


class NoVlm(Vlm):
    """A deployment with no VLM registered: `configured` is false and `ask` is never reached."""

    @property
    def configured(self) -> bool:
        return False

    def ask(self, prompt: str, mime: str, data_base64: str, deadline: Optional[float] = None) -> Reply:
        raise VlmError("not-configured", "no vision model is configured")


def vendor_key_variable(api: str, url: Optional[str]) -> Optional[str]:
    """The vendor's key variable that may stand in for `ENV_API_KEY` at `url`: only the
    vendor's own API over https on its standard port, no user or password in the URL (the Rust
    host's rule). Any other URL gets a key only from `ENV_API_KEY` or `api_key=`."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit((url or "").strip())
        port = parts.port
    except ValueError:
        return None
    ok = (parts.scheme.lower() == "https" and (parts.hostname or "") == VENDOR_HOSTS.get(api)
          and port is None and parts.username is None and parts.password is None)
    return FALLBACK_KEYS[api] if ok else None


def shown_url(url: str) -> str:
    """A URL as it may be shown: no user, password, query or fragment (where credentials hide)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        netloc = host if parts.port is None else f"{host}:{parts.port}"
    except ValueError:
        return "the configured URL"
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")).rstrip("/")


def _redact_then_cut(text: str, key: Optional[str], whole: bool) -> str:
    """`text` with the key replaced, and, when `text` is not the whole body (it was cut where the
    reading stopped), any start of the key at its end dropped: no part of a key survives a cut."""
    if not key or len(key) < 4:
        return text
    text = text.replace(key, "<redacted>")
    if not whole:
        for n in range(len(key) - 1, 0, -1):
            if text.endswith(key[:n]):
                return text[:-n]
    return text


def _clip(text: str, cap: int = _MESSAGE_CAP) -> str:
    text = text.strip()
    return text if len(text) <= cap else text[:cap] + "…"


def _provider_message(body: bytes, reason: str, api_key: Optional[str] = None, whole: bool = True) -> str:
    """The provider's own words from an error body (OpenAI `{"error": {"message"}}` and kin), with
    the key redacted before anything is cut (`whole`: the body was read to its end)."""
    text = _redact_then_cut(body.decode("utf-8", errors="replace"), api_key, whole)

    def words(m: str) -> str:
        # A JSON string unescaped can spell the key again (`\u0073k-…`).
        return _clip(_redact_then_cut(m, api_key, True))

    try:
        doc = json.loads(text)
    except ValueError:
        return _clip(text) or reason
    if isinstance(doc, dict):
        err = doc.get("error")
        if isinstance(err, dict):
            for key in ("message", "msg", "detail"):
                if isinstance(err.get(key), str) and err[key].strip():
                    return words(err[key])
        if isinstance(err, str) and err.strip():
            return words(err)
        for key in ("message", "detail"):
            if isinstance(doc.get(key), str) and doc[key].strip():
                return words(doc[key])
    return _clip(text) or reason


# --------------------------------------------------------------------------------------------
# Server-sent events, bounded


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str


_BOM = "\ufeff"


class SseDecoder:
    """Incremental SSE parsing (the WHATWG event-stream rules) with host memory bounded.

    `feed(bytes)` returns the events completed by those bytes. Everything since the last blank line
    (an event boundary) is counted, so one event — or one line that never ends — longer than
    `max_event_bytes` raises `VlmError("malformed-stream")` instead of being buffered. Bytes that are
    not UTF-8 are refused at once; a leading byte-order mark is dropped.
    """

    def __init__(self, max_event_bytes: int = facts.VLM_MAX_EVENT_BYTES):
        self.max_event_bytes = max_event_bytes
        self._utf8 = codecs.getincrementaldecoder("utf-8")("strict")
        self._line = ""  # the unfinished line
        self._after_cr = False
        self._started = False
        self._since_boundary = 0  # bytes since the last blank line
        self._event = ""
        self._data: List[str] = []

    def feed(self, raw: bytes) -> List[SseEvent]:
        self._since_boundary += len(raw)
        try:
            text = self._utf8.decode(raw)
        except UnicodeDecodeError as e:
            raise VlmError("malformed-stream", "the stream is not valid UTF-8") from e
        if not self._started:
            self._line += text
            while self._line.startswith(_BOM):
                self._line = self._line[1:]
            if not self._line:
                return []
            self._started = True
            text, self._line = self._line, ""
        events: List[SseEvent] = []
        start = 0
        i = 0
        n = len(text)
        while i < n:
            c = text[i]
            if c == "\n" and self._after_cr:  # the LF of a CRLF
                self._after_cr = False
                start = i = i + 1
                continue
            self._after_cr = c == "\r"
            if c == "\r" or c == "\n":
                line = self._line + text[start:i]
                self._line = ""
                self._on_line(line, events)
                start = i + 1
            i += 1
        self._line += text[start:]
        if self._since_boundary > self.max_event_bytes:
            raise VlmError("malformed-stream",
                           f"one event exceeded the limit of {self.max_event_bytes} bytes (max_event_bytes) "
                           "without ending")
        return events

    def _on_line(self, line: str, events: List[SseEvent]) -> None:
        if line == "":
            if self._data:
                events.append(SseEvent(self._event or "message", "\n".join(self._data)))
            self._event, self._data = "", []
            # What is still unparsed belongs to the next event.
            self._since_boundary = 0
            return
        if line.startswith(":"):
            return  # comment / keep-alive
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        # `id` and `retry` carry nothing a VLM stream needs.

    def finish(self) -> List[SseEvent]:
        """The end of the stream: an event not followed by a blank line still counts."""
        events: List[SseEvent] = []
        if self._line:
            self._on_line(self._line, events)
            self._line = ""
        if self._data:
            events.append(SseEvent(self._event or "message", "\n".join(self._data)))
            self._data = []
        return events


def _sse_data(lines: Iterator[str]) -> Iterator[str]:
    """The `data` of each event in a sequence of lines (for tests and simple uses)."""
    decoder = SseDecoder()
    for line in lines:
        for event in decoder.feed((line + "\n").encode("utf-8")):
            yield event.data
    for event in decoder.finish():
        yield event.data


# --------------------------------------------------------------------------------------------
# Dialects: what each event means


class _Dialect:
    #: Why the model stopped before its reply was complete (its output limit, a filter), once the
    #: stream said so; the reply then ends with a `stopped-early` error after its text.
    stopped_early: Optional[str] = None

    #: Whether the stream may end without an explicit end marker.
    def may_end_without_marker(self) -> bool:
        return False

    def on_event(self, event: SseEvent) -> Tuple[List[Chunk], bool]:
        """The chunks one event carries, and whether it ends the reply."""
        raise NotImplementedError


class _OpenAIDialect(_Dialect):
    def __init__(self) -> None:
        self.finished = False

    def may_end_without_marker(self) -> bool:
        # Some servers omit `[DONE]`; a finish_reason already said the reply is whole.
        return self.finished

    def on_event(self, event: SseEvent) -> Tuple[List[Chunk], bool]:
        data = event.data.strip()
        if data == "[DONE]":
            return [], True
        if not data:
            return [], False
        try:
            doc = json.loads(data)
        except ValueError:
            raise VlmError("malformed-stream", f"a data line is not JSON: {_clip(data, 200)!r}") from None
        if not isinstance(doc, dict):
            raise VlmError("malformed-stream", f"a data line is not a JSON object: {_clip(data, 200)!r}")
        if "error" in doc:
            err = doc["error"]
            message = err.get("message") if isinstance(err, dict) else err
            raise VlmError("malformed-stream", f"the provider reported an error mid-stream: {_clip(str(message))}")
        chunks: List[Chunk] = []
        choices = doc.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, dict):
                continue
            if choice.get("finish_reason"):
                self.finished = True
                reason = choice.get("finish_reason")
                if reason == "length":
                    self.stopped_early = 'the model reached its output limit (finish_reason "length")'
                elif reason == "content_filter":
                    self.stopped_early = "the provider's content filter stopped the reply (finish_reason \"content_filter\")"
            delta = choice.get("delta") or choice.get("message") or {}
            if not isinstance(delta, dict):
                continue
            for key in ("reasoning", "reasoning_content"):
                text = delta.get(key)
                if isinstance(text, str) and text:
                    chunks.append(Chunk(REASONING, text))
            text = delta.get("content")
            if isinstance(text, str) and text:
                chunks.append(Chunk(CONTENT, text))
        return chunks, False


class _AnthropicDialect(_Dialect):
    """`content_block_delta` with `text_delta` or `thinking_delta`; `message_stop` ends; `error` reports."""

    def on_event(self, event: SseEvent) -> Tuple[List[Chunk], bool]:
        def parse() -> dict:
            try:
                doc = json.loads(event.data)
            except ValueError:
                raise VlmError("malformed-stream", f"a {event.event} event is not JSON: {_clip(event.data, 200)!r}") \
                    from None
            return doc if isinstance(doc, dict) else {}

        if event.event == "content_block_delta":
            delta = parse().get("delta")
            if not isinstance(delta, dict):
                return [], False
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str) and delta["text"]:
                return [Chunk(CONTENT, delta["text"])], False
            if delta.get("type") == "thinking_delta" and isinstance(delta.get("thinking"), str) and delta["thinking"]:
                return [Chunk(REASONING, delta["thinking"])], False
            return [], False
        if event.event == "message_delta":
            delta = parse().get("delta")
            reason = delta.get("stop_reason") if isinstance(delta, dict) else None
            if reason == "max_tokens":
                self.stopped_early = 'the model reached its output limit (stop_reason "max_tokens")'
            elif reason == "model_context_window_exceeded":
                self.stopped_early = 'the model ran out of context window (stop_reason "model_context_window_exceeded")'
            elif reason == "refusal":
                self.stopped_early = "the provider's safety filter stopped the reply (stop_reason \"refusal\")"
            return [], False
        if event.event == "message_stop":
            return [], True
        if event.event == "error":
            err = parse().get("error")
            message = err.get("message") if isinstance(err, dict) else None
            raise VlmError("malformed-stream",
                           f"the provider reported an error mid-stream: {_clip(str(message or 'unknown error'))}")
        # message_start, content_block_start/stop, ping, and future events.
        return [], False


# --------------------------------------------------------------------------------------------
# The reply stream


class _StreamReply(Reply):
    """An SSE reply read lazily from the socket, with three bounds: one event's size, the time
    without text (`idle_timeout`), and the whole reply's time (`max_reply_time`, or the caller's
    deadline if sooner). A watchdog shuts the socket down at the whole-reply deadline, so even a
    read that is waiting for bytes ends then."""

    def __init__(self, response: httpx.Response, dialect: _Dialect, *, idle_timeout: float,
                 max_reply_time: float, max_event_bytes: int, deadline: Optional[float],
                 redact: Callable[[str], str]):
        self._response = response
        self._dialect = dialect
        self._decoder = SseDecoder(max_event_bytes)
        self._raw = response.iter_raw()
        self._pending: List[Chunk] = []
        self._done = False
        self._ended = False  # the dialect's end marker was seen
        self._stop_reported = False
        self._idle_timeout = idle_timeout
        self._max_reply_time = max_reply_time
        self._redact = redact
        reply_deadline = time.monotonic() + max_reply_time
        self._deadline_is_callers = deadline is not None and deadline < reply_deadline
        self._deadline = deadline if self._deadline_is_callers else reply_deadline
        self._expired = threading.Event()
        self._watchdog = threading.Timer(max(0.0, self._deadline - time.monotonic()), self._expire)
        self._watchdog.daemon = True
        self._watchdog.start()

    def _expire(self) -> None:
        remaining = self._deadline - time.monotonic()
        if remaining > 0:  # a timer may wake a little early; the deadline is the deadline
            time.sleep(remaining)
        self._expired.set()
        stream = self._response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a read blocked on this socket
            except OSError:
                pass

    def _deadline_error(self) -> VlmError:
        if self._deadline_is_callers:
            return VlmError("timed-out", "the call's wall-clock deadline passed while the reply streamed")
        return VlmError("timed-out", f"the reply took longer than {self._max_reply_time:g} s in all")

    def next_chunk(self) -> Optional[Chunk]:
        try:
            return self._next_chunk()
        except VlmError as e:
            self._finish()
            raise VlmError(e.kind, self._redact(e.message), e.status) from e

    def _next_chunk(self) -> Optional[Chunk]:
        # One deadline for the next chunk with text: events that carry none (empty deltas, pings)
        # do not keep a reply alive forever.
        idle_deadline = time.monotonic() + self._idle_timeout
        while True:
            if self._pending:
                return self._pending.pop(0)
            if self._done:
                # A reply the model stopped short is never handed out as if it were complete.
                if self._dialect.stopped_early and not self._stop_reported:
                    self._stop_reported = True
                    raise VlmError("stopped-early", self._dialect.stopped_early)
                return None
            now = time.monotonic()
            if self._expired.is_set() or now >= self._deadline:
                raise self._deadline_error()
            if now >= idle_deadline:
                raise VlmError("timed-out", f"no text for {self._idle_timeout:g} s while streaming the reply")
            try:
                raw = next(self._raw)
            except StopIteration:
                if self._expired.is_set():
                    raise self._deadline_error() from None
                self._take(self._decoder.finish())
                self._finish()
                if not self._ended and not self._dialect.may_end_without_marker():
                    raise VlmError("malformed-stream", "the stream ended before the reply was complete") from None
                continue
            except httpx.TimeoutException as e:
                raise VlmError("timed-out", f"no data from the model for {self._idle_timeout:g} s "
                                            f"({type(e).__name__})") from e
            except httpx.HTTPError as e:
                if self._expired.is_set():
                    raise self._deadline_error() from e
                raise VlmError("malformed-stream", f"the connection broke mid-stream: {e}") from e
            self._take(self._decoder.feed(raw))

    def ready_text(self, kind: str, max_chars: int) -> str:
        texts, size = [], 0
        while self._pending and self._pending[0].kind == kind and size < max_chars:
            texts.append(self._pending.pop(0).text)
            size += len(texts[-1])
        return "".join(texts)

    def _take(self, events: List[SseEvent]) -> None:
        for event in events:
            chunks, end = self._dialect.on_event(event)
            self._pending.extend(chunks)
            if end:
                self._ended = True
                self._finish()
                return

    def _finish(self) -> None:
        self._done = True
        self._watchdog.cancel()
        self._response.close()

    def close(self) -> None:
        self._pending.clear()
        self._finish()


class _ListReply(Reply):
    def __init__(self, chunks: List[Chunk]):
        self._chunks = list(chunks)

    def next_chunk(self) -> Optional[Chunk]:
        return self._chunks.pop(0) if self._chunks else None


def _single_json_reply(body: bytes) -> Reply:
    """A server that ignored `stream: true` and answered with one chat completion."""
    try:
        doc = json.loads(body)
        message = doc["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise VlmError("malformed-stream", "expected an SSE stream or a chat completion: "
                                           f"{_clip(body.decode('utf-8', 'replace'), 200)!r}") from e
    chunks = []
    for key in ("reasoning", "reasoning_content"):
        if isinstance(message.get(key), str) and message[key]:
            chunks.append(Chunk(REASONING, message[key]))
    if isinstance(message.get("content"), str) and message["content"]:
        chunks.append(Chunk(CONTENT, message["content"]))
    return _ListReply(chunks)


# --------------------------------------------------------------------------------------------
# The client


def _check_key_transport(base_url: str) -> None:
    """An API key travels only over TLS or to this machine: a key with an `http://` URL whose host
    is not loopback (127.0.0.0/8, ::1, `localhost`) is refused before anything connects."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(base_url)
        host = parts.hostname or ""
    except ValueError as e:
        raise VlmConfigError(f"the VLM URL is not a URL ({e})") from None
    if parts.scheme.lower() != "http":
        return
    try:
        ip = ipaddress.ip_address(host)
        loopback = ip.is_loopback or (isinstance(ip, ipaddress.IPv6Address) and bool(ip.ipv4_mapped)
                                      and ip.ipv4_mapped.is_loopback)
    except ValueError:
        loopback = host.lower() == "localhost"
    if not loopback:
        raise VlmConfigError(
            f"refusing to send the API key in clear text to {parts.scheme}://{host}: plain http is allowed only "
            f"to this machine (127.0.0.1, ::1, localhost); use https or a loopback address; nothing was sent")


class HttpVlm(Vlm):
    """A streaming VLM client for one endpoint; `api` is `"openai"` (`POST {base_url}/chat/completions`,
    OpenAI, Ollama, vLLM, LiteLLM, llama.cpp…) or `"anthropic"` (`POST {base_url}/v1/messages`).

    Arguments left as `None` are read from `ENV_URL`, `ENV_MODEL` and
    `ENV_API_KEY` (falling back to `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` by API, only
    for that vendor's own API: `vendor_key_variable`). Without a URL the VLM is not configured.

    Faults map to the WIT `vlm-error` cases: HTTP 4xx/5xx → `refused(status, provider's message)`
    (a 404 names the URL requested); connection failures → `unreachable`; connect/idle/whole-reply
    timeouts → `timed-out`; a body that is not the dialect's SSE stream (or an event over
    `max_event_bytes`) → `malformed-stream`. Connection errors, 429 and 5xx are retried (`retries`
    times, before any byte of the reply was read). The API key is redacted from every message.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        model: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        api: str = "openai",
        connect_timeout: float = facts.VLM_CONNECT_TIMEOUT_S,
        idle_timeout: float = facts.VLM_IDLE_TIMEOUT_S,
        max_reply_time: float = facts.VLM_MAX_REPLY_S,
        max_event_bytes: int = facts.VLM_MAX_EVENT_BYTES,
        retries: int = facts.VLM_MAX_RETRIES,
        max_tokens: Optional[int] = None,
        transport: Optional[httpx.BaseTransport] = None,
    ):
        if api not in APIS:
            raise VlmConfigError(f"api must be openai or anthropic, not {api!r}")
        self.api = api
        base_url = base_url if base_url is not None else os.environ.get(ENV_URL)
        self.base_url = base_url.strip().rstrip("/") if base_url and base_url.strip() else None
        self.model = model if model is not None else os.environ.get(ENV_MODEL, "")
        #: The vendor's key variable that was set but not sent (the URL is not that vendor's API).
        self.withheld_key: Optional[str] = None
        if api_key is None:
            api_key = os.environ.get(ENV_API_KEY) or None
            if api_key is None and os.environ.get(FALLBACK_KEYS[api]):
                if vendor_key_variable(api, self.base_url):
                    api_key = os.environ.get(FALLBACK_KEYS[api])
                else:
                    self.withheld_key = FALLBACK_KEYS[api]
        self.api_key = api_key or None
        if self.api_key and self.base_url:
            _check_key_transport(self.base_url)
        self.retries = max(0, retries)
        self.max_tokens = max_tokens
        self.connect_timeout = connect_timeout
        self.idle_timeout = idle_timeout
        self.max_reply_time = max_reply_time
        self.max_event_bytes = max_event_bytes
        # trust_env=False: no proxy or netrc from the environment; the URL is the only address.
        # No redirects: one would carry the body and the key to another address.
        self._client = httpx.Client(timeout=self._timeout(None), transport=transport, trust_env=False,
                                    follow_redirects=False)

    def __repr__(self) -> str:  # the key is never printed
        key = "<redacted>" if self.api_key else None
        return f"{type(self).__name__}(api={self.api!r}, base_url={self.base_url!r}, model={self.model!r}, api_key={key})"

    @property
    def configured(self) -> bool:
        return bool(self.base_url)

    def close(self) -> None:
        self._client.close()

    @property
    def url(self) -> Optional[str]:
        """The URL each request goes to: the dialect's path appended to the base URL's path, before
        its query (kept); a fragment is dropped."""
        if not self.base_url:
            return None
        base = httpx.URL(self.base_url)
        tail = "/v1/messages" if self.api == "anthropic" else "/chat/completions"
        return str(base.copy_with(path=base.path.rstrip("/") + tail, fragment=None))

    def request_body(self, prompt: str, mime: str, data_base64: str) -> dict:
        if self.api == "anthropic":
            return {
                "model": self.model,
                "max_tokens": self.max_tokens or ANTHROPIC_MAX_TOKENS,
                "stream": True,
                "messages": [{"role": "user", "content": [
                    {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data_base64}},
                    {"type": "text", "text": prompt},
                ]}],
            }
        body = {
            "model": self.model,
            "stream": True,
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": prompt},
                {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data_base64}"}},
            ]}],
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def _headers(self) -> dict:
        # identity: the stream's bytes are bounded as they arrive, never inflated.
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json", "Accept-Encoding": "identity"}
        if self.api == "anthropic":
            headers["anthropic-version"] = ANTHROPIC_VERSION
            if self.api_key:
                headers["x-api-key"] = self.api_key
        elif self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _timeout(self, deadline: Optional[float]) -> httpx.Timeout:
        left = float("inf") if deadline is None else max(0.001, deadline - time.monotonic())
        return httpx.Timeout(connect=min(self.connect_timeout, left), read=min(self.idle_timeout, left),
                             write=min(self.idle_timeout, left), pool=min(self.connect_timeout, left))

    def _redact(self, text: str) -> str:
        # A key this short would garble every message; real keys are far longer.
        if self.api_key and len(self.api_key) >= 4:
            return text.replace(self.api_key, "<redacted>")
        return text

    def _not_found_hint(self, url: str) -> str:
        """A 404 names the URL requested, and the likely slip in the base URL."""
        path = httpx.URL(self.base_url or "").path
        if self.api == "anthropic":
            if "/v1" in path:
                return f"at {url} — the base URL is the server's root: mediagate adds /v1/messages"
            return f"at {url}"
        if "/v1" not in path:
            return f"at {url} — does the base URL need a /v1 path segment?"
        return f"at {url}"

    def ask(self, prompt: str, mime: str, data_base64: str, deadline: Optional[float] = None) -> Reply:
        """Send the request; `deadline` (a `time.monotonic()` instant) bounds everything after."""
        try:
            return self._ask(prompt, mime, data_base64, deadline)
        except VlmError as e:
            raise VlmError(e.kind, self._redact(e.message), e.status) from e

    def _ask(self, prompt: str, mime: str, data_base64: str, deadline: Optional[float]) -> Reply:
        if not self.configured:
            raise VlmError("not-configured", "no vision model is configured")
        url = self.url
        assert url is not None
        payload = json.dumps(self.request_body(prompt, mime, data_base64)).encode("utf-8")

        attempt = 0
        while True:
            if deadline is not None and time.monotonic() >= deadline:
                raise VlmError("timed-out", "the call's wall-clock deadline passed before the model answered")
            try:
                request = self._client.build_request("POST", url, content=payload, headers=self._headers(),
                                                     timeout=self._timeout(deadline))
                response = self._client.send(request, stream=True)
            except httpx.TransportError as e:
                # Only a connection that was never made is retried: the request was not sent.
                if attempt < self.retries and isinstance(e, (httpx.ConnectTimeout, httpx.ConnectError)):
                    attempt += 1
                    self._sleep(_backoff(attempt), deadline)
                    continue
                if isinstance(e, httpx.TimeoutException):
                    raise VlmError("timed-out", f"{type(e).__name__} talking to {shown_url(url)}") from e
                raise VlmError("unreachable", f"{shown_url(url)}: {e}") from e

            if response.status_code >= 400:
                try:
                    body, whole = _read_capped_whole(response, _ERROR_BODY_CAP)
                finally:
                    response.close()
                retryable = response.status_code == 429 or response.status_code >= 500
                if retryable and attempt < self.retries:
                    attempt += 1
                    self._sleep(_retry_after(response) or _backoff(attempt), deadline)
                    continue
                message = _provider_message(body, response.reason_phrase or "error", self.api_key, whole)
                if response.status_code == 404:
                    message = f"{message} {self._not_found_hint(shown_url(url))}"
                if response.status_code in (401, 403) and self.withheld_key:
                    message = (f"{message} (no key was sent: {self.withheld_key} goes only to its vendor's own API "
                               f"over https; for {shown_url(self.base_url or '')} set {ENV_API_KEY})")
                raise VlmError("refused", message, status=response.status_code)
            if response.status_code >= 300:
                response.close()
                raise VlmError("refused", "redirects are not followed: configure the final URL "
                                          f"({_clip(response.headers.get('location', '?'), 300)})",
                               status=response.status_code)
            ctype = response.headers.get("content-type", "").lower()
            encoding = response.headers.get("content-encoding", "identity").lower()
            if encoding not in ("", "identity"):
                response.close()
                raise VlmError("malformed-stream", f"the reply is compressed ({encoding}); mediagate reads it "
                                                   "uncompressed only")
            if self.api == "openai" and "json" in ctype and "event-stream" not in ctype:
                try:
                    body = _read_capped(response, self.max_event_bytes + 1, self.max_reply_time)
                finally:
                    response.close()
                if len(body) > self.max_event_bytes:
                    raise VlmError("malformed-stream", f"the reply exceeded the limit of {self.max_event_bytes} "
                                                       "bytes (max_event_bytes)")
                return _single_json_reply(body)
            if not ctype.startswith("text/event-stream"):
                response.close()
                raise VlmError("malformed-stream", "expected an event stream (text/event-stream), got "
                                                   f"{ctype or 'no content type'}")
            dialect: _Dialect = _AnthropicDialect() if self.api == "anthropic" else _OpenAIDialect()
            return _StreamReply(response, dialect, idle_timeout=self.idle_timeout,
                                max_reply_time=self.max_reply_time, max_event_bytes=self.max_event_bytes,
                                deadline=deadline, redact=self._redact)

    @staticmethod
    def _sleep(seconds: float, deadline: Optional[float]) -> None:
        if deadline is not None:
            seconds = min(seconds, max(0.0, deadline - time.monotonic()))
        time.sleep(seconds)


class OpenAICompatibleVlm(HttpVlm):
    """`HttpVlm` speaking the OpenAI `/chat/completions` dialect."""

    def __init__(self, base_url: Optional[str] = None, model: Optional[str] = None, api_key: Optional[str] = None,
                 **kwargs):
        super().__init__(base_url, model, api_key, api="openai", **kwargs)

    @classmethod
    def from_env(cls, **kwargs) -> "OpenAICompatibleVlm":
        return cls(**kwargs)


class AnthropicVlm(HttpVlm):
    """`HttpVlm` speaking the Anthropic Messages dialect (`POST {base_url}/v1/messages`, `x-api-key`,
    `anthropic-version: 2023-06-01`); the key falls back to `ANTHROPIC_API_KEY`."""

    def __init__(self, base_url: Optional[str] = None, model: Optional[str] = None, api_key: Optional[str] = None,
                 **kwargs):
        super().__init__(base_url, model, api_key, api="anthropic", **kwargs)


def vlm_from_env(env: Optional[Mapping[str, str]] = None, **kwargs) -> Vlm:
    """The VLM the environment describes, as the Rust host reads it: `ENV_URL` (none →
    `NoVlm`), `ENV_MODEL` (required with a URL), `ENV_API` (`openai` |
    `anthropic`, default `openai`) and `ENV_API_KEY`, falling back to `OPENAI_API_KEY` /
    `ANTHROPIC_API_KEY` by API for that vendor's own API only (`vendor_key_variable`). Raises
    `VlmConfigError` for a URL without a model or an unknown API."""
    env = os.environ if env is None else env
    url = (env.get(ENV_URL) or "").strip()
    if not url:
        return NoVlm()
    api_name = env.get(ENV_API)
    api = (api_name or "openai").strip().lower()
    if api not in APIS:
        raise VlmConfigError(f"{ENV_API} must be openai or anthropic, not {api_name!r}")
    model = env.get(ENV_MODEL)
    if not model:
        raise VlmConfigError(f"a VLM URL is configured but no model: set {ENV_MODEL}")
    key = env.get(ENV_API_KEY) or ""
    withheld = None
    if not key and env.get(FALLBACK_KEYS[api]):
        if vendor_key_variable(api, url):
            key = env.get(FALLBACK_KEYS[api]) or ""
        else:
            withheld = FALLBACK_KEYS[api]
    cls = AnthropicVlm if api == "anthropic" else OpenAICompatibleVlm
    # api_key="" (not None): the key comes from `env`, never from os.environ behind its back.
    vlm = cls(base_url=url, model=model, api_key=key, **kwargs)
    vlm.withheld_key = withheld
    return vlm


def _read_capped(response: httpx.Response, cap: int, wait: float = _ERROR_BODY_WAIT_S) -> bytes:
    """At most `cap` bytes of a body, read for at most about `wait` seconds: an endless body costs
    nothing."""
    return _read_capped_whole(response, cap, wait)[0]


def _read_capped_whole(response: httpx.Response, cap: int, wait: float = _ERROR_BODY_WAIT_S) -> Tuple[bytes, bool]:
    """`_read_capped`, and whether the bytes are the whole body."""
    out = bytearray()
    until = time.monotonic() + wait
    whole = False
    try:
        for piece in response.iter_raw():
            out += piece
            if len(out) > cap or time.monotonic() >= until:
                break
        else:
            whole = True
    except httpx.HTTPError:
        pass
    return bytes(out[:cap]), whole and len(out) <= cap


def _backoff(attempt: int) -> float:
    return min(RETRY_INITIAL_BACKOFF_S * (2 ** (attempt - 1)), RETRY_MAX_WAIT_S)


def _retry_after(response: httpx.Response) -> Optional[float]:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, min(float(value), RETRY_MAX_WAIT_S))
    except ValueError:
        return None
