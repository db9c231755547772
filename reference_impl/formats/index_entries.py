"""Offset, time and transaction index files (OIDX-*, TIDX-*, TXN-*).

Pages: spec/formats/offset-index.md, time-index.md, transaction-index.md. The offset
and time indexes are arrays of fixed-size big-endian entries with no header,
checksum or version (OIDX-1, TIDX-1) [OffsetIndex.java, TimeIndex.java]::

    .index      relativeOffset int32 | position int32          8 bytes
    .timeindex  timestamp int64      | relativeOffset int32    12 bytes

``offset = baseOffset + relativeOffset``, the base offset coming from the file
name. Kafka preallocates both files with zeros and opens an existing file with
``entries = floor(length / entrySize)``, so the zero slots of an untrimmed file
count as entries; readers find the end of the real entries with the stop rule
(``used_entry_count``). The transaction index is a plain append-only file of
34-byte AbortedTxn entries (TXN-1) [TransactionIndex.java, AbortedTxn.java].

These are pure functions over bytes (or an mmap); the mutable OffsetIndex,
TimeIndex and TransactionIndex classes build on them.
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from ..constants import INT32_MAX
from ..errors import Category, CorruptIndexError, KafkaLogError
from ..records.record import NO_TIMESTAMP

OFFSET_INDEX_ENTRY = struct.Struct(">ii")  # relativeOffset, position
TIME_INDEX_ENTRY = struct.Struct(">qi")  # timestamp, relativeOffset
ABORTED_TXN = struct.Struct(
    ">hqqqq"
)  # version, producerId, firstOffset, lastOffset, lastStableOffset
OFFSET_INDEX_ENTRY_SIZE = OFFSET_INDEX_ENTRY.size  # 8
TIME_INDEX_ENTRY_SIZE = TIME_INDEX_ENTRY.size  # 12
ABORTED_TXN_SIZE = ABORTED_TXN.size  # 34
ABORTED_TXN_CURRENT_VERSION = 0


class OffsetPosition(NamedTuple):
    """An offset-index entry: the batch holding ``offset`` starts at ``position`` in the .log.
    (A NamedTuple, as TimestampOffset: recovery and appends make one per batch.)"""

    offset: int
    position: int


class TimestampOffset(NamedTuple):
    """A time-index entry: records after ``offset`` all have timestamps above ``timestamp``."""

    timestamp: int
    offset: int


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """A transaction-index entry: ``producer_id`` aborted ``[first_offset, last_offset]``."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    version: int = ABORTED_TXN_CURRENT_VERSION


# --- entry counts and the stop rule ---------------------------------------------------


def entry_count(length: int, entry_size: int) -> int:
    """OIDX-9, TIDX-11: Kafka's entries for an opened file, zero slots included: floor(len/size)."""
    return length // entry_size


def trailing_bytes(length: int, entry_size: int) -> int:
    """Bytes after the last whole entry; any makes ``sanityCheck`` fail."""
    return length % entry_size


def relative_offset(offset: int, base_offset: int) -> int:
    """``offset - baseOffset``, which must fit an int32 [AbstractIndex.relativeOffset]."""
    relative = offset - base_offset
    if not 0 <= relative <= INT32_MAX:
        raise KafkaLogError(
            Category.OFFSET_OVERFLOW,
            f"offset {offset} is not within [0, Int.MAX] of base offset {base_offset}",
            offset=offset,
        )
    return relative


def until_stop(entries: Iterable, base_offset: int) -> Iterator:
    """OIDX-10, TIDX-12, DumpLogSegments' stop rule: the real entries end at the first slot
    ``i > 0`` whose offset equals the base offset (relative offset 0: a zero-filled,
    preallocated slot).

    Slot 0 may legitimately hold the base offset, so it never stops the walk. Lazy, so
    a 10 MiB preallocated index is not decoded past its last real entry.
    """
    for slot, entry in enumerate(entries):
        if slot > 0 and entry.offset == base_offset:
            return
        yield entry


# --- offset index (.index) ------------------------------------------------------------


def offset_index_entry(buf, slot: int, base_offset: int) -> OffsetPosition:
    relative, position = OFFSET_INDEX_ENTRY.unpack_from(buf, slot * OFFSET_INDEX_ENTRY_SIZE)
    return OffsetPosition(base_offset + relative, position)


def iter_offset_index(buf, base_offset: int, *, entries: int | None = None):
    """Every whole entry of ``buf`` (zero slots included), lazily."""
    count = entry_count(len(buf), OFFSET_INDEX_ENTRY_SIZE) if entries is None else entries
    for slot in range(count):
        yield offset_index_entry(buf, slot, base_offset)


