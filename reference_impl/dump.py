"""What ``klogspec dump`` finds in each file: a superset of Kafka's DumpLogSegments.

``dump_paths`` walks files and directories in a stable order and yields one
``FileDump`` per file it knows. A FileDump's ``events()`` yields JSON-ready dicts
(one per batch, index entry, snapshot entry, checkpoint entry...) and then fills
``summary``; nothing here prints, so the CLI renders the same events as JSON Lines
or as aligned text. Problems never raise: each becomes an entry of the summary's
``errors`` (a reader error's ``to_dict()``: stable category, file, position,
offset) or ``mismatches``, and the dump goes on where the bytes allow.

Besides the reader categories of errors.Category, a summary may carry ``io_error``
when a file, or the .log an index is checked against, cannot be read.
"""

from __future__ import annotations

import base64
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from . import checkpoints, index
from .errors import (
    Category,
    CorruptIndexError,
    CorruptRecordError,
    CorruptSnapshotError,
    InvalidFileNameError,
    KafkaLogError,
)
from .files import FileInfo, FileKind, classify, parse_partition_dir_name
from .producer_state import read_snapshot, snapshot_trailing_bytes
from .records import (
    Batch,
    ControlRecordType,
    iter_file_batches,
    parse_control_key,
    parse_end_txn_marker,
)
from .records.control import CONTROL_KEY

IO_ERROR = "io_error"
_SEGMENT_ORDER = [FileKind.LOG, FileKind.OFFSET_INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX]
_SEGMENT_ORDER += [FileKind.PRODUCER_SNAPSHOT]
_FRAME = struct.Struct(">qi")  # offset, size: enough to step over a well-framed bad entry


@dataclass(frozen=True)
class DumpOptions:
    deep: bool = False
    print_data: bool = False  # implies deep, as Kafka's --print-data-log does
    index_sanity_check: bool = False
    verify_index_only: bool = False
    max_bytes: int | None = None

    @property
    def records(self) -> bool:
        return self.deep or self.print_data


@dataclass
class FileDump:
    """One file's dump: ``events()`` first, then ``summary`` is complete."""

    path: Path
    info: FileInfo
    options: DumpOptions
    size_bytes: int = 0
    summary: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.file = str(self.path)
        self.summary = {
            "type": "summary", "file": self.file, "kind": self.info.kind.value,
            "sizeBytes": self.size_bytes, "batches": None, "entries": 0,
            "validBytes": None, "trailingBytes": None, "mismatches": [], "errors": [],
        }  # fmt: skip
        if self.info.base_offset is not None:
            key = "baseOffset" if self.info.kind in _SEGMENT_ORDER[:4] else "endOffset"
            self.summary[key] = self.info.base_offset
        if self.info.epoch is not None:
            self.summary["epoch"] = self.info.epoch

    @property
    def ok(self) -> bool:
        return not self.summary["errors"] and not self.summary["mismatches"]

    def error(self, exc: KafkaLogError) -> None:
        self.summary["errors"].append(exc.located(file=self.file).to_dict())

    def io_error(self, message: str) -> None:
        self.summary["errors"].append(
            {"category": IO_ERROR, "message": message, "file": self.file,
             "position": None, "offset": None}
        )  # fmt: skip

    def events(self) -> Iterator[dict]:
        dumper = _DUMPERS[self.info.kind]
        try:
            for event in dumper(self):
                event = {"file": self.file, **event}
                self.summary["entries"] += 1
                yield event
        except OSError as exc:
            self.io_error(f"{exc.strerror or exc}: {exc.filename or self.file}")
        self.summary["ok"] = self.ok


# --- walking paths ------------------------------------------------------------------------


def dump_paths(paths, options: DumpOptions, *, warn=lambda message: None) -> Iterator[FileDump]:
    """A FileDump for each dumpable file under ``paths``, directories recursed in a stable
    order: within a directory, segment files by base offset (.log, .index, .timeindex,
    .txnindex, .snapshot), then other files by name, then subdirectories (partition
    directories by topic, then partition number). Other files are reported to ``warn``."""
    for path in paths:
        yield from _walk(Path(path), options, warn, explicit=True)


