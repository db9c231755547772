"""What ``klogspec verify`` reads of a partition directory and its log directory
(spec/formats/partition-directory.md, file-naming.md, checkpoint-files.md).

``partition_files`` sorts a partition directory's files into segments and the rest
(plain paths, picklable: a Spark task's input); ``read_log_dir`` reads a log directory's
checkpoints into a ``LogDirState``. partition.py checks both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats import checkpoints
from reference_impl.formats.file_naming import FileKind, classify, parse_partition_dir_name

from ..safe_files import FileTooLargeError, NotRegularFileError, read_regular, resolve
from .findings import Findings, Severity
from .segment import SegmentFiles

_INDEX_KINDS = {
    FileKind.OFFSET_INDEX: "offset_index", FileKind.TIME_INDEX: "time_index",
    FileKind.TXN_INDEX: "txn_index",
}  # fmt: skip
OFFSET_CHECKPOINT_FILES = {
    "recovery_points": "recovery-point-offset-checkpoint",
    "log_start_offsets": "log-start-offset-checkpoint",
    "high_watermarks": "replication-offset-checkpoint",
    "cleaner_offsets": "cleaner-offset-checkpoint",
}
REMOTE_INDEX_CACHE = "remote-log-index-cache"
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class PartitionFiles:
    """A partition directory's files, sorted by role (found on the driver)."""

    path: str
    topic: str | None = None
    partition: int | None = None
    dir_kind: str | None = None
    name_error: str | None = None  # why the directory name does not parse
    segments: tuple[SegmentFiles, ...] = ()  # each with its .log, by base offset
    kraft_snapshots: tuple[SegmentFiles, ...] = ()  # batch files outside the segment chain
    orphan_indexes: tuple[str, ...] = ()
    temp_files: tuple[str, ...] = ()  # .deleted, .cleaned, .swap
    bad_names: tuple[str, ...] = ()  # segment-like names whose number does not parse
    unpadded_names: tuple[str, ...] = ()
    producer_snapshots: tuple[str, ...] = ()
    leader_epoch_checkpoint: str | None = None
    partition_metadata: str | None = None
    not_regular: tuple[tuple[str, str, str], ...] = ()  # (file, what it is, PART-8 or PART-9)

    def units(self) -> tuple[SegmentFiles, ...]:
        """Every batch file to pass to verify_segment."""
        return self.segments + self.kraft_snapshots


@dataclass(frozen=True)
class LogDirState:
    """What a log directory's root says about its partitions: checkpoint entries, (offset,
    byte position of the entry's line) by (topic, partition), and whether the clean-shutdown
    marker is present."""

    path: str
    recovery_points: dict = field(default_factory=dict)
    log_start_offsets: dict = field(default_factory=dict)
    high_watermarks: dict = field(default_factory=dict)
    cleaner_offsets: dict = field(default_factory=dict)
    clean_shutdown: bool = False


def looks_like_partition_file(name: str) -> bool:
    kind = classify(name).kind
    return kind not in (FileKind.UNKNOWN, FileKind.LOCK, FileKind.META_PROPERTIES) and not (
        kind.is_offset_checkpoint or kind in (FileKind.CLEAN_SHUTDOWN, FileKind.BOOTSTRAP_SNAPSHOT)
    )


def partition_files(path: str | Path) -> PartitionFiles:
    """Sort the regular files of a partition directory (NAME-4, NAME-6, NAME-9)."""
    path = Path(path)
    named = {}
    try:
        name = parse_partition_dir_name(path.name)
        named = {"topic": name.topic, "partition": name.partition, "dir_kind": name.kind.value}
    except KafkaLogError as exc:
        named = {"name_error": exc.message}
    logs, indexes, other = {}, {}, {}
    lists = {k: [] for k in ("kraft", "temp", "bad", "unpadded", "snapshots")}
    regular, not_regular = _regular_children(path)
    for child in regular:
        info, file = classify(child), str(child)
        if info.kind is FileKind.KRAFT_SNAPSHOT:
            if info.marker is None:  # NAME-9: .checkpoint.deleted and .part are no segments
                lists["kraft"].append(SegmentFiles(file, None))
            continue
        if info.kind in (FileKind.LEADER_EPOCH_CHECKPOINT, FileKind.PARTITION_METADATA):
            other[info.kind] = file
        if info.kind not in (FileKind.LOG, FileKind.PRODUCER_SNAPSHOT, *_INDEX_KINDS):
            continue  # NAME-6
        if info.marker is not None:
            lists["temp"].append(file)
        elif info.base_offset is None:
            lists["bad"].append(file)
        else:
            if len(child.name.split(".")[0]) != 20:
                lists["unpadded"].append(file)
            if info.kind is FileKind.LOG:
                logs[info.base_offset] = file
            elif info.kind is FileKind.PRODUCER_SNAPSHOT:
                lists["snapshots"].append(file)
            else:
                indexes.setdefault(info.base_offset, {})[_INDEX_KINDS[info.kind]] = file
    last = max(logs, default=None)
    segments = tuple(
        SegmentFiles(logs[base], base, active=base == last, **indexes.pop(base, {}))
        for base in sorted(logs)
    )
    orphans = tuple(sorted(f for files in indexes.values() for f in files.values()))
    return PartitionFiles(
        str(path), **named, segments=segments, kraft_snapshots=tuple(lists["kraft"]),
        orphan_indexes=orphans, temp_files=tuple(lists["temp"]), bad_names=tuple(lists["bad"]),
        unpadded_names=tuple(lists["unpadded"]), producer_snapshots=tuple(lists["snapshots"]),
        leader_epoch_checkpoint=other.get(FileKind.LEADER_EPOCH_CHECKPOINT),
        partition_metadata=other.get(FileKind.PARTITION_METADATA), not_regular=not_regular,
    )  # fmt: skip


