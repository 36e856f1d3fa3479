#!/usr/bin/env bash
# PDF image pages at every size (README.md here): one-image PDFs from Pillow, img2pdf, reportlab,
# ImageMagick where its policy lets it write PDF, and pdfwrite.py, rendered by the gate and by
# pdftoppm (DeviceCMYK as the SWOP press Ghostscript ships; a page under the bar by Ghostscript
# too) and compared. Installs what is missing (poppler-utils, Ghostscript (its profiles come with it),
# ImageMagick, the pinned generators into .venv), then runs grid.py; extra arguments go to it
# (--filter GLOB, --jobs N, --report FILE, --keep DIR). Needs the release CLI (MEDIAGATE_BIN, else
# target/release/mediagate).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

suite=pdf-grid
source ../../scripts/suite.sh

missing=()
command -v pdftoppm >/dev/null || missing+=(poppler-utils)
command -v gs >/dev/null || missing+=(ghostscript)
# Debian's binary by its own name: a `convert` earlier on PATH may be something else.
command -v convert-im6.q16 >/dev/null || missing+=(imagemagick)
[ "${#missing[@]}" -eq 0 ] || apt_install "${missing[@]}"

python_venv .venv 9 requirements.txt

say "the judge's own tests"
.venv/bin/python -m unittest -q test_grid

bin=${MEDIAGATE_BIN:-../../target/release/mediagate}
[ -x "$bin" ] || die "$bin is missing: cargo build --release --locked -p mediagate-cli, or set MEDIAGATE_BIN"
exec .venv/bin/python grid.py --bin "$(realpath "$bin")" "$@"
