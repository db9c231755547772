"""``klogspec verify DIR...``: check partition directories, log directories or trees of them
(registered under the ``klogspec.commands`` entry points, see klogspec/cli.py).

Findings are printed as JSON Lines with ``--json`` (one object per finding with exactly
``rule, severity, file, position, offset, message``, then one ``{"type": "summary", ...}``
line), or as a table per file. Exit status: 0 when no finding reaches ``--fail-on``
(warning by default; info findings never fail), 1 when one does, 2 when the command could
not run (bad usage, nothing to verify, an unreadable file).
"""

from __future__ import annotations

import json
import os
import sys

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..cli import EXIT_USAGE, json_option, no_progress_option, stderr_console, stdout_console
from ..progress import ByteProgress
from .findings import Finding, Severity, exit_status
from .run import VerifyStats, discover, local_verifier, verify_plan

_COLOURS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--deep", is_flag=True, help="Also decode every record (varints, counts, codecs).")
@click.option(
    "--fail-on",
    type=click.Choice(["warning", "error"]),
    default="warning",
    show_default=True,
    help="The least severe finding that makes the exit status 1.",
)
@click.option(
    "--max-message-bytes",
    type=click.IntRange(min=0),
    help="Report entries longer than this (FRAME-11); no limit by default.",
)
@click.option(
    "--include-quarantine", is_flag=True,
    help="Also check the .log pieces klogspec recover kept in .klogspec-quarantine folders.",
)  # fmt: skip
@no_progress_option
@json_option
def verify(paths, deep, fail_on, max_message_bytes, include_quarantine, progress, as_json):
    """Check Kafka partition directories against the spec, without changing them.

    Each DIR is a partition directory, a log directory, or a tree holding log directories.
    Every segment is checked in one streaming pass: framing, sizes, CRCs and offsets of
    each batch (records too with --deep), the tail of the file, and its offset, time and
    transaction indexes against the batches. Then each partition: segment order and gaps,
    orphan and temporary files, leader-epoch checkpoint, partition.metadata, producer
    snapshots, and the log directory's recovery-point and log-start-offset entries.
    Every finding cites the requirement ID it checks (spec/requirements.yaml). The
    quarantine folders klogspec recover leaves are skipped unless --include-quarantine (or
    named as a DIR): their .log pieces are then checked as batch files, at the positions of
    the file each was cut from.

    Exit status: 0 clean (info findings allowed); 1 when a finding is at least as severe
    as --fail-on; 2 when the command cannot run.
    """
    err = stderr_console()
    warnings = []
    try:
        plans = discover(paths, warn=warnings.append, include_quarantine=include_quarantine)
    except OSError as exc:
        err.print(f"[red]error:[/] {escape(f'{exc.filename}: {exc.strerror or exc}')}")
        sys.exit(EXIT_USAGE)
    for message in warnings:
        err.print(f"[yellow]warning:[/] {escape(message)}")
    if not plans:
        err.print("[red]error:[/] nothing to verify")
        sys.exit(EXIT_USAGE)
    stats = VerifyStats()
    renderer = JsonRenderer() if as_json else TableRenderer(stdout_console())
    total = sum(_size(unit.log) for plan in plans for unit in plan.units()) if progress else 0
    with ByteProgress("verify", total, err) as bar:
        verify_unit = local_verifier(
            deep=deep, max_message_bytes=max_message_bytes, progress=bar.advance
        )
        for plan in plans:
            for finding in verify_plan(plan, verify_unit, stats):
                renderer.finding(finding)
    for problem in stats.io_errors:
        err.print(f"[red]unreadable:[/] {escape(problem)}")
    status = EXIT_USAGE if stats.io_errors else exit_status(stats.findings, Severity(fail_on))
    renderer.finish(stats, status)
    sys.exit(status)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class JsonRenderer:
    """Each finding as it is found, then the summary."""

    def __init__(self) -> None:
        self.out = click.get_text_stream("stdout")

    def finding(self, finding: Finding) -> None:
        self.out.write(json.dumps(finding.to_dict(), separators=(",", ":")) + "\n")

    def finish(self, stats: VerifyStats, status: int) -> None:
        summary = {**stats.to_dict(), "exitStatus": status}
        self.out.write(json.dumps(summary, separators=(",", ":")) + "\n")


class TableRenderer:
    """One table per file, files in the order their first finding came, then a summary."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.by_file: dict[str | None, list[Finding]] = {}

    def finding(self, finding: Finding) -> None:
        self.by_file.setdefault(finding.file, []).append(finding)

    def finish(self, stats: VerifyStats, status: int) -> None:
        for file, findings in self.by_file.items():
            table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
            for column, justify in (("severity", "left"), ("rule", "left"),
                                    ("position", "right"), ("offset", "right"),
                                    ("message", "left")):  # fmt: skip
                table.add_column(column, justify=justify, overflow="fold")
            for f in findings:
                colour = _COLOURS[f.severity]
                table.add_row(
                    f"[{colour}]{f.severity.value}[/]", f.rule, _cell(f.position),
                    _cell(f.offset), escape(f.message),
                )  # fmt: skip
            self.console.print(f"[bold]{escape(file or '-')}[/]", soft_wrap=True)
            self.console.print(table)
        counts = ", ".join(
            f"[{_COLOURS[s]}]{_plural(stats.findings.get(s, 0), s.value)}[/]" for s in Severity
        )
        size = f"{stats.bytes / 1e6:.1f} MB" if stats.bytes >= 1e5 else f"{stats.bytes} bytes"
        self.console.print(
            f"{counts} in {_plural(stats.segments, 'segment file')} ({size}) of "
            f"{_plural(stats.partitions, 'partition')}, "
            f"{_plural(stats.log_dirs, 'log directory').replace('ys', 'ies')}; "
            f"exit status {status}"
        )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 or word == "info" else f"{n} {word}s"


def _cell(value: int | None) -> str:
    return "-" if value is None else str(value)
