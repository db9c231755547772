"""``verify_segment``: every check of one segment (its ``.log`` and indexes) in one streaming
pass, for ``klogspec verify`` and, on Spark executors, ``klogspec scan``.

The input is a ``SegmentFiles`` of plain paths and the output a ``SegmentResult``: the
findings, and a ``SegmentSummary`` of what the partition checks need (offsets, sizes,
timestamps, index stats), so segments can be checked in parallel and their partition
afterwards (verify_partition.py). Both are small picklable dataclasses.

The ``.log`` is read once, in chunks (the scanner's window plus one batch): memory does
not grow with the segment. Per entry, in ERR-5 order: framing (FRAME-3, FRAME-6),
minimum size and CRC (BATCH-2, BATCH-4, LEGACY-2, LEGACY-4), the offset range of its
segment (FRAME-12), its codec (BATCH-10, LEGACY-8), and with ``deep`` its records; the
records of control batches are always decoded (one small record), for the transaction
index check. Across entries: offsets strictly increase (FRAME-13) and none is below the
segment's base offset (FRAME-14). At the end, the tail (FRAME-8, FRAME-9).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from reference_impl import kernels
from reference_impl.errors import Category, KafkaLogError
from reference_impl.records import Batch, ControlRecordType, parse_control_key, parse_end_txn_marker

from ..safe_files import open_regular
from ..walk import EntryWalk, header_problem, offset_field
from .findings import Finding, Findings, Severity
from .index import (
    OffsetIndexCheck,
    TimeIndexCheck,
    TxnIndexCheck,
    missing_marker_entry,
    read_index,
)
from .internal_topics import check_record_meanings, internal_topic_decoder

ZERO_CHECK_CHUNK = 1 << 20
PROGRESS_STEP = 4 << 20  # report scanned bytes to the progress callback this often


@dataclass(frozen=True)
class SegmentFiles:
    """The files of one segment as plain paths (a Spark task's input).

    ``base_offset`` comes from the names (None for a KRaft snapshot, whose name is an end
    offset, or a name that does not parse); ``active`` marks the partition's last segment,
    whose preallocated or torn tail is expected after a crash."""

    log: str
    base_offset: int | None
    offset_index: str | None = None
    time_index: str | None = None
    txn_index: str | None = None
    active: bool = False


@dataclass(frozen=True)
class SegmentSummary:
    """What the partition checks need to know of a segment (all offsets from valid batches).

    * ``valid_bytes``: where the entries before the first invalid one end, the position
      recovery truncates at (FRAME-7);
    * ``first_offset``: the first batch's first offset (None for a compressed legacy wrapper
      unless deep); ``last_offset``: the last batch's last offset;
    * ``missing_inside``: offsets missing inside batches (a recordsCount below the offset
      span), which only the log cleaner leaves; ``missing_between``: offsets missing between
      batches, with the first such gap as (position of the batch after it, first missing
      offset);
    * ``time_index_last``: the last real time-index entry (timestamp, offset);
    * index entry counts are None when the file does not exist.
    """

    files: SegmentFiles
    size_bytes: int = 0
    batches: int = 0
    invalid_batches: int = 0
    valid_bytes: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    max_timestamp: int = -1
    missing_inside: int = 0
    missing_between: int = 0
    first_gap: tuple[int, int] | None = None
    delete_horizon: bool = False
    offset_index_entries: int | None = None
    time_index_entries: int | None = None
    time_index_last: tuple[int, int] | None = None
    txn_index_entries: int | None = None
    io_errors: tuple[str, ...] = ()

    @property
    def next_offset(self) -> int | None:
        """Kafka's readNextOffset: the last offset + 1, or the base offset when empty."""
        return self.base_offset if self.last_offset is None else self.last_offset + 1

    @property
    def base_offset(self) -> int | None:
        return self.files.base_offset


@dataclass(frozen=True)
class SegmentResult:
    summary: SegmentSummary
    findings: tuple[Finding, ...] = field(default_factory=tuple)


