#!/usr/bin/env bash
# `mediagate proxy` end to end: the official MCP servers (server-everything, server-filesystem,
# pinned in package-lock.json, installed with `npm ci`) behind it, the official TypeScript SDK
# client in front, and faulty peers (tests/proxy/peers). Extra arguments go to `node --test`.
# The binary: $MEDIAGATE_BIN, else target/release/mediagate.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
root=$(cd ../.. && pwd)
export MEDIAGATE_BIN=${MEDIAGATE_BIN:-$root/target/release/mediagate}
if [ ! -x "$MEDIAGATE_BIN" ]; then
    echo "error: no mediagate binary at $MEDIAGATE_BIN; run cargo build --release -p mediagate-cli (or set MEDIAGATE_BIN)" >&2
    exit 2
fi
bash install.sh
echo "mediagate proxy: $MEDIAGATE_BIN; node $(node --version)"
exec node --test --test-concurrency=1 "$@" proxy.test.mjs
