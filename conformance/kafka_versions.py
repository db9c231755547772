"""The "Kafka versions" docs page: the suite on every Kafka 4.x release, side by side.

``python -m conformance.kafka_versions run`` runs the whole suite on the Kafka testee of each
release (``--impl kafka:<version>``, conformance/kafka_testee/) in each checkpoint mode, with
the releases' expected-failure lists, and saves the verdicts in
``docs/conformance/kafka-versions.json`` (the small file the page is built from, committed);
``python -m conformance.kafka_versions render`` writes ``docs/conformance/kafka-versions.md``
from it (tests/conformance/test_kafka_versions_page.py checks that the page matches the data).
Every cell is ``pass``, ``Deviation`` (a listed, documented Deviation) or ``differs``; a row
whose answers differ between releases shows each release's first failure side by side.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from . import expected as xf

REPO = Path(__file__).resolve().parents[1]
LISTS = REPO / "conformance" / "expected-failures"
DATA = REPO / "docs" / "conformance" / "kafka-versions.json"
PAGE = REPO / "docs" / "conformance" / "kafka-versions.md"
RELEASES = ("4.0.2", "4.1.2", "4.2.2", "4.3.1", "4.4.0")  # the newest patch of each minor
MODES = ("kafka", "reference")
SHARED_LIST = LISTS / "kafka-releases.txt"
CELLS = {"passed": "pass", "xfail": "Deviation", "skipped": "skipped"}


def expected_for(version: str) -> dict[str, xf.Expectation]:
    """The shared list of every release plus ``kafka-<version>.txt``, if any."""
    listed, problems = xf.load(SHARED_LIST)
    own = LISTS / f"kafka-{version}.txt"
    if own.is_file():
        extra, more = xf.load(own)
        problems += more + [f"{own.name} repeats {t}" for t in sorted(set(extra) & set(listed))]
        listed = {**listed, **extra}
    if problems:
        raise ValueError(f"the expected failures of Kafka {version}: {problems}")
    return listed


def differences(suite, shown: int = 5) -> list[str]:
    """Each test of a suite run that failed otherwise than its expected-failure line says (or
    passed although listed), with its first failures; then the lists' own problems."""
    from .suite import FAILED_STATUSES

    return [
        f"{o.id}: {o.status}"
        + (f" ({o.note})" if o.note else "")
        + "".join(f"\n    {f.message}" for f in o.result.failures[:shown])
        for o in suite.outcomes
        if o.status in FAILED_STATUSES
    ] + suite.list_problems


def column(version: str, mode: str) -> str:
    return f"{version} {mode}"


def run(releases=RELEASES, modes=MODES, scenarios=None) -> dict:
    """Every release in every mode: ``{"columns", "seconds", "cells": {id: [cell per column]},
    "why": {id: {column: first failure}}}``, ``why`` only for ``differs`` cells; ``scenarios``
    (default: all) limits the runs."""
    from .suite import run_suite
    from .transport import resolve_impl

    data: dict = {
        "columns": [],
        "seconds": {},
        "cells": defaultdict(list),
        "why": defaultdict(dict),
    }
    for version in releases:
        for mode in modes:
            name = column(version, mode)
            impl = resolve_impl(f"kafka:{version} --checkpoints={mode}")
            suite = run_suite(impl, scenarios, expected=expected_for(version), timeout=60)
            data["columns"].append(name)
            data["seconds"][name] = round(suite.duration_s)
            for outcome in suite.outcomes:
                cell, why = verdict(outcome)
                data["cells"][outcome.id].append(cell)
                if why is not None:
                    data["why"][outcome.id][name] = why
    data["cells"] = dict(sorted(data["cells"].items()))
    data["why"] = dict(sorted(data["why"].items()))
    return data


def update(data: dict) -> dict:
    """The saved data brought up to the scenarios of today: the scenarios it lacks run on
    every release and mode (the whole suite's seconds stay those of the last full run), the
    ones that are gone dropped."""
    from .scenarios import load_all

    scenarios = load_all()
    missing = [s for s in scenarios if s.id not in data["cells"]]
    known = {s.id for s in scenarios}
    cells = {i: c for i, c in data["cells"].items() if i in known}
    why = {i: w for i, w in data["why"].items() if i in known}
    if missing:
        fresh = run(RELEASES, MODES, missing)
        assert fresh["columns"] == data["columns"], "the saved columns are not today's matrix"
        cells |= fresh["cells"]
        why |= fresh["why"]
    return data | {"cells": dict(sorted(cells.items())), "why": dict(sorted(why.items()))}