def read_offset_index(buf, base_offset: int) -> list[OffsetPosition]:
    """Every whole entry of an .index image, zero slots included (Kafka's view of an opened
    file); ``until_stop`` cuts them to the real ones, and a remainder of
    ``len % 8`` bytes is ignored here and rejected by the sanity check."""
    return list(iter_offset_index(buf, base_offset))


def encode_offset_index_entry(entry: OffsetPosition, base_offset: int) -> bytes:
    return OFFSET_INDEX_ENTRY.pack(relative_offset(entry.offset, base_offset), entry.position)


def sanity_check_offset_index(
    buf, base_offset: int, *, entries: int | None = None, file: str | None = None
) -> None:
    """OffsetIndex.sanityCheck (OIDX-2, OIDX-3): raise ``CorruptIndexError`` when the index
    has entries but its last offset is below the base offset, or its length is not a
    multiple of 8.

    ``entries`` defaults to a freshly opened file's count (zero slots included), so the
    last entry of an untrimmed index is a zero slot, whose offset is the base offset:
    that passes, as lastOffset == baseOffset is valid.
    """
    entry = lambda slot: offset_index_entry(buf, slot, base_offset)  # noqa: E731
    sanity_check_offset_slots(len(buf), entry, base_offset, entries=entries, file=file)


def sanity_check_offset_slots(
    length: int, entry, base_offset: int, *, entries: int | None = None, file: str | None = None
) -> None:
    """``sanity_check_offset_index`` on a file of ``length`` bytes whose slots ``entry(slot)``
    reads: a tool reads only the slot the check needs, not a (sparse, huge) file."""
    count = entry_count(length, OFFSET_INDEX_ENTRY_SIZE) if entries is None else entries
    if count:
        last = entry(count - 1)
        if last.offset < base_offset:
            raise CorruptIndexError(
                f"index has {count} entries but the last offset is {last.offset}, "
                f"which is less than the base offset {base_offset}",
                file=file, position=(count - 1) * OFFSET_INDEX_ENTRY_SIZE, offset=last.offset,
            )  # fmt: skip
    _check_multiple(length, OFFSET_INDEX_ENTRY_SIZE, file)


def lookup_offset(entries: list[OffsetPosition], target: int, base_offset: int) -> OffsetPosition:
    """OIDX-6, OffsetIndex.lookup: the entry with the largest offset <= target, else
    (baseOffset, 0)."""
    slot = bisect.bisect_right(entries, target, key=lambda e: e.offset) - 1
    return entries[slot] if slot >= 0 else OffsetPosition(base_offset, 0)


# --- time index (.timeindex) ----------------------------------------------------------


def time_index_entry(buf, slot: int, base_offset: int) -> TimestampOffset:
    timestamp, relative = TIME_INDEX_ENTRY.unpack_from(buf, slot * TIME_INDEX_ENTRY_SIZE)
    return TimestampOffset(timestamp, base_offset + relative)


def iter_time_index(buf, base_offset: int, *, entries: int | None = None):
    count = entry_count(len(buf), TIME_INDEX_ENTRY_SIZE) if entries is None else entries
    for slot in range(count):
        yield time_index_entry(buf, slot, base_offset)


def read_time_index(buf, base_offset: int) -> list[TimestampOffset]:
    """Every whole entry of a .timeindex image, zero slots included (see read_offset_index)."""
    return list(iter_time_index(buf, base_offset))


def encode_time_index_entry(entry: TimestampOffset, base_offset: int) -> bytes:
    return TIME_INDEX_ENTRY.pack(entry.timestamp, relative_offset(entry.offset, base_offset))


def sanity_check_time_index(
    buf, base_offset: int, *, entries: int | None = None, file: str | None = None
) -> None:
    """TimeIndex.sanityCheck (TIDX-5, TIDX-6, TIDX-7): with entries, the last timestamp must
    not be below the first and the last offset not below the base offset; the length must be
    a multiple of 12.

    On an untrimmed file the last entry is a zero slot, timestamp 0, so any index whose
    first timestamp is positive fails: Kafka then rebuilds it (a crash leaves such files).
    """
    entry = lambda slot: time_index_entry(buf, slot, base_offset)  # noqa: E731
    sanity_check_time_slots(len(buf), entry, base_offset, entries=entries, file=file)


