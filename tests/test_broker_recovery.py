"""conformance/broker_recovery.py's reading of a broker's restart and of our plan, on Kafka
4.4.0's own log lines (no Java needed; the comparison itself runs in test_broker_corpus.py)."""

from __future__ import annotations

from conformance import broker_recovery as br

SERVER_LOG = """\
[2026-11-27 16:24:30,559] INFO [LogLoader partition=__cluster_metadata-0, dir=/d/logs] \
Recovering unflushed segment 0. 0 recovered for __cluster_metadata-0. (org.apache.kafka.storage.internals.log.LogLoader)
[2026-11-27 16:24:32,369] INFO [LogLoader partition=rolling-0, dir=/d/logs] Recovering \
unflushed segment 0. 0 recovered for rolling-0. (org.apache.kafka.storage.internals.log.LogLoader)
[2026-11-27 16:24:32,382] INFO [LogLoader partition=rolling-0, dir=/d/logs] Recovering \
unflushed segment 1000. 0 recovered for rolling-0. (org.apache.kafka.storage.internals.log.LogLoader)
[2026-11-27 16:24:32,391] WARN [LogLoader partition=plain-0, dir=/d/logs] Found a corrupted \
index file corresponding to log file /d/logs/plain-0/00000000000000000200.log due to Corrupt \
index found, recovering segment and rebuilding index files... (org.apache.kafka.storage.internals.log.LogLoader)
[2026-11-27 16:24:32,392] ERROR [LogLoader partition=gzip-0, dir=/d/logs] Could not find \
offset index file corresponding to log file /d/logs/gzip-0/00000000000000000007.log, \
recovering segment and rebuilding index files... (org.apache.kafka.storage.internals.log.LogLoader)
[2026-11-27 16:24:32,400] INFO [LogLoader partition=plain-0, dir=/d/logs] Loading producer \
state till offset 200 (org.apache.kafka.storage.internals.log.UnifiedLog)
"""


def test_the_segments_kafka_recovered_are_read_from_its_log():
    assert br.kafka_recovered(SERVER_LOG) == {
        "__cluster_metadata-0": {0},
        "rolling-0": {0, 1000},
        "plain-0": {200},
        "gzip-0": {7},
    }


def _plan(*actions) -> dict:
    return {"logEndOffset": 10, "actions": list(actions)}


def test_the_plan_leaves_its_truncations_and_deletions():
    plan = _plan(
        {"action": "rebuild", "file": "00000000000000000000.index", "reason": "unflushed",
         "changed": False},
        {"action": "truncate", "file": "00000000000000000000.log", "position": 100},
        {"action": "delete", "file": "00000000000000000005.log"},
        {"action": "delete", "file": "00000000000000000005.index"},
    )  # fmt: skip
    assert br.planned_sizes({0: 150, 5: 80}, plan) == {0: 100}
    assert br.planned_recovered(plan) == {0: ("unflushed", False)}


def test_a_partition_compares_segments_sizes_and_recovery_point():
    plan = _plan(
        {"action": "rebuild", "file": "00000000000000000000.index", "reason": "unflushed",
         "changed": True},
        {"action": "truncate", "file": "00000000000000000000.log", "position": 100},
    )  # fmt: skip
    agree = br._compare_partition(plan, {0: 150}, {0: 100}, {0}, 10, clean=False)
    assert agree == []
    grown = br._compare_partition(plan, {0: 150}, {0: 170}, {0}, 10, clean=False)
    assert grown == ["segment 0: Kafka leaves 150 bytes, the plan 100"]
    missed = br._compare_partition(plan, {0: 150}, {0: 100}, set(), 9, clean=False)
    assert missed == [
        "the plan recovers segment 0 (unflushed), Kafka does not",
        "recovery point: Kafka 9, plan's log end offset 10",
    ]
    extra = br._compare_partition(_plan(), {0: 150}, {0: 150}, {0}, 10, clean=False)
    assert extra == ["Kafka recovered segment 0, the plan does not"]


def test_allowed_differences_are_the_documented_ones():
    """A corrupt index below the recovery point (LOAD-16's Version note), and after a clean
    shutdown an unchanged rebuild (a recovery tool loads as after an unclean one)."""
    corrupt = _plan({"action": "rebuild", "file": "00000000000000000000.index",
                     "reason": "corrupt_index", "changed": True})  # fmt: skip
    assert br._compare_partition(corrupt, {0: 1}, {0: 1}, set(), 10, clean=False) == []
    unchanged = _plan({"action": "rebuild", "file": "00000000000000000000.index",
                       "reason": "unflushed", "changed": False})  # fmt: skip
    assert br._compare_partition(unchanged, {0: 1}, {0: 1}, set(), 10, clean=True) == []
    assert br._compare_partition(unchanged, {0: 1}, {0: 1}, set(), 10, clean=False) != []