def verdict(outcome) -> tuple[str, str | None]:
    cell = CELLS.get(outcome.status, "differs")
    if cell != "differs":
        return cell, None
    failures = outcome.result.failures
    why = f"{failures[0].category}: {failures[0].message}" if failures else outcome.note or ""
    return cell, why[:200]


def render(data: dict) -> str:
    columns = data["columns"]
    lines = [
        "# Kafka versions",
        "",
        "The whole suite on Apache Kafka's own `UnifiedLog` of each release's jars (the newest",
        "patch of each minor, [the testee](kafka-testee.md)), in both checkpoint modes. A cell is",
        "`pass`, `Deviation` (listed in `conformance/expected-failures/kafka-releases.txt` or",
        "`kafka-<version>.txt`, a documented Deviation of the spec) or `differs` (the release",
        "answers otherwise; the first failure is quoted below the table of its family).",
        "Generated by `python -m conformance.kafka_versions run` then `render` from",
        "`docs/conformance/kafka-versions.json`; do not edit by hand. Since issue 21 the spec,",
        "the reference and the goldens follow the releases where the snapshot the spec was first",
        "written from (1eb7644, the shared testee, [agreement](kafka-agreement.md)) answers",
        "otherwise (READ-11, ROLL-8, INDEX-7: their version notes give both sources), and where",
        "the releases disagree with each other, or an artefact is an accident of Kafka's code",
        "(INDEX-23, ROLL-22, ROLL-23), the rule is a MAY whose checks accept every answer.",
        "tests/conformance/test_kafka_versions.py runs this matrix on every CI run (4.0 to 4.3",
        "in the reference mode with `--runslow`).",
        "",
        "| Release, mode | pass | Deviation | differs | seconds |",
        "| --- | --- | --- | --- | --- |",
    ]
    for i, name in enumerate(columns):
        cells = [row[i] for row in data["cells"].values()]
        lines.append(
            f"| {name} | {cells.count('pass')} | {cells.count('Deviation')} | "
            f"{cells.count('differs')} | {data['seconds'].get(name, '')} |"
        )
    families: dict[str, list[str]] = defaultdict(list)
    for test_id in data["cells"]:
        families[test_id.split(".", 1)[0]].append(test_id)
    for family, ids in families.items():
        lines += _family(family, ids, data, columns)
    return "\n".join(lines) + "\n"


def _family(family: str, ids: list[str], data: dict, columns: list[str]) -> list[str]:
    rows = [i for i in ids if any(cell != "pass" for cell in data["cells"][i])]
    out = ["", f"## {family}", "", f"{len(ids) - len(rows)} of {len(ids)} pass everywhere."]
    if not rows:
        return out
    out += ["", "| Scenario | " + " | ".join(columns) + " |", "| --- |" + " --- |" * len(columns)]
    notes = []
    for test_id in rows:
        out.append(f"| `{test_id}` | " + " | ".join(data["cells"][test_id]) + " |")
        by_answer: dict[str, list[str]] = defaultdict(list)
        for name, why in data["why"].get(test_id, {}).items():
            by_answer[why].append(name)
        if by_answer:
            notes.append(f"- `{test_id}`:")
            for why, names in by_answer.items():
                where = (
                    "every release, both modes" if len(names) == len(columns) else ", ".join(names)
                )
                notes.append(f"    - {where}: {why.replace('|', '/')}")
    return out + ([""] + notes if notes else [])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m conformance.kafka_versions")
    parser.add_argument("action", choices=["run", "update", "render"])
    parser.add_argument("--releases", nargs="*", default=list(RELEASES))
    parser.add_argument("--modes", nargs="*", default=list(MODES))
    args = parser.parse_args(argv)
    if args.action == "run":
        DATA.write_text(json.dumps(run(args.releases, args.modes), separators=(",", ":")) + "\n")
    elif args.action == "update":
        updated = update(json.loads(DATA.read_text()))
        DATA.write_text(json.dumps(updated, separators=(",", ":")) + "\n")
    PAGE.write_text(render(json.loads(DATA.read_text())))


if __name__ == "__main__":
    main()