def _walk(path: Path, options, warn, *, explicit: bool) -> Iterator[FileDump]:
    if path.is_dir():
        children = sorted(path.iterdir(), key=_order)
        for child in children:
            if child.is_dir() and child.is_symlink():
                continue  # a link to a directory could loop
            yield from _walk(child, options, warn, explicit=False)
        return
    info = classify(path)
    if info.kind not in _DUMPERS:
        if explicit or info.kind is FileKind.UNKNOWN:
            warn(f"ignoring {path}: {info.kind.value} files are not dumped")
        return
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    yield FileDump(path, info, options, size)


def _order(path: Path):
    if path.is_dir():
        try:
            name = parse_partition_dir_name(path.name)
            return (2, name.topic, name.partition, path.name)
        except KafkaLogError:
            return (2, path.name, -1, path.name)
    info = classify(path)
    if info.kind in _SEGMENT_ORDER and info.base_offset is not None:
        return (0, "", info.base_offset, str(_SEGMENT_ORDER.index(info.kind)) + path.name)
    return (1, path.name, 0, "")


# --- batch files: .log, KRaft .checkpoint ---------------------------------------------------


def _dump_batches(dump: FileDump) -> Iterator[dict]:
    options, summary = dump.options, dump.summary
    end = dump.size_bytes if options.max_bytes is None else min(dump.size_bytes, options.max_bytes)
    summary.update(batches=0, validBytes=0, trailingBytes=0, crcFailures=0)
    if options.records:
        summary["nonConsecutiveOffsets"] = []
    last_record_offset = None
    position = 0
    with open(dump.path, "rb") as handle:
        while True:
            scanner = iter_file_batches(handle, file=dump.file, start=position, end=end)
            try:
                for batch in scanner:
                    summary["batches"] += 1
                    event = _batch_event(batch, dump)
                    if options.records:
                        records, last_record_offset = _records(batch, dump, last_record_offset)
                        event["records"] = records
                        if event["baseOffset"] is None and records:
                            event["baseOffset"] = records[0]["offset"]  # a legacy wrapper
                    yield event
            except KafkaLogError as exc:
                dump.error(exc)
                position = _next_entry(handle, exc.position, end)
                if position is not None:
                    continue  # a whole entry that would not parse: go on after it
            valid = scanner.valid_bytes if position is None else end
            break
    summary["validBytes"] = valid
    if end == dump.size_bytes:  # as Kafka: no tail report when --max-bytes cut the file
        summary["trailingBytes"] = end - valid
        if end - valid and not summary["errors"]:
            dump.error(
                CorruptRecordError(
                    Category.TRUNCATED_BATCH,
                    f"{end - valid} bytes after the last whole entry",
                    position=valid,
                )
            )


def _next_entry(handle, position: int | None, end: int) -> int | None:
    """Where the entry after a well-framed but unparseable one starts, or None."""
    if position is None:
        return None
    prefix = os.pread(handle.fileno(), _FRAME.size, position)
    if len(prefix) < _FRAME.size:
        return None
    _, size = _FRAME.unpack(prefix)
    after = position + 12 + size
    return after if size >= 14 and after <= end else None


def _batch_event(batch: Batch, dump: FileDump) -> dict:
    try:
        codec = batch.compression.label
    except KafkaLogError as exc:
        codec = f"unknown({batch.compression_id})"
        dump.error(exc)
    base_offset = batch.base_offset if batch.magic >= 2 or batch.compression_id == 0 else None
    if base_offset is None and not dump.options.records:
        try:
            base_offset = batch.base_offset  # a legacy wrapper: its first inner offset
        except KafkaLogError as exc:
            dump.error(exc)
    crc_valid = batch.is_valid
    if not crc_valid:
        dump.summary["crcFailures"] += 1
        try:
            batch.ensure_valid()
        except KafkaLogError as exc:
            dump.error(exc)
    horizon = batch.delete_horizon_ms if batch.magic >= 2 else None
    return {
        "type": "batch", "baseOffset": base_offset, "lastOffset": batch.last_offset,
        "count": batch.records_count, "magic": batch.magic, "compression": codec,
        "crc": batch.crc, "crcValid": crc_valid, "position": batch.position,
        "sizeBytes": batch.size_in_bytes, "partitionLeaderEpoch": batch.partition_leader_epoch,
        "producerId": batch.producer_id, "producerEpoch": batch.producer_epoch,
        "baseSequence": batch.base_sequence, "lastSequence": batch.last_sequence,
        "isTransactional": batch.is_transactional, "isControl": batch.is_control,
        "timestampType": batch.timestamp_type.label, "maxTimestamp": batch.max_timestamp,
        "deleteHorizonMs": horizon,
    }  # fmt: skip


