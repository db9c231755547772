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

from collections.abc import Iterable, Iterator
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
from .storage import storage


def _regular_files(dir: Path) -> list[Path]:
    # sorted, so deletions and renames happen (and are reported) in a stable order
    return storage().files(dir)


class TempFilePass:
    """LOAD-6, LOAD-7 over a directory's file names, deciding without touching anything:
    iterate it for ``(name, reason)`` of each file to delete, in the loader's order
    (``.deleted`` files but KRaft ``.checkpoint.deleted`` ones as met, then each ``.swap``
    at or above the lowest ``.cleaned`` offset: an unfinished split, then the ``.cleaned``
    files); afterwards ``swap_files`` holds the ``.swap`` files whose replacement completes.
    ``klogspec recover`` plans with the same pass."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted(names)  # a stable order of deletions (and of their reports)
        self.swap_files: list[str] = []

    def __iter__(self) -> Iterator[tuple[str, Reason]]:
        swaps, cleaned, min_cleaned_offset = [], [], LONG_MAX
        for name in self.names:
            if name.endswith(DELETED_FILE_SUFFIX):
                if not name.endswith(KRAFT_SNAPSHOT_SUFFIX + DELETED_FILE_SUFFIX):
                    yield name, Reason.DELETED_SUFFIX
            elif name.endswith(CLEANED_FILE_SUFFIX):
                min_cleaned_offset = min(offset_from_file_name(name), min_cleaned_offset)
                cleaned.append(name)
            elif name.endswith(SWAP_FILE_SUFFIX):
                swaps.append(name)
        for name in swaps:
            if offset_from_file_name(name) >= min_cleaned_offset:
                yield name, Reason.INCOMPLETE_SPLIT
            else:
                self.swap_files.append(name)
        for name in cleaned:
            yield name, Reason.CLEANED_SUFFIX


def remove_temp_files_and_collect_swap_files(dir: Path, observer: LoadObserver) -> list[Path]:
    """LOAD-6, LOAD-7: delete what ``TempFilePass`` says, as it says it; return the other
    ``.swap`` files."""
    temp_files = TempFilePass(file.name for file in _regular_files(dir))
    for name, reason in temp_files:
        observer.deleting(dir / name, reason)
        storage().unlink(dir / name, missing_ok=True)
    return [dir / name for name in temp_files.swap_files]


def replaced_by_swaps(names: Iterable[str], min_swap: int, max_swap: int) -> Iterator[str]:
    """LOAD-9: the files a completed swap replaces: every other file whose name starts with an
    offset in ``[min_swap, max_swap)`` (quirk 15: any suffix, snapshots included)."""
    for name in names:
        if name.endswith(SWAP_FILE_SUFFIX) or "." not in name:
            continue  # Kafka's offsetFromFile fails on a name without a '.'
        try:
            offset = offset_from_file_name(name)
        except InvalidFileNameError:
            continue  # no offset in the name: not a segment's file
        if min_swap <= offset < max_swap:
            yield name


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
    names = [file.name for file in _regular_files(dir)]
    for name in replaced_by_swaps(names, min_swap, max_swap):
        observer.deleting(dir / name, Reason.REPLACED_BY_SWAP)
        storage().unlink(dir / name, missing_ok=True)
    for file in _regular_files(dir):
        if file.name.endswith(SWAP_FILE_SUFFIX):
            target = file.with_name(file.name[: -len(SWAP_FILE_SUFFIX)])
            storage().rename(file, target)
            observer.renamed(file, target, Reason.SWAP)
