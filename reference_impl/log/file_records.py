"""FileRecords: a ``.log`` file, or a slice of one (spec/behaviour/append.md, read.md).

Kafka's ``FileRecords`` [clients/.../record/FileRecords.java] wraps one open file.
Its *logical* size is what it has written, which can be less than the file's
*physical* length: with ``preallocate`` a new file is extended at once to
``init_file_size`` (zero-filled) while its logical size starts at 0, and
``trim()`` cuts the file back to the logical size at roll and close. Reopening a
file takes its physical length as the logical size, zero tail included: only
recovery removes such a tail (quirk 2 of the fact sheet).

A *slice* is a read-only view ``[start, end)`` of the same file, what a read
returns. Batches are walked with the FileLogInputStream stop rules of
``records.iter_file_batches``; a slice yields only the batches wholly inside it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..constants import INT32_MAX
from ..errors import InvalidArgumentError
from ..records import Batch, iter_file_batches
from ..records.record import NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP
from ..records.stream import FileSource
from .storage import FileChannel, storage


@dataclass(frozen=True, slots=True)
class LogOffsetPosition:
    """FileRecords.LogOffsetPosition: the batch found by a search, by its last offset,
    start position and size in bytes."""

    offset: int
    position: int
    size: int


@dataclass(frozen=True, slots=True)
class TimestampAndOffset:
    """FileRecords.TimestampAndOffset; ``leader_epoch`` is None when the batch has none."""

    timestamp: int
    offset: int
    leader_epoch: int | None = None


def _maybe_leader_epoch(epoch: int) -> int | None:
    return None if epoch == NO_PARTITION_LEADER_EPOCH else epoch


class FileRecords:
    """A ``.log`` file (``is_slice`` False) or a slice ``[start, end)`` of one."""

    def __init__(
        self, path: Path, channel: FileChannel, start: int, end: int, is_slice: bool
    ) -> None:
        self.file = Path(path)
        self._channel = channel
        self.start = start
        self.end = end
        self.is_slice = is_slice
        if is_slice:
            self._size = end - start  # a slice does not look at the file's length
        else:
            physical = channel.size()
            if physical > INT32_MAX:
                raise InvalidArgumentError(
                    f"the size of segment {path} ({physical}) is larger than the maximum "
                    f"segment size of {INT32_MAX}",
                    file=str(path),
                )
            self._size = min(physical, end) - start

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        file_already_exists: bool = False,
        init_file_size: int = 0,
        preallocate: bool = False,
    ) -> FileRecords:
        """FileRecords.open: a new preallocated file is extended to ``init_file_size``
        zero bytes but starts with logical size 0; any other file's logical size is its
        physical length."""
        path = Path(path)
        channel = storage().open_channel(path)
        new_and_preallocated = not file_already_exists and preallocate
        if new_and_preallocated:
            channel.truncate(init_file_size)
        return cls(path, channel, 0, 0 if new_and_preallocated else INT32_MAX, False)

    # --- sizes ---------------------------------------------------------------------

    @property
    def size(self) -> int:
        """Kafka's sizeInBytes: the logical size."""
        return self._size

    def physical_size(self) -> int:
        return self._channel.size()

    # --- writing -------------------------------------------------------------------

    def append(self, data: bytes) -> int:
        """Write ``data`` at the logical end; a file can never pass 2^31-1 bytes."""
        if len(data) > INT32_MAX - self._size:
            raise InvalidArgumentError(
                f"append of {len(data)} bytes is too large for a segment at position {self._size}",
                file=str(self.file),
            )
        written = self._channel.write_at(data, self.start + self._size)
        self._size += written
        return written

    def truncate_to(self, target_size: int) -> int:
        """Cut the file to ``target_size`` bytes; returns how many bytes went.

        The OS truncate runs only when ``target_size`` is below the physical length:
        Kafka never truncates to the current length, as some JVMs touch the mtime then.
        """
        original = self._size
        if target_size > original or target_size < 0:
            raise InvalidArgumentError(
                f"attempt to truncate log segment {self.file} to {target_size} bytes failed, "
                f"size of this log segment is {original} bytes",
                file=str(self.file),
            )
        if target_size < self.physical_size():
            self._channel.truncate(target_size)
            self._size = target_size
        return original - target_size

    def trim(self) -> None:
        """Drop a preallocated tail: truncate to the logical size (at roll and close)."""
        self.truncate_to(self._size)

    def flush(self) -> None:
        self._channel.force()

    def close(self) -> None:
        """Flush, trim, close: a cleanly closed .log has no preallocated tail."""
        self.flush()
        self.trim()
        self._channel.close()

    def close_handlers(self) -> None:
        """Close the file without writing anything (an offline log directory)."""
        self._channel.close()

    def rename_to(self, path: str | Path) -> None:
        try:
            storage().replace(self.file, Path(path))
        finally:
            self.file = self._channel.file = Path(path)

    def delete_if_exists(self) -> bool:
        self._channel.close()
        return storage().unlink(self.file, missing_ok=True)

    def set_last_modified(self, ms: int) -> None:
        """Stamp the file's mtime; the reference keeps .log mtimes on the injected clock."""
        ns = ms * 1_000_000
        # through the open channel when there is one (every append stamps it): no path lookup
        if self._channel.closed:
            storage().set_last_modified(self.file, ns)
        else:
            self._channel.set_last_modified(ns)

    def last_modified(self) -> int:
        return storage().last_modified_ns(self.file) // 1_000_000

    # --- reading -------------------------------------------------------------------

    def slice(self, position: int, size: int) -> FileRecords:
        """A view of ``size`` bytes from ``position`` (relative to this view's start).

        ``position < 0``, ``position`` past the end or ``size < 0`` are errors; an end past
        the data (or an overflowing one) is clamped to the current size.
        """
        current = self._size
        if position < 0:
            raise InvalidArgumentError(f"invalid position {position} in read from {self.file}")
        if position > current - self.start:
            raise InvalidArgumentError(
                f"slice from position {position} exceeds the end position of {self.file}"
            )
        if size < 0:
            raise InvalidArgumentError(f"invalid size {size} in read from {self.file}")
        end = self.start + position + size
        if end > INT32_MAX or end > self.start + current:
            end = self.start + current  # Kafka's int overflow check lands here too
        start = self.start + position
        return FileRecords(self.file, self._channel, start, end, True)

    def read_bytes(self) -> bytes:
        """Every byte of this file or slice (Kafka: readInto / writeTo)."""
        return self._channel.read_at(self.start, self._size)

    def file_source(self) -> FileSource:
        """This file read a window at a time (records/stream.py), as a walk of its batches
        reads it: the compiled recovery's (log/_compiled_recovery.py)."""
        return FileSource(self._channel)

    def batches(self) -> Iterator[Batch]:
        return self.batches_from(self.start)

    def batches_from(self, position: int) -> Iterator[Batch]:
        """Whole batches from ``position`` (a batch start) to the end of this view."""
        end = self.end if self.is_slice else self._size
        return iter(iter_file_batches(self._channel, file=str(self.file), start=position, end=end))

    def search_for_offset_with_size(
        self, target_offset: int, starting_position: int
    ) -> LogOffsetPosition | None:
        """INDEX-20: the first batch from ``starting_position`` whose lastOffset >= target, as
        (its base offset, its position, its size): READ-11 reports that base offset, as Kafka's
        ``FileRecords.searchForOffsetWithSize`` has since 4.0 (KAFKA-17803)."""
        for batch in self.batches_from(starting_position):
            if batch.last_offset >= target_offset:
                return LogOffsetPosition(batch.base_offset, batch.position, batch.size_in_bytes)
        return None

    def search_for_timestamp(
        self, target_timestamp: int, starting_position: int, starting_offset: int
    ) -> TimestampAndOffset | None:
        """The first record with timestamp >= target and offset >= starting_offset, looking
        only inside batches whose maxTimestamp reaches the target."""
        for batch in self.batches_from(starting_position):
            if batch.max_timestamp >= target_timestamp:
                for record in batch.records():
                    if record.timestamp >= target_timestamp and record.offset >= starting_offset:
                        epoch = _maybe_leader_epoch(batch.partition_leader_epoch)
                        return TimestampAndOffset(record.timestamp, record.offset, epoch)
        return None

    def largest_timestamp_after(self, starting_position: int) -> TimestampAndOffset:
        """The largest batch maxTimestamp from a position, with that batch's lastOffset."""
        best = TimestampAndOffset(NO_TIMESTAMP, -1, None)
        for batch in self.batches_from(starting_position):
            if batch.max_timestamp > best.timestamp:
                epoch = _maybe_leader_epoch(batch.partition_leader_epoch)
                best = TimestampAndOffset(batch.max_timestamp, batch.last_offset, epoch)
        return best

    def __repr__(self) -> str:
        return (
            f"FileRecords(size={self._size}, file={self.file}, start={self.start}, end={self.end})"
        )
