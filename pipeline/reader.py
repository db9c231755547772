"""Reading one byte range of a segment into Arrow chunks (the body of the data source's
``read()``, runs on executors).

The range's entries are walked like ``EntryWalk`` (klogspec/walk.py) walks a file:
each entry is checked as ``klogspec verify`` checks it (``header_problem``: size and CRC,
offset range, codec; then its records and, for control batches, their keys and markers),
and an entry that is well framed but bad is stepped over. Where entries stop being
framed (FRAME-3) the walk of the range ends. A partial entry or zeros at the end of the
file are the end of the data (a torn or preallocated tail), not an error; ``klogspec
scan`` is the tool that reports them (FRAME-8, FRAME-9).

What a bad entry does is the ``on_error`` policy:

* ``fail`` (default): raise its ``KafkaLogError``, which names the file, position and
  offset and carries a stable category (spec/formats/errors.md); Spark fails the task;
* ``skip``: leave it out;
* ``report``: one row for it with ``error_rule`` (the requirement ID verify cites),
  ``error_category`` and ``error_message``.

A file that cannot be read at all (I/O error, a tiered-storage object in a transformed
form) is ``SegmentUnreadableError``, under the same policy.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

from klogspec.verify import rule_for_error
from klogspec.walk import following_entry, header_problem
from reference_impl import kernels
from reference_impl.errors import KafkaLogError
from reference_impl.records import (
    Batch,
    BatchScanner,
    Compression,
    ControlRecordType,
    parse_control_key,
    parse_end_txn_marker,
)

from . import tiered
from .chunks import ChunkBuilder
from .schema import arrow_schema
from .splits import SegmentRange
from .storage import RandomAccess, read_all

_ZERO_CHUNK = 1 << 20
_MARKERS = (ControlRecordType.ABORT, ControlRecordType.COMMIT)
UNREADABLE = "unreadable"


class SegmentUnreadableError(Exception):
    """A segment file that cannot be read at all (``error_category`` 'unreadable')."""

    def __init__(self, file: str, message: str) -> None:
        super().__init__(f"{file}: {UNREADABLE}: {message}")
        self.file = file
        self.message = message


def read_range(rng: SegmentRange, level: str = "record", on_error: str = "fail"):
    """The rows of the entries starting in ``rng``, as Arrow record batches."""
    schema = arrow_schema(level, on_error)
    segment = rng.segment
    constants = {
        "topic": segment.topic, "partition": segment.partition,
        "segment_base_offset": segment.base_offset, "file": segment.log,
    }  # fmt: skip
    if level == "record":
        chunks = _RecordChunks(schema, constants, RECORD_BATCH_FIELDS, RECORD_FIELDS)
        rows = _records_of
    else:
        chunks = ChunkBuilder(schema, constants, BATCH_FIELDS)
        rows = _batch_rows
    try:
        _check_readable(segment)
        with RandomAccess(segment.log) as source:
            entries = walk_range
            if level == "record" and _compiled_entries is not None:
                entries = functools.partial(
                    _compiled_entries, chunks=chunks, base_offset=segment.base_offset
                )
            for item in entries(source, segment.size, rng.start, rng.end, segment.log):
                if item is _CLEAN:
                    pass  # batches the compiled walk added to the chunk (_compiled_walk.py)
                elif isinstance(item, KafkaLogError):
                    _bad_entry(item, _magic(item, source), False, on_error, chunks, level)
                elif (problem := header_problem(item, base_offset=segment.base_offset)) is not None:
                    _bad_entry(problem, item.magic, False, on_error, chunks, level)
                else:
                    try:
                        yield from rows(item, chunks) or ()  # a huge batch's full chunks
                    except KafkaLogError as exc:
                        _bad_entry(exc, item.magic, True, on_error, chunks, level)
                if chunks.full:
                    yield chunks.flush()
    except (OSError, SegmentUnreadableError) as exc:
        error = exc if isinstance(exc, SegmentUnreadableError) else _unreadable(segment, exc)
        if on_error == "fail":
            raise error
        if on_error == "report":
            chunks.add_row({"error_category": UNREADABLE, "error_message": error.message})
    last = chunks.flush()
    if last is not None:
        yield last


def _unreadable(segment, exc: OSError) -> SegmentUnreadableError:
    return SegmentUnreadableError(segment.log, f"{exc.strerror or exc}")


def _check_readable(segment) -> None:
    """A tiered-storage object is read only when its manifest says it is the raw segment."""
    if segment.manifest is None:
        return
    try:
        manifest = read_all(segment.manifest)
    except OSError as exc:
        raise SegmentUnreadableError(
            segment.log, f"its manifest {segment.manifest} cannot be read ({exc})"
        )
    problem = tiered.transform_problem(manifest)
    if problem is not None:
        raise SegmentUnreadableError(segment.log, problem)


# --- walking a range ---------------------------------------------------------------------


def walk_range(source, size: int, start: int, end: int, file: str) -> Iterator:
    """The entries starting in ``[start, end)`` of a file of ``size`` bytes: each a
    ``Batch``, or the ``KafkaLogError`` of one that does not parse (the walk steps over it
    when it is well framed, and ends at a framing error or a zero-filled tail)."""
    position: int | None = start
    while position is not None:
        scanner = BatchScanner(source, size, start=position, file=file)
        try:
            for batch in scanner:
                if batch.position >= end:
                    return
                yield batch
            return  # the end of the file, or a partial entry (FRAME-2, FRAME-4)
        except KafkaLogError as exc:
            if exc.position is None or exc.position >= end or _zeros(source, exc.position, size):
                return
            yield exc
            position = _next_entry(source, exc.position, size)


def _next_entry(source, position: int, size: int) -> int | None:
    """Where the entry after the well-framed entry at ``position`` starts (walk's stepping
    rule over a positional source), or None."""
    return following_entry(source.read, position, size)


def _zeros(source, start: int, end: int) -> bool:
    for position in range(start, end, _ZERO_CHUNK):
        chunk = source.read(position, min(_ZERO_CHUNK, end - position))
        if chunk.count(0) != len(chunk):
            return False
    return True


# --- rows ----------------------------------------------------------------------------------


def _magic(exc: KafkaLogError, source) -> int | None:
    """The magic byte of an entry that did not parse; None for a framing error (FRAME-3),
    as verify tells them apart."""
    if exc.category == "invalid_batch_size" and exc.offset is None:
        return None
    byte = source.read(exc.position + 16, 1)
    return byte[0] if byte else None


def _bad_entry(exc, magic, in_records: bool, on_error: str, chunks, level: str) -> None:
    """The ``on_error`` policy for one bad entry; ``in_records`` when its header was fine
    and decoding its records failed (the rule differs, as in verify)."""
    if on_error == "fail":
        exc.add_note("kafka-segments: on_error=fail; use on_error=skip or report to go on")
        raise exc
    if on_error == "skip":
        return
    offset_column = "batch_base_offset" if level == "record" else "base_offset"
    chunks.add_row({
        "position": exc.position, offset_column: exc.offset,
        "error_rule": rule_for_error(exc, magic=magic, in_records=in_records),
        "error_category": exc.category.value, "error_message": exc.message,
    })  # fmt: skip


# the columns of the tuples the row functions give ChunkBuilder (schema.py has the types)
RECORD_BATCH_FIELDS = (
    "position", "batch_base_offset", "batch_last_offset", "timestamp_type", "producer_id",
    "producer_epoch", "is_transactional", "is_control", "codec", "magic", "leader_epoch",
)  # fmt: skip
RECORD_FIELDS = ("offset", "timestamp", "key", "value", "headers", "sequence", "control_type")
BATCH_FIELDS = (
    "position", "size", "magic", "base_offset", "last_offset", "record_count", "base_timestamp",
    "max_timestamp", "timestamp_type", "codec", "is_transactional", "is_control",
    "producer_id", "producer_epoch", "base_sequence", "last_sequence", "leader_epoch",
    "delete_horizon_ms", "crc",
)  # fmt: skip
_CODECS = {codec.value: codec.label for codec in Compression}


def _control_types(batch: Batch, records) -> list[str]:
    """Each control record's type (CTRL-1), checking transaction markers as verify does."""
    types = []
    for record in records:
        control_type = parse_control_key(record.key)
        if control_type in _MARKERS:
            parse_end_txn_marker(record.key, record.value)
        types.append(control_type.name)
    return types


