"""What ``klogspec dump`` finds in each file: a superset of Kafka's DumpLogSegments.

``dump_paths`` walks files and directories in a stable order and yields one
``FileDump`` per file it can read. A FileDump's ``events()`` yields JSON-ready
dicts (one per batch, index entry, snapshot entry, checkpoint entry...) and then
completes ``summary``; nothing here prints, so the CLI renders the same events as
JSON Lines or as aligned text. Nothing raises either: problems become summary
entries and the dump goes on where the bytes allow.

* ``errors``: reader errors as ``to_dict()`` gives them, with a category of
  errors.Category (ERR-1, ERR-2), one per batch at most, the first in ERR-5 order;
* ``mismatches``: index entries that fail DumpLogSegments' cross-checks with the
  .log; those the spec allows carry ``allowedBy`` (OIDX-7, TIDX-2, TIDX-9) and,
  reported as Kafka's tool reports them, are not findings;
* ``ioErrors``: a file, or the .log an index is checked against, that cannot be read.

A piece ``klogspec recover`` kept in a quarantine folder is dumped as the file it came from
(``00000000000000060611.log.490950-998265``: a .log, base offset 60611), with that file's
positions (here from 490950), so that they match the manifest and recover's report;
``--type`` says what an unrecognised name holds. Directories are walked without their
quarantine folders unless ``include_quarantine``.
"""

from __future__ import annotations

import base64
import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from reference_impl import checkpoints, index
from reference_impl.errors import (
    Category,
    CorruptIndexError,
    CorruptRecordError,
    CorruptSnapshotError,
    InvalidFileNameError,
    KafkaLogError,
)
from reference_impl.files import FileInfo, FileKind, classify
from reference_impl.producer_snapshot import read_snapshot, snapshot_trailing_bytes
from reference_impl.records import Batch, ControlRecordType, iter_file_batches, parse_end_txn_marker
from reference_impl.records.control import CONTROL_KEY, parse_control_key

from ..recover.naming import MANIFEST, QUARANTINE_DIR, StoredPiece, stored_piece
from ..walk import EntryWalk, header_problem, path_order

_SEGMENT_FILES = [FileKind.LOG, FileKind.OFFSET_INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX]


@dataclass(frozen=True)
class DumpOptions:
    deep: bool = False
    print_data: bool = False  # implies deep, as Kafka's --print-data-log does
    index_sanity_check: bool = False
    verify_index_only: bool = False
    max_bytes: int | None = None
    file_type: FileKind | None = None  # what every named file holds, whatever its name
    include_quarantine: bool = False

    @property
    def records(self) -> bool:
        return self.deep or self.print_data

    @property
    def list_index_entries(self) -> bool:
        return not (self.index_sanity_check or self.verify_index_only)


@dataclass
class FileDump:
    """One file's dump: iterate ``events()``, then read ``summary`` and ``ok``."""

    path: Path
    info: FileInfo
    options: DumpOptions
    size_bytes: int = 0
    summary: dict = field(default_factory=dict)
    piece: StoredPiece | None = None  # a quarantined piece: positions are its original's

    @property
    def origin(self) -> int:
        """Where this file's first byte is in the file its positions are given in."""
        return 0 if self.piece is None else self.piece.start

    def __post_init__(self) -> None:
        self.file = str(self.path)
        self.summary = {
            "type": "summary", "file": self.file, "kind": self.info.kind.value,
            "sizeBytes": self.size_bytes, "batches": None, "entries": None,
            "validBytes": None, "trailingBytes": None, "mismatches": [], "errors": [],
            "ioErrors": [],
        }  # fmt: skip
        if self.info.base_offset is not None:
            key = "baseOffset" if self.info.kind in _SEGMENT_FILES else "endOffset"
            self.summary[key] = self.info.base_offset
        if self.info.epoch is not None:
            self.summary["epoch"] = self.info.epoch
        if self.piece is not None:
            self.summary["quarantined"] = {"file": self.piece.original, "from": self.origin}

    @property
    def ok(self) -> bool:
        """No errors, no unreadable files, no mismatch the spec rejects."""
        s = self.summary
        rejected = [m for m in s["mismatches"] if m["allowedBy"] is None]
        return not (s["errors"] or s["ioErrors"] or rejected)

    def error(self, exc: KafkaLogError) -> None:
        error = exc.located(file=self.file).to_dict()
        if error.get("position") is not None:
            error["position"] += self.origin
        self.summary["errors"].append(error)

    def io_error(self, message: str) -> None:
        self.summary["ioErrors"].append({"file": self.file, "message": message})

    def events(self) -> Iterator[dict]:
        count = 0
        try:
            for event in _DUMPERS[self.info.kind](self):
                count += 1
                yield {"file": self.file, **event}
        except OSError as exc:
            self.io_error(f"{exc.strerror or exc}: {exc.filename or self.file}")
        if self.summary["entries"] is None:
            self.summary["entries"] = count
        self.summary["ok"] = self.ok


