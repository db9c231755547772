"""``klogspec scan``: ``klogspec verify``'s checks, with the segment checks run as a Spark job.

One code path with verify (klogspec/verify/run.py): ``discover`` finds the same
log-directory plans; every segment (``SegmentFiles``) goes to ``verify_segment`` on an
executor; the ``SegmentResult``s come back to the driver, where ``verify_plan`` runs the
partition and log-directory checks with a ``verify_unit`` that looks the results up. So
the findings are verify's, in verify's order, whatever the cluster.

The report (``write_report``) is two Parquet datasets and a JSON summary::

    OUT/segments/   one row per segment file (SEGMENT_COLUMNS)
    OUT/findings/   one row per finding (FINDING_COLUMNS), in verify's order (``seq``)
    OUT/summary.json  verify's summary line, plus the exit status and the run's context
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial

from klogspec.cli import stderr_console
from klogspec.verify import (
    Finding,
    LogDirPlan,
    SegmentFiles,
    SegmentResult,
    Severity,
    VerifyStats,
    discover,
    verify_plan,
    verify_segment,
)

from .progress import JobProgress
from .splits import DEFAULT_OPEN_COST, deal
from .storage import filesystem

# Verify reads about 2 GB/s per core and a Spark task costs about 25 ms: a task per
# 512 MiB keeps that cost near a tenth of the work (benchmarks/README.md, scan-scaling).
SCAN_GROUP_BYTES = 512 * 1024 * 1024
_console = stderr_console()

SEGMENT_COLUMNS = [
    ("log_dir", "string", "the log directory (null for a partition outside one)"),
    ("partition_dir", "string", "the partition directory (null for a log directory's "
                                "bootstrap.checkpoint)"),
    ("topic", "string", "from the partition directory's name"),
    ("partition", "int", "from the same name"),
    ("file", "string", "the .log (or KRaft .checkpoint) file"),
    ("base_offset", "bigint", "from the file name (null for a KRaft snapshot)"),
    ("active", "boolean", "the partition's last segment"),
    ("size_bytes", "bigint", "file size"),
    ("batches", "bigint", "entries read"),
    ("invalid_batches", "bigint", "entries that failed a check"),
    ("valid_bytes", "bigint", "where the entries before the first invalid one end "
                              "(where recovery would truncate)"),
    ("first_offset", "bigint", "first offset of the first valid batch"),
    ("last_offset", "bigint", "last offset of the last valid batch"),
    ("max_timestamp", "bigint", "largest batch max timestamp (-1 when none)"),
    ("offset_index_entries", "bigint", "real entries of the .index (null when absent)"),
    ("time_index_entries", "bigint", "real entries of the .timeindex (null when absent)"),
    ("txn_index_entries", "bigint", "entries of the .txnindex (null when absent)"),
    ("errors", "int", "findings of this segment's checks, by severity"),
    ("warnings", "int", ""),
    ("infos", "int", ""),
    ("io_errors", "array<string>", "files of the segment that could not be read"),
]  # fmt: skip

FINDING_COLUMNS = [
    ("seq", "int", "the finding's place in verify's order"),
    ("rule", "string", "requirement ID (spec/requirements.yaml)"),
    ("severity", "string", "error, warning or info"),
    ("file", "string", "the file the finding is about"),
    ("position", "bigint", "byte position in that file (a line's start for text files)"),
    ("offset", "bigint", "Kafka offset, when known"),
    ("message", "string", "what was found, for people"),
]


def ddl(columns) -> str:
    return ", ".join(f"`{name}` {type_}" for name, type_, _ in columns)


@dataclass
class ScanRun:
    """Everything a scan found: verify's plans, the segment results, the findings in
    verify's order and verify's statistics."""

    paths: list[str]
    plans: list[LogDirPlan]
    results: dict[SegmentFiles, SegmentResult]
    findings: list[Finding]
    stats: VerifyStats
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)


def scan(
    spark, paths, *, deep: bool = False, max_message_bytes: int | None = None, status=None
) -> ScanRun:
    """Verify ``paths`` (local paths, or mounts every executor sees at the same path);
    ``status`` (progress.Status) is told each step and draws the progress bar."""
    started = time.perf_counter()
    warnings: list[str] = []
    plans = discover(paths, warn=warnings.append)
    units = list(dict.fromkeys(u for plan in plans for u in plan.units()))
    total = sum(_size(u.log) for u in units)
    if status is not None:
        partitions = sum(len(plan.partitions) for plan in plans)
        status.say(f"listed {len(units)} segments of {partitions} partitions, {total:,} bytes")
    checks = {"deep": deep, "max_message_bytes": max_message_bytes}
    with JobProgress(spark, "checking", total if status and status.enabled else 0, _console):
        results = check_segments(spark, units, **checks)
    stats = VerifyStats()
    findings = [f for plan in plans for f in verify_plan(plan, results.__getitem__, stats)]
    if status is not None:
        status.say(f"checked {len(units)} segments: {len(findings)} findings")
    return ScanRun(
        list(map(str, paths)), plans, results, findings, stats,
        time.perf_counter() - started, warnings,
    )  # fmt: skip


def check_segments(
    spark, units: list[SegmentFiles], *, deep: bool = False, max_message_bytes: int | None = None
) -> dict[SegmentFiles, SegmentResult]:
    """``verify_segment`` on every unit, as Spark tasks: units dealt into groups of about
    equal bytes (two per core; a group per 512 MiB when there are more, rounded up to a
    multiple of the cores), biggest first."""
    if not units:
        return {}
    sizes = [_size(u.log) + DEFAULT_OPEN_COST for u in units]
    cores = spark.sparkContext.defaultParallelism
    wanted = max(cores * 2, -(-sum(sizes) // SCAN_GROUP_BYTES))
    # a multiple of the cores, so the last round of tasks keeps every core busy
    groups = deal(units, sizes, -(-wanted // cores) * cores)
    check = partial(_check_group, deep=deep, max_message_bytes=max_message_bytes)
    pairs = spark.sparkContext.parallelize(groups, len(groups)).flatMap(check).collect()
    return dict(pairs)


def _check_group(units: list[SegmentFiles], *, deep: bool, max_message_bytes: int | None):
    return [(u, verify_segment(u, deep=deep, max_message_bytes=max_message_bytes)) for u in units]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


# --- the report ------------------------------------------------------------------------


def segment_rows(run: ScanRun) -> list[tuple]:
    rows = []
    for plan in run.plans:
        owned = [(None, u) for u in plan.batch_files]
        owned += [(p, u) for p in plan.partitions for u in p.units()]
        for partition, unit in owned:
            result = run.results[unit]
            summary = result.summary
            severities = Counter(f.severity for f in result.findings)
            rows.append((
                plan.path, partition.path if partition else None,
                partition.topic if partition else None,
                partition.partition if partition else None, unit.log, unit.base_offset,
                unit.active, summary.size_bytes, summary.batches, summary.invalid_batches,
                summary.valid_bytes, summary.first_offset, summary.last_offset,
                summary.max_timestamp, summary.offset_index_entries,
                summary.time_index_entries, summary.txn_index_entries,
                severities[Severity.ERROR], severities[Severity.WARNING],
                severities[Severity.INFO], list(summary.io_errors),
            ))  # fmt: skip
    return rows


def finding_rows(run: ScanRun) -> list[tuple]:
    return [
        (seq, f.rule, f.severity.value, f.file, f.position, f.offset, f.message)
        for seq, f in enumerate(run.findings)
    ]


@dataclass(frozen=True)
class Timing:
    """When the command started (``time.perf_counter()``) and how long Spark took to start
    in it: ``seconds`` in the summary is the whole command's wall time up to the summary."""

    started: float
    spark_seconds: float


