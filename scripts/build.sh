#!/usr/bin/env bash
# Builds everything (the guest components, the host CLI, the test binaries) and runs the main job
# on a bundled example: the gate on a screenshot, as JSON and as a line. The test binaries are built
# here (compiled, not run) so that `scripts/test.sh`, and its `--quick` tier, compile nothing of Rust.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked -p mediagate-cli
bin=${CARGO_TARGET_DIR:-target}/release/mediagate
echo "+ $bin admit examples/screenshot.png --json"
"$bin" admit examples/screenshot.png --json
echo "+ $bin admit examples/screenshot.png"
"$bin" admit examples/screenshot.png
# The command scripts/test.sh runs, with its feature set (scripts/check-features.sh); the guest's
# unit tests in it carry the converters' (facts/Cargo.toml).
echo "+ cargo test --release --locked --workspace --no-run"
cargo test --release --locked --workspace --no-run
