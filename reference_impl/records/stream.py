"""Walking the entries of a .log file (spec/formats/log-file.md, FRAME-1 to FRAME-12).

A .log file is a bare concatenation of entries (FRAME-1), each
``offset int64 | size int32 | ... magic int8 at byte 16`` [FileLogInputStream.java]::

    log   := entry*              the first at position 0, each next at position + 12 + size
    entry := offset int64 | size int32 | partitionLeaderEpoch-or-crc int32 | magic int8 | ...

The reader rules:

* 17 or fewer bytes left: stop quietly (FRAME-2: a short tail);
* a declared size below 14: the file is corrupt (FRAME-3, ``invalid_batch_size``);
* an entry only partly present: stop quietly (FRAME-4: a torn write or a preallocated
  tail; FRAME-8: zeros are no end marker);
* magic 0 or 1: a legacy message; magic 2: a v2 batch (FRAME-5); anything else:
  ``bad_magic`` (FRAME-6).

No CRC is checked while walking; callers that need it call ``ensure_valid()``.
The scanner reads a file in large chunks, so memory stays bounded by the chunk
size plus the largest batch, whatever the file's size.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import BinaryIO

from ..errors import Category, CorruptRecordError
from .batch import LOG_OVERHEAD, RecordBatch
from .legacy import LegacyBatch
from .record import INT32_MAX

HEADER_SIZE_UP_TO_MAGIC = 17
MIN_ENTRY_SIZE = 14  # LegacyRecord.RECORD_OVERHEAD_V0
_PREFIX = struct.Struct(">qi")
CHUNK_SIZE = 1 << 20

Batch = RecordBatch | LegacyBatch


class _BytesSource:
    def __init__(self, data) -> None:
        self.data = data

    def view(self, position: int, size: int):
        """A buffer holding the bytes of ``[position, position + size)``, and where they
        start in it (no copy)."""
        return self.data, position

    def read(self, position: int, size: int) -> bytes:
        return bytes(self.data[position : position + size])


class FileSource:
    """Positional reads through a read-ahead window, never the whole file. ``handle`` is an
    open file, or a channel with ``read_at(position, size)`` (log/storage.py's)."""

    def __init__(self, handle) -> None:
        # keep the file object alive: if it were collected, its fd would be closed (and
        # its number possibly reused by another open file) while the scan still reads it
        self.handle = handle
        self.pread = _reader(handle)
        self.window = b""
        self.window_start = 0

    def view(self, position: int, size: int) -> tuple[bytes, int]:
        """The window, moved to ``position`` unless it holds ``size`` bytes from there, and
        where they start in it."""
        offset = position - self.window_start
        if offset < 0 or offset + size > len(self.window):
            self.window = self.pread(position, CHUNK_SIZE)
            self.window_start, offset = position, 0
        return self.window, offset

    def read(self, position: int, size: int) -> bytes:
        offset = position - self.window_start
        if offset >= 0 and offset + size <= len(self.window):  # the usual case: no read
            return self.window[offset : offset + size]
        if size > CHUNK_SIZE:
            return self.pread(position, size)
        window, offset = self.view(position, size)
        return window[offset : offset + size]


def _reader(handle):
    """``read(position, size)`` of a channel, or of an open file by its descriptor."""
    if hasattr(handle, "read_at"):
        return handle.read_at
    fd = handle.fileno()
    return lambda position, size: os.pread(fd, size, position)


class BatchScanner:
    """Iterates the whole entries of ``[start, end)``; afterwards ``valid_bytes`` is where
    the last whole entry ended (FRAME-7) and ``end`` the logical end (trailing bytes = end -
    valid_bytes).

    Two optional checks need context the bytes do not carry: ``max_message_bytes``
    (FRAME-11) and the segment's ``base_offset`` for the relative-offset range (FRAME-12).
    """

    def __init__(
        self,
        source,
        end: int,
        *,
        start: int = 0,
        file: str | None = None,
        max_message_bytes: int | None = None,
        base_offset: int | None = None,
    ) -> None:
        self.source = source
        self.start = start
        self.end = end
        self.file = file
        self.max_message_bytes = max_message_bytes
        self.base_offset = base_offset
        self.valid_bytes = start

    def __iter__(self) -> Iterator[Batch]:
        position, end, view, read = self.start, self.end, self.source.view, self.source.read
        while position < end - HEADER_SIZE_UP_TO_MAGIC:
            prefix, at = view(position, HEADER_SIZE_UP_TO_MAGIC)
            offset, size = _PREFIX.unpack_from(prefix, at)
            magic = prefix[at + 16]
            if size < MIN_ENTRY_SIZE:  # a framing error: no offset (ERR-4)
                raise CorruptRecordError(
                    Category.INVALID_BATCH_SIZE,
                    f"entry size {size} is below the minimum of {MIN_ENTRY_SIZE}",
                    file=self.file, position=position,
                )  # fmt: skip
            if position > end - LOG_OVERHEAD - size:
                return  # FRAME: an entry only partly present ends the walk quietly
            raw = read(position, LOG_OVERHEAD + size)
            if magic == 2:  # parse_entry's usual case, without the call
                batch = RecordBatch.from_bytes(raw, position=position, file=self.file)
            else:
                batch = parse_entry(raw, magic, position=position, file=self.file, offset=offset)
            if self.max_message_bytes is not None:  # ERR-5: after magic and minimum size
                self._check_size(size, position, offset)
            if self.base_offset is not None:
                problem = offset_range_problem(batch, self.base_offset)
                if problem is not None:
                    raise problem
            yield batch
            position += LOG_OVERHEAD + size
            self.valid_bytes = position

    @property
    def trailing_bytes(self) -> int:
        return self.end - self.valid_bytes

    def _check_size(self, size: int, position: int, offset: int) -> None:
        """FRAME-11: an entry longer than max.message.bytes is refused before it is read."""
        if LOG_OVERHEAD + size > self.max_message_bytes:
            raise CorruptRecordError(
                Category.RECORD_TOO_LARGE,
                f"entry of {LOG_OVERHEAD + size} bytes exceeds max.message.bytes "
                f"{self.max_message_bytes}",
                file=self.file, position=position, offset=offset,
            )  # fmt: skip


def offset_range_problem(batch: Batch, base_offset: int) -> CorruptRecordError | None:
    """FRAME-12: the last offset must fit an int32 relative to the segment's base offset.
    The error carries the entry's own offset field (ERR-4), read from its first 8 bytes."""
    relative = batch.last_offset - base_offset
    if 0 <= relative <= INT32_MAX:
        return None
    return CorruptRecordError(
        Category.OFFSET_OVERFLOW,
        f"last offset {batch.last_offset} is {relative} from the segment's base offset {base_offset}",
        file=batch.file, position=batch.position,
        offset=int.from_bytes(batch.raw[:8], "big", signed=True),
    )  # fmt: skip


def parse_entry(raw: bytes, magic: int, *, position: int, file: str | None, offset: int) -> Batch:
    """Dispatch one whole entry on its magic byte (FRAME-5, FRAME-6)."""
    if magic in (0, 1):
        return LegacyBatch.from_bytes(raw, position=position, file=file)
    if magic == 2:
        return RecordBatch.from_bytes(raw, position=position, file=file)
    raise CorruptRecordError(
        Category.BAD_MAGIC, f"unknown magic {magic}", file=file, position=position, offset=offset
    )


def iter_batches(
    data, *, file: str | None = None, start: int = 0, end: int | None = None, **checks
):
    """Scan the entries of an in-memory .log image (bytes, bytearray or memoryview).

    ``checks``: ``max_message_bytes`` and ``base_offset``, see BatchScanner."""
    end = len(data) if end is None else min(end, len(data))
    return BatchScanner(_BytesSource(data), end, start=start, file=file, **checks)


def iter_file_batches(
    handle: BinaryIO, *, file: str | None = None, start: int = 0, end: int | None = None, **checks
) -> BatchScanner:
    """Scan the entries of an open .log file (or channel) without loading it (``checks`` as
    iter_batches)."""
    size = handle.size() if hasattr(handle, "read_at") else os.fstat(handle.fileno()).st_size
    end = size if end is None else min(end, size)
    name = file or getattr(handle, "name", None)
    return BatchScanner(FileSource(handle), end, start=start, file=name, **checks)


def read_batch(data, *, file: str | None = None, position: int = 0) -> Batch:
    """Decode exactly one entry from memory (FRAME-10): a short buffer is ``truncated_batch``,
    a size below 14 ``invalid_batch_size`` (FRAME-3) before the length check."""
    if len(data) - position < HEADER_SIZE_UP_TO_MAGIC:
        raise CorruptRecordError(
            Category.TRUNCATED_BATCH, "fewer than 17 bytes", file=file, position=position
        )
    offset, size = _PREFIX.unpack_from(data, position)
    # framing errors carry no offset (ERR-4)
    if size < MIN_ENTRY_SIZE:
        raise CorruptRecordError(
            Category.INVALID_BATCH_SIZE, f"entry size {size}", file=file, position=position
        )
    if len(data) - position < LOG_OVERHEAD + size:
        raise CorruptRecordError(
            Category.TRUNCATED_BATCH,
            f"entry declares {LOG_OVERHEAD + size} bytes, {len(data) - position} present",
            file=file, position=position,
        )  # fmt: skip
    raw = bytes(data[position : position + LOG_OVERHEAD + size])
    return parse_entry(raw, data[position + 16], position=position, file=file, offset=offset)


def iter_memory_batches(data: bytes) -> Iterator[Batch]:
    """ByteBufferLogInputStream: the batches of an in-memory set.

    Fewer than 12 bytes left ends the set; a size below 14 is ``invalid_batch_size``;
    fewer than 17 bytes left ends the set; a magic outside 0..2 is ``bad_magic``; a batch
    not wholly present ends the set. ``validBytes`` then excludes the tail.
    """
    position = 0
    while len(data) - position >= LOG_OVERHEAD:
        offset, size = _PREFIX.unpack_from(data, position)
        if size < MIN_ENTRY_SIZE:
            raise CorruptRecordError(
                Category.INVALID_BATCH_SIZE,
                f"record size {size} is less than the minimum record overhead ({MIN_ENTRY_SIZE})",
                position=position,
            )
        if len(data) - position < HEADER_SIZE_UP_TO_MAGIC:
            return
        magic = data[position + 16]
        if magic > 2:  # a Java byte: 0x80..0xff are negative, so also invalid
            raise CorruptRecordError(
                Category.BAD_MAGIC, f"invalid magic found in record: {magic}", position=position
            )
        total = LOG_OVERHEAD + size
        if len(data) - position < total:
            return
        yield parse_entry(
            data[position : position + total], magic, position=position, file=None, offset=offset
        )
        position += total
