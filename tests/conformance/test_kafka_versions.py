"""The whole conformance suite on every Kafka 4.x release, straight from Maven Central.

``--impl kafka:<version>`` runs Kafka's own ``UnifiedLog`` of the release's jars
(conformance/kafka_testee/, docs/conformance/kafka-testee.md). On every run: the newest
release in both checkpoint timings and the older four in the kafka timing (4.0 to 4.3 answer
the same in both, docs/conformance/kafka-versions.md); the older four in the reference timing
run with ``--runslow``. A difference from the goldens fails unless
``conformance/expected-failures/kafka-releases.txt`` (every release: documented Deviations
only) lists it, and a listed test that passes or fails otherwise fails too. Since issue 21 the
spec follows the releases, and where they disagree on what nobody reading the log observes its
rule is a MAY whose checks accept every release's answer (the cleaner's too: COMPACT-30 for
4.1+'s assert, COMPACT-31 for 4.4.0's high watermark), so no release has a list of its own. The
compaction scenarios run on Kafka's own cleaner of each release (4.0's Scala one included,
kafka_testee's ReleaseCleaner). Skipped, with the reason, without Java 17+ or Maven or when a
release's jars do not resolve (no network, not in ~/.m2).
"""

from __future__ import annotations

import pytest

from conformance.kafka_jars import KafkaJarsError, find_java, find_maven
from conformance.kafka_versions import LISTS, RELEASES, SHARED_LIST, differences, expected_for
from conformance.suite import run_suite
from conformance.transport import CannotStart, resolve_impl

NEWEST = RELEASES[-1]
MATRIX = [
    pytest.param(NEWEST, "kafka", id=f"{NEWEST}-kafka"),
    pytest.param(NEWEST, "reference", id=f"{NEWEST}-reference"),
    *(pytest.param(v, "kafka", id=f"{v}-kafka") for v in RELEASES[:-1]),
    *(
        pytest.param(v, "reference", id=f"{v}-reference", marks=pytest.mark.slow)
        for v in RELEASES[:-1]
    ),
]


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
    assert names <= {f"kafka-{v}.txt" for v in RELEASES}
    assert SHARED_LIST.is_file()


def test_every_list_loads_without_repeats():
    """expected_for refuses a malformed line and a release list that repeats the shared one."""
    for version in RELEASES:
        assert expected_for(version)


# the MAY rules whose second answer is a release's (4.1+ COMPACT-30, 4.4.0 COMPACT-31, ROLL-22,
# ROLL-23, INDEX-23): a harness that stops accepting it fails here
@pytest.mark.req("COMPACT-30", "COMPACT-31", "ROLL-22", "ROLL-23", "INDEX-23")
@pytest.mark.parametrize(("version", "mode"), MATRIX)
def test_the_suite_on_a_kafka_release(tools, version, mode):
    listed = expected_for(version)
    try:
        impl = resolve_impl(f"kafka:{version} --checkpoints={mode}")
    except CannotStart as exc:
        pytest.skip(str(exc))
    suite = run_suite(impl, expected=listed, timeout=60)
    assert suite.hello is not None and suite.hello.get("version") == version, suite.hello
    assert "compaction" in suite.hello["features"], suite.hello  # its clean is Kafka's cleaner
    found = differences(suite, shown=3)
    assert not found, (
        f"Kafka {version} --checkpoints={mode}: {suite.summary_line}; differences that are not "
        "listed Deviations:\n" + "\n".join(found)
    )
    assert suite.count("xfail") == len(listed)
