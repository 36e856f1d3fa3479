#!/usr/bin/env bash
# One feature set: every crate that `cargo build -p mediagate-cli` (scripts/build.sh, `cargo install
# mediagate-cli`, the CLI wheel) compiles must be compiled with the same features by `cargo test
# --workspace` (scripts/test.sh), so the tests reuse the release build's wasmtime and cranelift
# instead of compiling them again. Cargo unifies features over what a command builds; the test build
# adds dev-dependencies and the guest's and bench's native builds, which can turn on a feature of a
# crate the host depends on (and so change the hash of everything above it). The pins in
# cli/Cargo.toml keep the sets equal; this fails, naming the crate and the features, when they drift.
# Second check (below): build.rs and the binary share one wasmtime.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cargo tree --locked -p mediagate-cli -e normal,build --prefix none -f '{p}|{f}')
tests=$(cargo tree --locked --workspace -e normal,build,dev --prefix none -f '{p}|{f}')
python3 - "$build" "$tests" <<'EOF'
import sys
from collections import defaultdict

def sets(text):
    out = defaultdict(set)
    for line in text.splitlines():
        line = line.removesuffix(" (*)").strip()
        if "|" not in line:
            continue
        pkg, features = line.split("|", 1)
        out[pkg.strip()].add(features.strip())
    return out

build, tests = sets(sys.argv[1]), sets(sys.argv[2])
drift = [(p, build[p], tests[p]) for p in sorted(build) if p in tests and not build[p] <= tests[p]]
if drift:
    print("error: the test build compiles these crates with other features than `cargo build -p mediagate-cli`,", file=sys.stderr)
    print("so scripts/test.sh would compile them (and everything above them) a second time:", file=sys.stderr)
    for p, b, t in drift:
        print(f"  {p}\n    build: {sorted(b)}\n    tests: {sorted(t)}", file=sys.stderr)
    print("Pin the tests' features in cli/Cargo.toml [dependencies] (see the comment there).", file=sys.stderr)
    sys.exit(1)
print(f"one feature set: the {len(build)} crates of the release build are built alike by the tests")
EOF

# The build script's wasmtime (lib/build.rs precompiles the components) must be the binary's: the
# same features (the [build-dependencies] pins in lib/Cargo.toml) and profile ([profile.release.
# build-override]), so that cargo compiles wasmtime and Cranelift once. Cargo lists the release
# build's artifacts (all fresh after scripts/build.sh: this compiles nothing new); a crate of
# wasmtime's built twice fails here, named.
cargo build --release --locked -p mediagate-cli --message-format=json 2>/dev/null | python3 -c '
import collections, json, sys
libs = collections.Counter()
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and "lib" in m["target"]["kind"]:
        libs[m["target"]["name"]] += 1
twice = sorted(n for n, c in libs.items() if c > 1 and n.startswith(("wasmtime", "cranelift", "wasmparser")))
if twice:
    sys.exit("error: built twice, once for build.rs and once for the binary: " + ", ".join(twice)
             + ". Pin their features in lib/Cargo.toml [build-dependencies] (see the comment there).")
print("one wasmtime: build.rs and the binary share wasmtime and Cranelift (each compiled once)")
'
