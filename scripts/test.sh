#!/usr/bin/env bash
# Runs the whole test suite: the guest's unit tests, the end-to-end tests of the real component
# through the real host and CLI, and the other hosts (Python). Installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== Rust: guest unit tests, host end-to-end tests (release build)"
cargo test --release --locked --workspace
echo "== Python host (wasmtime-py)"
MEDIAGATE_BIN="$PWD/target/release/mediagate" bash hosts/python/test.sh
echo "== MCP server, driven by the official Python MCP client"
MEDIAGATE_BIN="$PWD/target/release/mediagate" bash tests/mcp/test.sh
echo "== MCP proxy in front of the official servers, driven by the official TypeScript SDK client"
MEDIAGATE_BIN="$PWD/target/release/mediagate" bash tests/proxy/test.sh
echo "== JavaScript package: Node, headless Chromium, verdict parity with the CLI"
MEDIAGATE_BIN="$PWD/target/release/mediagate" bash js/test.sh
