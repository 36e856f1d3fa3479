#!/usr/bin/env bash
# Runs the whole test suite: the guest's unit tests, the end-to-end tests of the real component
# through the real host and CLI, the other hosts (Python, JavaScript), the http-gate component under
# two engines, the deployment manifests, and the packages built and installed into clean places.
# Installs what is missing. Reuses the release build and test binaries of scripts/build.sh (one feature set:
# scripts/check-features.sh); the packages reuse it too (scripts/package.sh).
#
# Where the time goes on a fresh 2-core machine, and how this keeps it short: the Rust build is
# CPU-bound and runs alone; the tools it checks with are release binaries fetched once per machine
# (the wasmtime CLI, cargo-deny), not built; the suites that mostly wait on processes, browsers and
# I/O run side by side, each into its own log (target/test-logs/), printed whole when it ends.
# Any section or side-by-side suite that fails fails the script.
#
# `--quick`: a tier for a change in progress, a few minutes on 2 cores once scripts/build.sh has
# built (which builds the test binaries too): the unit tests of the guest and the library, the
# end-to-end tests of the CLI and the gate, one test file per other host (Python, JavaScript). The
# whole suite, above, is what CI runs; nothing here replaces it.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=false
case "${1:-}" in
  --quick) quick=true ;;
  "") ;;
  *)
    echo "usage: bash scripts/test.sh [--quick]" >&2
    exit 2
    ;;
