"""The index checks of ``klogspec verify``: an index's own bytes, then its entries against
the ``.log``, in the same single pass over the batches (spec/formats/offset-index.md,
time-index.md, transaction-index.md).

Each index is read once, in chunks, into compact arrays of its real entries (the slots
before the stop rule, OIDX-10, TIDX-12: 16 bytes an entry, a small fraction of the
segment). The segment scan then feeds every framed entry of the ``.log`` to
``OffsetIndexCheck.batch`` and ``TimeIndexCheck.batch`` in file order, which walk their
entries in step with it, so the ``.log`` is never read twice or held in memory.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field

from reference_impl.formats.index_entries import (
    ABORTED_TXN,
    ABORTED_TXN_SIZE,
    OFFSET_INDEX_ENTRY,
    OFFSET_INDEX_ENTRY_SIZE,
    TIME_INDEX_ENTRY,
    TIME_INDEX_ENTRY_SIZE,
    OffsetPosition,
    TimestampOffset,
    aborted_txn_version,
    is_unused_slot,
    last_entry_problems,
    length_problem,
    order_problem,
    txn_problems,
    txn_tail_problem,
)

from ..index_files import is_hole
from ..safe_files import open_regular
from .findings import Findings, Severity

CHUNK_SLOTS = 1 << 16  # entries read per chunk


@dataclass
class IndexEntries:
    """The real entries of an offset or time index, as parallel arrays.

    Offset index: ``keys`` = offsets, ``values`` = positions. Time index: ``keys`` =
    timestamps, ``values`` = offsets. ``unused`` counts the slots from the stop rule on."""

    file: str
    entry_size: int
    keys: array = field(default_factory=lambda: array("q"))
    values: array = field(default_factory=lambda: array("q"))
    unused: int = 0
    bad: set = field(default_factory=set)  # slots out of order: their one finding is given

    def __len__(self) -> int:
        return len(self.keys)

    def where(self, slot: int) -> int:
        return slot * self.entry_size

    def entry(self, slot: int) -> OffsetPosition | TimestampOffset:
        """Slot ``slot`` as the entry type whose rules formats/index_entries.py states."""
        kind = TimestampOffset if self.entry_size == TIME_INDEX_ENTRY_SIZE else OffsetPosition
        return kind(self.keys[slot], self.values[slot])


def read_index(
    path: str, base_offset: int, *, time: bool, active: bool, findings: Findings
) -> IndexEntries:
    """Read an ``.index`` (``time=False``) or ``.timeindex`` and check its bytes alone.

    * OIDX-2, TIDX-5: the length is a multiple of the entry size;
    * OIDX-10, TIDX-12: the real entries end at the first slot after slot 0 whose relative
      offset is 0; an all-zero slot 0 is unused too (no real entry has position 0 or
      timestamp 0); the unused slots must all be zero, or a later entry does not increase
      (OIDX-4, TIDX-3);
    * OIDX-4: offsets strictly increase; TIDX-3: timestamps are >= 0 and strictly increase,
      offsets never decrease;
    * OIDX-3, TIDX-6, TIDX-7: Kafka's sanity checks, on the real entries;
    * OIDX-8, TIDX-10: a segment that is not active has a trimmed index (no unused slots).
    """
    with open_regular(path, os.path.dirname(path)) as handle:
        return _read_index(handle, path, base_offset, time, active, findings)


def _read_index(handle, path, base_offset: int, time: bool, active: bool, findings) -> IndexEntries:
    entry_size = TIME_INDEX_ENTRY_SIZE if time else OFFSET_INDEX_ENTRY_SIZE
    codec = TIME_INDEX_ENTRY if time else OFFSET_INDEX_ENTRY
    entries = IndexEntries(path, entry_size)
    size = os.fstat(handle.fileno()).st_size
    findings.problem(length_problem(size, time=time, file=path))
    slots = size // entry_size
    stopped = dirty = False  # past the stop rule; non-zero bytes found after it
    for first in range(0, slots, CHUNK_SLOTS):
        count = min(CHUNK_SLOTS, slots - first)
        if stopped and (dirty or is_hole(handle, first * entry_size, count * entry_size)):
            continue  # past the stop rule only non-zero bytes matter, and a hole has none
        chunk = os.pread(handle.fileno(), count * entry_size, first * entry_size)
        start = 0
        if not stopped:
            for i, (a, b) in enumerate(codec.iter_unpack(chunk)):
                if is_unused_slot(first + i, b if time else a, blank=not (a or b)):
                    stopped, start = True, i * entry_size
                    break
                _add(entries, first + i, a, b, base_offset, time, findings)
        if stopped and not dirty and chunk.count(0, start) != len(chunk) - start:
            _dirty_tail(entries, chunk, first * entry_size, start, time, findings)
            dirty = True
    entries.unused = slots - len(entries)
    # Kafka's sanity checks, on the real entries (Kafka's own counts the zero slots too,
    # which fails every untrimmed time index; untrimmed is reported apart)
    for problem in last_entry_problems(
        len(entries), entries.entry, base_offset, time=time, file=path
    ):
        findings.problem(problem)
    if entries.unused and not active and not dirty:
        findings.add(
            "TIDX-10" if time else "OIDX-8", Severity.WARNING, path,
            f"{entries.unused} unused (zero) slots after {len(entries)} entries: the index of "
            "a segment that is not active was not trimmed (a crash before its roll finished?)",
            position=entries.where(len(entries)),
        )  # fmt: skip
    return entries


def _add(entries: IndexEntries, slot: int, a: int, b: int, base: int, time: bool, findings):
    """Keep one real entry; OIDX-4, TIDX-3 (``order_problem``) against the one before."""
    entry = TimestampOffset(a, base + b) if time else OffsetPosition(base + a, b)
    previous = entries.entry(len(entries) - 1) if entries.keys else None
    where = {"position": entries.where(slot), "file": entries.file}
    if findings.problem(order_problem(previous, entry, **where)):
        entries.bad.add(slot)
    entries.keys.append(entry[0])
    entries.values.append(entry[1])


def _dirty_tail(
    entries: IndexEntries, chunk: bytes, chunk_position: int, start: int, time: bool, findings
) -> None:
    at = chunk_position + next(i for i in range(start, len(chunk)) if chunk[i])
    findings.add(
        "TIDX-3" if time else "OIDX-4", Severity.ERROR, entries.file,
        f"slot {len(entries)} has relative offset 0, which ends the real entries, but "
        f"non-zero bytes follow at position {at}: an entry that does not increase",
        position=entries.where(len(entries)),
    )  # fmt: skip


def _order(keys: array) -> list[int] | range:
    """Slots in the order the merge needs; the file order unless the file is out of order."""
    if all(keys[i] <= keys[i + 1] for i in range(len(keys) - 1)):
        return range(len(keys))
    return sorted(range(len(keys)), key=keys.__getitem__)


class OffsetIndexCheck:
    """OIDX-5, with OIDX-7's allowance: each entry (O, P) has P at the start of a framed entry
    of the ``.log``, and every batch that starts before P ends below O. O may lie anywhere
    after that (inside the batch at P, as Kafka before 2.0 indexed it, or in a later batch,
    as a follower indexes a fetched chunk), but not beyond the segment's last offset."""

    def __init__(self, entries: IndexEntries, active: bool, findings: Findings) -> None:
        self.entries = entries
        self.active = active
        self.findings = findings
        self.order = _order(entries.values)
        self.next = 0
        self.matched = array("q")  # slots whose position is a batch start

    def __len__(self) -> int:
        return len(self.entries)

    def batch(self, position: int, max_last_before: int | None) -> None:
        """The framed entry at ``position``; ``max_last_before``: the largest last offset of
        the valid batches before it."""
        entries, order = self.entries, self.order
        while self.next < len(order) and entries.values[order[self.next]] < position:
            if order[self.next] not in entries.bad:
                self._no_batch(order[self.next], f"position {position}")
            self.next += 1
        while self.next < len(order) and entries.values[order[self.next]] == position:
            slot = order[self.next]
            offset = entries.keys[slot]
            self.next += 1
            if slot in entries.bad:
                continue
            self.matched.append(slot)
            if max_last_before is not None and offset <= max_last_before:
                self.findings.add(
                    "OIDX-5", Severity.ERROR, entries.file,
                    f"entry ({offset}, {position}): a batch before position {position} ends at "
                    f"offset {max_last_before}, so a lookup of {offset} would start after it",
                    position=entries.where(slot), offset=offset,
                )  # fmt: skip

    def finish(self, valid_end: int, last_offset: int | None) -> None:
        entries = self.entries
        for slot in self.order[self.next :]:
            if slot not in entries.bad:
                self._no_batch(slot, f"the end of the entries, {valid_end}", past_end=True)
        for slot in self.matched:
            if last_offset is None or entries.keys[slot] > last_offset:
                self.findings.add(
                    "OIDX-5", self._ahead_severity(), entries.file,
                    f"entry ({entries.keys[slot]}, {entries.values[slot]}) indexes an offset "
                    f"beyond the segment's last offset {last_offset}: an index written ahead of "
                    "its log",
                    position=entries.where(slot), offset=entries.keys[slot],
                )  # fmt: skip

    def _no_batch(self, slot: int, after: str, past_end: bool = False) -> None:
        entries = self.entries
        severity = self._ahead_severity() if past_end else Severity.ERROR
        self.findings.add(
            "OIDX-5", severity, entries.file,
            f"entry ({entries.keys[slot]}, {entries.values[slot]}): no batch starts at position "
            f"{entries.values[slot]} (next batch start: {after})",
            position=entries.where(slot), offset=entries.keys[slot],
        )  # fmt: skip

    def _ahead_severity(self) -> Severity:
        # the active segment's index is flushed apart from its .log: after a crash it may
        # run ahead of the log, which recovery rebuilds; a rolled segment's may not
        return Severity.WARNING if self.active else Severity.ERROR


