"""The partition and log-directory checks of ``klogspec verify`` (spec/formats/
partition-directory.md, checkpoint-files.md, file-naming.md, producer-snapshot.md).

``verify_partition`` checks a partition from its files (``PartitionFiles``, sorted by
files.py), the ``SegmentSummary`` of each segment (segment.py, possibly computed
elsewhere) and its log directory's ``LogDirState`` (files.py). Only the small files
(checkpoints, snapshots, ``partition.metadata``) are read here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats import checkpoints
from reference_impl.formats.producer_snapshot import read_snapshot, snapshot_trailing_bytes

from ..safe_files import read_regular
from .files import (
    OFFSET_CHECKPOINT_FILES,
    LogDirState,
    PartitionFiles,
    line_positions,
    read_checked,
    read_small_file,
)
from .findings import Finding, Findings, Severity
from .kraft import METADATA_TOPIC, check_metadata_partition
from .segment import SegmentSummary

# Topics Kafka always creates with cleanup.policy=compact: gaps in them are compaction's
COMPACTED_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def verify_partition(
    partition: PartitionFiles,
    summaries: Sequence[SegmentSummary],
    log_dir: LogDirState | None = None,
) -> list[Finding]:
    """The checks of a partition as a whole; ``summaries`` are verify_segment's for
    ``partition.segments`` (others, such as KRaft snapshots', are ignored)."""
    findings = Findings()
    for file, what, rule in partition.not_regular:  # PART-8, PART-9: never opened
        findings.add(
            rule, Severity.ERROR, file, f"{what} stands under a Kafka file's name: not read"
        )
    _check_names(partition, findings)
    chain = {s.files: s for s in summaries}
    segments = [chain[files] for files in partition.segments if files in chain]
    segments = [s for s in segments if not s.io_errors]
    compacted = _compacted(partition, segments, log_dir)
    _check_chain(segments, compacted, findings)
    _check_time_index_ends(segments, compacted, findings)
    leo = segments[-1].next_offset if segments else None
    _check_leader_epochs(partition, leo, findings)
    read_small_file(_path(partition.partition_metadata), checkpoints.read_partition_metadata,
          "partition_metadata", findings)  # fmt: skip
    for snapshot in partition.producer_snapshots:
        _check_snapshot(snapshot, findings)
    if log_dir is not None and partition.topic is not None and segments:
        _check_log_dir_entries(partition, segments, log_dir, findings)
    if partition.topic == METADATA_TOPIC:
        log_start = segments[0].files.base_offset if segments else 0
        check_metadata_partition(partition.path, log_start, leo or 0, findings)
    return findings.done()


def _path(file: str | None) -> Path:
    return Path(file) if file else Path("/nonexistent/.klogspec")


def _check_names(partition: PartitionFiles, findings: Findings) -> None:
    """DIR-3 to DIR-5, NAME-1, NAME-2; PART-3 orphan indexes; PART-4 unfinished operations."""
    if partition.name_error is not None:
        rule = "DIR-3" if "no '-'" in partition.name_error else (
            "DIR-4" if "needs '.<id>'" in partition.name_error else "DIR-5")  # fmt: skip
        findings.add(rule, Severity.ERROR, partition.path, partition.name_error)
    elif partition.dir_kind != "normal":
        findings.add(
            "DIR-2", Severity.INFO, partition.path,
            f"a -{partition.dir_kind} directory: Kafka does not load it as a live partition",
        )  # fmt: skip
    for file in partition.bad_names:
        findings.add(
            "NAME-2", Severity.ERROR, file, "the name does not start with an offset", position=0
        )
    for file in partition.unpadded_names:
        findings.add(
            "NAME-1", Severity.WARNING, file, "the offset is not written as 20 digits", position=0
        )
    for file in partition.orphan_indexes:
        findings.add(
            "PART-3", Severity.WARNING, file,
            f"no {Path(file).name.split('.')[0]}.log beside this index: an orphan, which "
            "Kafka deletes when it loads the partition", position=0,
        )  # fmt: skip
    for file in partition.temp_files:
        state = Path(file).suffix
        findings.add(
            "PART-4", Severity.WARNING, file,
            f"a {state} file: an interrupted "
            f"{'deletion' if state == '.deleted' else 'segment replacement (the cleaner or a split, COMPACT-23)'}, which Kafka "
            f"{'finishes' if state == '.deleted' else 'finishes or undoes'} when it loads "
            "the partition", position=0,
        )  # fmt: skip


def _compacted(partition, segments, log_dir) -> bool:
    """Whether the partition shows compaction (PART-2): a compacted internal topic, a
    cleaner checkpoint entry, a delete horizon, or offsets missing inside a batch, which
    only the cleaner leaves (gaps between batches prove nothing: a follower may append
    above its log end offset)."""
    key = (partition.topic, partition.partition)
    return (
        partition.topic in COMPACTED_TOPICS
        or (log_dir is not None and key in log_dir.cleaner_offsets)
        or any(s.missing_inside or s.delete_horizon for s in segments)
    )


def _check_chain(segments: list[SegmentSummary], compacted: bool, findings: Findings) -> None:
    """PART-1: offsets increase across segments; PART-2: gaps, between segments, before a
    segment's first batch, or between its batches (one finding per segment)."""
    severity = Severity.INFO if compacted else Severity.WARNING
    why = "the partition shows compaction" if compacted else "the partition shows no compaction"
    previous = None
    for segment in segments:
        log = segment.files.log
        if segment.first_gap is not None:
            position, offset = segment.first_gap
            findings.add(
                "PART-2", severity, log,
                f"{segment.missing_between} offsets are missing between batches, the first "
                f"{offset} before the batch at position {position} ({why})",
                position=position, offset=offset,
            )  # fmt: skip
        previous_last = previous.last_offset if previous is not None else None
        if previous_last is not None and previous_last >= segment.base_offset:
            findings.add(
                "PART-1", Severity.ERROR, log,
                f"the previous segment {Path(previous.files.log).name} holds offsets up to "
                f"{previous_last}, at or above this segment's base offset "
                f"{segment.base_offset}", position=0, offset=segment.base_offset,
            )  # fmt: skip
        if previous is not None and previous.next_offset < segment.base_offset:
            findings.add(
                "PART-2", severity, log,
                f"offsets {previous.next_offset} to {segment.base_offset - 1} are in no segment "
                f"(gap before this segment; {why})", position=0, offset=previous.next_offset,
            )  # fmt: skip
        first = segment.first_offset
        if first is not None and first > segment.base_offset:
            findings.add(
                "PART-2", severity, log,
                f"the first batch starts at offset {first}, above the base offset "
                f"{segment.base_offset} of the file name ({why})", position=0, offset=first,
            )  # fmt: skip
        previous = segment


def _check_time_index_ends(segments, compacted: bool, findings: Findings) -> None:
    """TIDX-4: a rolled segment's time index ends with its largest timestamp (what retention
    reads after a restart). The cleaner does not keep that entry, so compacted partitions
    are not checked."""
    if compacted:
        return
    for segment in segments:
        largest = segment.max_timestamp
        if segment.files.active or largest < 0 or segment.files.time_index is None:
            continue
        last = segment.time_index_last
        if last is None or last[0] < largest:
            findings.add(
                "TIDX-4", Severity.WARNING, segment.files.time_index,
                f"the last entry's timestamp is {last[0] if last else 'absent'}, not the "
                f"segment's largest, {largest}: retention will misjudge the segment's age",
                position=max(0, (segment.time_index_entries or 0) - 1) * 12,
                offset=last[1] if last else None,
            )  # fmt: skip


def _check_leader_epochs(partition: PartitionFiles, leo: int | None, findings: Findings) -> None:
    """CKPT-5 to CKPT-10 (it parses), CKPT-11 (epochs and start offsets strictly increase),
    PART-7 (no start offset above the log end offset)."""
    file = partition.leader_epoch_checkpoint
    entries = read_small_file(_path(file), checkpoints.read_leader_epoch_checkpoint,
                    "leader_epoch_checkpoint", findings)  # fmt: skip
    lines = line_positions(read_regular(file, Path(file).parent)) if entries else []
    previous = None
    for line, entry in enumerate(entries or (), start=3):
        if previous is not None and not (
            entry.epoch > previous.epoch and entry.start_offset > previous.start_offset
        ):
            findings.add(
                "CKPT-11", Severity.WARNING, file,
                f"line {line}: entry ({entry.epoch}, {entry.start_offset}) does not increase on "
                f"({previous.epoch}, {previous.start_offset}); Kafka drops entries to load it",
                position=lines[line - 1], offset=entry.start_offset,
            )  # fmt: skip
        if leo is not None and entry.start_offset > leo:
            findings.add(
                "PART-7", Severity.WARNING, file,
                f"line {line}: epoch {entry.epoch} starts at offset {entry.start_offset}, above "
                f"the log end offset {leo}; loading truncates the cache there",
                position=lines[line - 1], offset=entry.start_offset,
            )  # fmt: skip
        previous = entry


def _check_snapshot(file: str, findings: Findings) -> None:
    """SNAP-2, SNAP-4, SNAP-5: the snapshot decodes with a valid CRC; SNAP-8: no bytes after
    its entries."""
    data = read_checked(file, findings)
    if data is None:
        return
    try:
        read_snapshot(data, file=file)
    except KafkaLogError as exc:
        findings.error(exc)
        return
    trailing = snapshot_trailing_bytes(data)
    if trailing:
        findings.add(
            "SNAP-8", Severity.WARNING, file,
            f"{trailing} bytes after the last entry (read, and covered by the CRC)", position=0,
        )  # fmt: skip


def _check_log_dir_entries(partition, segments, log_dir: LogDirState, findings) -> None:
    """PART-5: the recovery point is not above the log end offset; PART-6: nor is the log
    start offset. Both below it, or the log start offset above the first offset present,
    are normal and reported as info."""
    key = (partition.topic, partition.partition)
    name = f"{partition.topic}-{partition.partition}"
    leo, first_base = segments[-1].next_offset, segments[0].base_offset
    first = segments[0].first_offset if segments[0].first_offset is not None else first_base

    def report(checkpoint: str, severity: Severity, message: str, rule: str = "") -> None:
        offset, position = getattr(log_dir, checkpoint)[key]
        file = str(Path(log_dir.path) / OFFSET_CHECKPOINT_FILES[checkpoint])
        rule = rule or ("PART-5" if checkpoint == "recovery_points" else "PART-6")
        findings.add(rule, severity, file, f"{name}: {message}", position=position, offset=offset)

    point, _ = log_dir.recovery_points.get(key, (None, None))
    unseen = _damaged_below(segments, point)
    if unseen:
        report(
            "recovery_points", Severity.INFO, _unseen_message(unseen, point, partition), "RECOV-1"
        )
    if point is not None and point > leo:
        report("recovery_points", Severity.WARNING,
               f"recovery point {point} is above the log end offset {leo}: offsets the broker "
               "flushed are missing (or the checkpoint is older than a truncation)")  # fmt: skip
    elif point is not None and point < first_base:
        report("recovery_points", Severity.INFO,
               f"recovery point {point} is below the first segment's base offset {first_base} "
               "(a checkpoint older than a deletion)")  # fmt: skip
    elif point is not None and point < leo:
        report("recovery_points", Severity.INFO,
               f"recovery point {point} is below the log end offset {leo}: offsets {point} to "
               f"{leo - 1} were not known to be flushed, and an unclean start recovers the "
               "segments holding them")  # fmt: skip
    start, _ = log_dir.log_start_offsets.get(key, (None, None))
    if start is not None and start > leo:
        report("log_start_offsets", Severity.WARNING,
               f"log start offset {start} is above the log end offset {leo}; loading would "
               "delete every segment")  # fmt: skip
    elif start is not None and start > first:
        report("log_start_offsets", Severity.INFO,
               f"log start offset {start} is above the first offset present, {first}: offsets "
               "below it were deleted (DeleteRecords) but are still in the segment")  # fmt: skip
    elif start is not None and start < first_base:
        report("log_start_offsets", Severity.INFO,
               f"log start offset {start} is below the first segment's base offset "
               f"{first_base}; Kafka uses the base offset")  # fmt: skip
    _check_cleaner_offset(name, key, leo, log_dir, findings)


def _damaged_below(segments: list[SegmentSummary], point: int | None) -> list[str]:
    """The .log files with invalid batches or trailing bytes in segments below the one
    holding the recovery point ``point``: what a broker's start never reads (RECOV-1)."""
    if point is None:
        return []
    holding = max((i for i, s in enumerate(segments) if s.base_offset <= point), default=0)
    return [
        Path(s.files.log).name
        for s in segments[:holding]
        if s.invalid_batches or s.valid_bytes < s.size_bytes
    ]


def _unseen_message(files: list[str], point: int, partition) -> str:
    """Says that a broker will not notice the damage, and what handles it."""
    return (
        f"damage in {', '.join(files)}, below the recovery point {point}: a broker's start "
        "recovers only from the segment holding the recovery point (RECOV-1), so it will not "
        "notice it; `klogspec recover --from-offset 0 "
        f"{partition.path}` removes it (stating the records it removes first) and `klogspec "
        "salvage` writes the intact ones out"
    )


def _check_cleaner_offset(name, key, leo: int, log_dir: LogDirState, findings) -> None:
    """COMPACT-4: a cleaner-offset-checkpoint entry past the log end offset (a truncation the
    cleaner's checkpoint did not follow, COMPACT-27) makes the next pass start over."""
    dirty, position = log_dir.cleaner_offsets.get(key, (None, None))
    if dirty is not None and dirty > leo:
        findings.add(
            "COMPACT-4", Severity.WARNING,
            str(Path(log_dir.path) / OFFSET_CHECKPOINT_FILES["cleaner_offsets"]),
            f"{name}: first dirty offset {dirty} is above the log end offset {leo}; the "
            "cleaner's next pass resets it to the log start offset and cleans the whole log",
            position=position, offset=dirty,
        )  # fmt: skip
