#!/usr/bin/env bash
# Builds everything (the guest components, the host CLI) and runs the main job on a bundled
# example: the gate on a screenshot, as JSON and as a line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked -p mediagate-cli
bin=${CARGO_TARGET_DIR:-target}/release/mediagate
echo "+ $bin admit examples/screenshot.png --json"
"$bin" admit examples/screenshot.png --json
echo "+ $bin admit examples/screenshot.png"
"$bin" admit examples/screenshot.png
