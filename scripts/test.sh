#!/usr/bin/env bash
# Runs the whole test suite: the guest's unit tests, the end-to-end tests of the real component
# through the real host and CLI, the other hosts (Python, JavaScript), the http-gate component under
# two engines, the deployment manifests, and the packages built and installed into clean places.
# Installs what is missing. Reuses the release build of scripts/build.sh (one feature set:
# scripts/check-features.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
bin=$target/release/mediagate
echo "== The tests carry their data (tests/corpus/), nothing outside the clone"
bash scripts/check-self-contained.sh
echo "== One feature set: the tests reuse the release build's dependencies"
bash scripts/check-features.sh
echo "== Rust: guest unit tests, host end-to-end tests (release build)"
cargo test --release --locked --workspace
# The workspace builds the guest natively without its converters (the preflight feature set); their
# unit tests (SVG, BMP/TIFF/ICO, GIF frames, PDF pages, the hostile files) need the feature.
echo "== Rust: the guest's converters' unit tests (feature convert)"
cargo test --release --locked -p mediagate-guest --features convert --lib
echo "== The components the crate carries are what the guest source builds to"
bash scripts/check-components.sh
# The wasmtime CLI that serves the http-gate component (tests/http, tests/deploy) is built once per
# machine (scripts/wasmtime-cli.sh caches it). When it is not cached yet, it builds in the background
# while the suites below, which mostly wait on processes and I/O, run; nice keeps them responsive.
wasmtime_log=$target/wasmtime-cli.log
mkdir -p "$target"
setsid nice -n 10 bash scripts/wasmtime-cli.sh >"$wasmtime_log" 2>&1 &
wasmtime_job=$!
trap 'kill -- -"$wasmtime_job" 2>/dev/null || true' EXIT
echo "== Python host (wasmtime-py)"
MEDIAGATE_BIN="$bin" bash hosts/python/test.sh
echo "== MCP server, driven by the official Python MCP client"
MEDIAGATE_BIN="$bin" bash tests/mcp/test.sh
echo "== MCP proxy in front of the official servers, driven by the official TypeScript SDK client"
MEDIAGATE_BIN="$bin" bash tests/proxy/test.sh
echo "== JavaScript package: Node, headless Chromium, verdict parity with the CLI"
MEDIAGATE_BIN="$bin" bash js/test.sh
echo "== Conformance: the gate's verdicts judged by Pillow, libvips, Chromium and Debian's format tools"
MEDIAGATE_BIN="$bin" bash tests/conformance/test.sh
echo "== The wasmtime CLI for wasmtime serve (scripts/wasmtime-cli.sh)"
if ! wait "$wasmtime_job"; then
  cat "$wasmtime_log" >&2
  echo "installing the wasmtime CLI failed (log above)" >&2
  exit 1
fi
wasmtime=$(tail -n 1 "$wasmtime_log")
echo "$wasmtime"
echo "== HTTP: the http-gate component under wasmtime serve and jco serve, behaviour and load"
MEDIAGATE_BIN="$bin" MEDIAGATE_WASMTIME="$wasmtime" bash tests/http/test.sh
echo "== Deployment manifests (Spin, wasmCloud) against their published schemas; the documented engine lines"
MEDIAGATE_BIN="$bin" WASMTIME="$wasmtime" bash tests/deploy/test.sh
echo "== Packages: built into dist/, installed into clean places, used"
bash scripts/package.sh dist
bash tests/packages/test.sh dist
