"""No silent stall: a compile says so in the log, and `python -m mediagate_host warm-up` pays it
ahead of the first call. Each test compiles the component once into a fresh cache (about 20 s on 2
cores)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import weakref

from bulk_doc import snippet
from conftest import PY_HOST
from mediagate_host import facts
from mediagate_host import Mediagate, host


def test_a_compile_is_logged_with_the_time_it_took_and_a_cache_hit_is_not(tmp_path, monkeypatch, caplog):
    # Components compiled earlier in this process are reused from memory: start with none.
    monkeypatch.setattr(host, "_components", weakref.WeakValueDictionary())
    caplog.set_level(logging.INFO, logger="mediagate_host")
    gate = Mediagate(vlm=False, workspace=tmp_path, cache_dir=tmp_path / "cache")
    assert gate.origin == "compiled"
    said = [r for r in caplog.records if r.name == "mediagate_host"]
    assert [r.getMessage() for r in said][0] == host.COMPILE_MESSAGE
    assert said[0].levelno == logging.WARNING  # shown with no logging set up
    [done] = [r.getMessage() for r in said if r.getMessage().startswith("compiled the mediagate component in ")]
    assert float(done.split(" in ")[1].rstrip(" s")) > 0.5

    caplog.clear()
    monkeypatch.setattr(host, "_components", weakref.WeakValueDictionary())
    assert Mediagate(vlm=False, workspace=tmp_path, cache_dir=tmp_path / "cache").origin == "cache"
    assert not [r for r in caplog.records if "compil" in r.getMessage()]


def warm_up(cache: str) -> subprocess.CompletedProcess:
    """The command docs/bulk.md gives, as written, with this interpreter as `python`."""
    env = dict(os.environ, PYTHONPATH=str(PY_HOST), **{facts.ENV_CACHE_DIR: cache},
               PATH=f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}")
    return subprocess.run(["bash", "-euc", snippet("sh", "sh-warm-up")], capture_output=True, text=True, env=env,
                          timeout=600)


def test_warm_up_compiles_into_the_cache_once_and_says_how_long_it_took(tmp_path):
    cache = tmp_path / "cache"
    first = warm_up(str(cache))
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("compiled ") and f"into the cache {cache}" in first.stdout
    assert float(first.stdout.split(" in ")[1].split(" s")[0]) > 0.5
    # With no logging configured, the stall is announced on stderr as it starts.
    assert host.COMPILE_MESSAGE in first.stderr
    assert len(list(cache.glob("*.cwasm"))) == 1

    again = warm_up(str(cache))
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("already compiled: loaded ") and f"from the cache {cache}" in again.stdout
    assert "compiling" not in again.stderr


def test_warm_up_says_when_the_cache_cannot_be_used(tmp_path):
    # A cache directory others may write to is never used (host.py): every process would compile.
    cache = tmp_path / "shared"
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)
    done = warm_up(str(cache))
    assert done.returncode == 1
    assert "could not be used" in done.stderr and "writable by group or others" in done.stderr
    assert not list(cache.glob("*.cwasm"))
