"""Intact batches among damaged bytes (spec/behaviour/recovery.md §7, RECOV-24, RECOV-27): the
walk that ``recover`` measures its loss with (loss.py) and ``salvage`` writes records from
(salvage.py), so that the records one states are the records the other gives back.

A batch is intact when it frames, its CRC-32C holds (BATCH-3, BATCH-4) and its records
decode. After a batch that is not, the walk looks for the next intact one from the next byte on
(a v2 header whose magic, length and CRC agree), since the damaged byte may be the length: a
recovery stops at the first bad batch (RECOV-3), a salvage must not. A CRC over a candidate is
what makes a false start as unlikely as 2^-32. Files are mapped read-only, so a 1 GiB segment is
held by the page cache, not by this process.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Iterator
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.records import RecordBatch
from reference_impl.records.batch import RECORD_BATCH_OVERHEAD
from reference_impl.records.stream import read_batch

from ..safe_files import open_regular

_MAGIC_AT = 16  # the magic byte's position in an entry (offset 8, length 4, epoch 4)


@contextlib.contextmanager
def mapped(path: Path) -> Iterator[bytes]:
    """The file's bytes, mapped read-only (a piece may be a whole 1 GiB segment: the page
    cache holds it, not this process)."""
    with open_regular(path, within=path.parent) as handle:  # never a FIFO: salvage must not hang
        if os.fstat(handle.fileno()).st_size == 0:
            yield b""
            return
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            yield data


def zero_tail(data, start: int, end: int, file_end: int, window: int = 1 << 20) -> bool:
    """Whether the range ``[start, end)`` ends the data at ``file_end`` and holds only zero
    bytes (a preallocated tail, which no recovery calls damage), read in windows."""
    return end == file_end and all(
        not data[at : min(at + window, end)].strip(b"\0") for at in range(start, end, window)
    )


def walk_intact(data, start: int, end: int, file: str) -> Iterator[tuple]:
    """``(batch, None)`` for each intact v2 batch of ``data[start:end]`` and ``(None, (from,
    to))`` for each damaged range between them; after a damaged batch the walk goes on at
    the next position where an intact batch starts, since its length may be the damage."""
    position = start
    while position < end:
        batch = _intact_at(data, position, end, file)
        if batch is not None:
            yield batch, None
            position += batch.size_in_bytes
            continue
        following = _next_intact(data, position + 1, end, file)
        stop = end if following is None else following
        yield None, (position, stop)
        position = stop


def _intact_at(data, position: int, end: int, file: str) -> RecordBatch | None:
    try:
        batch = read_batch(memoryview(data)[:end], file=file, position=position)
        if not isinstance(batch, RecordBatch):
            return None  # legacy entries are not salvaged (v0/v1 predate 2017's 0.11)
        batch.ensure_valid()
        batch.records()  # a batch whose records do not decode cannot be produced again
    except KafkaLogError:
        return None
    return batch


def _next_intact(data, position: int, end: int, file: str) -> int | None:
    """The next position from ``position`` on where an intact v2 batch starts."""
    limit = end - RECORD_BATCH_OVERHEAD
    while position <= limit:
        found = data.find(b"\x02", position + _MAGIC_AT, limit + _MAGIC_AT + 1)
        if found < 0:
            return None
        candidate = found - _MAGIC_AT
        if _intact_at(data, candidate, end, file) is not None:
            return candidate
        position = candidate + 1
    return None
