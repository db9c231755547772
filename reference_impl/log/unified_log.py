"""UnifiedLog (exported as ``Log`` too): one partition directory, Kafka's UnifiedLog
[core/.../log/UnifiedLog.scala] (spec/behaviour/model.md, read.md, flush.md, roll.md).

The log appends to its active (last) segment and rolls to a new one when a roll
condition holds; reads find a segment by offset; truncation and retention remove
data from the end and from the start. It keeps three offsets:

* the **log start offset**, below which nothing may be read;
* the **log end offset** (LEO), the offset the next append gets;
* the **recovery point**: every offset below it is known to be on disk.

This is a single-replica model: the high watermark is always the LEO (so segment
deletion and the log start offset are bounded by the LEO). Each append also runs
through the **producer state** (producer_state_manager.py): duplicates of an
idempotent producer's recent batches are not written again, sequences and epochs are
checked, transactions are tracked, aborted ones indexed in ``.txnindex``, and the
**last stable offset** (the first offset of a transaction still open) bounds
read_committed reads. The segment files and the LEO and recovery point are
LocalLog's (local_log.py). The operations are grouped by spec chapter, each a mixin of
``UnifiedLog``: append.py, truncation.py (truncate.md) and retention.py (one class
would be ~770 lines, past the module limit); the roll is here, its conditions roll.py's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..constants import INT32_MAX, UNKNOWN_OFFSET
from ..errors import Category, LogOperationError
from ..formats.file_naming import parse_partition_dir_name
from . import checkpoint_files as ckpt
from .append import LogAppend
from .clean_shutdown import LOG_DIRS
from .clock import Clock, SystemClock
from .config import LogConfig
from .fetch import FetchDataInfo, FetchIsolation, LogOffsetMetadata
from .file_records import TimestampAndOffset
from .leader_epoch import LeaderEpochFileCache
from .loader import LoadOptions, load_partition
from .local_log import LocalLog, offset_out_of_range
from .log_segments import LogSegments
from .log_validator import LogAppendInfo
from .offset_overflow import replace_segments
from .producer_state_manager import ProducerStateManager
from .producer_state_rebuild import (
    delete_producer_snapshots,
)
from .retention import LogRetention
from .roll import RollParams
from .scheduler import Scheduler
from .segment import LogSegment
from .timestamp_lookup import fetch_offset_by_timestamp
from .truncation import LogTruncation


@dataclass(frozen=True, slots=True)
class SegmentState:
    base_offset: int
    size_bytes: int


@dataclass(frozen=True, slots=True)
class LogState:
    """The conformance contract's ``state()``."""

    log_start_offset: int
    log_end_offset: int
    recovery_point: int
    segments: tuple[SegmentState, ...]
    last_stable_offset: int


