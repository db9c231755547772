"""Requirement to scenario to reference code: the table of docs/requirements.md.

``klogspec conformance requirements`` prints it and ``--write`` writes it; a test fails when it is stale, when a
MUST or SHOULD rule of the behaviour pages has no scenario, or when a scenario names an
ID that spec/requirements.yaml does not have.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

from .requirements import PACKAGE_ROOT
from .scenarios import load_all, load_requirements, requirements_path

ID = re.compile(r"\b[A-Z]+(?:-[A-Z]+)?-\d+\b")
BEHAVIOUR = "behaviour/"

# Behaviour rules no operation of the contract can reach, with where they are tested
# instead. The list may only shrink.
OUT_OF_CONTRACT = {
    req: "a rule of recovery tools (klogspec recover), not of a log's operations: tests/recovery"
    for req in (
        "RECOV-14",
        "RECOV-15",
        "RECOV-16",
        "RECOV-17",
        "RECOV-18",
        "RECOV-20",
        "RECOV-21",
        "RECOV-22",
        "RECOV-23",
        "RECOV-24",
        "RECOV-25",
        "RECOV-26",
        "RECOV-27",
    )  # fmt: skip
}
# Rules of the test contract itself (model.md §6): the harness checks them on every
# exchange of every scenario, and tests/conformance tests the harness on them.
CONTRACT_RULES = {
    req: "a rule of the test contract, checked on every exchange: tests/conformance"
    for req in ("PROTO-1", "PROTO-2", "PROTO-3", "PROTO-4", "PROTO-5", "PROTO-6")
}


KAFKA_REPO = "https://github.com/apache/kafka"


@cache
def kafka_commit() -> str:
    """The apache/kafka commit the spec's rules were read from, as requirements.yaml's
    header states it."""
    head = requirements_path().read_text(encoding="utf-8").split("requirements:", 1)[0]
    found = re.search(r"\bcommit ([0-9a-f]{40})\b", head)
    if found is None:
        raise ValueError(f"{requirements_path()}: the header names no Kafka commit")
    return found.group(1)


def kafka_source_url(path: str) -> str:
    """GitHub's page of a file (or, ending in ``/``, a folder) of Kafka at the cited commit."""
    kind = "tree" if path.endswith("/") else "blob"
    return f"{KAFKA_REPO}/{kind}/{kafka_commit()}/{path.rstrip('/')}"


def page_title(page: str) -> str:
    """The title (first heading) of a spec page, ``page`` relative to spec/."""
    path = PACKAGE_ROOT / "spec" / page
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return page


def _source_cell(source: str) -> str:
    """A rule's Kafka source as a link to the file at the cited commit; a rule of this
    project says so."""
    if not source or source.startswith("kafka-log-spec"):
        note = source.removeprefix("kafka-log-spec").strip(" :()") or "no Kafka source"
        return f"*{_cell(note)}*"
    return f"[`{source.rsplit('/', 1)[-1]}`]({kafka_source_url(source)})"


def requirements_doc_path() -> Path:
    return PACKAGE_ROOT / "docs" / "requirements.md"


def scenario_citations() -> dict[str, list[str]]:
    """requirement ID -> IDs of the scenarios citing it (in the scenario or one of its steps)."""
    cited: dict[str, list[str]] = defaultdict(list)
    for scenario in load_all():
        ids = set(scenario.requirements)
        for step in scenario.steps:
            ids |= set(step.get("reqs", ()))
        for req in sorted(ids):
            cited[req].append(scenario.id)
    return dict(cited)


def uncovered(
    levels: tuple[str, ...] = ("MUST", "SHOULD"), page_prefix: str = BEHAVIOUR
) -> list[str]:
    """Rules of the behaviour pages at ``levels`` that no scenario cites."""
    cited = scenario_citations()
    return [
        req
        for req, entry in load_requirements().items()
        if entry["page"].startswith(page_prefix)
        and entry["level"] in levels
        and req not in cited
        and req not in OUT_OF_CONTRACT
        and req not in CONTRACT_RULES
    ]


