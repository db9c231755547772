"""Traceability between the spec and the tests.

Every requirement ID a test cites must exist in spec/requirements.yaml, and every
requirement must be checked by at least one test (a ``@pytest.mark.req`` marker or
a ``req(...)`` citation in the tests). The checks read the test sources as text so
they see every test, including ones skipped on this machine.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
ID = r"[A-Z]+(?:-[A-Z]+)?-\d+"
# A req marker's argument list, possibly over several lines.
REQ_CALL = re.compile(r"req\(\s*((?:[\"']" + ID + r"[\"']\s*,?\s*)+)\)")
QUOTED_ID = re.compile(r"[\"'](" + ID + r")[\"']")


def requirements() -> dict[str, dict]:
    data = yaml.safe_load((REPO / "spec" / "requirements.yaml").read_text())
    return {entry["id"]: entry for entry in data["requirements"]}


def cited_ids() -> dict[str, set[str]]:
    """ID -> the test files citing it."""
    cited: dict[str, set[str]] = {}
    for path in sorted((REPO / "tests").rglob("*.py")):
        for call in REQ_CALL.finditer(path.read_text()):
            for req_id in QUOTED_ID.findall(call.group(1)):
                cited.setdefault(req_id, set()).add(path.name)
    return cited


def test_every_cited_requirement_exists():
    known = requirements()
    unknown = {
        req_id: sorted(files) for req_id, files in cited_ids().items() if req_id not in known
    }
    assert not unknown, f"tests cite requirement IDs missing from spec/requirements.yaml: {unknown}"


# Requirements whose test belongs to a part that does not exist yet, with the issue that
# brings it. The list may only shrink: an entry that gains a test must leave it.
PENDING: dict[str, str] = {}


def test_every_requirement_has_a_test():
    """Every rule of the spec is pinned by at least one test that fails when it breaks."""
    cited = cited_ids()
    untested = sorted(req_id for req_id in requirements() if req_id not in cited)
    unexplained = [req_id for req_id in untested if req_id not in PENDING]
    assert not unexplained, f"requirements with no test citing them: {unexplained}"


def test_pending_list_only_holds_untested_requirements():
    cited, known = cited_ids(), requirements()
    stale = sorted(req_id for req_id in PENDING if req_id in cited or req_id not in known)
    assert not stale, f"remove from PENDING (now tested, or no longer in the spec): {stale}"
