"""The canonical form, read by an independent decoder (Pillow): an image with GPS EXIF, a camera's
make and model and a text comment comes out without them and with the same pixels, through the
Python host and the native CLI alike (the same bytes); `keep_metadata=True` keeps them."""

from __future__ import annotations

import base64
import io
import json
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from conftest import CORPUS, native_cli
from mediagate_host import Mediagate

METADATA = CORPUS / "metadata"
GPS_IFD, MAKE = 0x8825, 0x010F


@pytest.fixture(scope="module")
def gate() -> Mediagate:
    return Mediagate(workspace=METADATA, vlm=False)


def cli_admit(path: Path, out: Path, *args: str) -> dict:
    run = subprocess.run([str(native_cli()), "admit", str(path), "--json", "--verify", "full", "--out", str(out),
                          *args], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("name", ["gps-exif.jpg", "gps-exif.png"])
def test_metadata_is_dropped_and_the_pixels_kept(gate: Mediagate, name: str, tmp_path: Path):
    source = METADATA / name
    before = Image.open(source)
    assert before.getexif()[MAKE] == "SecretCam" and GPS_IFD in before.getexif(), "the fixture carries them"

    got = gate.admit_file(name, include_data=True)
    admitted = base64.b64decode(got.pop("data"))
    expected = cli_admit(source, tmp_path / "out")
    assert got == expected
    assert (tmp_path / "out").read_bytes() == admitted, "the CLI and the Python host admit the same bytes"
    assert "exif" in got["dropped"] and not got["reencoded"]

    after = Image.open(io.BytesIO(admitted))
    assert len(after.getexif()) == 0
    assert "Comment" not in after.info and "exif" not in after.info
    assert after.convert("RGB").tobytes() == before.convert("RGB").tobytes()


@pytest.mark.parametrize("name", ["gps-exif.jpg", "gps-exif.png"])
def test_keep_metadata_admits_the_input_as_given(gate: Mediagate, name: str, tmp_path: Path):
    source = METADATA / name
    got = gate.admit_file(name, include_data=True, keep_metadata=True)
    admitted = base64.b64decode(got.pop("data"))
    assert got == cli_admit(source, tmp_path / "out", "--keep-metadata")
    assert admitted == source.read_bytes() and "dropped" not in got
    assert Image.open(io.BytesIO(admitted)).getexif()[MAKE] == "SecretCam"