def _records(batch: Batch, dump: FileDump, last_offset: int | None):
    """The batch's records as dicts, and the last record offset seen (for gap tracking)."""
    try:
        records = batch.records()
    except KafkaLogError as exc:
        dump.error(exc)
        return None, last_offset
    out = []
    print_data = dump.options.print_data
    for record in records:
        if last_offset is not None and record.offset != last_offset + 1:
            dump.summary["nonConsecutiveOffsets"].append([last_offset, record.offset])
        last_offset = record.offset
        item = {
            "offset": record.offset, "timestamp": record.timestamp,
            "keySize": _size(record.key), "valueSize": _size(record.value),
            "sequence": record.sequence,
        }  # fmt: skip
        if print_data:
            item["key"], item["value"] = _b64(record.key), _b64(record.value)
        item["headers"] = [
            {"key": h.key.decode("utf-8", "backslashreplace")}
            | ({"value": _b64(h.value)} if print_data else {"valueSize": _size(h.value)})
            for h in record.headers
        ]
        if batch.is_control:
            item["control"] = _control(record, dump)
        out.append(item)
    return out, last_offset


def _control(record, dump: FileDump) -> dict | None:
    """A control record decoded: its type, and for COMMIT/ABORT the coordinator epoch."""
    try:
        control_type = parse_control_key(record.key)
        decoded = {"type": control_type.name}
        if control_type is ControlRecordType.UNKNOWN:
            decoded["typeId"] = CONTROL_KEY.unpack_from(record.key)[1]
        if control_type in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
            marker = parse_end_txn_marker(record.key, record.value)
            decoded["coordinatorEpoch"] = marker.coordinator_epoch
        return decoded
    except KafkaLogError as exc:
        dump.error(exc.located(offset=record.offset))
        return None


def _size(blob: bytes | None) -> int:
    return -1 if blob is None else len(blob)


def _b64(blob: bytes | None) -> str | None:
    return None if blob is None else base64.b64encode(blob).decode("ascii")


# --- index files ------------------------------------------------------------------------


def _read_index(dump: FileDump, entry_size: int) -> bytes | None:
    """The index bytes, with Kafka's entry count and the whole/partial split in the summary;
    None when the name has no base offset to resolve relative offsets against."""
    data = dump.path.read_bytes()
    trailing = index.trailing_bytes(len(data), entry_size)
    dump.summary.update(
        slots=index.entry_count(len(data), entry_size),
        validBytes=len(data) - trailing,
        trailingBytes=trailing,
    )
    if dump.info.base_offset is None:
        dump.error(InvalidFileNameError(f"{dump.info.name!r} has no base offset prefix"))
        return None
    if trailing:
        dump.error(
            CorruptIndexError(
                f"{trailing} bytes after the last whole {entry_size}-byte entry",
                position=len(data) - trailing,
            )
        )
    return data


def _sanity(dump: FileDump, check, data: bytes) -> None:
    """--index-sanity-check: the broker's own startup check, pass or fail."""
    try:
        check(data, dump.info.base_offset, file=dump.file)
        dump.summary["sanityCheck"] = "passed"
    except KafkaLogError as exc:
        dump.summary["sanityCheck"] = "failed"
        if not any(e["category"] == exc.category for e in dump.summary["errors"]):
            dump.error(exc)


def _dump_offset_index(dump: FileDump) -> Iterator[dict]:
    data = _read_index(dump, index.OFFSET_INDEX_ENTRY_SIZE)
    if data is None:
        return
    base = dump.info.base_offset
    entries = list(index.until_stop(index.iter_offset_index(data, base), base))
    dump.summary["unusedSlots"] = dump.summary["slots"] - len(entries)
    if dump.options.index_sanity_check:
        _sanity(dump, index.sanity_check_offset_index, data)
    if dump.options.verify_index_only:
        with _companion(dump, ".log") as log:
            if log is not None:
                _mismatches(dump, index.verify_offset_index(entries, log.batch_at))
    if dump.options.index_sanity_check or dump.options.verify_index_only:
        return
    for slot, entry in enumerate(entries):
        yield {"type": "offset_index_entry", "slot": slot, "offset": entry.offset,
               "position": entry.position}  # fmt: skip


