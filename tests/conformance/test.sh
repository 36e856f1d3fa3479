#!/usr/bin/env bash
# The differential conformance suite (README.md here): the gate's verdicts on the public corpora
# and their mutations, judged by Pillow, libvips (sharp), Chromium and Debian's format tools.
# Installs what is missing (Debian packages, Pillow into .venv, the npm packages), then runs
# conform.py; extra arguments go to it (--filter NAME, --report FILE, --jobs N). Needs the release
# CLI (MEDIAGATE_BIN, else target/release/mediagate).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

say() { printf '[conformance] %s\n' "$*"; }
die() { printf '[conformance] error: %s\n' "$*" >&2; exit 1; }

# The Debian references: dwebp (webp), djpeg (libjpeg-turbo-progs), pngcheck, giftext (giflib-tools),
# bmptopnm, winicontopam, tifftopnm (netpbm, libtiff), pdftoppm (poppler-utils), mutool (mupdf-tools);
# Chromium for createImageBitmap.
declare -A package_of=(
  [dwebp]=webp [djpeg]=libjpeg-turbo-progs [pngcheck]=pngcheck [giftext]=giflib-tools
  [bmptopnm]=netpbm [winicontopam]=netpbm [tifftopnm]=netpbm [pdftoppm]=poppler-utils
  [mutool]=mupdf-tools [chromium]=chromium
)
missing=()
for tool in "${!package_of[@]}"; do
  command -v "$tool" >/dev/null || missing+=("${package_of[$tool]}")
done
if [ "${#missing[@]}" -gt 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  [ "$(id -u)" -eq 0 ] || die "missing: ${missing[*]}; as root: apt-get update && apt-get install -y ${missing[*]}"
  say "installing Debian's ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
export CHROMIUM_PATH=${CHROMIUM_PATH:-/usr/bin/chromium}

python=${PYTHON:-python3}
if ! .venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
  rm -rf .venv
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt

# npm ci when node_modules is missing or the manifest/lock changed since the last install.
stamp=node_modules/.mediagate-install-stamp
want=$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "npm ci"
  npm ci --no-audit --no-fund
  echo "$want" > "$stamp"
fi

say "the judge's own tests"
.venv/bin/python -m unittest -q test_judge

bin=${MEDIAGATE_BIN:-../../target/release/mediagate}
[ -x "$bin" ] || die "$bin is missing: cargo build --release --locked -p mediagate, or set MEDIAGATE_BIN"
exec .venv/bin/python conform.py --bin "$(realpath "$bin")" "$@"