def _fields(value) -> dict:
    """A format dataclass or NamedTuple as an event: Kafka's camelCase names (start_offset ->
    startOffset)."""
    names = (
        value._fields if isinstance(value, tuple) else [f.name for f in dataclasses.fields(value)]
    )
    return {_camel(name): getattr(value, name) for name in names}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


# --- walking paths ------------------------------------------------------------------------


def dump_paths(
    paths, options: DumpOptions, *, warn=lambda message: None, refuse=None
) -> Iterator[FileDump]:
    """A FileDump for each dumpable file under ``paths``. Directories are walked in a stable
    order: segment files by base offset (.log, .index, .timeindex, .txnindex, .snapshot),
    other files by name, then subdirectories (partition directories by topic, then
    partition number), quarantine folders only with ``include_quarantine``. Files of
    other kinds found in directories go to ``warn`` (unknown names only); a file named in
    ``paths`` that cannot be dumped goes to ``refuse`` (the command cannot do what it was
    asked: exit status 2)."""
    refuse = refuse or warn
    for path in paths:
        yield from _walk(Path(path), options, warn, refuse, explicit=True)


def _walk(path: Path, options, warn, refuse, *, explicit: bool) -> Iterator[FileDump]:
    if path.is_dir():
        if path.name == QUARANTINE_DIR and not (explicit or options.include_quarantine):
            return  # klogspec recover's kept bytes: not the partition's (LOAD-25)
        for child in sorted(path.iterdir(), key=path_order):
            if not (child.is_dir() and child.is_symlink()):  # a linked directory could loop
                yield from _walk(child, options, warn, refuse, explicit=False)
        return
    info, piece = identify(path, options.file_type if explicit else None)
    if info.kind not in _DUMPERS:
        if explicit:
            hint = " (--type says what it holds)" if info.kind is FileKind.UNKNOWN else ""
            refuse(f"cannot dump {path}: {_kind_words(info.kind)} files are not dumped{hint}")
        elif info.kind is FileKind.UNKNOWN and not _manifest(path):
            warn(f"ignoring {path}: unknown files are not dumped")
        return
    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # events() reports why the file cannot be read
    yield FileDump(path, info, options, size, piece=piece)


def identify(path: Path, file_type: FileKind | None = None) -> tuple[FileInfo, StoredPiece | None]:
    """What ``path`` holds: ``file_type`` when given (with the base offset its name starts
    with, if any), else what its name says, a quarantined piece as its original."""
    info = classify(path)
    piece = stored_piece(path.name) if info.kind is FileKind.UNKNOWN else None
    if piece is not None:
        info = dataclasses.replace(classify(piece.original), name=path.name)
    if file_type is not None and file_type is not info.kind:
        digits = path.name.split(".")[0]
        base = int(digits) if len(digits) == 20 and digits.isdigit() else None
        info = FileInfo(file_type, path.name, base)
    return info, piece


def _kind_words(kind: FileKind) -> str:
    return kind.value.replace("_", " ")


def _manifest(path: Path) -> bool:
    """A quarantine folder's manifest.json: JSON for people, nothing to decode."""
    return path.name == MANIFEST and path.parent.parent.name == QUARANTINE_DIR


# --- batch files: .log, KRaft .checkpoint ---------------------------------------------------


def _dump_batches(dump: FileDump) -> Iterator[dict]:
    """DumpLogSegments.dumpLog: every whole entry, stepping over well-framed ones that do
    not parse; the tail after the last whole entry is reported (FRAME-7, FRAME-9) unless
    --max-bytes cut the file short, as in Kafka."""
    options, summary = dump.options, dump.summary
    end = dump.size_bytes if options.max_bytes is None else min(dump.size_bytes, options.max_bytes)
    summary.update(batches=0, crcFailures=0)
    if options.records:
        summary["nonConsecutiveOffsets"] = []
    named = dump.info.kind is not FileKind.BOOTSTRAP_SNAPSHOT and options.file_type is None
    if dump.info.base_offset is None and named:
        dump.error(InvalidFileNameError(f"no offset in the name {dump.info.name!r}", position=0))
    previous = [None]  # the last record offset, across batches (deep only)
    with open(dump.path, "rb") as handle:
        walk = EntryWalk(handle, file=dump.file, end=end)
        for item in walk:
            if isinstance(item, KafkaLogError):
                dump.error(item)
                continue
            summary["batches"] += 1
            yield _batch_event(item, dump, previous)
    valid = summary["validBytes"] = walk.valid_bytes  # a skipped entry counts as framed
    if end < dump.size_bytes:  # --max-bytes stopped the dump: say so, and what comes next
        summary.update(readBytes=end, maxBytesReached=True)
        summary["nextEntryBytes"] = _entry_size_at(dump.path, valid)
    if end == dump.size_bytes:
        summary["trailingBytes"] = end - valid
        if end > valid and walk.stopped_at is None:
            tail = CorruptRecordError(
                Category.TRUNCATED_BATCH, f"{end - valid} bytes after the last whole entry"
            )
            dump.error(tail.located(position=valid))


