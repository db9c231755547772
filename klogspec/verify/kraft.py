"""The checks of a KRaft metadata partition (``__cluster_metadata-0``) in ``klogspec verify``:
its snapshots' framing, what a controller's restart would delete and load, and the
``quorum-state`` file (spec/formats/internal-topics/cluster-metadata.md §5, §6, KRAFT-1 to
KRAFT-7). The segments themselves get the log's checks like any partition's."""

from __future__ import annotations

from pathlib import Path

from reference_impl.formats.file_naming import FileKind, classify
from reference_impl.formats.kraft_snapshots import (
    METADATA_TOPIC,
    SnapshotId,
    plan_snapshots,
    snapshot_frame_problem,
)
from reference_impl.messages import MessageDecodeError
from reference_impl.messages.quorum_state import read_quorum_state

from .findings import Findings, Severity

__all__ = ["METADATA_TOPIC", "check_metadata_partition"]

QUORUM_STATE = "quorum-state"


def check_metadata_partition(
    path: str, log_start_offset: int, log_end_offset: int, findings: Findings
) -> None:
    """KRAFT-1 for each complete snapshot, KRAFT-2 to KRAFT-4 for the set of them (the log
    start offset is the first segment's base offset, as the loader makes it), KRAFT-5 to
    KRAFT-7 for quorum-state."""
    try:
        children = sorted(Path(path).iterdir())
    except OSError:  # not a local directory (a URL the scan job reads): nothing to list here
        return
    files = {}
    for child in children:
        info = classify(child)
        if info.kind is FileKind.KRAFT_SNAPSHOT and info.base_offset is not None:
            files[str(child)] = (SnapshotId(info.base_offset, info.epoch or 0), info.marker)
            if info.marker is None:
                problem = snapshot_frame_problem(child)
                if problem is not None:
                    findings.add("KRAFT-1", Severity.ERROR, str(child), f"snapshot {problem}")
    plan = plan_snapshots(files, log_start_offset)
    for name in plan.delete:
        why = _why_deleted(files[name], log_start_offset)
        findings.add("KRAFT-2", Severity.INFO, name, f"a restart deletes it: {why}")
    if plan.inconsistent is not None:
        findings.add(
            "KRAFT-3", Severity.ERROR, path, f"inconsistent snapshots: {plan.inconsistent}"
        )
    if plan.latest is not None:
        findings.add("KRAFT-4", Severity.INFO, path, _restart(plan.latest, log_end_offset))
    _check_quorum_state(Path(path) / QUORUM_STATE, findings)


def _restart(latest: SnapshotId, log_end_offset: int) -> str:
    loads = f"a restart loads the snapshot ending at {latest.end_offset} (epoch {latest.epoch})"
    if latest.end_offset > log_end_offset:  # KafkaMetadataLog.truncateToLatestSnapshot
        return (
            f"{loads}; the log ends at {log_end_offset}, before it, and is emptied to start there"
        )
    return f"{loads} and replays the log from offset {latest.end_offset} to {log_end_offset}"


def _why_deleted(entry: tuple[SnapshotId, str | None], log_start_offset: int) -> str:
    snapshot_id, marker = entry
    if marker == "part":
        return "a snapshot that was never frozen (.checkpoint.part)"
    if marker == "deleted":
        return "a snapshot whose deletion was scheduled (.checkpoint.deleted)"
    return f"it ends at {snapshot_id.end_offset}, below the log start offset {log_start_offset}"


def _check_quorum_state(path: Path, findings: Findings) -> None:
    """KRAFT-5 to KRAFT-7; a missing file is a controller that never voted, not a problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError) as exc:
        findings.add("KRAFT-5", Severity.ERROR, str(path), f"cannot be read: {exc}")
        return
    try:
        read_quorum_state(text)
    except MessageDecodeError as exc:
        findings.add(exc.rule, Severity.ERROR, str(path), exc.reason)
