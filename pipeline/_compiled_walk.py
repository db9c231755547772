"""reader.py's walk of a range at the record level with the compiled batch walk
(``extract_clean_batches`` of reference_impl/kernels, the compiled ``columns`` kernel), as
klogspec/verify/_compiled_walk.py does for verify.

``read_range`` takes the entries of ``walk_range`` one by one: it checks each header
(``header_problem``), then decodes its records into the chunk. ``entries`` gives it the
same entries, but lets the kernel take each run of v2 uncompressed data batches that
would give no problem (most of a log), a window of the file at a time: their header
checks, CRC and records into the chunk's columns (``RecordColumns``) straight from the
window, with no ``RecordBatch`` and no Python per batch. Every other entry (legacy,
control, compressed, empty, any problem, the range's or the data's end) goes, one at a
time, through the readable ``walk_range`` and ``read_range``'s own handling, so errors,
rows and the policy's results are the readable reader's (tests/test_extract_walk.py).
After a kernel run it yields ``CLEAN``: the chunk has new rows and ``read_range``
flushes it when full, as after any entry (the kernel stops at the batch that fills it).
"""

from __future__ import annotations

from reference_impl import kernels
from reference_impl.records import Compression
from reference_impl.records.record import TimestampType
from reference_impl.records.stream import HEADER_SIZE_UP_TO_MAGIC

from .storage import WINDOW

_SAFE_OFFSET = 1 << 62
CLEAN = object()  # "the kernel added batches to the chunk": no entry for read_range to judge
_LABELS = (TimestampType.CREATE_TIME.label, TimestampType.LOG_APPEND_TIME.label,
           Compression.NONE.label)  # fmt: skip


def entries(source, size, start, end, file, *, chunks, base_offset, walk, next_entry):
    """``walk(source, size, start, end, file)``'s entries (reader.walk_range) for a
    ``ColumnarChunkBuilder`` ``chunks``, the clean v2 batches among them added to it by
    the kernel (then ``CLEAN``); ``next_entry`` is reader._next_entry."""
    if base_offset is not None and not 0 <= base_offset <= _SAFE_OFFSET:
        yield from walk(source, size, start, end, file)  # past the kernel's int64 sums
        return
    position = start
    while position < end:
        position, added = yield from _clean_batches(source, size, position, end, chunks,
                                                    base_offset)  # fmt: skip
        if added:
            yield CLEAN
        if position >= end:
            return
        # one entry the readable way (a bad but framed entry is stepped over)
        item = next(walk(source, size, position, end, file), None)
        if item is None:
            return  # the end of the data, a partial entry, a zero-filled tail (walk_range)
        yield item
        position = next_entry(source, item.position, size)
        if position is None:
            return


def _clean_batches(source, size, position, end, chunks, base_offset):
    """Let the kernel take the clean batches from ``position``, refilling the window as it
    asks and yielding ``CLEAN`` when it filled the chunk; returns (where the readable walk
    must go on, whether batches were added since the last yield)."""
    refilled_at, added = None, False
    while position < min(end, size - HEADER_SIZE_UP_TO_MAGIC):
        window, at = source.view(position, HEADER_SIZE_UP_TO_MAGIC)
        rows = chunks.rows
        position, reason, chunks.rows, chunks.bytes = kernels.columns.extract_clean_batches(
            window, at, position, size, end, base_offset, chunks.columns, chunks.batch_rows,
            chunks.padding, _LABELS, chunks.rows, chunks.max_rows, chunks.bytes, chunks.max_bytes,
        )  # fmt: skip
        added = added or chunks.rows != rows
        if reason == kernels.columns.FULL:
            yield CLEAN  # read_range flushes the chunk; a fresh one is taken from here
            added = False
            continue
        if reason != kernels.columns.REFILL or refilled_at == position:
            break  # an entry for the readable walk (or larger than the window)
        source.view(position, WINDOW)  # a window from the entry on
        refilled_at = position
    return position, added
