"""The cluster test-ray.sh started (`MEDIAGATE_RAY_ADDRESS`), the component, the native CLI."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PY_HOST = HERE.parent
REPO = PY_HOST.parent.parent
for path in (PY_HOST, PY_HOST / "tests", HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


@pytest.fixture(scope="session")
def cluster():
    """The driver, connected to the two-node cluster."""
    address = os.environ.get("MEDIAGATE_RAY_ADDRESS")
    if not address:
        pytest.fail("MEDIAGATE_RAY_ADDRESS is not set: run these tests with hosts/python/test-ray.sh, which starts "
                    "the cluster")
    import ray

    ray.init(address=address, log_to_driver=False, logging_level="WARNING")
    try:
        alive = [n for n in ray.nodes() if n["Alive"]]
        assert len(alive) == 2, f"the cluster has {len(alive)} live nodes, not 2"
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="session")
def wasm_path() -> str:
    from mediagate_host import default_wasm_path

    path = default_wasm_path()
    assert path.is_file(), f"the component {path} is missing"
    return str(path)


def native_cli() -> Path:
    env = os.environ.get("MEDIAGATE_BIN")
    cli = Path(env) if env else REPO / "target" / "release" / "mediagate"
    if not (cli.is_file() and os.access(cli, os.X_OK)):
        pytest.fail(f"the native CLI {cli} is missing (MEDIAGATE_BIN overrides): the verdicts are compared with it")
    return cli
