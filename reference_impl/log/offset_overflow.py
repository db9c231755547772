"""Splitting a segment whose offsets overflow its base offset (spec/behaviour/recovery.md §4, RECOV-10).

An index entry stores ``offset - baseOffset`` as an int32, so a segment can hold only
offsets in ``[base, base + 2^31 - 1]``. Old brokers' log cleaner could write segments
breaking that (KAFKA-6264). When recovery meets such a batch, Kafka splits the segment
into segments that each fit, written as ``.cleaned`` files and swapped in by the
crash-safe protocol of swap_files.py, then loads again [LocalLog.java
splitOverflowedSegment, replaceSegments; LogSegment.java appendFromFile].
"""

from __future__ import annotations

from pathlib import Path

from ..constants import LONG_MIN
from ..errors import Category, IllegalStateError, KafkaLogError
from ..formats.file_naming import CLEANED_FILE_SUFFIX, LOG_FILE_SUFFIX, SWAP_FILE_SUFFIX
from .checkpoint_files import fsync_dir
from .clock import Clock
from .config import LogConfig
from .deletion import delete_segment_files, delete_segment_files_if_exist
from .file_records import FileRecords
from .load_events import LoadObserver, Reason
from .log_segments import LogSegments
from .scheduler import Scheduler
from .segment import LogSegment
from .storage import storage

CHUNK_BUFFER_BYTES = 1024 * 1024  # appendChunkFromFile's read buffer


def split_overflowed_segment(
    segment: LogSegment,
    error: KafkaLogError | None,
    segments: LogSegments,
    dir: Path,
    config: LogConfig,
    clock: Clock,
    scheduler: Scheduler,
    observer: LoadObserver,
) -> list[LogSegment]:
    """RECOV-10: replace ``segment`` (whose recovery raised ``error``) by segments starting at the first batch that no longer
    fits the previous one; their sizes add up to the original's.

    A segment whose next offset does fit its base cannot be split (Kafka's ``require``
    fails): the load stops with the ``offset_overflow`` error that started it. So does
    a segment with bytes after its last whole batch (the sizes differ)."""
    if not segment.log.file.name.endswith(LOG_FILE_SUFFIX) or not has_overflow(segment):
        found = f"{error.message}; " if error is not None else ""
        raise KafkaLogError(
            Category.OFFSET_OVERFLOW,
            f"{found}the segment cannot be split, as its next offset "
            f"{segment.read_next_offset()} fits its base offset {segment.base_offset}",
            file=str(segment.log.file),
            offset=None if error is None else error.offset,
        )
    new_segments: list[LogSegment] = []
    try:
        source = segment.log
        position = 0
        while position < source.size:
            first = next(iter(source.batches_from(position)), None)
            if first is None:
                raise IllegalStateError(f"no whole batch at position {position} of {source.file}")
            new_segment = create_new_cleaned_segment(dir, config, clock, first.base_offset)
            new_segments.append(new_segment)
            appended = append_from_file(new_segment, source, position)
            if appended == 0:
                raise IllegalStateError(
                    f"failed to append records from position {position} in {segment}"
                )
            position += appended
        total = 0
        for split in new_segments:
            split.on_become_inactive_segment()
            split.flush()
            split.log.set_last_modified(segment.last_modified())
            total += split.log.size
        if total != source.size:
            raise IllegalStateError(
                f"inconsistent segment sizes after split before: {source.size} after: {total}"
            )
        replace_segments(segments, new_segments, [segment], dir, config, scheduler, observer)
        return new_segments
    except Exception:
        for split in new_segments:
            split.close()
            split.delete_if_exists()
        raise


def has_overflow(segment: LogSegment) -> bool:
    """LogSegment.hasOverflow: the segment's next offset does not fit its base offset."""
    next_offset = segment.read_next_offset()
    return next_offset > segment.base_offset and not segment.offset_index.can_append_offset(
        next_offset - 1
    )


def create_new_cleaned_segment(
    dir: Path, config: LogConfig, clock: Clock, base_offset: int
) -> LogSegment:
    delete_segment_files_if_exist(dir, base_offset, CLEANED_FILE_SUFFIX)
    return LogSegment.open(
        dir,
        base_offset,
        config,
        clock,
        init_file_size=config.init_file_size,
        preallocate=config.preallocate,
        file_suffix=CLEANED_FILE_SUFFIX,
    )


def append_from_file(segment: LogSegment, records: FileRecords, start: int) -> int:
    """LogSegment.appendFromFile: append batches from ``start`` while their offsets fit,
    in chunks of at most the read buffer (one append, so one possible index entry, per
    chunk); returns the bytes appended."""
    position = start
    capacity = CHUNK_BUFFER_BYTES  # Kafka's growable buffer keeps its largest size
    while position < start + records.size:
        appended, capacity = _append_chunk_from_file(segment, records, position, capacity)
        if appended == 0:
            break
        position += appended
    return position - start


def _append_chunk_from_file(
    segment: LogSegment, records: FileRecords, position: int, capacity: int
) -> tuple[int, int]:
    size = 0
    max_offset = LONG_MIN
    for batch in records.batches_from(position):
        fits = segment.offset_index.can_append_offset(batch.last_offset)
        if not fits or (size and size + batch.size_in_bytes >= capacity):
            break
        max_offset = batch.last_offset
        size += batch.size_in_bytes
    if size:
        capacity = max(capacity, size)
        segment.append(max_offset, records.slice(position, size).read_bytes())
    return size, capacity


def replace_segments(
    segments: LogSegments,
    new_segments: list[LogSegment],
    old_segments: list[LogSegment],
    dir: Path,
    config: LogConfig,
    scheduler: Scheduler,
    observer: LoadObserver | None = None,
) -> list[LogSegment]:
    """LocalLog.replaceSegments, LOAD-7's protocol: ``.cleaned`` to ``.swap`` in descending
    base-offset order, the old segments to ``.deleted``, then the ``.swap`` suffixes go and
    the directory is fsynced. A crash at any point is completed or undone by a load (COMPACT-24).
    Returns the old segments no new one took the place of (their snapshots go too)."""
    new_sorted = sorted(new_segments, key=lambda s: s.base_offset)
    old_sorted = sorted(
        (s for s in old_segments if segments.contains(s.base_offset)),
        key=lambda s: s.base_offset,
    )
    for old in old_segments:
        if not segments.contains(old.base_offset):
            old.close_handlers()  # met while loading: not in the map, its files are overwritten
    for new in reversed(new_sorted):
        new.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
        segments.add(new)
    for old in old_sorted:
        if old.base_offset != new_sorted[0].base_offset:
            segments.remove(old.base_offset)
        for file in (old.log.file, old.offset_index_file, old.time_index_file):
            if storage().exists(file) and observer is not None:
                observer.deleting(file, Reason.OFFSET_OVERFLOW)
        delete_segment_files(
            [old],
            async_delete=True,
            scheduler=scheduler,
            file_delete_delay_ms=config.file_delete_delay_ms,
        )
    for new in new_sorted:
        new.change_file_suffixes(SWAP_FILE_SUFFIX, "")
        if observer is not None:
            observer.created(new.log.file, Reason.OFFSET_OVERFLOW)
    fsync_dir(dir)
    new_bases = {s.base_offset for s in new_sorted}
    return [old for old in old_sorted if old.base_offset not in new_bases]
