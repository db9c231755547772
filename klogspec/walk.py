"""Walking batch files and log directories the same way in every tool (dump, verify, scan).

* ``EntryWalk``: every entry of a ``.log`` (or KRaft snapshot) in file order, stepping over an
  entry that is well framed but does not parse, so one bad batch does not hide the ones
  after it; a framing error (FRAME-3) ends the walk, as nothing marks where the next entry
  starts. Memory stays bounded by the scanner's chunk plus the largest entry.
* ``header_problem``: the first problem of a batch's header in ERR-5 order (size and CRC,
  offset range, codec), before any record is decoded.
* ``path_order``: the stable order directories are walked in: segment files by base offset,
  other files by name, then partition directories by topic and partition number.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import FileKind, classify, parse_partition_dir_name
from reference_impl.records import Batch, iter_file_batches
from reference_impl.records.batch import LOG_OVERHEAD
from reference_impl.records.stream import MIN_ENTRY_SIZE, offset_range_problem

_FRAME = struct.Struct(">qi")  # offset, size: enough to step over a well-framed bad entry
SEGMENT_FILE_ORDER = [
    FileKind.LOG, FileKind.OFFSET_INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX,
    FileKind.PRODUCER_SNAPSHOT,
]  # fmt: skip


def following_entry(read: Callable[[int, int], bytes], position: int, end: int) -> int | None:
    """FRAME-3, FRAME-7: where the entry after the entry at ``position`` starts, stepping over
    it by its size field: None when that field does not frame an entry (below the minimum
    entry size) or the entry runs past ``end``. ``read(position, n)`` reads up to n bytes;
    every walk that steps over a bad entry (this module's, the pipeline's) steps here."""
    prefix = read(position, _FRAME.size)
    if len(prefix) < _FRAME.size:
        return None
    size = _FRAME.unpack(prefix)[1]
    following = position + LOG_OVERHEAD + size
    return following if size >= MIN_ENTRY_SIZE and following <= end else None


def next_entry(handle: BinaryIO, position: int | None, end: int) -> int | None:
    """``following_entry`` in an open file; None for an unknown ``position``."""
    if position is None:
        return None
    return following_entry(lambda at, size: os.pread(handle.fileno(), size, at), position, end)


class EntryWalk:
    """Iterate the entries of ``handle`` in ``[0, end)``: each item is a ``Batch``, or the
    ``KafkaLogError`` of an entry that does not parse (the walk goes on after it when the
    entry is well framed).

    Afterwards ``valid_bytes`` is where the last framed entry ended (FRAME-7: a skipped entry
    counts as framed) and ``stopped_at`` the position of a framing error that ended the walk,
    or None when it reached the end or a partial entry (FRAME-2, FRAME-4).
    ``max_message_bytes`` is the scanner's optional FRAME-11 check.
    """

    def __init__(
        self,
        handle: BinaryIO,
        *,
        file: str | None = None,
        end: int | None = None,
        max_message_bytes: int | None = None,
    ) -> None:
        self.handle = handle
        self.file = file
        size = os.fstat(handle.fileno()).st_size
        self.end = size if end is None else min(end, size)
        self.max_message_bytes = max_message_bytes
        self.valid_bytes = 0
        self.stopped_at: int | None = None

    def __iter__(self) -> Iterator[Batch | KafkaLogError]:
        position: int | None = 0
        while position is not None:
            scanner = iter_file_batches(
                self.handle, file=self.file, start=position, end=self.end,
                max_message_bytes=self.max_message_bytes,
            )  # fmt: skip
            try:
                yield from scanner
                position = None
            except KafkaLogError as exc:
                yield exc
                position = next_entry(self.handle, exc.position, self.end)
                if position is None:
                    self.stopped_at = exc.position
            self.valid_bytes = max(self.valid_bytes, scanner.valid_bytes)
            if position is not None:
                self.valid_bytes = position


def header_problem(batch: Batch, *, base_offset: int | None = None) -> KafkaLogError | None:
    """The first header problem of ``batch`` in ERR-5 order, or None: its minimum size and CRC
    (BATCH-2, BATCH-4, LEGACY-4), its last offset within ``[base_offset, base_offset +
    2^31-1]`` when the segment's base offset is given (FRAME-12), then its codec (BATCH-10,
    LEGACY-8). Records are not decoded."""
    try:
        batch.ensure_valid()
    except KafkaLogError as exc:
        return exc
    if base_offset is not None and (problem := offset_range_problem(batch, base_offset)):
        return problem
    try:
        batch.compression  # noqa: B018 (the property raises for codec ids 5-7)
    except KafkaLogError as exc:
        return exc
    return None


def offset_field(batch: Batch) -> int:
    """ERR-4: the entry's offset field (a legacy wrapper's is its last offset); unlike a
    legacy wrapper's ``base_offset``, it never decompresses anything."""
    return batch.base_offset if batch.magic == 2 else batch.last_offset


def path_order(path: Path) -> tuple:
    """Sort key for the entries of a directory: segment files by base offset (.log, .index,
    .timeindex, .txnindex, .snapshot), other files by name, then subdirectories (partition
    directories by topic, then partition number)."""
    if path.is_dir():
        try:
            name = parse_partition_dir_name(path.name)
            return (2, name.topic, name.partition, path.name)
        except KafkaLogError:
            return (2, path.name, -1, path.name)
    info = classify(path)
    if info.kind in SEGMENT_FILE_ORDER and info.base_offset is not None:
        return (0, "", info.base_offset, f"{SEGMENT_FILE_ORDER.index(info.kind)}{path.name}")
    return (1, path.name, 0, "")
