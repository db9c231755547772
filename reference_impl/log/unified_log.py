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
LocalLog's (local_log.py). As Kafka's, this is one class, its operations grouped by spec
chapter: append (append.md, producer-state.md §2-§3), roll (roll.md; the conditions are
roll.py's), read, truncation (truncate.md), retention (retention.md), checkpoints, close.
It is the one module past the 420-line limit (tests/test_reading_order.py says why).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import kernels
from ..constants import INT32_MAX, UNKNOWN_OFFSET
from ..errors import Category, InvalidArgumentError, LogOperationError
from ..formats.file_naming import parse_partition_dir_name
from ..records import TimestampType
from ..records.stream import iter_memory_batches
from . import checkpoint_files as ckpt
from .clean_shutdown import LOG_DIRS
from .clock import Clock, SystemClock
from .config import LogConfig
from .fetch import FetchDataInfo, FetchIsolation, LogOffsetMetadata
from .file_records import TimestampAndOffset
from .leader_epoch import LeaderEpochFileCache
from .loader import LoadOptions, load_partition
from .local_log import LocalLog, offset_out_of_range
from .log_cleaner_manager import maybe_truncate_checkpoint
from .log_segments import LogSegments
from .log_validator import (
    AppendOrigin,
    LogAppendInfo,
    analyze_and_validate_records,
    assign_offsets_as_leader,
)
from .offset_overflow import replace_segments
from .producer_state import BatchMetadata, CompletedTxn, ProducerAppendInfo, has_producer_id
from .producer_state_manager import ProducerStateManager
from .producer_state_rebuild import (
    delete_producer_snapshots,
    rebuild_producer_state,
    update_producers,
)
from .roll import RollParams
from .scheduler import Scheduler
from .segment import LogSegment
from .storage import storage
from .timestamp_lookup import fetch_offset_by_timestamp

Predicate = Callable[[LogSegment, LogSegment | None], bool]  # a retention pass's test
_lean_append = None  # the compiled path of a client's common batch, at the end


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


class UnifiedLog:
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
        storage().make_dirs(dir)
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

    def begin_operation(self) -> None:
        """Every operation, and a caller driving the log's parts itself (the conformance
        adapter's clean): refuse a closed log, then run the file deletions now due."""
        if self._closed:
            raise LogOperationError(Category.LOG_CLOSED, f"the log in {self.dir} is closed")
        self.scheduler.run_due()

    # --- flush (FLUSH) ---
    def flush(self, offset: int | None = None, *, including_offset: bool = False) -> None:
        """FLUSH-2, FLUSH-5: fsync what lies between the recovery point and ``offset`` (default the LEO;
        ``including_offset`` adds the segment holding it, so an empty active segment is
        synced too, creating its index files), then raise the recovery point to ``offset``."""
        self.begin_operation()
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
        self.begin_operation()
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
        self.begin_operation()
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
        self.begin_operation()
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

    # --- append (APPEND, PSTATE) ---
    def append_as_leader(
        self, records: bytes, leader_epoch: int, origin: AppendOrigin = AppendOrigin.CLIENT
    ) -> LogAppendInfo:
        """APPEND-5 to APPEND-17: a client's batch, given offsets from the LEO and stamped with ``leader_epoch``.
        ``origin`` COORDINATOR is the transaction coordinator writing a marker (TXN-B-5)."""
        return self._append(records, origin, True, leader_epoch, False)

    def append_as_follower(self, records: bytes) -> LogAppendInfo:
        """APPEND-9, APPEND-18, APPEND-19: batches that keep their offsets, which must increase and start at or
        after the LEO (gaps allowed); ``max.message.bytes`` is not checked."""
        return self._append(records, AppendOrigin.REPLICATION, False, -1, True)

    def _append(
        self,
        records: bytes,
        origin: AppendOrigin,
        assign_offsets: bool,
        leader_epoch: int,
        ignore_record_size: bool,
    ) -> LogAppendInfo:
        self.begin_operation()
        lean = assign_offsets and origin is AppendOrigin.CLIENT and not self.config.compact
        if _lean_append is not None and lean:
            info = _lean_append(self, records, leader_epoch)  # None: nothing done, not common
            if info is not None:  # written, and its producer's entry updated
                return self._after_write(self.active_segment, {}, [], info)
        info = analyze_and_validate_records(
            records,
            origin=origin,
            ignore_record_size=ignore_record_size,
            require_offsets_monotonic=not assign_offsets,
            max_message_bytes=self.config.max_message_bytes,
            log_start_offset=self.log_start_offset,
        )
        if info.valid_bytes <= 0:
            return info  # an empty set (or only a partial batch) writes and rolls nothing
        valid = records[: info.valid_bytes]  # a partial batch at the end is dropped
        if assign_offsets:
            valid = self._assign_offsets(info, valid, leader_epoch, origin)
        elif info.first_or_last_offset_of_first_batch < self.log_end_offset:
            first = next(iter_memory_batches(valid)).base_offset  # a legacy wrapper decompresses
            raise LogOperationError(
                Category.UNEXPECTED_APPEND_OFFSET,
                f"first offset (or, for a legacy batch, its last offset) "
                f"{info.first_or_last_offset_of_first_batch} is less than the next offset "
                f"{self.log_end_offset}; the append holds offsets {first} to {info.last_offset}",
                offset=first,
            )
        batches = list(iter_memory_batches(valid))
        self._check_before_write(batches, len(valid))
        # LEPOCH-5: the epoch cache learns each v2 batch's epoch; a legacy batch empties it
        for batch in batches:
            if batch.magic >= 2:
                self.leader_epoch_cache.assign(batch.partition_leader_epoch, batch.base_offset)
            elif self.leader_epoch_cache.epoch_entries():
                self.leader_epoch_cache.clear_and_flush()
        segment = self.maybe_roll(len(valid), info)
        producers, completed, duplicate = self._analyze_and_validate_producer_state(batches, origin)
        if duplicate is not None:  # PSTATE-4: the earlier batch's offsets, nothing written
            info.first_offset, info.last_offset = duplicate.first_offset, duplicate.last_offset
            info.log_append_time = duplicate.timestamp
            info.log_start_offset = self.log_start_offset
            return info
        self.local_log.append(info.last_offset, valid)
        return self._after_write(segment, producers, completed, info)

    def _after_write(self, segment, producers, completed, info: LogAppendInfo) -> LogAppendInfo:
        """The producers' state, then a flush when ``flush_messages`` are unflushed."""
        self._update_producer_state(segment, producers, completed, info.last_offset)
        if self.log_end_offset - self.recovery_point >= self.config.flush_messages:
            self._flush(self.log_end_offset, including_offset=False)
        return info

    def _check_before_write(self, batches: list, size: int) -> None:
        """APPEND-20, APPEND-21: a v2 batch's negative leader epoch and a set larger than
        ``segment_bytes`` are refused before any change; Kafka checks them after updating the
        epoch cache, so a refused set can leave an epoch entry (append.md §1, Deviation)."""
        for batch in batches:
            if batch.magic >= 2 and batch.partition_leader_epoch < 0:
                raise InvalidArgumentError(
                    f"a batch at offset {batch.base_offset} carries the negative leader epoch "
                    f"{batch.partition_leader_epoch} into the epoch cache",
                    offset=batch.base_offset,
                )
        if size > self.config.segment_bytes:
            raise LogOperationError(
                Category.RECORD_BATCH_TOO_LARGE,
                f"message batch size is {size} bytes, which exceeds the maximum configured "
                f"segment size of {self.config.segment_bytes}",
            )

    def _assign_offsets(
        self, info: LogAppendInfo, records: bytes, leader_epoch: int, origin: AppendOrigin
    ) -> bytes:
        """APPEND-10 to APPEND-17: a leader's set given offsets from the LEO and stamped
        (log_validator.py); ``info`` takes its offsets and timestamps. Returns the bytes
        to write."""
        result = assign_offsets_as_leader(
            records,
            next_offset=self.log_end_offset,
            now=self.clock.milliseconds(),
            timestamp_type=self.config.message_timestamp_type,
            leader_epoch=leader_epoch,
            origin=origin,
            compacted_topic=self.config.compact,
        )
        info.first_offset = self.log_end_offset
        info.last_offset = result.last_offset
        info.max_timestamp = result.max_timestamp
        info.shallow_offset_of_max_timestamp = result.shallow_offset_of_max_timestamp
        if self.config.message_timestamp_type is TimestampType.LOG_APPEND_TIME:
            info.log_append_time = result.log_append_time
        return result.validated_records

    def _analyze_and_validate_producer_state(
        self, batches: list, origin: AppendOrigin
    ) -> tuple[dict[int, ProducerAppendInfo], list[CompletedTxn], BatchMetadata | None]:
        """PSTATE-4 to PSTATE-9: check each batch with a producer id against its producer's
        state; a client's retry of a recent batch is a duplicate. Nothing changes yet."""
        producers: dict[int, ProducerAppendInfo] = {}
        completed: list[CompletedTxn] = []
        psm = self.producer_state_manager
        for batch in batches:
            if not has_producer_id(batch):
                continue
            if origin is AppendOrigin.CLIENT:
                entry = psm.last_entry(batch.producer_id)
                duplicate = entry.find_duplicate_batch(batch) if entry else None
                if duplicate is not None:
                    return producers, completed, duplicate
            txn = update_producers(psm, batch, producers, origin)
            if txn is not None:
                completed.append(txn)
        return producers, completed, None

    def _update_producer_state(
        self,
        segment: LogSegment,
        producers: dict[int, ProducerAppendInfo],
        completed: list[CompletedTxn],
        last_offset: int,
    ) -> None:
        """After the write: apply the producers' state, index aborted transactions with the
        last stable offset of the moment (TXN-B-5, TXN-B-6), move the map end offset."""
        psm = self.producer_state_manager
        for append_info in producers.values():
            psm.update(append_info)
        for txn in completed:
            segment.update_txn_index(txn, psm.last_stable_offset(txn))
            psm.complete_txn(txn)
        psm.update_map_end_offset(last_offset + 1)
        self._update_high_watermark()

    # --- truncation (TRUNC) ---
    def truncate_to(self, target_offset: int) -> bool:
        """TRUNC-1 to TRUNC-7, LEPOCH-8: remove every batch holding an offset >= ``target_offset``.

        At or past the LEO nothing changes (False), though the epoch cache still drops
        entries from the LEO on. Below the first segment's base this is
        ``truncate_fully_and_start_at``. Otherwise later segments go, the active one is
        cut on a batch boundary, LEO = target (even inside a removed batch), and a log
        start offset above the target comes down to it.
        """
        self.begin_operation()
        if target_offset < 0:
            raise InvalidArgumentError(f"cannot truncate to a negative offset ({target_offset})")
        # COMPACT-27: a cut below the active segment also cuts the cleaner's checkpoint
        below_active = target_offset < self.active_segment.base_offset
        truncated = self._truncate_to(target_offset)
        if below_active:
            maybe_truncate_checkpoint(self, self.active_segment.base_offset)
        return truncated

    def _truncate_to(self, target_offset: int) -> bool:
        if target_offset >= self.log_end_offset:
            self.leader_epoch_cache.truncate_from_end(self.log_end_offset)
            return False
        if self.segments.first_segment.base_offset > target_offset:
            self._truncate_fully_and_start_at(target_offset, None)
            return True
        deleted = self.local_log.truncate_to(target_offset)
        self._delete_producer_snapshots(deleted)
        self.leader_epoch_cache.truncate_from_end(target_offset)
        self.log_start_offset = min(target_offset, self.log_start_offset)
        self._rebuild_producer_state(target_offset)  # SNAP-B-5
        self._write_checkpoints()
        return True

    def truncate_fully_and_start_at(
        self, new_offset: int, log_start_offset: int | None = None
    ) -> None:
        """TRUNC-12 to TRUNC-15: delete everything and start an empty segment at ``new_offset``; the log
        start offset becomes ``log_start_offset`` (default ``new_offset``). The recovery
        point only comes down (to ``new_offset``) if it was above."""
        self.begin_operation()
        if new_offset < 0:
            raise InvalidArgumentError(f"cannot start a log at a negative offset ({new_offset})")
        self._truncate_fully_and_start_at(new_offset, log_start_offset)
        maybe_truncate_checkpoint(self, self.active_segment.base_offset)  # COMPACT-27

    def _truncate_fully_and_start_at(self, new_offset: int, log_start_offset: int | None) -> None:
        self.local_log.truncate_fully_and_start_at(new_offset)
        self.leader_epoch_cache.clear_and_flush()
        self.producer_state_manager.truncate_fully_and_start_at(new_offset)  # SNAP-B-7
        self.log_start_offset = new_offset if log_start_offset is None else log_start_offset
        self._rebuild_producer_state(new_offset)
        self._write_checkpoints()

    def _rebuild_producer_state(self, last_offset: int) -> None:
        rebuild_producer_state(
            self.producer_state_manager,
            self.segments,
            self.log_start_offset,
            last_offset,
            self.clock.milliseconds(),
            False,
        )
        self._update_high_watermark()

    # --- retention (RET) ---
    # Data leaves the start of the log in whole segments, in three passes (the log start
    # offset, the size, the time); each scans from the oldest segment and stops at the first
    # it keeps, never taking one at or above the high watermark nor an empty active segment.
    def maybe_increment_log_start_offset(self, new_log_start_offset: int) -> bool:
        """RET-1 to RET-3: raise the log start offset (never lower it). Above the high watermark it is
        ``offset_out_of_range``. No file changes: the segments below it go at the next
        ``delete_old_segments``. Returns whether it moved."""
        self.begin_operation()
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
        self.begin_operation()
        self._maybe_increment_log_start_offset(offset)
        return self._delete_log_start_offset_breached_segments()

    def delete_old_segments(self) -> int:
        """RET-10: the three deletion passes (cleanup.policy=delete); returns the number of
        segments deleted."""
        self.begin_operation()
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
        self.begin_operation()
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
        self.begin_operation()
        return LogState(
            log_start_offset=self.log_start_offset,
            log_end_offset=self.log_end_offset,
            recovery_point=self.recovery_point,
            segments=tuple(SegmentState(s.base_offset, s.size) for s in self.segments.values()),
            last_stable_offset=self.last_stable_offset,
        )


Log = UnifiedLog  # the name the docs, tests and tools have used


# The compiled path of a client's common batch (issue 14), unless pure Python:
# _compiled_append.py
if kernels.append is not None:
    from ._compiled_append import append_client_batch as _lean_append  # noqa: F811
