#!/usr/bin/env bash
# Installs what the build needs on a machine that has only the Rust toolchain: the wasm32-wasip2
# target. Idempotent; sourced by build.sh and test.sh.
set -euo pipefail
if ! rustup target list --installed | grep -qx wasm32-wasip2; then
  rustup target add wasm32-wasip2
fi
