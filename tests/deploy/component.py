"""The http-gate component as a user gets it: written by the mediagate CLI ($MEDIAGATE_BIN)."""

import os
import subprocess
from pathlib import Path

import pytest

from manifests import COMPONENT_FILE


def written_component(directory: Path) -> Path:
    """`mediagate component --world http-gate --out DIR/mediagate-http-gate.wasm`, the file name
    both manifests read; fails (never skips) when the binary is not given or cannot write it."""
    binary = os.environ.get("MEDIAGATE_BIN", "")
    if not binary or not os.access(binary, os.X_OK):
        pytest.fail(f"no mediagate binary is given (MEDIAGATE_BIN={binary!r}; tests/deploy/test.sh sets it)")
    out = directory / COMPONENT_FILE
    done = subprocess.run(
        [binary, "component", "--world", "http-gate", "--out", str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return out
