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


BARE_MARKER = re.compile(
    r"^<!-- klogspec:(?:diagram [\w-]+|adapter-methods|plugin-options|conformance-list) -->$"
)
LINK = re.compile(r"\[[^\]]+\]\([^)]+\)")


def test_a_bare_marker_has_a_sentence_and_link_for_forge_readers():
    """Where the build inserts a diagram or a table, the raw page says what and links to how
    the site is built; the build drops that line (issue 28, 7)."""
    bare = []
    for page in sorted([*(REPO / "spec").rglob("*.md"), *(REPO / "docs").rglob("*.md")]):
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if BARE_MARKER.match(line):
                bare.append(page.name)
                note = lines[i + 1] if i + 1 < len(lines) else ""
                assert placeholders.FORGE_ONLY.match(note + "\n") and LINK.search(note), (
                    f"{page.relative_to(REPO)}:{i + 1}: {line} needs a forge-only sentence with a link"
                )
                assert placeholders.strip_forge_notes(f"{line}\n{note}\n") == f"{line}\n"
    assert len(bare) >= 9, bare
