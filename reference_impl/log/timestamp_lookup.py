"""Finding an offset by timestamp (spec/behaviour/read.md): Kafka's fetchOffsetByTimestamp.

A consumer's ListOffsets request asks for the first offset whose record timestamp
is at or after a target [core/.../log/UnifiedLog.scala fetchOffsetByTimestamp]. The log picks the
first segment whose largest timestamp reaches the target and searches it through
its time index (LogSegment.find_offset_by_timestamp). Negative targets are special:
the earliest offset (log start), the latest (LEO), or the record with the largest
timestamp. Results carry the leader epoch of the batch (or of the epoch cache).
"""

from __future__ import annotations

from ..records.record import NO_TIMESTAMP
from .file_records import TimestampAndOffset
from .leader_epoch import LeaderEpochFileCache
from .log_segments import LogSegments

LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5


def fetch_offset_by_timestamp(
    segments: LogSegments,
    cache: LeaderEpochFileCache,
    target_timestamp: int,
    *,
    log_start_offset: int,
    log_end_offset: int,
) -> TimestampAndOffset | None:
    """ListOffsets on a log without tiered storage: -2 and -4 give the log start offset,
    -1 the LEO, -3 the record with the largest timestamp, -5 offset -1 (nothing is tiered);
    any other target the first record with a timestamp >= it, or None."""
    if target_timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
        earliest = cache.earliest_entry()
        epoch = earliest.epoch if earliest and earliest.start_offset <= log_start_offset else None
        return TimestampAndOffset(NO_TIMESTAMP, log_start_offset, epoch)
    if target_timestamp == LATEST_TIMESTAMP:
        return TimestampAndOffset(NO_TIMESTAMP, log_end_offset, cache.latest_epoch())
    if target_timestamp == LATEST_TIERED_TIMESTAMP:
        return TimestampAndOffset(NO_TIMESTAMP, -1, -1)
    if target_timestamp == MAX_TIMESTAMP:
        return _max_timestamp(segments)
    for segment in segments.values():
        if segment.largest_timestamp() >= target_timestamp:
            return segment.find_offset_by_timestamp(target_timestamp, log_start_offset)
    return None


def _max_timestamp(segments: LogSegments) -> TimestampAndOffset | None:
    """The segment with the largest max timestamp (the first, on a tie), then in it the
    first batch with that max timestamp, and in that batch the first record carrying it."""
    segment = max(segments.values(), key=lambda s: s.max_timestamp_so_far)
    so_far = segment.read_max_timestamp_and_offset_so_far()
    position = segment.offset_index.lookup(so_far.offset).position
    for batch in segment.log.batches_from(position):
        if batch.max_timestamp == so_far.timestamp:
            if batch.magic == 0:
                return None  # v0 has no timestamps
            for record in batch.records():
                if record.timestamp == batch.max_timestamp:
                    epoch = batch.partition_leader_epoch
                    return TimestampAndOffset(
                        batch.max_timestamp, record.offset, epoch if epoch >= 0 else None
                    )
            return None
    return None
