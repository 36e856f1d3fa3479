"""What each Python integration adds to a request: with no media, and with a 3 MB screenshot.

    cd hosts/python
    .venv-integrations/bin/python ../../bench/integrations_py.py --runs 21   # SDK transports, pydantic-ai
    .venv-litellm/bin/python ../../bench/integrations_py.py --runs 21 --only litellm

(`test-integrations.sh` makes both environments.) Each row times the integration's own step, the
request otherwise going nowhere: the transport handing the SDK's request to a transport that
answers at once (`MockTransport`), against that transport alone; the guardrail's
`async_pre_call_hook` on the proxy's request data; the capability's `prepare_model_request` work
(`admit_messages`, its cache emptied each run). The figures are medians, in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY_HOST = HERE.parent / "hosts" / "python"
sys.path.insert(0, str(PY_HOST))
sys.path.insert(0, str(PY_HOST / "tests_integrations"))
if "MEDIAGATE_AGENT_TOOL_WASM" not in os.environ and not (HERE.parent / "target/guest/mediagate-agent-tool.wasm").is_file():
    os.environ["MEDIAGATE_AGENT_TOOL_WASM"] = str(HERE.parent / "lib/components/mediagate-agent-tool.wasm")

# LiteLLM fetches its model cost map at import unless told to use the bundled copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from media import data_url, screenshot_png  # noqa: E402


def median_ms(fn, runs: int) -> float:
    fn()  # warm: the first call loads the compiled component
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def bodies(shot: bytes) -> dict:
    """(no media, 3 MB screenshot) request bodies per endpoint, as the SDKs send them."""
    b64 = base64.b64encode(shot).decode()
    text = "What does the screen say?"
    return {
        "chat": ({"model": "m", "messages": [{"role": "user", "content": text}]},
                 {"model": "m", "messages": [{"role": "user", "content": [
                     {"type": "text", "text": text},
                     {"type": "image_url", "image_url": {"url": data_url("image/png", shot)}}]}]}),
        "responses": ({"model": "m", "input": [{"role": "user", "content": [{"type": "input_text", "text": text}]}]},
                      {"model": "m", "input": [{"role": "user", "content": [
                          {"type": "input_text", "text": text},
                          {"type": "input_image", "image_url": data_url("image/png", shot)}]}]}),
        "messages": ({"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": text}]},
                     {"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": [
                         {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}},
                         {"type": "text", "text": text}]}]}),
    }


PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}


def bench_transport(gate, shot: bytes, runs: int) -> list:
    import httpx2

    from mediagate_host.transport import GateTransport

    answer = httpx2.MockTransport(lambda request: httpx2.Response(200, json={}))
    gated = GateTransport(answer, gate=gate)
    rows = []
    for endpoint, pair in bodies(shot).items():
        for label, body in zip(("no media", "3 MB screenshot"), pair):
            content = json.dumps(body).encode()

            def request():
                return httpx2.Request("POST", "http://127.0.0.1" + PATHS[endpoint], content=content,
                                      headers={"content-type": "application/json"})

            base = median_ms(lambda: answer.handle_request(request()), runs)
            with_gate = median_ms(lambda: gated.handle_request(request()), runs)
            rows.append((f"SDK transport, {endpoint} ({PATHS[endpoint]})", label, with_gate - base))
    return rows


def bench_pydantic_ai(gate, shot: bytes, runs: int) -> list:
    from pydantic_ai.messages import BinaryContent, ModelRequest, UserPromptPart

    from mediagate_host.pydantic_ai import MediaGate

    capability = MediaGate(gate=gate)
    text = "What does the screen say?"
    rows = []
    for label, content in (("no media", [text]), ("3 MB screenshot", [text, BinaryContent(shot, media_type="image/png")])):
        messages = [ModelRequest(parts=[UserPromptPart(content)])]

        def step():
            capability._cache.clear()
            capability.admit_messages(messages, "anthropic")

        rows.append(("pydantic-ai capability (anthropic profile)", label, median_ms(step, runs)))
    return rows


def bench_litellm(shot: bytes, runs: int) -> list:
    from mediagate_host.litellm_guardrail import MediagateGuardrail

    guardrail = MediagateGuardrail(profile="openai", guardrail_name="mediagate", event_hook="pre_call", default_on=True)
    rows = []
    for label, body in zip(("no media", "3 MB screenshot"), bodies(shot)["chat"]):
        def hook():
            data = json.loads(json.dumps(body))
            asyncio.run(guardrail.async_pre_call_hook(None, None, data, "acompletion"))

        def baseline():
            data = json.loads(json.dumps(body))
            asyncio.run(asyncio.sleep(0))
            return data

        rows.append(("LiteLLM guardrail (acompletion, openai profile)", label,
                     median_ms(hook, runs) - median_ms(baseline, runs)))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--only", choices=("sdk", "pydantic-ai", "litellm"), action="append",
                        help="these integrations only (default: every one this environment can import)")
    args = parser.parse_args()
    shot = screenshot_png(2560, 800)
    print(f"python {platform.python_version()}; {os.cpu_count()} cores; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; screenshot {len(shot)} bytes 2560x800 PNG; "
          f"{args.runs} runs, medians")
    from mediagate_host.transport import shared_gate

    gate = shared_gate()
    rows = []
    wanted = set(args.only or ("sdk", "pydantic-ai", "litellm"))
    if "sdk" in wanted and importlib.util.find_spec("httpx2") and importlib.util.find_spec("openai"):
        rows += bench_transport(gate, shot, args.runs)
    if "pydantic-ai" in wanted and importlib.util.find_spec("pydantic_ai"):
        rows += bench_pydantic_ai(gate, shot, args.runs)
    if "litellm" in wanted and importlib.util.find_spec("litellm"):
        rows += bench_litellm(shot, args.runs)
    print("| integration | request | added (median) |")
    print("|---|---|---|")
    for name, label, ms in rows:
        print(f"| {name} | {label} | {ms:.2f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