def _dump_time_index(dump: FileDump) -> Iterator[dict]:
    data = _read_index(dump, index.TIME_INDEX_ENTRY_SIZE)
    if data is None:
        return
    base = dump.info.base_offset
    entries = list(index.until_stop(index.iter_time_index(data, base), base))
    dump.summary["unusedSlots"] = dump.summary["slots"] - len(entries)
    if dump.options.index_sanity_check:
        _sanity(dump, index.sanity_check_time_index, data)
    if dump.options.verify_index_only:
        with _companion(dump, ".log") as log:
            if log is not None:
                offsets = _companion_offset_index(dump)
                try:
                    found = index.verify_time_index(entries, offsets, base, log.find_batch)
                    _mismatches(dump, found)
                except KafkaLogError as exc:
                    dump.error(exc)
    if dump.options.index_sanity_check or dump.options.verify_index_only:
        return
    for slot, entry in enumerate(entries):
        yield {"type": "time_index_entry", "slot": slot, "timestamp": entry.timestamp,
               "offset": entry.offset}  # fmt: skip


def _dump_txn_index(dump: FileDump) -> Iterator[dict]:
    data = dump.path.read_bytes()
    trailing = len(data) % index.ABORTED_TXN_SIZE
    dump.summary.update(validBytes=len(data) - trailing, trailingBytes=trailing)
    if trailing:  # Kafka skips it, then appends after it: later entries would be misaligned
        dump.error(
            CorruptIndexError(
                f"{trailing} bytes after the last whole 34-byte entry",
                position=len(data) - trailing,
            )
        )
    if dump.options.index_sanity_check and dump.info.base_offset is not None:
        _sanity(dump, index.sanity_check_txn_index, data)
    try:
        for txn in index.iter_txn_index(data, file=dump.file):
            yield {"type": "txn_index_entry", "version": txn.version,
                   "producerId": txn.producer_id, "firstOffset": txn.first_offset,
                   "lastOffset": txn.last_offset, "lastStableOffset": txn.last_stable_offset}  # fmt: skip
    except KafkaLogError as exc:
        if not any(e["category"] == exc.category for e in dump.summary["errors"]):
            dump.error(exc)


def _mismatches(dump: FileDump, found: list[index.IndexMismatch]) -> None:
    dump.summary["mismatches"] += [
        {"kind": m.kind, "slot": m.slot, "indexValue": m.index_value, "logValue": m.log_value}
        for m in found
    ]


class _SegmentLog:
    """Reads of the .log an index belongs to, batch by batch, never the whole file."""

    def __init__(self, handle) -> None:
        self.handle = handle
        self.end = os.fstat(handle.fileno()).st_size

    def _batches(self, position: int):
        return iter_file_batches(self.handle, start=position, end=self.end)

    def batch_at(self, position: int) -> index.BatchSpan | None:
        """The whole, CRC-valid batch starting at ``position``, else None."""
        try:
            batch = next(iter(self._batches(position)), None)
            if batch is None or not batch.is_valid:
                return None
            return index.BatchSpan(batch.base_offset, batch.last_offset)
        except KafkaLogError:
            return None

    def find_batch(self, position: int, target: int) -> index.BatchSpan | None:
        """The first batch from ``position`` whose lastOffset >= target, with the max of its
        record timestamps (Kafka's check uses the records, not the header's maxTimestamp)."""
        for batch in self._batches(position):
            if batch.last_offset >= target:
                records = batch.records()
                stamps = [record.timestamp for record in records]
                base = records[0].offset if records else batch.last_offset
                if batch.magic >= 2:
                    base = batch.base_offset
                return index.BatchSpan(
                    base, batch.last_offset, max(stamps, default=index.NO_TIMESTAMP)
                )
        return None


