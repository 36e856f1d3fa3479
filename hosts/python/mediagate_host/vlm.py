"""The host's VLM capability: an OpenAI-compatible `/chat/completions` client that streams.

The component imports `mediagate:gate/vlm`: `configured()`, `ask(prompt, image)` returning a `reply`
resource, and `reply.next-chunk()`. This module is that capability in plain Python (no wasmtime
here), so it can be used and tested on its own:

    vlm = OpenAICompatibleVlm(base_url="http://127.0.0.1:8080/v1", model="qwen2.5-vl")
    reply = vlm.ask("What is in this image?", "image/png", base64_data)
    while (chunk := reply.next_chunk()) is not None:
        print(chunk.kind, chunk.text)

`ask` sends the request and waits for the status line, so a refusal (HTTP 4xx/5xx) is reported by
`ask`; the body is read lazily, one chunk per `next_chunk` call.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Iterator, List, Optional

import httpx

ENV_URL = "MEDIAGATE_VLM_URL"
ENV_MODEL = "MEDIAGATE_VLM_MODEL"
ENV_API_KEY = "MEDIAGATE_VLM_API_KEY"

#: Chunk kinds, as the WIT enum `chunk-kind` spells them.
CONTENT = "content"
REASONING = "reasoning"

_ERROR_BODY_CAP = 64 * 1024
_MESSAGE_CAP = 2000
_RETRY_AFTER_CAP_S = 10.0


@dataclass(frozen=True)
class Chunk:
    """One piece of a streamed reply: `kind` is `"content"` or `"reasoning"`."""

    kind: str
    text: str


class VlmError(Exception):
    """A VLM failure, one of the WIT `vlm-error` cases.

    `kind` is `not-configured`, `unreachable`, `refused`, `timed-out` or `malformed-stream`;
    `status` is the HTTP status for `refused`, else `None`.
    """

    KINDS = ("not-configured", "unreachable", "refused", "timed-out", "malformed-stream")

    def __init__(self, kind: str, message: str, status: Optional[int] = None):
        if kind not in self.KINDS:
            raise ValueError(f"unknown vlm-error kind {kind!r}")
        self.kind = kind
        self.message = message
        self.status = status
        super().__init__(f"{kind}: HTTP {status}: {message}" if status is not None else f"{kind}: {message}")


class Reply:
    """A reply being streamed; `next_chunk()` returns the next `Chunk`, or `None` when complete."""

    def next_chunk(self) -> Optional[Chunk]:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        pass


class Vlm:
    """The interface the host needs from a VLM client (duck-typed; subclassing is optional)."""

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

    def ask(self, prompt: str, mime: str, data_base64: str) -> Reply:
        raise VlmError("not-configured", "no vision model is configured")


def _clip(text: str, cap: int = _MESSAGE_CAP) -> str:
    text = text.strip()
    return text if len(text) <= cap else text[:cap] + "…"


def _provider_message(body: bytes, reason: str) -> str:
    """The provider's own words from an error body (OpenAI `{"error": {"message"}}` and kin)."""
    text = body.decode("utf-8", errors="replace")
    try:
        doc = json.loads(text)
    except ValueError:
        return _clip(text) or reason
    if isinstance(doc, dict):
        err = doc.get("error")
        if isinstance(err, dict):
            for key in ("message", "msg", "detail"):
                if isinstance(err.get(key), str) and err[key].strip():
                    return _clip(err[key])
        if isinstance(err, str) and err.strip():
            return _clip(err)
        for key in ("message", "detail"):
            if isinstance(doc.get(key), str) and doc[key].strip():
                return _clip(doc[key])
    return _clip(text) or reason


class _SseEvents:
    """Server-sent events from a line iterator: yields each event's `data` (lines joined by `\\n`)."""

    def __init__(self, lines: Iterator[str]):
        self._lines = lines

    def __iter__(self) -> Iterator[str]:
        data: List[str] = []
        for line in self._lines:
            if line == "":
                if data:
                    yield "\n".join(data)
                    data = []
                continue
            if line.startswith(":"):
                continue  # comment / keep-alive
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "data":
                data.append(value)
            # `event`, `id`, `retry` carry nothing an OpenAI-compatible stream needs.
        if data:
            yield "\n".join(data)


