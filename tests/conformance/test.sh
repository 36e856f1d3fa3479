#!/usr/bin/env bash
# The differential conformance suite (README.md here): the gate's verdicts on the public corpora
# and their mutations, judged by Pillow, libvips (sharp), Chromium, ImageMagick, pngcheck 4.0.1 and
# Debian's format tools.
# Installs what is missing (Debian packages, Pillow into .venv, the npm packages, pngcheck compiled
# from pngcheck/), then runs conform.py; extra arguments go to it (--filter NAME, --report FILE,
# --jobs N). Needs the release CLI (MEDIAGATE_BIN, else target/release/mediagate).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

suite=conformance
source ../../scripts/suite.sh

# The Debian references: dwebp (webp), djpeg (libjpeg-turbo-progs), giftext (giflib-tools),
# bmptopnm, winicontopam, tifftopnm (netpbm, libtiff), pdftoppm (poppler-utils), mutool (mupdf-tools);
# Chromium for createImageBitmap; ImageMagick 6 (imagemagick) by its absolute path, because a
# `convert` earlier on PATH can be another program (on the build machines /usr/local/bin/convert is
# a stand-in that prints PNGs only), and conform.py calls /usr/bin/convert.
declare -A package_of=(
  [dwebp]=webp [djpeg]=libjpeg-turbo-progs [giftext]=giflib-tools
  [bmptopnm]=netpbm [winicontopam]=netpbm [tifftopnm]=netpbm [pdftoppm]=poppler-utils
  [mutool]=mupdf-tools [chromium]=chromium [/usr/bin/convert]=imagemagick
)
missing=()
for tool in "${!package_of[@]}"; do
  command -v "$tool" >/dev/null || missing+=("${package_of[$tool]}")
done
if [ "${#missing[@]}" -gt 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  apt_install "${missing[@]}"
fi
need_chromium

# pngcheck 4.0.1 from the source carried in pngcheck/ (its README says why not Debian's 3.0.3),
# compiled when its build is missing or older than the source.
pngcheck=.pngcheck/pngcheck
if [ ! -x "$pngcheck" ] || [ pngcheck/pngcheck.c -nt "$pngcheck" ]; then
  [ -f /usr/include/zlib.h ] || apt_install zlib1g-dev
  command -v cc >/dev/null || apt_install gcc
  say "compiling pngcheck 4.0.1"
  mkdir -p .pngcheck
  cc -O2 -o "$pngcheck.new" pngcheck/pngcheck.c -lz
  mv "$pngcheck.new" "$pngcheck"
fi
MEDIAGATE_PNGCHECK=$(realpath "$pngcheck")
export MEDIAGATE_PNGCHECK

python_venv .venv 9 requirements.txt
npm_ci

say "the judge's own tests"
.venv/bin/python -m unittest -q test_judge

bin=${MEDIAGATE_BIN:-../../target/release/mediagate}
[ -x "$bin" ] || die "$bin is missing: cargo build --release --locked -p mediagate-cli, or set MEDIAGATE_BIN"
exec .venv/bin/python conform.py --bin "$(realpath "$bin")" "$@"