class _companion:
    """Open the segment file beside an index (same prefix and marker), or report it missing."""

    def __init__(self, dump: FileDump, suffix: str) -> None:
        self.dump = dump
        self.path = _sibling(dump, suffix)
        self.handle = None

    def __enter__(self) -> _SegmentLog | None:
        try:
            self.handle = open(self.path, "rb")  # noqa: SIM115 (closed in __exit__)
        except OSError as exc:
            self.dump.io_error(f"cannot check against {self.path}: {exc.strerror}")
            return None
        return _SegmentLog(self.handle)

    def __exit__(self, *exc_info) -> None:
        if self.handle is not None:
            self.handle.close()


def _sibling(dump: FileDump, suffix: str) -> Path:
    marker = f".{dump.info.marker}" if dump.info.marker else ""
    return dump.path.with_name(dump.info.name.split(".")[0] + suffix + marker)


def _companion_offset_index(dump: FileDump) -> list[index.OffsetPosition]:
    """The segment's offset index for time-index lookups; none (position 0) if missing."""
    base = dump.info.base_offset
    try:
        data = _sibling(dump, ".index").read_bytes()
    except OSError:
        return []
    return list(index.until_stop(index.iter_offset_index(data, base), base))


# --- producer snapshots and text files ---------------------------------------------------


def _dump_producer_snapshot(dump: FileDump) -> Iterator[dict]:
    data = dump.path.read_bytes()
    try:
        entries = read_snapshot(data, file=dump.file)
    except KafkaLogError as exc:
        dump.error(exc)
        return
    trailing = snapshot_trailing_bytes(data)
    dump.summary.update(validBytes=len(data) - trailing, trailingBytes=trailing)
    if trailing:  # Kafka accepts them (the CRC covers them), but its writer never adds any
        dump.error(
            CorruptSnapshotError(
                f"{trailing} bytes after the last entry", position=len(data) - trailing
            )
        )
    for e in entries:
        yield {"type": "producer_snapshot_entry", "producerId": e.producer_id,
               "producerEpoch": e.producer_epoch, "lastSequence": e.last_sequence,
               "firstSequence": e.first_sequence, "lastOffset": e.last_offset,
               "offsetDelta": e.offset_delta, "timestamp": e.timestamp,
               "coordinatorEpoch": e.coordinator_epoch,
               "currentTxnFirstOffset": e.current_txn_first_offset}  # fmt: skip


def _text_dumper(read, to_events):
    def dumper(dump: FileDump) -> Iterator[dict]:
        try:
            content = read(dump.path.read_bytes(), file=dump.file)
        except KafkaLogError as exc:
            dump.error(exc)
            return
        yield from to_events(content)

    return dumper


_DUMPERS = {
    FileKind.LOG: _dump_batches,
    FileKind.KRAFT_SNAPSHOT: _dump_batches,
    FileKind.BOOTSTRAP_SNAPSHOT: _dump_batches,
    FileKind.OFFSET_INDEX: _dump_offset_index,
    FileKind.TIME_INDEX: _dump_time_index,
    FileKind.TXN_INDEX: _dump_txn_index,
    FileKind.PRODUCER_SNAPSHOT: _dump_producer_snapshot,
    FileKind.LEADER_EPOCH_CHECKPOINT: _text_dumper(
        checkpoints.read_leader_epoch_checkpoint,
        lambda entries: (
            {"type": "leader_epoch_entry", "epoch": e.epoch, "startOffset": e.start_offset}
            for e in entries
        ),
    ),
    FileKind.PARTITION_METADATA: _text_dumper(
        checkpoints.read_partition_metadata,
        lambda m: [{"type": "partition_metadata", "version": m.version, "topicId": m.topic_id}],
    ),
    FileKind.META_PROPERTIES: _text_dumper(
        checkpoints.read_meta_properties,
        lambda props: ({"type": "property", "key": k, "value": v} for k, v in props.items()),
    ),
    FileKind.CLEAN_SHUTDOWN: _text_dumper(
        lambda data, file: checkpoints.read_clean_shutdown(data, file=file),
        lambda c: [{"type": "clean_shutdown", "version": c.version, "brokerEpoch": c.broker_epoch}],
    ),
}
for _kind in FileKind:
    if _kind.is_offset_checkpoint:
        _DUMPERS[_kind] = _text_dumper(
            checkpoints.read_offset_checkpoint,
            lambda entries: (
                {"type": "offset_checkpoint_entry", "topic": e.topic, "partition": e.partition,
                 "offset": e.offset}
                for e in entries
            ),
        )  # fmt: skip
