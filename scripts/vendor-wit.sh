#!/usr/bin/env bash
# Re-vendors the WASI WIT packages the worlds import (wit/deps/{io,clocks,filesystem,http,cli,random,sockets}.wit)
# verbatim from the wasmtime-wasi and wasmtime-wasi-http crates of the wasmtime release Cargo.lock
# pins (the version of wasmtime-wasi, which the host links; wasmtime-wasi-http is published with it
# and is no dependency), so the WIT the guest is built against is the WIT the host implements: io,
# clocks and filesystem from wasmtime-wasi (src/p2/wit/deps/), http, cli, random and sockets from
# wasmtime-wasi-http (wit/deps/). The crates' sources come from cargo's registry (`cargo fetch`,
# of a throwaway manifest naming exactly that version, when they are not there yet). Nothing else
# belongs in wit/deps: the project's own contract is wit/*.wit, one version.
#
#   bash scripts/vendor-wit.sh           rewrites wit/deps from the pinned crates
#   bash scripts/vendor-wit.sh --check   fails, naming each file, when wit/deps differs from them
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-write}
case $mode in write | --check) ;; *) echo "usage: bash scripts/vendor-wit.sh [--check]" >&2; exit 2 ;; esac

# "CRATE DIRECTORY-IN-CRATE PACKAGES..."
sources=(
  "wasmtime-wasi src/p2/wit/deps io clocks filesystem"
  "wasmtime-wasi-http wit/deps http cli random sockets"
)
version=$(awk '$0 == "name = \"wasmtime-wasi\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
[ -n "$version" ] || { echo "error: Cargo.lock pins no wasmtime-wasi" >&2; exit 1; }
crate_dir() { # CRATE: its unpacked source in cargo's registry, if there
  compgen -G "${CARGO_HOME:-$HOME/.cargo}/registry/src/*/$1-$version" | head -n 1 || true
}
fetch() { # CRATE: into cargo's registry, through a throwaway manifest that names only it
  local scratch
  scratch=$(mktemp -d)
  printf '[package]\nname = "vendor-wit"\nversion = "0.0.0"\nedition = "2021"\n[lib]\npath = "lib.rs"\n[dependencies]\n%s = "=%s"\n' \
    "$1" "$version" >"$scratch/Cargo.toml"
  touch "$scratch/lib.rs"
  cargo fetch --quiet --manifest-path "$scratch/Cargo.toml" || true
  rm -rf "$scratch"
}

vendored=()
failed=0
for source in "${sources[@]}"; do
  read -r crate dir packages <<<"$source"
  from=$(crate_dir "$crate")
  if [ -z "$from" ]; then
    fetch "$crate"
    from=$(crate_dir "$crate")
  fi
  [ -n "$from" ] || { echo "error: $crate $version is not in cargo's registry after cargo fetch" >&2; exit 1; }
  for package in $packages; do
    vendored+=("$package.wit")
    if [ "$mode" = --check ]; then
      if ! cmp -s "$from/$dir/$package.wit" "wit/deps/$package.wit"; then
        echo "wit/deps/$package.wit differs from $crate $version ($dir/$package.wit)" >&2
        failed=1
      fi
    else
      cp "$from/$dir/$package.wit" "wit/deps/$package.wit"
    fi
  done
done
# Nothing else beside them.
for file in wit/deps/*; do
  name=${file#wit/deps/}
  case " ${vendored[*]} " in *" $name "*) continue ;; esac
  echo "wit/deps/$name is not vendored from the WASI crates" >&2
  failed=1
done
if [ "$failed" -ne 0 ]; then
  [ "$mode" = --check ] && echo "error: wit/deps is not what bash scripts/vendor-wit.sh vendors" >&2
  exit 1
fi
[ "$mode" = --check ] && echo "wit/deps: the WASI WIT of the pinned crates"
exit 0
