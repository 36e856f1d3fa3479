#!/usr/bin/env bash
# js/scripts/package.sh DIST: the npm tarball of @mediagate/preflight, written to DIST.
#
# Builds dist/generated/ from the guest component when it is missing or stale (scripts/build.mjs,
# also npm pack's prepack), packs js/ with `npm pack`, and checks that the tarball carries the
# transpiled component, the worker entry points, the integrations and the README's example. Prints the tarball's path.
# Needs target/guest/mediagate-preflight.wasm and mediagate-convert.wasm (`cargo build --release -p
# mediagate`) or MEDIAGATE_PREFLIGHT_WASM and MEDIAGATE_CONVERT_WASM, and js/node_modules (`npm ci`; done here when missing).
set -euo pipefail

say() { printf '[js/package.sh] %s\n' "$*" >&2; }
die() { printf '[js/package.sh] error: %s\n' "$*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: bash js/scripts/package.sh DIST"
mkdir -p "$1"
dist=$(cd "$1" && pwd)
cd "$(dirname "${BASH_SOURCE[0]}")/.."

command -v npm >/dev/null || die "npm is not installed (Node >= 20 is needed)"
if [ ! -x node_modules/.bin/jco ]; then
  say "npm ci"
  npm ci --no-audit --no-fund >&2
fi

# A published package always carries the converter component (a build without it only warns).
node scripts/build.mjs --require-convert >&2
# Packed from a staged copy: what `files` names, the README, the project's LICENSE, and a
# package.json without `scripts` and `devDependencies` (they name the build, test and demo files of
# this directory, which the package does not ship).
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
node -e '
  const fs = require("node:fs");
  const manifest = JSON.parse(fs.readFileSync("package.json", "utf8"));
  delete manifest.scripts;
  delete manifest.devDependencies;
  fs.writeFileSync(process.argv[1] + "/package.json", JSON.stringify(manifest, null, 2) + "\n");
  for (const f of manifest.files) fs.cpSync(f, process.argv[1] + "/" + f, { recursive: true });
' "$stage"
cp README.md "$stage/"
cp ../LICENSE "$stage/"
name=$(cd "$stage" && npm pack --ignore-scripts --pack-destination "$dist" --json | node -e '
  let text = ""; process.stdin.on("data", (d) => (text += d)).on("end", () => {
    const [packed] = JSON.parse(text);
    process.stdout.write(packed.filename);
  });')
tarball="$dist/$name"
[ -f "$tarball" ] || die "npm pack did not write $tarball"

listing=$(tar -tzf "$tarball")
for want in package/package.json package/README.md package/LICENSE package/src/index.js package/src/worker.js \
  package/src/worker-thread.js package/examples/agent-host.mjs \
  package/src/fetch.js package/src/fetch.d.ts package/src/ai-sdk.js package/src/ai-sdk.d.ts \
  package/src/convert.js package/dist/generated/mediagate.js package/dist/generated/mediagate.core.wasm \
  package/dist/generated/mediagate-convert.js package/dist/generated/mediagate-convert.core.wasm; do
  grep -qx "$want" <<<"$listing" || die "$tarball lacks ${want#package/}"
done
say "$tarball ($(wc -c <"$tarball") bytes)"
echo "$tarball"
