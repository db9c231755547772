"""What recovering one segment would do, without doing it (spec/behaviour/recovery.md §7).

``scan_recovery`` runs LogSegment.recover's own batch walk over a ``.log``: its scanner
(RecoveryScanner) and what it does with each batch (``recover_batch``), both in
reference_impl/log/segment_recovery.py. The segment it recovers is a recording one: real
OffsetIndex and TimeIndex objects on scratch files, so their rules (full, offsets that go
back, overflow) decide as they do in the loader, and an epoch cache that records what
recovery would assign. It says where recovery would cut the file, which index entries it
would write and which leader epochs it would learn, reading the file once and writing
nothing in the partition directory. ``klogspec recover --dry-run`` plans with it
(plan.py); the tests check each plan against what the loader then does.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from reference_impl.errors import Category, CorruptRecordError, KafkaLogError
from reference_impl.formats.index_entries import (
    OFFSET_INDEX_ENTRY_SIZE,
    TIME_INDEX_ENTRY_SIZE,
    OffsetPosition,
    TimestampOffset,
)
from reference_impl.log.offset_index import OffsetIndex
from reference_impl.log.segment import LogSegment
from reference_impl.log.segment_recovery import RecoveryScanner, recover_batch, tail_kind
from reference_impl.log.time_index import TimeIndex
from reference_impl.records import iter_file_batches

from ..index_files import entries_before_zero_tail
from ..safe_files import open_regular

# what stops LogSegment.recover at a batch, as the scan names it
_OUTCOMES = {
    Category.OFFSET_OVERFLOW: "overflow",  # the loader splits the segment (RECOV-10)
    Category.INVALID_OFFSET: "invalid_offset",  # the loader empties it (RECOV-6)
    Category.INVALID_ARGUMENT: "index_full",  # the load fails
}


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
    segment = _RecordingSegment(path, base_offset, max_index_size)
    try:
        with open(path, "rb") as handle:
            scan = SegmentScan(os.fstat(handle.fileno()).st_size)
            _walk(scan, segment, handle, index_interval_bytes, latest_epoch)
        scan.offset_entries = _entries(segment.offset_index)
        scan.time_entries = _entries(segment.time_index)
    finally:
        segment.delete()
    return scan


def _walk(scan: SegmentScan, segment, handle, index_interval_bytes: int, latest_epoch) -> None:
    """LogSegment.recover's walk, stopped by the first batch an index or the base refuses."""
    batches = iter_file_batches(handle, file=str(segment.log.file))
    scanner = RecoveryScanner(batches, segment.base_offset, index_interval_bytes)
    epochs = _RecordingEpochs(latest_epoch(), scan.epochs)
    try:
        for batch, position, indexed in scanner:
            outcome = _refused(
                recover_batch, segment, scanner, batch, position, indexed, epochs, None
            )
            if outcome is not None:
                scan.outcome, scan.valid_bytes = outcome, position
                return
            scan.next_offset = batch.last_offset + 1
    except CorruptRecordError as exc:
        scan.failure = exc.category.value
    scan.valid_bytes = scanner.valid_bytes
    if scan.truncated:
        scan.outcome = "truncated"
        read = lambda position, size: os.pread(handle.fileno(), size, position)  # noqa: E731
        scan.failure = tail_kind(read, scan.valid_bytes, scan.size, scan.failure)
    # a recovered segment ends with its max timestamp (LogSegment.recover's last entry)
    final = _refused(segment.time_index.maybe_append, *scanner.max_timestamp, True)
    scan.outcome = final or scan.outcome


def _refused(step: Callable[..., None], *args) -> str | None:
    """Run one step of the recovery; the outcome that stops it, or None."""
    try:
        step(*args)
    except KafkaLogError as exc:
        if exc.category not in _OUTCOMES or isinstance(exc, CorruptRecordError):
            raise
        return _OUTCOMES[exc.category]
    return None


def _entries(index) -> list:
    return [index.entry(n) for n in range(index.entries)]


class _RecordingSegment:
    """A RecoveringSegment (segment_recovery.py) whose indexes are real ones on scratch files,
    reset as LogSegment.recover resets a segment's existing indexes (INDEX-8, INDEX-12)."""

    ensure_offset_in_range = LogSegment.ensure_offset_in_range  # APPEND-23, the segment's rule

    def __init__(self, path: Path, base_offset: int, max_index_size: int):
        self.base_offset = base_offset
        self.log = SimpleNamespace(file=path)  # the file ensure_offset_in_range names
        self.max_timestamp_and_offset_so_far: TimestampOffset | None = None
        self._scratch = [_scratch("offsets"), _scratch("times")]
        self.offset_index = OffsetIndex(self._scratch[0][0], base_offset, max_index_size)
        self.time_index = TimeIndex(self._scratch[1][0], base_offset, max_index_size)
        self.offset_index.reset()
        self.time_index.reset()

    def delete(self) -> None:
        self.offset_index.close_handler()
        self.time_index.close_handler()
        for name, fd, on_disk in self._scratch:
            os.close(fd)
            if on_disk:
                os.unlink(name)


def _scratch(name: str) -> tuple[str, int, bool]:
    """An existing empty file for an index to open by name (so its reset() sizes it, as
    recovery's does): in memory where the system has memfd_create (Linux), as planning must
    not need disk space (a full disk is one reason to recover), else a temporary file.
    Returns its name, a descriptor that keeps it, and whether it is on disk."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create(f"klogspec-scan-{name}")
        return f"/proc/self/fd/{fd}", fd, False
    fd, path = tempfile.mkstemp(prefix=f"klogspec-scan-{name}-")
    return path, fd, True


class _RecordingEpochs:
    """The leader epoch cache as recovery uses it (RECOV-7): the epochs it would assign are
    recorded, (epoch, start offset), after the cache's latest epoch before the scan."""

    def __init__(self, latest: int | None, epochs: list[tuple[int, int]]) -> None:
        self._latest, self.epochs = latest, epochs

    def latest_epoch(self) -> int | None:
        return self.epochs[-1][0] if self.epochs else self._latest

    def assign(self, epoch: int, start_offset: int) -> None:
        self.epochs.append((epoch, start_offset))


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
