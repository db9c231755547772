"""``klogspec dump`` of index files: Kafka's DumpLogSegments.dumpIndex and dumpTimeIndex
(entries up to the stop rule, the broker's sanity check, the cross-checks with the
``.log`` of index_checks.py) and the ``.txnindex`` entries (spec/formats/offset-index.md,
time-index.md, transaction-index.md)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path

import reference_impl.formats.index_entries as index
from reference_impl.errors import InvalidFileNameError, KafkaLogError
from reference_impl.formats.file_naming import FileKind
from reference_impl.records import iter_file_batches

from ..index_files import IndexSlots, real_entries, sanity_check, txn_entries
from ..safe_files import open_regular
from .file_dump import FileDump, event_fields
from .index_checks import BatchSpan, verify_offset_index, verify_time_index

_INDEXES = {  # kind: (entry size, whether a time index, event type)
    FileKind.OFFSET_INDEX: (8, False, "offset_index_entry"),
    FileKind.TIME_INDEX: (12, True, "time_index_entry"),
}


def dump_index(dump: FileDump) -> Iterator[dict]:
    """DumpLogSegments.dumpIndex / dumpTimeIndex: entries up to the stop rule (OIDX-10,
    TIDX-12) with Kafka's slot count (OIDX-9, TIDX-11); or only the broker's sanity check
    (--index-sanity-check); or only the cross-check with the .log (--verify-index-only).
    The file is read a window at a time, and only up to the stop rule: a sparse 4 GiB
    index of zeros costs one window."""
    entry_size, time, event_type = _INDEXES[dump.info.kind]
    base, summary = dump.info.base_offset, dump.summary
    with dump.open() as handle:
        size = os.fstat(handle.fileno()).st_size
        trailing = index.trailing_bytes(size, entry_size)
        summary.update(slots=size // entry_size, validBytes=size - trailing)
        summary["trailingBytes"] = trailing
        if base is None:
            dump.error(InvalidFileNameError(f"no base offset in the name {dump.info.name!r}"))
            return
        if dump.options.index_sanity_check:
            _sanity_check(dump, lambda: sanity_check(handle, base, time=time, file=dump.file))
        elif problem := index.length_problem(size, time=time):  # the check's own length rule
            dump.error(problem.error())
        entries = real_entries(handle, base, time=time)
        if dump.options.verify_index_only:
            entries = list(entries)
            _verify(dump, entries)
        count = 0
        for count, entry in enumerate(entries, 1):
            if dump.options.list_index_entries:
                yield {"type": event_type, "slot": count - 1, **event_fields(entry)}
    summary.update(entries=count, unusedSlots=summary["slots"] - count)


def _sanity_check(dump: FileDump, check) -> None:
    try:
        check()
        dump.summary["sanityCheck"] = "passed"
    except KafkaLogError as exc:
        dump.summary["sanityCheck"] = "failed"
        dump.error(exc)


def _verify(dump: FileDump, entries: list) -> None:
    try:
        handle = open_regular(_sibling(dump, ".log"), dump.path.parent)  # closed below
    except OSError as exc:
        dump.io_error(f"cannot check against {_sibling(dump, '.log')}: {exc.strerror}")
        return
    with handle, ExitStack() as stack:
        log = _SegmentLog(handle)
        try:
            if dump.info.kind is FileKind.OFFSET_INDEX:
                found = verify_offset_index(entries, log.batch_at)
            else:
                offsets = _sibling_offset_index(dump, stack)
                found = verify_time_index(entries, offsets, dump.info.base_offset, log.find)
        except KafkaLogError as exc:
            dump.error(exc)
            return
    dump.summary["mismatches"] += [
        {"kind": m.kind, "slot": m.slot, "indexValue": m.index_value, "logValue": m.log_value,
         "allowedBy": m.allowed_by}
        for m in found
    ]  # fmt: skip


class _SegmentLog:
    """Reads of the .log an index belongs to, batch by batch, never the whole file."""

    def __init__(self, handle) -> None:
        self.handle = handle
        self.end = os.fstat(handle.fileno()).st_size

    def batch_at(self, position: int) -> BatchSpan | None:
        """The whole, CRC-valid batch starting at ``position``, else None."""
        try:
            batch = next(iter(iter_file_batches(self.handle, start=position, end=self.end)), None)
            if batch is None or not batch.is_valid:
                return None
            return BatchSpan(batch.base_offset, batch.last_offset)
        except KafkaLogError:
            return None

    def find(self, position: int, target: int) -> BatchSpan | None:
        """The first batch from ``position`` whose lastOffset >= target, with the max of its
        record timestamps (Kafka's check reads the records, not the header's maxTimestamp)."""
        for batch in iter_file_batches(self.handle, start=position, end=self.end):
            if batch.last_offset >= target:
                records = batch.records()
                base = records[0].offset if batch.magic < 2 and records else batch.base_offset
                stamps = [record.timestamp for record in records]
                return BatchSpan(base, batch.last_offset, max(stamps, default=-1))
        return None


def _sibling(dump: FileDump, suffix: str) -> Path:
    """The segment file with the same prefix (and .deleted/.cleaned/.swap marker)."""
    marker = f".{dump.info.marker}" if dump.info.marker else ""
    return dump.path.with_name(dump.info.name.split(".")[0] + suffix + marker)


def _sibling_offset_index(dump: FileDump, stack: ExitStack) -> Sequence[index.OffsetPosition]:
    """The segment's offset index for time-index lookups, as DumpLogSegments opens it: every
    slot, zero slots included (OIDX-9), searched by Kafka's lookup; none (so position 0)
    if missing."""
    try:
        handle = stack.enter_context(open_regular(_sibling(dump, ".index"), dump.path.parent))
    except OSError:
        return []
    return IndexSlots(handle, dump.info.base_offset, time=False)


def dump_txn_index(dump: FileDump) -> Iterator[dict]:
    """Whole 34-byte entries (TXN-4), read a window at a time; a partial one is a torn
    append, reported as a tail."""
    size, checked = index.ABORTED_TXN_SIZE, dump.options.index_sanity_check
    with dump.open() as handle:
        length = os.fstat(handle.fileno()).st_size
        trailing = length % size
        dump.summary.update(validBytes=length - trailing, trailingBytes=trailing)
        if problem := index.txn_tail_problem(length):
            dump.error(problem.error())
        base = dump.info.base_offset
        if checked and base is not None:
            entries = txn_entries(handle, file=dump.file)
            _sanity_check(
                dump, lambda: index.sanity_check_txn_entries(entries, base, file=dump.file)
            )
        count = 0
        try:
            for txn in txn_entries(handle, file=dump.file):
                count += 1
                if not checked:
                    yield {"type": "txn_index_entry", **event_fields(txn)}
        except KafkaLogError as exc:  # the entries before it are listed
            if dump.summary.get("sanityCheck") != "failed":  # the same entry failed already
                dump.error(exc)
    dump.summary["entries"] = count
