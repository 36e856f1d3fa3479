"""The gate in front of the OpenAI and Anthropic Python SDKs: an httpx transport that admits every
request body sent to a model endpoint before it leaves (each endpoint of the guest's list in its
dialect, any other JSON `POST` body as `other`: its media judged wherever they sit).

    from openai import OpenAI, DefaultHttpxClient
    from mediagate_host.transport import GateTransport

    client = OpenAI(http_client=DefaultHttpxClient(transport=GateTransport()))

The body is admitted by the component's own walk (`Mediagate.admit_request`; a Responses body
inside the envelope the guest defines, as the JavaScript wrappers hand it over); nothing here
reads image blocks itself, and what is sent is the text the component wrote. A
request the gate leaves as it is goes out byte for byte. A refused block is replaced in its slot by
the gate's text placeholder, or, with `on_refusal="raise"`, the request is not sent and
`MediaRefused` is raised. A request the gate cannot read at all is never sent.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import re
import shutil
import sys
import tempfile
import threading
from typing import Any, Callable, Dict, List, Optional

from .facts import REQUEST_ENDPOINTS, RESPONSES_POINTER, RESPONSES_PREFIX, RESPONSES_SUFFIX
from .host import Mediagate, MediagateError

#: The endpoints whose bodies are admitted, by the end of the URL's path, as the guest lists them
#: (`facts.REQUEST_ENDPOINTS`, where `*` stands for one path segment), and the dialect of each.
ENDPOINT_APIS = tuple((re.compile("[^/]+".join(re.escape(part) for part in pattern.split("*")) + "$"), api)
                      for pattern, api in REQUEST_ENDPOINTS)

#: Bodies smaller than this are admitted on the event loop's thread by the async transport: a
#: thread hop costs more than the gate on a body too small to hold a large image.
ASYNC_INLINE_BYTES = 256 * 1024

REFUSAL_MODES = ("placeholder", "raise")


class MediaRefused(MediagateError):
    """The gate refused media in a request (`on_refusal="raise"`), or the request as a whole (it
    could not be read, or cannot be made to fit): nothing was sent.

    `refusals` lists `{"path", "reason", "message"}`: `path` is the JSON Pointer of the refused
    block in the request (`""` for the whole request), `reason` the gate's refusal reason
    (`magic_mismatch`, `raw_too_large`, …), `message` its words. `report` is the gate's report."""

    def __init__(self, api: str, refusals: List[Dict[str, Any]], report: Dict[str, Any]):
        self.api = api
        self.refusals = refusals
        self.report = report
        words = "; ".join(f"{r['path'] or 'the request'}: {r['reason']} — {r['message']}" for r in refusals)
        super().__init__(f"mediagate refused media in this {api} request, which was not sent: {words}")


def api_for_path(path: str) -> Optional[str]:
    """The dialect of an endpoint of the guest's list (`openai`, `responses`, `anthropic`,
    `gemini`, `anthropic-batch`), `None` for any other."""
    path = path.rstrip("/")
    for ending, api in ENDPOINT_APIS:
        if ending.search(path):
            return api
    return None


def is_json(content_type: Optional[str]) -> bool:
    """Whether a `Content-Type` names JSON (`application/json`, or a `+json` type)."""
    media_type = (content_type or "").split(";")[0].strip().lower()
    return media_type == "application/json" or media_type.endswith("+json")


def placeholder_words(content: Any, pointer: str) -> str:
    """The text of the placeholder the tool-result seat put at `pointer` (a JSON Pointer) of the
    content it returned: the refusal in the gate's words (its report lists reasons, not words)."""
    try:
        for token in pointer.split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            content = content[int(token)] if isinstance(content, list) else content[token]
        return str(content["text"])
    except (KeyError, IndexError, TypeError, ValueError):
        return "refused"


#: Where every integration logs what the gate changed (INFO) and refused (WARNING).
log = logging.getLogger("mediagate")

#: A callback given each change the gate made to a request: the component's change
#: (`path`, `type`, `what`: downsampled | re-encoded | normalized | refused, `reason`, `message`,
#: …), its `path` in the body as sent, and `api`.
ChangeCallback = Callable[[Dict[str, Any]], None]


def _tell(api: str, changes: List[Dict[str, Any]], on_change: Optional[ChangeCallback]) -> None:
    for change in changes:
        if change.get("what") == "refused":
            log.warning("mediagate refused %s of the %s request: %s: %s", change["path"] or "/", api,
                        change.get("reason"), change.get("message"))
        else:
            log.info("mediagate %s %s of the %s request: %s", change.get("what"), change["path"] or "/", api,
                     change.get("message"))
        if on_change is not None:
            on_change({**change, "api": api})


#: The gate's options every integration takes besides `provider` (as `Mediagate.admit_request`
#: does, and the JavaScript wrappers as `downsample`, `verify`, `keepMetadata`, `convert`).
GATE_OPTIONS = ("downsample", "verify", "keep_metadata", "convert")