class _OpenAIReply(Reply):
    def __init__(self, response: httpx.Response):
        self._response = response
        self._events = iter(_SseEvents(response.iter_lines()))
        self._pending: List[Chunk] = []
        self._done = False
        self._finished_reason_seen = False

    def next_chunk(self) -> Optional[Chunk]:
        while True:
            if self._pending:
                return self._pending.pop(0)
            if self._done:
                return None
            try:
                data = next(self._events)
            except StopIteration:
                self._finish()
                if not self._finished_reason_seen:
                    raise VlmError("malformed-stream", "the stream ended before [DONE]")
                return None
            except httpx.TimeoutException as e:
                self._finish()
                raise VlmError("timed-out", f"no data from the model for too long ({type(e).__name__})") from e
            except (httpx.RemoteProtocolError, httpx.ReadError) as e:
                self._finish()
                raise VlmError("malformed-stream", f"the connection broke mid-stream: {e}") from e
            except httpx.HTTPError as e:
                self._finish()
                raise VlmError("unreachable", f"{type(e).__name__}: {e}") from e
            self._take(data)

    def _take(self, data: str) -> None:
        if data.strip() == "[DONE]":
            self._finish()
            return
        try:
            event = json.loads(data)
        except ValueError:
            self._finish()
            raise VlmError("malformed-stream", f"a data line is not JSON: {_clip(data, 200)!r}")
        if not isinstance(event, dict):
            self._finish()
            raise VlmError("malformed-stream", f"a data line is not a JSON object: {_clip(data, 200)!r}")
        if "error" in event:
            self._finish()
            err = event["error"]
            message = err.get("message") if isinstance(err, dict) else err
            raise VlmError("malformed-stream", f"the provider reported an error mid-stream: {_clip(str(message))}")
        choices = event.get("choices")
        if not isinstance(choices, list):
            return  # usage-only or keep-alive events
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            if choice.get("finish_reason"):
                self._finished_reason_seen = True
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                continue
            for key in ("reasoning", "reasoning_content"):
                text = delta.get(key)
                if isinstance(text, str) and text:
                    self._pending.append(Chunk(REASONING, text))
            text = delta.get("content")
            if isinstance(text, str) and text:
                self._pending.append(Chunk(CONTENT, text))

    def _finish(self) -> None:
        self._done = True
        self._response.close()

    def close(self) -> None:
        self._done = True
        self._pending.clear()
        self._response.close()


