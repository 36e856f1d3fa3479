#!/usr/bin/env bash
# The Python host's tests: creates hosts/python/.venv if needed, installs the pinned
# requirements, runs pytest. Idempotent; exits non-zero on any failure.
# Needs the component (target/guest/mediagate-agent-tool.wasm, or $MEDIAGATE_AGENT_TOOL_WASM)
# and the native CLI (target/{release,debug}/mediagate, or $MEDIAGATE_BIN) for the tests that run it
# beside the host (tool results, requests, batch files).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
suite=hosts/python
source ../../scripts/suite.sh
python_venv .venv 9 requirements.txt

# The compiled component is cached here rather than in the user's ~/.cache.
export MEDIAGATE_CACHE_DIR=${MEDIAGATE_CACHE_DIR:-$PWD/.cache}
exec .venv/bin/python -m pytest -q "$@"
