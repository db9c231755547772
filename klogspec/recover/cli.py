"""``klogspec recover DIR...``: recover partition directories as a broker's next start after a
crash would, keeping what it removes (registered under ``klogspec.commands``, see klogspec/cli.py).

For each partition: plan the load (plan.py); with ``--dry-run``, or when the plan
changes nothing, stop there; otherwise load it with the reference loader as after an
unclean shutdown (every segment from the recovery point on is checked, LOAD-16's index
check on), every removed byte moved to the quarantine folder first (quarantine.py, unless
``--discard``), then close it: everything flushed, the recovery point checkpointed at the
log end offset. The clean-shutdown marker of the log directory is left as it is: other
partitions of the directory may need their own recovery.

Exit status (RECOV-17): 0 nothing to do; 1 something was recovered (or would be, with
--dry-run); 2 the command could not run (bad usage, no partition, a directory the loader
refuses, a loader that did not follow the plan). The marker is never touched (RECOV-18).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import DELETE_DIR_SUFFIX, parse_partition_dir_name
from reference_impl.log.clock import SystemClock
from reference_impl.log.config import LogConfig
from reference_impl.log.load_events import LoadEvent
from reference_impl.log.loader import LoadOptions
from reference_impl.log.unified_log import Log

from ..cli import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, json_option
from .plan import PlanError, RecoveryPlan, plan_recovery
from .quarantine import Quarantine

METADATA_TOPIC = "__cluster_metadata"  # loaded by KafkaMetadataLog, not LogManager


@dataclass
class RecoverReport:
    partition: Path
    mode: str  # dry-run, recovered, nothing-to-do, failed
    plan: RecoveryPlan | None = None
    quarantine: Path | None = None
    error: str | None = None

    @property
    def status(self) -> int:
        if self.error is not None:
            return EXIT_USAGE
        return EXIT_FINDINGS if self.plan is not None and self.plan.changes else EXIT_OK

    def to_dict(self) -> dict:
        out = {"type": "partition", "partition": str(self.partition), "mode": self.mode}
        if self.plan is not None:
            plan = self.plan
            out.update(
                recoveryPointCheckpoint=plan.recovery_point_checkpoint,
                recoverFrom=plan.recovery_point,
                logStartOffset=plan.log_start_offset,
                logEndOffset=plan.log_end_offset,
                logBytesRemoved=plan.log_bytes_removed,
                actions=[a.to_dict() for a in plan.actions],
            )
        out["quarantine"] = None if self.quarantine is None else str(self.quarantine)
        if self.error is not None:
            out["error"] = self.error
        out["exitStatus"] = self.status
        return out


def recover_partition(
    dir: Path,
    config: LogConfig,
    *,
    from_offset: int | None = None,
    dry_run: bool = False,
    discard: bool = False,
) -> RecoverReport:
    """Plan, then (unless ``dry_run`` or nothing to do) load, quarantine and close ``dir``."""
    try:
        plan = plan_recovery(dir, config, recovery_point=from_offset)
    except (PlanError, KafkaLogError, OSError) as exc:
        return RecoverReport(dir, "failed", error=str(exc))
    if dry_run or not plan.changes:
        return RecoverReport(dir, "dry-run" if dry_run else "nothing-to-do", plan)
    quarantine = Quarantine(dir, discard=discard)
    options = LoadOptions(
        had_clean_shutdown=False,
        recovery_point=plan.recovery_point,
        index_sanity_check=True,
        observer=quarantine,
    )
    quarantine.remember_snapshots()
    try:
        log = Log.open(dir, replace(config, file_delete_delay_ms=0), SystemClock(), load=options)
        log.close()
    except (KafkaLogError, OSError) as exc:
        quarantine.keep_changed_snapshots()
        folder = quarantine.finish(recoverFrom=plan.recovery_point)
        return RecoverReport(dir, "failed", plan, folder, error=f"the load failed: {exc}")
    quarantine.keep_changed_snapshots()
    folder = quarantine.finish(recoverFrom=plan.recovery_point, logEndOffset=plan.log_end_offset)
    differences = plan_differences(plan, quarantine.events)
    if differences:
        error = "the loader did not follow the plan: " + "; ".join(differences)
        return RecoverReport(dir, "failed", plan, folder, error=error)
    return RecoverReport(dir, "recovered", plan, folder)


def plan_differences(plan: RecoveryPlan, events: list[LoadEvent]) -> list[str]:
    """RECOV-16: the truncations, deletions and renames the loader made, against the plan's."""
    planned = [_key(a.action, a.file, a.position, a.bytes, a.to) for a in plan.actions]
    done = [
        _key(e.action, e.file.name, e.position, e.size, None if e.to is None else e.to.name)
        for e in events
    ]
    planned = [k for k in planned if k is not None]
    done = [k for k in done if k is not None]
    return [f"planned {p}, done {d}" for p, d in zip(planned, done, strict=False) if p != d] + (
        [f"planned {len(planned)} changes, done {len(done)}"] if len(planned) != len(done) else []
    )


