"""``klogspec dump`` of batch files (``.log``, KRaft ``.checkpoint``): Kafka's
DumpLogSegments.dumpLog, every whole entry with its header, and with ``--deep`` its
records (spec/formats/log-file.md, record-batch-v2.md, legacy-message.md,
control-records.md)."""

from __future__ import annotations

import binascii
import os
from collections.abc import Iterator

from reference_impl.errors import Category, CorruptRecordError, InvalidFileNameError, KafkaLogError
from reference_impl.formats.file_naming import FileKind
from reference_impl.formats.kraft_snapshots import snapshot_frame_problem
from reference_impl.records import Batch, ControlRecordType, parse_end_txn_marker
from reference_impl.records.control import CONTROL_KEY, parse_control_key

from ..walk import EntryWalk, header_problem
from .decode import add_decoded, record_decoder
from .file_dump import FileDump


def dump_batches(dump: FileDump) -> Iterator[dict]:
    """DumpLogSegments.dumpLog: every whole entry, stepping over well-framed ones that do
    not parse; the tail after the last whole entry is reported (FRAME-7, FRAME-9) unless
    --max-bytes cut the file short, as in Kafka."""
    options, summary = dump.options, dump.summary
    end = dump.size_bytes if options.max_bytes is None else min(dump.size_bytes, options.max_bytes)
    summary.update(batches=0, crcFailures=0)
    if options.records:
        summary.update(nonConsecutiveOffsets=[], nonConsecutiveCount=0)
    named = dump.info.kind is not FileKind.BOOTSTRAP_SNAPSHOT and options.file_type is None
    if dump.info.base_offset is None and named:
        dump.error(InvalidFileNameError(f"no offset in the name {dump.info.name!r}", position=0))
    previous = [None]  # the last record offset, across batches (deep only)
    dump.decoder = record_decoder(dump)
    with dump.open() as handle:
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
    if dump.info.kind is FileKind.KRAFT_SNAPSHOT and dump.info.marker is None:
        summary["snapshotFrame"] = snapshot_frame_problem(dump.path)  # KRAFT-1; None: framed


def _entry_size_at(path, position: int) -> int | None:
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
        records = event["records"] = _records(batch, dump, previous, problems)
        if event["baseOffset"] is None and records:
            event["baseOffset"] = records.first_offset
    if problems:
        dump.error(problems[0])
    return event


# gaps kept in nonConsecutiveOffsets; nonConsecutiveCount counts them all (a hostile batch
# can hold millions, each record's offsetDelta 0)
NON_CONSECUTIVE_KEPT = 1000


def _records(batch: Batch, dump: FileDump, previous: list, problems: list) -> RecordEvents | None:
    """The batch's records, checked now and decoded again, a chunk at a time, as they are
    printed (``RecordEvents``): memory does not grow with recordsCount. None when they do not
    decode (the error goes to ``problems``), as Kafka's deep iteration stops at it."""
    count, first = 0, None
    try:
        for chunk in batch.record_chunks():
            if first is None and chunk:
                first = chunk[0].offset
            count += len(chunk)
            if batch.is_control:
                for record in chunk:
                    _control(record, problems)
    except KafkaLogError as exc:
        problems.append(exc)
        return None
    return RecordEvents(batch, dump, previous, count, first)


class RecordEvents:
    """A batch's records as event dicts, decoded when iterated; offset gaps go to
    nonConsecutiveOffsets, as Kafka's deep iteration notes them (expected after compaction,
    so not an error). Iterated once, by the renderer, before the next batch's event."""

    def __init__(self, batch: Batch, dump: FileDump, previous: list, count: int, first) -> None:
        self.batch, self.dump, self.previous = batch, dump, previous
        self.count, self.first_offset = count, first

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[dict]:
        summary, batch = self.dump.summary, self.batch
        print_data, previous = self.dump.options.print_data, self.previous
        for chunk in batch.record_chunks():
            for record in chunk:
                if previous[0] is not None and record.offset != previous[0] + 1:
                    summary["nonConsecutiveCount"] += 1
                    if len(summary["nonConsecutiveOffsets"]) < NON_CONSECUTIVE_KEPT:
                        summary["nonConsecutiveOffsets"].append([previous[0], record.offset])
                previous[0] = record.offset
                item = _record_event(record, batch, print_data)
                if self.dump.decoder is not None:
                    add_decoded(self.dump, self.dump.decoder, record, batch.is_control, item)
                yield item


def _record_event(record, batch: Batch, print_data: bool) -> dict:
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
        item["control"] = _control(record, [])  # its problems were found by _records
    return item


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
    """base64.b64encode's text, without its wrapper's checks (a key and a value per record)."""
    return None if blob is None else binascii.b2a_base64(blob, newline=False).decode("ascii")
