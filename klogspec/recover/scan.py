"""What recovering one segment would do, without doing it (spec/behaviour/recovery.md §7).

``scan_recovery`` walks a ``.log`` with LogSegment.recover's own scanner (RecoveryScanner,
reference_impl/log/segment_recovery.py) and says where it would cut the file, which index
entries it would write and which leader epochs it would learn, reading the file once and
writing nothing. ``klogspec recover --dry-run`` plans with it (plan.py); the tests check
each plan against what the loader then does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from reference_impl.constants import INT32_MAX
from reference_impl.errors import CorruptRecordError, KafkaLogError
from reference_impl.formats.index_entries import (
    OFFSET_INDEX_ENTRY_SIZE,
    TIME_INDEX_ENTRY_SIZE,
    OffsetPosition,
    TimestampOffset,
)
from reference_impl.log.segment_recovery import RecoveryScanner, new_leader_epoch, tail_kind
from reference_impl.records import iter_file_batches
from reference_impl.records.record import NO_TIMESTAMP

from ..index_files import entries_before_zero_tail
from ..safe_files import open_regular


@dataclass
class SegmentScan:
    """The outcome of recovering a segment of ``size`` bytes.

    ``outcome`` is ``ok`` (every byte is a valid batch), ``truncated`` (cut at
    ``valid_bytes``, ``failure`` saying why), ``invalid_offset`` (an index entry would go
    back: the loader empties the segment, RECOV-6), ``overflow`` (an offset does not fit
    the base: the loader splits the segment, RECOV-10) or ``index_full``."""

    size: int
    valid_bytes: int = 0
    outcome: str = "ok"
    failure: str | None = None
    next_offset: int | None = None  # after the kept batches; None: none kept
    epochs: list[tuple[int, int]] = field(default_factory=list)  # (epoch, base offset) seen
    offset_entries: list[OffsetPosition] = field(default_factory=list)
    time_entries: list[TimestampOffset] = field(default_factory=list)

    @property
    def truncated(self) -> int:
        return self.size - self.valid_bytes


def scan_recovery(
    path: Path, base_offset: int, index_interval_bytes: int, max_index_size: int, latest_epoch
) -> SegmentScan:
    """LogSegment.recover's decisions for ``path``: ``latest_epoch()`` is the epoch cache's
    latest epoch, updated by the caller from ``epochs`` as the loader's cache would be.
    ``index_full`` is the outcome when a rebuilt index would not fit ``max_index_size``
    (Kafka's load then fails)."""
    offset_capacity = max_index_size // OFFSET_INDEX_ENTRY_SIZE
    time_capacity = max_index_size // TIME_INDEX_ENTRY_SIZE - 1  # INDEX-12's reserved slot
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        scan = SegmentScan(size)
        time = _TimeEntries(base_offset, scan.time_entries)
        seen_epoch = latest_epoch()
        batches = iter_file_batches(handle, file=str(path))
        scanner = RecoveryScanner(batches, base_offset, index_interval_bytes)

        def stop(outcome: str, position: int) -> SegmentScan:
            scan.outcome, scan.valid_bytes = outcome, position
            return scan

        try:
            for batch, position, indexed in scanner:
                if not 0 <= batch.last_offset - base_offset <= INT32_MAX:
                    return stop("overflow", position)
                if indexed:
                    entries = scan.offset_entries
                    if len(entries) >= offset_capacity:
                        return stop("index_full", position)
                    if entries and batch.last_offset <= entries[-1].offset:
                        return stop("invalid_offset", position)
                    entries.append(OffsetPosition(batch.last_offset, position))
                    if len(time.entries) >= time_capacity:
                        return stop("index_full", position)
                    if not time.append(*scanner.max_timestamp):
                        return stop("invalid_offset", position)
                scan.next_offset = batch.last_offset + 1
                epoch = new_leader_epoch(batch, seen_epoch)
                if epoch is not None:
                    scan.epochs.append((epoch, batch.base_offset))
                    seen_epoch = epoch
        except CorruptRecordError as exc:
            scan.failure = exc.category.value
        scan.valid_bytes = scanner.valid_bytes
        if scan.truncated:
            scan.outcome = "truncated"
            read = lambda position, size: os.pread(handle.fileno(), size, position)  # noqa: E731
            scan.failure = tail_kind(read, scan.valid_bytes, size, scan.failure)
        if not time.append(*scanner.max_timestamp):
            scan.outcome = "invalid_offset"
    return scan


class _TimeEntries:
    """TimeIndex.maybeAppend's rule: a larger timestamp appends, a smaller offset is refused."""

    def __init__(self, base_offset: int, entries: list[TimestampOffset]) -> None:
        self.base_offset, self.entries = base_offset, entries

    def append(self, timestamp: int, offset: int) -> bool:
        last = self.entries[-1] if self.entries else TimestampOffset(NO_TIMESTAMP, self.base_offset)
        if self.entries and offset < last.offset:
            return False
        if timestamp > last.timestamp:
            self.entries.append(TimestampOffset(timestamp, offset))
        return True


def claimed_offsets(
    path: Path, position: int = 0, end: int | None = None
) -> tuple[int, int] | None:
    """[first, last + 1) of the offsets the batch headers from ``position`` claim, read with
    the framing rules only (no CRC): what a truncation or deletion takes away, as far as
    the bytes tell."""
    first = last = None
    try:
        with open(path, "rb") as handle:
            for batch in iter_file_batches(handle, file=str(path), start=position, end=end):
                first = batch.base_offset if first is None else first
                last = batch.last_offset
    except (KafkaLogError, OSError):
        pass  # stop at the first entry that does not frame
    return None if first is None else (first, last + 1)


def next_offset_by_framing(path: Path, base_offset: int) -> int:
    """readNextOffset as far as framing alone tells (a .swap segment's end, LOAD-8)."""
    found = claimed_offsets(path)
    return base_offset if found is None else found[1]


def existing_index_entries(path: Path, base_offset: int, time: bool) -> list | None:
    """An index file's entries as a reopened file counts them (zero slots included), with
    trailing all-zero slots dropped: what a rebuild is compared with. None: unreadable or
    not a whole number of entries."""
    size = TIME_INDEX_ENTRY_SIZE if time else OFFSET_INDEX_ENTRY_SIZE
    try:
        with open_regular(path, path.parent) as handle:
            if os.fstat(handle.fileno()).st_size % size:
                return None
            # windows, holes skipped (issue 20: a sparse 4 GiB .index took minutes)
            return entries_before_zero_tail(handle, base_offset, time=time)
    except OSError:
        return None