class TimeIndexCheck:
    """TIDX-2 and TIDX-9 for each entry (T, O), against the first batch whose last offset is
    at least O:

    * a batch up to O with a maxTimestamp above T breaks TIDX-2 (error: timestamp lookups
      can skip records);
    * O inside the batch (not only its last offset, as Kafka 3.x leaders index the record
      carrying the max timestamp): T should be the batch's maxTimestamp;
    * O not in the log (removed by compaction, TIDX-9), or T not the batch's maxTimestamp:
      info, which a verifier must accept.
    """

    def __init__(self, entries: IndexEntries, findings: Findings) -> None:
        self.entries = entries
        self.findings = findings
        self.order = _order(entries.values)
        self.next = 0

    def __len__(self) -> int:
        return len(self.entries)

    def batch(self, first: int, last: int, max_timestamp: int, running_max_before: int) -> None:
        """A valid batch holding offsets [first, last] (first: its first offset, or the one
        after the previous batch when unknown) and its maxTimestamp."""
        entries, order = self.entries, self.order
        while self.next < len(order) and entries.values[order[self.next]] <= last:
            slot = order[self.next]
            timestamp, offset = entries.keys[slot], entries.values[slot]
            self.next += 1
            if slot in entries.bad:
                continue
            if offset < first:
                self._check_bound(slot, running_max_before)
                self._info(slot, f"offset {offset} is not in the log (the next batch starts at "
                           f"{first}): removed by compaction or retention")  # fmt: skip
            elif (
                not self._check_bound(slot, max(running_max_before, max_timestamp))
                and timestamp != max_timestamp
            ):
                self._info(slot, f"timestamp {timestamp} is not the maxTimestamp "
                           f"{max_timestamp} of the batch holding offset {offset}")  # fmt: skip

    def finish(self, last_offset: int | None, running_max: int) -> None:
        for slot in self.order[self.next :]:
            if slot in self.entries.bad:
                continue
            self._check_bound(slot, running_max)
            self._info(slot, f"offset {self.entries.values[slot]} is beyond the segment's last "
                       f"offset {last_offset}")  # fmt: skip

    def _check_bound(self, slot: int, running_max: int) -> bool:
        timestamp, offset = self.entries.keys[slot], self.entries.values[slot]
        if running_max <= timestamp:
            return False
        self.findings.add(
            "TIDX-2", Severity.ERROR, self.entries.file,
            f"entry ({timestamp}, {offset}): a batch up to offset {offset} has maxTimestamp "
            f"{running_max}, above the entry's, so timestamp lookups can skip it",
            position=self.entries.where(slot), offset=offset,
        )  # fmt: skip
        return True

    def _info(self, slot: int, message: str) -> None:
        self.findings.add(
            "TIDX-9", Severity.INFO, self.entries.file, message,
            position=self.entries.where(slot), offset=self.entries.values[slot],
        )  # fmt: skip


