"""Expected-failure files, owned by the implementer (the protobuf rule).

One test ID per line, optionally prefixed by the failure category it is expected to
fail with, ``#`` comments::

    # our log does not preallocate index files yet
    golden_index: model.create.defaults
    roll.lazy-indexes                      # any failure category
    unexpected_error:INVALID_ARGUMENT: read.max-bytes.negative

A category matches as a prefix (``unexpected_error`` covers
``unexpected_error:RECORD_TOO_LARGE``). A listed test that passes, fails with another
category, is skipped, or does not exist fails the run, so a list can never go stale
silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .diagnostics import show

# a test ID, as scenario.schema.json's id (no globs: a list names tests one by one)
TEST_ID = re.compile(r"^[a-z][a-z0-9]*(\.[a-z0-9][a-z0-9_-]*)+$")
# a failure category (results.md), e.g. files, unexpected_error, unexpected_error:RECORD_TOO_LARGE
CATEGORY = re.compile(r"^[a-z][a-z_]*(:[A-Z][A-Z0-9_]*)?$")


@dataclass(frozen=True)
class Expectation:
    test_id: str
    category: str | None
    line: int


def parse(text: str) -> tuple[dict[str, Expectation], list[str]]:
    """The expectations of a file and the problems with its lines: a line must be a test
    ID, optionally after a failure category and a colon; anything else is a problem
    naming the line (``klogspec conformance`` then exits 2)."""
    found: dict[str, Expectation] = {}
    problems: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.rsplit(None, 1)
        category = None
        if len(parts) == 2:
            category = parts[0][:-1].strip() if parts[0].endswith(":") else None
            if category is None or not CATEGORY.match(category):
                problems.append(
                    f"line {number}: expected '[category:] test-id', got {show(raw.strip())}"
                )
                continue
        test_id = parts[-1]
        if not TEST_ID.match(test_id):
            problems.append(
                f"line {number}: {show(test_id)} is not a test ID (expected '[category:] "
                f"test-id', got {show(raw.strip())})"
            )
            continue
        if test_id in found:
            problems.append(f"line {number}: {test_id} is listed twice")
        found[test_id] = Expectation(test_id, category, number)
    return found, problems


def load(path: str | Path | None) -> tuple[dict[str, Expectation], list[str]]:
    if path is None:
        return {}, []
    return parse(Path(path).read_text(encoding="utf-8"))


def judge(
    status: str, category: str | None, expectation: Expectation | None
) -> tuple[str, str | None]:
    """The final status of a test and, when the list is contradicted, why.

    Statuses: passed, failed, skipped, xfail (failed as listed), and for a contradicted
    list xpass, xfail-mismatch, xskip.
    """
    if expectation is None:
        return status, None
    if status == "passed":
        return (
            "xpass",
            f"listed as an expected failure but passed (line {expectation.line}): remove it",
        )
    if status == "skipped":
        return "xskip", f"listed as an expected failure but skipped (line {expectation.line})"
    if expectation.category and not (category or "").startswith(expectation.category):
        return "xfail-mismatch", (
            f"expected to fail with {expectation.category} (line {expectation.line}), failed with {category}"
        )
    return "xfail", None


def render(failures: list[tuple[str, str | None]]) -> str:
    """An expected-failure file listing ``(test id, category)`` pairs (``--write-expected-failures``)."""
    lines = ["# klogspec conformance expected failures: [category:] test-id"]
    lines += [
        f"{category}: {test_id}" if category else test_id for test_id, category in sorted(failures)
    ]
    return "\n".join(lines) + "\n"