def verify_segment(
    files: SegmentFiles,
    *,
    deep: bool = False,
    max_message_bytes: int | None = None,
    progress=None,
) -> SegmentResult:
    """Check one segment. ``progress``, when given, is called with the bytes scanned since
    its last call (not needed on Spark)."""
    findings = Findings()
    scan = _SegmentScan(files, deep, max_message_bytes, findings, progress)
    io_errors = []
    try:
        scan.open_indexes()
        scan.run()
    except OSError as exc:
        io_errors.append(f"{exc.filename or files.log}: {exc.strerror or exc}")
    summary = SegmentSummary(
        files, size_bytes=scan.size, batches=scan.batches, invalid_batches=scan.invalid,
        valid_bytes=scan.valid_bytes, first_offset=scan.first_offset,
        last_offset=scan.last_offset, max_timestamp=scan.max_timestamp,
        missing_inside=scan.missing_inside, missing_between=scan.missing_between,
        first_gap=scan.first_gap, delete_horizon=scan.delete_horizon,
        offset_index_entries=_count(scan.offset_index),
        time_index_entries=_count(scan.time_index), time_index_last=scan.time_index_last,
        txn_index_entries=_count(scan.txn_index), io_errors=tuple(io_errors),
    )  # fmt: skip
    return SegmentResult(summary, tuple(findings.done()))


def _count(check) -> int | None:
    return None if check is None else len(check)


