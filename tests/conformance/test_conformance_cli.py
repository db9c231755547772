"""klogspec conformance: exit statuses, the summary line, the report, JUnit, expected-failure
files (the protobuf rule), SHOULD failures reported as recommended."""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from conformance import expected
from conformance.cli import conformance
from conformance.protocol import schema_errors

SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed, (\d+) skipped, (\d+) expected failures$")
READ_SIZE = "read.size.plain.*"


def run(*args: str):
    result = CliRunner().invoke(conformance, list(args), catch_exceptions=False)
    last = result.output.strip().splitlines()[-1] if result.output.strip() else ""
    return result, last


def test_reference_passes_with_report_and_junit(tmp_path):
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    result, last = run(
        "--only", "roll.size.*.*", "--report", str(report), "--junit", str(junit), "--table", "all"
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert SUMMARY.match(last).groups() == ("9", "0", "0", "0")
    data = json.loads(report.read_text())
    assert schema_errors(data, "report.schema.json") == []
    assert data["summary"]["line"] == last
    rows = {row["id"]: row for row in data["requirements"]}
    assert rows["ROLL-2"]["status"] == "pass" and rows["ROLL-2"]["scenarios"] == 9
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "9" and suite.get("failures") == "0"
    assert "ROLL-2" in result.output  # the per-requirement table


def test_a_must_failure_fails_the_run(tmp_path):
    report = tmp_path / "r.json"
    result, last = run(
        "--impl",
        "conformance.mutants:read_ignores_max_bytes",
        "--only",
        READ_SIZE,
        "--report",
        str(report),
    )
    assert result.exit_code == 1
    passed, failed, skipped, xfail = map(int, SUMMARY.match(last).groups())
    assert failed > 0 and passed + failed == 9
    data = json.loads(report.read_text())
    failing = [t for t in data["tests"] if t["status"] == "failed"]
    assert all("READ-14" in t["failed_requirements"] for t in failing)
    assert {row["id"]: row["status"] for row in data["requirements"]}["READ-14"] == "fail"


def test_should_failures_are_recommended_and_do_not_fail_the_run():
    result, last = run(
        "--impl",
        "conformance.mutants:eager_index_files",
        "--only",
        "roll.lazy-indexes",
        "--table",
        "failing",
    )
    assert result.exit_code == 0, result.output
    assert "RECOMMENDED roll.lazy-indexes" in result.output
    assert "recommended (SHOULD) failures do not fail the run" in result.output
    assert SUMMARY.match(last).groups() == ("0", "1", "0", "0")


def _failing_list(tmp_path, categories=True):
    path = tmp_path / "expected.txt"
    result, _ = run(
        "--impl", "conformance.mutants:read_ignores_max_bytes", "--only", READ_SIZE,
        "--write-expected-failures", str(path), "--table", "none",
    )  # fmt: skip
    assert result.exit_code == 1
    if not categories:
        path.write_text(
            "\n".join(
                line.split()[-1]
                for line in path.read_text().splitlines()
                if not line.startswith("#")
            )
        )
    return path


@pytest.mark.parametrize("categories", [True, False])
def test_expected_failures_turn_the_run_green(tmp_path, categories):
    path = _failing_list(tmp_path, categories)
    result, last = run(
        "--impl",
        "conformance.mutants:read_ignores_max_bytes",
        "--only",
        READ_SIZE,
        "--expected-failures",
        str(path),
    )
    assert result.exit_code == 0, result.output
    passed, failed, skipped, xfail = map(int, SUMMARY.match(last).groups())
    assert failed == 0 and xfail > 0


def test_a_listed_test_that_passes_fails_the_run(tmp_path):
    path = _failing_list(tmp_path)
    result, last = run("--only", READ_SIZE, "--expected-failures", str(path))
    assert result.exit_code == 1
    assert "listed as an expected failure but passed" in result.output


def test_a_listed_test_failing_differently_fails_the_run(tmp_path):
    path = tmp_path / "expected.txt"
    path.write_text("# wrong category\ncrashed: read.size.plain.1-above\n")
    result, _ = run(
        "--impl",
        "conformance.mutants:read_ignores_max_bytes",
        "--only",
        "read.size.plain.1-above",
        "--expected-failures",
        str(path),
    )
    assert result.exit_code == 1
    assert "expected to fail with crashed" in result.output


def test_a_stale_listed_id_fails_the_run(tmp_path):
    path = tmp_path / "expected.txt"
    path.write_text("no.such.test\n")
    result, _ = run("--only", "roll.size.one-before.at", "--expected-failures", str(path))
    assert result.exit_code == 1
    assert "no such test" in result.output


def test_expected_failure_file_format():
    found, problems = expected.parse(
        "a.b\nwrong_result: c.d  # why\nunexpected_error:RECORD_TOO_LARGE: e.f\n\n# only a comment\nbad line here\na.b\n"
    )
    assert found["c.d"].category == "wrong_result"
    assert found["e.f"].category == "unexpected_error:RECORD_TOO_LARGE"
    assert found["a.b"].category is None
    assert len(problems) == 2
    assert expected.judge("failed", "unexpected_error:RECORD_TOO_LARGE", found["e.f"]) == (
        "xfail",
        None,
    )
    assert expected.judge("skipped", None, found["a.b"])[0] == "xskip"


def test_unknown_test_id_is_a_usage_error():
    result, _ = run("--only", "no.such.test")
    assert result.exit_code == 2


def test_unknown_implementation_is_a_usage_error():
    result, _ = run("--impl", "nonsense")
    assert result.exit_code == 2


def test_subprocess_command_and_json_output():
    command = f"cmd:{sys.executable} -P -m conformance.testee"
    result = CliRunner().invoke(
        conformance,
        ["--impl", command, "--only", "read.range.*", "--json"],
        env={"PYTHONPATH": _pythonpath()},
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["implementation"]["transport"] == "subprocess"
    assert data["summary"]["failed"] == 0 and data["summary"]["passed"] == 3


def test_unclaimed_features_are_skipped_with_the_reason():
    result, last = run(
        "--impl",
        f"{__name__}:no_features",
        "--only",
        "append.preallocate.lifecycle",
        "--only",
        "model.create.empty-dir",
    )
    assert result.exit_code == 0, result.output
    assert SUMMARY.match(last).groups() == ("1", "0", "1", "0")
    data_result = CliRunner().invoke(
        conformance,
        ["--impl", f"{__name__}:no_features", "--only", "append.preallocate.lifecycle", "--json"],
    )
    test = json.loads(data_result.output)["tests"][0]
    assert test["status"] == "skipped" and "preallocate" in test["skip_reason"]


def test_list_and_check_commands():
    listed = CliRunner().invoke(conformance, ["list"])
    assert listed.exit_code == 0 and "roll.size.one-before.at\tMUST" in listed.output
    exported = CliRunner().invoke(conformance, ["list", "--json"])
    first = json.loads(exported.output.splitlines()[0])
    assert first["steps"] and first["level"] in ("MUST", "SHOULD")


def no_features():
    """The reference, claiming no optional feature."""
    from conformance.reference import ReferenceAdapter

    class Plain(ReferenceAdapter):
        def hello(self, *, now_ms, **_):
            return {**super().hello(now_ms=now_ms), "features": []}

    return Plain()


def _pythonpath() -> str:
    from conformance.transport import python_env

    return python_env()["PYTHONPATH"]


def test_commands_are_registered_in_pyproject():
    """klogspec finds conformance, golden and testee through the klogspec.commands entry
    points, and the reference through klogspec.implementations."""
    import tomllib
    from pathlib import Path

    from conformance.requirements import PACKAGE_ROOT
    from conformance.transport import load_factory

    project = tomllib.loads((Path(PACKAGE_ROOT) / "pyproject.toml").read_text())["project"]
    commands = project["entry-points"]["klogspec.commands"]
    for name in ("conformance", "golden", "testee"):
        assert load_factory(commands[name]).name == name
    assert callable(load_factory(project["entry-points"]["klogspec.implementations"]["reference"]))