def _key(action, file, position, size, to):
    if action == "truncate":
        return ("truncate", file, position, size)
    if action in ("delete", "rename"):
        return (action, file, to)
    return None


def partitions_under(path: Path, warn) -> list[Path]:
    """A partition directory itself, or the partition directories of a log directory."""
    if _partition_name(path) is not None:
        return [path]
    found = []
    for child in sorted(p for p in path.iterdir() if p.is_dir()):
        name = _partition_name(child)
        if name is None:
            continue
        if name.topic == METADATA_TOPIC or child.name.endswith(DELETE_DIR_SUFFIX):
            warn(f"skipping {child}: not loaded as a partition by the log manager")
            continue
        found.append(child)
    return found


def _partition_name(path: Path):
    try:
        return parse_partition_dir_name(path.name)
    except KafkaLogError:
        return None


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--dry-run", is_flag=True, help="Report what would change; change nothing.")
@click.option("--discard", is_flag=True, help="Do not keep removed bytes in the quarantine folder.")
@click.option(
    "--from-offset",
    type=click.IntRange(min=0),
    help="Recover every segment from the one holding this offset (default: the recovery point "
    "checkpoint; 0 checks every segment).",
)
@click.option(
    "--index-interval-bytes", type=click.IntRange(min=0), default=4096, show_default=True,
    help="The topic's index.interval.bytes, for the rebuilt indexes.",
)  # fmt: skip
@click.option(
    "--segment-index-bytes", type=click.IntRange(min=4), default=10 * 1024 * 1024,
    show_default=True, help="The topic's segment.index.bytes.",
)  # fmt: skip
@json_option
def recover(
    paths, dry_run, discard, from_offset, index_interval_bytes, segment_index_bytes, as_json
):
    """Recover Kafka partition directories as a broker's start after a crash does.

    Each DIR is a partition directory or a log directory holding them. Segments from the
    recovery point on are checked batch by batch (framing, size, CRC); a .log is cut after
    its last valid batch and later segments are deleted; indexes are rebuilt; temporary
    files are finished or removed. Removed bytes go to
    <partition>/.klogspec-quarantine/<time>/ with a manifest.json, unless --discard.

    Exit status: 0 nothing to do; 1 recovered something (with --dry-run: would have);
    2 could not run.
    """
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    warn = lambda message: err.print(f"[yellow]warning:[/] {escape(message)}")  # noqa: E731
    partitions = [p for path in paths for p in partitions_under(Path(path), warn)]
    if not partitions:
        err.print("[red]error:[/] no partition directory to recover")
        sys.exit(EXIT_USAGE)
    config = LogConfig(
        index_interval_bytes=index_interval_bytes, segment_index_bytes=segment_index_bytes
    )
    out = click.get_text_stream("stdout")
    console = Console(highlight=False, soft_wrap=True)
    status = EXIT_OK
    for partition in partitions:
        report = recover_partition(
            partition, config, from_offset=from_offset, dry_run=dry_run, discard=discard
        )
        status = max(status, report.status)
        if as_json:
            out.write(json.dumps(report.to_dict(), separators=(",", ":")) + "\n")
        else:
            _print_report(console, report)
    sys.exit(status)


def _print_report(console: Console, report: RecoverReport) -> None:
    heads = {
        "dry-run": "[yellow]would change[/]" if report.status else "[green]nothing to do[/]",
        "recovered": "[yellow]recovered[/]",
        "nothing-to-do": "[green]nothing to do[/]",
        "failed": "[red]could not recover[/]",
    }
    console.print(f"[bold]{escape(str(report.partition))}[/]: {heads[report.mode]}")
    plan = report.plan
    for action in [] if plan is None else plan.actions:
        if action.action == "rebuild" and not action.changed:
            continue
        console.print("  " + escape(_describe(action)))
    if plan is not None and plan.changes:
        console.print(
            f"  log end offset {plan.log_end_offset}, log start offset {plan.log_start_offset}, "
            f"{plan.log_bytes_removed} bytes of .log files removed"
        )
    if plan is not None and plan.recovery_point > 0:
        console.print(
            f"  [dim]segments before the one holding offset {plan.recovery_point} (the recovery "
            "point) were not checked; --from-offset 0 checks every segment[/]"
        )
    if report.quarantine is not None:
        console.print(f"  removed bytes kept in {escape(str(report.quarantine))}")
    if report.error is not None:
        console.print(f"  [red]error:[/] {escape(report.error)}")


def _describe(action) -> str:
    offsets = (
        "" if action.offsets is None else f", offsets {action.offsets[0]}-{action.offsets[1] - 1}"
    )
    if action.action == "truncate":
        return (
            f"truncate {action.file} from byte {action.position}: {action.bytes} bytes{offsets} "
            f"({action.error}, {action.reason})"
        )
    if action.action == "delete":
        return f"delete {action.file}: {action.bytes} bytes{offsets} ({action.reason})"
    if action.action == "rename":
        return f"rename {action.file} to {action.to} ({action.reason})"
    if action.action in ("leader_epochs", "checkpoint"):
        return f"{action.file}: {action.before} -> {action.after}"
    return f"{action.action} {action.file} ({action.reason})"