def gate_options(**given: Any) -> Dict[str, Any]:
    """The gate's options named in `given` (those left `None` are the gate's defaults); any other
    name is a `TypeError` in words."""
    unknown = sorted(set(given) - set(GATE_OPTIONS))
    if unknown:
        raise TypeError(f"unknown gate option {', '.join(unknown)} (known: {', '.join(GATE_OPTIONS)})")
    return {k: v for k, v in given.items() if v is not None}


def admit_json(gate: Mediagate, api: str, text: str, provider: Optional[str] = None,
               on_refusal: str = "placeholder", on_change: Optional[ChangeCallback] = None,
               **options: Any) -> Optional[str]:
    """A request body (JSON text) of `api` through the gate: `None` when it stands as it is (send
    the original bytes), else the admitted request as the component wrote it. Raises
    `MediaRefused` when the request cannot be sent, or when a block was refused and `on_refusal`
    is `"raise"`. `provider` names the profile whose per-image limits apply (default: the API's
    own); `options` are the other `GATE_OPTIONS` (`downsample`, `verify`, `keep_metadata`,
    `convert`). A `responses` body goes to the OpenAI walk inside the guest's envelope. Every change is
    logged to the `mediagate` logger and given to `on_change`, refusals too (also when raised)."""
    if on_refusal not in REFUSAL_MODES:
        raise ValueError(f"on_refusal must be one of {REFUSAL_MODES}")
    enveloped = api == "responses"
    body = RESPONSES_PREFIX + text + RESPONSES_SUFFIX if enveloped else text
    report, admitted = gate.admit_request_text("openai" if enveloped else api, body, provider=provider,
                                               **gate_options(**options))

    def rebased(path: str) -> str:
        return path[len(RESPONSES_POINTER):] if enveloped and path.startswith(RESPONSES_POINTER) else path

    if report["refusal"] is not None:
        refusal = {"path": "", "reason": report["refusal"]["reason"], "message": report["refusal"]["message"]}
        _tell(api, [{**refusal, "what": "refused"}], on_change)
        raise MediaRefused(api, [refusal], report)
    if not report["changed"]:
        return None
    changes = [{**c, "path": rebased(c["path"])} for c in report["changed"]]
    _tell(api, changes, on_change)
    refused = [{"path": c["path"], "reason": c["reason"], "message": c["message"]} for c in changes if c["to"] is None]
    if refused and on_refusal == "raise":
        raise MediaRefused(api, refused, report)
    if admitted is None:
        raise MediagateError("the gate reported changes but wrote no request")
    if enveloped:
        if not (admitted.startswith(RESPONSES_PREFIX) and admitted.endswith(RESPONSES_SUFFIX)):
            raise MediagateError("the gate answered a Responses request in a shape this transport cannot cut back out")
        return admitted[len(RESPONSES_PREFIX):len(admitted) - len(RESPONSES_SUFFIX)]
    return admitted


_shared: Optional[Mediagate] = None
_shared_lock = threading.Lock()


