"""What this host itself does with a call's options: each one reaches the component (marshalled into
contract 0.3.0's `admit-options` and `workspace-file`), seen by the verdict it changes. The verdicts
themselves are the component's, written by it and only parsed here: comparing them with the CLI's
(the same component) proved nothing about this host, so no test here does.

One file per option, chosen so that option alone flips the verdict; each is judged with the
option left out (the component's default) and set."""

from __future__ import annotations

import base64
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from conftest import CORPUS, SMALL_PNG
from convert_files import SVG, minimal_pdf
from mediagate_host import Mediagate


def png_with_a_bad_filter() -> bytes:
    """basn2c08.png with every scanline's filter type 7 (there is none): the header reads, the pixels
    do not decode, so `verify` decides."""
    src = (CORPUS / "pngsuite" / "basn2c08.png").read_bytes()
    out, i = bytearray(src[:8]), 8
    while i < len(src):
        (n,), kind = struct.unpack(">I", src[i:i + 4]), src[i + 4:i + 8]
        data = src[i + 8:i + 8 + n]
        if kind == b"IDAT":
            raw = zlib.decompress(data)
            data = zlib.compress(bytes([7]) + raw[1:])
        out += struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        i += 12 + n
    return bytes(out)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("options")
    (d / "bad-filter.png").write_bytes(png_with_a_bad_filter())
    shutil.copy(CORPUS / "convert" / "gif-animated-pillow.gif", d / "animated.gif")
    shutil.copy(CORPUS / "metadata" / "gps-exif.jpg", d / "gps.jpg")
    shutil.copy(CORPUS / "bench" / "screenshot-3456x2234.png", d / "screenshot.png")
    shutil.copy(CORPUS / "bench" / "photo-exif-rotated.jpg", d / "photo.png")
    shutil.copy(SMALL_PNG, d / "small.png")
    (d / "logo.png").write_bytes(SVG)
    (d / "doc.pdf").write_bytes(minimal_pdf("page one"))
    return d


@pytest.fixture(scope="module")
def gate(files):
    return Mediagate(workspace=files, vlm=False)


def refused(verdict, reason):
    assert verdict["ok"] is False and verdict["reason"] == reason, verdict
    return verdict


# (file, the option, the verdict left to the default, the verdict with the option)
OPTIONS = [
    ("bad-filter.png", {"verify": "header"}, lambda v: refused(v, "undecodable"), lambda v: v["ok"] is True),
    ("bad-filter.png", {"verify": "full"}, lambda v: refused(v, "undecodable"), lambda v: refused(v, "undecodable")),
    ("animated.gif", {"provider": "openai"}, lambda v: v["ok"] is True,
     lambda v: "still GIFs" in refused(v, "mime_unsupported")["message"]),
    ("animated.gif", {"provider": "gemini"}, lambda v: v["ok"] is True,
     lambda v: "gemini" in refused(v, "mime_unsupported")["message"]),
    ("gps.jpg", {"keep_metadata": True}, lambda v: v["dropped"] == ["exif"], lambda v: "dropped" not in v),
    ("screenshot.png", {"downsample": False}, lambda v: v["ok"] and v["resized"],
     lambda v: refused(v, "base64_too_large")),
    ("logo.png", {"convert": True}, lambda v: refused(v, "magic_mismatch"),
     lambda v: v["ok"] and v["converted"]["from"] == "image/svg+xml"),
    ("doc.pdf", {"page": 2}, lambda v: v["ok"] and v["kind"] == "document",
     lambda v: (refused(v, "no_such_page")["requested"], v["count"]) == (2, 1)),
    ("doc.pdf", {"page": 1}, lambda v: v["kind"] == "document", lambda v: v["ok"] and v["mime"] == "image/png"),
    ("small.png", {"claimed_mime": "image/jpeg"}, lambda v: v["ok"] is True, lambda v: refused(v, "magic_mismatch")),
]


@pytest.mark.parametrize("name,option,default,given", OPTIONS,
                         ids=[f"{o[0]}-{'-'.join(f'{k}={v}' for k, v in o[1].items())}" for o in OPTIONS])
def test_each_option_of_admit_file_reaches_the_component(gate, name, option, default, given):
    assert default(gate.admit_file(name)), name
    assert given(gate.admit_file(name, **option)), option


@pytest.mark.parametrize("name,option,default,given", [o for o in OPTIONS if "page" not in o[1]],
                         ids=[o[0] + "-" + "-".join(o[1]) for o in OPTIONS if "page" not in o[1]])
def test_each_option_of_admit_bytes_reaches_the_component(gate, files, name, option, default, given):
    data = (files / name).read_bytes()
    # Bytes have no name: the claimed type stands in for the extension hint where it mattered.
    assert given(gate.admit_bytes(data, **option)), option
    if "claimed_mime" not in option and name != "logo.png":
        assert default(gate.admit_bytes(data)), name


def test_include_data_hands_back_the_admitted_bytes(gate, files):
    unchanged = gate.admit_file("small.png", include_data=True)
    assert base64.b64decode(unchanged["data"]) == (files / "small.png").read_bytes()
    converted = gate.admit_file("logo.png", convert=True, include_data=True)
    assert base64.b64decode(converted["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert "data" not in gate.admit_file("small.png")


def test_a_files_name_does_not_claim_its_type(gate):
    """No claimed type: the component picks it from the bytes (a JPEG named .png is the JPEG it is;
    an SVG named .png is refused for its signature), as `mediagate admit` does."""
    photo = gate.admit_file("photo.png")
    assert photo["ok"] is True and photo["mime"] == "image/jpeg", photo
    refused(gate.admit_file("logo.png"), "magic_mismatch")


def test_options_reach_the_walks(gate, files):
    """`admit_tool_result` and `admit_request` marshal the same options (and `convert`) into one
    JSON call each."""
    b64 = base64.b64encode((files / "screenshot.png").read_bytes()).decode()
    svg = base64.b64encode(SVG).decode()
    result = [{"type": "image", "data": b64, "mimeType": "image/png"},
              {"type": "image", "data": svg, "mimeType": "image/svg+xml"}]
    fitted = gate.admit_tool_result("shot", result)
    assert [r["reason"] for r in fitted["refused"]] == ["mime_unsupported"], fitted["refused"]
    strict = gate.admit_tool_result("shot", result, downsample=False, convert=True)
    assert [r["reason"] for r in strict["refused"]] == ["base64_too_large"], strict["refused"]
    assert [c["from"] for c in strict["conversions"]] == ["image/svg+xml"]

    block = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}}
    request = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": [block]}]}
    assert [c["what"] for c in gate.admit_request("anthropic", request)["changed"]] == ["downsampled"]
    strict = gate.admit_request("anthropic", request, downsample=False)
    assert [c["reason"] for c in strict["changed"]] == ["base64_too_large"], strict["changed"]
    assert strict["refused"] == ["/messages/0/content/0"]