esac
# Each section's heading carries the minutes and seconds since the start, so a run's log shows
# where CI's time goes.
section() { printf '== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
bash scripts/setup.sh
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
bin=$target/release/mediagate
logs=$target/test-logs
rm -rf "$logs"
mkdir -p "$logs"

# Side-by-side suites ("lanes"): each runs in its own process group (so an early exit stops all of
# it) with its output in $logs/NAME.log.
declare -A lane_pid=() lane_heading=()
lane() { # NAME HEADING COMMAND...
  local name=$1 heading=$2
  shift 2
  section "started, side by side: $heading (log: $logs/$name.log)"
  setsid "$@" >"$logs/$name.log" 2>&1 &
  lane_pid[$name]=$!
  lane_heading[$name]=$heading
}
failed=()
collect() { # NAME...: waits for each lane, then prints its heading, exit status and log
  local name rc
  for name in "$@"; do
    rc=0
    wait "${lane_pid[$name]}" || rc=$?
    unset 'lane_pid[$name]'
    section "${lane_heading[$name]} (exit $rc)"
    cat "$logs/$name.log"
    [ "$rc" -eq 0 ] || failed+=("$name")
  done
}
all_collected() { # fails the script, naming them, when a collected lane failed
  if [ "${#failed[@]}" -gt 0 ]; then
    echo "error: failed side by side: ${failed[*]} (logs above, and in $logs/)" >&2
    exit 1
  fi
}
stop_lanes() {
  local rc=$? name
  for name in "${!lane_pid[@]}"; do
    kill -- -"${lane_pid[$name]}" 2>/dev/null || true
    echo "stopped unfinished: ${lane_heading[$name]} (its log so far: $logs/$name.log)" >&2
  done
  section "done (exit $rc)"
}
trap stop_lanes EXIT

if $quick; then
  # `--workspace`: the feature set scripts/build.sh built the test binaries with (`-p mediagate-guest`
  # alone compiles the guest's dependencies again, and `--bins` the library and the command).
  section "Quick: the guest's and the library's unit tests"
  cargo test --release --locked --workspace --lib
  # The core of the end-to-end tests: the CLI's commands, inputs, walks and edges, the component's
  # entry and verdicts on the corpus, conversion, bulk runs, the docs' links and the module graph.
  # The long ones (bombs, mutation, load, the VLM faults, the MCP server's memory) are the full run's.
  section "Quick: the core end-to-end tests"
  cargo test --release --locked --workspace --test e2e -- \
    cli:: cli_hygiene:: cli_inputs:: cli_walks:: entry:: gate:: convert:: bulk:: docs:: module_graph::
  section "Quick: one Python host test file (test_gate.py)"
  MEDIAGATE_BIN="$bin" bash hosts/python/test.sh tests/test_gate.py
  section "Quick: one JavaScript test file (node.test.js)"
  MEDIAGATE_BIN="$bin" bash js/test.sh test/node.test.js
  exit 0
fi

# The wasmtime CLI for `wasmtime serve` (tests/http, tests/deploy), cached per machine by
# scripts/wasmtime-cli.sh: a download on Linux x86_64 and aarch64; elsewhere a build from source, which
# then runs beside the Rust build below (wherever it waits on a single-threaded link).
lane wasmtime-cli "The wasmtime CLI for wasmtime serve (scripts/wasmtime-cli.sh)" bash scripts/wasmtime-cli.sh

section "The tests carry their data (tests/corpus/), nothing outside the clone"
bash scripts/check-self-contained.sh
bash scripts/vendor-wit.sh --check # wit/deps is the WASI WIT of the pinned wasmtime crates
section "One feature set: the tests reuse the release build's dependencies (this builds the release build)"
bash scripts/check-features.sh
section "cargo deny: licenses, bans, sources (offline, no advisory database)"
bash scripts/check-deny.sh
# The workspace's tests include the guest's unit tests with its converters (the workspace builds the
# guest natively with them: facts/Cargo.toml) and facts/'s check that the files other languages read
# are what the Rust sources generate (scripts/check-facts.sh runs it alone).
section "Rust: guest unit tests, host end-to-end tests, the generated facts (release build)"
cargo test --release --locked --workspace
section "The components the crate carries are what the guest source builds to"
bash scripts/check-components.sh

# Installed once before the lanes: both the MCP suite and the proxy suite use these npm packages.
section "The official MCP servers and TypeScript SDK from npm (tests/proxy/install.sh), for the MCP and proxy suites"
bash tests/proxy/install.sh
lane python "Python host (wasmtime-py)" env MEDIAGATE_BIN="$bin" bash hosts/python/test.sh
lane mcp "MCP server, driven by the official Python MCP client" env MEDIAGATE_BIN="$bin" bash tests/mcp/test.sh
lane proxy "MCP proxy in front of the official servers, driven by the official TypeScript SDK client" \
  env MEDIAGATE_BIN="$bin" bash tests/proxy/test.sh
lane conformance "Conformance: the gate's verdicts judged by Pillow, libvips, Chromium, ImageMagick, pngcheck 4.0.1 and Debian's format tools" \
  env MEDIAGATE_BIN="$bin" bash tests/conformance/test.sh
lane smuggling "Smuggling: markers hidden where no decoder looks, searched for in the canonical form" \
  env MEDIAGATE_BIN="$bin" bash tests/smuggling/test.sh
lane pdf-grid "PDF image pages at every size: the converter against pdftoppm" \
  env MEDIAGATE_BIN="$bin" bash tests/pdf-grid/test.sh
section "JavaScript package: Node, headless Chromium, the options each reaching the component (the suites above run beside it)"
MEDIAGATE_BIN="$bin" bash js/test.sh
collect python mcp proxy conformance smuggling pdf-grid
all_collected

# Alone: maturin relinks the CLI stripped for the wheel (target/release/mediagate), which no suite
# may be running meanwhile; the npm tarball reuses js/'s build from the JavaScript section.
section "Packages: built into dist/ (scripts/package.sh)"
bash scripts/package.sh dist
lane packages "Packages: installed into clean places, used (tests/packages)" \
  nice -n 10 bash tests/packages/test.sh dist

collect wasmtime-cli
all_collected
wasmtime=$(tail -n 1 "$logs/wasmtime-cli.log")
lane integrations-python "Python integrations: the OpenAI/Anthropic SDK transports, the LiteLLM proxy guardrail, pydantic-ai" \
  bash hosts/python/test-integrations.sh
lane ray "Ray Data: the Python host's actors on a local two-node Ray cluster, one worker killed mid-job" \
  env MEDIAGATE_BIN="$bin" bash hosts/python/test-ray.sh
lane deploy "Deployment manifests (Spin, wasmCloud) against their published schemas; the documented engine lines" \
  env MEDIAGATE_BIN="$bin" WASMTIME="$wasmtime" bash tests/deploy/test.sh
lane wire "At the wire: request bodies through the CLI, the HTTP gate, gatedFetch, the Python transport, the AI SDK middleware, pydantic-ai, LiteLLM and the MCP proxy, compared byte for byte" \
  env MEDIAGATE_BIN="$bin" MEDIAGATE_WASMTIME="$wasmtime" bash tests/wire/test.sh
section "HTTP: the http-gate component under wasmtime serve and jco serve, behaviour and load (the suites above run beside it)"
# The load test here checks that no answer is lost or differs from the CLI's with 32 requests in
# flight; its throughput figures come from `bash tests/http/test.sh` alone on an idle machine
# (BENCHMARKS.md), at 10,000 and 2,000 requests. Beside the other suites, fewer requests check the
# same thing: jco's Worker per request costs ~0.4 s of CPU, and 2,000 of them took 9 of this
# script's minutes on 2 cores.
MEDIAGATE_BIN="$bin" MEDIAGATE_WASMTIME="$wasmtime" MEDIAGATE_HTTP_LOAD_REQUESTS=2000 MEDIAGATE_HTTP_LOAD_REQUESTS_JCO=300 \
  bash tests/http/test.sh
collect deploy packages integrations-python ray wire
all_collected
