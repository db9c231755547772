"""Opening a partition directory (spec/behaviour/recovery.md): Kafka's LogLoader.

``LogLoader.load`` [storage/.../log/LogLoader.java] turns the files of a partition
directory into a log's segments and offsets, in this order:

1. the temporary-file pass: ``.deleted`` and ``.cleaned`` files go, ``.swap`` files
   complete their replacement (swap_files.py);
2. every ``<base>.log`` is opened as a segment, orphan index files are deleted, and a
   segment without ``.index`` (or with a corrupt ``.txnindex``) is recovered;
3. after an unclean shutdown, every segment from the one holding the recovery point is
   recovered (LogSegment.recover, segment_recovery.py); the first one cut short ends the
   log there;
4. a log that ends below the log start offset is emptied; a log with no segment gets one;
5. the active segment's indexes get their full size back, the leader epoch cache is cut
   to the log's ends, and the offsets are returned.

A segment whose offsets overflow its base (KAFKA-6264) is split and the step retried
(offset_overflow.py). Last, the producer state is rebuilt up to the log end offset
from the newest producer snapshot and the batches after it (producer_state_rebuild.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..constants import LONG_MAX
from ..errors import Category, CorruptIndexError, InvalidFileNameError, KafkaLogError
from ..formats.file_naming import (
    DELETE_DIR_SUFFIX,
    FileKind,
    classify,
    log_file_name,
    parse_partition_dir_name,
    time_index_file_name,
)
from .checkpoint_files import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    read_offsets_or_empty,
)
from .clock import Clock
from .config import LogConfig
from .deletion import delete_segment_files
from .fetch import LogOffsetMetadata
from .leader_epoch import LeaderEpochFileCache
from .load_events import LoadObserver, Reason
from .log_segments import LogSegments
from .offset_overflow import split_overflowed_segment
from .producer_state_manager import ProducerStateManager
from .producer_state_rebuild import delete_producer_snapshots, rebuild_producer_state
from .scheduler import Scheduler
from .segment import LogSegment
from .storage import storage
from .swap_files import complete_swaps, remove_temp_files_and_collect_swap_files

_INDEX_KINDS = (FileKind.OFFSET_INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX)
T = TypeVar("T")


@dataclass(frozen=True)
class LoadOptions:
    """How ``Log.open`` loads a directory that already holds a log.

    * ``had_clean_shutdown``: None reads (and deletes) the log directory's marker (LOAD-1);
    * ``recovery_point``: None reads ``recovery-point-offset-checkpoint`` (LOAD-4);
    * ``index_sanity_check``: LOAD-16's check of every offset and time index the load does
      not rebuild; off by default, as in Kafka since 2.3;
    * ``observer``: told of every change the load makes (load_events.py).
    """

    had_clean_shutdown: bool | None = None
    recovery_point: int | None = None
    index_sanity_check: bool = False
    observer: LoadObserver | None = None


@dataclass(frozen=True, slots=True)
class LoadedLogOffsets:
    """What a load decides [LoadedLogOffsets.java]."""

    log_start_offset: int
    recovery_point: int
    next_offset_metadata: LogOffsetMetadata


def load_partition(
    dir: Path,
    config: LogConfig,
    clock: Clock,
    scheduler: Scheduler,
    segments: LogSegments,
    leader_epoch_cache: LeaderEpochFileCache,
    options: LoadOptions,
    had_clean_shutdown: bool,
    producer_state_manager: ProducerStateManager | None = None,
) -> LoadedLogOffsets:
    """Load ``dir`` with its entries of the log directory's offset checkpoints (LOAD-4):
    a missing entry, file or unreadable file reads as 0, as in LogManager.loadLog."""
    name = parse_partition_dir_name(dir.name)
    key = (name.topic, name.partition)
    recovery_point = options.recovery_point
    if recovery_point is None:
        recovery_point = read_offsets_or_empty(dir.parent / RECOVERY_POINT_CHECKPOINT).get(key, 0)
    log_start_offset = read_offsets_or_empty(dir.parent / LOG_START_OFFSET_CHECKPOINT).get(key, 0)
    return LogLoader(
        dir,
        config,
        clock,
        scheduler,
        segments,
        had_clean_shutdown=had_clean_shutdown,
        log_start_offset_checkpoint=log_start_offset,
        recovery_point_checkpoint=recovery_point,
        leader_epoch_cache=leader_epoch_cache,
        index_sanity_check=options.index_sanity_check,
        observer=options.observer,
        producer_state_manager=producer_state_manager,
    ).load()


class _SegmentOverflow(Exception):
    """Kafka's LogSegmentOffsetOverflowException: the segment travels with the error."""

    def __init__(self, segment: LogSegment, error: KafkaLogError) -> None:
        super().__init__(str(error))
        self.segment = segment
        self.error = error


