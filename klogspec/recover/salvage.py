"""``klogspec salvage``: the intact records of a quarantine, written out for a client to produce
again (spec/behaviour/recovery.md §7, RECOV-27). A kafka-log-spec addition: Kafka has no way
back for the records its recovery removes (RECOV-5).

``klogspec recover`` keeps every byte it removes in a quarantine folder (quarantine.py): the
range cut off a segment, which starts with the batch that stopped the recovery, and the later
segments it deleted, intact or not. Salvage reads the ``.log`` pieces its ``manifest.json``
names (those of records a reader could see: loss.py's rule, not ``.deleted`` files or segments
below the log start offset), in offset order, and writes the records of each intact batch
(intact.py: framed, CRC-32C holding, records decoding); after a damaged batch it goes on at
the next intact one, since the damaged byte may be a length. A zero tail is no damage.

Transactions (spec/behaviour/transactions.md): control batches are not records a client
produces, so they are not written; they decide the transactional batches before them. A
transactional batch whose producer's next marker in the salvaged bytes is ABORT is left out
(a consumer with ``read_committed`` never saw it); one with no marker after it is written with
``"transaction": "open"``, for the operator to decide.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import classify, parse_partition_dir_name
from reference_impl.records import ControlRecordType, RecordBatch, parse_end_txn_marker
from reference_impl.records.control import parse_control_key

from .intact import mapped, walk_intact, zero_tail
from .loss import loses_records
from .naming import MANIFEST, QUARANTINE_DIR, stored_piece
from .record_json import record_line


class SalvageError(Exception):
    """The source is not a quarantine salvage can read."""


@dataclass
class Piece:
    """A stored ``.log`` piece: the bytes from ``start`` of the partition's file ``original``."""

    path: Path
    original: str
    start: int
    first_offset: int


@dataclass
class SalvageResult:
    pieces: list[str] = field(default_factory=list)
    batches: int = 0
    records: int = 0
    control_batches: int = 0
    aborted_records: int = 0
    open_records: int = 0
    skipped: list[dict] = field(default_factory=list)  # damaged ranges: file, from, to

    def to_dict(self) -> dict:
        return {
            "type": "summary", "pieces": self.pieces, "batches": self.batches,
            "records": self.records, "controlBatches": self.control_batches,
            "abortedRecords": self.aborted_records, "openRecords": self.open_records,
            "skipped": self.skipped,
        }  # fmt: skip


def quarantine_pieces(folder: Path) -> tuple[str, int, list[Piece]]:
    """The topic, partition and ``.log`` pieces, in offset order, that the manifest of the
    quarantine ``folder`` names."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        name = parse_partition_dir_name(manifest["partition"])
        entries = manifest["entries"]
    except (OSError, ValueError, KeyError, TypeError, KafkaLogError) as exc:
        raise SalvageError(f"{folder}: no readable {MANIFEST} of klogspec recover ({exc})")
    pieces = []
    for entry in entries:
        stored = entry.get("stored") if isinstance(entry, dict) else None
        if not stored or not _lost(entry):
            continue
        kept = stored_piece(stored) or stored_piece(entry["file"])
        start = kept.start if kept is not None else 0
        offsets = entry.get("offsets") or [classify(entry["file"]).base_offset or 0]
        pieces.append(Piece(folder / stored, entry["file"], start, offsets[0]))
    pieces.sort(key=lambda p: (p.first_offset, p.original, p.start))
    return name.topic, name.partition, pieces


def _lost(entry: dict) -> bool:
    """The pieces of records a reader could see (loss.py's rule): not a ``.deleted`` or
    ``.cleaned`` file, nor segments below the log start offset."""
    parts = (entry.get("action"), entry.get("file"), entry.get("reason"))
    return all(isinstance(part, str) for part in parts) and loses_records(*parts)


def find_quarantines(path: Path) -> list[Path]:
    """``path`` itself when it is a quarantine folder, else the folders of the partition
    directory ``path``, oldest first."""
    if (path / MANIFEST).is_file():
        return [path]
    root = path / QUARANTINE_DIR
    folders = sorted(p for p in root.iterdir() if (p / MANIFEST).is_file()) if root.is_dir() else []
    if not folders:
        raise SalvageError(f"{path}: neither a quarantine folder nor a partition with one")
    return folders


def intact_batches(piece: Piece, result: SalvageResult) -> Iterator[RecordBatch]:
    """RECOV-27: the batches of ``piece`` that frame, pass their CRC and decode, at the
    positions of the file they came from; each damaged range goes to ``result.skipped``."""
    with mapped(piece.path) as data:
        for batch, damaged in walk_intact(data, 0, len(data), piece.original):
            if batch is None and zero_tail(data, *damaged, len(data)):
                continue  # a preallocated tail: no batch was there
            if batch is None:
                start, end = (piece.start + at for at in damaged)
                result.skipped.append({"file": piece.original, "from": start, "to": end})
                continue
            batch.position += piece.start
            yield batch


def decided_transactions(batches: list[RecordBatch]) -> dict[int, str]:
    """For each transactional data batch (by base offset), ``committed``, ``aborted`` or
    ``open``: the type of its producer's next marker among ``batches``."""
    verdicts, waiting = {}, {}  # producer id -> base offsets without a marker yet
    for batch in batches:
        if not batch.is_transactional:
            continue
        if not batch.is_control:
            waiting.setdefault(batch.producer_id, []).append(batch.base_offset)
            continue
        marker = _marker(batch)
        for offset in waiting.pop(batch.producer_id, []) if marker else []:
            verdicts[offset] = marker
    for offsets in waiting.values():
        verdicts.update(dict.fromkeys(offsets, "open"))
    return verdicts


def _marker(batch: RecordBatch) -> str | None:
    for record in batch.records():
        try:
            kind = parse_control_key(record.key)
            if kind in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
                parse_end_txn_marker(record.key, record.value)
                return "committed" if kind is ControlRecordType.COMMIT else "aborted"
        except KafkaLogError:
            return None
    return None


def salvage(folders: list[Path], out) -> SalvageResult:
    """Write the intact records of the quarantine ``folders`` to ``out`` (text, one JSON
    object per record, record_json.py) and return what was written and skipped."""
    result = SalvageResult()
    for folder in folders:
        topic, partition, pieces = quarantine_pieces(folder)
        batches = []
        for piece in pieces:
            result.pieces.append(str(piece.path))
            batches += intact_batches(piece, result)
        verdicts = decided_transactions(batches)
        for batch in batches:
            _write_batch(batch, verdicts.get(batch.base_offset), topic, partition, out, result)
    return result


def _write_batch(batch, verdict, topic, partition, out, result: SalvageResult) -> None:
    if batch.is_control:
        result.control_batches += 1
        return
    records = batch.records()
    if verdict == "aborted":
        result.aborted_records += len(records)
        return
    result.batches += 1
    result.records += len(records)
    result.open_records += len(records) if verdict == "open" else 0
    for record in records:
        out.write(record_line(topic, partition, batch, record, verdict) + "\n")
