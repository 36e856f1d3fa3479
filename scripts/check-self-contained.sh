#!/usr/bin/env bash
# The tests carry their data: nothing the suite, the benchmarks or the fuzzer run may read the
# `../shared` folder a developer's machine has beside the clone (a user's clone has nothing there).
# Their images are in tests/corpus/. Run by scripts/test.sh; fails naming each offending line.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='\.\./shared|shared/corpus|MEDIAGATE_SHARED'
if hits=$(grep -rnE "$pattern" tests js hosts scripts bench fuzz guest host \
    --exclude-dir=node_modules --exclude-dir=.venv --exclude-dir=dist --exclude-dir=test-artifacts \
    --exclude-dir=target --exclude=check-self-contained.sh); then
    echo "error: these lines reach outside the clone for test data (use tests/corpus/ instead):" >&2
    echo "$hits" >&2
    exit 1
fi
echo "ok: tests, benchmarks and fuzz seeds read only what the clone carries ($(find tests/corpus -type f | wc -l) corpus files, $(du -sh --apparent-size tests/corpus | cut -f1))"