def _regular_children(path: Path) -> tuple[list[Path], tuple]:
    """The entries of a partition directory that are regular files (or links to one in the
    directory), sorted; and those with a Kafka file's name that are not (PART-8, PART-9): a
    FIFO, device, socket, directory, dangling link or link out of the directory, which are
    never opened."""
    regular, refused = [], []
    for child in sorted(path.iterdir()):
        try:
            resolve(child, path)
            regular.append(child)
        except NotRegularFileError as exc:
            if _kafka_named(child):
                refused.append((str(child), exc.what, exc.rule))
        except OSError:
            if _kafka_named(child):
                refused.append((str(child), "a dangling symbolic link", "PART-8"))
    return regular, tuple(refused)


def _kafka_named(path: Path) -> bool:
    return classify(path).kind is not FileKind.UNKNOWN


def read_log_dir(path: str | Path, findings: Findings | None = None) -> LogDirState:
    """Read a log directory's offset checkpoints (CKPT-5 to CKPT-9) and clean-shutdown marker
    (CLEAN-1). Problems go to ``findings`` when given; an unreadable checkpoint reads as no
    entries, as Kafka's log manager reads it."""
    path = Path(path)
    findings = findings if findings is not None else Findings()
    state = {}
    for key, name in OFFSET_CHECKPOINT_FILES.items():
        file = path / name
        entries = read_small_file(
            file, checkpoints.read_offset_checkpoint, "offset_checkpoint", findings
        )
        lines = line_positions(file.read_bytes()) if entries else []
        state[key] = {
            (e.topic, e.partition): (e.offset, lines[i + 2]) for i, e in enumerate(entries or ())
        }
    marker = path / ".kafka_cleanshutdown"
    if marker.is_file():
        findings.add(
            "CLEAN-1", Severity.INFO, str(marker),
            "clean-shutdown marker present: the broker shut these logs down cleanly, and its "
            "next start recovers no segment (except those missing an index)", position=0,
        )  # fmt: skip
    return LogDirState(str(path), **state, clean_shutdown=marker.is_file())


def line_positions(data: bytes) -> list[int]:
    """The byte position of each line, lines ending at ``\n``, ``\r\n`` or ``\r`` (CKPT-3):
    where a finding about an entry points (ERR-3)."""
    starts = [0]
    for match in _LINE_END.finditer(data):
        starts.append(match.end())
    return starts


def read_small_file(file: Path, reader, kind: str, findings: Findings):
    """A small file read with ``reader``, None when absent or unreadable (reported)."""
    data = read_checked(file, findings)
    if data is None:
        return None
    try:
        return reader(data, file=str(file))
    except KafkaLogError as exc:
        findings.error(exc, kind=kind)
    return None


def read_checked(file: str | Path, findings: Findings) -> bytes | None:
    """A small file's bytes, None when absent or unreadable; one that is not a regular file
    (PART-8, PART-9) or is too large to hold (ERR-1, the reporting rule: no format rule is
    broken) is reported and never read."""
    file = Path(file)
    try:
        return read_regular(file, file.parent)
    except NotRegularFileError as exc:
        findings.add(exc.rule, Severity.ERROR, str(file), f"{exc.what}, not a regular file")
    except FileTooLargeError as exc:
        findings.add("ERR-1", Severity.ERROR, str(file), f"{exc.strerror}: not read", position=0)
    except OSError:
        pass
    return None
