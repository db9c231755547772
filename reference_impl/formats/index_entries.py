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
(``until_stop``). The transaction index is a plain append-only file of
34-byte AbortedTxn entries (TXN-1) [TransactionIndex.java, AbortedTxn.java].

These are pure functions over bytes (or an mmap); the mutable OffsetIndex, TimeIndex and
TransactionIndex classes build on them. Each rule is written here once, as a check yielding
``Problem`` values: the log raises the first, ``klogspec verify`` collects them all. The one
lookup is Kafka's search (``largest_lower_bound_slot``): the log, dump and the suite use it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ..constants import INT32_MAX
from ..errors import Category, KafkaLogError, Problem, raise_first
from ..records.record import NO_TIMESTAMP

OFFSET_INDEX_ENTRY = struct.Struct(">ii")  # relativeOffset, position
TIME_INDEX_ENTRY = struct.Struct(">qi")  # timestamp, relativeOffset
ABORTED_TXN = struct.Struct(
    ">hqqqq"
)  # version, producerId, firstOffset, lastOffset, lastStableOffset
OFFSET_INDEX_ENTRY_SIZE = OFFSET_INDEX_ENTRY.size  # 8
TIME_INDEX_ENTRY_SIZE = TIME_INDEX_ENTRY.size  # 12
INDEX_ENTRY_SIZE = {False: OFFSET_INDEX_ENTRY_SIZE, True: TIME_INDEX_ENTRY_SIZE}  # by time
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


def is_unused_slot(slot: int, relative: int, *, blank: bool = False) -> bool:
    """OIDX-10, TIDX-12, DumpLogSegments' stop rule: the real entries end at the first slot
    ``i > 0`` whose relative offset is 0 (a zero-filled, preallocated slot: offsets never
    go back, so only slot 0 may hold the base offset).

    ``blank``: the slot's bytes are all zero. The spec lets a verifier count such a slot 0
    as unused too (no real entry has position 0 or timestamp 0), and verify does.
    """
    return relative == 0 and (slot > 0 or blank)


def until_stop(entries: Iterable, base_offset: int) -> Iterator:
    """The entries before the stop rule (``is_unused_slot``). Lazy, so a 10 MiB preallocated
    index is not decoded past its last real entry."""
    for slot, entry in enumerate(entries):
        if is_unused_slot(slot, entry.offset - base_offset):
            return
        yield entry


# --- the lookup: Kafka's search --------------------------------------------------------

WARM_SECTION_BYTES = 8192  # AbstractIndex.warmEntries: the last 8 KiB of entries


def largest_lower_bound_slot(
    key: Callable[[int], int], entries: int, target: int, entry_size: int
) -> int:
    """OIDX-6, TIDX-8: the slot of the largest entry whose key is <= target, or -1
    [AbstractIndex.indexSlotRangeFor].

    ``key(slot)`` reads one entry's key; ``entries`` is how many slots there are.
    Kafka's search, step for step: a binary search of the warm section (the last
    8 KiB of entries) when the target lies past its first entry, else of the rest.
    On sorted entries this is a plain floor search; the exact steps matter only for
    a reopened untrimmed index, whose zero slots make the array unsorted.
    """
    return _slot_range_for(key, entries, target, entry_size, smallest_upper_bound=False)


def smallest_upper_bound_slot(
    key: Callable[[int], int], entries: int, target: int, entry_size: int
) -> int:
    """The slot of the smallest entry whose key is >= target, or -1."""
    return _slot_range_for(key, entries, target, entry_size, smallest_upper_bound=True)


def _slot_range_for(
    key: Callable[[int], int], count: int, target: int, entry_size: int, smallest_upper_bound: bool
) -> int:
    if count == 0:
        return -1
    warm_entries = WARM_SECTION_BYTES // entry_size
    first_hot_entry = max(0, count - 1 - warm_entries)
    if key(first_hot_entry) < target:
        return _binary_search(key, count, target, smallest_upper_bound, first_hot_entry, count - 1)
    if key(0) > target:
        return 0 if smallest_upper_bound else -1
    return _binary_search(key, count, target, smallest_upper_bound, 0, first_hot_entry)


def _binary_search(key, count, target, smallest_upper_bound, begin, end) -> int:
    lo, hi = begin, end
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        found = key(mid)
        if found > target:
            hi = mid - 1
        elif found < target:
            lo = mid
        else:
            return mid
    if not smallest_upper_bound:
        return lo
    return -1 if lo == count - 1 else lo + 1


