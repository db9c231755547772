"""The compaction scenarios on Apache Kafka's own log cleaner (spec/behaviour/compaction.md).

The Kafka testee beside the project answers ``clean`` with Kafka's ``SkimpyOffsetMap``,
``MemoryRecords.filterTo``, ``LocalLog.replaceSegments`` and a line-by-line mirror of the Scala
cleaner; its ``hello`` does not name the feature ``compaction``, so test_kafka_oracle.py skips
these scenarios. Here they run through claiming_testee.py, which adds the claim and changes
nothing else, in both checkpoint modes: every one must pass, goldens compared byte for byte,
but for the snapshot's answers that no release gives any more (kafka-oracle-compaction.txt).
Skipped, with the reason, where test_kafka_oracle.py skips."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conformance.suite import FAILED_STATUSES, run_suite, select
from conformance.transport import ImplSpec, python_env

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from test_kafka_oracle import LISTS, MODES, expected_failures, oracle  # noqa: E402, F401

COMPACTION_LIST = LISTS / "kafka-oracle-compaction.txt"


@pytest.mark.parametrize("mode", MODES)
def test_compaction_agrees_with_kafkas_cleaner(oracle, mode):  # noqa: F811
    scenarios, unknown = select(["compaction.*"])
    assert scenarios and not unknown
    command = [
        sys.executable, str(HERE / "claiming_testee.py"), "compaction", "--",
        str(oracle), f"--checkpoints={mode}",
    ]  # fmt: skip
    impl = ImplSpec(
        f"kafka-oracle claiming compaction ({mode})",
        "subprocess",
        command=command,
        env=python_env(),
    )
    listed = expected_failures(COMPACTION_LIST)  # the snapshot's answers (version notes)
    suite = run_suite(impl, scenarios, expected=listed, timeout=30)
    differences = [
        f"{o.id}: {o.status}" + "".join(f"\n    {f.message}" for f in o.result.failures[:3])
        for o in suite.outcomes
        if o.status in FAILED_STATUSES
    ]
    assert not differences, "\n".join(differences)
    assert suite.count("passed", "xfail") == len(scenarios), suite.summary_line
    assert suite.count("xfail") == len(listed)
