"""The Ray snippets of docs/bulk.md, run as written on the two-node cluster, in a directory holding
the `shots/` and `batch.jsonl` they read."""

from __future__ import annotations

import contextlib
import io

from batch_files import SMALL_PNG, openai_jsonl
from bulk_doc import snippet
from images import SVG, png


def run(name: str) -> list:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(snippet("python", name), f"docs/bulk.md:{name}", "exec"), {"__name__": "__snippet__"})
    return out.getvalue().splitlines()


def test_the_images_snippet_prints_each_files_verdict(cluster, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shots").mkdir()
    (tmp_path / "shots" / "a.png").write_bytes(SMALL_PNG)
    (tmp_path / "shots" / "logo.png").write_bytes(SVG)
    (tmp_path / "shots" / "wide.png").write_bytes(png(2300, 20))
    assert sorted(run("python-ray-images")) == ["a.png admitted", "logo.png magic_mismatch", "wide.png admitted"]


def test_the_batch_lines_snippet_prints_the_requests_that_are_not_unchanged(cluster, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "batch.jsonl").write_bytes(openai_jsonl())
    printed = sorted(run("python-ray-batch-lines"), key=lambda line: int(line.split()[0]))
    # The lines admit_batch reports, by their physical numbers: the SVG's refused block (3), the
    # line that is not UTF-8 (8), and whatever was fitted or re-encoded.
    numbers = [int(line.split()[0]) for line in printed]
    assert "3 refused-blocks" in printed and "8 refused" in printed
    assert all(line.split()[1] in ("changed", "refused-blocks", "refused") for line in printed)
    assert 4 not in numbers and 7 not in numbers  # text only, an embedding: unchanged
