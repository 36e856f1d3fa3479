#!/usr/bin/env bash
# Installs tests/proxy's pinned npm packages (the official MCP servers and TypeScript SDK) with
# `npm ci`, once per package-lock.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
lock=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.installed-lock 2>/dev/null)" != "$lock" ]; then
    npm ci --no-audit --no-fund --loglevel=error
    echo "$lock" > node_modules/.installed-lock
fi