class TxnIndexCheck:
    """A ``.txnindex``: TXN-3 (version byte), TXN-4 (a partial last entry, which readers
    ignore: a torn append), TXN-6 (lastOffset not below the base offset), TXN-7 (lastOffset
    strictly increasing), and TXN-1 against the segment's ABORT markers, met in offset order
    during the scan: each marker has an entry, and each entry a marker."""

    def __init__(self, path: str, base_offset: int, active: bool, findings: Findings) -> None:
        self.file = path
        self.findings = findings
        self.active = active
        self.last_offsets = array("q")
        self.slots = array("q")
        self.next = 0
        with open_regular(path, os.path.dirname(path)) as handle:
            self._read(handle, base_offset)

    def _read(self, handle, base_offset: int) -> None:
        """The entries a window at a time (a hostile file can be a sparse 4 GiB one); only
        those that pass TXN-3, TXN-6 and TXN-7 are kept, 16 bytes each."""
        size = os.fstat(handle.fileno()).st_size
        whole = size - size % ABORTED_TXN_SIZE
        self.findings.problem(txn_tail_problem(size, file=self.file), Severity.WARNING)
        step = CHUNK_SLOTS * ABORTED_TXN_SIZE
        for start in range(0, whole, step):
            window = os.pread(handle.fileno(), min(step, whole - start), start)
            for i, (_, _, _, last, _) in enumerate(ABORTED_TXN.iter_unpack(window)):
                position = start + i * ABORTED_TXN_SIZE
                slot = position // ABORTED_TXN_SIZE
                version = aborted_txn_version(window, i * ABORTED_TXN_SIZE)
                self._entry(version, slot, position, last, base_offset)

    def __len__(self) -> int:
        return len(self.last_offsets)

    def _entry(self, version: int, slot: int, position: int, last: int, base: int) -> None:
        """TXN-3, TXN-6, TXN-7 (``txn_problems``): an entry that breaks one is not kept."""
        previous = self.last_offsets[-1] if self.last_offsets else None
        where = {"position": position, "file": self.file}
        problems = list(txn_problems(version, last, previous, base, **where))
        for problem in problems:
            self.findings.problem(problem)
        if problems:
            return
        self.last_offsets.append(last)
        self.slots.append(slot)

    def abort_marker(self, offset: int, log_file: str, position: int) -> None:
        while self.next < len(self.last_offsets) and self.last_offsets[self.next] < offset:
            self._no_marker(self.next)
            self.next += 1
        if self.next < len(self.last_offsets) and self.last_offsets[self.next] == offset:
            self.next += 1
            return
        missing_marker_entry(self.findings, log_file, position, offset, self.active)

    def finish(self) -> None:
        for i in range(self.next, len(self.last_offsets)):
            self._no_marker(i)

    def _no_marker(self, i: int) -> None:
        self.findings.add(
            "TXN-1", Severity.WARNING, self.file,
            f"entry with lastOffset {self.last_offsets[i]}: no ABORT marker at that offset "
            "in the segment",
            position=self.slots[i] * ABORTED_TXN_SIZE, offset=self.last_offsets[i],
        )  # fmt: skip


def missing_marker_entry(
    findings: Findings, log_file: str, position: int, offset: int, active: bool
) -> None:
    """TXN-1: an ABORT marker with no transaction-index entry; read_committed fetches would
    return the aborted records. Recovery rebuilds the active segment's index."""
    findings.add(
        "TXN-1", Severity.WARNING if active else Severity.ERROR, log_file,
        f"ABORT marker at offset {offset} has no entry in the segment's .txnindex",
        position=position, offset=offset,
    )  # fmt: skip