def _entry_size_at(path: Path, position: int) -> int | None:
    """The size (with its 12-byte offset and length prefix) the entry at ``position`` says
    it has, or None when fewer than 12 bytes are there."""
    with open(path, "rb") as handle:
        prefix = os.pread(handle.fileno(), 12, position)
    return int.from_bytes(prefix[8:12], "big", signed=True) + 12 if len(prefix) == 12 else None


# what ensure_valid reports: Kafka's isValid is false for exactly these
_INTEGRITY_FAILURES = frozenset({Category.CRC_MISMATCH, Category.INVALID_BATCH_SIZE})


def _batch_event(batch: Batch, dump: FileDump, previous: list) -> dict:
    """One batch, with its records when deep. Only the batch's first problem is reported,
    in ERR-5 order: CRC, then codec, then its records."""
    problem = header_problem(batch)
    problems = [problem] if problem is not None else []
    # header_problem ran ensure_valid first, so its result already says whether the CRC held
    crc_valid = problem is None or problem.category not in _INTEGRITY_FAILURES
    if not crc_valid:
        dump.summary["crcFailures"] += 1
    try:
        codec = batch.compression.label
    except KafkaLogError:
        codec = f"unknown({batch.compression_id})"
    legacy = batch.magic < 2
    event = {
        "type": "batch",
        # a legacy wrapper's base offset is its first inner offset: known once decompressed
        "baseOffset": None if legacy and batch.compression_id else batch.base_offset,
        "lastOffset": batch.last_offset, "count": batch.records_count, "magic": batch.magic,
        "compression": codec, "crc": batch.crc, "crcValid": crc_valid,
        "position": batch.position + dump.origin, "sizeBytes": batch.size_in_bytes,
        "partitionLeaderEpoch": batch.partition_leader_epoch, "producerId": batch.producer_id,
        "producerEpoch": batch.producer_epoch, "baseSequence": batch.base_sequence,
        "lastSequence": batch.last_sequence, "isTransactional": batch.is_transactional,
        "isControl": batch.is_control, "timestampType": batch.timestamp_type.label,
        "maxTimestamp": batch.max_timestamp,
        "deleteHorizonMs": None if legacy else batch.delete_horizon_ms,
    }  # fmt: skip
    if dump.options.records:
        event["records"] = _records(batch, dump, previous, problems)
        if event["baseOffset"] is None and event["records"]:
            event["baseOffset"] = event["records"][0]["offset"]
    if problems:
        dump.error(problems[0])
    return event


def _records(batch: Batch, dump: FileDump, previous: list, problems: list) -> list | None:
    """The batch's records as dicts; offset gaps go to nonConsecutiveOffsets, as Kafka's
    deep iteration notes them (expected after compaction, so not an error)."""
    try:
        records = batch.records()
    except KafkaLogError as exc:
        problems.append(exc)
        return None
    print_data, out = dump.options.print_data, []
    for record in records:
        if previous[0] is not None and record.offset != previous[0] + 1:
            dump.summary["nonConsecutiveOffsets"].append([previous[0], record.offset])
        previous[0] = record.offset
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
            item["control"] = _control(record, problems)
        out.append(item)
    return out


def _control(record, problems: list) -> dict | None:
    """A control record's type, and the coordinator epoch of a COMMIT or ABORT marker."""
    try:
        control_type = parse_control_key(record.key)
        decoded = {"type": control_type.name}
        if control_type is ControlRecordType.UNKNOWN:
            decoded["typeId"] = CONTROL_KEY.unpack_from(record.key)[1]
        if control_type in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
            decoded["coordinatorEpoch"] = parse_end_txn_marker(
                record.key, record.value
            ).coordinator_epoch
        return decoded
    except KafkaLogError as exc:
        problems.append(exc)
        return None


def _size(blob: bytes | None) -> int:
    return -1 if blob is None else len(blob)


