"""The real-broker corpus (../shared/kafka-corpus, see its SOURCES.md) read end to end.

Every ``.log`` and KRaft ``<20 digits>-<10 digits>.checkpoint`` file of each of the 14 sets is
walked with ``iter_file_batches``; every batch gets ``ensure_valid()`` and ``records()``. The
per-file numbers asserted here are SOURCES.md's tables, restated as data (path, bytes, batches,
magic and codec counts, offset range, record count, timestamp range, control record types,
transactional batches, producer ids). SOURCES.md counts a legacy compressed wrapper as one
record; ``deep`` is the number of inner messages we decode from those files.

The corpus files are never copied into the repository: the ``corpus`` fixture points at them
and skips with a reason when they are absent.
"""

from __future__ import annotations

import datetime
import functools
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from reference_impl.records import (
    ControlRecordType,
    LegacyBatch,
    RecordBatch,
    decompress,
    iter_batches,
    iter_file_batches,
    parse_control_key,
    parse_end_txn_marker,
)
from reference_impl.records.compression import XERIAL_MAGIC

pytestmark = pytest.mark.corpus

CHECKPOINT_NAME = re.compile(r"^\d{20}-\d{10}\.checkpoint$")
CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


@dataclass(frozen=True)
class F:
    """One row of a SOURCES.md per-set table."""

    size: int
    batches: int
    magic: dict[int, int]
    codecs: dict[str, int]
    offsets: tuple[int, int]  # first batch's (shallow) offset .. last batch's last offset
    records: int  # as SOURCES.md counts them: a legacy wrapper is one
    time: tuple[str, str] | None = None  # UTC dates of the smallest and largest record timestamp
    control: dict[str, int] = field(default_factory=dict)  # control batches by record type
    txn: int = 0  # transactional batches
    pids: tuple = ()  # the first distinct producer ids, sorted; ... = "and more"
    deep: int | None = None  # records decoded, where that differs from ``records``


