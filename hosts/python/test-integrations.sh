#!/usr/bin/env bash
# The integrations' tests (OpenAI and Anthropic SDK transports, the LiteLLM proxy guardrail,
# pydantic-ai), each against the real pinned package and a loopback provider on 127.0.0.1.
# Two virtual environments, made if missing and given the pinned requirements (as test.sh does):
#   .venv-integrations  requirements-integrations.txt (the SDKs, pydantic-ai, pytest)
#   .venv-litellm       requirements-litellm.txt (litellm[proxy]: its own, since it pins other
#                       versions of openai and httpx than the SDK tests use); the tests start
#                       `.venv-litellm/bin/litellm --config …` from it.
# Needs the component: target/guest/mediagate-agent-tool.wasm, else the carried
# lib/components/ copy, or $MEDIAGATE_AGENT_TOOL_WASM. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
suite=hosts/python/integrations
source ../../scripts/suite.sh
for env in integrations litellm; do
    python_venv ".venv-$env" 11 "requirements-$env.txt"
done

if [ -z "${MEDIAGATE_AGENT_TOOL_WASM:-}" ] && [ ! -f ../../target/guest/mediagate-agent-tool.wasm ]; then
    export MEDIAGATE_AGENT_TOOL_WASM=$PWD/../../lib/components/mediagate-agent-tool.wasm
fi
export MEDIAGATE_CACHE_DIR=${MEDIAGATE_CACHE_DIR:-$PWD/.cache}
exec .venv-integrations/bin/python -m pytest -q -p no:cacheprovider tests_integrations "$@"
