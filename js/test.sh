#!/usr/bin/env bash
# The JavaScript package's tests: installs what is missing, builds, runs every test.
# Idempotent; called by the project's top-level test script. Needs the guest component
# (target/guest/mediagate-preflight.wasm, and mediagate-convert.wasm for conversion) and the native CLI (target/{release,debug}/mediagate,
# or MEDIAGATE_BIN) to exist: `cargo build` makes both.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

say() { printf '[js/test.sh] %s\n' "$*"; }
die() { printf '[js/test.sh] error: %s\n' "$*" >&2; exit 1; }

command -v node >/dev/null || die "node is not installed (Node >= 20 is needed)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "Node >= 20 is needed, found $(node --version)"

# Debian's Chromium, never a downloaded browser.
CHROMIUM_PATH=${CHROMIUM_PATH:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM_PATH" ]; then
  [ "$(id -u)" -eq 0 ] || die "$CHROMIUM_PATH is missing; as root: apt-get update && apt-get install -y chromium"
  say "installing Debian's chromium"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
  [ -x "$CHROMIUM_PATH" ] || die "apt-get installed chromium but $CHROMIUM_PATH is still missing"
fi
export CHROMIUM_PATH

# npm ci when node_modules is missing or the manifest/lock changed since the last install.
stamp=node_modules/.mediagate-install-stamp
want=$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "npm ci"
  npm ci --no-audit --no-fund
  echo "$want" > "$stamp"
fi

say "npm run build -- --require-convert"
# The converter component too: the conversion tests need it (a package built without it only warns).
npm run build -- --require-convert

say "node $(node --version), $("$CHROMIUM_PATH" --version 2>/dev/null | head -n1), esbuild $(node_modules/.bin/esbuild --version)"
# node --test test/*.test.js: node, browser (demo page), parity (CLI vs Node vs Chromium), types,
# options (createGate options through every function), convert (the converter loaded lazily;
# Node, Worker), browser-convert (Chromium: no converter fetched unless a call converts; an SVG made
# on the page converted), convert-parity (CLI --convert vs Node, with SHA-256 of the bytes), worker (the Worker entry point in Node),
# limits and browser-limits (the CLI's memory limit and CPU deadline, a PDF bomb in the CLI's words; Node, Worker, Chromium),
# demo-drop (the demo's picker; the Worker unbundled in Chromium) and package (the npm tarball
# installed outside the repo, used from Node and through an esbuild bundle in Chromium).
say "npm test"
npm test
