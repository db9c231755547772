"""Opening a partition directory (spec/behaviour/recover.md): Kafka's LogLoader.

This module holds the **clean** load, what Kafka does after a clean shutdown
[storage/.../log/LogLoader.java load, loadSegmentFiles, recoverLog]: no segment is
recovered, except one whose ``.index`` is missing. The pass over temporary files
(``.deleted``, ``.cleaned``, ``.swap``), the clean-shutdown marker and the recovery
of unflushed segments after a crash extend it in a later issue; until then files
with those suffixes are left alone and not loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .clock import Clock
from .config import LogConfig
from .deletion import delete_segment_files
from .errors import CorruptIndexError
from .fetch import LogOffsetMetadata
from .files import FileKind, classify, log_file_name, time_index_file_name
from .leader_epoch import LeaderEpochFileCache
from .log_segments import LogSegments
from .scheduler import Scheduler
from .segment import LogSegment

_INDEX_KINDS = (FileKind.OFFSET_INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX)


@dataclass(frozen=True, slots=True)
class LoadedLogOffsets:
    """What a load decides [LoadedLogOffsets.java]."""

    log_start_offset: int
    recovery_point: int
    next_offset_metadata: LogOffsetMetadata


def load_clean(
    dir: Path,
    config: LogConfig,
    clock: Clock,
    segments: LogSegments,
    *,
    log_start_offset_checkpoint: int,
    leader_epoch_cache: LeaderEpochFileCache,
    scheduler: Scheduler,
) -> LoadedLogOffsets:
    """LogLoader.load after a clean shutdown, into ``segments``.

    1. Load every ``<base>.log`` in name order (indexes lazily); an index file without
       its ``.log`` is an orphan and is deleted; a segment without ``.index`` is
       recovered, one without ``.timeindex`` gets an empty one.
    2. If the log ends below the log-start-offset checkpoint, every segment goes; with
       no segment left, one is created at that checkpoint.
    3. Recovery point = log end offset; the active segment's indexes are resized to
       ``segment.index.bytes`` (a trimmed index would otherwise be full).
    4. Log start offset = max(checkpoint, first segment's base); the epoch cache is
       truncated to the log's end and (from the start) to the checkpoint.
    """
    _load_segment_files(dir, config, clock, segments, leader_epoch_cache)
    log_end_offset = None
    if not segments.is_empty():
        log_end_offset = segments.last_segment.read_next_offset()
        if log_end_offset < log_start_offset_checkpoint:
            doomed = segments.values()
            for segment in doomed:
                segments.remove(segment.base_offset)
            delete_segment_files(
                doomed,
                async_delete=True,
                scheduler=scheduler,
                file_delete_delay_ms=config.file_delete_delay_ms,
            )
            leader_epoch_cache.clear_and_flush()
            # SEAM(producer state): truncateFullyAndStartAt(log start offset checkpoint)
            log_end_offset = None
    if segments.is_empty():
        segments.add(
            LogSegment.open(
                dir,
                log_start_offset_checkpoint,
                config,
                clock,
                init_file_size=config.init_file_size,
                preallocate=config.preallocate,
            )
        )
    if log_end_offset is None:
        log_end_offset = segments.last_segment.read_next_offset()
    # clean shutdown: nothing needs recovery up to the end (Kafka: the recovery-point
    # checkpoint only matters when the end is unknown, which a clean load never meets here)
    recovery_point = log_end_offset
    active = segments.active_segment
    active.resize_indexes(config.segment_index_bytes)
    leader_epoch_cache.truncate_from_end(log_end_offset)
    log_start_offset = max(log_start_offset_checkpoint, segments.first_segment.base_offset)
    leader_epoch_cache.truncate_from_start(log_start_offset_checkpoint)
    # SEAM(producer state): removeStraySnapshots and rebuildProducerState go here
    return LoadedLogOffsets(
        log_start_offset,
        recovery_point,
        LogOffsetMetadata(log_end_offset, active.base_offset, active.size),
    )


def _load_segment_files(
    dir: Path,
    config: LogConfig,
    clock: Clock,
    segments: LogSegments,
    leader_epoch_cache: LeaderEpochFileCache,
) -> None:
    for path in sorted(p for p in dir.iterdir() if p.is_file()):
        info = classify(path)
        if info.marker is not None or info.base_offset is None:
            continue  # temporary files are the next issue's; other files are not segments
        if info.kind in _INDEX_KINDS:
            if not (dir / log_file_name(info.base_offset)).exists():
                path.unlink(missing_ok=True)  # an orphaned index file
        elif info.kind is FileKind.LOG:
            base_offset = info.base_offset
            time_index_newly_created = not (dir / time_index_file_name(base_offset)).exists()
            segment = LogSegment.open(dir, base_offset, config, clock, file_already_exists=True)
            try:
                segment.sanity_check(time_index_newly_created)
            except (FileNotFoundError, CorruptIndexError):
                # SEAM(producer state): Kafka rebuilds producer state up to the base first
                segment.recover(leader_epoch_cache)
            segments.add(segment)