# --- the rules of an index's entries, as problems ------------------------------------


def index_problems(
    length: int, entry, base_offset: int, *, time: bool, entries: int | None = None,
    file: str | None = None,
) -> Iterator[Problem]:  # fmt: skip
    """OffsetIndex.sanityCheck (OIDX-3, OIDX-2) and TimeIndex.sanityCheck (TIDX-6, TIDX-7,
    TIDX-5), in Kafka's order, on a file of ``length`` bytes whose slots ``entry(slot)``
    reads: a tool reads only the two slots the checks need, not a (sparse, huge) file.

    ``entries`` defaults to a freshly opened file's count (zero slots included, OIDX-9), so
    the last entry of an untrimmed index is a zero slot: its offset is the base offset,
    which passes, and its timestamp 0, which fails any time index whose first is positive
    (Kafka then rebuilds it: a crash leaves such files).
    """
    count = entry_count(length, INDEX_ENTRY_SIZE[time]) if entries is None else entries
    yield from last_entry_problems(count, entry, base_offset, time=time, file=file)
    if problem := length_problem(length, time=time, file=file):
        yield problem


def length_problem(length: int, *, time: bool, file: str | None = None) -> Problem | None:
    """OIDX-2, TIDX-5: the length is a whole number of entries."""
    size = INDEX_ENTRY_SIZE[time]
    if not length % size:
        return None
    return Problem("TIDX-5" if time else "OIDX-2", file, 0, None,  # 0: the whole file, ERR-3
        f"found {length} bytes, which is not a multiple of the {size}-byte entry size "
        f"({length % size} bytes after the last whole entry)")  # fmt: skip


def last_entry_problems(
    count: int, entry, base_offset: int, *, time: bool, file: str | None = None
) -> Iterator[Problem]:
    """TIDX-6: the last of ``count`` entries has a timestamp not below the first's; OIDX-3,
    TIDX-7: its offset is not below the base offset."""
    if not count:
        return
    last, position = entry(count - 1), (count - 1) * INDEX_ENTRY_SIZE[time]
    if time and last.timestamp < (first := entry(0)).timestamp:
        yield Problem("TIDX-6", file, position, last.offset,
            f"time index has {count} entries but the last timestamp is {last.timestamp}, "
            f"which is less than the first timestamp {first.timestamp}")  # fmt: skip
    if last.offset < base_offset:
        yield Problem("TIDX-7" if time else "OIDX-3", file, position, last.offset,
            f"{'time index' if time else 'index'} has {count} entries but the last offset is "
            f"{last.offset}, which is less than the base offset {base_offset}")  # fmt: skip


def order_problem(previous, entry, *, position: int, file: str | None = None) -> Problem | None:
    """OIDX-4: offsets strictly increase; TIDX-3: timestamps are >= 0 and strictly increase,
    offsets never decrease. ``previous`` is the entry before (None for the first); Kafka's
    sanity checks do not look at the order, a verifier does."""
    if isinstance(entry, OffsetPosition):
        if previous is not None and entry.offset <= previous.offset:
            return Problem("OIDX-4", file, position, entry.offset,
                f"offset {entry.offset} does not increase on the previous entry's "
                f"{previous.offset}")  # fmt: skip
        return None
    if previous is not None and not (
        entry.timestamp > previous.timestamp and entry.offset >= previous.offset
    ):
        return Problem("TIDX-3", file, position, entry.offset,
            f"entry ({entry.timestamp}, {entry.offset}) does not follow ({previous.timestamp}, "
            f"{previous.offset}): timestamps must increase, offsets must not decrease")  # fmt: skip
    if entry.timestamp < 0:
        return Problem("TIDX-3", file, position, entry.offset,
                       f"negative timestamp {entry.timestamp}")  # fmt: skip
    return None


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
    """OffsetIndex.sanityCheck (OIDX-2, OIDX-3) of an .index image: raise the first of
    ``index_problems`` as a ``CorruptIndexError``. A last offset equal to the base offset
    is valid, so an untrimmed index passes."""
    entry = lambda slot: offset_index_entry(buf, slot, base_offset)  # noqa: E731
    raise_first(
        index_problems(len(buf), entry, base_offset, time=False, entries=entries, file=file)
    )