def _b64(blob: bytes | None) -> str | None:
    return None if blob is None else base64.b64encode(blob).decode("ascii")


# --- index files ------------------------------------------------------------------------

_INDEXES = {  # kind: (entry size, iterate, sanity check, event type)
    FileKind.OFFSET_INDEX: (8, index.iter_offset_index, index.sanity_check_offset_index,
                            "offset_index_entry"),
    FileKind.TIME_INDEX: (12, index.iter_time_index, index.sanity_check_time_index,
                          "time_index_entry"),
}  # fmt: skip


def _dump_index(dump: FileDump) -> Iterator[dict]:
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
            yield {"type": event_type, "slot": slot, **_fields(entry)}


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
                found = index.verify_offset_index(entries, log.batch_at)
            else:
                offsets = _sibling_offset_index(dump)
                found = index.verify_time_index(entries, offsets, dump.info.base_offset, log.find)
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

    def batch_at(self, position: int) -> index.BatchSpan | None:
        """The whole, CRC-valid batch starting at ``position``, else None."""
        try:
            batch = next(iter(iter_file_batches(self.handle, start=position, end=self.end)), None)
            if batch is None or not batch.is_valid:
                return None
            return index.BatchSpan(batch.base_offset, batch.last_offset)
        except KafkaLogError:
            return None

    def find(self, position: int, target: int) -> index.BatchSpan | None:
        """The first batch from ``position`` whose lastOffset >= target, with the max of its
        record timestamps (Kafka's check reads the records, not the header's maxTimestamp)."""
        for batch in iter_file_batches(self.handle, start=position, end=self.end):
            if batch.last_offset >= target:
                records = batch.records()
                base = records[0].offset if batch.magic < 2 and records else batch.base_offset
                stamps = [record.timestamp for record in records]
                return index.BatchSpan(base, batch.last_offset, max(stamps, default=-1))
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


def _dump_txn_index(dump: FileDump) -> Iterator[dict]:
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
            yield {"type": "txn_index_entry", **_fields(txn)}


def _good_prefix(data: bytes) -> Iterator[index.AbortedTxn]:
    """The entries before the first one that does not decode."""
    try:
        yield from index.iter_txn_index(data)
    except KafkaLogError:
        return


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
    if trailing:  # Kafka reads past them (the CRC covers them), but never writes any (SNAP-8)
        dump.error(CorruptSnapshotError(f"{trailing} bytes after the last entry", position=0))
    for entry in entries:
        yield {"type": "producer_snapshot_entry", **_fields(entry),
               "firstSequence": entry.first_sequence}  # fmt: skip


def _text_dumper(read, event_type: str, many: bool = True):
    def dumper(dump: FileDump) -> Iterator[dict]:
        try:
            content = read(dump.path.read_bytes(), file=dump.file)
        except KafkaLogError as exc:
            dump.error(exc)
            return
        for item in content if many else [content]:
            yield {"type": event_type, **_fields(item)}

    return dumper


def _dump_properties(dump: FileDump) -> Iterator[dict]:
    try:
        properties = checkpoints.read_meta_properties(dump.path.read_bytes(), file=dump.file)
    except KafkaLogError as exc:
        dump.error(exc)
        return
    for key, value in properties.items():
        yield {"type": "property", "key": key, "value": value}


_DUMPERS = {
    FileKind.LOG: _dump_batches,
    FileKind.KRAFT_SNAPSHOT: _dump_batches,
    FileKind.BOOTSTRAP_SNAPSHOT: _dump_batches,
    FileKind.OFFSET_INDEX: _dump_index,
    FileKind.TIME_INDEX: _dump_index,
    FileKind.TXN_INDEX: _dump_txn_index,
    FileKind.PRODUCER_SNAPSHOT: _dump_producer_snapshot,
    FileKind.LEADER_EPOCH_CHECKPOINT: _text_dumper(
        checkpoints.read_leader_epoch_checkpoint, "leader_epoch_entry"
    ),
    FileKind.PARTITION_METADATA: _text_dumper(
        checkpoints.read_partition_metadata, "partition_metadata", many=False
    ),
    FileKind.CLEAN_SHUTDOWN: _text_dumper(
        checkpoints.read_clean_shutdown, "clean_shutdown", many=False
    ),
    FileKind.META_PROPERTIES: _dump_properties,
    **{
        kind: _text_dumper(checkpoints.read_offset_checkpoint, "offset_checkpoint_entry")
        for kind in FileKind
        if kind.is_offset_checkpoint
    },
}
DUMPABLE_KINDS = frozenset(_DUMPERS)