class LogLoader:
    def __init__(
        self,
        dir: Path,
        config: LogConfig,
        clock: Clock,
        scheduler: Scheduler,
        segments: LogSegments,
        *,
        had_clean_shutdown: bool,
        log_start_offset_checkpoint: int,
        recovery_point_checkpoint: int,
        leader_epoch_cache: LeaderEpochFileCache,
        index_sanity_check: bool = False,
        observer: LoadObserver | None = None,
        producer_state_manager: ProducerStateManager | None = None,
    ) -> None:
        self.dir = dir
        self.config = config
        self.clock = clock
        self.scheduler = scheduler
        self.segments = segments
        self.had_clean_shutdown = had_clean_shutdown
        self.log_start_offset_checkpoint = log_start_offset_checkpoint
        self.recovery_point_checkpoint = recovery_point_checkpoint
        self.leader_epoch_cache = leader_epoch_cache
        self.index_sanity_check = index_sanity_check
        self.observer = observer or LoadObserver()
        self.producer_state_manager = producer_state_manager or ProducerStateManager(dir)

    def load(self) -> LoadedLogOffsets:
        """LOAD-5 to LOAD-24, in LogLoader.load's order."""
        swap_files = remove_temp_files_and_collect_swap_files(self.dir, self.observer)
        complete_swaps(self.dir, swap_files, self.config, self.clock, self.observer)
        self._retry_on_offset_overflow(self._load_segment_files_from_scratch)
        if not self.dir.name.endswith(DELETE_DIR_SUFFIX):
            recovery_point, next_offset = self._retry_on_offset_overflow(self._recover_log)
            # LOAD-21: a trimmed active index reopens "full" (quirk 3): give it room again
            self.segments.active_segment.resize_indexes(self.config.segment_index_bytes)
        else:
            # LOAD-23: a directory queued for deletion is not recovered
            if self.segments.is_empty():
                self._add_new_segment(0, preallocate=False)
            recovery_point = next_offset = 0
        self.leader_epoch_cache.truncate_from_end(next_offset)  # LOAD-22
        log_start_offset = max(
            self.log_start_offset_checkpoint, self.segments.first_segment.base_offset
        )  # LOAD-18
        # LOAD-22: the checkpoint, not the result: the epoch file may lag a raised start
        self.leader_epoch_cache.truncate_from_start(self.log_start_offset_checkpoint)
        # SNAP-B-4, SNAP-B-2: snapshots the recovery passes wrote or left are sorted out here
        self.producer_state_manager.remove_stray_snapshots(self.segments.base_offsets())
        rebuild_producer_state(
            self.producer_state_manager,
            self.segments,
            log_start_offset,
            next_offset,
            self.clock.milliseconds(),
            self.had_clean_shutdown,
        )
        active = self.segments.active_segment
        return LoadedLogOffsets(
            log_start_offset,
            recovery_point,
            LogOffsetMetadata(next_offset, active.base_offset, active.size),
        )

    # --- step 2: the segment files ---
    def _load_segment_files_from_scratch(self) -> None:
        # a retry after a split starts over, as Kafka's does
        self.segments.close()
        self.segments.clear()
        self._load_segment_files()

    def _load_segment_files(self) -> None:
        """LOAD-11 to LOAD-16: in ascending name order, delete orphan indexes and open
        every ``.log`` as a segment, recovering those whose indexes cannot be used."""
        for file in storage().files(self.dir):
            info = classify(file)
            if info.marker is not None or info.kind not in (FileKind.LOG, *_INDEX_KINDS):
                continue  # not a segment file (LOAD-25: nor is a directory, quarantine included)
            if info.base_offset is None:
                raise InvalidFileNameError(
                    f"{file.name} has no base offset in its name: the log cannot be loaded",
                    file=str(file),
                )  # LOAD-11, Kafka's NumberFormatException
            if info.kind is not FileKind.LOG:
                if not storage().exists(self.dir / log_file_name(info.base_offset)):
                    self.observer.deleting(file, Reason.ORPHAN_INDEX)  # LOAD-12
                    storage().unlink(file, missing_ok=True)
                continue
            self.segments.add(self._load_segment(info.base_offset))

    def _load_segment(self, base_offset: int) -> LogSegment:
        time_index_newly_created = not storage().exists(
            self.dir / time_index_file_name(base_offset)
        )
        segment = LogSegment.open(
            self.dir, base_offset, self.config, self.clock, file_already_exists=True
        )
        try:
            segment.sanity_check(time_index_newly_created)
        except FileNotFoundError:
            self._recover_segment(segment, Reason.MISSING_OFFSET_INDEX)  # LOAD-13
            return segment
        except CorruptIndexError:
            self._recover_segment(segment, Reason.CORRUPT_TXN_INDEX)  # LOAD-15
            return segment
        if time_index_newly_created:
            self.observer.created(segment.time_index_file, Reason.MISSING_TIME_INDEX)  # LOAD-14
        if self.index_sanity_check:
            try:  # LOAD-16, the SHOULD
                segment.offset_index.sanity_check()
                segment.time_index.sanity_check()
            except CorruptIndexError:
                self._recover_segment(segment, Reason.CORRUPT_INDEX)
        return segment

    # --- step 3: recovery ---
    def _recover_segment(self, segment: LogSegment, reason: Reason) -> int:
        """RECOV-2 to RECOV-4: LogSegment.recover, the observer told before the cut."""

        def before_truncate(position: int, error: str | None) -> None:
            self.observer.truncating(
                segment.log.file, position, segment.log.size - position, reason, error
            )

        self.observer.recovering(segment.log.file, reason)
        # RECOV-19: a scratch producer state, brought to the segment's base from the
        # snapshots and earlier segments, is replayed through it and saved at its end
        psm = ProducerStateManager(self.dir, self.producer_state_manager.producer_id_expiration_ms)
        rebuild_producer_state(
            psm,
            self.segments,
            self.log_start_offset_checkpoint,
            segment.base_offset,
            self.clock.milliseconds(),
            False,
        )
        try:
            truncated = segment.recover(
                self.leader_epoch_cache, producer_state_manager=psm, before_truncate=before_truncate
            )
        except KafkaLogError as exc:
            if exc.category is Category.OFFSET_OVERFLOW:
                raise _SegmentOverflow(segment, exc)
            raise
        self.observer.recovered(segment.log.file, reason)
        psm.take_snapshot()
        return truncated

    def _recover_log(self) -> tuple[int, int]:
        """RECOV-1, RECOV-5, RECOV-6, RECOV-8, RECOV-9, LOAD-19, LOAD-20: (recovery point, next
        offset)."""
        if not self.had_clean_shutdown:
            unflushed = self.segments.values(self.recovery_point_checkpoint, LONG_MAX)
            for i, segment in enumerate(unflushed):
                try:
                    truncated = self._recover_segment(segment, Reason.UNFLUSHED)
                except KafkaLogError as exc:
                    if exc.category is not Category.INVALID_OFFSET:
                        raise
                    truncated = self._truncate_fully(segment)  # RECOV-6
                if truncated > 0:  # RECOV-5: a torn or corrupt tail ends the log here
                    self._remove_and_delete_segments(unflushed[i + 1 :], Reason.AFTER_TRUNCATION)
                    break
        log_end_offset = self._delete_segments_if_log_start_greater_than_log_end()
        if self.segments.is_empty():
            self._add_new_segment(self.log_start_offset_checkpoint, self.config.preallocate)
        if self.had_clean_shutdown and log_end_offset is not None:
            return log_end_offset, log_end_offset  # RECOV-8
        if log_end_offset is None:
            log_end_offset = self.segments.last_segment.read_next_offset()
        # RECOV-9: recovery never raises the recovery point; only a flush does
        return min(self.recovery_point_checkpoint, log_end_offset), log_end_offset

    def _truncate_fully(self, segment: LogSegment) -> int:
        """Kafka's answer to an InvalidOffsetException in recovery: ``truncateTo(base)``."""
        mapping = segment.translate_offset(segment.base_offset)
        if mapping is not None:
            self.observer.truncating(
                segment.log.file,
                mapping.position,
                segment.log.size - mapping.position,
                Reason.INVALID_OFFSET,
                Category.INVALID_OFFSET.value,
            )
        return segment.truncate_to(segment.base_offset)

    def _delete_segments_if_log_start_greater_than_log_end(self) -> int | None:
        """LOAD-19: the log end offset, or None when the log was emptied because it ends
        below the log start offset checkpoint (segment files deleted by hand)."""
        if self.segments.is_empty():
            return None
        log_end_offset = self.segments.last_segment.read_next_offset()
        if log_end_offset >= self.log_start_offset_checkpoint:
            return log_end_offset
        self._remove_and_delete_segments(self.segments.values(), Reason.LOG_END_BELOW_LOG_START)
        self.leader_epoch_cache.clear_and_flush()
        self.producer_state_manager.truncate_fully_and_start_at(self.log_start_offset_checkpoint)
        return None

    def _remove_and_delete_segments(self, doomed: list[LogSegment], reason: Reason) -> None:
        for segment in doomed:
            self.segments.remove(segment.base_offset)
            for file in _segment_files(segment):
                self.observer.deleting(file, reason)
        if doomed:
            delete_segment_files(
                doomed,
                async_delete=True,
                scheduler=self.scheduler,
                file_delete_delay_ms=self.config.file_delete_delay_ms,
            )
        self._delete_producer_snapshots(doomed)

    def _delete_producer_snapshots(self, doomed: list[LogSegment]) -> None:
        """SNAP-B-8: the snapshots at removed segments' bases go with them."""
        delete_producer_snapshots(
            doomed,
            self.producer_state_manager,
            async_delete=True,
            scheduler=self.scheduler,
            file_delete_delay_ms=self.config.file_delete_delay_ms,
        )

    def _add_new_segment(self, base_offset: int, preallocate: bool) -> None:
        segment = LogSegment.open(
            self.dir,
            base_offset,
            self.config,
            self.clock,
            init_file_size=self.config.init_file_size,
            preallocate=preallocate,
        )
        self.segments.add(segment)
        self.observer.created(segment.log.file, Reason.EMPTY)

    # --- offset overflow ---
    def _retry_on_offset_overflow(self, step: Callable[[], T]) -> T:
        """RECOV-10: split a segment whose offsets overflow its base, then run ``step`` again."""
        while True:
            try:
                return step()
            except _SegmentOverflow as overflow:
                split_overflowed_segment(
                    overflow.segment,
                    overflow.error,
                    self.segments,
                    self.dir,
                    self.config,
                    self.clock,
                    self.scheduler,
                    self.observer,
                )
                self._delete_producer_snapshots([overflow.segment])


def _segment_files(segment: LogSegment) -> list[Path]:
    files = (
        segment.log.file,
        segment.offset_index_file,
        segment.time_index_file,
        segment.txn_index.file,
    )
    return [f for f in files if storage().exists(f)]
