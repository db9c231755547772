"""``klogspec recover DIR...``: recover partition directories as a broker's next start after a
crash would, keeping what it removes (registered under ``klogspec.commands``, see klogspec/cli.py).

The work of one partition is run.py's; this is the command: it finds the partitions, holds
each log directory's ``.lock`` while it changes them (lock.py; a dry run only looks), shows
progress on stderr, and prints the report.

Before anything changes it refuses what a broker could not have made (safety.py, RECOV-23) and
states the records the plan removes (loss.py, RECOV-24): on a terminal it asks, --yes answers
for scripts, and a run with neither changes nothing in that partition (status 2). The report
is report.py's.

Exit status (RECOV-17): 0 nothing to do; 1 something was recovered (or would be, with
--dry-run); 2 the command could not run (bad usage, no partition, a locked log directory, a
directory the loader refuses or recover refuses, a loss not confirmed, a loader that did not
follow the plan, a failed load). The marker is never touched (RECOV-18).
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
from .lock import LockHeld, LockUnsafe, LogDirLock, lock_holders
from .loss import Loss
from .report import loss_lines, print_report
from .run import Progress, RecoverReport, recover_partition
from .safety import refused_partition, shown

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
@click.option(
    "--yes", "-y", is_flag=True,
    help="Remove the records the recovery states it removes without asking (for scripts).",
)  # fmt: skip
@no_progress_option
@json_option
def recover(
    paths, dry_run, discard, from_offset, index_interval_bytes, segment_index_bytes, force,
    yes, progress, as_json,
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

    Before removing records (not a torn tail or zeros: batches whose headers claim
    offsets) it states how many, which offsets and bytes, and which deleted segments are
    intact, then asks on a terminal; --yes answers yes, and without a terminal or --yes
    the partition is left unchanged (status 2). `klogspec salvage` writes the intact
    records of a quarantine out for a client to produce again.

    Exit status: 0 nothing to do; 1 recovered something (with --dry-run: would have);
    2 could not run, or a loss was not confirmed.
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
        approve = _approver(yes, err, bar)
        for log_dir, group in _by_log_dir(partitions):
            for report in _recover_log_dir(
                log_dir, group, config, bar, warn, force=force, from_offset=from_offset,
                dry_run=dry_run, discard=discard, approve=approve,
            ):  # fmt: skip
                status = max(status, report.status)
                if as_json:
                    out.write(json.dumps(report.to_dict(), separators=(",", ":")) + "\n")
                else:
                    print_report(console, report)
    sys.exit(status)


def stdin_is_terminal() -> bool:
    """Whether a person can be asked (the tests replace it)."""
    return sys.stdin.isatty()


def _approver(yes: bool, err, bar: ByteProgress):
    """RECOV-24: --yes approves; a terminal is asked (the loss on stderr, then the question);
    anything else is refused, so a script that did not say --yes changes nothing."""

    def approve(partition: Path, loss: Loss) -> str | None:
        if yes:
            return None
        if not stdin_is_terminal():
            return (
                f"this recovery removes {loss.records} intact records (stated below) and stdin "
                "is not a terminal to ask: nothing changed; run it on a terminal, or pass --yes"
            )
        with bar.paused():
            err.print(f"[bold]{escape(shown(partition))}[/]:")
            for line in loss_lines(loss, done=False):
                err.print("  " + escape(line))
            if click.confirm("Remove these records from the partition?", default=False, err=True):
                return None
        return "the removal of these records was declined: nothing changed"

    return approve


def _by_log_dir(partitions: list[Path]) -> list[tuple[Path, list[Path]]]:
    groups: dict[Path, list[Path]] = {}
    for partition in partitions:
        groups.setdefault(partition.parent, []).append(partition)
    return list(groups.items())


def _recover_log_dir(log_dir, partitions, config, bar, warn, *, force, **options):
    """Each partition of ``log_dir``, under its lock (a dry run only says who holds it); one
    whose name recover refuses is reported first, untouched (RECOV-23)."""
    refused = {p: why for p in partitions if (why := refused_partition(p)) is not None}
    for partition, why in refused.items():
        yield RecoverReport(partition, "failed", error=why)
    partitions = [p for p in partitions if p not in refused]
    if not partitions:
        return
    if options["dry_run"]:
        if os.path.islink(log_dir / ".lock"):
            warn(f"{shown(log_dir / '.lock')} is a symbolic link: a real run refuses it")
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
    except LockUnsafe as exc:
        for partition in partitions:
            yield RecoverReport(partition, "failed", error=f"{exc}; nothing changed")
    except OSError as exc:
        error = f"cannot lock {shown(log_dir / '.lock')}: {exc.strerror or exc}"
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

    bar.describe(f"recover {shown(partition.name)}")
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