class UnifiedLog(LogAppend, LogTruncation, LogRetention):
    def __init__(
        self,
        local_log: LocalLog,
        log_start_offset: int,
        leader_epoch_cache: LeaderEpochFileCache,
        topic_id: str | None,
        producer_state_manager: ProducerStateManager | None = None,
    ) -> None:
        self.local_log = local_log
        self.dir = local_log.dir
        self.config = local_log.config
        self.clock = local_log.clock
        self.scheduler = local_log.scheduler
        # RECOV-9: as UnifiedLog's constructor (updateLogStartOffset), a loaded recovery point
        # below the log start offset is raised to it
        self._update_log_start_offset(log_start_offset)
        self.leader_epoch_cache = leader_epoch_cache
        self.topic_id = topic_id
        self.producer_state_manager = producer_state_manager or ProducerStateManager(self.dir)
        self.first_unstable_offset: int | None = None
        partition = parse_partition_dir_name(self.dir.name)
        self.topic, self.partition = partition.topic, partition.partition
        self._closed = False
        self._tracks_marker = False  # set by open(): close() then writes the clean marker

    # --- opening ---
    @classmethod
    def open(
        cls,
        dir: str | Path,
        config: LogConfig | None = None,
        clock: Clock | None = None,
        *,
        topic_id: str | None = None,
        load: LoadOptions | None = None,
    ) -> UnifiedLog:
        """Create the partition directory, or load the log it holds (recovery.md).

        The directory's name must be ``<topic>-<partition>``; the offset checkpoints and the
        clean-shutdown marker live in its parent, the log directory. Unless ``load`` says
        whether the last shutdown was clean, the marker decides (LOAD-1, LOAD-2) and
        ``close()`` writes it back (LOAD-3). ``topic_id`` (Kafka's Uuid text) is written to
        ``partition.metadata`` if that file is missing and must match it otherwise
        (``inconsistent_topic_id``).
        """
        dir = Path(dir)
        config = config or LogConfig()
        clock = clock or SystemClock()
        load = load or LoadOptions()
        parse_partition_dir_name(dir.name)  # DIR-3: refuse a bad name before creating it
        dir.mkdir(parents=True, exist_ok=True)
        tracks_marker = load.had_clean_shutdown is None
        had_clean_shutdown = (
            LOG_DIRS.opening(dir.parent) if tracks_marker else load.had_clean_shutdown
        )
        try:
            log = cls._load(dir, config, clock, topic_id, load, had_clean_shutdown)
        except BaseException:
            if tracks_marker:
                LOG_DIRS.closed(dir.parent, clean=False)  # a failed load: next start unclean
            raise
        log._tracks_marker = tracks_marker
        return log

    @classmethod
    def _load(cls, dir, config, clock, topic_id, load, had_clean_shutdown) -> UnifiedLog:
        topic_id = ckpt.initialize_topic_id(dir / ckpt.PARTITION_METADATA, topic_id)
        scheduler = Scheduler(clock)
        cache = LeaderEpochFileCache(dir / ckpt.LEADER_EPOCH_CHECKPOINT)
        segments = LogSegments()
        psm = ProducerStateManager(dir)
        loaded = load_partition(
            dir, config, clock, scheduler, segments, cache, load, had_clean_shutdown, psm
        )
        local_log = LocalLog(
            dir,
            config,
            clock,
            scheduler,
            segments,
            loaded.recovery_point,
            loaded.next_offset_metadata,
        )
        log = cls(local_log, loaded.log_start_offset, cache, topic_id, psm)
        log._update_high_watermark()
        log._write_checkpoints()
        return log

    # --- offsets ---
    @property
    def segments(self) -> LogSegments:
        return self.local_log.segments

    @property
    def log_end_offset(self) -> int:
        return self.local_log.log_end_offset

    @property
    def log_end_offset_metadata(self) -> LogOffsetMetadata:
        return self.local_log.log_end_offset_metadata

    @property
    def recovery_point(self) -> int:
        return self.local_log.recovery_point

    @property
    def high_watermark(self) -> int:
        """Single replica: everything appended is committed."""
        return self.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        """TXN-B-7: the first offset of a transaction not yet decided, but never above the
        high watermark."""
        first = self.first_unstable_offset
        return first if first is not None and first < self.high_watermark else self.high_watermark

    def _update_high_watermark(self) -> None:
        """The high watermark moved to the LEO: completed transactions are replicated."""
        self.producer_state_manager.on_high_watermark_updated(self.high_watermark)
        self._maybe_increment_first_unstable_offset()

    def _maybe_increment_first_unstable_offset(self) -> None:
        first = self.producer_state_manager.first_unstable_offset()
        self.first_unstable_offset = None if first is None else max(first, self.log_start_offset)

    @property
    def active_segment(self) -> LogSegment:
        return self.segments.active_segment

    def log_segments(self) -> list[LogSegment]:
        return self.segments.values()

    @property
    def number_of_segments(self) -> int:
        return self.segments.number_of_segments()

    @property
    def size(self) -> int:
        return self.segments.size_in_bytes()

    def maybe_assign_epoch_start_offset(self, leader_epoch: int, start_offset: int) -> None:
        """LEPOCH-4: a new leader records where its epoch starts (Kafka, on becoming leader)."""
        self.leader_epoch_cache.assign(leader_epoch, start_offset)

    @property
    def latest_epoch(self) -> int | None:
        return self.leader_epoch_cache.latest_epoch()

    def _update_log_start_offset(self, offset: int) -> None:
        """A new log start offset raises the recovery point with it."""
        self.log_start_offset = offset
        if self.local_log.recovery_point < offset:
            self.local_log.recovery_point = offset

    def _begin(self) -> None:
        """Every operation: refuse a closed log, then run the file deletions now due."""
        if self._closed:
            raise LogOperationError(Category.LOG_CLOSED, f"the log in {self.dir} is closed")
        self.scheduler.run_due()

    # --- flush (FLUSH) ---
    def flush(self, offset: int | None = None, *, including_offset: bool = False) -> None:
        """FLUSH-2, FLUSH-5: fsync what lies between the recovery point and ``offset`` (default the LEO;
        ``including_offset`` adds the segment holding it, so an empty active segment is
        synced too, creating its index files), then raise the recovery point to ``offset``."""
        self._begin()
        self._flush(self.log_end_offset if offset is None else offset, including_offset)

    def _flush(self, offset: int, including_offset: bool) -> None:
        flush_offset = offset + 1 if including_offset else offset
        if flush_offset > self.local_log.recovery_point:
            self.local_log.flush(flush_offset)
            self.local_log.mark_flushed(offset)
            self._write_checkpoints()

    # --- roll (ROLL) ---

    def maybe_roll(self, messages_size: int, info: LogAppendInfo) -> LogSegment:
        """ROLL-1, ROLL-11: roll when a roll condition holds, at the set's first offset (a legacy
        follower set's unknown: its last offset - (2^31 - 1)), raised to the LEO by the roll."""
        segment = self.segments.active_segment
        if not segment.should_roll(self.roll_params(messages_size, info)):
            return segment
        if info.first_offset == UNKNOWN_OFFSET:
            return self._roll(info.last_offset - INT32_MAX)
        return self._roll(info.first_offset)

    def roll_params(self, messages_size: int, info: LogAppendInfo) -> RollParams:
        """What the roll conditions look at before appending ``info``'s set."""
        return RollParams(
            max_segment_ms=self.config.max_segment_ms,
            max_segment_bytes=self.config.segment_bytes,
            max_timestamp_in_messages=info.max_timestamp,
            max_offset_in_messages=info.last_offset,
            messages_size=messages_size,
            now=self.clock.milliseconds(),
        )

    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """ROLL-12, FLUSH-4: start a new active segment at max(``expected_next_offset``, LEO)."""
        self._begin()
        return self._roll(expected_next_offset)

    def _roll(self, expected_next_offset: int | None) -> LogSegment:
        new_segment = self.local_log.roll(expected_next_offset)
        # SNAP-B-1: a snapshot named after the new base, so recovering the new segment can
        # start from it; the map end offset is set to the base (it may lie above the LEO)
        self.producer_state_manager.update_map_end_offset(new_segment.base_offset)
        self.producer_state_manager.take_snapshot()
        # Kafka flushes up to the new base in the background; the reference does it at once
        self._flush(new_segment.base_offset, including_offset=False)
        return new_segment

    # --- read (READ) ---
    def read(
        self,
        start_offset: int,
        max_bytes: int,
        max_offset: int | None = None,
        min_one_message: bool = False,
        isolation: FetchIsolation = FetchIsolation.HIGH_WATERMARK,
    ) -> FetchDataInfo:
        """READ-1 to READ-14: whole batches from the one holding ``start_offset``: at most ``max_bytes``
        (the last batch may be cut; ``min_one_message`` returns the first whole), and none
        at or past ``max_offset`` (default, and at most, the LEO: Kafka's high watermark).
        READ-21, READ-22: ``TXN_COMMITTED`` also stops at the last stable offset and adds the
        aborted transactions overlapping what was read.

        Below the log start offset, above the LEO, or with no segment at or below it,
        ``start_offset`` is ``offset_out_of_range``.
        """
        self._begin()
        if start_offset < self.log_start_offset:
            raise offset_out_of_range(start_offset, f"the log starts at {self.log_start_offset}")
        committed = isolation is FetchIsolation.TXN_COMMITTED
        bound = self.log_end_offset if max_offset is None else max_offset
        if committed:
            bound = min(bound, self.last_stable_offset)
        if bound >= self.log_end_offset:
            max_metadata = self.local_log.log_end_offset_metadata
        else:
            max_metadata = self.local_log.convert_to_offset_metadata_or_throw(bound)
        return self.local_log.read(
            start_offset, max_bytes, min_one_message, max_metadata, committed
        )

    def fetch_offset_by_timestamp(self, target_timestamp: int) -> TimestampAndOffset | None:
        """READ-15 to READ-20: ListOffsets, the first offset whose record timestamp is >= the target, or a
        special target (timestamp_lookup.py)."""
        self._begin()
        return fetch_offset_by_timestamp(
            self.segments,
            self.leader_epoch_cache,
            target_timestamp,
            log_start_offset=self.log_start_offset,
            log_end_offset=self.log_end_offset,
        )

    def replace_segments(self, new_segments: list[LogSegment], old: list[LogSegment]) -> None:
        """COMPACT-23, COMPACT-24 [UnifiedLog.replaceSegments]: the cleaner's new segments take the
        old ones' place by the ``.cleaned`` -> ``.swap`` -> final-name protocol; the producer
        snapshots of old segments no new one replaces go with them."""
        replaced = replace_segments(
            self.segments, new_segments, old, self.dir, self.config, self.scheduler
        )
        self._delete_producer_snapshots(replaced)

    def _delete_producer_snapshots(self, segments: list[LogSegment]) -> None:
        """SNAP-B-8: the snapshots at the removed segments' bases go ``.deleted``, then away
        with the segments' files."""
        delete_producer_snapshots(
            segments,
            self.producer_state_manager,
            async_delete=True,
            scheduler=self.scheduler,
            file_delete_delay_ms=self.config.file_delete_delay_ms,
        )

    # --- checkpoints (CKPT-B) ---
    def _write_checkpoints(self) -> None:
        """CKPT-B-5 to CKPT-B-7: both root checkpoints, with this partition's line: the recovery point always,
        the log start offset only when it is above the first segment's base offset."""
        root = self.dir.parent
        ckpt.update_offset(
            root / ckpt.RECOVERY_POINT_CHECKPOINT, self.topic, self.partition, self.recovery_point
        )
        first = self.segments.first_segment
        above_first = first is not None and self.log_start_offset > first.base_offset
        ckpt.update_offset(
            root / ckpt.LOG_START_OFFSET_CHECKPOINT,
            self.topic,
            self.partition,
            self.log_start_offset if above_first else None,
        )

    # --- closing ---
    def close(self) -> None:
        """FLUSH-7 to FLUSH-10, LOAD-3: a clean shutdown of this log: flush everything (the empty
        active segment included), close every segment (final time-index entries, trims, fsync),
        write the checkpoints, then the log directory's clean-shutdown marker (once its last
        open log closes); deletions not yet due are dropped, as Kafka's scheduler drops them."""
        self._begin()
        self._flush(self.log_end_offset, including_offset=True)
        self.producer_state_manager.take_snapshot()  # SNAP-B-1: the LEO snapshot
        self.local_log.close()
        self._write_checkpoints()
        self.scheduler.shutdown()
        self._closed = True
        if self._tracks_marker:
            LOG_DIRS.closed(self.dir.parent, clean=True)

    def close_handlers(self) -> None:
        """MODEL-12: close every file without writing (an offline log directory); any later
        operation is ``log_closed``. The directory gets no clean-shutdown marker."""
        if self._closed:
            return
        self.local_log.close_handlers()
        self.scheduler.shutdown()
        self._closed = True
        if self._tracks_marker:
            LOG_DIRS.closed(self.dir.parent, clean=False)

    def crash(self) -> None:
        """A process crash, for tests and the conformance testee (LOAD-3): every file is
        closed without a flush, trim or final index entry, and no checkpoint or marker is
        written; pending deletions are lost. Bytes already written stay, as after a kill."""
        self.close_handlers()

    @property
    def closed(self) -> bool:
        return self._closed

    def state(self) -> LogState:
        """The conformance contract's ``state``: offsets and segments."""
        self._begin()
        return LogState(
            log_start_offset=self.log_start_offset,
            log_end_offset=self.log_end_offset,
            recovery_point=self.recovery_point,
            segments=tuple(SegmentState(s.base_offset, s.size) for s in self.segments.values()),
            last_stable_offset=self.last_stable_offset,
        )


Log = UnifiedLog  # the name the docs, tests and tools have used
