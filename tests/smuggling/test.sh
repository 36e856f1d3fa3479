#!/usr/bin/env bash
# The smuggling test (README.md here): images hiding a marker text in every place the canonical
# form must leave out, each admitted by the CLI, the marker searched for in what it wrote.
# Installs what is missing (Debian's exiftool, Pillow into .venv), then runs test_smuggling.py;
# extra arguments go to unittest (test names, to run some alone). Needs the release CLI
# (MEDIAGATE_BIN, else target/release/mediagate).
set -euo pipefail
# A MEDIAGATE_BIN relative to where the script was called from still names the same file below.
if [ -n "${MEDIAGATE_BIN:-}" ]; then
  MEDIAGATE_BIN=$(realpath -m "$MEDIAGATE_BIN")
fi
cd "$(dirname "${BASH_SOURCE[0]}")"

suite=smuggling
source ../../scripts/suite.sh

command -v exiftool >/dev/null || apt_install libimage-exiftool-perl
command -v exiftool >/dev/null || die "apt-get installed libimage-exiftool-perl but exiftool is still missing"
python_venv .venv 10 requirements.txt

MEDIAGATE_BIN=${MEDIAGATE_BIN:-$(realpath -m ../../target/release/mediagate)}
[ -x "$MEDIAGATE_BIN" ] ||
  die "$MEDIAGATE_BIN is missing: cargo build --release --locked -p mediagate-cli, or set MEDIAGATE_BIN"
export MEDIAGATE_BIN

say "carriers through $MEDIAGATE_BIN"
exec .venv/bin/python -m unittest "${@:-test_smuggling}"
