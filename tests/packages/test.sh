#!/usr/bin/env bash
# The packages, installed as a user would, in clean temporary places outside the repository:
#   the CLI wheel  a fresh venv, `pip install --no-index`: `mediagate` on the venv's PATH admits a
#                  good image (exit 0), refuses an SVG named .png (exit 1), and `mediagate mcp`
#                  answers initialize and tools/list over stdio;
#   the Rust crates the library and the command unpacked side by side (no guest source beside them),
#                  `cargo install --path` of the command into a temporary root, its dependency on the
#                  library taken from the unpacked library (not yet on crates.io): the same admits.
#                  Their compiled dependencies come from target/ (CARGO_BUILD_BUILD_DIR), so only
#                  the two crates themselves are compiled.
# Usage: bash tests/packages/test.sh [DIST]  — DIST holds what scripts/package.sh wrote; without
# it, this runs scripts/package.sh into dist/ first.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
here=$root/tests/packages
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
if [ $# -ge 1 ]; then
    dist=$(realpath "$1")
else
    bash scripts/package.sh dist
    dist=$root/dist
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/mediagate-packages.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Nothing from the user's environment: no cache, no VLM settings.
export XDG_CACHE_HOME=$work/cache
# shellcheck disable=SC2046 # every variable of ours, by prefix: no copy of their names to fall behind
unset $(compgen -e | grep '^MEDIAGATE_')

one() { # the one file matching a glob, or fail
    local matches=("$@")
    if [ "${#matches[@]}" -ne 1 ] || [ ! -f "${matches[0]}" ]; then
        echo "error: expected exactly one package, found: ${matches[*]}" >&2
        exit 1
    fi
    echo "${matches[0]}"
}
size() { stat -c %s "$1"; }

# The images, outside the repository: a good screenshot and an SVG saved as .png.
cp examples/screenshot.png "$work/good.png"
printf '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>\n' >"$work/lying.png"

admits() { # what binary
    local name=$1 exe=$2 code
    (cd "$work" && "$exe" admit good.png --json >"$work/good.json")
    grep -q '"ok":true' "$work/good.json" || { echo "error: $name: good.png not admitted: $(cat "$work/good.json")" >&2; exit 1; }
    code=0
    (cd "$work" && "$exe" admit lying.png --json >"$work/lying.json") || code=$?
    if [ "$code" -ne 1 ] || ! grep -q '"reason":"magic_mismatch"' "$work/lying.json"; then
        echo "error: $name: lying.png: exit $code, $(cat "$work/lying.json") (expected exit 1, magic_mismatch)" >&2
        exit 1
    fi
    # The http-gate component it carries, for wasmtime serve, Spin, wasmCloud (docs/serving.md).
    "$exe" component --world http-gate --out "$work/http-gate.wasm"
    cmp -s "$work/http-gate.wasm" lib/components/mediagate-http-gate.wasm ||
        { echo "error: $name: component --world http-gate is not the carried component" >&2; exit 1; }
    # The convert component it carries (and loads for --convert), written out as carried.
    "$exe" component --world convert --out "$work/convert.wasm"
    cmp -s "$work/convert.wasm" lib/components/mediagate-convert.wasm ||
        { echo "error: $name: component --world convert is not the carried component" >&2; exit 1; }
    (cd "$work" && "$exe" admit good.png --convert --json >"$work/good-convert.json")
    grep -q '"ok":true' "$work/good-convert.json" ||
        { echo "error: $name: good.png --convert not admitted: $(cat "$work/good-convert.json")" >&2; exit 1; }
    echo "ok: $name: admit good.png -> exit 0 (and with --convert), admit lying.png (an SVG) -> exit 1, magic_mismatch; http-gate and convert components written"
}

echo "== the CLI wheel"
wheel=$(one "$dist"/mediagate-*.whl)
echo "$(basename "$wheel"): $(size "$wheel") bytes"
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index "$wheel"
# What a registry shows (summary, the README as description, license and its text, keywords), and
# the binary without its symbol table (maturin's `strip`, lib/pyproject.toml).
python3 - "$wheel" "$root/LICENSE" <<'PY'
import struct, sys, zipfile
wheel, license_path = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = z.namelist()
    info = next(n.rsplit("/", 1)[0] for n in names if n.endswith(".dist-info/METADATA"))
    headers, _, description = z.read(f"{info}/METADATA").decode().partition("\n\n")
    license_text = z.read(next(n for n in names if n.startswith(f"{info}/") and n.endswith("/LICENSE")))
    binary = z.read(next(n for n in names if n.endswith("/scripts/mediagate")))
for want in ("\nSummary: ", "\nLicense-Expression: Apache-2.0", "\nLicense-File: LICENSE", "\nKeywords: "):
    if want not in headers:
        sys.exit(f"error: the wheel's METADATA lacks {want.strip()!r}")
if "mediagate" not in description or len(description) < 1000:
    sys.exit("error: the wheel's METADATA carries no README as its description")
if license_text != open(license_path, "rb").read():
    sys.exit("error: the wheel does not carry the project's LICENSE")
# ELF64 little-endian: the section headers' names, from the section-name string table.
shoff, = struct.unpack_from("<Q", binary, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", binary, 0x3A)
def section(i):
    return struct.unpack_from("<IIQQQQ", binary, shoff + i * shentsize)
strtab_offset = section(shstrndx)[4]
names = {binary[strtab_offset + section(i)[0]:].split(b"\0", 1)[0] for i in range(shnum)}
if b".symtab" in names:
    sys.exit(f"error: the wheel's mediagate binary is not stripped ({len(binary)} bytes, has .symtab)")
print(f"ok: wheel metadata (summary, README, Apache-2.0 with its text, keywords); binary stripped, {len(binary)} bytes")
PY
found=$(PATH="$work/venv/bin:/usr/bin:/bin" command -v mediagate)
[ "$found" = "$work/venv/bin/mediagate" ] || { echo "error: mediagate on the venv's PATH is '$found'" >&2; exit 1; }
admits "wheel" "$found"
python3 "$here/mcp_stdio.py" "$found"

echo "== the Rust crates"
crate=$(one "$dist"/mediagate-[0-9]*.crate)
cli_crate=$(one "$dist"/mediagate-cli-*.crate)
echo "$(basename "$crate"): $(size "$crate") bytes; $(basename "$cli_crate"): $(size "$cli_crate") bytes"
# crates.io refuses crates over 10 MB.
for c in "$crate" "$cli_crate"; do
    [ "$(size "$c")" -le 10000000 ] || { echo "error: $c is over crates.io's 10 MB" >&2; exit 1; }
done
mkdir "$work/crate"
tar -xzf "$crate" -C "$work/crate"
tar -xzf "$cli_crate" -C "$work/crate"
src=$(echo "$work"/crate/mediagate-[0-9]*)
cli_src=$(echo "$work"/crate/mediagate-cli-*)
[ -d "$src" ] && [ -d "$cli_src" ] ||
    { echo "error: the crates did not unpack to mediagate-<version>/ and mediagate-cli-<version>/" >&2; exit 1; }
for f in components/mediagate-preflight.wasm components/mediagate-convert.wasm components/mediagate-agent-tool.wasm \
    components/mediagate-http-gate.wasm \
    build.rs README.md LICENSE; do
    [ -f "$src/$f" ] || { echo "error: the library crate lacks $f" >&2; exit 1; }
done
for f in src/main.rs Cargo.lock README.md LICENSE; do
    [ -f "$cli_src/$f" ] || { echo "error: the command's crate lacks $f" >&2; exit 1; }
done
for dir in "$src" "$cli_src"; do
    cmp -s "$dir/LICENSE" LICENSE || { echo "error: $(basename "$dir")'s LICENSE is not the project's" >&2; exit 1; }
    # What crates.io shows: description, license, readme, keywords, categories.
    for key in description license readme keywords categories; do
        grep -q "^$key = " "$dir/Cargo.toml" || { echo "error: $(basename "$dir")'s Cargo.toml has no $key" >&2; exit 1; }
    done
done
# The library carries no front end: no command line, no MCP server, no HTTP server.
if grep -Eq '^\[dependencies\.(clap|rmcp|hyper|tower)\]' "$src/Cargo.toml"; then
    echo "error: the library crate depends on a front end's crate: $(grep -E '^\[dependencies\.(clap|rmcp|hyper|tower)\]' "$src/Cargo.toml")" >&2
    exit 1
fi
[ ! -e "$work/crate/guest" ] && [ ! -e "$work/crate/wit" ] || { echo "error: guest source beside the crate" >&2; exit 1; }
# The command names the library by version, as crates.io will resolve it; until the library is
# published there, the unpacked one stands in ([patch.crates-io]), and the command's lock file names
# it as the path dependency it now is (no registry source, no checksum), so `--locked` still holds.
printf '\n[patch.crates-io]\nmediagate = { path = "%s" }\n' "$src" >>"$cli_src/Cargo.toml"
python3 - "$cli_src/Cargo.lock" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
entry = re.compile(r'(\[\[package\]\]\nname = "mediagate"\nversion = "[^"]+"\n)source = "[^"]+"\nchecksum = "[^"]+"\n')
text, n = entry.subn(r"\1", text)
if n != 1:
    sys.exit(f"error: {path} names the library {n} times from a registry (expected once)")
open(path, "w").write(text)
PY
# `cargo package` stamps every file 2006; the shared build directory may hold an earlier install of
# this crate (same package hash), whose build script would then look newer than build.rs and be
# reused as it was. Unpacked files stamped now are always newer than that build.
find "$src" "$cli_src" -type f -exec touch {} +
# The workspace's [profile.release.build-override] (Cargo.toml), which the crate's own manifest does
# not carry, passed as configuration (CARGO_PROFILE_RELEASE_BUILD_OVERRIDE_*): the build script's
# wasmtime and Cranelift are then the very units target/ holds, and only the crate itself is
# compiled. (A user's `cargo install mediagate-cli` compiles them a second time, unoptimised, for the
# build script: lib/src/lib.rs states the first build's time.)
overrides=$(python3 -c '
import tomllib
table = tomllib.load(open("Cargo.toml", "rb"))["profile"]["release"]["build-override"]
for key, value in table.items():
    value = str(value).lower() if isinstance(value, bool) else str(value)
    print("CARGO_PROFILE_RELEASE_BUILD_OVERRIDE_" + key.upper().replace("-", "_") + "=" + value)
')
# shellcheck disable=SC2086 # one NAME=VALUE word per line
env $overrides CARGO_BUILD_BUILD_DIR="$target" cargo install --locked --path "$cli_src" --root "$work/cargo-root" \
    --target-dir "$work/cargo-target"
admits "crate" "$work/cargo-root/bin/mediagate"
