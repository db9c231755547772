"""Checking an append before any byte is written (spec/behaviour/append.md).

Two passes, as in Kafka:

1. ``analyze_and_validate_records`` [UnifiedLog.scala analyzeAndValidateRecords] walks the
   batches of the incoming set (in-memory framing rules), checks each batch's size
   against ``max.message.bytes`` (leader appends only) and its CRC, and collects the
   offsets and the max timestamp; a follower's set must have increasing offsets.
2. ``assign_offsets_as_leader`` [storage/.../log/LogValidator.java] gives a leader's set its offsets,
   starting at the log end offset, stamps the leader epoch and sets the batch's max
   timestamp (LogAppendTime: the clock's now), rewriting the CRC when that changes.

Supported leader input: one v2 batch, as Kafka 4.0 takes it in place. Kafka
converts legacy (v0/v1) client sets to v2 and rebuilds compressed batches whose
inner offsets are not 0..n-1; the reference refuses those with
``unsupported_append`` rather than re-encode. Followers may append any valid
batches, legacy included, as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..constants import UNKNOWN_OFFSET
from ..errors import Category, CorruptRecordError, KafkaLogError, LogOperationError
from ..records import Compression, TimestampType
from ..records.batch import (
    set_base_offset,
    set_max_timestamp,
    set_partition_leader_epoch,
)
from ..records.record import NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP
from ..records.stream import iter_memory_batches

MAX_CODEC_ID = 4  # zstd; ids 5 to 7 name no codec


class AppendOrigin(Enum):
    """Who is appending [AppendOrigin.java]: a producer via the leader, the transaction
    coordinator writing COMMIT/ABORT markers via the leader, or replication."""

    CLIENT = "client"
    COORDINATOR = "coordinator"
    REPLICATION = "replication"


@dataclass(slots=True)
class LogAppendInfo:
    """What an append learned about its set [LogAppendInfo.java]. ``first_offset`` is
    UNKNOWN_OFFSET (-1) for a legacy set appended as follower: its first offset is not
    known without decompressing."""

    first_offset: int
    last_offset: int
    last_leader_epoch: int | None
    max_timestamp: int
    shallow_offset_of_max_timestamp: int
    log_append_time: int
    log_start_offset: int
    source_compression: Compression
    valid_bytes: int
    last_offset_of_first_batch: int

    @property
    def first_or_last_offset_of_first_batch(self) -> int:
        """The first offset when known, else the first batch's last offset (legacy)."""
        if self.first_offset != UNKNOWN_OFFSET:
            return self.first_offset
        return self.last_offset_of_first_batch


def analyze_and_validate_records(
    records: bytes,
    *,
    origin: AppendOrigin,
    ignore_record_size: bool,
    require_offsets_monotonic: bool,
    max_message_bytes: int,
    log_start_offset: int,
) -> LogAppendInfo:
    """APPEND-4 to APPEND-9: each batch's checks (``_check_batch``; the size not for
    followers, ``ignore_record_size``), then, if required (followers), last offsets that do
    not increase from batch to batch are ``offsets_out_of_order``. Returns what the set
    says: its offsets, max timestamp, codec and valid bytes."""
    valid_bytes, first_offset, last_offset, monotonic = 0, UNKNOWN_OFFSET, -1, True
    last_leader_epoch = NO_PARTITION_LEADER_EPOCH
    source_compression = Compression.NONE
    max_timestamp, shallow_offset_of_max_timestamp = NO_TIMESTAMP, -1
    last_offset_of_first_batch = -1
    try:
        for index, batch in enumerate(iter_memory_batches(records)):
            _check_batch(batch, origin, None if ignore_record_size else max_message_bytes)
            if index == 0:
                if batch.magic >= 2:
                    first_offset = batch.base_offset
                last_offset_of_first_batch = batch.last_offset
            if last_offset >= batch.last_offset:
                monotonic = False
            last_offset = batch.last_offset
            last_leader_epoch = batch.partition_leader_epoch
            if batch.max_timestamp > max_timestamp:
                max_timestamp = batch.max_timestamp
                shallow_offset_of_max_timestamp = last_offset
            valid_bytes += batch.size_in_bytes
            if batch.compression_id != Compression.NONE:
                source_compression = Compression(batch.compression_id)
    except CorruptRecordError as exc:
        # APPEND-4, APPEND-7: bad framing, a bad magic, a short batch or a bad CRC: Kafka's
        # CorruptRecordException, whatever the reader's finer category
        raise LogOperationError(
            Category.CORRUPT_MESSAGE, exc.message, position=exc.position, offset=exc.offset
        )
    if require_offsets_monotonic and not monotonic:
        raise LogOperationError(
            Category.OFFSETS_OUT_OF_ORDER, "out of order offsets found in append"
        )
    epoch = None if last_leader_epoch == NO_PARTITION_LEADER_EPOCH else last_leader_epoch
    return LogAppendInfo(
        first_offset=first_offset,
        last_offset=last_offset,
        last_leader_epoch=epoch,
        max_timestamp=max_timestamp,
        shallow_offset_of_max_timestamp=shallow_offset_of_max_timestamp,
        log_append_time=NO_TIMESTAMP,
        log_start_offset=log_start_offset,
        source_compression=source_compression,
        valid_bytes=valid_bytes,
        last_offset_of_first_batch=last_offset_of_first_batch,
    )


