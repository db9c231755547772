"""``klogspec recover DIR...``: recover partition directories as a broker's next start after a
crash would, keeping what it removes (registered under ``klogspec.commands``, see klogspec/cli.py).

The work of one partition is run.py's; this is the command: it finds the partitions, holds
each log directory's ``.lock`` while it changes them (lock.py; a dry run only looks), shows
progress on stderr, and prints the report.

Exit status (RECOV-17): 0 nothing to do; 1 something was recovered (or would be, with
--dry-run); 2 the command could not run (bad usage, no partition, a locked log directory, a
directory the loader refuses, a loader that did not follow the plan). The marker is never
touched (RECOV-18).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click
from rich.markup import escape

from reference_impl.errors import KafkaLogError
from reference_impl.formats.file_naming import (
    DELETE_DIR_SUFFIX,
    LOG_FILE_SUFFIX,
    parse_partition_dir_name,
)
from reference_impl.log.config import LogConfig

from ..cli import (
    EXIT_USAGE,
    json_option,
    no_progress_option,
    stderr_console,
    stdout_console,
)
from ..progress import ByteProgress
from .lock import LockHeld, LogDirLock, lock_holders
from .run import Progress, RecoverReport, recover_partition

METADATA_TOPIC = "__cluster_metadata"  # loaded by KafkaMetadataLog, not LogManager
__all__ = ["recover", "recover_partition", "partitions_under"]


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
@click.option(
    "--force", is_flag=True,
    help="Recover even when another process (a broker) holds the log directory's .lock.",
)  # fmt: skip
@no_progress_option
@json_option
def recover(
    paths, dry_run, discard, from_offset, index_interval_bytes, segment_index_bytes, force,
    progress, as_json,
):  # fmt: skip
    """Recover Kafka partition directories as a broker's start after a crash does.

    Stop the broker first: a log directory whose .lock another process holds (a broker,
    another recover) is refused unless --force.

    Each DIR is a partition directory or a log directory holding them. Segments from the
    recovery point on are checked batch by batch (framing, size, CRC); a .log is cut after
    its last valid batch and later segments are deleted; indexes are rebuilt; temporary
    files are finished or removed. Removed bytes go to
    <partition>/.klogspec-quarantine/<time>/ with a manifest.json, unless --discard. A run
    that was killed is finished by the next one. Ranges are written [from, to): to is
    exclusive, for byte positions and offsets alike.

    Exit status: 0 nothing to do; 1 recovered something (with --dry-run: would have);
    2 could not run.
    """
    err = stderr_console()
    warn = lambda message: err.print(f"[yellow]warning:[/] {escape(message)}")  # noqa: E731
    partitions = [p for path in paths for p in partitions_under(Path(path), warn)]
    if not partitions:
        err.print("[red]error:[/] no partition directory to recover")
        sys.exit(EXIT_USAGE)
    config = LogConfig(
        index_interval_bytes=index_interval_bytes, segment_index_bytes=segment_index_bytes
    )
    out = click.get_text_stream("stdout")
    console = stdout_console()
    status = 0
    total = sum(_log_bytes(p) for p in partitions)
    with ByteProgress("recover", total if progress else 0, err) as bar:
        for log_dir, group in _by_log_dir(partitions):
            for report in _recover_log_dir(
                log_dir, group, config, bar, warn, force=force, from_offset=from_offset,
                dry_run=dry_run, discard=discard,
            ):  # fmt: skip
                status = max(status, report.status)
                if as_json:
                    out.write(json.dumps(report.to_dict(), separators=(",", ":")) + "\n")
                else:
                    _print_report(console, report)
    sys.exit(status)


def _by_log_dir(partitions: list[Path]) -> list[tuple[Path, list[Path]]]:
    groups: dict[Path, list[Path]] = {}
    for partition in partitions:
        groups.setdefault(partition.parent, []).append(partition)
    return list(groups.items())


def _recover_log_dir(log_dir, partitions, config, bar, warn, *, force, **options):
    """Each partition of ``log_dir``, under its lock (a dry run only says who holds it)."""
    if options["dry_run"]:
        for holder in lock_holders(log_dir / ".lock"):
            warn(
                f"{log_dir / '.lock'} is held by {holder}: the directory may change under the plan"
            )
        yield from _each(partitions, config, bar, options)
        return
    try:
        with LogDirLock(log_dir):
            yield from _each(partitions, config, bar, options)
    except LockHeld as exc:
        if not force:
            error = f"{exc}: stop the broker (or the other recover) first, or pass --force"
            for partition in partitions:
                yield RecoverReport(partition, "failed", error=error)
            return
        warn(f"{exc}; recovering anyway (--force)")
        yield from _each(partitions, config, bar, options)
    except OSError as exc:
        error = f"cannot lock {log_dir / '.lock'}: {exc.strerror or exc}"
        for partition in partitions:
            yield RecoverReport(partition, "failed", error=error)


def _each(partitions, config, bar, options):
    for partition in partitions:
        yield recover_partition(partition, config, progress=_progress(bar, partition), **options)


def _progress(bar: ByteProgress, partition: Path) -> Progress:
    """The bar moves as the plan reads each segment, then as the load recovers each (the
    total grows by what the load reads again); it ends at the partition's end either way."""
    start, size = bar.completed, _log_bytes(partition)
    read = {}  # segment file name: bytes, as the plan read it

    def scanned(file: str, n: int) -> None:
        read[file] = n
        bar.advance(n)

    def expect(n: int) -> None:
        nonlocal size
        size += n
        bar.add_total(n)

    def done() -> None:
        bar.update(max(bar.completed, start + size))

    bar.describe(f"recover {partition.name}")
    return Progress(
        scanned=scanned,
        loaded=lambda file: bar.advance(read.get(file.name, 0)),
        expect=expect,
        done=done,
    )


