#!/usr/bin/env bash
# Reruns every benchmark figure in one go and prints them side by side (BENCHMARKS.md).
# Installs what it needs: the wasm target, sharp (pinned, from npm), pdftoppm (poppler-utils, apt),
# djpeg (libjpeg-turbo-progs, apt).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
suite=bench
source scripts/suite.sh
command -v pdftoppm >/dev/null || apt_install poppler-utils
command -v djpeg >/dev/null || apt_install libjpeg-turbo-progs
(cd bench/sharp && { [ -d node_modules/sharp ] || npm install --no-audit --no-fund --silent; })
cargo build --release --locked -p mediagate-cli -p mediagate-bench
exec target/release/mediagate-bench "$@"