def _headers(record) -> list[tuple]:
    return [(h.key.decode("utf-8", "replace"), h.value) for h in record.headers]


# Records past which a batch is added a chunk at a time, not whole (at about 40 bytes of
# column a record, 100,000 records are 4 MB): batches of real clients hold far fewer
LARGE_BATCH_RECORDS = 100_000


def _record_rows(batch: Batch, chunks: ChunkBuilder) -> Iterator:
    """The batch's records into ``chunks``; a batch of more records than a chunk holds is
    checked whole first (its error is the batch's, before any row), then added a chunk of
    records at a time, each full chunk yielded: memory is bounded by one chunk whatever
    recordsCount says (issue 20: 6 million records in one 4.8 MB batch made the executor
    ask Arrow for 1.3 GB)."""
    large = batch.records_count is None or batch.records_count > LARGE_BATCH_RECORDS
    if large:  # legacy wrappers' counts are unknown until decoded
        for records in batch.record_chunks():
            if batch.is_control:
                _control_types(batch, records)
    first = None
    for records in batch.record_chunks(chunk_size=chunks.max_rows):
        first = first if first is not None else _first_offset(batch, records)
        _add_records(batch, records, first, chunks)
        if large and chunks.full:
            yield chunks.flush()
    if first is None:  # no record: the batch still has its (empty) entry
        _add_records(batch, [], _first_offset(batch, []), chunks)


