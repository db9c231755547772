"""Copying the batches a cleaning keeps: Kafka's MemoryRecords.filterTo and its RecordFilter
(spec/behaviour/compaction.md §3, COMPACT-17 to COMPACT-20).

[clients/.../common/record/MemoryRecords.java filterTo, filterBatch, buildRetainedRecordsInto;
DefaultRecordBatch.writeEmptyHeader] A filter says per batch whether it goes whole
(``DELETE``), is kept as an empty header when nothing in it is kept (``RETAIN_EMPTY``) or
disappears then (``DELETE_EMPTY``), and per record whether it stays. A batch whose records
all stay is copied byte for byte, unless it holds a tombstone or is a marker of an emptied
transaction and has no delete horizon yet: then it is rewritten to carry one (COMPACT-18).
A batch that loses a record is rewritten with the records left, keeping its base offset,
last offset delta and producer fields (COMPACT-19).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..records import SimpleRecord, build_record_batch
from ..records.batch import RECORD_BATCH_OVERHEAD
from ..records.record import NO_TIMESTAMP, TimestampType


class BatchRetention(Enum):
    DELETE = "delete"  # the batch and all its records go
    DELETE_EMPTY = "delete_empty"  # a batch left with no record goes
    RETAIN_EMPTY = "retain_empty"  # a batch left with no record stays as its header


@dataclass
class FilterResult:
    """What one chunk's filtering read and kept: the cleaner's stats, and the arguments of
    the one ``LogSegment.append`` that writes ``output`` (COMPACT-21)."""

    output: bytearray = field(default_factory=bytearray)
    messages_read: int = 0
    bytes_read: int = 0
    messages_retained: int = 0
    bytes_retained: int = 0
    max_offset: int = -1
    max_timestamp: int = NO_TIMESTAMP
    shallow_offset_of_max_timestamp: int = -1

    def retained(self, max_timestamp: int, shallow: int, max_offset: int, n: int, size: int):
        if max_timestamp > self.max_timestamp:
            self.max_timestamp, self.shallow_offset_of_max_timestamp = max_timestamp, shallow
        self.max_offset = max(self.max_offset, max_offset)
        self.messages_retained += n
        self.bytes_retained += size


class RecordFilter:
    """The cleaner's decisions (log_cleaner.py gives them); ``current_time`` and
    ``delete_retention_ms`` stamp a new delete horizon."""

    def __init__(self, current_time: int, delete_retention_ms: int) -> None:
        self.current_time = current_time
        self.delete_retention_ms = delete_retention_ms

    def check_batch_retention(self, batch) -> tuple[BatchRetention, bool]:
        """(the batch's retention, whether it is the marker of an emptied transaction)."""
        raise NotImplementedError

    def should_retain_record(self, batch, record) -> bool:
        raise NotImplementedError


def filter_to(batches, record_filter: RecordFilter) -> FilterResult:
    """COMPACT-17 to COMPACT-20: the kept part of ``batches`` (v2), in order."""
    result = FilterResult()
    for batch in batches:
        retention, marker_of_empty_txn = record_filter.check_batch_retention(batch)
        result.bytes_read += batch.size_in_bytes
        if retention is BatchRetention.DELETE:
            continue
        if batch.magic < 2:
            _filter_legacy(batch, record_filter, result)
            continue
        records = batch.records()
        result.messages_read += len(records)
        kept = [r for r in records if record_filter.should_retain_record(batch, r)]
        if kept:
            _write_retained(batch, records, kept, marker_of_empty_txn, record_filter, result)
        elif retention is BatchRetention.RETAIN_EMPTY:
            _write_empty_header(batch, result)
    return result


def _write_retained(batch, records, kept, marker_of_empty_txn, record_filter, result) -> None:
    """COMPACT-18, COMPACT-19: the batch as it was when nothing goes and no horizon is due, else
    rewritten around the records kept."""
    has_tombstone = any(r.value is None for r in kept)
    set_horizon = (has_tombstone or marker_of_empty_txn) and batch.delete_horizon_ms is None
    max_offset = max(r.offset for r in kept)
    if len(kept) == len(records) and not set_horizon:
        result.output += batch.raw
        result.retained(
            batch.max_timestamp,
            batch.last_offset,
            batch.last_offset,
            len(kept),
            batch.size_in_bytes,
        )
        return
    if set_horizon:
        horizon = record_filter.current_time + record_filter.delete_retention_ms
    else:
        horizon = batch.delete_horizon_ms
    raw = rebuild_batch(batch, kept, horizon)
    result.output += raw
    log_append = batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    max_timestamp = batch.max_timestamp if log_append else max(r.timestamp for r in kept)
    max_timestamp = max(max_timestamp, NO_TIMESTAMP)
    # MemoryRecordsBuilder.info: the (overridden) last offset, or -1 with no timestamp at all
    shallow = batch.last_offset if max_timestamp != NO_TIMESTAMP or log_append else -1
    result.retained(max_timestamp, shallow, max_offset, len(kept), len(raw))


def rebuild_batch(batch, kept, delete_horizon_ms: int | None) -> bytes:
    """COMPACT-19 [buildRetainedRecordsInto]: the original base offset, codec, timestamp type,
    producer id, epoch, base sequence, flags and leader epoch; the records kept with their
    offsets and timestamps; lastOffsetDelta overridden to the original's, so the producer's
    last sequence survives; a delete horizon, if given, as baseTimestamp with attribute bit 6.
    COMPACT-28: compressed again with the batch's codec, by this package's compressor; another
    compressor's bytes for the same records conform as well."""
    log_append = batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    return build_record_batch(
        [
            SimpleRecord(
                value=r.value,
                key=r.key,
                timestamp=r.timestamp,
                headers=r.headers,
                offset_delta=r.offset - batch.base_offset,
            )
            for r in kept
        ],
        compression=batch.compression,
        log_append_time=batch.max_timestamp if log_append else None,
        delete_horizon_ms=delete_horizon_ms,
        **_kept_header_fields(batch),
    )


def _kept_header_fields(batch) -> dict:
    """The header fields a rewritten or emptied batch keeps (COMPACT-19, COMPACT-20)."""
    return {
        "base_offset": batch.base_offset,
        "last_offset_delta": batch.last_offset_delta,
        "timestamp_type": batch.timestamp_type,
        "producer_id": batch.producer_id,
        "producer_epoch": batch.producer_epoch,
        "base_sequence": batch.base_sequence,
        "is_transactional": batch.is_transactional,
        "is_control": batch.is_control,
        "partition_leader_epoch": batch.partition_leader_epoch,
    }


def _filter_legacy(batch, record_filter: RecordFilter, result: FilterResult) -> None:
    """COMPACT-29 [filterBatch, buildRetainedRecordsInto, KIP-724]: a v0/v1 entry with records
    kept is always written as a v2 batch of those records, never copied (Kafka 4.0 and later);
    an entry with none kept goes (Kafka has no empty legacy entry)."""
    records = batch.records()
    result.messages_read += len(records)
    kept = [r for r in records if record_filter.should_retain_record(batch, r)]
    if not kept:
        return
    has_tombstone = any(r.value is None for r in kept)
    horizon = record_filter.current_time + record_filter.delete_retention_ms
    raw = convert_legacy(batch, kept, horizon if has_tombstone else None)
    result.output += raw
    log_append = batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    max_timestamp = batch.max_timestamp if log_append else max(r.timestamp for r in kept)
    max_timestamp = max(max_timestamp, NO_TIMESTAMP)
    last = kept[-1].offset  # no overrideLastOffset below magic 2
    shallow = last if max_timestamp != NO_TIMESTAMP or log_append else -1
    result.retained(max_timestamp, shallow, last, len(kept), len(raw))


def convert_legacy(batch, kept, delete_horizon_ms: int | None) -> bytes:
    """COMPACT-29: the v2 batch a cleaner writes for the records kept of a v0/v1 entry: base
    offset the first kept record's, last offset the last kept record's, the entry's codec,
    CreateTime for magic 0 (its records' timestamps −1) else the entry's timestamp type (the
    entry's timestamp as LogAppendTime), no producer, leader epoch −1; a tombstone kept stamps
    a delete horizon, as in a v2 batch (COMPACT-13)."""
    log_append = batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    base = kept[0].offset
    return build_record_batch(
        [
            SimpleRecord(
                value=r.value, key=r.key, timestamp=r.timestamp, offset_delta=r.offset - base
            )
            for r in kept
        ],
        base_offset=base,
        compression=batch.compression,
        log_append_time=batch.max_timestamp if log_append else None,
        timestamp_type=TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME,
        delete_horizon_ms=delete_horizon_ms,
    )


def _write_empty_header(batch, result: FilterResult) -> None:
    """COMPACT-20 [DefaultRecordBatch.writeEmptyHeader]: a 61-byte batch with no record that keeps
    the offsets, producer fields, flags, timestamp type and maxTimestamp; baseTimestamp -1,
    no codec, no delete horizon."""
    raw = build_record_batch(
        [], empty_max_timestamp=batch.max_timestamp, **_kept_header_fields(batch)
    )
    result.output += raw
    result.retained(
        batch.max_timestamp, batch.last_offset, batch.last_offset, 0, RECORD_BATCH_OVERHEAD
    )
