"""KRaft snapshots of the ``__cluster_metadata`` partition: how a snapshot file is framed and
which snapshots a restart keeps, deletes and loads
(spec/formats/internal-topics/cluster-metadata.md §5, KRAFT-1 to KRAFT-4;
KafkaMetadataLog.scala, Snapshots.java, RecordsSnapshotWriter.java).

A snapshot is ``<end offset>-<epoch>.checkpoint`` (NAME-7): record batches like a ``.log``,
written as ``<end offset>-<epoch>-<random>.checkpoint.part`` and renamed when frozen;
``.checkpoint.deleted`` is one whose deletion was scheduled.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import KafkaLogError
from ..records import ControlRecordType, iter_file_batches
from ..records.control import parse_control_key

METADATA_TOPIC = "__cluster_metadata"  # the KRaft metadata partition's topic (partition 0)


@dataclass(frozen=True, order=True)
class SnapshotId:
    """OffsetAndEpoch: a snapshot's end offset (exclusive) and epoch, ordered as Kafka orders
    them (offset, then epoch)."""

    end_offset: int
    epoch: int


def snapshot_frame_problem(path) -> str | None:
    """KRAFT-1: None when the file's first batch is a control batch whose first record is
    SNAPSHOT_HEADER and its last batch a control batch whose first record is SNAPSHOT_FOOTER;
    otherwise what is wrong (the batches' own problems are the log-file rules')."""
    kinds = []  # the control type of the first batch, and of the last one
    try:
        with open(path, "rb") as handle:
            for batch in iter_file_batches(handle):
                kinds[1:] = [_control_type(batch)]
    except (KafkaLogError, OSError) as exc:
        return f"cannot be read to its end: {exc}"
    first, last = (kinds[0], kinds[-1]) if kinds else (None, None)
    if first is not ControlRecordType.SNAPSHOT_HEADER:
        return f"starts with {_words(first)}, not a SNAPSHOT_HEADER control batch"
    if last is not ControlRecordType.SNAPSHOT_FOOTER:
        return f"ends with {_words(last)}, not a SNAPSHOT_FOOTER control batch"
    return None


def _control_type(batch) -> ControlRecordType | None:
    if not batch.is_control:
        return None
    for record in batch.records():
        return parse_control_key(record.key)
    return None


def _words(kind: ControlRecordType | None) -> str:
    return "no batch or a data batch" if kind is None else f"a {kind.name} control batch"


@dataclass(frozen=True)
class SnapshotPlan:
    """What KafkaMetadataLog's start does with a partition's snapshot files."""

    delete: tuple[str, ...]  # KRAFT-2: partial, deleted, and below the log start offset
    retained: tuple[SnapshotId, ...]
    latest: SnapshotId | None  # KRAFT-4: the snapshot a restart loads
    inconsistent: str | None  # KRAFT-3: why the start would fail, if it would


def plan_snapshots(files: dict[str, tuple[SnapshotId, str | None]], log_start_offset: int):
    """``files``: name -> (id, marker: None, ``part`` or ``deleted``). KRAFT-2: partial and
    deleted snapshots and those ending below the log start offset are deleted; KRAFT-3: with
    a log start offset above 0, some retained snapshot must end at or above it; KRAFT-4: the
    latest retained snapshot is the one loaded."""
    delete, retained = [], []
    for name, (snapshot_id, marker) in sorted(files.items()):
        if marker is not None or snapshot_id.end_offset < log_start_offset:
            delete.append(name)
        else:
            retained.append(snapshot_id)
    retained.sort()
    latest = retained[-1] if retained else None
    inconsistent = None
    if log_start_offset > 0 and (latest is None or latest.end_offset < log_start_offset):
        inconsistent = (
            f"the log starts at {log_start_offset} but the latest snapshot is "
            f"{'none' if latest is None else latest.end_offset}: the state before the log "
            "start is nowhere"
        )
    return SnapshotPlan(tuple(delete), tuple(retained), latest, inconsistent)
