"""The checks of a leader's append (log_validator.py) with the compiled kernel
(``leader_append`` of reference_impl/_speedups, the compiled extension): Kafka's
UnifiedLog.analyzeAndValidateRecords and LogValidator's in-place path
(spec/behaviour/append.md §1-§2), faster.

A client's append is nearly always one whole, uncompressed CreateTime v2 batch.
``kernels.leader_append`` checks such a batch in one pass (framing, baseOffset 0, its size
against ``max.message.bytes``, CRC, header, every record) and stamps the copy the log
writes (offsets, leader epoch, maxTimestamp, CRC); this module turns what it returns into
what ``analyze_and_validate_records`` and ``assign_offsets_as_leader`` would have given
``Log._append``. Anything else, every error included, goes to those readable functions:
the kernel returns None and they judge (tests/test_append_fast.py holds the two paths to
the same results and errors).
"""

from __future__ import annotations

from .._speedups import kernels
from ..records import Compression, TimestampType
from ..records.batch import RecordBatch
from ..records.record import NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP
from .log_validator import LogAppendInfo

_LOG_APPEND_TIME = {TimestampType.CREATE_TIME: False, TimestampType.LOG_APPEND_TIME: True}


def validate_client_batch(log, records: bytes, leader_epoch: int) -> tuple | None:
    """``(info, validated_records, batches)`` as the readable checks give them for a
    client's append as leader, or None: the readable path takes the append."""
    log_append_time = _LOG_APPEND_TIME.get(log.config.message_timestamp_type)
    if log_append_time is None or type(records) is not bytes:
        return None
    next_offset = log.log_end_offset
    now = log.clock.milliseconds()
    result = kernels.leader_append(
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
    return info, validated, [RecordBatch.from_bytes(validated)]