def _log_bytes(partition: Path) -> int:
    return sum(_size(p) for p in partition.glob("*" + LOG_FILE_SUFFIX))


def _size(path: Path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _print_report(console, report: RecoverReport) -> None:
    if report.resumed is not None:
        _print_report(console, report.resumed)
    heads = {
        "dry-run": "[yellow]would change[/]" if report.status else "[green]nothing to do[/]",
        "recovered": "[yellow]recovered[/]",
        "nothing-to-do": "[green]nothing to do[/]",
        "failed": "[red]could not recover[/]",
        "resumed": "[yellow]finished the recovery interrupted in[/] "
        + escape(str(report.quarantine)),
        "would-resume": "[yellow]would finish the recovery interrupted in[/] "
        + escape(str(report.quarantine)),
    }
    console.print(f"[bold]{escape(str(report.partition))}[/]: {heads[report.mode]}")
    for action in report.pending:
        console.print("  " + escape(describe(action)))
    plan = report.plan
    for action in [] if plan is None else plan.actions:
        if action.action == "rebuild" and not action.changed:
            continue
        console.print("  " + escape(describe(action)))
    if plan is not None and (plan.changes or report.pending):
        console.print(
            f"  log end offset {plan.log_end_offset}, log start offset {plan.log_start_offset}, "
            f"{_count(report.log_bytes_removed, 'byte')} of .log files removed"
        )
    if plan is not None and plan.recovery_point > 0 and report.mode != "failed":
        console.print(
            f"  [dim]segments before the one holding offset {plan.recovery_point} (the recovery "
            "point) were not checked; --from-offset 0 checks every segment[/]"
        )
    if report.mode == "would-resume":
        console.print("  [dim]a run without --dry-run finishes it, then recovers as asked[/]")
    elif report.quarantine is not None:
        console.print(
            f"  removed bytes kept in {escape(str(report.quarantine))} (listed in manifest.json)"
        )
    if report.error is not None:
        console.print(f"  [red]error:[/] {escape(report.error)}")


def describe(action) -> str:
    """One line per change; ranges are [from, to), ``to`` exclusive, as in the manifest and
    in the names of the stored pieces."""
    offsets = "" if action.offsets is None else f", offsets {_range(*action.offsets)}"
    if action.action == "truncate":
        end = action.position + action.bytes
        return (
            f"truncate {action.file}: bytes {_range(action.position, end)} "
            f"({_count(action.bytes, 'byte')}{offsets}; {action.error}, {action.reason})"
        )
    if action.action == "delete":
        return f"delete {action.file}: {_count(action.bytes, 'byte')}{offsets} ({action.reason})"
    if action.action == "rename":
        return f"rename {action.file} to {action.to} ({action.reason})"
    if action.action == "leader_epochs":
        return f"{action.file}: {_epochs(action.before)} -> {_epochs(action.after)}"
    if action.action == "checkpoint":
        return f"{action.file}: {_entry(action.before)} -> {_entry(action.after)}"
    return f"{action.action} {action.file} ({action.reason})"


def _range(start: int, end: int) -> str:
    return f"[{start}, {end})"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _entry(offset: int | None) -> str:
    return "no entry" if offset is None else str(offset)


def _epochs(entries: list) -> str:
    if not entries:
        return "no epochs"
    return ", ".join(f"epoch {epoch} from offset {start}" for epoch, start in entries)
