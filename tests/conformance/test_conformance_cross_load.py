"""Cross-loading (issue 17 §3, conformance/crossload.py): a second implementation opens
every directory the one under test leaves, once the epilogue has closed it, and must load
the same log start and end offsets, segments and read bytes.

Run for the reference both ways against Apache Kafka's own storage code (the Kafka
testee, ../shared/kafka-oracle or $KLOGSPEC_KAFKA_ORACLE, Java 17+; skipped without
them): Kafka loads the reference's directories, and the reference loads Kafka's. Only
failures of category ``cross_load`` are judged here (the Kafka testee's other
disagreements are the suite's own business), against the expected-failure lists beside
this file, each entry a documented Deviation with its reason.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from conformance import expected as xf
from conformance.cli import conformance
from conformance.crossload import CATEGORY
from conformance.suite import SuiteResult, run_suite, select
from conformance.transport import resolve_impl

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
KAFKA_LOADS_REFERENCE = HERE / "cross-load.kafka-loads-reference.xfail"
REFERENCE_LOADS_KAFKA = HERE / "cross-load.reference-loads-kafka.xfail"
MIN_JAVA = 17


def kafka_oracle() -> tuple[str | None, str]:
    """``cmd:`` of the Kafka testee, or None and why it cannot run here."""
    configured = os.environ.get("KLOGSPEC_KAFKA_ORACLE")
    root = Path(configured) if configured else REPO_ROOT.parent / "shared" / "kafka-oracle"
    launcher = root / "run.sh"
    if not launcher.is_file():
        return None, (
            f"Kafka testee not found ({launcher}): set KLOGSPEC_KAFKA_ORACLE or place it at "
            "../shared/kafka-oracle"
        )
    java = shutil.which("java")
    if java is None:
        return None, f"the Kafka testee needs Java {MIN_JAVA}+: no java on PATH"
    shown = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    found = re.search(r'version "(\d+)', shown.stderr + shown.stdout)
    if found is None or int(found.group(1)) < MIN_JAVA:
        return None, f"the Kafka testee needs Java {MIN_JAVA}+, found {shown.stderr.strip()[:80]!r}"
    return "cmd:" + shlex.quote(str(launcher)), ""


@pytest.fixture(scope="module")
def kafka() -> str:
    command, why = kafka_oracle()
    if command is None:
        pytest.skip(why)
    return command


def cross_load_failures(suite: SuiteResult) -> dict[str, list[str]]:
    """test id -> the messages of its cross_load failures."""
    found: dict[str, list[str]] = {}
    for outcome in suite.outcomes:
        messages = [f.message for f in outcome.result.failures if f.category == CATEGORY]
        if messages:
            found[outcome.id] = messages
    return found


def judge(suite: SuiteResult, listed: Path) -> list[str]:
    """Every cross-load failure not listed, and every listed test without one."""
    expectations, problems = xf.load(listed)
    failures = cross_load_failures(suite)
    skipped = {o.id for o in suite.outcomes if o.status == "skipped"}
    for test_id, messages in sorted(failures.items()):
        if test_id not in expectations:
            problems.append(f"{test_id}: {messages[0]}")
    for test_id, expectation in sorted(expectations.items()):
        if test_id not in failures:
            why = "skipped" if test_id in skipped else "loads the same now: remove it"
            problems.append(f"{listed.name} line {expectation.line}: {test_id} {why}")
    return problems


def test_expected_cross_load_lists_name_a_deviation_for_each_entry():
    for listed in (KAFKA_LOADS_REFERENCE, REFERENCE_LOADS_KAFKA):
        expectations, problems = xf.load(listed)
        assert problems == []
        lines = listed.read_text(encoding="utf-8").splitlines()
        for expectation in expectations.values():
            line = lines[expectation.line - 1]
            assert expectation.category == CATEGORY, line
            assert "Deviation" in line.partition("#")[2], f"{listed.name}: no reason: {line}"


def test_the_reference_loads_its_own_directories():
    scenarios, _ = select(["index.*", "transactions.*", "recovery.*", "producer.snapshot.*"])
    suite = run_suite(
        resolve_impl("reference"),
        scenarios,
        cross_load=resolve_impl("reference", "subprocess"),
    )
    assert cross_load_failures(suite) == {}
    assert suite.count("passed") == len(scenarios)


def test_a_loader_bug_fails_the_cross_load_naming_both_sides():
    """A cross-loader whose clean load takes the LEO from the last batch's base offset."""
    scenarios, _ = select(["index.interval.*"])
    suite = run_suite(
        resolve_impl("reference"),
        scenarios,
        cross_load=resolve_impl("conformance.mutants:load_leo_from_last_base_offset"),
    )
    failures = cross_load_failures(suite)
    assert set(failures) == {s.id for s in scenarios}
    first = next(o for o in suite.outcomes if o.id == "index.interval.one-set.at").result
    assert first.category == CATEGORY
    assert first.failed_requirements == ["LOAD-24"]
    assert failures["index.interval.one-set.at"] == [
        "cross-load by conformance.mutants:load_leo_from_last_base_offset: log_end_offset "
        "is 11 there, 12 in the implementation under test's own reload"
    ]


def test_no_cross_load_without_a_finished_epilogue():
    """A directory that must not load (its last open is refused) is not cross-loaded."""
    scenarios, _ = select(["recovery.files.no-offset-prefix", "model.config.invalid.*"])
    suite = run_suite(
        resolve_impl("reference"),
        scenarios,
        cross_load=resolve_impl("conformance.mutants:load_leo_from_last_base_offset"),
    )
    assert suite.count("passed") == len(scenarios)


def test_cli_cross_load_option():
    result = CliRunner().invoke(
        conformance,
        ["--only", "index.files.*", "--cross-load", "reference", "--table", "none"],
    )
    assert result.exit_code == 0, result.output
    assert "cross-loaded by: reference" in result.output


def test_cli_cross_load_rejects_an_unknown_implementation():
    result = CliRunner().invoke(conformance, ["--cross-load", "no-such-impl", "--table", "none"])
    assert result.exit_code == 2
    assert "unknown implementation" in result.output


def test_kafka_loads_every_directory_the_reference_leaves(kafka):
    suite = run_suite(resolve_impl("reference"), cross_load=resolve_impl(kafka))
    assert judge(suite, KAFKA_LOADS_REFERENCE) == []


def test_the_reference_loads_every_directory_kafka_leaves(kafka):
    suite = run_suite(resolve_impl(kafka), cross_load=resolve_impl("reference"))
    assert judge(suite, REFERENCE_LOADS_KAFKA) == []
