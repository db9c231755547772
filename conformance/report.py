"""What a run leaves behind: the JSON report (schemas/report.schema.json), JUnit XML,
the per-requirement table and the closing summary line."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from .protocol import schema_errors
from .suite import SuiteResult, requirement_rows

_STYLE = {
    "pass": "green",
    "fail": "bold red",
    "recommended": "yellow",
    "xfail": "cyan",
    "skipped": "dim",
}


def exit_status(suite: SuiteResult) -> int:
    return 0 if suite.ok else 1


def to_json(suite: SuiteResult, expected_file: str | None = None) -> dict:
    from .reference import _version

    tests = []
    for o in suite.outcomes:
        r = o.result
        test = {
            "id": o.id,
            "title": r.scenario.title,
            "requirements": r.scenario.requirements,
            "level": r.scenario.level,
            "status": o.status,
            "duration_s": round(r.duration_s, 4),
            "failures": [f.to_data() for f in r.failures],
        }
        if o.failure_level:
            test["failure_level"] = o.failure_level
        if r.category:
            test["category"] = r.category
            test["failed_requirements"] = r.failed_requirements
        if r.skip_reason:
            test["skip_reason"] = r.skip_reason
        if o.note:
            test["note"] = o.note
        tests.append(test)
    report = {
        "suite": {"name": "klogspec-conformance", "version": _version()},
        "implementation": {
            "spec": suite.impl.label,
            "transport": suite.impl.transport,
            "hello": suite.hello,
        },
        "summary": {
            "passed": suite.count("passed"),
            "failed": suite.count("failed", "xpass", "xfail-mismatch", "xskip"),
            "skipped": suite.count("skipped"),
            "expected_failures": suite.count("xfail"),
            "must_failures": len(suite.must_failures),
            "should_failures": len(suite.should_failures),
            "duration_s": round(suite.duration_s, 3),
            "line": suite.summary_line,
            "exit_status": exit_status(suite),
        },
        "tests": tests,
        "requirements": requirement_rows(suite),
        "expected_failures": {"file": expected_file, "problems": suite.list_problems},
    }
    return report


def write_json(report: dict, path: str | Path) -> None:
    problems = schema_errors(report, "report.schema.json")
    if problems:  # the harness's own bug
        raise RuntimeError(f"the report breaks its schema: {problems[:5]}")
    Path(path).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


def write_junit(suite: SuiteResult, path: str | Path) -> None:
    """JUnit XML: one testcase per scenario; expected failures and skips as skipped; a
    SHOULD-only failure is a failure of type ``recommended``."""
    failures = suite.count("failed", "xpass", "xfail-mismatch", "xskip")
    skipped = suite.count("skipped", "xfail")
    root = ET.Element("testsuites")
    ts = ET.SubElement(
        root,
        "testsuite",
        name="klogspec-conformance",
        tests=str(len(suite.outcomes)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
        time=f"{suite.duration_s:.3f}",
    )
    for o in suite.outcomes:
        r = o.result
        page = r.scenario.id.split(".", 1)[0]
        case = ET.SubElement(
            ts, "testcase", classname=f"klogspec.{page}", name=o.id, time=f"{r.duration_s:.4f}"
        )
        ET.SubElement(case, "properties").extend(
            ET.Element("property", name="requirement", value=req) for req in r.scenario.requirements
        )
        if o.status == "skipped":
            ET.SubElement(case, "skipped", message=r.skip_reason or "")
        elif o.status == "xfail":
            ET.SubElement(case, "skipped", message=f"expected failure: {r.category}")
        elif o.status in ("failed", "xpass", "xfail-mismatch", "xskip"):
            kind = "recommended" if o.failure_level == "SHOULD" else (r.category or o.status)
            message = o.note or (r.failures[0].message if r.failures else o.status)
            element = ET.SubElement(case, "failure", type=kind, message=message[:500])
            element.text = "\n".join(
                f"[{f.level} {' '.join(f.requirements)}] {f.category}: {f.message}"
                for f in r.failures
            )
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def print_table(suite: SuiteResult, console: Console, only_failing: bool = False) -> None:
    table = Table(box=box.SIMPLE_HEAD, title="Requirements", title_justify="left")
    for column in ("rule", "level", "scenarios", "passed", "failed", "skipped", "xfail", "status"):
        justify = "left" if column in ("rule", "level", "status") else "right"
        table.add_column(column, justify=justify, no_wrap=True)
    for row in requirement_rows(suite):
        if only_failing and row["status"] in ("pass", "skipped"):
            continue
        table.add_row(
            row["id"], row["level"], str(row["scenarios"]), str(row["passed"]), str(row["failed"]),
            str(row["skipped"]), str(row["expected_failures"]),
            f"[{_STYLE[row['status']]}]{row['status']}[/]",
        )  # fmt: skip
    console.print(table)


def print_failures(suite: SuiteResult, console: Console) -> None:
    for o in suite.outcomes:
        if o.status not in ("failed", "xpass", "xfail-mismatch", "xskip"):
            continue
        label = "RECOMMENDED" if o.failure_level == "SHOULD" else "FAIL"
        console.print(
            f"[bold red]{label}[/] {o.id} ({o.status})" + (f": {o.note}" if o.note else "")
        )
        for f in o.result.failures[:5]:
            console.print(
                f"    [{f.level} {', '.join(f.requirements)}] {f.category}: {f.message}",
                markup=False,
            )
        if len(o.result.failures) > 5:
            console.print(f"    ... and {len(o.result.failures) - 5} more")
