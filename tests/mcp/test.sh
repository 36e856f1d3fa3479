#!/usr/bin/env bash
# `mediagate mcp` end to end with the official MCP Python SDK as the client: creates
# tests/mcp/.venv if needed, installs the pinned requirements, runs pytest. Idempotent; exits
# non-zero on any failure. Extra arguments go to pytest.
# The server binary: $MEDIAGATE_BIN, else target/release/mediagate if built, else target/debug/mediagate.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
suite=tests/mcp
source ../../scripts/suite.sh
root=$(cd ../.. && pwd)

if [ -z "${MEDIAGATE_BIN:-}" ]; then
    if [ -x "$root/target/release/mediagate" ]; then
        MEDIAGATE_BIN=$root/target/release/mediagate
    else
        MEDIAGATE_BIN=$root/target/debug/mediagate
    fi
fi
if [ ! -x "$MEDIAGATE_BIN" ]; then
    echo "error: no mediagate binary at $MEDIAGATE_BIN; run cargo build --release -p mediagate-cli (or set MEDIAGATE_BIN)" >&2
    exit 2
fi
export MEDIAGATE_BIN

python_venv .venv 11 requirements.txt
# test_proxy.py puts `mediagate proxy` in front of the official MCP servers from npm.
bash ../proxy/install.sh

echo "mediagate mcp: $MEDIAGATE_BIN; client: mcp $(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("mcp"))')"
exec .venv/bin/python -m pytest -q "$@"
