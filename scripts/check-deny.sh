#!/usr/bin/env bash
# `cargo deny check licenses bans sources` over the workspace's dependencies, with deny.toml: every
# crate's license on the allowed list, no crate the list bans, every crate from crates.io. Offline:
# no advisory database is fetched (advisories are not among the checks), the lock file as it is.
# Installs cargo-deny once with `cargo install --locked` (pinned) into a per-user cache keyed by
# version, as scripts/wasmtime-cli.sh does; its build directory is target/cargo-deny.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.20.2
cache=${MEDIAGATE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mediagate/tools}
root=$cache/cargo-deny-$version
bin=$root/bin/cargo-deny
if ! { [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -qxF "cargo-deny $version"; }; then
  echo "installing cargo-deny $version into $root" >&2
  rm -rf "$root.partial"
  cargo install cargo-deny --version "=$version" --locked --root "$root.partial" \
    --target-dir "$(realpath -m "${CARGO_TARGET_DIR:-target}")/cargo-deny" >&2
  rm -rf "$root"
  mv "$root.partial" "$root"
fi
# Every crate of the lock file for every platform, from crates.io (a build fetches only the host's);
# the check itself then runs offline.
cargo fetch --locked >&2
exec "$bin" --locked --offline check licenses bans sources
