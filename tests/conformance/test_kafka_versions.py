"""The whole conformance suite on every Kafka 4.x release, straight from Maven Central.

``--impl kafka:<version>`` runs Kafka's own ``UnifiedLog`` of the release's jars
(conformance/kafka_testee/, docs/conformance/kafka-testee.md). The newest patch of each minor
runs in both checkpoint timings; a difference from the goldens fails unless
``conformance/expected-failures/kafka-releases.txt`` (every release) or
``kafka-<version>.txt`` (that release) lists it as a documented Deviation, and a listed test
that passes or fails otherwise fails too. For now every run is behind ``--runslow``
(the releases' differences are not triaged yet); the plan is the newest release in both modes
on every run and the older ones behind ``--runslow`` in the kafka mode. Skipped, with the reason, without Java 17+ or Maven or when
a release's jars do not resolve (no network and not in ~/.m2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import expected as xf
from conformance.kafka_jars import KafkaJarsError, find_java, find_maven
from conformance.suite import FAILED_STATUSES, run_suite
from conformance.transport import CannotStart, resolve_impl

LISTS = Path(__file__).resolve().parents[2] / "conformance" / "expected-failures"
RELEASES = ("4.0.2", "4.1.2", "4.2.2", "4.3.1", "4.4.0")  # the newest patch of each minor
NEWEST = RELEASES[-1]
SHARED = LISTS / "kafka-releases.txt"
# Until the releases' differences are triaged (fixed in the adapter or listed as Deviations), every
# run is behind --runslow; then the newest release runs in both modes on every run.
MATRIX = [
    pytest.param(NEWEST, "kafka", id=f"{NEWEST}-kafka", marks=pytest.mark.slow),
    pytest.param(NEWEST, "reference", id=f"{NEWEST}-reference", marks=pytest.mark.slow),
    *(pytest.param(v, "kafka", id=f"{v}-kafka", marks=pytest.mark.slow) for v in RELEASES[:-1]),
]


def expected_failures(path: Path) -> dict[str, xf.Expectation]:
    found, problems = xf.load(path)
    assert not problems, problems
    return found


def release_list(version: str):
    return LISTS / f"kafka-{version}.txt"


def expected_for(version: str) -> dict[str, xf.Expectation]:
    listed = expected_failures(SHARED)
    if release_list(version).is_file():
        extra = expected_failures(release_list(version))
        assert not set(extra) & set(listed), f"{release_list(version).name} repeats {SHARED.name}"
        listed |= extra
    return listed


@pytest.fixture(scope="module")
def tools():
    try:
        find_java()
        find_maven()
    except KafkaJarsError as exc:
        pytest.skip(str(exc))


def test_the_releases_are_the_newest_patch_of_each_minor():
    minors = [v.rsplit(".", 1)[0] for v in RELEASES]
    assert minors == ["4.0", "4.1", "4.2", "4.3", "4.4"]


def test_every_release_list_names_a_release():
    names = {p.name for p in LISTS.glob("kafka-[0-9]*.txt")}
    assert names <= {release_list(v).name for v in RELEASES}


@pytest.mark.parametrize(("version", "mode"), MATRIX)
def test_the_suite_on_a_kafka_release(tools, version, mode):
    listed = expected_for(version)
    try:
        impl = resolve_impl(f"kafka:{version} --checkpoints={mode}")
    except CannotStart as exc:
        pytest.skip(str(exc))
    suite = run_suite(impl, expected=listed, timeout=60)
    assert suite.hello is not None and version in suite.hello.get("version", ""), suite.hello
    differences = [
        f"{o.id}: {o.status}"
        + (f" ({o.note})" if o.note else "")
        + "".join(f"\n    {f.message}" for f in o.result.failures[:3])
        for o in suite.outcomes
        if o.status in FAILED_STATUSES
    ]
    assert not differences and not suite.list_problems, (
        f"Kafka {version} --checkpoints={mode}: {suite.summary_line}; differences that are not "
        "listed Deviations:\n" + "\n".join(differences + suite.list_problems)
    )
    assert suite.count("xfail") == len(listed)
