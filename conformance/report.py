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
from .suite import SuiteResult, common_causes, requirement_rows

_STYLE = {
    "pass": "green",
    "fail": "bold red",
    "recommended": "yellow",
    "xfail": "cyan",
    "skipped": "dim",
    "not judged": "magenta",
}


def exit_status(suite: SuiteResult) -> int:
    return 0 if suite.ok else 1


def to_json(suite: SuiteResult, expected_file: str | None = None) -> dict:
    from .reference import package_version

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
        "suite": {"name": "klogspec-conformance", "version": package_version()},
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
        "causes": common_causes(suite),
        "expected_failures": {"file": expected_file, "problems": suite.list_problems},
    }
    return report


def json_bytes(report: dict) -> bytes:
    """The JSON report, checked against its schema."""
    problems = schema_errors(report, "report.schema.json")
    if problems:  # the harness's own bug
        raise RuntimeError(f"the report breaks its schema: {problems[:5]}")
    return (json.dumps(report, indent=1) + "\n").encode("utf-8")


def write_json(report: dict, path: str | Path) -> None:
    Path(path).write_bytes(json_bytes(report))


def write_junit(suite: SuiteResult, path: str | Path) -> None:
    Path(path).write_bytes(junit_bytes(suite))


def junit_bytes(suite: SuiteResult) -> bytes:
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
            element.text = "\n".join(f.render() for f in r.failures)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


TABLE_COLUMNS = (  # header, row key, justify: fits 80 columns with the longest rule IDs
    ("rule", "id", "left"),
    ("level", "level", "left"),
    ("tests", "scenarios", "right"),
    ("pass", "passed", "right"),
    ("fail", "failed", "right"),
    ("skip", "skipped", "right"),
    ("xfail", "expected_failures", "right"),
    ("n/j", "not_judged", "right"),  # not judged: the scenario stopped before the rule
    ("status", "status", "left"),
)


def print_table(suite: SuiteResult, console: Console, only_failing: bool = False) -> None:
    """The per-requirement table; ``only_failing``: the rows that need attention."""
    rows = [
        row
        for row in requirement_rows(suite)
        if not only_failing or row["status"] not in ("pass", "skipped", "not judged")
    ]
    if only_failing and not rows:
        return
    title = "Requirements that failed" if only_failing else "Requirements"
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left", pad_edge=False)
    for header, _, justify in TABLE_COLUMNS:
        table.add_column(header, justify=justify, no_wrap=True)
    for row in rows:
        cells = [str(row[key]) for _, key, _ in TABLE_COLUMNS]
        cells[-1] = f"[{_STYLE[row['status']]}]{row['status']}[/]"
        table.add_row(*cells)
    console.print(table)


def print_causes(suite: SuiteResult, console: Console, limit: int = 8) -> None:
    """Root causes that fail several tests, once each, before the failures one by one."""
    causes = common_causes(suite)
    if not causes:
        return
    console.print("Common causes:", markup=False)
    for group in causes[:limit]:
        tests = group["tests"]
        console.print(
            f"  {group['failures']} failures in {len(tests)} tests share: {group['cause']} "
            f"[{group['level']} {', '.join(group['requirements'])}] "
            f"(e.g. {', '.join(tests[:3])}{', ...' if len(tests) > 3 else ''})",
            markup=False,
        )
    if len(causes) > limit:
        console.print(f"  ... and {len(causes) - limit} more shared causes", markup=False)


def print_failures(suite: SuiteResult, console: Console, per_test: int = 5) -> None:
    for o in suite.outcomes:
        if o.status not in ("failed", "xpass", "xfail-mismatch", "xskip"):
            continue
        label = "RECOMMENDED" if o.failure_level == "SHOULD" else "FAIL"
        console.print(
            f"[bold red]{label}[/] {o.id} ({o.status})" + (f": {o.note}" if o.note else "")
        )
        for f in o.result.failures[:per_test]:
            console.print(f"    {f.render()}", markup=False)
        if len(o.result.failures) > per_test:
            console.print(
                f"    ... and {len(o.result.failures) - per_test} more (--report has them all)"
            )