def _first_offset(batch: Batch, records) -> int:
    return records[0].offset if records and batch.magic < 2 else batch.base_offset


def _add_records(batch: Batch, records, first: int, chunks: ChunkBuilder) -> None:
    if batch.is_control:
        types = _control_types(batch, records)
        rows = [
            (r.offset, r.timestamp, r.key, r.value, _headers(r), r.sequence, control_type)
            for r, control_type in zip(records, types, strict=True)
        ]
    else:
        rows = [
            (r.offset, r.timestamp, r.key, r.value, _headers(r) if r.headers else [],
             r.sequence, None)
            for r in records
        ]  # fmt: skip
    chunks.add_bytes(sum(len(r[2] or b"") + len(r[3] or b"") for r in rows))
    chunks.add(
        (
            batch.position, first, batch.last_offset, batch.timestamp_type.label,
            batch.producer_id, batch.producer_epoch, batch.is_transactional, batch.is_control,
            _CODECS[batch.compression_id], batch.magic, batch.partition_leader_epoch,
        ),
        rows,
    )  # fmt: skip


def _batch_rows(batch: Batch, chunks: ChunkBuilder) -> None:
    if batch.magic == 2:
        count, base, base_ts = batch.records_count, batch.base_offset, batch.base_timestamp
        if batch.is_control:
            for records in batch.record_chunks():
                _control_types(batch, records)
        delete_horizon = batch.delete_horizon_ms
    else:  # a legacy message; a compressed wrapper's base offset and count need its records
        count, base = 1, batch.last_offset
        if batch.compression_id:
            sizes = [(len(r), r[0].offset) for r in batch.record_chunks() if r]
            count, base = sum(n for n, _ in sizes), sizes[0][1]
        base_ts, delete_horizon = batch.timestamp, None
    chunks.add((
        batch.position, batch.size_in_bytes, batch.magic, base, batch.last_offset, count,
        base_ts, batch.max_timestamp, batch.timestamp_type.label,
        _CODECS[batch.compression_id], batch.is_transactional, batch.is_control,
        batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.last_sequence,
        batch.partition_leader_epoch, delete_horizon, batch.crc,
    ))  # fmt: skip


# The compiled decoder into Arrow columns (issue 14), unless pure Python: _columnar.py;
# and the compiled walk of a range's clean batches into them: _compiled_walk.py.
_RecordChunks, _records_of = ChunkBuilder, _record_rows
_compiled_entries, _CLEAN = None, object()
if kernels.columns is not None:
    from . import _compiled_walk
    from ._columnar import ColumnarChunkBuilder as _RecordChunks
    from ._columnar import record_rows as _compiled_record_rows

    _records_of = functools.partial(
        _compiled_record_rows, readable=_record_rows, large=LARGE_BATCH_RECORDS
    )
    _compiled_entries = functools.partial(
        _compiled_walk.entries, walk=walk_range, next_entry=_next_entry
    )
    _CLEAN = _compiled_walk.CLEAN
