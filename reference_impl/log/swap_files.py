"""The temporary-file pass of a load (spec/behaviour/recovery.md §2, LOAD-6 to LOAD-10).

Kafka replaces segments (log cleaning, the offset-overflow split) crash-safely
[LocalLog.replaceSegments]: the new segments are written as ``.cleaned``, renamed
``.swap`` in descending base-offset order, the old ones renamed ``.deleted``, and the
``.swap`` suffixes dropped. A crash before every ``.swap`` rename leaves ``.cleaned``
files, and the replacement is undone; after it, only ``.swap`` files, and it is
completed. This module is LogLoader's first three passes over the directory
[LogLoader.java load, removeTempFilesAndCollectSwapFiles].
"""

from __future__ import annotations

from pathlib import Path

from ..constants import LONG_MAX, LONG_MIN
from ..errors import InvalidFileNameError
from ..formats.file_naming import (
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    KRAFT_SNAPSHOT_SUFFIX,
    LOG_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    offset_from_file_name,
)
from .clock import Clock
from .config import LogConfig
from .load_events import LoadObserver, Reason
from .segment import LogSegment


def _regular_files(dir: Path) -> list[Path]:
    # sorted, so deletions and renames happen (and are reported) in a stable order
    return sorted(p for p in dir.iterdir() if p.is_file())


def remove_temp_files_and_collect_swap_files(dir: Path, observer: LoadObserver) -> list[Path]:
    """LOAD-6, LOAD-7: delete ``.deleted`` files (not KRaft ``.checkpoint.deleted``) and
    ``.cleaned`` files, and every ``.swap`` whose offset is at or above the lowest
    ``.cleaned`` offset (an unfinished split); return the other ``.swap`` files."""
    swap_files, cleaned_files = [], []
    min_cleaned_offset = LONG_MAX
    for file in _regular_files(dir):
        name = file.name
        if name.endswith(DELETED_FILE_SUFFIX):
            if not name.endswith(KRAFT_SNAPSHOT_SUFFIX + DELETED_FILE_SUFFIX):
                observer.deleting(file, Reason.DELETED_SUFFIX)
                file.unlink(missing_ok=True)
        elif name.endswith(CLEANED_FILE_SUFFIX):
            min_cleaned_offset = min(offset_from_file_name(name), min_cleaned_offset)
            cleaned_files.append(file)
        elif name.endswith(SWAP_FILE_SUFFIX):
            swap_files.append(file)
    valid = []
    for file in swap_files:
        if offset_from_file_name(file.name) >= min_cleaned_offset:
            observer.deleting(file, Reason.INCOMPLETE_SPLIT)
            file.unlink(missing_ok=True)
        else:
            valid.append(file)
    for file in cleaned_files:
        observer.deleting(file, Reason.CLEANED_SUFFIX)
        file.unlink(missing_ok=True)
    return valid


def swap_offset_range(
    dir: Path, swap_files: list[Path], config: LogConfig, clock: Clock
) -> tuple[int, int]:
    """LOAD-8: [lowest base offset, highest next offset) of the ``.log.swap`` segments.

    Each is opened as a segment with the ``.swap`` suffix, as Kafka does; opening its lazy
    offset index to find the next offset creates a missing ``.index.swap``, which the
    renames then keep (an empty index: reads scan the segment from its start)."""
    min_swap, max_swap = LONG_MAX, LONG_MIN
    for file in swap_files:
        if not file.name[: -len(SWAP_FILE_SUFFIX)].endswith(LOG_FILE_SUFFIX):
            continue
        base_offset = offset_from_file_name(file.name)
        segment = LogSegment.open(dir, base_offset, config, clock, file_suffix=SWAP_FILE_SUFFIX)
        try:
            min_swap = min(segment.base_offset, min_swap)
            max_swap = max(segment.read_next_offset(), max_swap)
        finally:
            segment.close_handlers()  # Kafka leaves them open; nothing is trimmed either way
    return min_swap, max_swap


def complete_swaps(
    dir: Path, swap_files: list[Path], config: LogConfig, clock: Clock, observer: LoadObserver
) -> None:
    """LOAD-9, LOAD-10: delete every other file whose name starts with an offset in the swap
    range (quirk 15: any suffix, snapshots included), then drop every ``.swap`` suffix."""
    min_swap, max_swap = swap_offset_range(dir, swap_files, config, clock)
    for file in _regular_files(dir):
        if file.name.endswith(SWAP_FILE_SUFFIX):
            continue
        try:
            if "." not in file.name:
                continue  # Kafka's offsetFromFile fails on a name without a '.'
            offset = offset_from_file_name(file.name)
        except InvalidFileNameError:
            continue  # no offset in the name: not a segment's file
        if min_swap <= offset < max_swap:
            observer.deleting(file, Reason.REPLACED_BY_SWAP)
            file.unlink(missing_ok=True)
    for file in _regular_files(dir):
        if file.name.endswith(SWAP_FILE_SUFFIX):
            target = file.with_name(file.name[: -len(SWAP_FILE_SUFFIX)])
            file.rename(target)
            observer.renamed(file, target, Reason.SWAP)