def shared_gate() -> Mediagate:
    """One `Mediagate` per process for the integrations that are given none: no VLM, and an empty
    private directory as its workspace (admitting a request reads no file)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            empty = tempfile.mkdtemp(prefix="mediagate-empty-")
            atexit.register(shutil.rmtree, empty, True)
            _shared = Mediagate(workspace=empty, vlm=False)
        return _shared


class _Admitting:
    def __init__(self, gate: Optional[Mediagate], provider: Optional[str], on_refusal: str,
                 on_change: Optional[ChangeCallback], options: Dict[str, Any]):
        if on_refusal not in REFUSAL_MODES:
            raise ValueError(f"on_refusal must be one of {REFUSAL_MODES}")
        if on_change is not None and not callable(on_change):
            raise TypeError("on_change must be callable")
        self._gate = gate
        self.provider = provider
        self.on_refusal = on_refusal
        self.on_change = on_change
        self.options = gate_options(**options)

    @property
    def gate(self) -> Mediagate:
        if self._gate is None:
            self._gate = shared_gate()
        return self._gate

    def api_of(self, request: Any) -> Optional[str]:
        """The dialect a request's body is admitted in: its endpoint's, else `other` for a JSON
        body (its media judged wherever they sit, no request rules); `None` for what carries no
        JSON body to judge (not a POST; a multipart upload)."""
        if request.method != "POST":
            return None
        return api_for_path(request.url.path) or ("other" if is_json(request.headers.get("content-type")) else None)

    def admitted(self, request: Any, api: str, body: bytes) -> Any:
        try:
            return self._admitted(request, api, body)
        except MediaRefused as e:
            raise _as_the_client_raises_it(request, e) from None

    def _admitted(self, request: Any, api: str, body: bytes) -> Any:
        encoding = request.headers.get("content-encoding", "identity").lower()
        if encoding != "identity":
            raise MediaRefused(api, [{"path": "", "reason": "undecodable", "message":
                                      f"the body is {encoding}-encoded; the gate reads plain JSON"}], {})
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as e:
            raise MediaRefused(api, [{"path": "", "reason": "undecodable",
                                      "message": f"the body is not UTF-8: {e}"}], {}) from e
        new = admit_json(self.gate, api, text, provider=self.provider, on_refusal=self.on_refusal,
                         on_change=self.on_change, **self.options)
        if new is None:
            return request
        headers = [(k, v) for k, v in request.headers.multi_items()
                   if k.lower() not in ("content-length", "transfer-encoding")]
        # The request's own class: the SDKs send `httpx2` requests, LiteLLM and others `httpx` ones.
        return type(request)(request.method, request.url, headers=headers, content=new.encode("utf-8"),
                             extensions=request.extensions)


_anthropic_flavours: Dict[type, type] = {}


def _as_the_client_raises_it(request: Any, refused: MediaRefused) -> MediaRefused:
    """The Anthropic SDK wraps any exception a transport raises in `APIConnectionError` and
    retries it, unless it is an `anthropic.AnthropicError`: for its requests (they carry
    `anthropic-version`) the refusal is raised as a `MediaRefused` that is one, so the caller
    gets it as it is and nothing is retried."""
    sdk = sys.modules.get("anthropic")
    base = getattr(sdk, "AnthropicError", None)
    if base is None or "anthropic-version" not in request.headers:
        return refused
    flavour = _anthropic_flavours.get(base)
    if flavour is None:
        flavour = _anthropic_flavours[base] = type("MediaRefused", (MediaRefused, base), {})
    return flavour(refused.api, refused.refusals, refused.report)


def _module_of(request: Any) -> Any:
    """The httpx-compatible module a request comes from (`httpx`, or `httpx2`, the fork the
    OpenAI and Anthropic SDKs use): its default transport is the one to wrap."""
    return importlib.import_module(type(request).__module__.split(".")[0])


class GateTransport:
    """An httpx transport that admits request bodies to the chat-completions, responses and
    messages endpoints, then hands the request to `wrapped` (default: a new `HTTPTransport()` of
    the client's own httpx module, made at the first request: `httpx`, or `httpx2` for the OpenAI
    and Anthropic SDKs). It derives from neither module's `BaseTransport` (the SDKs refuse `httpx`
    classes; clients call a transport's methods without checking its class), so it serves both.

    `gate`: the `Mediagate` to use (default: `shared_gate()`); `provider`: the profile whose
    per-image limits apply (`anthropic`, `openai`, `gemini`, `ollama`; default: the endpoint's own
    API, e.g. `ollama` for an OpenAI client pointed at Ollama); `on_refusal`: `"placeholder"` (a
    refused block becomes the gate's text placeholder) or `"raise"` (`MediaRefused`, nothing sent);
    `on_change`: called with each change the gate made (refusals too), as the `mediagate` logger
    is told of it; `downsample`, `verify`, `keep_metadata`, `convert`: as `Mediagate.admit_request`
    takes them (default: the gate's).
    """

    def __init__(self, wrapped: Any = None, *, gate: Optional[Mediagate] = None,
                 provider: Optional[str] = None, on_refusal: str = "placeholder",
                 on_change: Optional[ChangeCallback] = None, **options: Any):
        self._admitting = _Admitting(gate, provider, on_refusal, on_change, options)
        self.wrapped = wrapped

    def handle_request(self, request: Any) -> Any:
        api = self._admitting.api_of(request)
        if api is not None:
            request = self._admitting.admitted(request, api, request.read())
        if self.wrapped is None:
            self.wrapped = _module_of(request).HTTPTransport()
        return self.wrapped.handle_request(request)

    def close(self) -> None:
        if self.wrapped is not None:
            self.wrapped.close()

    def __enter__(self) -> "GateTransport":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncGateTransport:
    """`GateTransport` for `httpx.AsyncClient` (`AsyncOpenAI`, `AsyncAnthropic`); `wrapped`
    defaults to a new `AsyncHTTPTransport()` of the client's httpx module. A large body is admitted in a worker thread, so
    the event loop keeps running meanwhile."""

    def __init__(self, wrapped: Any = None, *, gate: Optional[Mediagate] = None,
                 provider: Optional[str] = None, on_refusal: str = "placeholder",
                 on_change: Optional[ChangeCallback] = None, **options: Any):
        self._admitting = _Admitting(gate, provider, on_refusal, on_change, options)
        self.wrapped = wrapped

    async def handle_async_request(self, request: Any) -> Any:
        api = self._admitting.api_of(request)
        if api is not None:
            body = await request.aread()
            if len(body) < ASYNC_INLINE_BYTES:
                request = self._admitting.admitted(request, api, body)
            else:
                import anyio.to_thread

                request = await anyio.to_thread.run_sync(self._admitting.admitted, request, api, body)
        if self.wrapped is None:
            self.wrapped = _module_of(request).AsyncHTTPTransport()
        return await self.wrapped.handle_async_request(request)

    async def aclose(self) -> None:
        if self.wrapped is not None:
            await self.wrapped.aclose()

    async def __aenter__(self) -> "AsyncGateTransport":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
