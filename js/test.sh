#!/usr/bin/env bash
# The JavaScript package's tests: installs what is missing, builds, runs every test.
# Idempotent; called by the project's top-level test script. `bash js/test.sh test/FILE.test.js…`
# runs only those files. Needs the guest component
# (target/guest/mediagate-preflight.wasm, and mediagate-convert.wasm for conversion) and the native CLI (target/{release,debug}/mediagate,
# or MEDIAGATE_BIN) to exist: `cargo build` makes both.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

suite=js/test.sh
source ../scripts/suite.sh

command -v node >/dev/null || die "node is not installed (Node >= 20 is needed)"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "Node >= 20 is needed, found $(node --version)"

need_chromium
npm_ci

say "npm run build -- --require-convert"
# The converter component too: the conversion tests need it (a package built without it only warns).
npm run build -- --require-convert

say "node $(node --version), $("$CHROMIUM_PATH" --version 2>/dev/null | head -n1), esbuild $(node_modules/.bin/esbuild --version)"
# node --test test/*.test.js: node, browser (demo page), types,
# options (createGate options through every function, each reaching the component), convert (the converter loaded lazily;
# Node, Worker), browser-convert (Chromium: no converter fetched unless a call converts; an SVG made
# on the page converted), worker (the Worker entry point in Node),
# limits and browser-limits (the CLI's memory limit and CPU deadline, a PDF bomb in the CLI's words; Node, Worker, Chromium),
# integrations (gatedFetch under the real OpenAI and Anthropic SDKs, the AI SDK middleware, a
# recording provider on 127.0.0.1), batch (Batch API files through @mediagate/preflight/batch against
# `mediagate admit-batch`, byte for byte; admitBatchLine and checkBatchFile), docs-snippets (docs/integrations.md's TypeScript snippets run),
# demo-drop (the demo's picker; the Worker unbundled in Chromium) and package (the npm tarball
# installed outside the repo, used from Node and through an esbuild bundle in Chromium).
# With arguments, only those test files (scripts/test.sh --quick runs one).
if [ "$#" -gt 0 ]; then
  say "node --test $*"
  node --test "$@"
else
  say "npm test"
  npm test
fi
