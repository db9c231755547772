"""``UnifiedLog._append`` (unified_log.py) of a client's common batch, with the compiled kernel
``leader_append`` of reference_impl/kernels: Kafka's UnifiedLog.append with
analyzeAndValidateRecords and LogValidator's in-place path [UnifiedLog.scala,
LogValidator.java] (spec/behaviour/append.md §1-§2, spec/behaviour/producer-state.md
§2), faster.

A client's append is nearly always one whole, uncompressed CreateTime v2 batch of a
producer the log knows, continuing its sequence, to an active segment that does not roll.
``kernels.append.leader_append`` checks such a batch in one pass (framing, baseOffset 0, its size
against ``max.message.bytes``, CRC, header, every record) and stamps the copy the log
writes (offsets, leader epoch, maxTimestamp, CRC). This module then checks, changing
nothing, that the rest of the append is the common case too: no new leader epoch, no
roll, the producer's next batch (or no producer id). Only then does it write, through
the readable ``LocalLog.append`` (``LogSegment.append``: the batch and its index
entries); then it updates the producer's state.

Anything else returns None having changed nothing, and ``Log._append`` runs the readable
path, whose results and errors are the reference's (tests/test_append_fast.py holds the
two paths to the same results, errors and files).
"""

from __future__ import annotations

from .. import kernels
from ..records import Compression, TimestampType
from ..records.batch import RecordBatch
from ..records.record import NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP
from .log_validator import LogAppendInfo
from .producer_state import in_sequence

_LOG_APPEND_TIME = {TimestampType.CREATE_TIME: False, TimestampType.LOG_APPEND_TIME: True}


def append_client_batch(log, records: bytes, leader_epoch: int) -> LogAppendInfo | None:
    """What ``Log._append`` returns, and does, for a client's common batch; None: nothing
    done, the readable path takes the append."""
    checked = validate_client_batch(log, records, leader_epoch)
    if checked is None:
        return None
    info, validated, batch = checked
    config = log.config
    if len(validated) > config.segment_bytes:
        return None  # RECORD_BATCH_TOO_LARGE is the readable path's
    latest = log.leader_epoch_cache.latest_entry()
    if latest is None or latest.epoch != leader_epoch or latest.start_offset > info.first_offset:
        return None  # LEPOCH-5: the epoch cache would change
    segment = log.segments.active_segment
    if segment.should_roll(log.roll_params(len(validated), info)):
        return None  # ROLL-1: the readable path rolls (should_roll only caches the first timestamp)
    psm = log.producer_state_manager
    entry = None
    if batch.producer_id >= 0:
        entry = psm.producers.get(batch.producer_id)
        if not _next_batch_of(entry, batch):
            return None
    log.local_log.append(info.last_offset, validated)
    if entry is not None:  # ProducerAppendInfo.append_data_batch then psm.update, no checks left
        last_offset = info.last_offset
        entry.add_batch(
            batch.producer_epoch, batch.last_sequence, last_offset,
            last_offset - info.first_offset, batch.max_timestamp,
        )  # fmt: skip
    return info  # Log._append goes on with its map end offset, high watermark and flush


def validate_client_batch(log, records: bytes, leader_epoch: int) -> tuple | None:
    """``(info, validated_records, batch)`` as ``analyze_and_validate_records`` and
    ``assign_offsets_as_leader`` give them for a client's append as leader (the batch as
    ``iter_memory_batches`` parses the validated bytes), or None: not the kernel's case."""
    log_append_time = _LOG_APPEND_TIME.get(log.config.message_timestamp_type)
    if log_append_time is None or type(records) is not bytes:
        return None
    next_offset = log.log_end_offset
    now = log.clock.milliseconds()
    result = kernels.append.leader_append(
        records, next_offset, now, log_append_time, leader_epoch, log.config.max_message_bytes
    )
    if result is None:
        return None
    validated, last_offset, max_timestamp, shallow, client_epoch, last_offset_delta = result
    info = LogAppendInfo(
        first_offset=next_offset,
        last_offset=last_offset,
        last_leader_epoch=None if client_epoch == NO_PARTITION_LEADER_EPOCH else client_epoch,
        max_timestamp=max_timestamp,
        shallow_offset_of_max_timestamp=shallow,
        log_append_time=now if log_append_time else NO_TIMESTAMP,
        log_start_offset=log.log_start_offset,
        source_compression=Compression.NONE,
        valid_bytes=len(records),
        last_offset_of_first_batch=last_offset_delta,  # the client's baseOffset is 0
    )
    return info, validated, RecordBatch.from_bytes(validated)


def _next_batch_of(entry, batch) -> bool:
    """``_analyze_and_validate_producer_state`` would accept ``batch`` as a known producer's
    next data batch (the same epoch, the sequence right after the last, no transaction)
    and find no duplicate: ``ProducerAppendInfo.append_data_batch``'s checks pass."""
    return (
        entry is not None
        and batch.producer_epoch == entry.producer_epoch
        and entry.batch_metadata
        and entry.current_txn_first_offset is None
        and not batch.is_transactional
        and in_sequence(entry.last_seq, batch.base_sequence)
        and entry.find_duplicate_batch(batch) is None
    )
