"""Checkpoint files on disk: the thin filesystem layer over formats/checkpoints.py (spec/behaviour/flush.md §3).

Kafka writes every checkpoint the same way [server-common/.../CheckpointFile.java,
PartitionMetadataFile.java]: the bytes go to ``<file>.tmp``, which is fsynced and
then atomically renamed over the file, and the directory is fsynced so the rename
survives a crash. The offset checkpoints at a log directory's root hold one line
per partition of that directory; a partition's log replaces its own line and
keeps the others.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import Category, CorruptCheckpointError, LogOperationError
from ..formats.checkpoints import (
    PartitionMetadata,
    TopicPartitionOffset,
    read_offset_checkpoint,
    read_partition_metadata,
    write_offset_checkpoint,
    write_partition_metadata,
)
from .storage import storage

RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"


def write_atomically(path: Path, data: bytes) -> None:
    """CheckpointFile.write: temp file, fsync, atomic rename, fsync of the directory."""
    tmp = path.with_name(path.name + ".tmp")
    storage().write_file(tmp, data, sync=True)
    storage().replace(tmp, path)
    fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    storage().sync_dir(path)


def read_offsets(path: Path) -> dict[tuple[str, int], int]:
    """An offset checkpoint as {(topic, partition): offset}; a missing file has none."""
    if not storage().exists(path):
        return {}
    entries = read_offset_checkpoint(storage().read_file(path), file=str(path))
    return {(e.topic, e.partition): e.offset for e in entries}


def update_offset(path: Path, topic: str, partition: int, offset: int | None) -> None:
    """Set (or with None remove) one partition's line, keeping the other partitions'.

    Kafka writes the entries of a Java HashMap, in no fixed order; the reference
    sorts them by topic and partition so the file is deterministic.
    """
    offsets = read_offsets_or_empty(path)
    if offset is None:
        offsets.pop((topic, partition), None)
    else:
        offsets[(topic, partition)] = offset
    entries = [TopicPartitionOffset(t, p, o) for (t, p), o in sorted(offsets.items())]
    write_atomically(path, write_offset_checkpoint(entries))


def initialize_topic_id(metadata_file: Path, topic_id: str | None) -> str | None:
    """partition.metadata: read it if present (a different ``topic_id`` is
    ``inconsistent_topic_id``), else write ``topic_id`` there if one is given."""
    if storage().exists(metadata_file):
        data = storage().read_file(metadata_file)
        recorded = read_partition_metadata(data, file=str(metadata_file))
        if topic_id is not None and topic_id != recorded.topic_id:
            raise LogOperationError(
                Category.INCONSISTENT_TOPIC_ID,
                f"tried to assign topic id {topic_id} to a log holding {recorded.topic_id}",
                file=str(metadata_file),
            )
        return recorded.topic_id
    if topic_id is not None:
        data = write_partition_metadata(PartitionMetadata(0, topic_id))
        write_atomically(metadata_file, data)
    return topic_id


def read_offsets_or_empty(path: Path) -> dict[tuple[str, int], int]:
    """A root checkpoint that does not parse reads as empty (LogManager logs the error)."""
    try:
        return read_offsets(path)
    except CorruptCheckpointError:
        return {}
