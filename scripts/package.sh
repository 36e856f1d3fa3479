#!/usr/bin/env bash
# Writes the packages to DIST (default dist/), reusing the release build in target/:
#   crate        DIST/mediagate-<v>.crate, the library (`cargo add mediagate`), and
#                DIST/mediagate-cli-<v>.crate, the command (`cargo install mediagate-cli`): `cargo package`
#   cli-wheel    DIST/mediagate-<v>-py3-none-<platform>.whl (maturin, bindings = "bin"):
#                `pipx install mediagate`, `uvx mediagate mcp`
#   npm          DIST/mediagate-preflight-<v>.tgz, the npm package @mediagate/preflight (js/)
#   python-host  DIST/mediagate_host-<v>-py3-none-any.whl, the Python host (hosts/python/) with the
#                agent-tool component inside
#
#   bash scripts/package.sh [DIST] [PACKAGE...]   (no PACKAGE: all four)
#
# Prints each package's path on stdout when it is written (everything else goes to stderr).
# The components come from target/guest/ (`cargo build --release -p mediagate-cli` writes them), or
# MEDIAGATE_PREFLIGHT_WASM, MEDIAGATE_CONVERT_WASM (npm) and MEDIAGATE_AGENT_TOOL_WASM (python-host).
# tests/packages/test.sh installs the crate and the CLI wheel into clean places and uses them;
# js/test/package.test.js and hosts/python/tests/test_wheel.py do so for the other two.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
suite=package.sh
source scripts/suite.sh # apt_install, need_venv; its say and die are replaced below (stderr only)
say() { printf '[package.sh] %s\n' "$*" >&2; }
die() {
    printf '[package.sh] error: %s\n' "$*" >&2
    exit 1
}
dist=$(realpath -m "${1:-dist}")
[ $# -gt 0 ] && shift
packages=("$@")
[ ${#packages[@]} -gt 0 ] || packages=(crate cli-wheel npm python-host)
for package in "${packages[@]}"; do
    case $package in crate | cli-wheel | npm | python-host) ;; *) die "no package $package (crate, cli-wheel, npm, python-host)" ;; esac
done
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
mkdir -p "$dist"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

crate_version() {
    cargo metadata --locked --no-deps --format-version 1 |
        python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "mediagate"))'
}

package_crate() {
    local version
    version=$(crate_version)
    say "the Rust crates: mediagate-$version.crate (the library), mediagate-cli-$version.crate (the command)"
    bash scripts/setup.sh >&2
    # --no-verify: cargo's own check would build the unpacked crates from scratch in the dev profile;
    # tests/packages/test.sh builds them instead, in release, sharing target/'s compiled
    # dependencies. The carried components are checked by scripts/check-components.sh. Both in one
    # call: cargo resolves the command's dependency on the library, not yet on crates.io, to the
    # library packaged beside it.
    cargo package --locked --no-verify --allow-dirty -p mediagate -p mediagate-cli >&2
    rm -f "$dist"/mediagate-*.crate
    cp "$target/package/mediagate-$version.crate" "$target/package/mediagate-cli-$version.crate" "$dist/"
    echo "$dist/mediagate-$version.crate"
    echo "$dist/mediagate-cli-$version.crate"
}

package_cli_wheel() {
    # maturin, pinned; in a venv under target/ so nothing is installed into the user's Python.
    local maturin_version=1.16.0 venv=$target/packaging/maturin-venv
    say "the CLI wheel (maturin $maturin_version)"
    bash scripts/setup.sh >&2
    if [ "$("$venv/bin/maturin" --version 2>/dev/null)" != "maturin $maturin_version" ]; then
        rm -rf "$venv"
        PYTHON=python3 need_venv
        python3 -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin==$maturin_version"
    fi
    rm -f "$dist"/mediagate-*.whl
    "$venv/bin/maturin" build --release --locked --manifest-path cli/Cargo.toml --out "$dist" >&2
    ls "$dist"/mediagate-*.whl
}

