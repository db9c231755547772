"""``klogspec dump`` of index files: Kafka's DumpLogSegments.dumpIndex and dumpTimeIndex
(entries up to the stop rule, the broker's sanity check, the cross-checks with the
``.log`` of index_checks.py) and the ``.txnindex`` entries (spec/formats/offset-index.md,
time-index.md, transaction-index.md)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import reference_impl.formats.index_entries as index
from reference_impl.errors import CorruptIndexError, InvalidFileNameError, KafkaLogError
from reference_impl.formats.file_naming import FileKind
from reference_impl.records import iter_file_batches

from .file_dump import FileDump, event_fields
from .index_checks import BatchSpan, verify_offset_index, verify_time_index

_INDEXES = {  # kind: (entry size, iterate, sanity check, event type)
    FileKind.OFFSET_INDEX: (8, index.iter_offset_index, index.sanity_check_offset_index,
                            "offset_index_entry"),
    FileKind.TIME_INDEX: (12, index.iter_time_index, index.sanity_check_time_index,
                          "time_index_entry"),
}  # fmt: skip


def dump_index(dump: FileDump) -> Iterator[dict]:
    """DumpLogSegments.dumpIndex / dumpTimeIndex: entries up to the stop rule (OIDX-10,
    TIDX-12) with Kafka's slot count (OIDX-9, TIDX-11); or only the broker's sanity check
    (--index-sanity-check); or only the cross-check with the .log (--verify-index-only)."""
    entry_size, iterate, sanity_check, event_type = _INDEXES[dump.info.kind]
    data = dump.path.read_bytes()
    base, summary = dump.info.base_offset, dump.summary
    trailing = index.trailing_bytes(len(data), entry_size)
    summary.update(slots=len(data) // entry_size, validBytes=len(data) - trailing)
    summary["trailingBytes"] = trailing
    if base is None:
        dump.error(InvalidFileNameError(f"no base offset in the name {dump.info.name!r}"))
        return
    entries = list(index.until_stop(iterate(data, base), base))
    summary.update(entries=len(entries), unusedSlots=summary["slots"] - len(entries))
    if dump.options.index_sanity_check:
        _sanity_check(dump, sanity_check, data)
    elif trailing:  # the sanity check's own length rule (OIDX-2, TIDX-5)
        size_error = f"{len(data)} bytes is not a whole number of {entry_size}-byte entries"
        dump.error(CorruptIndexError(size_error, position=0))
    if dump.options.verify_index_only:
        _verify(dump, entries)
    if dump.options.list_index_entries:
        for slot, entry in enumerate(entries):
            yield {"type": event_type, "slot": slot, **event_fields(entry)}


def _sanity_check(dump: FileDump, check, data: bytes) -> None:
    try:
        check(data, dump.info.base_offset, file=dump.file)
        dump.summary["sanityCheck"] = "passed"
    except KafkaLogError as exc:
        dump.summary["sanityCheck"] = "failed"
        dump.error(exc)


def _verify(dump: FileDump, entries: list) -> None:
    try:
        handle = open(_sibling(dump, ".log"), "rb")  # noqa: SIM115 (closed below)
    except OSError as exc:
        dump.io_error(f"cannot check against {_sibling(dump, '.log')}: {exc.strerror}")
        return
    with handle:
        log = _SegmentLog(handle)
        try:
            if dump.info.kind is FileKind.OFFSET_INDEX:
                found = verify_offset_index(entries, log.batch_at)
            else:
                offsets = _sibling_offset_index(dump)
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


def _sibling_offset_index(dump: FileDump) -> list[index.OffsetPosition]:
    """The segment's offset index for time-index lookups: none (position 0) if missing."""
    try:
        data = _sibling(dump, ".index").read_bytes()
    except OSError:
        return []
    base = dump.info.base_offset
    return list(index.until_stop(index.iter_offset_index(data, base), base))


def dump_txn_index(dump: FileDump) -> Iterator[dict]:
    """Whole 34-byte entries (TXN-4); a partial one is a torn append, reported as a tail."""
    data = dump.path.read_bytes()
    trailing = len(data) % index.ABORTED_TXN_SIZE
    dump.summary.update(validBytes=len(data) - trailing, trailingBytes=trailing)
    if trailing:
        tail = f"{trailing} bytes after the last whole 34-byte entry"
        dump.error(CorruptIndexError(tail, position=len(data) - trailing))
    if dump.options.index_sanity_check and dump.info.base_offset is not None:
        _sanity_check(dump, index.sanity_check_txn_index, data)
    try:
        txns = index.read_txn_index(data, file=dump.file)
    except KafkaLogError as exc:
        if dump.summary.get("sanityCheck") != "failed":  # the same entry failed already
            dump.error(exc)
        txns = list(_good_prefix(data))
    dump.summary["entries"] = len(txns)
    if not dump.options.index_sanity_check:
        for txn in txns:
            yield {"type": "txn_index_entry", **event_fields(txn)}


def _good_prefix(data: bytes) -> Iterator[index.AbortedTxn]:
    """The entries before the first one that does not decode."""
    try:
        yield from index.iter_txn_index(data)
    except KafkaLogError:
        return
