"""Generated sections inside hand-written pages, kept filled in the source too.

A page marks a generated section with a pair of comments::

    <!-- klogspec:features -->
    ...generated markdown...
    <!-- /klogspec:features -->

``fill`` replaces what lies between each pair with a fresh copy, so the raw markdown reads
complete on GitHub and in an editor, and the built site is fresh whatever the source holds.
``python scripts/docs_placeholders.py`` rewrites the pages; ``--check`` (and a test) fails
when one is stale.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import generated

REPO = Path(__file__).resolve().parent.parent.parent


def _transcript() -> str:
    return "\n".join(["```text", *generated.capture_transcript(), "```"])


def _milestones() -> str:
    from conformance.milestones import milestone_table

    return milestone_table()


SECTIONS: dict[str, Callable[[], str]] = {
    "decode_differences": generated.decode_differences_table,
    "features": generated.features_table,
    "milestones": _milestones,
    "operations": lambda: generated.operations_table(REPO),
    "transcript": _transcript,
}
PAGES = ("docs/conformance/index.md", "docs/conformance/protocol.md", "docs/internal-topics.md")
_PAIR = re.compile(
    r"(<!-- klogspec:(?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- /klogspec:(?P=name) -->)",
    re.DOTALL,
)


# a line for readers of the raw markdown (on a forge) where the build inserts a diagram or
# a table at a bare marker: the build drops it (issue 28, 7)
FORGE_ONLY = re.compile(r"^.*<!-- forge-only -->[ \t]*\n", re.M)


def strip_forge_notes(markdown: str) -> str:
    """``markdown`` without its forge-only lines."""
    return FORGE_ONLY.sub("", markdown)


def names(markdown: str) -> list[str]:
    """The generated sections a page holds, in order."""
    return [m.group("name") for m in _PAIR.finditer(markdown)]


def fill(markdown: str, cache: dict[str, str] | None = None) -> str:
    """``markdown`` with every generated section made fresh (``cache`` keeps one copy of
    each section per run: the transcript drives a real testee)."""
    cache = {} if cache is None else cache

    def fresh(match: re.Match) -> str:
        name = match.group("name")
        if name not in SECTIONS:
            raise KeyError(f"unknown generated section klogspec:{name}")
        if name not in cache:
            cache[name] = SECTIONS[name]().rstrip("\n")
        return f"{match.group(1)}\n{cache[name]}\n\n{match.group(4)}"

    return _PAIR.sub(fresh, markdown)


def stale_pages(repo: Path = REPO, *, write: bool = False) -> list[str]:
    """The pages whose generated sections differ from a fresh copy (rewritten if ``write``)."""
    cache: dict[str, str] = {}
    stale = []
    for page in PAGES:
        path = repo / page
        text = path.read_text(encoding="utf-8")
        filled = fill(text, cache)
        if filled != text:
            stale.append(page)
            if write:
                path.write_text(filled, encoding="utf-8")
    return stale
