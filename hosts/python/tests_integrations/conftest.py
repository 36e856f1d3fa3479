"""Fixtures for the integration tests: the loopback provider, one gate per session, the media."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from provider import Provider  # noqa: E402


@pytest.fixture
def provider():
    p = Provider()
    yield p
    p.close()


@pytest.fixture(scope="session")
def gate(tmp_path_factory):
    from mediagate_host import Mediagate

    return Mediagate(workspace=tmp_path_factory.mktemp("empty"), vlm=False)


@pytest.fixture(scope="session")
def screenshot() -> bytes:
    from media import screenshot_png

    return screenshot_png()


def decoded_data_url(url: str) -> tuple:
    """`(mime, bytes)` of a `data:` URL."""
    head, _, data = url.partition(",")
    assert head.startswith("data:") and head.endswith(";base64"), head
    return head[5:-7], base64.b64decode(data)
