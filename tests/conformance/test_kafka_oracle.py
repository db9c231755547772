"""The whole conformance suite on Apache Kafka's own storage code.

The Kafka testee shipped beside the project (``../shared/kafka-oracle``, or the directory or
``run.sh`` that ``$KLOGSPEC_KAFKA_ORACLE`` names) runs Kafka's ``LogSegment``, indexes,
``LogValidator``, ``LogLoader``, producer state and checkpoint files at the commit the spec
cites. The suite must pass on it in both of its checkpoint timings (``--checkpoints=kafka``:
LogManager's; ``--checkpoints=reference``: the reference's), except for the tests listed in
``conformance/expected-failures/kafka-oracle.txt`` (both modes) and
``kafka-oracle-<mode>.txt`` (that mode only), each a documented Deviation of the spec.
Any other difference fails, and so does a listed test that passes or fails differently.
Skipped, with the reason, when the testee or a Java 17+ runtime is not there.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from conformance import expected as xf
from conformance.kafka_jars import java_major
from conformance.kafka_versions import differences
from conformance.suite import run_suite
from conformance.transport import resolve_impl

REPO = Path(__file__).resolve().parents[2]
LISTS = REPO / "conformance" / "expected-failures"
EXPECTED = LISTS / "kafka-oracle.txt"
DEVIATION_REASON = re.compile(r"#\s*([A-Z]+(?:-[A-Z]+)?-\d+) Deviation, spec/(\S+\.md): \S")
VERSION_NOTE_REASON = re.compile(r"#\s*([A-Z]+(?:-[A-Z]+)?-\d+) version note, spec/(\S+\.md): \S")
MODES = ("kafka", "reference")


def oracle_run_sh() -> Path:
    configured = os.environ.get("KLOGSPEC_KAFKA_ORACLE")
    where = Path(configured) if configured else REPO.parent / "shared" / "kafka-oracle"
    return where if where.is_file() else where / "run.sh"


@pytest.fixture(scope="module")
def oracle() -> Path:
    run_sh = oracle_run_sh()
    if not run_sh.is_file():
        pytest.skip(
            f"the Kafka testee is not here ({run_sh}): set KLOGSPEC_KAFKA_ORACLE or place it "
            "at ../shared/kafka-oracle"
        )
    java = shutil.which("java")
    major = java_major(java) if java else None
    if major is None or major < 17:
        pytest.skip(f"the Kafka testee needs Java 17+ (found {major or 'no java'})")
    return run_sh


def mode_list(mode: str) -> Path:
    """The expected failures of one checkpoint mode only."""
    return LISTS / f"kafka-oracle-{mode}.txt"


def expected_failures(path: Path = EXPECTED) -> dict[str, xf.Expectation]:
    found, problems = xf.load(path)
    assert not problems, problems
    return found


def expected_in_mode(mode: str) -> dict[str, xf.Expectation]:
    listed = expected_failures()
    if mode_list(mode).is_file():
        extra = expected_failures(mode_list(mode))
        assert not set(extra) & set(listed), f"{mode_list(mode).name} repeats kafka-oracle.txt"
        listed |= extra
    return listed


@pytest.mark.parametrize(
    "path",
    [
        EXPECTED,
        *(mode_list(m) for m in MODES if mode_list(m).is_file()),
        *sorted(LISTS.glob("kafka-oracle-compaction.txt")),  # test_kafka_oracle_compaction.py's
        *sorted(LISTS.glob("kafka-releases.txt")),  # the release testee's (test_kafka_versions.py)
        *sorted(LISTS.glob("kafka-[0-9]*.txt")),
    ],
    ids=lambda p: p.name,
)
def test_each_expected_failure_is_a_documented_deviation(path):
    """Every line names its failure category and a rule whose page holds a Deviation note;
    the files can never list a plain disagreement with Kafka."""
    rules = {
        e["id"]: e["page"]
        for e in yaml.safe_load((REPO / "spec" / "requirements.yaml").read_text())["requirements"]
    }
    listed = expected_failures(path)
    assert listed
    lines = path.read_text(encoding="utf-8").splitlines()
    for expectation in listed.values():
        line = lines[expectation.line - 1]
        assert expectation.category, f"line {expectation.line}: name the failure category"
        if path.name in (EXPECTED.name, "kafka-oracle-compaction.txt") or path.name[6].isdigit():
            # one release's (or the shared testee's snapshot's) own behaviour: the rule's
            # version note on its page says which Kafka does what (spec/README.md §1.5)
            noted = VERSION_NOTE_REASON.search(line)
            if noted:
                rule, page = noted.groups()
                text = (REPO / "spec" / page).read_text(encoding="utf-8")
                assert f"**Version note ({rule}):**" in text, line
                continue
        reason = DEVIATION_REASON.search(line)
        assert reason, f"line {expectation.line}: '# <RULE> Deviation, spec/<page>: why'"
        rule, page = reason.groups()
        assert rules.get(rule) == page, f"line {expectation.line}: {rule} is not on {page}"
        text = (REPO / "spec" / page).read_text(encoding="utf-8")
        assert f"**{rule}**" in text and "> **Deviation:**" in text, line


@pytest.mark.parametrize("mode", MODES)
def test_the_suite_agrees_with_kafka(oracle, mode):
    listed = expected_in_mode(mode)
    impl = resolve_impl(f"cmd:{oracle} --checkpoints={mode}")
    suite = run_suite(impl, expected=listed, timeout=30)
    assert suite.hello is not None, f"the Kafka testee did not answer hello ({impl.name})"
    found = differences(suite)
    assert not found, (
        f"--checkpoints={mode}: {suite.summary_line}; differences from Kafka's code that are "
        "not listed Deviations:\n" + "\n".join(found)
    )
    assert suite.count("xfail") == len(listed)