def lookup_offset(
    entries: Sequence[OffsetPosition], target: int, base_offset: int
) -> OffsetPosition:
    """OIDX-6, OffsetIndex.lookup: the entry with the largest offset <= target, else
    (baseOffset, 0), found by Kafka's search."""
    key = lambda slot: entries[slot].offset  # noqa: E731
    slot = largest_lower_bound_slot(key, len(entries), target, OFFSET_INDEX_ENTRY_SIZE)
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
    """TimeIndex.sanityCheck (TIDX-5, TIDX-6, TIDX-7) of a .timeindex image: raise the first
    of ``index_problems``. An untrimmed index whose first timestamp is positive fails."""
    entry = lambda slot: time_index_entry(buf, slot, base_offset)  # noqa: E731
    raise_first(index_problems(len(buf), entry, base_offset, time=True, entries=entries, file=file))


def lookup_timestamp(
    entries: Sequence[TimestampOffset], target: int, base_offset: int
) -> TimestampOffset:
    """TIDX-8, TimeIndex.lookup: the entry with the largest timestamp <= target, else
    (-1, baseOffset), found by Kafka's search."""
    key = lambda slot: entries[slot].timestamp  # noqa: E731
    slot = largest_lower_bound_slot(key, len(entries), target, TIME_INDEX_ENTRY_SIZE)
    return entries[slot] if slot >= 0 else TimestampOffset(NO_TIMESTAMP, base_offset)


# --- transaction index (.txnindex) ----------------------------------------------------


def aborted_txn_version(buf, position: int = 0) -> int:
    """TXN-2, the version quirk: Kafka reads the version as the single signed byte at offset
    0 (the high byte of the int16), so ``00 01`` reads as version 0 and ``80 00`` as -128."""
    return struct.unpack_from(">b", buf, position)[0]


def txn_problems(
    version: int, last_offset: int, previous_last: int | None, base_offset: int, *,
    position: int, file: str | None = None,
) -> Iterator[Problem]:  # fmt: skip
    """The rules of one entry, in the order they are read: TXN-3 (a version above 0; Kafka
    rejects it while decoding, with a plain KafkaException: the category is ``corrupt_index``
    all the same), TXN-6 (lastOffset not below the segment's base offset,
    TransactionIndex.sanityCheck), then TXN-7 (lastOffset strictly increasing, which Kafka
    does not check and a verifier does; ``previous_last``: the entry before's, or None)."""
    if version > ABORTED_TXN_CURRENT_VERSION:
        yield Problem("TXN-3", file, position, last_offset,
            f"unexpected aborted transaction version {version}, current version is "
            f"{ABORTED_TXN_CURRENT_VERSION}")  # fmt: skip
    elif last_offset < base_offset:
        yield Problem("TXN-6", file, position, last_offset,
            f"last offset {last_offset} of an aborted transaction is less than the start "
            f"offset {base_offset}")  # fmt: skip
    elif previous_last is not None and last_offset <= previous_last:
        yield Problem("TXN-7", file, position, last_offset,
                      f"lastOffset {last_offset} does not increase on {previous_last}")  # fmt: skip


def decode_aborted_txn(buf, position: int = 0, *, file: str | None = None) -> AbortedTxn:
    """One 34-byte entry; a version above 0 raises (TXN-3, ``txn_problems``)."""
    _, producer_id, first_offset, last_offset, lso = ABORTED_TXN.unpack_from(buf, position)
    version = aborted_txn_version(buf, position)
    if version > ABORTED_TXN_CURRENT_VERSION:
        raise_first(txn_problems(version, last_offset, None, -1, position=position, file=file))
    return AbortedTxn(producer_id, first_offset, last_offset, lso, version)


def txn_tail_problem(length: int, *, file: str | None = None) -> Problem | None:
    """TXN-4: a partial last entry is a torn append, which readers ignore (``iter_txn_index``)."""
    tail = length % ABORTED_TXN_SIZE
    message = (
        f"{tail} bytes after the last whole 34-byte entry: a torn append, which readers ignore"
    )
    return Problem("TXN-4", file, length - tail, None, message) if tail else None


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
    """``sanity_check_txn_index`` on entries read elsewhere (a tool reads a window at a time):
    TXN-6 of ``txn_problems``, in file order."""
    for slot, txn in enumerate(entries):
        where = {"position": slot * ABORTED_TXN_SIZE, "file": file}
        raise_first(txn_problems(txn.version, txn.last_offset, None, base_offset, **where))
