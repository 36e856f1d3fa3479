#!/usr/bin/env bash
# Prints the path of a wasmtime CLI of the same version as the host's wasmtime (read from
# Cargo.lock), for `wasmtime serve` of the http-gate component (tests/http, docs/serving.md).
# Installs it once with `cargo install --locked` (only the features `serve` needs) into a per-user
# cache keyed by version and features, so later runs, and other clones, reuse the binary; its build
# directory is target/wasmtime-cli, beside the project's own build. Progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(awk '$0 == "name = \"wasmtime\"" { getline; gsub(/[^0-9.]/, "", $3); print $3; exit }' Cargo.lock)
[ -n "$version" ] || { echo "wasmtime-cli.sh: no wasmtime version in Cargo.lock" >&2; exit 1; }
# `component-model-async`: wasmtime-cli 48.0.8's `serve` does not compile without it (serve.rs names
# `ProxyPre::P3` and `futures` unconditionally).
features=serve,run,cranelift,pooling-allocator,parallel-compilation,component-model-async
cache=${MEDIAGATE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mediagate/tools}
root=$cache/wasmtime-cli-$version-$(printf %s "$features" | sha256sum | cut -c1-12)
bin=$root/bin/wasmtime
if ! { [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null | awk '{ print $2; exit }')" = "$version" ]; }; then
  echo "installing wasmtime-cli $version ($features) into $root" >&2
  rm -rf "$root.partial"
  cargo install wasmtime-cli --version "=$version" --locked --no-default-features --features "$features" \
    --root "$root.partial" --target-dir "$(realpath -m "${CARGO_TARGET_DIR:-target}")/wasmtime-cli" >&2
  rm -rf "$root"
  mv "$root.partial" "$root"
fi
echo "$bin"
