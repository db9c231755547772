"""The log start offset and segment deletion (spec/behaviour/retention.md).

The retention half of ``UnifiedLog`` [UnifiedLog.scala deleteOldSegments, deletableSegments,
deleteSegments, maybeIncrementLogStartOffset]. Data leaves the start of a log in
whole segments, in three passes run by ``delete_old_segments``:

* **log start offset**: a segment whose successor starts at or below the log start
  offset holds nothing readable;
* **size**: the oldest segments while the log, without them, is still at least
  ``retention.bytes``;
* **time**: the oldest segments whose largest timestamp (else the ``.log`` mtime)
  is more than ``retention.ms`` before now.

Each pass scans from the oldest segment and stops at the first it keeps; it never
takes a segment at or above the high watermark (here the LEO) nor an empty active
segment. Deleting every segment first rolls a new one, so a log always has one
and keeps its LEO.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import Category, LogOperationError
from .segment import LogSegment

if TYPE_CHECKING:
    from .clock import Clock
    from .config import LogConfig
    from .leader_epoch import LeaderEpochFileCache
    from .local_log import LocalLog
    from .log_segments import LogSegments
    from .producer_state_manager import ProducerStateManager

Predicate = Callable[[LogSegment, LogSegment | None], bool]


class LogRetention:
    """Mixed into ``UnifiedLog``: everything here reads and changes the log's own state,
    declared here as UnifiedLog (unified_log.py) provides it."""

    config: LogConfig
    clock: Clock
    local_log: LocalLog
    segments: LogSegments
    leader_epoch_cache: LeaderEpochFileCache
    producer_state_manager: ProducerStateManager
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    size: int
    _begin: Callable[[], None]
    _roll: Callable[[int | None], LogSegment]
    _update_log_start_offset: Callable[[int], None]
    _maybe_increment_first_unstable_offset: Callable[[], None]
    _write_checkpoints: Callable[[], None]
    _delete_producer_snapshots: Callable[[list[LogSegment]], None]

    def maybe_increment_log_start_offset(self, new_log_start_offset: int) -> bool:
        """RET-1 to RET-3: raise the log start offset (never lower it). Above the high watermark it is
        ``offset_out_of_range``. No file changes: the segments below it go at the next
        ``delete_old_segments``. Returns whether it moved."""
        self._begin()
        return self._maybe_increment_log_start_offset(new_log_start_offset)

    def _maybe_increment_log_start_offset(self, new_log_start_offset: int) -> bool:
        if new_log_start_offset > self.high_watermark:
            raise LogOperationError(
                Category.OFFSET_OUT_OF_RANGE,
                f"cannot increment the log start offset to {new_log_start_offset} since it is "
                f"larger than the high watermark {self.high_watermark}",
                offset=new_log_start_offset,
            )
        if new_log_start_offset <= self.log_start_offset:
            return False
        self._update_log_start_offset(new_log_start_offset)
        self.leader_epoch_cache.truncate_from_start(self.log_start_offset)
        self.producer_state_manager.on_log_start_offset_incremented(new_log_start_offset)
        self._maybe_increment_first_unstable_offset()
        self._write_checkpoints()
        return True

    def delete_segments_before(self, offset: int) -> int:
        """RET-4: the conformance contract's ``delete_segments_before``, Kafka's DeleteRecords:
        raise the log start offset to ``offset``, then delete the segments it has passed
        (whose successor's base offset is <= it). Returns the number deleted."""
        self._begin()
        self._maybe_increment_log_start_offset(offset)
        return self._delete_log_start_offset_breached_segments()

    def delete_old_segments(self) -> int:
        """RET-10: the three deletion passes (cleanup.policy=delete); returns the number of
        segments deleted."""
        self._begin()
        return (
            self._delete_log_start_offset_breached_segments()
            + self._delete_retention_size_breached_segments()
            + self._delete_retention_ms_breached_segments()
        )

    def _delete_log_start_offset_breached_segments(self) -> int:
        """RET-6: a segment whose successor starts at or below the log start offset."""

        def should_delete(segment: LogSegment, next_segment: LogSegment | None) -> bool:
            return next_segment is not None and next_segment.base_offset <= self.log_start_offset

        return self._delete_old_segments(should_delete)

    def _delete_retention_size_breached_segments(self) -> int:
        """RET-8: the oldest segments while what is left stays at or above retention.bytes."""
        retention_bytes = self.config.retention_bytes
        if retention_bytes < 0 or self.size < retention_bytes:
            return 0
        excess = self.size - retention_bytes

        def should_delete(segment: LogSegment, next_segment: LogSegment | None) -> bool:
            nonlocal excess
            if excess - segment.size < 0:
                return False
            excess -= segment.size
            return True

        return self._delete_old_segments(should_delete)

    def _delete_retention_ms_breached_segments(self) -> int:
        """RET-7: segments whose largest timestamp is more than retention.ms old."""
        retention_ms = self.config.retention_ms
        if retention_ms < 0:
            return 0
        start_ms = self.clock.milliseconds()

        def should_delete(segment: LogSegment, next_segment: LogSegment | None) -> bool:
            return start_ms - segment.largest_timestamp() > retention_ms

        return self._delete_old_segments(should_delete)

    def _delete_old_segments(self, predicate: Predicate) -> int:
        deletable = self.deletable_segments(predicate)
        return self._delete_segments(deletable) if deletable else 0

    def deletable_segments(self, predicate: Predicate) -> list[LogSegment]:
        """RET-5: the oldest segments, in order, while each is below the high watermark, passes
        ``predicate(segment, next_segment)`` and is not an empty last segment."""
        segments = self.segments.values()
        deletable = []
        for i, segment in enumerate(segments):
            next_segment = segments[i + 1] if i + 1 < len(segments) else None
            is_last_and_empty = next_segment is None and segment.size == 0
            upper_bound = next_segment.base_offset if next_segment else self.log_end_offset
            # the predicate runs only below the high watermark (the size pass counts on it)
            if not (self.high_watermark >= upper_bound and predicate(segment, next_segment)):
                break
            if is_last_and_empty:
                break
            deletable.append(segment)
        return deletable

    def _delete_segments(self, deletable: list[LogSegment]) -> int:
        """RET-11 to RET-13: roll first if every segment goes, raise the log start offset to
        the next segment's base, then remove the segments and rename their files."""
        to_delete = deletable
        if self.segments.number_of_segments() == len(deletable):
            new_segment = self._roll(None)  # a log always keeps one segment
            if deletable[-1].base_offset == new_segment.base_offset:
                to_delete = deletable[:-1]  # the empty active segment was recreated by the roll
        if to_delete:
            next_segment = self.segments.higher_segment(to_delete[-1].base_offset)
            self._maybe_increment_log_start_offset(next_segment.base_offset)
            self.local_log.remove_and_delete_segments(to_delete)
            self._delete_producer_snapshots(to_delete)
        self._write_checkpoints()
        return len(deletable)
