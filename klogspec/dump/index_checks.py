"""DumpLogSegments' cross-checks of an index against its ``.log`` (``klogspec dump
--verify-index-only``; spec/formats/offset-index.md, time-index.md).

Kafka's tool checks each offset-index entry against the batch at its position and each
time-index entry against the batch holding its offset [DumpLogSegments.scala dumpIndex,
dumpTimeIndex]. Those checks are stricter than the format rules: ``IndexMismatch`` tells
the disagreements a verifier must accept (``allowed_by``) from those it must not. The
index bytes are read by reference_impl's codecs (formats/index_entries.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reference_impl.formats.index_entries import (
    OffsetPosition,
    TimestampOffset,
    lookup_offset,
)
from reference_impl.records.record import NO_TIMESTAMP


@dataclass(frozen=True, slots=True)
class BatchSpan:
    """What the index checks need of a batch in the .log: its offsets, and (for the time
    index) the max timestamp of its records, None when not computed."""

    base_offset: int
    last_offset: int
    max_timestamp: int | None = None


@dataclass(frozen=True, slots=True)
class IndexMismatch:
    """One disagreement between an index entry and the log, found by DumpLogSegments' rules.

    Offset index (index value: the entry's offset; log value: the lastOffset of the batch
    at the entry's position, -1 if none):

    * ``no_batch_at_position``: no whole, CRC-valid batch starts at the position (OIDX-5);
    * ``offset_below_batch``: the offset is below the batch's base offset, so an earlier
      batch may hold it and lookups would skip it (OIDX-5);
    * ``offset_inside_batch``: the offset is in the batch but not its last one;
    * ``offset_beyond_batch``: the offset lies after that batch, as a follower writes when
      it appends a fetched chunk of several batches at once (allowed by OIDX-7).

    Time index (index value: the entry's offset or timestamp; log value: the batch's):

    * ``offset_not_found``: no batch from the looked-up position has that offset
      (log value -1 when none reaches it, else the lastOffset of the batch after the gap);
    * ``offset_inside_batch``: the offset is inside a batch but not its last one, as a
      leader writes when it indexes the record carrying the max timestamp;
    * ``timestamp_mismatch``: the timestamp differs from the batch's max record timestamp;
    * ``out_of_order``: the timestamp is not above the previous entry's (log value).

    Kafka reports every offset-index kind as one "mismatch" and the first two time index
    kinds as one "offset not found"; telling them apart shows which are benign:
    ``allowed_by`` names the spec rule under which a verifier must accept the entry.
    """

    kind: str
    slot: int
    index_value: int
    log_value: int
    allowed_by: str | None = None


def verify_offset_index(
    entries: list[OffsetPosition], batch_at: Callable[[int], BatchSpan | None]
) -> list[IndexMismatch]:
    """DumpLogSegments' offset-index check: each entry's offset is the lastOffset of the
    batch starting at its position (stricter than OIDX-5, see IndexMismatch).

    ``batch_at(position)`` returns the whole, CRC-valid batch starting exactly at
    ``position``, or None (a position inside a batch or past the end).
    """
    mismatches = []
    for slot, entry in enumerate(entries):
        batch = batch_at(entry.position)
        if batch is None:
            mismatches.append(IndexMismatch("no_batch_at_position", slot, entry.offset, -1))
        elif entry.offset != batch.last_offset:
            if entry.offset > batch.last_offset:
                kind, allowed_by = "offset_beyond_batch", "OIDX-7"
            elif entry.offset >= batch.base_offset:
                kind, allowed_by = "offset_inside_batch", "OIDX-7"
            else:
                kind, allowed_by = "offset_below_batch", None
            mismatches.append(
                IndexMismatch(kind, slot, entry.offset, batch.last_offset, allowed_by)
            )
    return mismatches


def verify_time_index(
    entries: list[TimestampOffset],
    offset_entries: Sequence[OffsetPosition],
    base_offset: int,
    find_batch: Callable[[int, int], BatchSpan | None],
) -> list[IndexMismatch]:
    """DumpLogSegments.dumpTimeIndex's checks (stricter than TIDX-2/TIDX-9), entry by entry:

    1. position = the offset index's lookup(entry.offset), Kafka's search (OIDX-6) over
       ``offset_entries``: DumpLogSegments opens the offset index as the broker does, so on
       an untrimmed one the zero slots take part (position 0 if it has none);
    2. ``find_batch(position, offset)``: the first batch from there whose lastOffset >= offset;
    3. none, or a lastOffset != offset: the offset is not a batch's last offset; else the
       timestamp must equal the batch's max record timestamp and exceed the previous
       entry's timestamp.

    The previous timestamp advances on every entry, found or not, as in Kafka.
    """
    mismatches = []
    previous = NO_TIMESTAMP
    for slot, entry in enumerate(entries):
        position = lookup_offset(offset_entries, entry.offset, base_offset).position
        batch = find_batch(position, entry.offset)
        if batch is None:
            mismatches.append(IndexMismatch("offset_not_found", slot, entry.offset, -1, "TIDX-9"))
        elif batch.last_offset != entry.offset:
            # A leader indexes the record carrying the max timestamp, inside its batch (TIDX-2
            # holds for it); an offset below the batch was removed by compaction (TIDX-9).
            if batch.base_offset <= entry.offset:
                kind, allowed_by = "offset_inside_batch", "TIDX-2"
            else:
                kind, allowed_by = "offset_not_found", "TIDX-9"
            mismatches.append(
                IndexMismatch(kind, slot, entry.offset, batch.last_offset, allowed_by)
            )
        else:
            if batch.max_timestamp != entry.timestamp:
                mismatches.append(
                    IndexMismatch(
                        "timestamp_mismatch", slot, entry.timestamp, batch.max_timestamp, "TIDX-9"
                    )
                )
            if previous >= entry.timestamp:
                mismatches.append(IndexMismatch("out_of_order", slot, entry.timestamp, previous))
        previous = entry.timestamp
    return mismatches