def unknown_citations() -> dict[str, list[str]]:
    known = load_requirements()
    return {req: ids for req, ids in scenario_citations().items() if req not in known}


@cache
def reference_code() -> dict[str, list[str]]:
    """requirement ID -> ``module.qualname`` of the reference functions and classes whose
    docstrings cite it."""
    found: dict[str, list[str]] = defaultdict(list)
    root = PACKAGE_ROOT / "reference_impl"
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE_ROOT).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for qualname, node in _documented(tree):
            for req in sorted(set(ID.findall(ast.get_docstring(node) or ""))):
                found[req].append(f"{module}.{qualname}" if qualname else module)
    return dict(found)


def _documented(tree: ast.Module, prefix: str = ""):
    if not prefix:
        yield "", tree
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}{node.name}"
            yield name, node
            if isinstance(node, ast.ClassDef):
                yield from _documented(node, f"{name}.")


def _compress(scenario_ids: list[str]) -> str:
    """Families collapse to ``family.*`` with their count."""
    families = {s.id: s.family for s in load_all() if s.family}
    groups: dict[str, int] = defaultdict(int)
    for sid in scenario_ids:
        groups[f"{families[sid]}.*" if sid in families else sid] += 1
    return ", ".join(f"`{g}` ({n})" if n > 1 else f"`{g}`" for g, n in sorted(groups.items()))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def requirement_table() -> str:
    """docs/requirements.md: every requirement, page by page."""
    cited = scenario_citations()
    code = reference_code()
    by_page: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for req, entry in load_requirements().items():
        by_page[entry["page"]].append((req, entry))
    must = [
        r
        for r, e in load_requirements().items()
        if e["page"].startswith(BEHAVIOUR)
        and e["level"] != "MAY"
        and r not in OUT_OF_CONTRACT
        and r not in CONTRACT_RULES
    ]
    lines = [
        "# Requirements",
        "",
        "<!-- generated by `klogspec conformance requirements`; do not edit by hand -->",
        "",
        "Every rule of the spec (spec/requirements.yaml) with its level, the conformance",
        "scenarios that check it (`family.*` stands for a generated family of them), the",
        "reference functions whose docstrings cite it and the file of Apache Kafka it was read",
        f"from (at commit `{kafka_commit()[:12]}`). Every MUST and SHOULD of the behaviour",
        f"pages that the contract can reach has a scenario: {sum(1 for r in must if r in cited)}",
        f"of {len(must)}. {', '.join(sorted(OUT_OF_CONTRACT))} are rules of recovery tools",
        "(`klogspec recover`), tested in tests/recovery;",
        f"{', '.join(sorted(CONTRACT_RULES))} are rules of the test contract, which the harness",
        "checks on every exchange (tests/conformance).",
        "",
    ]
    for page in sorted(by_page, key=lambda p: (not p.startswith(BEHAVIOUR), p)):
        title = page_title(page)
        lines += [
            f"## {title}",
            "",
            f"The rules of [{title}](../spec/{page}).",
            "",
            "| Rule | Level | Requirement | Scenarios | Reference code | Kafka source |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for req, entry in by_page[page]:
            scenarios = _compress(cited.get(req, []))
            if not scenarios and req in OUT_OF_CONTRACT:
                scenarios = "recovery tool: tests/recovery"
            if not scenarios and req in CONTRACT_RULES:
                scenarios = "the harness, on every exchange: tests/conformance"
            refs = ", ".join(f"`{c}`" for c in code.get(req, []))
            lines.append(
                f'| <span id="{req}"></span>{req} | {entry["level"]} | {_cell(entry["rule"])} '
                f"| {scenarios} | {refs} | {_source_cell(str(entry.get('source', '')))} |"
            )
        lines.append("")
    return "\n".join(lines)
