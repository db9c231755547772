"""Finding what to verify under some paths, and running every check on it in a stable order.

``discover`` turns paths (partition directories, log directories, or trees holding log
directories) into ``LogDirPlan``s of plain paths. ``verify_plan`` yields a plan's findings:
the log directory's, then for each partition its segments' (segment.py) and its own
(partition.py), then the ``.log`` pieces of ``klogspec recover``'s quarantine folders when
asked (``include_quarantine``, or a quarantine folder named as a path), each with the
positions of the file it came from. It takes the per-segment function as an argument, so
``klogspec verify`` runs verify_segment in turn while ``klogspec scan`` runs it on Spark
executors and hands the results back: one code path, the same findings in the same order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import FileKind, classify, parse_partition_dir_name

from ..recover.naming import QUARANTINE_DIR, stored_piece
from ..walk import path_order
from .files import (
    REMOTE_INDEX_CACHE,
    PartitionFiles,
    looks_like_partition_file,
    partition_files,
    read_log_dir,
)
from .findings import Finding, Findings, Severity
from .partition import verify_partition
from .segment import SegmentFiles, SegmentResult, verify_segment

LOG_DIR_ROOT_KINDS = frozenset({
    FileKind.META_PROPERTIES, FileKind.RECOVERY_POINT_CHECKPOINT,
    FileKind.LOG_START_OFFSET_CHECKPOINT, FileKind.REPLICATION_OFFSET_CHECKPOINT,
    FileKind.CLEANER_OFFSET_CHECKPOINT, FileKind.CLEAN_SHUTDOWN, FileKind.LOCK,
    FileKind.BOOTSTRAP_SNAPSHOT,
})  # fmt: skip


@dataclass(frozen=True)
class LogDirPlan:
    """A log directory and the partitions to verify in it. ``root_checks`` is False when
    only some partitions were asked for: the root's checkpoints are then read for their
    entries, but not reported on. ``path`` is None for partitions outside any log dir."""

    path: str | None
    partitions: tuple[PartitionFiles, ...] = ()
    batch_files: tuple[SegmentFiles, ...] = ()  # bootstrap.checkpoint of a KRaft log dir
    root_checks: bool = True
    quarantined: tuple[SegmentFiles, ...] = ()  # kept .log pieces (klogspec recover)

    def units(self) -> list[SegmentFiles]:
        partitions = (u for p in self.partitions for u in p.units())
        return [*self.batch_files, *partitions, *self.quarantined]


def discover(
    paths: Iterable[str | Path], warn=lambda message: None, *, include_quarantine: bool = False
) -> list[LogDirPlan]:
    """The log directories and partitions under ``paths``, in a stable order (DIR-6); with
    ``include_quarantine``, the pieces in their quarantine folders too."""
    plans: list[LogDirPlan] = []
    for path in paths:
        found = list(_discover(Path(path)))
        if include_quarantine:
            found = [_with_quarantine(plan) for plan in found]
        if not found:
            warn(f"no Kafka log directory or partition directory under {path}")
        plans += found
    return plans


def _discover(path: Path) -> Iterator[LogDirPlan]:
    if not path.is_dir():
        return
    if QUARANTINE_DIR in (path.name, path.parent.name):  # named: asked for
        yield LogDirPlan(None, quarantined=tuple(quarantined_logs(path)))
        return
    children = sorted(path.iterdir(), key=path_order)
    if _is_log_dir(path, children):
        yield _log_dir_plan(path, children)
    elif any(looks_like_partition_file(c.name) for c in children):  # a FIFO too (PART-8)
        parent = path.parent
        if _is_log_dir(parent, _listing(parent)):
            yield LogDirPlan(str(parent), (partition_files(path),), root_checks=False)
        else:
            yield LogDirPlan(None, (partition_files(path),))
    else:
        for child in children:
            if child.is_dir() and not child.is_symlink():  # a linked directory could loop
                yield from _discover(child)


def _with_quarantine(plan: LogDirPlan) -> LogDirPlan:
    pieces = [u for p in plan.partitions for u in quarantined_logs(Path(p.path) / QUARANTINE_DIR)]
    return replace(plan, quarantined=plan.quarantined + tuple(pieces))


def quarantined_logs(folder: Path) -> Iterator[SegmentFiles]:
    """The ``.log`` files and pieces of ``.log`` files under a quarantine folder, by name."""
    if not folder.is_dir():
        return
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        piece = stored_piece(path.name)
        info = classify(piece.original if piece is not None else path.name)
        if info.kind is FileKind.LOG:
            yield SegmentFiles(str(path), info.base_offset)


def _listing(path: Path) -> list[Path]:
    """The entries of a directory that was not asked for (a partition's parent): none when
    it cannot be listed."""
    try:
        return list(path.iterdir())
    except OSError:
        return []


def _is_log_dir(path: Path, children: list[Path]) -> bool:
    """Root files of a log directory, or partition-named subdirectories holding segments."""
    if any(c.is_file() and classify(c).kind in LOG_DIR_ROOT_KINDS for c in children):
        return True
    return any(c.is_dir() and _partition_named(c) and _holds_partition_files(c) for c in children)


def _partition_named(path: Path) -> bool:
    try:
        parse_partition_dir_name(path.name)
        return True
    except KafkaLogError:
        return False


def _holds_partition_files(path: Path) -> bool:
    return any(looks_like_partition_file(c.name) for c in path.iterdir())


def _log_dir_plan(path: Path, children: list[Path]) -> LogDirPlan:
    partitions = tuple(
        partition_files(child)
        for child in children
        if child.is_dir() and not child.is_symlink() and child.name != REMOTE_INDEX_CACHE
    )
    bootstrap = tuple(
        SegmentFiles(str(c), None)
        for c in children
        if c.is_file() and classify(c).kind is FileKind.BOOTSTRAP_SNAPSHOT
    )
    return LogDirPlan(str(path), partitions, bootstrap)


@dataclass
class VerifyStats:
    """What a run went through, for the summary line."""

    log_dirs: int = 0
    partitions: int = 0
    segments: int = 0
    bytes: int = 0
    findings: Counter = field(default_factory=Counter)  # by Severity
    rules: Counter = field(default_factory=Counter)  # by (rule, severity)
    io_errors: list[str] = field(default_factory=list)

    def count(self, finding: Finding) -> Finding:
        self.findings[finding.severity] += 1
        self.rules[(finding.rule, finding.severity.value)] += 1
        return finding

    def by_rule(self) -> dict[str, dict[str, int]]:
        """{rule: {severity: count}}, rules sorted."""
        out: dict[str, dict[str, int]] = {}
        for (rule, severity), n in sorted(self.rules.items()):
            out.setdefault(rule, {})[severity] = n
        return out

    def to_dict(self) -> dict:
        return {
            "type": "summary", "logDirs": self.log_dirs, "partitions": self.partitions,
            "segments": self.segments, "bytes": self.bytes,
            "findings": {s.value: self.findings.get(s, 0) for s in Severity},
            "rules": self.by_rule(),
            "ioErrors": list(self.io_errors),
        }  # fmt: skip


def verify_plan(
    plan: LogDirPlan,
    verify_unit: Callable[[SegmentFiles], SegmentResult],
    stats: VerifyStats | None = None,
) -> Iterator[Finding]:
    """Every finding of ``plan``, in order: the log directory's root, its batch files, then
    per partition its segments' findings (by base offset) and its own. ``verify_unit`` checks
    one segment (``verify_segment`` with the run's options)."""
    stats = stats if stats is not None else VerifyStats()
    state = None
    if plan.path is not None:
        root = Findings()
        try:
            state = read_log_dir(plan.path, root)
        except OSError as exc:
            stats.io_errors.append(f"{exc.filename or plan.path}: {exc.strerror or exc}")
        if plan.root_checks:
            stats.log_dirs += 1
            yield from map(stats.count, root.done())
    for unit in plan.batch_files:
        yield from _unit_findings(verify_unit(unit), stats)
    for partition in plan.partitions:
        stats.partitions += 1
        results = []
        for unit in partition.units():
            result = verify_unit(unit)
            results.append(result)
            yield from _unit_findings(result, stats)
        try:
            findings = verify_partition(partition, [r.summary for r in results], state)
        except OSError as exc:
            stats.io_errors.append(f"{exc.filename or partition.path}: {exc.strerror or exc}")
            findings = []
        yield from map(stats.count, findings)
    for unit in plan.quarantined:
        yield from _unit_findings(_with_origin(verify_unit(unit)), stats)


def _with_origin(result: SegmentResult) -> SegmentResult:
    """A piece's findings at the positions of the file it was cut from (as dump shows it)."""
    piece = stored_piece(Path(result.summary.files.log).name)
    if piece is None or not piece.start:
        return result
    moved = tuple(
        f if f.position is None else replace(f, position=f.position + piece.start)
        for f in result.findings
    )
    return replace(result, findings=moved)


def _unit_findings(result: SegmentResult, stats: VerifyStats) -> Iterator[Finding]:
    stats.segments += 1
    stats.bytes += result.summary.size_bytes
    stats.io_errors += result.summary.io_errors
    yield from map(stats.count, result.findings)


def local_verifier(
    *, deep: bool = False, max_message_bytes: int | None = None, progress=None
) -> Callable[[SegmentFiles], SegmentResult]:
    """verify_segment with the run's options, in this process."""

    def verify_unit(unit: SegmentFiles) -> SegmentResult:
        return verify_segment(
            unit, deep=deep, max_message_bytes=max_message_bytes, progress=progress
        )

    return verify_unit


def verify_paths(
    paths, *, deep: bool = False, stats: VerifyStats | None = None, warn=lambda message: None,
    include_quarantine: bool = False,
):  # fmt: skip
    """Discover and verify ``paths`` in this process: every finding, in order."""
    verify_unit = local_verifier(deep=deep)
    for plan in discover(paths, warn, include_quarantine=include_quarantine):
        yield from verify_plan(plan, verify_unit, stats)
