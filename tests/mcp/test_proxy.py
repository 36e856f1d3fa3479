"""`mediagate proxy` in front of the official MCP servers from npm (server-everything,
server-filesystem; installed by tests/proxy/install.sh), driven by the official MCP Python SDK."""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from conftest import FACTS, REPO, mediagate_bin, png

MODULES = REPO / "tests" / "proxy" / "node_modules" / "@modelcontextprotocol"
NODE = shutil.which("node")


def server_main(package: str) -> str:
    manifest = json.loads((MODULES / package / "package.json").read_text())
    return str(MODULES / package / next(iter(manifest["bin"].values())))


def png_size(data: str) -> tuple[int, int]:
    return struct.unpack(">II", base64.b64decode(data)[16:24])


def proxied(server: list[str], mode: str, flags: tuple[str, ...] = ()) -> Client:
    assert NODE and MODULES.is_dir(), "node and tests/proxy/node_modules are needed (tests/proxy/install.sh)"
    env = {FACTS["ENV_CACHE_DIR"]: str(REPO / "target" / "test-component-cache"), "PATH": os.environ["PATH"]}
    params = StdioServerParameters(command=str(mediagate_bin()), args=["proxy", *flags, "--", *server], env=env)
    return Client(params, mode=mode, read_timeout_seconds=60)


@pytest.mark.anyio
async def test_filesystem_images_are_admitted_or_refused_and_results_stay_valid(tmp_path, mode):
    (tmp_path / "big.png").write_bytes(png(2600, 1300))
    (tmp_path / "fake.png").write_bytes(b"<html>not a PNG</html>")
    server = [NODE, server_main("server-filesystem"), str(tmp_path)]
    async with proxied(server, mode) as client:
        await client.list_tools()  # the client validates structured results from here on
        big = await client.call_tool("read_media_file", {"path": str(tmp_path / "big.png")})
        assert not big.is_error
        assert isinstance(big.content[0], types.ImageContent)
        width, height = png_size(big.content[0].data)
        assert width <= 2000 and height <= 2000, (width, height)
        assert png_size(big.structured_content["content"][0]["data"]) == (width, height)

        # A text placeholder inside structuredContent would break read_media_file's output
        # schema (the SDK would raise); the proxy withholds structuredContent and marks isError.
        fake = await client.call_tool("read_media_file", {"path": str(tmp_path / "fake.png")})
        assert fake.is_error
        assert fake.structured_content is None
        assert isinstance(fake.content[0], types.TextContent)
        assert "magic_mismatch" in fake.content[0].text
        assert "withheld" in fake.content[-1].text


@pytest.mark.anyio
async def test_images_pass_as_the_clis_canonical_bytes_and_keep_metadata_keeps_the_input(tmp_path, mode):
    # GPS EXIF, a camera and a comment: dropped as `mediagate admit` drops them (the same bytes);
    # `proxy --keep-metadata` passes the file as it is.
    names = ["gps-exif.jpg", "gps-exif.png"]
    for name in names:
        shutil.copy(REPO / "tests" / "corpus" / "metadata" / name, tmp_path / name)

    def cli(name: str, *flags: str) -> bytes:
        out = tmp_path / f"{name}.out"
        run = subprocess.run([mediagate_bin(), "admit", str(tmp_path / name), "--out", str(out), *flags],
                             capture_output=True, timeout=120)
        assert run.returncode == 0, run.stderr
        return out.read_bytes()

    server = [NODE, server_main("server-filesystem"), str(tmp_path)]
    for flags in ((), ("--keep-metadata",)):
        async with proxied(server, mode, flags) as client:
            await client.list_tools()
            for name in names:
                got = await client.call_tool("read_media_file", {"path": str(tmp_path / name)})
                assert not got.is_error and isinstance(got.content[0], types.ImageContent), got.content
                admitted = base64.b64decode(got.content[0].data)
                assert admitted == cli(name, *flags), (name, flags)
                assert (admitted == (tmp_path / name).read_bytes()) == bool(flags), (name, flags)
                assert (b"SecretCam" in admitted) == bool(flags), (name, flags)


@pytest.mark.anyio
async def test_conformance_files_pass_as_the_clis_canonical_or_converted_bytes(tmp_path, mode):
    # The conformance files every host's parity test runs (tests/corpus/conformance/parity.txt):
    # `proxy --convert` passes the bytes `mediagate admit --convert` admits, re-mux or conversion.
    # (The filesystem server sends TIFF and ICO as embedded resources, not images: those are left out.)
    conformance = REPO / "tests" / "corpus" / "conformance"
    lines = (conformance / "parity.txt").read_text().splitlines()
    names = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    names = [name for name in names if Path(name).suffix in (".png", ".jpg", ".gif", ".webp", ".bmp")]
    assert len(names) >= 5, names
    for name in names:
        shutil.copy(conformance / name, tmp_path / Path(name).name)
    server = [NODE, server_main("server-filesystem"), str(tmp_path)]
    async with proxied(server, mode, ("--convert",)) as client:
        await client.list_tools()
        for name in names:
            path = tmp_path / Path(name).name
            out = tmp_path / f"{path.name}.out"
            run = subprocess.run([mediagate_bin(), "admit", str(path), "--convert", "--out", str(out)],
                                 capture_output=True, timeout=120)
            assert run.returncode == 0, (name, run.stderr)
            got = await client.call_tool("read_media_file", {"path": str(path)})
            assert not got.is_error and isinstance(got.content[0], types.ImageContent), (name, got.content)
            assert base64.b64decode(got.content[0].data) == out.read_bytes(), name


@pytest.mark.anyio
async def test_convert_gates_results_through_the_convert_component(tmp_path, mode):
    # `proxy --convert`: results pass the converting seat; an image providers take is
    # admitted (and fitted) exactly as without the flag, an SVG is refused without it.
    (tmp_path / "big.png").write_bytes(png(2600, 1300))
    (tmp_path / "icon.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>')
    server = [NODE, server_main("server-filesystem"), str(tmp_path)]
    async with proxied(server, mode, ("--convert",)) as client:
        await client.list_tools()
        big = await client.call_tool("read_media_file", {"path": str(tmp_path / "big.png")})
        assert not big.is_error
        width, height = png_size(big.content[0].data)
        assert width <= 2000 and height <= 2000, (width, height)
    async with proxied(server, mode) as client:
        await client.list_tools()
        svg = await client.call_tool("read_media_file", {"path": str(tmp_path / "icon.svg")})
        assert svg.is_error
        assert "mime_unsupported" in svg.content[0].text


@pytest.mark.anyio
async def test_everything_results_resources_and_prompts_pass_the_gate(mode):
    server = [NODE, server_main("server-everything"), "stdio"]
    async with proxied(server, mode) as client:
        echo = await client.call_tool("echo", {"message": "héllo"})
        assert [b.text for b in echo.content] == ["Echo: héllo"]
        tiny = await client.call_tool("get-tiny-image", {})
        kinds = [b.type for b in tiny.content]
        # Its iCCP chunk fails its checksum, but that is no bomb and its pixels decode: admitted.
        assert kinds == ["text", "image", "text"], kinds
        assert tiny.content[1].data
        blob = await client.read_resource("demo://resource/dynamic/blob/1")
        assert isinstance(blob.contents[0], types.TextResourceContents)
        assert blob.contents[0].text.startswith("[mediagate]")
        text = await client.read_resource("demo://resource/dynamic/text/1")
        assert "Resource 1" in text.contents[0].text