class _SegmentScan:
    """The state of one pass over a ``.log``, feeding its index checks as it goes."""

    def __init__(self, files: SegmentFiles, deep, max_message_bytes, findings, progress) -> None:
        self.files, self.deep, self.findings = files, deep, findings
        self.max_message_bytes, self.progress = max_message_bytes, progress
        self.size = self.batches = self.invalid = self.valid_bytes = 0
        self.missing_inside = self.missing_between = 0
        self.first_gap = None
        self.first_offset = self.last_offset = self.max_last = None
        self.max_timestamp = -1
        self.delete_horizon = self.seen_first = self.after_invalid = False
        self.first_invalid: int | None = None
        self.offset_index = self.time_index = self.txn_index = None
        self.time_index_last = None
        self.reported = 0
        self.decoder = internal_topic_decoder(files.log) if deep else None  # what records mean

    def open_indexes(self) -> None:
        files, base = self.files, self.files.base_offset
        if base is None:
            return
        if files.offset_index:
            entries = read_index(
                files.offset_index, base, time=False, active=files.active, findings=self.findings
            )
            self.offset_index = OffsetIndexCheck(entries, files.active, self.findings)
        if files.time_index:
            entries = read_index(
                files.time_index, base, time=True, active=files.active, findings=self.findings
            )
            self.time_index = TimeIndexCheck(entries, self.findings)
            if len(entries):
                self.time_index_last = (entries.keys[-1], entries.values[-1])
        if files.txn_index:
            self.txn_index = TxnIndexCheck(files.txn_index, base, files.active, self.findings)

    def run(self) -> None:
        """The walk of the ``.log``: on the compiled kernels when they are on
        (_compiled_walk.py: the same findings and summary, tests/test_speedups.py), else
        ``walk``, the readable one."""
        if _compiled_run is not None:
            _compiled_run(self)
        else:
            self.walk()

    def walk(self) -> None:
        """Every entry with EntryWalk's rules, each judged by ``check_batch`` or
        ``check_unparsed``."""
        with open_regular(self.files.log, os.path.dirname(self.files.log)) as handle:
            self.size = os.fstat(handle.fileno()).st_size
            walk = EntryWalk(handle, file=self.files.log)
            for item in walk:
                if isinstance(item, KafkaLogError):
                    self.check_unparsed(item, handle)
                    position = item.position
                else:
                    self.check_batch(item)
                    position = item.position + item.size_in_bytes
                if self.progress is not None:  # a call per batch costs 2% of a 16 KiB batch
                    self.report_progress(position)
            if self.first_invalid is None:
                self.valid_bytes = walk.valid_bytes
            if walk.stopped_at is None and walk.valid_bytes < self.size:
                self.check_tail(handle, walk.valid_bytes)
        self.finish(walk.valid_bytes)

    # --- one entry ---

    def check_unparsed(self, exc: KafkaLogError, handle) -> None:
        """An entry the scanner could not parse: a framing error ends the walk (a zero-filled
        tail is FRAME-8's case), other errors are per entry."""
        self._invalid_at(exc.position)
        if exc.category is Category.INVALID_BATCH_SIZE and exc.offset is None:
            if _all_zero(handle, exc.position, self.size):
                self._zero_tail(exc.position)
                return
            self.findings.error(exc)
            return
        magic = os.pread(handle.fileno(), 1, exc.position + 16)
        self.findings.error(exc, magic=magic[0] if magic else None)
        if self.offset_index is not None:
            self.offset_index.batch(exc.position, self.max_last)

    def check_batch(self, batch: Batch) -> None:
        self.batches += 1
        if self.offset_index is not None:
            self.offset_index.batch(batch.position, self.max_last)
        if self.max_message_bytes is not None and batch.size_in_bytes > self.max_message_bytes:
            # FRAME-11 is a limit, not damage: the batch still counts for the other checks
            self.findings.add(
                "FRAME-11", Severity.ERROR, batch.file,
                f"record_too_large: entry of {batch.size_in_bytes} bytes exceeds "
                f"max.message.bytes {self.max_message_bytes}",
                position=batch.position, offset=offset_field(batch),
            )  # fmt: skip
        problem = header_problem(batch, base_offset=self.files.base_offset)
        if problem is not None:
            self.findings.error(problem, magic=batch.magic)
            self._invalid_at(batch.position)
            return
        first = self._records(batch)
        if first is False:
            self._invalid_at(batch.position)
            return
        last = batch.last_offset
        self._order(batch, first, last)
        if self.time_index is not None:
            known_first = first if first is not None else _after(self.last_offset, batch)
            self.time_index.batch(known_first, last, batch.max_timestamp, self.max_timestamp)
        if batch.max_timestamp > self.max_timestamp:
            self.max_timestamp = batch.max_timestamp
        self.last_offset = last
        if self.max_last is None or last > self.max_last:
            self.max_last = last

    def _records(self, batch: Batch):
        """The batch's first offset, decoding its records when deep or a control batch;
        False when they do not decode (reported), None when unknown. Records are decoded a
        chunk at a time and dropped: memory does not grow with recordsCount."""
        legacy_wrapper = batch.magic < 2 and batch.compression_id
        first = None if legacy_wrapper else batch.base_offset
        if not (self.deep or batch.is_control):
            return first
        try:
            if batch.is_control:  # every record decodes before any marker is taken
                for _ in batch.record_chunks():
                    pass
            for n, records in enumerate(batch.record_chunks()):
                if batch.is_control:
                    self._control(batch, records)
                if self.decoder is not None:
                    check_record_meanings(self.decoder, batch, records, self.findings)
                if n == 0 and records and batch.magic < 2:
                    first = records[0].offset
        except KafkaLogError as exc:
            self.findings.error(exc, magic=batch.magic, in_records=True)
            return False
        return first

    def _control(self, batch: Batch, records) -> None:
        """CTRL-1 to CTRL-9 on each control record; ABORT markers go to the TXN-1 check."""
        for record in records:
            control_type = parse_control_key(record.key)
            if control_type in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
                parse_end_txn_marker(record.key, record.value)
            if control_type is ControlRecordType.ABORT:
                if self.txn_index is not None:
                    self.txn_index.abort_marker(record.offset, batch.file, batch.position)
                elif self.files.base_offset is not None:
                    missing_marker_entry(
                        self.findings, batch.file, batch.position, record.offset, self.files.active
                    )

    def _order(self, batch: Batch, first: int | None, last: int) -> None:
        """FRAME-13: offsets strictly increase; FRAME-14: none below the base offset; and the
        offsets missing inside or between batches (compaction's mark)."""
        base, previous = self.files.base_offset, self.last_offset
        if first is not None and last < first:
            self._order_error(
                "FRAME-13", batch, f"last offset {last} is below the batch's first offset {first}"
            )
        elif previous is not None and (first if first is not None else last) <= previous:
            self._order_error(
                "FRAME-13", batch,
                f"offsets {first if first is not None else '..'}-{last} do not follow the "
                f"previous batch's last offset {previous}",
            )  # fmt: skip
        elif not self.seen_first and first is not None and base is not None and first < base:
            self._order_error(
                "FRAME-14", batch,
                f"the first offset {first} is below the segment's base offset {base} "
                "(the file name)",
            )  # fmt: skip
        if first is not None:
            if previous is not None and first > previous + 1 and not self.after_invalid:
                self.missing_between += first - previous - 1
                self.first_gap = self.first_gap or (batch.position, previous + 1)
            count = batch.records_count
            if count is not None and 0 <= count < last - first + 1:
                self.missing_inside += last - first + 1 - count
        if not self.seen_first:
            self.first_offset, self.seen_first = first, True
        self.after_invalid = False
        self.delete_horizon |= batch.magic == 2 and batch.has_delete_horizon

    def _order_error(self, rule: str, batch: Batch, message: str) -> None:
        self.findings.add(
            rule, Severity.ERROR, batch.file, message,
            position=batch.position, offset=offset_field(batch),
        )  # fmt: skip

    def _invalid_at(self, position: int) -> None:
        self.invalid += 1
        self.after_invalid = True  # its offsets are unknown: no gap is counted across it
        if self.first_invalid is None:
            self.first_invalid = self.valid_bytes = position

    # --- the end of the file ---

    def check_tail(self, handle, position: int) -> None:
        """FRAME-2/FRAME-4 stopped the walk quietly before the end: the tail is zeros
        (FRAME-8) or a partial entry (FRAME-9)."""
        if _all_zero(handle, position, self.size):
            self._zero_tail(position)
            return
        self.findings.add(
            "FRAME-9", self._tail_severity(), self.files.log,
            f"truncated_batch: {self.size - position} bytes after the last whole entry are a "
            "partial entry (a torn write)", position=position,
        )  # fmt: skip

    def _zero_tail(self, position: int) -> None:
        self.findings.add(
            "FRAME-8", self._tail_severity(), self.files.log,
            f"the last {self.size - position} bytes are zeros, not entries (a preallocated "
            "file that was not trimmed)", position=position,
        )  # fmt: skip

    def _tail_severity(self) -> Severity:
        # recovery truncates the active segment's tail after a crash; a rolled segment was
        # trimmed when it rolled, and its tail breaks reads that reach it
        return Severity.WARNING if self.files.active else Severity.ERROR

    def finish(self, valid_end: int) -> None:
        if self.offset_index is not None:
            self.offset_index.finish(valid_end, self.last_offset)
        if self.time_index is not None:
            self.time_index.finish(self.last_offset, self.max_timestamp)
        if self.txn_index is not None:
            self.txn_index.finish()
        self.report_progress(self.size)

    def report_progress(self, position: int) -> None:
        if self.progress is not None and position - self.reported >= PROGRESS_STEP:
            self.progress(position - self.reported)
            self.reported = position


def _after(previous_last: int | None, batch: Batch) -> int:
    """The first offset a legacy wrapper can hold when it is not decoded: the one after the
    previous batch's last offset."""
    return batch.last_offset if previous_last is None else previous_last + 1


def _all_zero(handle, start: int, end: int) -> bool:
    """Whether the bytes of ``[start, end)`` are all zero, read a chunk at a time."""
    for position in range(start, end, ZERO_CHECK_CHUNK):
        chunk = os.pread(handle.fileno(), min(ZERO_CHECK_CHUNK, end - position), position)
        if chunk.count(0) != len(chunk):
            return False
    return True


# The compiled batch walk (issue 14), unless pure Python: _compiled_walk.py, on the
# ``scan`` kernel of reference_impl/kernels.
_compiled_run = None
if kernels.scan is not None:
    from ._compiled_walk import run as _compiled_run
