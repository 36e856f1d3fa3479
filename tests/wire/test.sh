#!/usr/bin/env bash
# At the wire, differentially: request bodies made by the test (tests/wire/bodies.mjs) through every
# front end that takes a raw request body, and the bytes that reach a provider on 127.0.0.1
# compared with what `mediagate admit-request` writes: the http-gate component under `wasmtime
# serve`, gatedFetch (js/src/fetch.js) and the Python transport (hosts/python, GateTransport); the
# AI SDK middleware, pydantic-ai and the LiteLLM proxy's guardrail (the body each framework sends
# without the gate, media it downloads from 127.0.0.1 included, judged by the CLI, against the body
# that arrives with it); tool results through `mediagate proxy` against
# `mediagate admit-tool-result`. Each front end gets the component the CLI carries, so they judge
# with the same build.
#   MEDIAGATE_BIN        the mediagate CLI (the reference); default target/release/mediagate
#   MEDIAGATE_WASMTIME   a wasmtime CLI to use instead of scripts/wasmtime-cli.sh
#   MEDIAGATE_WIRE_LITELLM  a `litellm` CLI to use instead of tests/wire/.venv-litellm's
# Arguments: the test files to run (default: every tests/wire/*.test.mjs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
suite=tests/wire
source scripts/suite.sh

need_node_cli_and_wasmtime
# The Python front ends (GateTransport, pydantic-ai) run with the integrations' pinned packages, in
# a venv of this suite's own: hosts/python/.venv-integrations is made by a suite that scripts/test.sh
# runs beside this one, and two pip runs must not make one venv at once.
python_venv tests/wire/.venv 11 hosts/python/requirements-integrations.txt
export MEDIAGATE_WIRE_PYTHON=$PWD/tests/wire/.venv/bin/python
# LiteLLM pins other openai/httpx versions than the integrations: a venv of its own, this suite's
# for the same reason (hosts/python/.venv-litellm is the integrations suite's to make).
python_venv tests/wire/.venv-litellm 11 hosts/python/requirements-litellm.txt
export MEDIAGATE_WIRE_LITELLM=$PWD/tests/wire/.venv-litellm/bin/litellm
export PYTHONPATH=$PWD/hosts/python${PYTHONPATH:+:$PYTHONPATH}
export MEDIAGATE_CACHE_DIR=${MEDIAGATE_CACHE_DIR:-$PWD/hosts/python/.cache}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for world in http-gate agent-tool preflight convert; do
  "$MEDIAGATE_BIN" component --world "$world" --out "$work/mediagate-$world.wasm"
done
export MEDIAGATE_HTTP_GATE=$work/mediagate-http-gate.wasm
export MEDIAGATE_AGENT_TOOL_WASM=$work/mediagate-agent-tool.wasm
(cd js && MEDIAGATE_PREFLIGHT_WASM=$work/mediagate-preflight.wasm MEDIAGATE_CONVERT_WASM=$work/mediagate-convert.wasm \
  npm run --silent build -- --require-convert)

say "$("$MEDIAGATE_WASMTIME" --version), node $(node --version), $("$MEDIAGATE_WIRE_PYTHON" --version)"
if [ "$#" -gt 0 ]; then
  node --test --test-concurrency=1 "$@"
else
  node --test --test-concurrency=1 tests/wire/*.test.mjs
fi
