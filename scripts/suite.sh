# The steps every suite's script repeats, in one place: sourced (never run) by the test scripts
# after they set `suite` (the name their messages carry). Each installs what is missing only.
#   say TEXT / die TEXT          a line on stdout / an error on stderr, and exit 1
#   apt_install PACKAGE...       Debian's packages (as root; otherwise the command to run is said)
#   need_chromium                Debian's Chromium in CHROMIUM_PATH (default /usr/bin/chromium),
#                                installed when missing, never a downloaded browser
#   npm_ci [DIR]                 `npm ci` in DIR (default .) when node_modules is missing or
#                                package.json/package-lock.json changed since its last install
#   need_node_cli_and_wasmtime   node, MEDIAGATE_BIN (the release CLI), js's packages and
#                                MEDIAGATE_WASMTIME (scripts/wasmtime-cli.sh), each exported
#   need_venv                    `python -m venv` works: Debian ships its pip bootstrap (ensurepip)
#                                apart, in python3-venv, installed when missing
#   python_venv VENV MINOR REQUIREMENTS...
#                                VENV with Python >= 3.MINOR ($PYTHON, else python3; made anew when
#                                missing or older) and the pinned requirements files installed

say() { printf '[%s] %s\n' "$suite" "$*"; }
die() {
  printf '[%s] error: %s\n' "$suite" "$*" >&2
  exit 1
}

apt_install() {
  [ "$(id -u)" -eq 0 ] || die "missing: $*; as root: apt-get update && apt-get install -y $*"
  say "installing Debian's $*"
  # Suites run side by side (scripts/test.sh) and two apt-gets at once fail on apt's lock, so the
  # suites take turns here; another apt on the machine (unattended upgrades) is waited for too.
  (
    flock 9
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@" >/dev/null
  ) 9>"${TMPDIR:-/tmp}/mediagate-apt.lock"
}

need_chromium() {
  export CHROMIUM_PATH=${CHROMIUM_PATH:-/usr/bin/chromium}
  [ -x "$CHROMIUM_PATH" ] || apt_install chromium
  [ -x "$CHROMIUM_PATH" ] || die "apt-get installed chromium but $CHROMIUM_PATH is still missing"
}

npm_ci() {
  local dir=${1:-.} want
  want=$(cat "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$dir/node_modules/.mediagate-install-stamp" 2>/dev/null)" != "$want" ]; then
    say "npm ci ($dir)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" >"$dir/node_modules/.mediagate-install-stamp"
  fi
}

# Node, the CLI (MEDIAGATE_BIN, default the release build) and js's packages, and a wasmtime CLI of
# the host's line (MEDIAGATE_WASMTIME, else scripts/wasmtime-cli.sh): what the suites that serve the
# http-gate component and compare it with the CLI need.
need_node_cli_and_wasmtime() {
  command -v node >/dev/null || die "node is not installed (Node >= 20 is needed)"
  export MEDIAGATE_BIN=${MEDIAGATE_BIN:-$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/mediagate}
  [ -x "$MEDIAGATE_BIN" ] || die "no mediagate binary at $MEDIAGATE_BIN (cargo build --release, or set MEDIAGATE_BIN)"
  npm_ci js
  if [ -z "${MEDIAGATE_WASMTIME:-}" ]; then
    MEDIAGATE_WASMTIME=$(bash scripts/wasmtime-cli.sh)
  fi
  export MEDIAGATE_WASMTIME
}

need_venv() {
  "${PYTHON:-python3}" -c 'import ensurepip, venv' 2>/dev/null || apt_install python3-venv
  "${PYTHON:-python3}" -c 'import ensurepip, venv' 2>/dev/null ||
    die "apt-get installed python3-venv but ${PYTHON:-python3} still has no ensurepip (set PYTHON to the system python3)"
}

python_venv() {
  local venv=$1 minor=$2
  shift 2
  # A venv whose making was cut off (a stopped run) has Python but no pip: made anew too.
  if ! "$venv/bin/python" -c "import sys, pip; sys.exit(sys.version_info < (3, $minor))" 2>/dev/null; then
    rm -rf "$venv"
    need_venv
    "${PYTHON:-python3}" -m venv "$venv"
  fi
  local requirements
  for requirements in "$@"; do
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
  done
}
