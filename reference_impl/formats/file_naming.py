"""File and directory naming (spec/formats/file-naming.md, NAME-1 to NAME-9, DIR-1 to DIR-6).

Segment files share one prefix, the segment's base offset as a decimal number
zero-padded to at least 20 digits [LogFileUtils.java]::

    00000000000000000000.log          segment data
    00000000000000000000.index        offset index
    00000000000000000000.timeindex    time index
    00000000000000000000.txnindex     aborted-transaction index
    00000000000000000042.snapshot     producer state up to offset 42 (exclusive)
    00000000000000000000.log.deleted  scheduled for deletion (likewise .cleaned, .swap)

KRaft metadata snapshots are ``<20-digit end offset>-<10-digit epoch>.checkpoint``
[Snapshots.java], and ``bootstrap.checkpoint`` is the KRaft bootstrap snapshot;
both are record-batch files like a ``.log``. Partition directories are
``<topic>-<partition>``, with ``.<uuid>-delete`` / ``-future`` / ``-stray`` forms
[LocalLog.scala]. Everything else a log directory holds has a fixed name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from ..constants import LONG_MAX
from ..errors import InvalidFileNameError

LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = ".index"
TIME_INDEX_FILE_SUFFIX = ".timeindex"
TXN_INDEX_FILE_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_FILE_SUFFIX = ".snapshot"
DELETED_FILE_SUFFIX = ".deleted"
CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"
KRAFT_SNAPSHOT_SUFFIX = ".checkpoint"
KRAFT_PARTIAL_SUFFIX = ".checkpoint.part"

DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"
MAX_DIR_NAME_LENGTH = 255  # delete and stray names are capped so a rename cannot fail

OFFSET_WIDTH = 20
EPOCH_WIDTH = 10

# Java's Integer/Long.parseLong grammar: an optional sign, then ASCII digits.
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")
_DIGITS = re.compile(r"[0-9]+")
# Java's \S is "not one of [ \t\n\x0B\f\r]"; Python's is Unicode-aware, so spell it out.
_NS = r"[^ \t\n\x0b\f\r]"
_DIR_PATTERNS = {
    suffix: re.compile(rf"^({_NS}+)-({_NS}+)\.({_NS}+){suffix}$")
    for suffix in (DELETE_DIR_SUFFIX, FUTURE_DIR_SUFFIX, STRAY_DIR_SUFFIX)
}


def parse_java_long(text: str, *, bits: int = 64) -> int:
    """Parse like Java's ``Long.parseLong`` / ``Integer.parseInt`` (ASCII digits only).

    Python's ``int()`` also takes spaces, underscores and non-ASCII digits, which
    Kafka rejects; a ValueError here is the NumberFormatException there.
    """
    if not _JAVA_INTEGER.fullmatch(text):
        raise ValueError(f"not a Java integer: {text!r}")
    value = int(text)
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise ValueError(f"{text} does not fit in {bits} bits")
    return value


# --- segment files ---------------------------------------------------------------------


def filename_prefix_from_offset(offset: int) -> str:
    """NAME-1: the base offset, zero-padded to at least 20 digits, no grouping."""
    if offset < 0:
        raise ValueError(f"a file name offset cannot be negative: {offset}")
    return f"{offset:0{OFFSET_WIDTH}d}"


def log_file_name(base_offset: int, suffix: str = "") -> str:
    return filename_prefix_from_offset(base_offset) + LOG_FILE_SUFFIX + suffix


def offset_index_file_name(base_offset: int, suffix: str = "") -> str:
    return filename_prefix_from_offset(base_offset) + INDEX_FILE_SUFFIX + suffix


def time_index_file_name(base_offset: int, suffix: str = "") -> str:
    return filename_prefix_from_offset(base_offset) + TIME_INDEX_FILE_SUFFIX + suffix


def txn_index_file_name(base_offset: int, suffix: str = "") -> str:
    return filename_prefix_from_offset(base_offset) + TXN_INDEX_FILE_SUFFIX + suffix


def producer_snapshot_file_name(end_offset: int, suffix: str = "") -> str:
    """NAME-5: the snapshot is named after the offset it covers up to, exclusive."""
    return filename_prefix_from_offset(end_offset) + PRODUCER_SNAPSHOT_FILE_SUFFIX + suffix


def kraft_snapshot_file_name(end_offset: int, epoch: int) -> str:
    """NAME-7: ``<20-digit end offset>-<10-digit epoch>.checkpoint`` [Snapshots.java]."""
    if end_offset < 0 or epoch < 0:
        raise ValueError(f"snapshot id ({end_offset}, {epoch}) cannot be negative")
    return f"{end_offset:0{OFFSET_WIDTH}d}-{epoch:0{EPOCH_WIDTH}d}{KRAFT_SNAPSHOT_SUFFIX}"


def offset_from_file_name(name: str) -> int:
    """NAME-2, NAME-3: the text before the first ``.``, decimal digits of any count
    that fit in [0, 2^63-1]; anything else is ``invalid_file_name``.

    Kafka's Long.parseLong would also take a sign (NAME-3 deviation: ``-5.log`` would be a
    segment with a negative base offset).

    >>> offset_from_file_name("00000000002147483650.timeindex.deleted")
    2147483650
    """
    prefix = name.split(".", 1)[0]
    if not _DIGITS.fullmatch(prefix) or int(prefix) > LONG_MAX:
        raise InvalidFileNameError(f"{name!r} does not start with a base offset", file=name)
    return int(prefix)


def kraft_snapshot_id(name: str) -> tuple[int, int]:
    """NAME-8: (end offset, epoch) read by position, characters 0-19 and 21-30, as
    Snapshots.parse does; digits that do not parse are ``invalid_file_name``."""
    offset_text, epoch_text = name[:OFFSET_WIDTH], name[OFFSET_WIDTH + 1 : OFFSET_WIDTH + 11]
    if not (_DIGITS.fullmatch(offset_text) and _DIGITS.fullmatch(epoch_text)):
        raise InvalidFileNameError(f"{name!r} is not <end offset>-<epoch>.checkpoint", file=name)
    return int(offset_text), int(epoch_text)


# --- what a file is --------------------------------------------------------------------


class FileKind(StrEnum):
    """Every kind of file a Kafka log directory holds; the values are stable report names."""

    LOG = "log"
    OFFSET_INDEX = "offset_index"
    TIME_INDEX = "time_index"
    TXN_INDEX = "txn_index"
    PRODUCER_SNAPSHOT = "producer_snapshot"
    KRAFT_SNAPSHOT = "kraft_snapshot"
    BOOTSTRAP_SNAPSHOT = "bootstrap_snapshot"
    RECOVERY_POINT_CHECKPOINT = "recovery_point_checkpoint"
    LOG_START_OFFSET_CHECKPOINT = "log_start_offset_checkpoint"
    REPLICATION_OFFSET_CHECKPOINT = "replication_offset_checkpoint"
    CLEANER_OFFSET_CHECKPOINT = "cleaner_offset_checkpoint"
    LEADER_EPOCH_CHECKPOINT = "leader_epoch_checkpoint"
    PARTITION_METADATA = "partition_metadata"
    META_PROPERTIES = "meta_properties"
    CLEAN_SHUTDOWN = "clean_shutdown"
    LOCK = "lock"
    QUORUM_STATE = "quorum_state"
    UNKNOWN = "unknown"

    @property
    def holds_batches(self) -> bool:
        """Files read as a sequence of record batches (DumpLogSegments: .log and .checkpoint)."""
        return self in (FileKind.LOG, FileKind.KRAFT_SNAPSHOT, FileKind.BOOTSTRAP_SNAPSHOT)

    @property
    def is_offset_checkpoint(self) -> bool:
        return self in _OFFSET_CHECKPOINTS


_OFFSET_CHECKPOINTS = frozenset(
    {
        FileKind.RECOVERY_POINT_CHECKPOINT,
        FileKind.LOG_START_OFFSET_CHECKPOINT,
        FileKind.REPLICATION_OFFSET_CHECKPOINT,
        FileKind.CLEANER_OFFSET_CHECKPOINT,
    }
)

_SEGMENT_SUFFIXES = {
    "log": FileKind.LOG,
    "index": FileKind.OFFSET_INDEX,
    "timeindex": FileKind.TIME_INDEX,
    "txnindex": FileKind.TXN_INDEX,
    "snapshot": FileKind.PRODUCER_SNAPSHOT,
}
_MARKERS = {"deleted", "cleaned", "swap"}
_KRAFT_SUFFIXES = {
    ".checkpoint": None,
    ".checkpoint.deleted": "deleted",
    ".checkpoint.part": "part",
}
_FIXED_NAMES = {
    "recovery-point-offset-checkpoint": FileKind.RECOVERY_POINT_CHECKPOINT,
    "log-start-offset-checkpoint": FileKind.LOG_START_OFFSET_CHECKPOINT,
    "replication-offset-checkpoint": FileKind.REPLICATION_OFFSET_CHECKPOINT,
    "cleaner-offset-checkpoint": FileKind.CLEANER_OFFSET_CHECKPOINT,
    "leader-epoch-checkpoint": FileKind.LEADER_EPOCH_CHECKPOINT,
    "partition.metadata": FileKind.PARTITION_METADATA,
    "meta.properties": FileKind.META_PROPERTIES,
    ".kafka_cleanshutdown": FileKind.CLEAN_SHUTDOWN,
    ".lock": FileKind.LOCK,
    "quorum-state": FileKind.QUORUM_STATE,
    "bootstrap.checkpoint": FileKind.BOOTSTRAP_SNAPSHOT,
}


@dataclass(frozen=True, slots=True)
class FileInfo:
    """What ``classify`` learned from a file name alone.

    ``base_offset`` is the segment base offset (or a snapshot's end offset); it is
    None when the name's number does not parse (NAME-2, NAME-3, NAME-8). ``marker`` is
    ``deleted``/``cleaned``/``swap`` (or ``part`` for a partial KRaft snapshot).
    """

    kind: FileKind
    name: str
    base_offset: int | None = None
    marker: str | None = None
    epoch: int | None = None


def classify(path: str | Path) -> FileInfo:
    """Say which kind of file ``path`` names (NAME-4, NAME-6, NAME-9); unknown names give
    ``FileKind.UNKNOWN``."""
    name = Path(path).name
    fixed = _FIXED_NAMES.get(name)
    if fixed is not None:
        return FileInfo(fixed, name)
    for suffix, marker in _KRAFT_SUFFIXES.items():
        if name.endswith(suffix):  # NAME-9: not a segment file in a deleted/temporary state
            try:
                end_offset, epoch = kraft_snapshot_id(name)
            except InvalidFileNameError:
                end_offset = epoch = None
            return FileInfo(FileKind.KRAFT_SNAPSHOT, name, end_offset, marker, epoch)
    parts = name.split(".")
    marker = None
    if len(parts) >= 3 and parts[-1] in _MARKERS:  # NAME-4
        marker = parts.pop()
    if len(parts) == 2 and parts[1] in _SEGMENT_SUFFIXES:
        try:
            base_offset = offset_from_file_name(name)
        except InvalidFileNameError:
            base_offset = None
        return FileInfo(_SEGMENT_SUFFIXES[parts[1]], name, base_offset, marker)
    return FileInfo(FileKind.UNKNOWN, name)


# --- partition directories -------------------------------------------------------------


class DirKind(StrEnum):
    NORMAL = "normal"
    DELETE = "delete"
    FUTURE = "future"
    STRAY = "stray"


_DIR_KIND_BY_SUFFIX = {
    DELETE_DIR_SUFFIX: DirKind.DELETE,
    FUTURE_DIR_SUFFIX: DirKind.FUTURE,
    STRAY_DIR_SUFFIX: DirKind.STRAY,
}


@dataclass(frozen=True, slots=True)
class PartitionDirName:
    topic: str
    partition: int
    kind: DirKind = DirKind.NORMAL
    unique_id: str | None = None


def parse_partition_dir_name(name: str) -> PartitionDirName:
    """LocalLog.parseTopicPartitionName (DIR-3, DIR-4, DIR-5), raising ``InvalidFileNameError``.

    The name must contain ``-``; a ``-delete``/``-future``/``-stray`` name must match
    ``^(\\S+)-(\\S+)\\.(\\S+)<suffix>$`` and loses everything from its last ``.``;
    then the last ``-`` splits a non-empty topic from an int32 partition.

    >>> name = parse_partition_dir_name("foo.bar-testtopic-42.0123456789abcdef-delete")
    >>> name.topic, name.partition, name.kind.value, name.unique_id
    ('foo.bar-testtopic', 42, 'delete', '0123456789abcdef')
    """

    def invalid(why: str) -> InvalidFileNameError:
        return InvalidFileNameError(
            f"{name!r} is not topic-partition[.uniqueId-delete|-future|-stray]: {why}",
            file=name,
        )

    if not name or "-" not in name:
        raise invalid("no '-'")
    kind, unique_id, stem = DirKind.NORMAL, None, name
    for suffix, pattern in _DIR_PATTERNS.items():
        if name.endswith(suffix):
            if not pattern.match(name):
                raise invalid(f"a {suffix} name needs '.<id>' before the suffix")
            kind = _DIR_KIND_BY_SUFFIX[suffix]
            stem, _, tail = name.rpartition(".")
            unique_id = tail[: -len(suffix)]
            break
    topic, _, partition_text = stem.rpartition("-")
    if not topic or not partition_text:
        raise invalid("empty topic or partition")
    try:
        partition = parse_java_long(partition_text, bits=32)
    except ValueError:
        raise invalid(f"partition {partition_text!r} is not an int32")
    return PartitionDirName(topic, partition, kind, unique_id)


def log_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def log_dir_name_with_suffix(topic: str, partition: int, kind: DirKind, unique_id: str) -> str:
    """DIR-1, DIR-2: ``<topic>-<partition>.<uniqueId><suffix>``; delete and stray names cut
    the topic so the whole name stays within 255 characters, future names are not capped
    [LocalLog.scala]."""
    if kind is DirKind.NORMAL:
        return log_dir_name(topic, partition)
    suffix = {v: k for k, v in _DIR_KIND_BY_SUFFIX.items()}[kind]
    full_suffix = f"-{partition}.{unique_id}{suffix}"
    if kind is DirKind.FUTURE:
        return topic + full_suffix
    return topic[: min(len(topic), MAX_DIR_NAME_LENGTH - len(full_suffix))] + full_suffix
