"""The gate's verdicts through the Python host equal the native CLI's, file by file, on the corpus:
the component picks the type from the bytes and the name as the CLI does (no type claimed)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CORPUS, native_cli
from mediagate_host import Mediagate


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

    got = gate_for(path.parent).admit_file(path.name)
    assert got == expected


def cli_json(path: Path, *flags: str) -> dict:
    run = subprocess.run([str(native_cli()), "admit", str(path), "--json", "--verify", "full", *flags],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode in (0, 1), f"exit {run.returncode}: {run.stderr}"
    return json.loads(run.stdout)


def test_a_files_name_does_not_claim_its_type(tmp_path):
    """A JPEG named .png is the JPEG it is; an SVG named .png is refused for its signature with the
    CLI's words, and converted with `convert=True`: the same verdicts as `mediagate admit`."""
    shutil.copy(CORPUS / "bench" / "photo-exif-rotated.jpg", tmp_path / "photo.png")
    (tmp_path / "logo.png").write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg' width='8' height='4'/>")
    gate = Mediagate(workspace=tmp_path, vlm=False)
    photo = gate.admit_file("photo.png")
    assert photo["ok"] is True and photo["mime"] == "image/jpeg", photo
    assert photo == cli_json(tmp_path / "photo.png")
    logo = gate.admit_file("logo.png")
    assert logo["ok"] is False and logo["reason"] == "magic_mismatch", logo
    assert logo == cli_json(tmp_path / "logo.png")
    converted = gate.admit_file("logo.png", convert=True)
    assert converted["converted"]["from"] == "image/svg+xml", converted
    assert converted == cli_json(tmp_path / "logo.png", "--convert")
    # Bytes have no name: the type their signature carries, as `mediagate admit -` judges stdin.
    assert gate.admit_bytes((tmp_path / "photo.png").read_bytes()) == photo
