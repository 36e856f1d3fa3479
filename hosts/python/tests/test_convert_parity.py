"""Conversions through the Python host equal the native CLI's (`mediagate admit --convert --json`,
`--page N`), file by file: every file of tests/corpus/convert/, the conformance files of
tests/corpus/conformance/parity.txt and files written here by hand. The
verdict (with `converted`) and the SHA-256 of the admitted bytes are compared. (js/test/
convert-parity.test.js holds the Node package to the same CLI.)"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from conftest import CORPUS, native_cli
from convert_files import SVG, bmp, minimal_pdf
from mediagate_host import Mediagate

CONVERT_CORPUS = CORPUS / "convert"
MADE = {"diagram.svg": SVG, "scan.bmp": bmp(40, 30), "doc.pdf": minimal_pdf("page one")}


def cases():
    """(label, path, mime, options, page): the made files, then the convert corpus's inputs as its
    manifest lists them (the reference renderings beside them are not inputs). `mime` None: no type
    claimed (the component picks it from the bytes and the name, as the CLI does)."""
    out = [(f"made/{name}", None, None, {}, None) for name in MADE]
    out.append(("made/doc.pdf", None, "application/pdf", {}, 1))
    # The conformance files every host's parity test runs: re-muxes that drop metadata, conversions.
    for line in (CORPUS / "conformance" / "parity.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            path = CORPUS / "conformance" / line.strip()
            out.append((f"conformance/{line.strip()}", path, None, {}, None))
    manifest = CONVERT_CORPUS / "manifest.json"
    if manifest.is_file():
        for f in json.loads(manifest.read_text())["files"]:
            path, mime = CONVERT_CORPUS / f["file"], f["mime"]
            label = f"convert/{f['file']}"
            out.append((label, path, mime, {}, None))
            if mime == "application/pdf":
                pages = sorted({r["page"] for r in f.get("references", []) if r.get("page")}) or [1]
                out += [(label, path, mime, {}, p) for p in pages]
            if mime == "image/gif":
                out.append((label, path, mime, {"provider": "openai"}, None))
    return out


CASES = cases()
_gates = {}


@pytest.fixture(scope="module")
def made_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("made")
    for name, data in MADE.items():
        (d / name).write_bytes(data)
    return d


def gate_for(directory: Path) -> Mediagate:
    if directory not in _gates:
        _gates[directory] = Mediagate(workspace=directory, vlm=False)
    return _gates[directory]


@pytest.mark.parametrize("label,path,mime,options,page", CASES,
                         ids=[f"{c[0]}{' openai' if c[3] else ''}{f' page {c[4]}' if c[4] else ''}" for c in CASES])
def test_admit_file_converting_equals_the_native_cli(label, path, mime, options, page, made_dir, tmp_path):
    if path is None:
        path = made_dir / label.split("/", 1)[1]
    out = tmp_path / "admitted"
    args = [str(native_cli()), "admit", str(path), "--json", "--verify", "full", "--out", str(out)]
    args += ["--mime", mime] if mime else []
    args += ["--page", str(page)] if page else ["--convert"]
    if options.get("provider"):
        args += ["--profile", options["provider"]]
    run = subprocess.run(args, capture_output=True, text=True, timeout=120)
    # A page error (no such page, encrypted, blank) is a refused verdict, both ways.
    assert run.returncode in (0, 1), f"exit {run.returncode}: {run.stderr}"
    expected = json.loads(run.stdout)

    gate = gate_for(path.parent)
    got = gate.admit_file(path.name, mime, convert=True, page=page, include_data=True, **options)
    data = got.pop("data", None)
    assert got == expected
    if expected["ok"]:
        assert hashlib.sha256(base64.b64decode(data)).hexdigest() == hashlib.sha256(out.read_bytes()).hexdigest()


def test_the_cases_convert_each_kind():
    kinds = {c[2] for c in CASES}
    assert {c[0] for c in CASES} >= {"made/diagram.svg", "made/scan.bmp", "made/doc.pdf"}
    if (CONVERT_CORPUS / "manifest.json").is_file():
        assert {"image/tiff", "image/vnd.microsoft.icon", "image/gif"} <= kinds