def summary(
    run: ScanRun, status: int, master: str | None = None, timing: Timing | None = None
) -> dict:
    """verify's summary object, with the exit status and what the run was: ``seconds``
    the whole command (``timing``), or the scan's alone when there is no ``timing``."""
    seconds = time.perf_counter() - timing.started if timing else run.seconds
    return {
        **run.stats.to_dict(), "exitStatus": status, "paths": run.paths, "master": master,
        "seconds": round(seconds, 3),
        "sparkSeconds": round(timing.spark_seconds, 3) if timing else None,
        "warnings": run.warnings,
    }  # fmt: skip


def write_report(spark, run: ScanRun, out: str, status: int, timing: Timing | None = None) -> dict:
    """Write ``out``/segments, ``out``/findings (Parquet, one file each) and
    ``out``/summary.json, replacing an earlier report there; returns the summary."""
    out = out.rstrip("/")
    for name, rows, columns in (
        ("segments", segment_rows(run), SEGMENT_COLUMNS),
        ("findings", finding_rows(run), FINDING_COLUMNS),
    ):
        frame = spark.createDataFrame(rows, ddl(columns))
        frame.coalesce(1).write.mode("overwrite").parquet(f"{out}/{name}")
    report = summary(run, status, spark.sparkContext.master, timing)
    fs, inner = filesystem(f"{out}/summary.json")
    with fs.open_output_stream(inner) as stream:
        stream.write((json.dumps(report, indent=2) + "\n").encode())
    return report
