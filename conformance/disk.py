"""What the harness reads on disk, with the reference decoders (never the testee's).

* ``snapshot``: every file under a log directory, as bytes.
* ``decode``: the decoded JSON view of one file (the goldens' manifest stores it).

What is checked on these views: the segment invariants (index_invariants.py) and a
scenario's ``files`` expectations (file_checks.py).

Some files belong to an optional feature (``FEATURE_FILES``, ``FEATURE_NAMES``): a testee
that does not claim it may write them or not, so ``visible`` hides them from every comparison
and the ``files`` checks from every check that names them.
"""

from __future__ import annotations

from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats.checkpoints import read_leader_epoch_checkpoint
from reference_impl.formats.index_entries import (
    read_offset_index,
    read_time_index,
    read_txn_index,
    until_stop,
)
from reference_impl.formats.producer_snapshot import read_snapshot
from reference_impl.records import iter_batches

from . import scratch
from .file_names import segment_file

FEATURE_FILES = {"snapshot": "producer_snapshots"}  # file kind -> the feature it belongs to
FEATURE_NAMES = {"leader-epoch-checkpoint": "leader_epoch_checkpoint"}  # file name -> feature
SNAPSHOT_FIELDS = (
    "producer_id",
    "producer_epoch",
    "last_sequence",
    "last_offset",
    "offset_delta",
    "timestamp",
    "coordinator_epoch",
    "current_txn_first_offset",
)
TEXT_FILES = {
    ".kafka_cleanshutdown",
    "leader-epoch-checkpoint",
    "recovery-point-offset-checkpoint",
    "log-start-offset-checkpoint",
    "partition.metadata",
    "replication-offset-checkpoint",
    "cleaner-offset-checkpoint",
}


def snapshot(root: Path, anchor: Path | None = None) -> dict[str, bytes]:
    """Every file under ``root``: relative POSIX path -> bytes. Only regular files inside
    ``anchor`` (the scenario's directory, by default ``root``'s parent) are read, never
    through a link (scratch.py); anything else raises scratch.UnsafeFile."""
    return scratch.snapshot(root, root.parent if anchor is None else anchor)


def feature_of(name: str) -> str | None:
    """The optional feature a file belongs to (``.snapshot`` and ``.snapshot.deleted``:
    producer_snapshots; ``leader-epoch-checkpoint``: leader_epoch_checkpoint), or None for
    files every implementation is judged on."""
    feature = FEATURE_NAMES.get(name.rpartition("/")[2])
    return feature if feature is not None else FEATURE_FILES.get(segment_file(name)[1])


def is_visible(name: str, features: set[str] | frozenset[str] | None) -> bool:
    """Whether a file counts for a testee claiming ``features`` (None: every file counts)."""
    feature = feature_of(name)
    return features is None or feature is None or feature in features


def visible(files: dict[str, bytes], features: set[str] | frozenset[str] | None) -> dict:
    return {name: data for name, data in files.items() if is_visible(name, features)}


def snapshot_entries(data: bytes) -> list[dict]:
    """The entries of a producer snapshot as dicts (SNAPSHOT_FIELDS); raises
    KafkaLogError (corrupt_snapshot) for one that does not read."""
    return [
        {field: getattr(entry, field) for field in SNAPSHOT_FIELDS} for entry in read_snapshot(data)
    ]


def decode_log(data: bytes) -> dict:
    batches, error = [], None
    scanner = iter_batches(data)
    try:
        for b in scanner:
            entry = {
                "position": b.position,
                "base_offset": b.base_offset,
                "last_offset": b.last_offset,
                "magic": b.magic,
                "size": b.size_in_bytes,
                "crc": b.crc,
                "crc_valid": b.is_valid,
            }
            if b.magic == 2:
                entry.update(
                    partition_leader_epoch=b.partition_leader_epoch,
                    attributes=b.attributes,
                    max_timestamp=b.max_timestamp,
                    records=b.records_count,
                )
            else:
                entry.update(attributes=b.attributes, max_timestamp=b.max_timestamp)
            batches.append(entry)
    except KafkaLogError as exc:
        error = {"category": exc.category.value, "position": exc.position}
    valid = scanner.valid_bytes
    view = {
        "kind": "log",
        "batches": batches,
        "valid_bytes": valid,
        "tail_bytes": len(data) - valid,
        "tail_zero": not any(data[valid:]),
    }
    if error:
        view["error"] = error
    return view


def real_offset_entries(data: bytes, base: int) -> list[list[int]]:
    """The real entries of an index image: up to the first zero-filled slot (OIDX-10: a
    later slot whose relative offset is 0; slot 0 when it is all zero, which no real
    entry is, since the first append of a segment is never indexed, INDEX-7)."""
    if data[:8] == bytes(8):
        return []
    return [[e.offset, e.position] for e in until_stop(read_offset_index(data, base), base)]


def real_time_entries(data: bytes, base: int) -> list[list[int]]:
    """As real_offset_entries (TIDX-12); scenarios never use timestamp 0."""
    if data[:12] == bytes(12):
        return []
    return [[e.timestamp, e.offset] for e in until_stop(read_time_index(data, base), base)]


def decode(name: str, data: bytes) -> dict:
    """The decoded JSON view of one file of a log directory."""
    base, kind, marker = segment_file(name)
    view: dict
    if kind == "log":
        view = decode_log(data)
    elif kind in ("index", "timeindex"):
        size = 8 if kind == "index" else 12
        entries = (real_offset_entries if kind == "index" else real_time_entries)(data, base)
        used = len(entries) * size
        view = {
            "kind": "offset_index" if kind == "index" else "time_index",
            "entries": entries,
            "slots": len(data) // size,
            "remainder": len(data) % size,
            "tail_zero": not any(data[used:]),
        }
    elif kind == "txnindex":
        try:
            txns = read_txn_index(data)
            view = {
                "kind": "txn_index",
                "entries": [
                    [t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset]
                    for t in txns
                ],
            }
        except KafkaLogError as exc:
            view = {"kind": "txn_index", "error": exc.category.value}
    elif kind == "snapshot":
        try:
            view = {
                "kind": "producer_snapshot",
                "entries": [
                    [e[field] for field in SNAPSHOT_FIELDS] for e in snapshot_entries(data)
                ],
            }
        except KafkaLogError as exc:
            view = {"kind": "producer_snapshot", "error": exc.category.value}
    elif name.rpartition("/")[2] in TEXT_FILES:
        view = {"kind": "text", "lines": data.decode("utf-8", "replace").splitlines()}
    else:
        view = {"kind": "bytes"}
    view["size"] = len(data)
    if marker:
        view["marker"] = marker.lstrip(".")
    return view


def epoch_entries(data: bytes) -> list[list[int]] | None:
    """The entries of a leader-epoch-checkpoint as [epoch, start offset] pairs, or None
    when it does not read."""
    try:
        return [[e.epoch, e.start_offset] for e in read_leader_epoch_checkpoint(data)]
    except (KafkaLogError, ValueError):
        return None
