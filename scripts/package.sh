#!/usr/bin/env bash
# Writes the packages to dist/ (or the directory given), reusing the release build in target/:
#   dist/mediagate-<v>-py3-none-<platform>.whl   the CLI wheel (maturin, bindings = "bin"):
#                                                 `pipx install mediagate`, `uvx mediagate mcp`
#   dist/mediagate-<v>.crate                     the Rust crate (`cargo package`): `cargo install
#                                                 mediagate`, `cargo add mediagate`
#   and, when their scripts exist, the npm tarball (js/scripts/package.sh) and the Python host
#   wheel (hosts/python/package.sh).
# tests/packages/test.sh installs each of the first two into a clean place and uses it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dist=$(realpath -m "${1:-dist}")
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
# maturin, pinned; in a venv under target/ so nothing is installed into the user's Python.
maturin_version=1.16.0
bash scripts/setup.sh
mkdir -p "$dist"
version=$(cargo metadata --locked --no-deps --format-version 1 |
    python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "mediagate"))')

echo "== the Rust crate: mediagate-$version.crate"
# --no-verify: cargo's own check would build the unpacked crate from scratch in the dev profile;
# tests/packages/test.sh builds it instead, in release, sharing target/'s compiled dependencies.
# The carried components are checked by scripts/check-components.sh.
cargo package --locked --no-verify --allow-dirty -p mediagate
rm -f "$dist"/mediagate-*.crate
cp "$target/package/mediagate-$version.crate" "$dist/"

echo "== the CLI wheel (maturin $maturin_version)"
venv=$target/packaging/maturin-venv
if [ "$("$venv/bin/maturin" --version 2>/dev/null)" != "maturin $maturin_version" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin==$maturin_version"
fi
rm -f "$dist"/mediagate-*.whl
"$venv/bin/maturin" build --release --locked --manifest-path host/Cargo.toml --out "$dist"

if [ -f js/scripts/package.sh ]; then
    echo "== the npm package"
    bash js/scripts/package.sh "$dist"
fi
if [ -f hosts/python/package.sh ]; then
    echo "== the Python host wheel"
    bash hosts/python/package.sh "$dist"
fi

echo "== $dist"
(cd "$dist" && ls -l)