def _check_batch(batch, origin: AppendOrigin, max_message_bytes: int | None) -> None:
    """One batch's checks of ``analyze_and_validate_records``, in Kafka's order: a client's v2
    baseOffset 0 (APPEND-5), the size (APPEND-6, None: not checked), framing and CRC
    (``ensure_valid``, APPEND-7), the codec id (APPEND-8: CompressionType.forId)."""
    if batch.magic >= 2 and origin is AppendOrigin.CLIENT and batch.base_offset != 0:
        raise _invalid_record(
            f"the baseOffset of the record batch should be 0, but it is {batch.base_offset}"
        )
    if max_message_bytes is not None and batch.size_in_bytes > max_message_bytes:
        raise LogOperationError(
            Category.RECORD_TOO_LARGE,
            f"the record batch size in the append is {batch.size_in_bytes} bytes which "
            f"exceeds the maximum configured value of {max_message_bytes}",
            position=batch.position,
        )
    batch.ensure_valid()
    if batch.compression_id > MAX_CODEC_ID:
        raise LogOperationError(
            Category.INVALID_ARGUMENT,
            f"unknown compression type id: {batch.compression_id}",
            position=batch.position,
        )


def _invalid_record(message: str) -> LogOperationError:
    return LogOperationError(Category.INVALID_RECORD, message)


@dataclass(frozen=True, slots=True)
class ValidationResult:
    """The leader's set with offsets assigned, and what it says about timestamps."""

    validated_records: bytes
    last_offset: int
    max_timestamp: int
    shallow_offset_of_max_timestamp: int
    log_append_time: int


