#!/usr/bin/env bash
# Fuzzes the gate (fuzz_targets/gate.rs) for a bounded time on one core.
#   bash fuzz/run.sh [SECONDS]          default 600
#   RUNS=1000000 bash fuzz/run.sh       stop after that many executions instead (no time bound)
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`).
# Crashes land in fuzz/artifacts/gate/; reproduce one with
#   cargo +nightly fuzz run gate fuzz/artifacts/gate/crash-…
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-600}"
corpus=corpus/gate
mkdir -p "$corpus" artifacts/gate

# Seeds: the first byte of an input selects the entry point and its options (see the target).
#   low nibble 0-9: image claimed as png/jpeg/gif/webp/svg (n % 5); 10-11 document; 12 tool
#   result JSON; 13 an image inside a tool result; 14-15 sniff. 0x10 downsample, 0x20 verify full, top two bits the provider.
seed() { # selector file
    local out="$corpus/seed-$(basename "$2")-$1"
    [ -e "$out" ] || { printf "\\x$(printf %02x "$1")"; cat "$2"; } >"$out"
}
for f in ../tests/corpus/pngsuite/*.png; do
    [ "$(stat -c %s "$f")" -le 4096 ] || continue
    seed $((0x30)) "$f"; seed $((0x10)) "$f"
done
for f in seeds/*; do
    case "$f" in
        *.png) t=0 ;; *.jpg) t=1 ;; *.gif) t=2 ;; *.webp) t=3 ;; *.svg) t=4 ;;
        *.pdf) seed 10 "$f"; seed 14 "$f"; continue ;;
        *.json) seed $((0x0c)) "$f"; seed $((0x3c)) "$f"; seed $((0x7c)) "$f"; continue ;;
        *) continue ;;
    esac
    for opts in 0x00 0x10 0x20 0x30 0x70; do seed $((t | opts)) "$f"; done
    seed 14 "$f"
    # The same image inside a tool result (selector 13): claimed as its own type, in each shape.
    for shape in 0 1 2; do
        out="$corpus/seed-$(basename "$f")-in-result-$shape"
        [ -e "$out" ] || { printf "\\x3d\\x$(printf %02x "$t")\\x$(printf %02x "$shape")"; cat "$f"; } >"$out"
    done
done

runs_flag=()
time_flag=(-max_total_time="$seconds")
if [ -n "${RUNS:-}" ]; then runs_flag=(-runs="$RUNS"); time_flag=(); fi

# -max_len 4096: PngSuite-sized inputs keep executions fast; a 4 KiB file can still declare a
#   30000-px canvas or carry a zlib stream of megabytes.
# -rss_limit_mb 2048 / -malloc_limit_mb 1024: natively there is no sandbox; the decoders' own
#   limits (512 MiB per decode, 50 MP) must hold, and anything past these is a finding.
# -timeout 20: the component's CPU deadline.
exec cargo +nightly fuzz run -O gate "$corpus" -- \
    -max_len=4096 -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 \
    -print_final_stats=1 \
    "${runs_flag[@]}" "${time_flag[@]}"
