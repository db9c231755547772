"""The generated sections of the hand-written docs pages are filled in the source too, so the
raw markdown reads complete, and they are current (scripts/docs_placeholders.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HOOKS = REPO / "docs" / "hooks"
if str(HOOKS) not in sys.path:
    sys.path.insert(0, str(HOOKS))

import placeholders  # noqa: E402

MARKER = re.compile(r"<!-- (/?)klogspec:([a-z_]+) -->")


def test_every_marker_is_a_filled_pair():
    for page in sorted((REPO / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        markers = MARKER.findall(text)
        if not markers:
            continue
        assert str(page.relative_to(REPO)) in placeholders.PAGES, page
        assert len(markers) == 2 * len(placeholders.names(text)), f"{page}: an unpaired marker"
        for match in placeholders._PAIR.finditer(text):
            assert match.group("body").strip(), f"{page}: klogspec:{match.group('name')} is empty"


def test_the_source_pages_are_current():
    stale = placeholders.stale_pages(REPO)
    assert not stale, (
        f"stale generated sections in {stale}: run python scripts/docs_placeholders.py"
    )


def test_fill_replaces_a_stale_section_and_refuses_an_unknown_one():
    page = "# P\n\n<!-- klogspec:features -->\nold table\n<!-- /klogspec:features -->\n\nend\n"
    filled = placeholders.fill(page)
    assert "old table" not in filled and "`compression`" in filled
    assert filled.endswith("<!-- /klogspec:features -->\n\nend\n")
    assert placeholders.fill(filled) == filled
    with pytest.raises(KeyError):
        placeholders.fill("<!-- klogspec:nope -->\nx\n<!-- /klogspec:nope -->\n")
