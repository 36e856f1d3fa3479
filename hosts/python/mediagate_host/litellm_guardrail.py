"""The gate as a LiteLLM proxy guardrail: every request's images and documents admitted, under the
profile of the provider the request goes to, before the proxy calls it.

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

The request is admitted by the component's walks (`transport.admit_json`): Chat Completions
requests (`/chat/completions`) and Anthropic Messages requests (`/v1/messages`) through
`admit-request`, Responses requests (`/responses`) through the tool-result seat.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, Optional

from fastapi import HTTPException
from litellm.integrations.custom_guardrail import CustomGuardrail

from .facts import PROFILES
from .transport import ASYNC_INLINE_BYTES, REFUSAL_MODES, MediaRefused, admit_json, gate_options, shared_gate

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

    def target_profile(self, data: Dict[str, Any]) -> str:
        """The profile of the deployments the request's model names (the `profile` option first).
        Deployments of one model name on providers with different limits are refused in words:
        the gate cannot know which one the router will pick."""
        if self.profile is not None:
            return self.profile
        import litellm
        from litellm.proxy import proxy_server

        model = str(data.get("model") or "")
        targets = []
        router = getattr(proxy_server, "llm_router", None)
        deployments = router.get_model_list(model_name=model) if router is not None else None
        for d in deployments or [{"litellm_params": {"model": model}}]:
            params = d.get("litellm_params") or {}
            name = str(params.get("model") or model)
            try:
                _, provider, _, _ = litellm.get_llm_provider(model=name,
                                                             custom_llm_provider=params.get("custom_llm_provider"))
            except Exception:  # an unknown provider: the OpenAI-compatible kind
                provider = None
            targets.append(profile_for_provider(provider, name))
        if len(set(targets)) > 1:
            raise HTTPException(status_code=400, detail={"error": (
                f"mediagate: the model {model!r} is served by deployments with different image limits "
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
        if key is None or data.get(key) is None:
            return data
        profile = self.target_profile(data)
        try:
            text = json.dumps({"model": data.get("model"), key: data[key]}, ensure_ascii=False)
        except (TypeError, ValueError) as e:
            raise HTTPException(status_code=400, detail={"error": f"mediagate: the request is not JSON: {e}"}) from e
        if len(text) < ASYNC_INLINE_BYTES:
            admitted = self.admit(api, text, profile)
        else:
            # The gate works for up to seconds on a large image: off the proxy's event loop.
            admitted = await asyncio.to_thread(self.admit, api, text, profile)
        if admitted is not None:
            data[key] = admitted[key]
        return data
