#!/usr/bin/env bash
# Runs the whole test suite: the guest's unit tests, the end-to-end tests of the real component
# through the real host and CLI, the other hosts (Python, JavaScript), the http-gate component under
# two engines, the deployment manifests, and the packages built and installed into clean places.
# Installs what is missing. Reuses the release build of scripts/build.sh (one feature set:
# scripts/check-features.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each section's heading carries the minutes and seconds since the start, so a run's log shows
# where CI's time goes.
section() { printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
trap 'section "done (exit $?)"' EXIT
bash scripts/setup.sh
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
bin=$target/release/mediagate
section "The tests carry their data (tests/corpus/), nothing outside the clone"
bash scripts/check-self-contained.sh
section "One feature set: the tests reuse the release build's dependencies"
bash scripts/check-features.sh
section "cargo deny: licenses, bans, sources (offline, no advisory database)"
bash scripts/check-deny.sh
bash fuzz/run.sh --check # the fuzz targets still compile (fuzzing itself is too long for CI: fuzz/README.md)
section "Rust: guest unit tests, host end-to-end tests (release build)"
cargo test --release --locked --workspace
# The workspace builds the guest natively without its converters (the preflight feature set); their
# unit tests (SVG, BMP/TIFF/ICO, GIF frames, PDF pages, the hostile files) need the feature.
section "Rust: the guest's converters' unit tests (feature convert)"
cargo test --release --locked -p mediagate-guest --features convert --lib
section "The components the crate carries are what the guest source builds to"
bash scripts/check-components.sh
# The wasmtime CLI that serves the http-gate component (tests/http, tests/deploy) is built once per
# machine (scripts/wasmtime-cli.sh caches it). When it is not cached yet, it builds in the background
# while the suites below, which mostly wait on processes and I/O, run; nice keeps them responsive.
wasmtime_log=$target/wasmtime-cli.log
mkdir -p "$target"
setsid nice -n 10 bash scripts/wasmtime-cli.sh >"$wasmtime_log" 2>&1 &
wasmtime_job=$!
trap 'rc=$?; kill -- -"$wasmtime_job" 2>/dev/null || true; section "done (exit $rc)"' EXIT
section "Python host (wasmtime-py)"
MEDIAGATE_BIN="$bin" bash hosts/python/test.sh
section "MCP server, driven by the official Python MCP client"
MEDIAGATE_BIN="$bin" bash tests/mcp/test.sh
section "MCP proxy in front of the official servers, driven by the official TypeScript SDK client"
MEDIAGATE_BIN="$bin" bash tests/proxy/test.sh
section "JavaScript package: Node, headless Chromium, verdict parity with the CLI"
MEDIAGATE_BIN="$bin" bash js/test.sh
section "The wasmtime CLI for wasmtime serve (scripts/wasmtime-cli.sh)"
if ! wait "$wasmtime_job"; then
  cat "$wasmtime_log" >&2
  echo "installing the wasmtime CLI failed (log above)" >&2
  exit 1
fi
wasmtime=$(tail -n 1 "$wasmtime_log")
echo "$wasmtime"
section "HTTP: the http-gate component under wasmtime serve and jco serve, behaviour and load"
MEDIAGATE_BIN="$bin" MEDIAGATE_WASMTIME="$wasmtime" bash tests/http/test.sh
section "Deployment manifests (Spin, wasmCloud) against their published schemas; the documented engine lines"
MEDIAGATE_BIN="$bin" WASMTIME="$wasmtime" bash tests/deploy/test.sh
section "Packages: built into dist/, installed into clean places, used"
bash scripts/package.sh dist
bash tests/packages/test.sh dist
