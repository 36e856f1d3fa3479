#!/usr/bin/env bash
# Installs tests/proxy's pinned npm packages (the official MCP servers and TypeScript SDK) with
# `npm ci`, when package.json or package-lock.json changed since the last install.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
suite=tests/proxy
source ../../scripts/suite.sh
npm_ci