# fmt: off
EXPECTED: dict[str, dict[str, F]] = {
    "kafkalite-v0": {
        "tests/test-data/fs-data/hamlet-gzip-0/00000000000000000000.log": F(143118, 22, {0: 22}, {"gzip": 22}, (253, 5381), 22),
        "tests/test-data/fs-data/hamlet-none-0/00000000000000000000.log": F(309516, 5382, {0: 5382}, {"none": 5382}, (0, 5381), 5382),
        "tests/test-data/fs-data/hamlet-snappy-0/00000000000000000000.log": F(193332, 22, {0: 22}, {"snappy": 22}, (253, 5381), 22),
        "tests/test-data/fs-data/numbers-0/00000000000000000000.log": F(342100, 11394, {0: 11394}, {"none": 11394}, (0, 11393), 11394),
    },
    "kafka-0.10.1-magic1": {
        "tmp/kafka-logs/TEST-TOPIC-0/00000000000000000000.log": F(1315082, 21211, {1: 21211}, {"none": 21211}, (0, 21210), 21211, time=("2016-11-18", "2016-11-18")),
        "tmp/kafka-logs/__consumer_offsets-40/00000000000000000000.log": F(70141, 860, {1: 860}, {"none": 860}, (0, 859), 860, time=("2016-11-18", "2016-11-18")),
        "tmp/kafka-logs/foo-0/00000000000000000000.log": F(8730, 204, {1: 204}, {"none": 204}, (0, 203), 204, time=("2016-11-18", "2016-11-18")),
        "tmp/kafka-logs/topic1-0/00000000000000000000.log": F(215, 5, {1: 5}, {"none": 5}, (0, 4), 5, time=("2016-11-18", "2016-11-18")),
    },
    "kafka-2018-offsets-index": {
        "kafka-logs/__consumer_offsets-28/00000000000000000000.log": F(1066451, 8202, {2: 8202}, {"none": 8202}, (0, 8201), 8202, time=("2018-08-15", "2018-08-15")),
        "kafka-logs/debug_topic-0/00000000000000000000.log": F(883, 3, {2: 3}, {"none": 3}, (0, 39), 40, time=("2018-08-15", "2018-08-15")),
    },
    "snappy-v2": {
        "kafka-logs/__consumer_offsets-16/00000000000000000000.log": F(15526, 69, {2: 69}, {"none": 69}, (0, 68), 69, time=("2022-01-09", "2022-01-09")),
        "kafka-logs/some-topic-0/00000000000000000000.log": F(1989, 9, {2: 9}, {"snappy": 9}, (0, 8), 9, time=("2022-01-09", "2022-01-09")),
    },
    "kafka-2.7-compacted-offsets": {
        "kafka-logs/__consumer_offsets-17/00000000000000000000.log": F(390, 1, {2: 1}, {"none": 1}, (0, 0), 1, time=("2022-12-03", "2022-12-03")),
        "kafka-logs/__consumer_offsets-17/00000000000000000001.log": F(221, 2, {2: 2}, {"none": 2}, (1, 2), 2, time=("2023-06-03", "2023-06-03")),
        "kafka-logs/__consumer_offsets-28/00000000000000000000.log": F(127, 1, {2: 1}, {"none": 1}, (1, 1), 1, time=("2022-08-09", "2022-08-09")),
        "kafka-logs/__consumer_offsets-28/00000000000000000002.log": F(94, 1, {2: 1}, {"none": 1}, (2, 2), 1, time=("2022-08-23", "2022-08-23")),
        "kafka-logs/__consumer_offsets-33/00000000000000000000.log": F(611, 3, {2: 3}, {"none": 3}, (0, 2), 3, time=("2022-12-03", "2022-12-03")),
        "kafka-logs/__consumer_offsets-39/00000000000000000000.log": F(361, 3, {2: 3}, {"none": 3}, (4, 17), 3, time=("2023-06-03", "2023-06-03")),
        "kafka-logs/__consumer_offsets-39/00000000000000000018.log": F(148, 1, {2: 1}, {"none": 1}, (18, 19), 2, time=("2023-06-11", "2023-06-11")),
        "kafka-logs/__consumer_offsets-8/00000000000000000000.log": F(610, 3, {2: 3}, {"none": 3}, (0, 2), 3, time=("2022-08-23", "2022-08-23")),
    },
    "kafka-3.x-3brokers-multiseg": {
        "tmp/kafka-logs-1/invoice-0/00000000000000000000.log": F(999252, 380, {2: 380}, {"none": 380}, (0, 30625), 30626, time=("2024-06-15", "2024-06-15")),
        "tmp/kafka-logs-1/invoice-0/00000000000000030626.log": F(989360, 64, {2: 64}, {"none": 64}, (30626, 60610), 29985, time=("2024-06-15", "2024-06-15")),
        "tmp/kafka-logs-1/invoice-0/00000000000000060611.log": F(998265, 61, {2: 61}, {"none": 61}, (60611, 90866), 30256, time=("2024-06-15", "2024-06-15")),
        "tmp/kafka-logs-1/invoice-0/00000000000000090867.log": F(311092, 20, {2: 20}, {"none": 20}, (90867, 100293), 9427, time=("2024-06-15", "2024-06-15")),
        "tmp/kafka-logs-2/invoice-0/00000000000000000000.log": F(999252, 380, {2: 380}, {"none": 380}, (0, 30625), 30626, time=("2024-06-15", "2024-06-15")),
        "tmp/kafka-logs-2/invoice-0/00000000000000030626.log": F(989360, 64, {2: 64}, {"none": 64}, (30626, 60610), 29985, time=("2024-06-15", "2024-06-15")),
        "tmp/kafka-logs-2/invoice-0/00000000000000060611.log": F(998265, 61, {2: 61}, {"none": 61}, (60611, 90866), 30256, time=("2024-06-15", "2024-06-15")),
        "tmp/kafka-logs-2/invoice-0/00000000000000090867.log": F(311092, 20, {2: 20}, {"none": 20}, (90867, 100293), 9427, time=("2024-06-15", "2024-06-15")),
        "tmp/kafka-logs/invoice-0/00000000000000000000.log": F(999252, 380, {2: 380}, {"none": 380}, (0, 30625), 30626, time=("2024-06-15", "2024-06-15")),
        "tmp/kafka-logs/invoice-0/00000000000000030626.log": F(989360, 64, {2: 64}, {"none": 64}, (30626, 60610), 29985, time=("2024-06-15", "2024-06-15")),
        "tmp/kafka-logs/invoice-0/00000000000000060611.log": F(998265, 61, {2: 61}, {"none": 61}, (60611, 90866), 30256, time=("2024-06-15", "2024-06-15")),
        "tmp/kafka-logs/invoice-0/00000000000000090867.log": F(311092, 20, {2: 20}, {"none": 20}, (90867, 100293), 9427, time=("2024-06-15", "2024-06-15")),
    },
    "lz4-confluent-metrics": {
        "kafka/data/__confluent.support.metrics-0/00000000000000000000.log": F(6315, 5, {2: 5}, {"none": 5}, (0, 4), 5, time=("2024-04-27", "2024-04-27")),
        "kafka/data/_confluent-metrics-11/00000000000000000000.log": F(150242, 322, {2: 322}, {"lz4": 322}, (0, 322), 323, time=("2024-04-27", "2024-04-27")),
        "kafka/data/_confluent-metrics-4/00000000000000000000.log": F(150125, 322, {2: 322}, {"lz4": 322}, (0, 322), 323, time=("2024-04-27", "2024-04-27")),
    },
    "gzip-v2-kafkajs": {
        "kafka-data/topic-logx-001-0/00000000000000000000.log": F(10422, 17, {2: 17}, {"gzip": 17}, (0, 16), 17, time=("2024-09-14", "2024-09-17")),
        "kafka-data/topic-logx-001-1/00000000000000000000.log": F(12936, 16, {2: 16}, {"gzip": 16}, (0, 15), 16, time=("2024-09-14", "2024-09-17")),
        "kafka-data/topic-logx-001-2/00000000000000000000.log": F(10475, 17, {2: 17}, {"gzip": 17}, (0, 16), 17, time=("2024-09-14", "2024-09-17")),
    },
    "gzip-idempotent-epochs": {
        "data/lsx1-0/00000000000000000000.log": F(1398, 14, {2: 14}, {"none": 12, "gzip": 2}, (0, 13), 14, time=("2024-07-15", "2024-07-15"), pids=(0, 1, 2, 3, 4, ...)),
    },
    "kraft-3.5.0-and-ksql-txn": {
        "kafka_2.13-3.5.0/kraft-combined-logs/__cluster_metadata-0/00000000000000000000.log": F(2053794, 28511, {2: 28511}, {"none": 28511}, (0, 28520), 28521, time=("2023-08-14", "2023-08-16"), control={"LEADER_CHANGE": 5}),
        "kafka_2.13-3.5.0/kraft-combined-logs/__cluster_metadata-0/00000000000000017073-0000000004.checkpoint": F(352, 3, {2: 3}, {"none": 3}, (0, 4), 5, time=("2023-08-16", "2023-08-16"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka_data/CURRENTLOCATION-0/00000000000000000000.log": F(630, 6, {2: 6}, {"none": 6}, (0, 5), 6, time=("2023-08-17", "2023-08-17"), pids=(1,)),
        "kafka_data/__cluster_metadata-0/00000000000000000000.log": F(1186751, 16210, {2: 16210}, {"none": 16210}, (0, 16593), 16594, time=("2023-08-17", "2023-08-17"), control={"LEADER_CHANGE": 1}),
        "kafka_data/__cluster_metadata-0/00000000000000007334-0000000001.checkpoint": F(3454, 3, {2: 3}, {"none": 3}, (0, 60), 61, time=("2023-08-17", "2023-08-17"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka_data/__cluster_metadata-0/00000000000000014707-0000000001.checkpoint": F(9243, 3, {2: 3}, {"none": 3}, (0, 162), 163, time=("2023-08-17", "2023-08-17"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka_data/_confluent-ksql-default__command_topic-0/00000000000000000000.log": F(29110, 8, {2: 8}, {"none": 8}, (0, 7), 8, time=("2023-08-17", "2023-08-17"), control={"COMMIT": 4}, txn=8, pids=(0,)),
        "kafka_data/_confluent-ksql-default_query_CTAS_CURRENTLOCATION_3-Aggregate-GroupBy-repartition-0/00000000000000000000.log": F(858, 6, {2: 6}, {"none": 6}, (0, 5), 6, time=("2023-08-17", "2023-08-17"), pids=(2,)),
        "kafka_data/_confluent-ksql-default_query_CTAS_RIDERSNEARMOUNTAINVIEW_5-Aggregate-GroupBy-repartition-0/00000000000000000000.log": F(930, 6, {2: 6}, {"none": 6}, (0, 5), 6, time=("2023-08-17", "2023-08-17"), pids=(5,)),
        "kafka_data/_kafka-connect-configs-0/00000000000000000000.log": F(195, 1, {2: 1}, {"none": 1}, (0, 0), 1, time=("2023-08-17", "2023-08-17")),
        "kafka_data/_schemas-0/00000000000000000000.log": F(384, 4, {2: 4}, {"none": 4}, (0, 3), 4, time=("2023-08-17", "2023-08-17")),
        "kafka_data/locations-0/00000000000000000000.log": F(810, 6, {2: 6}, {"none": 6}, (0, 5), 6, time=("2023-08-17", "2023-08-17"), pids=(13, 14, 15, 16, 17, ...)),
    },
    "kraft-ksql-transactional": {
        "kafka-data/__cluster_metadata-0/00000000000000007364-0000000001.checkpoint": F(11916, 3, {2: 3}, {"none": 3}, (0, 164), 165, time=("2024-10-10", "2024-10-10"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka-data/__cluster_metadata-0/00000000000000021265-0000000006.checkpoint": F(11916, 3, {2: 3}, {"none": 3}, (0, 164), 165, time=("2024-10-10", "2024-10-10"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka-data/__cluster_metadata-0/00000000000000060500-0000000025.checkpoint": F(12338, 3, {2: 3}, {"none": 3}, (0, 170), 171, time=("2024-10-10", "2024-10-10"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka-data/__consumer_offsets-29/00000000000000000000.log": F(15045, 45, {2: 45}, {"none": 45}, (0, 44), 45, time=("2024-10-10", "2024-10-10")),
        "kafka-data/__consumer_offsets-37/00000000000000000000.log": F(11931, 44, {2: 44}, {"none": 44}, (0, 43), 44, time=("2024-10-10", "2024-10-10")),
        "kafka-data/__transaction_state-44/00000000000000000000.log": F(568, 4, {2: 4}, {"none": 4}, (0, 3), 4, time=("2024-10-10", "2024-10-10")),
        "kafka-data/_confluent-ksql-default__command_topic-0/00000000000000000000.log": F(7603, 2, {2: 2}, {"none": 2}, (0, 1), 2, time=("2024-10-10", "2024-10-10"), control={"COMMIT": 1}, txn=2, pids=(0,)),
        "kafka-data/_schemas-0/00000000000000000000.log": F(4032, 42, {2: 42}, {"none": 42}, (0, 41), 42, time=("2024-10-10", "2024-10-10")),
        "kafka-data/docker-connect-configs-0/00000000000000000000.log": F(1950, 10, {2: 10}, {"none": 10}, (0, 9), 10, time=("2024-10-10", "2024-10-10")),
    },
    "kraft-metadata-multiseg": {
        "kafka-data/__cluster_metadata-0/00000000000000032026.log": F(3391423, 46056, {2: 46056}, {"none": 46056}, (32026, 79480), 47455, time=("2026-04-21", "2026-04-23"), control={"LEADER_CHANGE": 14}),
        "kafka-data/__cluster_metadata-0/00000000000000078270-0000000035.checkpoint": F(5150, 3, {2: 3}, {"none": 3}, (0, 67), 68, time=("2026-04-23", "2026-04-23"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka-data/__cluster_metadata-0/00000000000000079481.log": F(601926, 8035, {2: 8035}, {"none": 8035}, (79481, 87933), 8453, time=("2026-04-29", "2026-04-30"), control={"LEADER_CHANGE": 4}),
        "kafka-data/__consumer_offsets-13/00000000000000000000.log": F(252, 2, {2: 2}, {"none": 2}, (23, 24), 2, time=("2026-04-22", "2026-04-22")),
        "kafka-data/__consumer_offsets-13/00000000000000000025.log": F(134, 1, {2: 1}, {"none": 1}, (25, 26), 2, time=("2026-04-30", "2026-04-30")),
        "kafka-data/postCreated-0/00000000000000000016.log": F(234, 3, {2: 3}, {"none": 3}, (16, 18), 3, time=("2026-04-29", "2026-04-30")),
    },
    "kraft-snapshots-idempotent": {
        "kafka-data/__cluster_metadata-0/00000000000000016435-0000000008.checkpoint": F(4552, 3, {2: 3}, {"none": 3}, (0, 62), 63, time=("2025-02-23", "2025-02-23"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka-data/__cluster_metadata-0/00000000000000023631-0000000008.checkpoint": F(4552, 3, {2: 3}, {"none": 3}, (0, 62), 63, time=("2025-02-24", "2025-02-24"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka-data/__cluster_metadata-0/00000000000000030827-0000000008.checkpoint": F(4552, 3, {2: 3}, {"none": 3}, (0, 62), 63, time=("2025-02-24", "2025-02-24"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka-data/__cluster_metadata-0/00000000000000038023-0000000008.checkpoint": F(4552, 3, {2: 3}, {"none": 3}, (0, 62), 63, time=("2025-02-24", "2025-02-24"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka-data/__cluster_metadata-0/00000000000000048831-0000000009.checkpoint": F(4552, 3, {2: 3}, {"none": 3}, (0, 62), 63, time=("2025-02-24", "2025-02-24"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka-data/__cluster_metadata-0/00000000000000056027-0000000009.checkpoint": F(4552, 3, {2: 3}, {"none": 3}, (0, 62), 63, time=("2025-02-25", "2025-02-25"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka-data/__cluster_metadata-0/00000000000000063224-0000000009.checkpoint": F(4552, 3, {2: 3}, {"none": 3}, (0, 62), 63, time=("2025-02-25", "2025-02-25"), control={"SNAPSHOT_HEADER": 1, "SNAPSHOT_FOOTER": 1}),
        "kafka-data/__consumer_offsets-16/00000000000000000000.log": F(574, 3, {2: 3}, {"none": 3}, (0, 2), 3, time=("2025-02-23", "2025-02-23")),
        "kafka-data/__consumer_offsets-29/00000000000000000000.log": F(574, 3, {2: 3}, {"none": 3}, (0, 2), 3, time=("2025-02-23", "2025-02-23")),
        "kafka-data/__consumer_offsets-30/00000000000000000000.log": F(574, 3, {2: 3}, {"none": 3}, (0, 2), 3, time=("2025-02-23", "2025-02-23")),
        "kafka-data/__consumer_offsets-39/00000000000000000000.log": F(574, 3, {2: 3}, {"none": 3}, (0, 2), 3, time=("2025-02-25", "2025-02-25")),
        "kafka-data/__consumer_offsets-42/00000000000000000000.log": F(3636, 16, {2: 16}, {"none": 16}, (0, 15), 16, time=("2025-02-24", "2025-02-25")),
        "kafka-data/__consumer_offsets-8/00000000000000000000.log": F(574, 3, {2: 3}, {"none": 3}, (0, 2), 3, time=("2025-02-23", "2025-02-23")),
        "kafka-data/input-topic-0/00000000000000000000.log": F(1166, 13, {2: 13}, {"none": 13}, (0, 13), 14, time=("2025-02-23", "2025-02-25"), pids=(0, 1, 2, 1000, 2000, ...)),
    },
    "snappy-kraft-nonzero-base": {
        "kafka-data/__cluster_metadata-0/00000000000000000000.log": F(359259, 4690, {2: 4690}, {"none": 4690}, (0, 5150), 5151, time=("2025-12-10", "2025-12-10"), control={"LEADER_CHANGE": 5}),
        "kafka-data/__cluster_metadata-0/00000000000000005151.log": F(142722, 1746, {2: 1746}, {"none": 1746}, (5151, 7319), 2169, time=("2025-12-27", "2025-12-27"), control={"LEADER_CHANGE": 3}),
        "kafka-data/oms_order_status_changed-0/00000000000000000000.log": F(297084, 1257, {2: 1257}, {"snappy": 1257}, (0, 3297), 3298, time=("2025-12-27", "2025-12-27")),
        "kafka-data/oms_order_status_changed-1/00000000000000021236.log": F(305262, 1291, {2: 1291}, {"snappy": 1291}, (21236, 24650), 3415, time=("2025-12-27", "2025-12-27")),
    },
}
# fmt: on

# inner messages of the 22 magic-0 gzip and snappy wrappers (one line of Hamlet each)
for _codec in ("gzip", "snappy"):
    _path = f"tests/test-data/fs-data/hamlet-{_codec}-0/00000000000000000000.log"
    EXPECTED["kafkalite-v0"][_path] = replace(EXPECTED["kafkalite-v0"][_path], deep=5382)

# all .log files of each set, empty ones included (find <set> -name '*.log' | wc -l)
LOG_FILES = {
    "gzip-idempotent-epochs": 1, "gzip-v2-kafkajs": 3, "kafka-0.10.1-magic1": 53,
    "kafka-2.7-compacted-offsets": 56, "kafka-2018-offsets-index": 52,
    "kafka-3.x-3brokers-multiseg": 12, "kafkalite-v0": 4, "kraft-3.5.0-and-ksql-txn": 145,
    "kraft-ksql-transactional": 139, "kraft-metadata-multiseg": 54,
    "kraft-snapshots-idempotent": 51, "lz4-confluent-metrics": 3, "snappy-kraft-nonzero-base": 4,
    "snappy-v2": 52,
}  # fmt: skip
CHECKPOINT_FILES = {
    "kraft-3.5.0-and-ksql-txn": 3, "kraft-ksql-transactional": 3, "kraft-metadata-multiseg": 1,
    "kraft-snapshots-idempotent": 7,
}  # fmt: skip
# batches in the .log files of each set (the sum of its SOURCES.md rows)
LOG_BATCHES = {
    "gzip-idempotent-epochs": 14, "gzip-v2-kafkajs": 50, "kafka-0.10.1-magic1": 22280,
    "kafka-2.7-compacted-offsets": 15, "kafka-2018-offsets-index": 8205,
    "kafka-3.x-3brokers-multiseg": 1575, "kafkalite-v0": 16820, "kraft-3.5.0-and-ksql-txn": 44758,
    "kraft-ksql-transactional": 147, "kraft-metadata-multiseg": 54097,
    "kraft-snapshots-idempotent": 44, "lz4-confluent-metrics": 649,
    "snappy-kraft-nonzero-base": 8984, "snappy-v2": 78,
}  # fmt: skip
SETS = sorted(LOG_FILES)
TOTAL_LOG_FILES = 629
TOTAL_LOG_BATCHES = 157_716
TOTAL_LOG_RECORDS = 475_045  # decoded, wrappers opened
TOTAL_CHECKPOINT_FILES = 14
TOTAL_CHECKPOINT_BATCHES = 42
TOTAL_CHECKPOINT_RECORDS = 1_239


# --------------------------------------------------------------------------------------
# one scan per file, shared by every test of the session
# --------------------------------------------------------------------------------------


@dataclass
class Scan:
    size: int
    batches: int = 0
    magic: Counter = field(default_factory=Counter)
    codecs: Counter = field(default_factory=Counter)
    first_offset: int | None = None
    last_offset: int | None = None
    entries: int = 0  # SOURCES.md's record count: v2 records, legacy shallow messages
    records: int = 0  # decoded records
    control: Counter = field(default_factory=Counter)
    txn: int = 0
    pids: set = field(default_factory=set)
    min_ts: int | None = None
    max_ts: int | None = None
    trailing: int = 0


def _date(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).date().isoformat()


@functools.cache
def scan(path: Path) -> Scan:
    result = Scan(size=path.stat().st_size)
    with open(path, "rb") as handle:
        scanner = iter_file_batches(handle)
        for batch in scanner:
            batch.ensure_valid()
            records = batch.records()
            result.batches += 1
            result.magic[batch.magic] += 1
            result.codecs[CODEC_NAMES[batch.compression_id]] += 1
            if result.first_offset is None:
                result.first_offset = batch.offset if batch.magic < 2 else batch.base_offset
            result.last_offset = batch.last_offset
            result.records += len(records)
            if isinstance(batch, RecordBatch):
                # SOURCES.md's checker: count matches, last record sits at lastOffsetDelta
                assert len(records) == batch.records_count > 0, (path, batch.position)
                assert records[-1].offset == batch.last_offset, (path, batch.position)
                result.entries += len(records)
            else:
                result.entries += 1
            offsets = [r.offset for r in records]
            assert offsets == sorted(set(offsets)), (path, batch.position)
            assert batch.base_offset <= offsets[0] and offsets[-1] <= batch.last_offset
            if batch.is_control:
                kind = parse_control_key(records[0].key)
                result.control[kind.name] += 1
                if kind in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
                    assert len(records) == 1
                    parse_end_txn_marker(records[0].key, records[0].value)
            result.txn += batch.is_transactional
            if batch.producer_id >= 0:
                result.pids.add(batch.producer_id)
            for record in records:
                if record.timestamp >= 0:
                    result.min_ts = min(record.timestamp, result.min_ts or record.timestamp)
                    result.max_ts = max(record.timestamp, result.max_ts or record.timestamp)
        result.trailing = scanner.trailing_bytes
    return result


def set_files(root: Path, name: str) -> tuple[list[Path], list[Path]]:
    files = sorted(p for p in (root / name).rglob("*") if p.is_file())
    logs = [p for p in files if p.suffix == ".log"]
    checkpoints = [p for p in files if CHECKPOINT_NAME.match(p.name)]
    return logs, checkpoints


def check_row(path: Path, want: F) -> Scan:
    got = scan(path)
    where = str(path)
    assert got.size == want.size, where
    assert got.batches == want.batches, where
    assert dict(got.magic) == want.magic, where
    assert dict(got.codecs) == want.codecs, where
    assert (got.first_offset, got.last_offset) == want.offsets, where
    assert got.entries == want.records, where
    assert got.records == (want.deep if want.deep is not None else want.records), where
    if want.time is None:
        assert got.min_ts is None, where
    else:
        assert (_date(got.min_ts), _date(got.max_ts)) == want.time, where
    assert dict(got.control) == want.control, where
    assert got.txn == want.txn, where
    if want.pids:
        listed = [p for p in want.pids if p is not ...]
        pids = sorted(got.pids)
        assert pids[: len(listed)] == listed, where
        assert (len(pids) > len(listed)) == (... in want.pids), where
    else:
        assert not got.pids, where
    assert got.trailing == 0, where  # SOURCES.md: no truncated tails anywhere
    return got


# --------------------------------------------------------------------------------------
# one test per set
# --------------------------------------------------------------------------------------


@pytest.mark.req(
    "FRAME-1",
    "FRAME-2",
    "FRAME-5",
    "BATCH-3",
    "BATCH-5",
    "LEGACY-3",
    "REC-1",
    "REC-10",
    "COMP-1",
    "CTRL-1",
)
@pytest.mark.parametrize("name", SETS)
def test_corpus_set(corpus, name):
    logs, checkpoints = set_files(corpus, name)
    assert len(logs) == LOG_FILES[name]
    assert len(checkpoints) == CHECKPOINT_FILES.get(name, 0)
    expected = EXPECTED[name]
    seen = set()
    totals = Counter()
    for path in logs + checkpoints:
        rel = path.relative_to(corpus / name).as_posix()
        if rel in expected:
            got = check_row(path, expected[rel])
            seen.add(rel)
        else:  # SOURCES.md lists every non-empty file; the rest are 0-byte segments
            got = scan(path)
            assert got.size == 0 and got.batches == 0, rel
        if path.suffix == ".log":
            totals["batches"] += got.batches
            for magic, n in got.magic.items():
                totals[f"v{magic}"] += n
            for codec, n in got.codecs.items():
                totals[codec] += n
    assert seen == set(expected), "SOURCES.md rows without a file"
    assert totals["batches"] == LOG_BATCHES[name]
    logged = [f for rel, f in expected.items() if rel.endswith(".log")]
    assert totals["batches"] == sum(f.batches for f in logged)
    for magic in (0, 1, 2):
        assert totals[f"v{magic}"] == sum(f.magic.get(magic, 0) for f in logged)
    for codec in CODEC_NAMES.values():
        assert totals[codec] == sum(f.codecs.get(codec, 0) for f in logged)


@pytest.mark.req("FRAME-1", "FRAME-7")
def test_corpus_totals(corpus, record_property):
    log_files = log_batches = log_records = 0
    ckpt_files = ckpt_batches = ckpt_records = 0
    for name in SETS:
        logs, checkpoints = set_files(corpus, name)
        log_files += len(logs)
        ckpt_files += len(checkpoints)
        for path in logs:
            log_batches += scan(path).batches
            log_records += scan(path).records
        for path in checkpoints:
            ckpt_batches += scan(path).batches
            ckpt_records += scan(path).records
    assert sorted(p.name for p in corpus.iterdir() if p.is_dir()) == SETS
    assert (log_files, log_batches, log_records) == (
        TOTAL_LOG_FILES, TOTAL_LOG_BATCHES, TOTAL_LOG_RECORDS,
    )  # fmt: skip
    assert (ckpt_files, ckpt_batches, ckpt_records) == (
        TOTAL_CHECKPOINT_FILES, TOTAL_CHECKPOINT_BATCHES, TOTAL_CHECKPOINT_RECORDS,
    )  # fmt: skip
    record_property("log_batches", log_batches)
    record_property("log_records", log_records)
    print(
        f"\ncorpus: {log_files} .log files, {log_batches} batches, {log_records} records; "
        f"{ckpt_files} KRaft snapshots, {ckpt_batches} batches, {ckpt_records} records"
    )


# --------------------------------------------------------------------------------------
# kafkalite-v0: the decoded "golden" text of every partition
# --------------------------------------------------------------------------------------

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\\": "\\\\", '"': '\\"'}


def haskell_show(value: bytes) -> str:
    """The golden files are Haskell ``show`` output: ``"..."`` with backslash escapes."""
    out = []
    text = value.decode("latin-1")
    for i, ch in enumerate(text):
        if ch in _NAMED:
            out.append(_NAMED[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(f"\\{ord(ch)}")
            if i + 1 < len(text) and text[i + 1].isdigit():
                out.append("\\&")
    return '"' + "".join(out) + '"'


@pytest.mark.req("LEGACY-1", "LEGACY-13", "LEGACY-19", "COMP-5", "COMP-6")
@pytest.mark.parametrize("partition", ["hamlet-gzip-0", "hamlet-none-0", "hamlet-snappy-0",
                                       "numbers-0"])  # fmt: skip
def test_kafkalite_golden(corpus, partition):
    base = corpus / "kafkalite-v0" / "tests" / "test-data"
    golden = (base / "golden" / partition).read_text(encoding="ascii").splitlines()
    lines = []
    with open(base / "fs-data" / partition / "00000000000000000000.log", "rb") as handle:
        for batch in iter_file_batches(handle):
            batch.ensure_valid()
            for record in batch.records():
                assert record.key is None and record.timestamp == -1
                lines.append(f"{record.offset}: {haskell_show(record.value)}")
    assert len(lines) == len(golden) == (11394 if partition == "numbers-0" else 5382)
    assert lines == golden
    assert any("\\t" in line for line in lines) == partition.startswith("hamlet")


def test_haskell_show():
    assert haskell_show(b'a"b\\c\td') == '"a\\"b\\\\c\\td"'
    assert haskell_show(b"\x01" + b"2") == '"\\1\\&2"'


# --------------------------------------------------------------------------------------
# SOURCES.md "Oddities worth a test each" that concern records
# --------------------------------------------------------------------------------------


def batches_of(path: Path) -> list:
    with open(path, "rb") as handle:
        return list(iter_file_batches(handle))


@pytest.mark.req("BATCH-5", "REC-5")
def test_oddity_compacted_offset_gaps(corpus):
    """Oddity 4: compaction leaves offset gaps; record count < offset span; a segment's
    first batch above its base offset."""
    seg = corpus / "kafka-2.7-compacted-offsets/kafka-logs/__consumer_offsets-39"
    batches = batches_of(seg / "00000000000000000000.log")
    offsets = [r.offset for b in batches for r in b.records()]
    assert offsets == [4, 16, 17]
    span = batches[-1].last_offset - batches[0].base_offset + 1
    assert span == 14 and len(offsets) == 3 < span
    gaps = [(a.last_offset, b.base_offset) for a, b in zip(batches, batches[1:], strict=False)
            if b.base_offset != a.last_offset + 1]  # fmt: skip
    assert gaps == [(4, 16)]
    # the next segment's name is the next offset after the cleaned one
    nxt = batches_of(seg / "00000000000000000018.log")
    assert nxt[0].base_offset == 18 == batches[-1].next_offset
    # __consumer_offsets-28 starts at 1: offset 0 was cleaned away
    first = batches_of(corpus / "kafka-2.7-compacted-offsets/kafka-logs/__consumer_offsets-28"
                       / "00000000000000000000.log")  # fmt: skip
    assert first[0].base_offset == 1 > 0
    # KRaft-era compaction: the cleaned segment 0 of __consumer_offsets-13 starts at 23
    kraft = batches_of(corpus / "kraft-metadata-multiseg/kafka-data/__consumer_offsets-13"
                       / "00000000000000000000.log")  # fmt: skip
    assert [r.offset for b in kraft for r in b.records()] == [23, 24]


@pytest.mark.req("FRAME-1", "FRAME-2")
@pytest.mark.parametrize(
    ("relpath", "first", "last"),
    [
        ("kraft-metadata-multiseg/kafka-data/postCreated-0/00000000000000000016.log", 16, 18),
        ("snappy-kraft-nonzero-base/kafka-data/oms_order_status_changed-1/"
         "00000000000000021236.log", 21236, 24650),
        ("kraft-metadata-multiseg/kafka-data/__cluster_metadata-0/00000000000000032026.log",
         32026, 79480),
        ("kafka-2.7-compacted-offsets/kafka-logs/myTopic-0/00000000000000000038.log", None, None),
    ],
)  # fmt: skip
def test_oddity_segments_with_nonzero_base(corpus, relpath, first, last):
    """Oddity 5: the only segment of a partition is named with a base offset above 0."""
    path = corpus / relpath
    batches = batches_of(path)
    if first is None:  # an empty active segment left behind by retention
        assert path.stat().st_size == 0 and batches == []
        return
    assert int(path.stem) == first == batches[0].base_offset
    records = [r for b in batches for r in b.records()]
    assert records[0].offset == first and records[-1].offset == last
    offsets = [r.offset for r in records]
    assert offsets == list(range(first, last + 1))  # no gaps in these uncompacted logs


@pytest.mark.req("COMP-6", "COMP-7", "COMP-8")
def test_oddity_two_snappy_framings(corpus):
    """Oddity 10: xerial-framed snappy (Java producers, 0.8 brokers) and raw snappy."""
    xerial = batches_of(corpus / "snappy-v2/kafka-logs/some-topic-0/00000000000000000000.log")
    raw = [b for p in ("oms_order_status_changed-0/00000000000000000000.log",
                       "oms_order_status_changed-1/00000000000000021236.log")
           for b in batches_of(corpus / "snappy-kraft-nonzero-base/kafka-data" / p)]  # fmt: skip
    assert len(xerial) == 9 and len(raw) == 2548
    for batches, framed in ((xerial, True), (raw, False)):
        for batch in batches:
            payload = batch.raw[61:]
            assert payload.startswith(XERIAL_MAGIC) is framed
            batch.ensure_valid()
            assert len(batch.records()) == batch.records_count
    # the v0 wrappers of kafkalite are xerial too, with snappy-java 1.x's version fields
    wrappers = batches_of(corpus / "kafkalite-v0/tests/test-data/fs-data/hamlet-snappy-0"
                          / "00000000000000000000.log")  # fmt: skip
    assert all(w.value.startswith(XERIAL_MAGIC) for w in wrappers)
    assert {w.value[8:16] for w in wrappers} == {bytes.fromhex("0000000100000001")}


@pytest.mark.req("LEGACY-13", "LEGACY-18", "LEGACY-19", "COMP-6")
@pytest.mark.parametrize("codec", ["gzip", "snappy"])
def test_oddity_magic0_wrappers(corpus, codec):
    """kafkalite-v0: magic-0 gzip/snappy wrappers; wrapper offset = last inner offset; inner
    messages are magic 0 with absolute offsets and valid CRCs; same text as uncompressed."""
    base = corpus / "kafkalite-v0/tests/test-data/fs-data"
    wrappers = batches_of(base / f"hamlet-{codec}-0/00000000000000000000.log")
    plain = [r for b in batches_of(base / "hamlet-none-0/00000000000000000000.log")
             for r in b.records()]  # fmt: skip
    assert len(wrappers) == 22
    assert all(isinstance(w, LegacyBatch) and w.magic == 0 for w in wrappers)
    assert wrappers[0].offset == 253
    decoded = []
    for wrapper in wrappers:
        assert wrapper.key is None and wrapper.compression.label == codec
        records = wrapper.records()
        assert records[-1].offset == wrapper.offset == wrapper.last_offset
        assert records[0].offset == wrapper.base_offset
        inner = list(iter_batches(decompress(wrapper.compression, wrapper.value, magic=0)))
        assert [m.offset for m in inner] == [r.offset for r in records]  # absolute
        for message in inner:
            assert message.magic == 0 and message.compression_id == 0
            message.ensure_valid()
        decoded += records
    assert [r.offset for r in wrappers[0].records()] == list(range(254))
    assert [(r.offset, r.value) for r in decoded] == [(r.offset, r.value) for r in plain]


@pytest.mark.req("CTRL-6", "CTRL-10")
def test_transaction_markers(corpus):
    """COMMIT markers after transactional data (ksqlDB command topics): 78-byte control
    batches, transactional, one record, baseSequence -1, the data batches' producer."""
    paths = [
        "kraft-3.5.0-and-ksql-txn/kafka_data/_confluent-ksql-default__command_topic-0/"
        "00000000000000000000.log",
        "kraft-ksql-transactional/kafka-data/_confluent-ksql-default__command_topic-0/"
        "00000000000000000000.log",
    ]
    markers = 0
    for rel in paths:
        batches = batches_of(corpus / rel)
        assert all(b.is_transactional for b in batches)
        for data, marker in zip(batches[::2], batches[1::2], strict=True):
            assert not data.is_control and marker.is_control
            assert marker.size_in_bytes == 78 and marker.records_count == 1
            assert marker.base_sequence == -1 and data.base_sequence >= 0
            assert (marker.producer_id, marker.producer_epoch) == (
                data.producer_id, data.producer_epoch,
            )  # fmt: skip
            assert marker.base_offset == data.last_offset + 1
            [record] = marker.records()
            end = parse_end_txn_marker(record.key, record.value)
            assert end.control_type is ControlRecordType.COMMIT and end.coordinator_epoch >= 0
            markers += 1
    assert markers == 5


@pytest.mark.req("COMP-11", "COMP-13", "COMP-14")
def test_lz4_frames_are_kafkas(corpus):
    """lz4 batches written by a Java client: Kafka's frame header (FLG 0x60, BD 0x40) with the
    magic >= 1 header checksum."""
    base = corpus / "lz4-confluent-metrics/kafka/data"
    batches = [b for p in ("_confluent-metrics-4", "_confluent-metrics-11")
               for b in batches_of(base / p / "00000000000000000000.log")]  # fmt: skip
    assert len(batches) == 644
    for batch in batches:
        assert batch.raw[61:68] == bytes.fromhex("04224d18604082")
        assert len(batch.records()) == batch.records_count
