#!/usr/bin/env bash
# The deployment manifests in deploy/ (Spin, wasmCloud) validated against the JSON Schemas their
# projects publish (vendored in deploy/schemas/) with Python's jsonschema, plus the rules the
# schemas cannot express: creates tests/deploy/.venv if needed, installs the pinned requirements,
# runs pytest. Idempotent; exits non-zero on any failure. Extra arguments go to pytest.
# The component checks and the documented engine command lines (test_serving_docs.py) use
# $MEDIAGATE_BIN (else target/release/mediagate if built), $WASMTIME (else scripts/wasmtime-cli.sh's
# binary) and js/'s jco; while wit/worlds.wit has no http-gate world they are skipped, saying why.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
suite=tests/deploy
source ../../scripts/suite.sh
root=$(cd ../.. && pwd)

if [ -z "${MEDIAGATE_BIN:-}" ] && [ -x "$root/target/release/mediagate" ]; then
    MEDIAGATE_BIN=$root/target/release/mediagate
fi
export MEDIAGATE_BIN=${MEDIAGATE_BIN:-}
# The wasmtime CLI for the documented `wasmtime serve` line: $WASMTIME, else the project's pinned
# one (scripts/wasmtime-cli.sh prints its path; cached after the first install).
if [ -z "${WASMTIME:-}" ] && [ -f "$root/scripts/wasmtime-cli.sh" ]; then
    WASMTIME=$(bash "$root/scripts/wasmtime-cli.sh" | tail -n 1)
fi
export WASMTIME=${WASMTIME:-}
# jco, for the documented `jco serve` line: js/'s pinned packages (js/test.sh installs them too).
npm_ci "$root/js"
python_venv .venv 11 requirements.txt

echo "deploy/: jsonschema $(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("jsonschema"))'); mediagate: ${MEDIAGATE_BIN:-none}; wasmtime: ${WASMTIME:-none}"
exec .venv/bin/python -m pytest -q -rs -p no:cacheprovider "$@"
