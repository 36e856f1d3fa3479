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
from mediagate_host import Mediagate, ToolError, mime_from_extension

CONVERT_CORPUS = CORPUS / "convert"
MADE = {"diagram.svg": SVG, "scan.bmp": bmp(40, 30), "doc.pdf": minimal_pdf("page one")}
REFUSAL_REASONS = {"mime_unsupported", "raw_too_large", "magic_mismatch", "base64_too_large", "undecodable",
                   "dimensions_too_large", "request_limit"}


def cases():
    """(label, path, mime, options, page): the made files, then the convert corpus's inputs as its
    manifest lists them (the reference renderings beside them are not inputs)."""
    out = [(f"made/{name}", None, mime_from_extension(name), {}, None) for name in MADE]
    out.append(("made/doc.pdf", None, "application/pdf", {}, 1))
    # The conformance files every host's parity test runs: re-muxes that drop metadata, conversions.
    for line in (CORPUS / "conformance" / "parity.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            path = CORPUS / "conformance" / line.strip()
            out.append((f"conformance/{line.strip()}", path, mime_from_extension(path.name), {}, None))
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
    args = [str(native_cli()), "admit", str(path), "--json", "--mime", mime, "--verify", "full", "--out", str(out)]
    args += ["--page", str(page)] if page else ["--convert"]
    if options.get("provider"):
        args += ["--profile", options["provider"]]
    run = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if page is not None and run.returncode not in (0, 1):
        expected = {"ok": False, "error": run.stdout or run.stderr}  # a page error as a CLI error
    else:
        assert run.returncode in (0, 1), f"exit {run.returncode}: {run.stderr}"
        expected = json.loads(run.stdout)

    gate = gate_for(path.parent)
    if page is not None and not expected["ok"]:
        # `admit-file-converting` answers every page error (no such page, encrypted, blank, or the
        # gate's refusal of the page) as a `refused` tool error in words: refused both ways, and a
        # gate refusal in the CLI's own words.
        with pytest.raises(ToolError) as e:
            gate.admit_file(path.name, mime, page=page, **options)
        assert e.value.code == "refused"
        if expected.get("reason") in REFUSAL_REASONS:
            assert expected["message"] in e.value.message
        return
    got = gate.admit_file(path.name, mime, convert=True, page=page, include_data=True, **options)
    data = got.pop("data", None)
    assert got == expected
    if expected["ok"]:
        assert hashlib.sha256(base64.b64decode(data)).hexdigest() == hashlib.sha256(out.read_bytes()).hexdigest()


def test_the_cases_convert_each_kind():
    kinds = {c[2] for c in CASES}
    assert {"image/svg+xml", "image/bmp", "application/pdf"} <= kinds
    if (CONVERT_CORPUS / "manifest.json").is_file():
        assert {"image/tiff", "image/vnd.microsoft.icon", "image/gif"} <= kinds
