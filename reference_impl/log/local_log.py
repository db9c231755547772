"""LocalLog: a partition's segments on disk, and the offsets that describe them
(spec/behaviour/read.md, truncate.md, roll.md, flush.md).

Kafka splits a partition's log in two [core/.../log/LocalLog.scala]: LocalLog owns
the segment files (roll, read, truncate, flush, delete) and two offsets, the
**log end offset** (where the next append goes, and where that is on disk) and
the **recovery point** (every offset below it is on disk); UnifiedLog (``Log``,
unified_log.py) adds validation, the log start offset, retention, the leader epoch cache
and the checkpoint files. The reference keeps the same split so each half reads
beside Kafka's.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import Category, LogOperationError
from ..formats.file_naming import DELETED_FILE_SUFFIX
from ..formats.index_entries import AbortedTxn, OffsetPosition
from .checkpoint_files import fsync_dir
from .clock import Clock
from .config import LogConfig
from .deletion import delete_segment_files, delete_segment_files_if_exist
from .fetch import FetchDataInfo, LogOffsetMetadata
from .log_segments import LogSegments
from .scheduler import Scheduler
from .segment import LogSegment


def offset_out_of_range(offset: int, why: str) -> LogOperationError:
    return LogOperationError(
        Category.OFFSET_OUT_OF_RANGE, f"offset {offset} is out of range: {why}", offset=offset
    )


class LocalLog:
    def __init__(
        self,
        dir: Path,
        config: LogConfig,
        clock: Clock,
        scheduler: Scheduler,
        segments: LogSegments,
        recovery_point: int,
        next_offset_metadata: LogOffsetMetadata,
    ) -> None:
        self.dir = dir
        self.config = config
        self.clock = clock
        self.scheduler = scheduler
        self.segments = segments
        self.recovery_point = recovery_point
        self._next_offset_metadata = next_offset_metadata

    # --- offsets ---
    @property
    def log_end_offset(self) -> int:
        return self._next_offset_metadata.message_offset

    @property
    def log_end_offset_metadata(self) -> LogOffsetMetadata:
        return self._next_offset_metadata

    def update_log_end_offset(self, end_offset: int) -> None:
        """The LEO and where it is on disk; a recovery point above it comes down to it."""
        active = self.segments.active_segment
        self._next_offset_metadata = LogOffsetMetadata(end_offset, active.base_offset, active.size)
        if self.recovery_point > end_offset:
            self.recovery_point = end_offset

    def mark_flushed(self, offset: int) -> None:
        if offset > self.recovery_point:
            self.recovery_point = offset

    # --- writing ---
    def append(self, last_offset: int, records: bytes) -> None:
        self.segments.active_segment.append(last_offset, records)
        self.update_log_end_offset(last_offset + 1)

    def flush(self, offset: int) -> None:
        """FLUSH-2: fsync the segments holding offsets in [recovery point, ``offset``), and the
        directory when one of them is new since the last flush (its name must be durable).
        The caller moves the recovery point."""
        current = self.recovery_point
        if current > offset:
            return
        to_flush = self.segments.values(current, offset)
        for segment in to_flush:
            segment.flush()
        if any(segment.base_offset >= current for segment in to_flush):
            fsync_dir(self.dir)

    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """ROLL-12 to ROLL-19: a new active segment at max(``expected_next_offset``, LEO).

        The old active segment gets its final time-index entry and is trimmed. If a
        segment already has that base offset: an empty active segment is replaced by a
        fresh one (its files go ``.deleted``, KAFKA-6388); anything else is
        ``invalid_roll_offset``, as is a base below the active segment's.
        """
        new_offset = max(expected_next_offset or 0, self.log_end_offset)
        active = self.segments.active_segment
        if self.segments.contains(new_offset):
            if active.base_offset == new_offset and active.size == 0:
                new_segment = self.create_and_delete_segment(new_offset, active)
                self.update_log_end_offset(self.log_end_offset)
                return new_segment
            raise LogOperationError(
                Category.INVALID_ROLL_OFFSET,
                f"trying to roll a new log segment with start offset {new_offset} while it "
                f"already exists",
                offset=new_offset,
            )
        if new_offset < active.base_offset:
            raise LogOperationError(
                Category.INVALID_ROLL_OFFSET,
                f"trying to roll a new log segment with start offset {new_offset} lower than "
                f"the start offset {active.base_offset} of the active segment",
                offset=new_offset,
            )
        delete_segment_files_if_exist(self.dir, new_offset)
        active.on_become_inactive_segment()
        new_segment = self.segments.add(self.open_segment(new_offset))
        self.update_log_end_offset(self.log_end_offset)  # same offset, new segment and position
        return new_segment

    def open_segment(self, base_offset: int) -> LogSegment:
        return LogSegment.open(
            self.dir,
            base_offset,
            self.config,
            self.clock,
            init_file_size=self.config.init_file_size,
            preallocate=self.config.preallocate,
        )

    # --- reading (READ) ---
    def read(
        self,
        start_offset: int,
        max_length: int,
        min_one_message: bool,
        max_offset_metadata: LogOffsetMetadata,
        include_aborted_txns: bool = False,
    ) -> FetchDataInfo:
        """READ-2, READ-3, READ-5, READ-6, READ-8, READ-10: from the segment at or below ``start_offset``, moving to later segments
        while a segment has no batch reaching it; nothing at or past the max offset.

        ``start_offset`` above the LEO, or below every segment, is ``offset_out_of_range``.
        A start equal to the max offset gives no bytes, with the max offset's metadata.
        ``include_aborted_txns`` adds the aborted transactions overlapping the result.
        """
        end_offset = self.log_end_offset
        segment = self.segments.floor_segment(start_offset)
        if start_offset > end_offset or segment is None:
            raise offset_out_of_range(start_offset, f"the log has segments up to {end_offset}")
        empty = () if include_aborted_txns else None
        if start_offset == max_offset_metadata.message_offset:
            return FetchDataInfo(max_offset_metadata, aborted_transactions=empty)
        if start_offset > max_offset_metadata.message_offset:
            where = self.convert_to_offset_metadata_or_throw(start_offset)
            return FetchDataInfo(where, aborted_transactions=empty)
        while segment is not None:
            if segment.base_offset < max_offset_metadata.segment_base_offset:
                max_position = segment.size
            elif (
                segment.base_offset == max_offset_metadata.segment_base_offset
                and not max_offset_metadata.message_offset_only()
            ):
                max_position = max_offset_metadata.relative_position_in_segment
            else:
                max_position = None  # past the bound: only where the read would start
            fetch = segment.read(start_offset, max_length, max_position, min_one_message)
            if fetch is not None:
                if include_aborted_txns:
                    return self._add_aborted_transactions(start_offset, segment, fetch)
                return fetch
            segment = self.segments.higher_segment(segment.base_offset)
        # no batch at or after start_offset is left: an empty result at the LEO
        return FetchDataInfo(self._next_offset_metadata)

    def _add_aborted_transactions(
        self, start_offset: int, segment: LogSegment, fetch: FetchDataInfo
    ) -> FetchDataInfo:
        """READ-22: the fetched range ends at the first index entry past its bytes, else at the
        next segment's base, else at the LEO; every aborted transaction overlapping
        [start_offset, that bound) is collected, segment by segment, until a txn index
        says no later one can add any."""
        start = OffsetPosition(
            fetch.fetch_offset_metadata.message_offset,
            fetch.fetch_offset_metadata.relative_position_in_segment,
        )
        upper_bound = segment.fetch_upper_bound_offset(start, fetch.size_in_bytes)
        if upper_bound is None:
            following = self.segments.higher_segment(segment.base_offset)
            upper_bound = following.base_offset if following else self.log_end_offset
        return fetch.with_aborted_transactions(
            self.collect_aborted_transactions(segment, start_offset, upper_bound)
        )

    def collect_aborted_transactions(
        self, first: LogSegment, start_offset: int, upper_bound_offset: int
    ) -> list[AbortedTxn]:
        aborted: list[AbortedTxn] = []
        for segment in [first, *self.segments.higher_segments(first.base_offset)]:
            result = segment.collect_aborted_txns(start_offset, upper_bound_offset)
            aborted.extend(result.aborted_transactions)
            if result.is_complete:
                break
        return aborted

    def convert_to_offset_metadata_or_throw(self, offset: int) -> LogOffsetMetadata:
        """Where ``offset`` is on disk, as a 1-byte read from it finds it."""
        return self.read(offset, 1, False, self._next_offset_metadata).fetch_offset_metadata

    # --- truncation (TRUNC) ---
    def truncate_to(self, target_offset: int) -> list[LogSegment]:
        """TRUNC-4 to TRUNC-6: delete the segments whose base offset is above the target (one whose base
        equals it stays, empty), cut the active segment, LEO = target."""
        deletable = self.segments.filter(lambda s: s.base_offset > target_offset)
        self.remove_and_delete_segments(deletable)
        self.segments.active_segment.truncate_to(target_offset)
        self.update_log_end_offset(target_offset)
        return deletable

    def truncate_fully_and_start_at(self, new_offset: int) -> list[LogSegment]:
        """TRUNC-13: delete every segment; a new empty one starts at ``new_offset``."""
        existing = self.segments.values()
        if existing:
            self.remove_and_delete_segments(existing[:-1])
            self.create_and_delete_segment(new_offset, existing[-1])
        self.update_log_end_offset(new_offset)
        return existing

    # --- removing segments ---
    def remove_and_delete_segments(self, segments: list[LogSegment]) -> None:
        """Take ``segments`` out of the log, then rename and (later) delete their files."""
        for segment in segments:
            self.segments.remove(segment.base_offset)
        if segments:
            self._delete_segment_files(segments)

    def create_and_delete_segment(self, new_offset: int, old: LogSegment) -> LogSegment:
        """Replace ``old`` by a new empty segment at ``new_offset``, the log never being left
        without one; at the same base offset the old files go ``.deleted`` first so the
        new ones can take their names."""
        if new_offset == old.base_offset:
            old.change_file_suffixes("", DELETED_FILE_SUFFIX)
        new_segment = self.segments.add(self.open_segment(new_offset))
        if new_offset != old.base_offset:
            self.segments.remove(old.base_offset)
        self._delete_segment_files([old])
        return new_segment

    def _delete_segment_files(self, segments: list[LogSegment]) -> None:
        delete_segment_files(
            segments,
            async_delete=True,
            scheduler=self.scheduler,
            file_delete_delay_ms=self.config.file_delete_delay_ms,
        )

    # --- closing ---
    def close(self) -> None:
        self.segments.close()

    def close_handlers(self) -> None:
        self.segments.close_handlers()
