"""What the MCP server's, the proxy's and the docs' tests share: where the repository and the binary
are, a small PNG, and the fixtures every module uses."""

from __future__ import annotations

import os
import runpy
import struct
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The generated facts (env names), read by path: this suite's venv has no Python host installed.
FACTS = runpy.run_path(str(REPO / "hosts/python/mediagate_host/facts.py"))


def mediagate_bin() -> Path:
    """$MEDIAGATE_BIN, else the release build, else the debug one."""
    if os.environ.get("MEDIAGATE_BIN"):
        return Path(os.environ["MEDIAGATE_BIN"])
    release = REPO / "target" / "release" / "mediagate"
    return release if release.exists() else REPO / "target" / "debug" / "mediagate"


def png(width: int = 8, height: int = 8) -> bytes:
    """A valid RGB PNG with a horizontal gradient (so a large one stays large once compressed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = bytes(x & 0xFF for x in range(width * 3))
    raw = b"".join(b"\0" + row for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(params=["legacy", "auto"])
def mode(request):
    """Both protocol versions the server speaks: the client's legacy handshake and its newest."""
    return request.param
