"""The code blocks of docs/integrations.md that the tests run as written: each follows a
`<!-- snippet: NAME -->` line."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "integrations.md"


def snippet(lang: str, name: str) -> str:
    text = DOC.read_text()
    pattern = re.compile(r"<!-- snippet: " + re.escape(name) + r" -->\s*\n```" + re.escape(lang) + r"\n(.*?)\n```",
                         re.S)
    found = pattern.findall(text)
    assert len(found) == 1, f"{DOC} has {len(found)} `{lang}` snippets named {name!r}"
    return found[0] + "\n"
