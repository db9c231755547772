"""``_SegmentScan.walk`` (segment.py) with the compiled batch walk (``verify_clean_batches``
of reference_impl/kernels, the compiled ``scan`` kernel).

The readable ``walk`` walks every entry with ``EntryWalk`` and judges it with
``_SegmentScan.check_batch``. This one lets ``kernels.scan.verify_clean_batches`` take the runs of
batches that give no finding (most of any log), a window of the file at a time, and
hands every other entry, one at a time, to the same readable scanner and ``check_batch`` /
``check_unparsed``: the findings and the summary are the readable walk's
(tests/test_speedups.py). ``deep`` verifies decode every batch's records, so they take
the readable path batch by batch (its record decoder is compiled too).
"""

from __future__ import annotations

import os

from reference_impl import kernels
from reference_impl.errors import KafkaLogError
from reference_impl.records.stream import (
    CHUNK_SIZE,
    HEADER_SIZE_UP_TO_MAGIC,
    BatchScanner,
    FileSource,
)

from ..safe_files import open_regular
from ..walk import next_entry

INT64_MAX = 2**63 - 1


def run(scan) -> None:
    """What ``_SegmentScan.walk`` does (the same walk, EntryWalk's rules), faster."""
    files = scan.files
    with open_regular(files.log, os.path.dirname(files.log)) as handle:
        scan.size = size = os.fstat(handle.fileno()).st_size
        source = FileSource(handle)
        position, stopped_at = 0, None
        while True:
            if not scan.deep:
                position = _clean_batches(scan, source, position, size)
            # one entry the readable way (EntryWalk: a bad but framed entry is stepped over)
            scanner = BatchScanner(source, size, start=position, file=files.log)
            try:
                batch = next(iter(scanner), None)
            except KafkaLogError as exc:
                scan.check_unparsed(exc, handle)
                following = next_entry(handle, exc.position, size)
                if following is None:
                    stopped_at = exc.position
                    break
                position = following
                _progress(scan, position)
                continue
            if batch is None:
                break  # the end, or a partial entry (FRAME-2, FRAME-4)
            scan.check_batch(batch)
            position = batch.position + batch.size_in_bytes
            _progress(scan, position)
        if scan.first_invalid is None:
            scan.valid_bytes = position
        if stopped_at is None and position < size:
            scan.check_tail(handle, position)
    scan.finish(position)


def _clean_batches(scan, source: FileSource, position: int, end: int) -> int:
    """Let the kernel take the clean batches from ``position``, refilling the window as it
    asks; returns where the readable code must go on."""
    refilled_at = None
    while position < end - HEADER_SIZE_UP_TO_MAGIC:
        window, at = source.view(position, HEADER_SIZE_UP_TO_MAGIC)
        try:
            position, reason = kernels.scan.verify_clean_batches(
                window, at, position, end, scan, _offset_index_stop(scan), _time_index_stop(scan)
            )
        except OverflowError:  # a count the readable code took past int64: it goes on
            return position
        _progress(scan, position)
        if reason != kernels.scan.REFILL:
            return position
        if refilled_at == position:
            return position  # an entry larger than the window: the readable code reads it
        source.view(position, CHUNK_SIZE)  # a window from the entry on
        refilled_at = position
    return position


def _offset_index_stop(scan) -> int:
    """The position of the next offset-index entry ``OffsetIndexCheck.batch`` will look at."""
    check = scan.offset_index
    if check is None or check.next >= len(check.order):
        return INT64_MAX
    return check.entries.values[check.order[check.next]]


def _time_index_stop(scan) -> int:
    """The offset of the next time-index entry ``TimeIndexCheck.batch`` will look at."""
    check = scan.time_index
    if check is None or check.next >= len(check.order):
        return INT64_MAX
    return check.entries.values[check.order[check.next]]


def _progress(scan, position: int) -> None:
    if scan.progress is not None:
        scan.report_progress(position)