def sanity_check_time_slots(
    length: int, entry, base_offset: int, *, entries: int | None = None, file: str | None = None
) -> None:
    """``sanity_check_time_index`` on a file of ``length`` bytes whose slots ``entry(slot)``
    reads (as ``sanity_check_offset_slots``)."""
    count = entry_count(length, TIME_INDEX_ENTRY_SIZE) if entries is None else entries
    if count:
        first, last = entry(0), entry(count - 1)
        where = {"file": file, "position": (count - 1) * TIME_INDEX_ENTRY_SIZE}
        if last.timestamp < first.timestamp:
            raise CorruptIndexError(
                f"time index has {count} entries but the last timestamp is {last.timestamp}, "
                f"which is less than the first timestamp {first.timestamp}",
                offset=last.offset, **where,
            )  # fmt: skip
        if last.offset < base_offset:
            raise CorruptIndexError(
                f"time index has {count} entries but the last offset is {last.offset}, "
                f"which is less than the base offset {base_offset}",
                offset=last.offset, **where,
            )  # fmt: skip
    _check_multiple(length, TIME_INDEX_ENTRY_SIZE, file)


def lookup_timestamp(
    entries: list[TimestampOffset], target: int, base_offset: int
) -> TimestampOffset:
    """TIDX-8, TimeIndex.lookup: the entry with the largest timestamp <= target, else
    (-1, baseOffset)."""
    slot = bisect.bisect_right(entries, target, key=lambda e: e.timestamp) - 1
    return entries[slot] if slot >= 0 else TimestampOffset(NO_TIMESTAMP, base_offset)


# --- transaction index (.txnindex) ----------------------------------------------------


def decode_aborted_txn(buf, position: int = 0, *, file: str | None = None) -> AbortedTxn:
    """One 34-byte entry. TXN-2, TXN-3, the version quirk: Kafka reads the version as the
    single signed byte at offset 0 (the high byte of the int16) and rejects it only when > 0, so
    ``00 01`` reads as version 0 and ``80 00`` as -128, both accepted.

    Kafka throws a plain KafkaException here, not CorruptIndexException; the category
    is ``corrupt_index`` all the same.
    """
    _, producer_id, first_offset, last_offset, lso = ABORTED_TXN.unpack_from(buf, position)
    version = struct.unpack_from(">b", buf, position)[0]
    if version > ABORTED_TXN_CURRENT_VERSION:
        raise CorruptIndexError(
            f"unexpected aborted transaction version {version}, current version is "
            f"{ABORTED_TXN_CURRENT_VERSION}",
            file=file, position=position, offset=last_offset,
        )  # fmt: skip
    return AbortedTxn(producer_id, first_offset, last_offset, lso, version)


def iter_txn_index(buf, *, file: str | None = None) -> Iterator[AbortedTxn]:
    """TXN-4: whole 34-byte entries only; a trailing partial entry is ignored, as in Kafka."""
    for slot in range(len(buf) // ABORTED_TXN_SIZE):
        yield decode_aborted_txn(buf, slot * ABORTED_TXN_SIZE, file=file)


def read_txn_index(buf, *, file: str | None = None) -> list[AbortedTxn]:
    return list(iter_txn_index(buf, file=file))


def encode_aborted_txn(txn: AbortedTxn) -> bytes:
    """Writers always write the int16 version 0, ``00 00`` (TXN-1, Table 1)."""
    return ABORTED_TXN.pack(
        ABORTED_TXN_CURRENT_VERSION,
        txn.producer_id,
        txn.first_offset,
        txn.last_offset,
        txn.last_stable_offset,
    )


def sanity_check_txn_index(buf, base_offset: int, *, file: str | None = None) -> None:
    """TransactionIndex.sanityCheck (TXN-6): no entry's lastOffset may be below the segment's
    base offset. Entries are checked in file order, so a bad version stops the check first."""
    sanity_check_txn_entries(iter_txn_index(buf, file=file), base_offset, file=file)


def sanity_check_txn_entries(entries: Iterable, base_offset: int, *, file: str | None = None):
    """``sanity_check_txn_index`` on entries read elsewhere (a tool reads a window at a time)."""
    for slot, txn in enumerate(entries):
        if txn.last_offset < base_offset:
            raise CorruptIndexError(
                f"last offset {txn.last_offset} of aborted transaction {txn} is less than "
                f"the start offset {base_offset}",
                file=file, position=slot * ABORTED_TXN_SIZE, offset=txn.last_offset,
            )  # fmt: skip


# --- helpers --------------------------------------------------------------------------


def _check_multiple(length: int, entry_size: int, file: str | None) -> None:
    if length % entry_size:
        raise CorruptIndexError(
            f"found {length} bytes, which is not a multiple of the {entry_size}-byte entry size",
            file=file,
            position=0,  # a condition on the whole file (ERR-3)
        )
