"""The gate as a LiteLLM proxy guardrail: every request's images and documents admitted, under the
profile of the provider the request goes to, in the body the proxy sends it (URL media it
downloaded included).

In the proxy's `config.yaml`:

    guardrails:
      - guardrail_name: mediagate
        litellm_params:
          guardrail: mediagate_host.litellm_guardrail.MediagateGuardrail
          mode: pre_call
          default_on: true

Options (beside `guardrail`, `mode` and `default_on` in `litellm_params`): `on_refusal`
(`placeholder`, the default: a refused block becomes the gate's text placeholder; `raise`: the
request is refused with HTTP 400 and the gate's words) and `profile` (`anthropic`, `openai`,
`gemini`, `ollama`: the per-image limits; default: the target deployment's provider).

What is judged where:

- **At the wire** (what guarantees that nothing unjudged leaves): LiteLLM downloads URL media
  (`image_url` with an http(s) URL for an Anthropic deployment, `file.file_id` URLs) after every
  guardrail hook and inlines the bytes into the body it builds for the provider. So the first
  guardrail instantiated puts the gate on every httpx client of the process (`install_wire_gate`):
  each `POST` to a model endpoint (`facts.REQUEST_ENDPOINTS`, as `transport.GateTransport` matches
  them) is admitted through `GateTransport`/`AsyncGateTransport` as LiteLLM sends it, downloads and
  provider transformation done, and the component's text is what is sent. It is judged once,
  under the profile and options of the first mediagate guardrail that ran on the request, refused
  whole if any of them has `on_refusal: raise`; a provider call no guardrail ran for (a health
  check, a call made outside the request's task) is judged by the `default_on` ones, under the
  endpoint's own profile. A request refused whole is not sent: LiteLLM gets an HTTP 400 in the
  provider's error shape and the gate's words, which the proxy answers the client with.
- **Before the call** (`async_pre_call_hook`): the request as the client sent it, by the
  component's walks (`transport.admit_json`): Chat Completions requests (`/chat/completions`) and
  Anthropic Messages requests (`/v1/messages`) through `admit-request`, Responses requests
  (`/responses`) through the tool-result seat. For deployments whose calls the wire reads
  (`read_at_the_wire`: `openai/…`, `anthropic/…`, `gemini/…`, `vertex_ai_beta/…`, and Gemini or
  Claude models on `vertex_ai/…`) this only answers a refusal in words before LiteLLM downloads
  anything (`on_refusal: raise`); the body is admitted once, at the wire. For the other
  providers the admitted request is written back: Bedrock's `converse` and Ollama's `/api/chat`
  are endpoints the wire does not read, so what LiteLLM downloads for those is not judged; an
  OpenAI-compatible provider's `/chat/completions` is judged at the wire too, and so is the
  `:rawPredict` of Vertex's other partner models (Mistral, AI21), but in the Messages dialect
  that path ending names, not theirs.
  Requests of the call types this hook does not walk (the proxy's Google GenAI route,
  `/v1beta/models/{model}:generateContent`, among them) are judged at the wire only.

Not covered at the wire: LiteLLM's calls that do not go through httpx (the `aiohttp_openai/`
provider's own aiohttp session, routes that call a provider SDK of their own).
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import json
import threading
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from fastapi import HTTPException
from litellm.integrations.custom_guardrail import CustomGuardrail

from .facts import PROFILES
from .transport import (ASYNC_INLINE_BYTES, REFUSAL_MODES, AsyncGateTransport, GateTransport, MediaRefused, admit_json,
                        api_for_path, gate_options, shared_gate)

#: LiteLLM's call types, by the request dialect their `data` holds.
CALL_TYPE_APIS = {
    "completion": "openai",
    "acompletion": "openai",
    "anthropic_messages": "anthropic",
    "aanthropic_messages": "anthropic",
    "responses": "responses",
    "aresponses": "responses",
}

#: The request keys each dialect's media sit in (what is admitted and written back).
MEDIA_KEYS = {"openai": "messages", "anthropic": "messages", "responses": "input"}

#: LiteLLM provider names whose per-image limits are another profile's. Any other provider
#: (OpenAI and the many OpenAI-compatible ones) takes the `openai` profile.
#: The gate's default profile (the facts list it first).
DEFAULT_PROFILE = PROFILES[0]

PROVIDER_PROFILES = {
    "anthropic": "anthropic",
    "anthropic_text": "anthropic",
    "vertex_ai_beta": "gemini",
    "vertex_ai": "gemini",
    "gemini": "gemini",
    "ollama": "ollama",
    "ollama_chat": "ollama",
}


def profile_for_provider(provider: Optional[str], model: str = "") -> str:
    """The gate profile for a LiteLLM provider name (`custom_llm_provider`). Bedrock and Vertex
    serve several families: a Claude model there takes the Anthropic profile. No provider (LiteLLM
    could not tell one): the gate's default profile, as the JavaScript middleware's for a model it
    cannot place."""
    if provider in ("bedrock", "bedrock_converse", "vertex_ai", "vertex_ai_beta") and "claude" in model.lower():
        return "anthropic"
    if not provider:
        return DEFAULT_PROFILE  # LiteLLM does not know it: the gate's default, as every integration's
    return PROVIDER_PROFILES.get(provider, "openai")  # the rest speak the OpenAI API


#: The providers each of whose calls LiteLLM makes over httpx to an endpoint the wire reads, in
#: the dialect it reads there: Chat Completions or Responses for `openai/…`, Messages for
#: `anthropic/…`, `generateContent` for `gemini/…` and `vertex_ai_beta/…`. `vertex_ai/…` is read
#: for some models only (`read_at_the_wire`). Requests to the others (Bedrock's `converse`,
#: Ollama's `/api/chat`, …) are admitted before the call and written back as the gate wrote them.
WIRE_READ_PROVIDERS = frozenset({"openai", "anthropic", "gemini", "vertex_ai_beta"})


def read_at_the_wire(provider: Optional[str], model: str, params: Optional[Dict[str, Any]] = None) -> bool:
    """Whether LiteLLM sends every call for a deployment (`model` without its provider prefix,
    `params` its `litellm_params`) to an endpoint the wire reads, in the dialect read there.
    Vertex serves several families: its Gemini models go to `:generateContent` and Claude to
    `:rawPredict` in the Messages dialect, both read; the other partner models' `:rawPredict`
    (Mistral, AI21) is another dialect under the same path ending, and Model Garden's, Gemma's
    and the legacy models' calls go elsewhere. LiteLLM's own routing decides which; should it
    have moved, the deployment counts as not read, and the hook writes back."""
    if provider in WIRE_READ_PROVIDERS:
        return True
    if provider != "vertex_ai":
        return False
    try:
        from litellm.llms.vertex_ai.common_utils import VertexAIModelRoute, get_vertex_ai_model_route

        route = get_vertex_ai_model_route(model=model, litellm_params=params or {})
    except Exception:  # noqa: BLE001
        return False
    if route == VertexAIModelRoute.GEMINI:
        return True
    return route == VertexAIModelRoute.PARTNER_MODELS and model.lower().startswith("claude")


class Judgement(NamedTuple):
    """How one guardrail judges a request at the wire: the profile (`None`: the endpoint's own),
    what a refusal does, the gate's options."""
    profile: Optional[str]
    on_refusal: str
    options: Tuple[Tuple[str, Any], ...]


#: The judgements of the guardrails that ran on the request the current task serves, in the
#: order they ran. The proxy awaits its pre-call hooks in the request's task and makes the
#: provider call from it (or from tasks it starts later, which copy the context), so the wire
#: sees what the hooks left here; `None`: no guardrail ran in this context.
_RAN: contextvars.ContextVar[Optional[Tuple[Judgement, ...]]] = contextvars.ContextVar("mediagate_ran", default=None)

#: The judgements of the `default_on` guardrails, by name (a config loaded again replaces them):
#: for a provider call in a context no guardrail ran in, which would otherwise leave unjudged.
_DEFAULT_ON: Dict[Optional[str], Judgement] = {}
_install_lock = threading.Lock()
_installed = False


def _judgement(request: Any) -> Tuple[Optional[Judgement], Optional[str]]:
    """The one judgement a request to a model endpoint gets at the wire, and its dialect: the
    first guardrail's profile and options, refused whole if any of them raises. One pass: a
    second would judge the gate's own output again."""
    api = api_for_path(request.url.path) if request.method == "POST" else None
    ran = _RAN.get()
    judgements = tuple(_DEFAULT_ON.values()) if ran is None else ran
    if api is None or not judgements:
        return None, api
    strictest = "raise" if any(j.on_refusal == "raise" for j in judgements) else judgements[0].on_refusal
    return judgements[0]._replace(on_refusal=strictest), api


def _refused(request: Any, api: str, refused: MediaRefused) -> Any:
    """What the provider would answer a request it rejects (HTTP 400 in its error shape), with
    the gate's words: LiteLLM takes it for the provider's own refusal (a `BadRequestError`, not a
    connection error it would retry), and the proxy answers the client 400 with these words."""
    if api in ("anthropic", "anthropic-batch"):
        body = {"type": "error", "error": {"type": "invalid_request_error", "message": str(refused)}}
    elif api == "gemini":
        body = {"error": {"code": 400, "message": str(refused), "status": "INVALID_ARGUMENT"}}
    else:
        body = {"error": {"message": str(refused), "type": "invalid_request_error", "param": None,
                          "code": "mediagate_refused"}}
    module = importlib.import_module(type(request).__module__.split(".")[0])
    return module.Response(400, json=body, request=request)


class _WireTransport:
    """The transport an httpx client picked for a request, behind a `GateTransport` holding the
    judgement of the guardrails that ran on it."""

    def __init__(self, inner: Any):
        self.inner = inner

    def handle_request(self, request: Any) -> Any:
        j, api = _judgement(request)
        if j is None or api is None:
            return self.inner.handle_request(request)
        try:
            return GateTransport(self.inner, provider=j.profile, on_refusal=j.on_refusal,
                                 **dict(j.options)).handle_request(request)
        except MediaRefused as e:
            return _refused(request, api, e)


class _AsyncWireTransport(_WireTransport):
    async def handle_async_request(self, request: Any) -> Any:
        j, api = _judgement(request)
        if j is None or api is None:
            return await self.inner.handle_async_request(request)
        try:
            return await AsyncGateTransport(self.inner, provider=j.profile, on_refusal=j.on_refusal,
                                            **dict(j.options)).handle_async_request(request)
        except MediaRefused as e:
            return _refused(request, api, e)


def install_wire_gate() -> None:
    """Puts the gate between every httpx and httpx2 client of this process and the transport it
    picks for a request (`Client._transport_for_url`, where httpx chooses between its own
    transport and a proxy mount). LiteLLM offers no one place for this: its own clients
    (`AsyncHTTPHandler`, the Anthropic route and most others, its aiohttp transport included), the
    clients it builds for the OpenAI SDK, `litellm.aclient_session` and its module-level clients
    are made in different places, some at import, some with a transport of their own; all are
    httpx clients. Requests to anything but a model endpoint pass as they are. Idempotent; when
    httpx no longer has that method, this raises, and the proxy does not start unguarded."""
    global _installed
    with _install_lock:
        if _installed:
            return
        for name in ("httpx", "httpx2"):
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            for cls, wire in ((module.Client, _WireTransport), (module.AsyncClient, _AsyncWireTransport)):
                picked = getattr(cls, "_transport_for_url", None)
                if picked is None:
                    raise RuntimeError(f"mediagate guardrail: {name}.{cls.__name__} has no _transport_for_url; "
                                       "the gate cannot be put on LiteLLM's outbound requests")

                def transport_for_url(self: Any, url: Any, _picked: Any = picked, _wire: Any = wire) -> Any:
                    return _wire(_picked(self, url))

                cls._transport_for_url = transport_for_url
        _installed = True


class MediagateGuardrail(CustomGuardrail):
    def __init__(self, on_refusal: str = "placeholder", profile: Optional[str] = None,
                 downsample: Optional[bool] = None, verify: Optional[str] = None,
                 keep_metadata: Optional[bool] = None, convert: Optional[bool] = None, **kwargs: Any):
        if on_refusal not in REFUSAL_MODES:
            raise ValueError(f"mediagate guardrail: on_refusal must be one of {REFUSAL_MODES}, not {on_refusal!r}")
        # Load (or compile) the component now, as the proxy starts, not in its first request.
        providers = shared_gate().providers
        if profile is not None and profile not in providers:
            raise ValueError(f"mediagate guardrail: profile must be one of {providers}, not {profile!r}")
        self.on_refusal = on_refusal
        self.profile = profile
        self.options = gate_options(downsample=downsample, verify=verify, keep_metadata=keep_metadata,
                                    convert=convert)
        super().__init__(**kwargs)
        install_wire_gate()
        if self.default_on:
            _DEFAULT_ON[self.guardrail_name] = self.judgement(profile)

    def judgement(self, profile: Optional[str]) -> Judgement:
        return Judgement(profile, self.on_refusal, tuple(sorted(self.options.items())))

    @staticmethod
    def deployments(data: Dict[str, Any]) -> List[Tuple[Optional[str], str, Dict[str, Any]]]:
        """`(provider, model, litellm_params)` of each deployment the request's model names
        (`provider` `None`: one LiteLLM cannot tell; `model` without the provider's prefix)."""
        import litellm
        from litellm.proxy import proxy_server

        model = str(data.get("model") or "")
        router = getattr(proxy_server, "llm_router", None)
        found = router.get_model_list(model_name=model) if router is not None else None
        out = []
        for d in found or [{"litellm_params": {"model": model}}]:
            params = d.get("litellm_params") or {}
            name = str(params.get("model") or model)
            try:
                name, provider, _, _ = litellm.get_llm_provider(model=name,
                                                                custom_llm_provider=params.get("custom_llm_provider"))
            except Exception:  # an unknown provider: the OpenAI-compatible kind
                provider = None
            out.append((provider, name, params))
        return out

    def target_profile(self, data: Dict[str, Any]) -> str:
        """The profile of the deployments the request's model names (the `profile` option first).
        Deployments of one model name on providers with different limits are refused in words:
        the gate cannot know which one the router will pick."""
        if self.profile is not None:
            return self.profile
        targets = [profile_for_provider(provider, name) for provider, name, _ in self.deployments(data)]
        if len(set(targets)) > 1:
            raise HTTPException(status_code=400, detail={"error": (
                f"mediagate: the model {data.get('model')!r} is served by deployments with different image limits "
                f"({', '.join(sorted(set(targets)))}); set the guardrail's `profile` option")})
        return targets[0]

    def admit(self, api: str, text: str, profile: str) -> Optional[Dict[str, Any]]:
        """The admitted request (parsed), or None when the request stands as it is."""
        try:
            admitted = admit_json(shared_gate(), api, text, provider=profile, on_refusal=self.on_refusal,
                                  **self.options)
        except MediaRefused as e:
            raise HTTPException(status_code=400, detail={"error": str(e), "refusals": e.refusals}) from None
        return None if admitted is None else json.loads(admitted)

    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any, data: dict, call_type: Any) -> Any:
        api = CALL_TYPE_APIS.get(getattr(call_type, "value", call_type))
        key = MEDIA_KEYS.get(api or "")
        try:
            profile: Optional[str] = self.target_profile(data)
        except HTTPException:
            if key is not None:
                raise
            profile = None  # a call type not judged here: the wire takes the endpoint's own profile
        # What LiteLLM sends for this request, downloads and all, is judged at the wire by this
        # guardrail too, whatever this hook can see of it.
        _RAN.set((_RAN.get() or ()) + (self.judgement(profile),))
        if key is None or data.get(key) is None:
            return data
        # Where the wire reads every deployment's requests, it admits the media once, as sent;
        # here they are only judged to answer a refusal before LiteLLM downloads anything.
        at_the_wire = all(read_at_the_wire(*d) for d in self.deployments(data))
        if at_the_wire and self.on_refusal != "raise":
            return data
        try:
            text = json.dumps({"model": data.get("model"), key: data[key]}, ensure_ascii=False)
        except (TypeError, ValueError) as e:
            raise HTTPException(status_code=400, detail={"error": f"mediagate: the request is not JSON: {e}"}) from e
        if len(text) < ASYNC_INLINE_BYTES:
            admitted = self.admit(api, text, profile)
        else:
            # The gate works for up to seconds on a large image: off the proxy's event loop.
            admitted = await asyncio.to_thread(self.admit, api, text, profile)
        if admitted is not None and not at_the_wire:
            data[key] = admitted[key]
        return data
