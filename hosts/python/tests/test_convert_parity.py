"""Conversions through the Python host equal the native CLI's (`mediagate admit --convert --json`,
`--page N`), file by file: every file of tests/corpus/convert/ and files written here by hand. The
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
from mediagate_host import Mediagate, mime_from_extension

CONVERT_CORPUS = CORPUS / "convert"
JUDGED = {"image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml", "image/bmp", "image/tiff",
          "image/vnd.microsoft.icon", "image/heic", "image/avif", "application/pdf"}
MADE = {"diagram.svg": SVG, "scan.bmp": bmp(40, 30), "doc.pdf": minimal_pdf("page one")}


def cases():
    out = [(f"made/{name}", None, {}, None) for name in MADE]
    out.append(("made/doc.pdf", None, {}, 1))
    if CONVERT_CORPUS.is_dir():
        for path in sorted(p for p in CONVERT_CORPUS.rglob("*") if p.is_file()):
            mime = mime_from_extension(path)
            if mime not in JUDGED:
                continue
            label = f"convert/{path.relative_to(CONVERT_CORPUS)}"
            out.append((label, path, {}, None))
            if mime == "application/pdf":
                out.append((label, path, {}, 1))
            if mime == "image/gif":
                out.append((label, path, {"provider": "openai"}, None))
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


@pytest.mark.parametrize("label,path,options,page", CASES,
                         ids=[f"{c[0]}{' openai' if c[2] else ''}{f' page {c[3]}' if c[3] else ''}" for c in CASES])
def test_admit_file_converting_equals_the_native_cli(label, path, options, page, made_dir, tmp_path):
    if path is None:
        path = made_dir / label.split("/", 1)[1]
    mime = mime_from_extension(path)
    out = tmp_path / "admitted"
    args = [str(native_cli()), "admit", str(path), "--json", "--mime", mime, "--verify", "full", "--out", str(out)]
    args += ["--page", str(page)] if page else ["--convert"]
    if options.get("provider"):
        args += ["--profile", options["provider"]]
    run = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert run.returncode in (0, 1), f"exit {run.returncode}: {run.stderr}"
    expected = json.loads(run.stdout)

    got = gate_for(path.parent).admit_file(path.name, mime, convert=True, page=page, include_data=True, **options)
    data = got.pop("data", None)
    assert got == expected
    if expected["ok"]:
        assert hashlib.sha256(base64.b64decode(data)).hexdigest() == hashlib.sha256(out.read_bytes()).hexdigest()


def test_the_cases_convert_each_kind():
    kinds = {mime_from_extension(c[0]) for c in CASES}
    assert {"image/svg+xml", "image/bmp", "application/pdf"} <= kinds
