#!/usr/bin/env bash
# Fuzzes the gate for a bounded time on one core, one target after the other: installs cargo-fuzz
# (pinned, once, into the per-user tool cache scripts/check-deny.sh uses), builds the targets and
# runs each with its seeds.
#   bash fuzz/run.sh [SECONDS]              the targets (gate, convert, proxy, jpeg), SECONDS each (default 600)
#   TARGET=convert bash fuzz/run.sh 600     one target (or several, space-separated): gate
#                                            (fuzz_targets/gate.rs), convert, proxy or jpeg
#   RUNS=1000000 TARGET=convert bash fuzz/run.sh   stop after that many executions instead (no time bound)
#   JOBS=2 …                                 that many libFuzzer processes in parallel (-jobs/-workers)
#   SANITIZER=address …                      with AddressSanitizer (the default is none: safe Rust needs
#                                            it little, and the converters run 5–6× faster without it)
#   bash fuzz/run.sh --check                 only `cargo check` the targets (stable, no cargo-fuzz): CI's
#                                            guard that the fuzz crate still compiles
# cargo-fuzz passes rustc nightly-only flags (-Z sanitizer, -Z coverage options); RUSTC_BOOTSTRAP=1
# lets the stable toolchain take them, so no nightly toolchain is needed (TOOLCHAIN=nightly uses one).
# Crashes land in fuzz/artifacts/<target>/; reproduce one (SANITIZER as it was found) with
#   RUSTC_BOOTSTRAP=1 ~/.cache/mediagate/tools/cargo-fuzz-0.13.2/bin/cargo-fuzz fuzz run -O -s none <target> fuzz/artifacts/<target>/crash-…
# and minimise it with `… fuzz tmin -O -s none <target> <file>`.
set -euo pipefail
cd "$(dirname "$0")"
if [ "${1:-}" = --check ]; then
    # Every target with its dependencies, as checked metadata in the project's target directory
    # (CI's, kept warm; the instrumented build lives apart in fuzz/target).
    exec cargo check --locked --release --bins --target-dir "$(cd .. && realpath -m "${CARGO_TARGET_DIR:-target}")"
fi
seconds="${1:-600}"
targets="${TARGET:-gate convert proxy jpeg}"

version=0.13.2
cache=${MEDIAGATE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mediagate/tools}
root=$cache/cargo-fuzz-$version
cargo_fuzz=$root/bin/cargo-fuzz
if ! { [ -x "$cargo_fuzz" ] && "$cargo_fuzz" --version 2>/dev/null | grep -qF "cargo-fuzz $version"; }; then
    echo "installing cargo-fuzz $version into $root" >&2
    rm -rf "$root.partial"
    nice cargo install cargo-fuzz --version "=$version" --locked --root "$root.partial" \
        --target-dir "$PWD/target/cargo-fuzz" >&2
    rm -rf "$root"
    mv "$root.partial" "$root"
fi
export RUSTC_BOOTSTRAP=1
if [ -n "${TOOLCHAIN:-}" ]; then export RUSTUP_TOOLCHAIN=$TOOLCHAIN; fi
sanitizer=${SANITIZER:-none}
# -O: the release profile (overflow checks off, as the component is built); fuzz/target holds it.
for target in $targets; do nice -n 10 "$cargo_fuzz" fuzz build -O -s "$sanitizer" "$target"; done

seed() { # selector file [corpus]
    local out="$corpus/seed-$(basename "$2")-$1"
    [ -e "$out" ] || { printf "\\x$(printf %02x "$1")"; cat "$2"; } >"$out"
}

