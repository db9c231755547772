"""What the README states about the project is true of it: the number of conformance
scenarios, and the commands it shows."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"


def test_readme_counts_the_scenarios():
    from conformance.scenarios import load_all

    said = {int(n) for n in re.findall(r"\b(\d+) scenarios\b", README.read_text(encoding="utf-8"))}
    assert said, "the README no longer says how many scenarios the suite has"
    assert said == {len(load_all())}, (
        f"the README says {sorted(said)} scenarios; the suite has {len(load_all())}"
    )


def test_readme_and_site_show_recover():
    """The operator's three commands are in the README, the quick start and the home page."""
    for path in (README, REPO / "docs" / "quickstart.md", REPO / "docs" / "index.md"):
        text = path.read_text(encoding="utf-8")
        for command in ("klogspec verify", "klogspec recover"):
            assert command in text or command.replace("klogspec ", "klogspec-") in text, (
                f"{path.relative_to(REPO)} does not show {command}"
            )
