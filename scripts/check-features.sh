#!/usr/bin/env bash
# One build of each dependency. Every library that `cargo build -p mediagate-cli` (scripts/build.sh,
# `cargo install mediagate-cli`, the CLI wheel) compiles must be the very artifact `cargo test
# --workspace` (scripts/test.sh) links, so the tests reuse the release build's wasmtime and
# cranelift instead of compiling them a second time; and lib/build.rs (which precompiles the
# components) must share the binary's wasmtime.
#
# Cargo unifies features over what one command builds: the test build adds dev-dependencies and the
# guest's and bench's native builds, which can turn on a feature of a crate the host depends on, and
# that changes the hash of every crate above it. The pins in cli/Cargo.toml (and, for the build
# script, lib/Cargo.toml [build-dependencies]) keep the sets equal. Comparing feature lists is not
# enough (a crate built twice, once per side, shows both lists in either command), so this compares
# what cargo names the artifacts: the hash in a file name covers features, profile and every
# dependency. After scripts/build.sh both commands are fresh and this compiles nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(mktemp)
tests=$(mktemp)
trap 'rm -f "$build" "$tests"' EXIT
cargo build --release --locked -p mediagate-cli --message-format=json >"$build"
cargo test --release --locked --workspace --no-run --message-format=json >"$tests"
python3 - "$build" "$tests" <<'EOF'
import collections, json, sys

def libraries(path):
    """(package, target) -> {artifact file names: features} for every library compiled."""
    out = collections.defaultdict(dict)
    with open(path) as f:
        for line in f:
            m = json.loads(line)
            if m.get("reason") != "compiler-artifact" or m["profile"]["test"]:
                continue
            if not set(m["target"]["kind"]) - {"bin", "test", "bench", "example", "custom-build"}:
                continue
            name = m["package_id"].rsplit("#", 1)[-1] + " " + m["target"]["name"]
            out[name][tuple(sorted(m["filenames"]))] = m["features"]
    return out

build, tests = libraries(sys.argv[1]), libraries(sys.argv[2])
failed = False

twice = sorted(n for n, arts in build.items() if len(arts) > 1)
if twice:
    failed = True
    print("error: the release build compiles these twice, once for lib/build.rs and once for the binary:",
          file=sys.stderr)
    for n in twice:
        print(f"  {n}: " + " | ".join(",".join(f) or "(no features)" for f in build[n].values()), file=sys.stderr)
    print("Pin the binary's features in lib/Cargo.toml [build-dependencies] (see the comment there).", file=sys.stderr)

again = sorted(n for n, arts in build.items() if n in tests and not set(arts) <= set(tests[n]))
if again:
    failed = True
    # The crates whose own features differ are the cause; the rest are compiled again because a
    # dependency was.
    cause = [n for n in again
             if {tuple(f) for f in build[n].values()} != {tuple(f) for f in tests[n].values()}]
    print(f"error: `cargo test --workspace` compiles {len(again)} of the release build's libraries a second time.",
          file=sys.stderr)
    for n in cause:
        print(f"  {n}\n    build: {sorted(map(sorted, build[n].values()))}\n    tests: {sorted(map(sorted, tests[n].values()))}",
              file=sys.stderr)
    print("  and so, above them: " + ", ".join(n for n in again if n not in cause), file=sys.stderr)
    print("Pin the tests' features in cli/Cargo.toml [dependencies] (and lib/Cargo.toml", file=sys.stderr)
    print("[build-dependencies] if build.rs's side needs them too; see the comments there).", file=sys.stderr)

if failed:
    sys.exit(1)
print(f"one build of each dependency: the tests link the release build's {len(build)} libraries,"
      " and build.rs shares the binary's wasmtime")
EOF
