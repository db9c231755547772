"""The compaction scenarios on Apache Kafka's own log cleaner (spec/behaviour/compaction.md).

The Kafka testee beside the project answers ``clean`` with Kafka's ``SkimpyOffsetMap``,
``MemoryRecords.filterTo``, ``LocalLog.replaceSegments`` and a line-by-line mirror of the Scala
cleaner; its ``hello`` does not name the feature ``compaction``, so test_kafka_oracle.py skips
these scenarios. Here they run through claiming_testee.py, which adds the claim and changes
nothing else, in both checkpoint modes: every one must pass, goldens compared byte for byte, but
the scenarios of COMPACT-29 (legacy entries written as v2 since Kafka 4.0), which must fail.
Skipped, with the reason, where test_kafka_oracle.py skips."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conformance.suite import FAILED_STATUSES, run_suite, select
from conformance.transport import ImplSpec, _python_env

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from test_kafka_oracle import MODES, oracle  # noqa: E402, F401  (the fixture and its skips)


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
        env=_python_env(),
    )
    suite = run_suite(impl, scenarios, timeout=30)
    # COMPACT-29's version note: the snapshot (1eb7644) predates KIP-724 and copies legacy
    # entries in their own magic, where every 4.x release writes v2; those scenarios must fail
    before_kip_724 = {s.id for s in scenarios if "COMPACT-29" in s.requirements}
    assert before_kip_724
    differences = [
        f"{o.id}: {o.status}" + "".join(f"\n    {f.message}" for f in o.result.failures[:3])
        for o in suite.outcomes
        if (o.status in FAILED_STATUSES) != (o.id in before_kip_724)
    ]
    assert not differences, "\n".join(differences)
    assert suite.count("passed") == len(scenarios) - len(before_kip_724), suite.summary_line