def assign_offsets_as_leader(
    records: bytes,
    *,
    next_offset: int,
    now: int,
    timestamp_type: TimestampType,
    leader_epoch: int,
    origin: AppendOrigin = AppendOrigin.CLIENT,
    compacted_topic: bool = False,
) -> ValidationResult:
    """APPEND-10 to APPEND-17, COMPACT-3: give a client's batch the offsets from ``next_offset`` (the log end offset).

    The set must be one v2 batch (more is ``invalid_record``) whose header agrees with
    itself: a positive offset range equal to its record count, not a control batch, a
    sequence when it has a producer id. A record without a timestamp, or any record
    when the topic uses LogAppendTime, must not arrive marked LogAppendTime
    (``invalid_timestamp``). The batch is then rewritten in place: baseOffset,
    partitionLeaderEpoch and, CRC included, its timestamp type and maxTimestamp.
    The header checks are a client's only: the transaction coordinator (``origin``
    COORDINATOR) writes control batches (TXN-B-5).
    """
    batches = list(iter_memory_batches(records))
    if not batches:
        raise _invalid_record("record batch has no batches at all")
    batch = batches[0]
    if batch.magic < 2:
        raise LogOperationError(
            Category.UNSUPPORTED_APPEND,
            "the reference does not convert legacy (v0/v1) client batches to v2 as Kafka does",
        )
    if len(batches) > 1:
        raise _invalid_record("a v2 append from a client must hold exactly one batch")
    if origin is AppendOrigin.CLIENT:
        _validate_client_batch(batch)
    records_in_batch = _validate_records(batch, timestamp_type, compacted_topic)
    compressed = batch.compression_id != Compression.NONE
    if compressed and any(record.offset != i for i, record in enumerate(records_in_batch)):
        raise LogOperationError(
            Category.UNSUPPORTED_APPEND,
            "Kafka rebuilds a compressed batch whose inner offsets are not 0..n-1; "
            "the reference does not re-encode batches",
        )
    max_batch_timestamp = max((r.timestamp for r in records_in_batch), default=NO_TIMESTAMP)
    max_batch_timestamp = max(max_batch_timestamp, NO_TIMESTAMP)
    last_offset = next_offset + len(records_in_batch) - 1
    raw = set_base_offset(batch.raw, last_offset - batch.last_offset_delta)
    raw = set_partition_leader_epoch(raw, leader_epoch)
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        max_timestamp, log_append_time = now, now
    else:
        max_timestamp, log_append_time = max_batch_timestamp, NO_TIMESTAMP
    if (batch.timestamp_type, batch.max_timestamp) != (timestamp_type, max_timestamp):
        raw = set_max_timestamp(raw, timestamp_type, max_timestamp)
    # Kafka's uncompressed path names the max-timestamp offset only when a record has a
    # timestamp; the compressed path (and LogAppendTime) always names the last offset
    shallow = last_offset if (compressed or max_timestamp > NO_TIMESTAMP) else -1
    return ValidationResult(raw, last_offset, max_timestamp, shallow, log_append_time)


def _validate_records(batch, timestamp_type: TimestampType, compacted_topic: bool) -> list:
    """The records of a leader's batch, each checked [LogValidator.validateRecord]: a key on a
    compacted topic (COMPACT-3), and no LogAppendTime mark from a producer where the broker
    does not take the record's own timestamp (``invalid_timestamp``)."""
    try:
        records_in_batch = batch.records()
    except KafkaLogError as exc:  # any decoding failure, compressed streams included
        raise _invalid_record(exc.message)
    log_append_marked = batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    for index, record in enumerate(records_in_batch):
        if compacted_topic and record.key is None:
            # COMPACT-3 [LogValidator.validateKey]: the cleaner keeps the latest record per key,
            # so a compacted topic has no place for a record without one
            raise _invalid_record(
                f"compacted topic cannot accept message without key (record {index})"
            )
        unchecked = (
            timestamp_type is not TimestampType.CREATE_TIME or record.timestamp == NO_TIMESTAMP
        )
        if unchecked and log_append_marked:
            raise LogOperationError(
                Category.INVALID_TIMESTAMP,
                f"invalid timestamp type in record {index}: producers must not set LogAppendTime",
            )
    return records_in_batch


def _validate_client_batch(batch) -> None:
    """LogValidator.validateBatch for a client's v2 batch."""
    count_from_offsets = batch.last_offset - batch.base_offset + 1
    if count_from_offsets <= 0:
        raise _invalid_record(
            f"batch has an invalid offset range: [{batch.base_offset}, {batch.last_offset}]"
        )
    if batch.records_count <= 0:
        raise _invalid_record(f"invalid reported count for record batch: {batch.records_count}")
    if count_from_offsets != batch.records_count:
        raise _invalid_record(
            f"inconsistent batch offset range [{batch.base_offset}, {batch.last_offset}] and "
            f"count of records {batch.records_count}"
        )
    if batch.is_control:
        raise _invalid_record("clients are not allowed to write control records")
    if batch.producer_id >= 0 and batch.base_sequence < 0:
        raise _invalid_record(
            f"invalid sequence number {batch.base_sequence} in record batch with producerId "
            f"{batch.producer_id}"
        )
