#!/usr/bin/env bash
# Builds the Python host's wheel: DIST/mediagate_host-<version>-py3-none-any.whl, with the
# agent-tool component inside (mediagate_host/mediagate-agent-tool.wasm, read through
# importlib.resources). A standard PEP 517 build (`pip wheel`, isolated, with the backend pinned
# in pyproject.toml) of a staged copy: the source tree is never changed.
#
#   bash hosts/python/package.sh DIST
#
# The component comes from $MEDIAGATE_AGENT_TOOL_WASM, else target/guest/mediagate-agent-tool.wasm
# (written by `cargo build --release -p mediagate`). Needs python3 with pip, and PyPI for the backend.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
dist=${1:?usage: package.sh DIST}
python=${PYTHON:-python3}

wasm=${MEDIAGATE_AGENT_TOOL_WASM:-$repo/target/guest/mediagate-agent-tool.wasm}
if [ ! -f "$wasm" ]; then
    echo "error: the component $wasm is missing: build it first (cargo build --release -p mediagate)," \
         "or set MEDIAGATE_AGENT_TOOL_WASM" >&2
    exit 1
fi
if [ "$(head -c 8 "$wasm" | od -An -tx1 | tr -d ' \n')" != "0061736d0d000100" ]; then
    echo "error: $wasm is not a WebAssembly component" >&2
    exit 1
fi

mkdir -p "$dist"
dist=$(cd "$dist" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$here/pyproject.toml" "$here/README.md" "$repo/LICENSE" "$stage/"
mkdir "$stage/mediagate_host"
cp "$here"/mediagate_host/*.py "$stage/mediagate_host/"
cp "$wasm" "$stage/mediagate_host/mediagate-agent-tool.wasm"

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/pyproject.toml" | head -n1)
wheel="$dist/mediagate_host-$version-py3-none-any.whl"
rm -f "$wheel"
"$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$dist" "$stage"

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