# The npm tarball: dist/generated/ built from the components when missing or stale
# (js/scripts/build.mjs, also npm pack's prepack), js/ packed from a staged copy, and the tarball
# checked to carry the transpiled components, the worker entry points, the integrations and the
# README's example.
package_npm() {
    say "the npm package"
    command -v npm >/dev/null || die "npm is not installed (Node >= 20 is needed)"
    (
        cd js
        if [ ! -x node_modules/.bin/jco ]; then
            say "npm ci"
            npm ci --no-audit --no-fund >&2
        fi
        # A published package always carries the converter component (a build without it only warns).
        node scripts/build.mjs --require-convert >&2
        # What `files` names, the README, the project's LICENSE, and a package.json without
        # `scripts` and `devDependencies` (they name the build, test and demo files of js/, which
        # the package does not ship).
        mkdir "$stage/npm"
        node -e '
          const fs = require("node:fs");
          const manifest = JSON.parse(fs.readFileSync("package.json", "utf8"));
          delete manifest.scripts;
          delete manifest.devDependencies;
          fs.writeFileSync(process.argv[1] + "/package.json", JSON.stringify(manifest, null, 2) + "\n");
          for (const f of manifest.files) fs.cpSync(f, process.argv[1] + "/" + f, { recursive: true });
        ' "$stage/npm"
        cp README.md "$stage/npm/"
        cp ../LICENSE "$stage/npm/"
    )
    local name tarball listing want
    name=$(cd "$stage/npm" && npm pack --ignore-scripts --pack-destination "$dist" --json | node -e '
      let text = ""; process.stdin.on("data", (d) => (text += d)).on("end", () => {
        const [packed] = JSON.parse(text);
        process.stdout.write(packed.filename);
      });')
    tarball="$dist/$name"
    [ -f "$tarball" ] || die "npm pack did not write $tarball"
    listing=$(tar -tzf "$tarball")
    for want in package/package.json package/README.md package/LICENSE package/src/index.js package/src/worker.js \
        package/src/worker-thread.js package/examples/agent-host.mjs \
        package/src/fetch.js package/src/fetch.d.ts package/src/ai-sdk.js package/src/ai-sdk.d.ts \
        package/src/wrapper-options.js package/src/wrapper-options.d.ts package/src/shared-instance.js \
        package/src/batch.js package/src/batch.d.ts \
        package/src/convert.js package/dist/generated/mediagate.js package/dist/generated/mediagate.core.wasm \
        package/dist/generated/mediagate-convert.js package/dist/generated/mediagate-convert.core.wasm; do
        grep -qx "$want" <<<"$listing" || die "$tarball lacks ${want#package/}"
    done
    say "$tarball ($(wc -c <"$tarball") bytes)"
    echo "$tarball"
}

# The Python host's wheel: a standard PEP 517 build (`pip wheel`, isolated, with the backend pinned
# in hosts/python/pyproject.toml) of a staged copy, the component inside
# (mediagate_host/mediagate-agent-tool.wasm, read through importlib.resources).
package_python_host() {
    say "the Python host wheel"
    local here=$root/hosts/python python=${PYTHON:-python3} version wheel
    local wasm=${MEDIAGATE_AGENT_TOOL_WASM:-$target/guest/mediagate-agent-tool.wasm}
    [ -f "$wasm" ] || die "the component $wasm is missing: build it first (cargo build --release -p mediagate-cli), or set MEDIAGATE_AGENT_TOOL_WASM"
    [ "$(head -c 8 "$wasm" | od -An -tx1 | tr -d ' \n')" = "0061736d0d000100" ] || die "$wasm is not a WebAssembly component"
    mkdir -p "$stage/python/mediagate_host"
    cp "$here/pyproject.toml" "$here/README.md" "$root/LICENSE" "$stage/python/"
    cp "$here"/mediagate_host/*.py "$stage/python/mediagate_host/"
    cp "$wasm" "$stage/python/mediagate_host/mediagate-agent-tool.wasm"
    version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/pyproject.toml" | head -n1)
    wheel="$dist/mediagate_host-$version-py3-none-any.whl"
    rm -f "$wheel"
    "$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$dist" "$stage/python" >&2
    # The wheel must carry the very component it was built from.
    "$python" - "$wheel" "$wasm" <<'PY'
import hashlib, sys, zipfile
wheel, wasm = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    inside = z.read("mediagate_host/mediagate-agent-tool.wasm")
if hashlib.sha256(inside).digest() != hashlib.sha256(open(wasm, "rb").read()).digest():
    sys.exit(f"error: {wheel} does not carry {wasm}")
PY
    echo "$wheel"
}

for package in "${packages[@]}"; do
    "package_${package//-/_}"
done