seed_gate() {
    # The first byte of an input selects the entry point and its options (see gate.rs).
    #   low nibble 0-9: image claimed as png/jpeg/gif/webp/svg (n % 5); 10-11 document; 12 tool
    #   result JSON; 13 an image inside a tool result; 14-15 sniff. 0x10 downsample, 0x20 verify full, top two bits the provider.
    for f in ../tests/corpus/pngsuite/*.png; do
        [ "$(stat -c %s "$f")" -le 4096 ] || continue
        seed $((0x30)) "$f"; seed $((0x10)) "$f"
    done
    # fuzz/seeds, then the conformance corpora's files (public suites, broken ones among them) up
    # to the -max_len.
    for f in seeds/* $(find ../tests/corpus/conformance/{png,jpeg,gif,webp,pdf} -type f -size -"$max_len"c | sort); do
        case "$f" in
            *.png) t=0 ;; *.jpg | *.jpeg) t=1 ;; *.gif) t=2 ;; *.webp) t=3 ;; *.svg) t=4 ;;
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
}

seed_convert() {
    # The first byte (see convert.rs): bits 0-2 the entry (0 SVG, 1 BMP, 2 TIFF, 3 ICO, 4 GIF for
    # OpenAI, 5 PDF page, 6 in a tool result, 7 in a request), 0x08 downsample, 0x10 verify full
    # (PDF: bits 4-5 the page), top two bits the provider. 6 and 7 take a second byte: the claimed
    # type (0 SVG, 1 BMP, 2 TIFF, 3 ICO, 4 GIF).
    # The real files of tests/corpus/convert (the hostile ones too) and of the conformance corpora
    # (BMP, TIFF, ICO, GIF, PDF suites) up to the -max_len, and fuzz/seeds.
    for f in ../tests/corpus/convert/* ../tests/corpus/conformance/{bmp,tiff,ico,gif,pdf}/* seeds/*; do
        [ "$(stat -c %s "$f")" -le "$max_len" ] || continue
        case "$f" in
            *.ref.png) continue ;;
            *.svg) t=0 ;; *.bmp) t=1 ;; *.tif | *.tiff) t=2 ;; *.ico) t=3 ;; *.gif) t=4 ;;
            *.pdf)
                for opts in 0x10 0x20 0x30 0x18 0x70 0xb0; do seed $((5 | opts)) "$f"; done
                continue ;;
            *) continue ;;
        esac
        for opts in 0x18 0x10 0x08 0x58 0x98 0xd8; do seed $((t | opts)) "$f"; done
        for sel in 0x1e 0x5e 0x1f 0x5f; do
            out="$corpus/seed-$(basename "$f")-in-$sel"
            [ -e "$out" ] || { printf "\\x${sel#0x}\\x$(printf %02x "$t")"; cat "$f"; } >"$out"
        done
    done
}

seed_jpeg() {
    # The first byte (see jpeg.rs): bit 0 downsample, bit 1 verify by header only, top two bits the
    # provider. The small JPEGs of fuzz/seeds (those that declare 4000x3000 to 65535x1 reach the
    # fit's reduced DCT scales) and those of tests/corpus (the conformance JPEGs among them, .jpg
    # and .jpeg) up to the -max_len.
    for f in seeds/*.jpg $(find ../tests/corpus \( -name '*.jpg' -o -name '*.jpeg' \) -size -"$max_len"c | sort); do
        for opts in 0x00 0x01 0x03 0x41 0x81 0xc1; do seed $((opts)) "$f"; done
    done
}

seed_proxy() {
    # The first byte (see proxy.rs): where the rest goes (0 the whole line, 1 a result, 2 error.data,
    # 3 a sampling request's content, 4 a notification's params, 5 an icon's src); the rest is JSON.
    for f in seeds/proxy-*.json; do
        for place in 0 1 2 3 4 5; do seed "$place" "$f"; done
    done
}

# Each slow or timed-out unit of a target, replayed alone (at the fuzzer's niceness) and measured in
# CPU seconds (user + system); over 2 s is a finding: every verdict is due within 2 s of CPU.
replay_slow() { # target
    local unit cpu slow=0 TIMEFORMAT=%U+%S
    for unit in artifacts/"$1"/slow-unit-* artifacts/"$1"/timeout-*; do
        [ -e "$unit" ] || continue
        cpu=$( { time nice -n 15 target/*/release/"$1" -runs=1 "$unit" >/dev/null 2>&1; } 2>&1 )
        cpu=$(awk "BEGIN { print $cpu }")
        echo "fuzz/run.sh: $unit: $cpu s of CPU replayed alone" >&2
        if awk "BEGIN { exit !($cpu > 2) }"; then slow=1; fi
    done
    # Natively there is no 512 MiB meter and the build is instrumented: confirm each through the
    # component (fuzz/README.md, "The command").
    if [ "$slow" = 1 ]; then status=1; found="$found $1(over 2 s CPU natively: confirm through the component)"; fi
}

found=""
status=0
for target in $targets; do
    corpus=corpus/$target
    mkdir -p "$corpus" "artifacts/$target"
    case "$target" in
        # 4 KiB: PngSuite-sized inputs keep executions fast; a 4 KiB file can still declare a
        #   30000-px canvas or carry a zlib stream of megabytes.
        gate) max_len=4096; seed_gate ;;
        # 16 KiB: the SVGs and PDFs that matter (fonts, embedded images, page trees) fit.
        convert) max_len=16384; seed_convert ;;
        # 4 KiB: a message with a few small media blocks, icons and blobs.
        proxy) max_len=4096; seed_proxy ;;
        # 8 KiB: a few hundred bytes can declare 7000x7000 (the decoder pads a short scan).
        jpeg) max_len=8192; seed_jpeg ;;
        *) echo "unknown target $target (gate, convert, proxy, jpeg)" >&2; exit 2 ;;
    esac
    runs_flag=()
    time_flag=(-max_total_time="$seconds")
    if [ -n "${RUNS:-}" ]; then runs_flag=(-runs="$RUNS"); time_flag=(); fi
    jobs_flag=()
    if [ -n "${JOBS:-}" ]; then jobs_flag=(-jobs="$JOBS" -workers="$JOBS"); fi
    # -rss_limit_mb 2048 / -malloc_limit_mb 1024: natively there is no sandbox; the decoders' and
    #   renderers' own limits (512 MiB per decode, 50 MP, the 2000² fit) must hold; more is a finding.
    # -timeout 60 / -report_slow_units 2: libFuzzer times a unit by the wall clock, which on a
    #   shared machine (at nice 15) runs many times the CPU time. A hang still stops the target at
    #   60 s; every unit over 2 s of wall time is kept (slow-unit-*) and, with any timeout, replayed
    #   below for its CPU time, which is what the 2 s rule counts.
    # A finding stops this target, not the next; the exit status says whether any target found one.
    nice -n 15 "$cargo_fuzz" fuzz run -O -s "$sanitizer" "$target" "$corpus" -- \
        -max_len="$max_len" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout="${UNIT_TIMEOUT:-60}" \
        -report_slow_units=2 -print_final_stats=1 \
        "${runs_flag[@]}" "${time_flag[@]}" "${jobs_flag[@]}" || { status=$?; found="$found $target"; }
    replay_slow "$target"
done
if [ -n "$found" ]; then
    echo "fuzz/run.sh: findings in$found (see fuzz/artifacts/)" >&2
    exit "$status"
fi
