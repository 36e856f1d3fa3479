"""The Python host's snippets of docs/bulk.md, run as written in a directory holding the
`batch.jsonl` they read."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

from batch_files import openai_jsonl
from bulk_doc import snippet
from conftest import PY_HOST


def test_the_admit_batch_snippet_writes_the_admitted_file_and_the_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "batch.jsonl").write_bytes(openai_jsonl())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(snippet("python", "python-admit-batch"), "docs/bulk.md:python-admit-batch", "exec"),
             {"__name__": "__snippet__"})
    summary = json.loads((tmp_path / "report.jsonl").read_bytes().splitlines()[-1])["summary"]
    assert out.getvalue() == (f"{summary['requests']} requests: {summary['changed']} changed, "
                              f"{summary['left_out']} left out\n")
    assert summary["requests"] == 8 and summary["left_out"] == 1
    assert (tmp_path / "admitted.jsonl").stat().st_size == summary["bytes_out"]

    # The shell form writes the same files.
    python_api = {name: (tmp_path / name).read_bytes() for name in ("admitted.jsonl", "report.jsonl")}
    for name in python_api:
        (tmp_path / name).unlink()
    env = dict(os.environ, PYTHONPATH=str(PY_HOST), PATH=f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}")
    done = subprocess.run(["bash", "-euc", snippet("sh", "sh-python-admit-batch")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr  # 1: the file holds refusals
    assert {name: (tmp_path / name).read_bytes() for name in python_api} == python_api
