#!/usr/bin/env bash
# The components the `mediagate` crate carries (lib/components/, embedded when the crate is built
# from its published tarball, where no guest source is beside it) must be byte for byte what the
# guest source builds to: this builds the host (lib/build.rs builds the guest into target/guest/)
# and compares. Run by scripts/test.sh.
#   bash scripts/check-components.sh            check; exit 1 naming the stale file
#   bash scripts/check-components.sh --update   copy the freshly built components into lib/components/
set -euo pipefail
cd "$(dirname "$0")/.."
update=0
case "${1:-}" in
    "") ;;
    --update) update=1 ;;
    *) echo "usage: bash scripts/check-components.sh [--update]" >&2; exit 2 ;;
esac
target=${CARGO_TARGET_DIR:-target}
cargo build --release --locked -p mediagate-cli
mkdir -p lib/components
stale=0
for world in preflight convert agent-tool http-gate; do
    built=$target/guest/mediagate-$world.wasm
    carried=lib/components/mediagate-$world.wasm
    if [ ! -f "$built" ]; then
        echo "error: $built was not built (lib/build.rs writes it when the guest source is beside the host)" >&2
        exit 1
    fi
    if cmp -s "$built" "$carried"; then
        echo "ok: $carried is what the guest source builds to ($(sha256sum <"$built" | cut -c1-16)…, $(stat -c %s "$built") bytes)"
    elif [ "$update" = 1 ]; then
        cp "$built" "$carried"
        echo "updated: $carried ($(sha256sum <"$built" | cut -c1-16)…, $(stat -c %s "$built") bytes)"
    else
        echo "error: $carried is stale: it differs from $built, which the guest source builds to" >&2
        echo "  (sha256 carried $(sha256sum <"$carried" 2>/dev/null | cut -c1-16 || echo none)…, built $(sha256sum <"$built" | cut -c1-16)…)." >&2
        echo "  Refresh it with: bash scripts/check-components.sh --update, and commit lib/components/." >&2
        stale=1
    fi
done
exit "$stale"
