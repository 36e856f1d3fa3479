#!/usr/bin/env bash
# The facts other languages repeat (limits, refusal reasons, call-error kinds, profiles, env names,
# the VLM retry policy) are generated from the Rust sources by facts/ (`gen-facts`): js/src/facts.js
# and .d.ts, hosts/python/mediagate_host/facts.py, and the tables between `<!-- facts:… -->` markers
# in SECURITY.md and docs/design.md. Fails, naming each file, when one is not what the generator
# writes (an edit by hand, or a Rust fact changed without regenerating). scripts/test.sh runs the
# same check as a unit test of facts/ inside `cargo test --workspace`, which shares that build's
# compiled guest; this script compiles the guest's dependencies once more with its own features.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --locked --quiet -p mediagate-facts --bin gen-facts -- --check
echo "ok: the generated facts are what lib/src/facts.rs and the guest make of them"
