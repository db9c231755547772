"""Reading offset and time indexes in windows, for every tool (dump, verify, recover): the
real entries up to the stop rule (OIDX-10, TIDX-12), and the broker's sanity check on the
two slots it reads (OIDX-2, OIDX-3, TIDX-5 to TIDX-7), never the whole file. A sparse 4 GiB
``.index`` of zeros costs one window, where reading it whole cost 4 GiB and a minute
(issue 20)."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Sequence

import reference_impl.formats.index_entries as index
from reference_impl.errors import KafkaLogError, raise_first

WINDOW_SLOTS = 1 << 16  # slots read at a time, as a .log is read a window at a time
ENTRY_SIZE = index.INDEX_ENTRY_SIZE
DECODE = {False: index.offset_index_entry, True: index.time_index_entry}


def real_entries(handle, base_offset: int, *, time: bool) -> Iterator:
    """The entries of an open index before the stop rule (``index.until_stop``), decoded a
    window of slots at a time."""
    return index.until_stop(_all_entries(handle, base_offset, time), base_offset)


def _all_entries(handle, base_offset: int, time: bool) -> Iterator:
    entry_size, decode, fd = ENTRY_SIZE[time], DECODE[time], handle.fileno()
    slots = os.fstat(fd).st_size // entry_size
    for first in range(0, slots, WINDOW_SLOTS):
        window = os.pread(fd, min(WINDOW_SLOTS, slots - first) * entry_size, first * entry_size)
        yield from (decode(window, i, base_offset) for i in range(len(window) // entry_size))


class IndexSlots(Sequence):
    """The slots of an open index as Kafka opens it, zero slots included (OIDX-9, TIDX-11),
    each read alone when asked: Kafka's search and its sanity check read a handful of
    slots, not a sparse 4 GiB file."""

    def __init__(self, handle, base_offset: int, *, time: bool) -> None:
        self.fd, self.base_offset = handle.fileno(), base_offset
        self.entry_size, self.decode = ENTRY_SIZE[time], DECODE[time]
        self.count = os.fstat(self.fd).st_size // self.entry_size

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, slot: int):
        raw = os.pread(self.fd, self.entry_size, slot * self.entry_size)
        return self.decode(raw, 0, self.base_offset)


def txn_entries(handle, *, file: str | None = None) -> Iterator[index.AbortedTxn]:
    """The whole 34-byte entries of an open ``.txnindex`` (TXN-4), a window at a time; an
    entry that does not decode raises with its position in the file."""
    fd, size = handle.fileno(), index.ABORTED_TXN_SIZE
    whole = os.fstat(fd).st_size // size
    for first in range(0, whole, WINDOW_SLOTS):
        window = os.pread(fd, min(WINDOW_SLOTS, whole - first) * size, first * size)
        for i in range(len(window) // size):
            try:
                yield index.decode_aborted_txn(window, i * size, file=file)
            except KafkaLogError as exc:
                exc.position = (first + i) * size
                raise


def sanity_check(handle, base_offset: int, *, time: bool, file: str | None = None) -> None:
    """The broker's sanity check of an open index: ``CorruptIndexError`` for the first of
    ``index.index_problems``, on the slots it reads."""
    slots, size = IndexSlots(handle, base_offset, time=time), os.fstat(handle.fileno()).st_size
    raise_first(index.index_problems(size, slots.__getitem__, base_offset, time=time, file=file))


def entries_before_zero_tail(handle, base_offset: int, *, time: bool) -> list:
    """Every entry of an open index as a reopened file counts them (zero slots included),
    the trailing all-zero slots dropped; the zero tail is found without reading a sparse
    file's holes (SEEK_DATA, SEEK_HOLE)."""
    entry_size, decode, fd = ENTRY_SIZE[time], DECODE[time], handle.fileno()
    used = _end_of_data(fd, os.fstat(fd).st_size)
    slots = -(-used // entry_size)  # the slot holding the last non-zero byte, and those before
    entries = []
    for first in range(0, slots, WINDOW_SLOTS):
        window = os.pread(fd, min(WINDOW_SLOTS, slots - first) * entry_size, first * entry_size)
        entries += (decode(window, i, base_offset) for i in range(len(window) // entry_size))
    return entries


def _end_of_data(fd: int, size: int) -> int:
    """Where the last non-zero byte of the file ends (0: all zeros)."""
    end = position = 0
    while position < size:
        try:
            start = os.lseek(fd, position, os.SEEK_DATA)
            stop = os.lseek(fd, start, os.SEEK_HOLE)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # only a hole is left
                break
            start, stop = position, size  # no SEEK_DATA here: read the rest
        for at in range(start, stop, WINDOW_SLOTS * 16):
            chunk = os.pread(fd, min(WINDOW_SLOTS * 16, stop - at), at)
            nonzero = len(chunk.rstrip(b"\0"))
            if nonzero:
                end = at + nonzero
        position = stop
    return end


def is_hole(handle, start: int, size: int) -> bool:
    """Whether ``[start, start + size)`` of an open file is a hole of a sparse file (SEEK_DATA
    finds no data there): the zeros past an index's stop rule are checked without reading a
    sparse 4 GiB file."""
    try:
        return os.lseek(handle.fileno(), start, os.SEEK_DATA) >= start + size
    except OSError as exc:  # ENXIO: no data from here on; anything else: read the bytes
        return exc.errno == errno.ENXIO
