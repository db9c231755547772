"""Builders shared by the reference-log tests: Kafka's LogTestUtils and TestUtils, restated."""

from __future__ import annotations

from pathlib import Path

from reference_impl.formats.file_naming import (
    log_file_name,
    offset_index_file_name,
    time_index_file_name,
    txn_index_file_name,
)
from reference_impl.log.abstract_index import LazyIndex
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.fetch import FetchDataInfo
from reference_impl.log.file_records import FileRecords
from reference_impl.log.offset_index import OffsetIndex
from reference_impl.log.segment import LogSegment
from reference_impl.log.time_index import TimeIndex
from reference_impl.log.transaction_index import TransactionIndex
from reference_impl.log.unified_log import Log
from reference_impl.records import SimpleRecord, build_legacy_message_set, build_record_batch
from reference_impl.records.record import NO_TIMESTAMP, Record

MOCK_TIME_START = 1_700_000_000_000  # MockTime starts at a real-looking time


def legacy_records(offset: int, *values: str) -> bytes:
    """LogSegmentTest.records: a v1 message per value, at offsets from ``offset``, each
    stamped ``offset * 10``."""
    return build_legacy_message_set(
        [SimpleRecord(value=v.encode(), timestamp=offset * 10) for v in values],
        magic=1,
        base_offset=offset,
    )


def batch(
    offset: int,
    *values: bytes | str,
    timestamp: int = NO_TIMESTAMP,
    timestamps: list[int] | None = None,
    epoch: int = -1,
    key: bytes | None = None,
    **kwargs,
) -> bytes:
    """One v2 batch (MemoryRecords.withRecords / TestUtils.records)."""
    values = values or (b"v",)
    stamps = timestamps or [timestamp] * len(values)
    records = [
        SimpleRecord(value=v.encode() if isinstance(v, str) else v, key=key, timestamp=ts)
        for v, ts in zip(values, stamps, strict=True)
    ]
    return build_record_batch(records, base_offset=offset, partition_leader_epoch=epoch, **kwargs)


def singleton_records(
    value: bytes = b"v", timestamp: int = NO_TIMESTAMP, key: bytes | None = None
) -> bytes:
    """TestUtils.singletonRecords: one record in one v2 batch at offset 0."""
    return batch(0, value, timestamp=timestamp, key=key)


def create_segment(
    dir: Path, offset: int, index_interval_bytes: int = 10, clock: ManualClock | None = None
) -> LogSegment:
    """LogTestUtils.createSegment: offset index of 1000 bytes, time index of 1500."""
    clock = clock or ManualClock(MOCK_TIME_START)
    return LogSegment(
        FileRecords.open(dir / log_file_name(offset)),
        LazyIndex(dir / offset_index_file_name(offset), lambda f: OffsetIndex(f, offset, 1000)),
        LazyIndex(dir / time_index_file_name(offset), lambda f: TimeIndex(f, offset, 1500)),
        TransactionIndex(offset, dir / txn_index_file_name(offset)),
        offset,
        index_interval_bytes,
        0,
        clock,
    )


def create_log(root: Path, clock: ManualClock | None = None, **config) -> Log:
    """LogTestUtils.createLog: a partition ``topic-0`` under ``root``."""
    return Log.open(root / "topic-0", LogConfig(**config), clock or ManualClock(MOCK_TIME_START))


def records_of(fetch: FetchDataInfo | None) -> list[Record]:
    """Every record of the whole batches a read returned."""
    if fetch is None:
        return []
    return [record for b in fetch.batches() for record in b.records()]


def offsets_of(fetch: FetchDataInfo | None) -> list[int]:
    return [record.offset for record in records_of(fetch)]


def values_of(fetch: FetchDataInfo | None) -> list[bytes | None]:
    return [record.value for record in records_of(fetch)]
