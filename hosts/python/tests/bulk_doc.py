"""The Python snippets of docs/bulk.md (or of the file `$MEDIAGATE_BULK_DOC` names) that the tests
run as written: each follows a `<!-- snippet: NAME -->` line."""

from __future__ import annotations

import os
import re
from pathlib import Path

DOC = Path(os.environ.get("MEDIAGATE_BULK_DOC") or Path(__file__).resolve().parents[3] / "docs" / "bulk.md")


def snippet(lang: str, name: str) -> str:
    text = DOC.read_text() if DOC.is_file() else ""
    pattern = re.compile(r"<!-- snippet: " + re.escape(name) + r" -->\s*\n```" + re.escape(lang) + r"\n(.*?)\n```",
                         re.S)
    found = pattern.findall(text)
    assert len(found) == 1, f"{DOC} has {len(found)} `{lang}` snippets named {name!r} (MEDIAGATE_BULK_DOC overrides)"
    return found[0] + "\n"
