#!/usr/bin/env bash
# Reruns every benchmark figure in one go and prints them side by side (BENCHMARKS.md).
# Installs what it needs: the wasm target, sharp (pinned, from npm), pdftoppm (poppler-utils, apt).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if ! command -v pdftoppm >/dev/null; then
  [ "$(id -u)" -eq 0 ] || { echo "bench/run.sh: pdftoppm is missing; as root: apt-get update && apt-get install -y poppler-utils" >&2; exit 1; }
  apt-get update -qq
  apt-get install -y -qq poppler-utils >/dev/null
fi
(cd bench/sharp && { [ -d node_modules/sharp ] || npm install --no-audit --no-fund --silent; })
cargo build --release --locked -p mediagate -p mediagate-bench
exec target/release/mediagate-bench "$@"