class OpenAICompatibleVlm(Vlm):
    """Streams `POST {base_url}/chat/completions` (`stream: true`) from any OpenAI-compatible server.

    Arguments left as `None` are read from `MEDIAGATE_VLM_URL`, `MEDIAGATE_VLM_MODEL`,
    `MEDIAGATE_VLM_API_KEY`. Without a URL the VLM is not configured.

    Faults map to the WIT `vlm-error` cases: HTTP 4xx/5xx → `refused(status, provider's message)`;
    connection failures → `unreachable`; connect/idle timeouts → `timed-out`; a body that is not
    an OpenAI SSE stream → `malformed-stream`. Connection errors, 429 and 5xx are retried
    (`retries` times, before any byte of the reply was read).
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        model: Optional[str] = None,
        api_key: Optional[str] = None,
        *,
        connect_timeout: float = 10.0,
        idle_timeout: float = 120.0,
        retries: int = 2,
        max_tokens: Optional[int] = None,
        transport: Optional[httpx.BaseTransport] = None,
    ):
        base_url = base_url if base_url is not None else os.environ.get(ENV_URL)
        self.base_url = base_url.rstrip("/") if base_url else None
        self.model = model if model is not None else os.environ.get(ENV_MODEL, "")
        self.api_key = api_key if api_key is not None else os.environ.get(ENV_API_KEY)
        self.retries = max(0, retries)
        self.max_tokens = max_tokens
        timeout = httpx.Timeout(connect=connect_timeout, read=idle_timeout, write=idle_timeout, pool=connect_timeout)
        # trust_env=False: no proxy or netrc from the environment; the URL is the only address.
        self._client = httpx.Client(timeout=timeout, transport=transport, trust_env=False, follow_redirects=False)

    @classmethod
    def from_env(cls, **kwargs) -> "OpenAICompatibleVlm":
        return cls(**kwargs)

    @property
    def configured(self) -> bool:
        return bool(self.base_url)

    def close(self) -> None:
        self._client.close()

    def request_body(self, prompt: str, mime: str, data_base64: str) -> dict:
        body = {
            "model": self.model,
            "stream": True,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": prompt},
                        {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data_base64}"}},
                    ],
                }
            ],
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def ask(self, prompt: str, mime: str, data_base64: str) -> Reply:
        if not self.configured:
            raise VlmError("not-configured", "no vision model is configured")
        url = f"{self.base_url}/chat/completions"
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        payload = json.dumps(self.request_body(prompt, mime, data_base64)).encode("utf-8")

        attempt = 0
        while True:
            try:
                request = self._client.build_request("POST", url, content=payload, headers=headers)
                response = self._client.send(request, stream=True)
            except httpx.TimeoutException as e:
                if attempt < self.retries and isinstance(e, httpx.ConnectTimeout):
                    attempt += 1
                    time.sleep(_backoff(attempt))
                    continue
                raise VlmError("timed-out", f"{type(e).__name__} talking to {url}") from e
            except httpx.TransportError as e:
                if attempt < self.retries and isinstance(e, httpx.ConnectError):
                    attempt += 1
                    time.sleep(_backoff(attempt))
                    continue
                raise VlmError("unreachable", f"{url}: {e}") from e

            if response.status_code >= 400:
                try:
                    body = _read_capped(response)
                finally:
                    response.close()
                retryable = response.status_code == 429 or response.status_code >= 500
                if retryable and attempt < self.retries:
                    attempt += 1
                    time.sleep(_retry_after(response) or _backoff(attempt))
                    continue
                raise VlmError(
                    "refused",
                    _provider_message(body, response.reason_phrase or "error"),
                    status=response.status_code,
                )
            if response.status_code >= 300:
                response.close()
                raise VlmError("refused", f"unexpected redirect to {response.headers.get('location', '?')}",
                               status=response.status_code)
            ctype = response.headers.get("content-type", "")
            if "json" in ctype and "event-stream" not in ctype:
                # A server that ignored `stream: true` and answered with one JSON object.
                try:
                    body = _read_capped(response)
                finally:
                    response.close()
                return _single_json_reply(body)
            return _OpenAIReply(response)


def _read_capped(response: httpx.Response) -> bytes:
    out = bytearray()
    try:
        for piece in response.iter_bytes():
            out += piece
            if len(out) >= _ERROR_BODY_CAP:
                break
    except httpx.HTTPError:
        pass
    return bytes(out[:_ERROR_BODY_CAP])


def _backoff(attempt: int) -> float:
    return min(0.25 * (2 ** (attempt - 1)), 2.0)


def _retry_after(response: httpx.Response) -> Optional[float]:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, min(float(value), _RETRY_AFTER_CAP_S))
    except ValueError:
        return None


class _ListReply(Reply):
    def __init__(self, chunks: List[Chunk]):
        self._chunks = list(chunks)

    def next_chunk(self) -> Optional[Chunk]:
        return self._chunks.pop(0) if self._chunks else None


def _single_json_reply(body: bytes) -> Reply:
    try:
        doc = json.loads(body)
        message = doc["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise VlmError("malformed-stream", f"expected an SSE stream or a chat completion: {_clip(body.decode('utf-8', 'replace'), 200)!r}") from e
    chunks = []
    for key in ("reasoning", "reasoning_content"):
        if isinstance(message.get(key), str) and message[key]:
            chunks.append(Chunk(REASONING, message[key]))
    if isinstance(message.get("content"), str) and message["content"]:
        chunks.append(Chunk(CONTENT, message["content"]))
    return _ListReply(chunks)
