"""The gate's verdicts through the Python host equal the native CLI's, file by file, on the corpus."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import CORPUS, native_cli
from mediagate_host import Mediagate, mime_from_extension


def corpus_files():
    files = sorted((CORPUS / "pngsuite").glob("*.png")) + sorted(p for p in (CORPUS / "photos").iterdir() if p.is_file())
    return files


FILES = corpus_files()
_gates = {}


def gate_for(directory: Path) -> Mediagate:
    if directory not in _gates:
        _gates[directory] = Mediagate(workspace=directory, vlm=False)
    return _gates[directory]


def test_the_corpus_is_there():
    assert len([f for f in FILES if f.parent.name == "pngsuite"]) > 100
    assert len([f for f in FILES if f.parent.name == "photos"]) >= 5


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_admit_file_equals_the_native_cli(path: Path):
    cli = native_cli()
    # `admit_file` decodes every pixel by default (bytes going to a model): the CLI is asked to as well.
    run = subprocess.run([str(cli), "admit", str(path), "--json", "--verify", "full"], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode in (0, 1), f"exit {run.returncode}: {run.stderr}"
    expected = json.loads(run.stdout)
    assert expected["ok"] is (run.returncode == 0)

    got = gate_for(path.parent).admit_file(path.name, mime_from_extension(path))
    assert got == expected


@pytest.mark.parametrize("name,mime", [
    ("a.png", "image/png"), ("a.PNG", "image/png"), ("a.jpg", "image/jpeg"), ("a.jpeg", "image/jpeg"),
    ("a.jpe", "image/jpeg"), ("a.jfif", "image/jpeg"), ("a.gif", "image/gif"), ("a.webp", "image/webp"),
    ("a.pdf", "application/pdf"), ("a.svg", "image/svg+xml"), ("a.bin", "application/octet-stream"),
    ("noext", "application/octet-stream"),
])
def test_mime_from_extension(name, mime):
    assert mime_from_extension(name) == mime
