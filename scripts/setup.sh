#!/usr/bin/env bash
# Installs what the build needs on a machine that has only the Rust toolchain: the guest's target,
# wasm32-unknown-unknown (lib/build.rs builds the guest's core module for it and makes it a
# component). Idempotent; sourced by build.sh and test.sh.
set -euo pipefail
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  rustup target add wasm32-unknown-unknown
fi
