#!/usr/bin/env bash
# Builds everything (the guest components, the host CLI) and runs the main job on a bundled
# example: the gate on a screenshot, as JSON and as a line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked -p mediagate
echo "+ target/release/mediagate admit examples/screenshot.png --json"
target/release/mediagate admit examples/screenshot.png --json
echo "+ target/release/mediagate admit examples/screenshot.png"
target/release/mediagate admit examples/screenshot.png
