"""``klogspec salvage SOURCE... --out FILE``: the intact records of recover's quarantine folders,
as JSON Lines a client can produce again (salvage.py; registered under ``klogspec.commands``).

A command of its own rather than ``recover --salvage``: it changes no partition and takes no
lock, so it runs beside a broker, on a copy, or long after the recovery, on any quarantine
folder; ``recover`` keeps its one job and its exit statuses (RECOV-17).

Exit status: 0 every byte of the pieces was an intact batch; 1 some damaged bytes were
skipped (the usual case: a quarantine starts with the batch that stopped the recovery); 2
the command could not run.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click
from rich.markup import escape

from ..cli import EXIT_USAGE, json_option, stderr_console, stdout_console
from .safety import shown
from .salvage import SalvageError, SalvageResult, find_quarantines
from .salvage import salvage as salvage_records

__all__ = ["salvage"]


@click.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option(
    "--out", "-o", "out", required=True, type=click.Path(dir_okay=False, writable=True),
    help="The JSON Lines file to write (one record a line); refused when it exists.",
)  # fmt: skip
@json_option
def salvage(sources, out, as_json):
    """Write the intact records klogspec recover removed, for a client to produce again.

    Each SOURCE is a quarantine folder (<partition>/.klogspec-quarantine/<time>) or a
    partition directory (all its quarantine folders, oldest first). Every .log piece the
    manifest names is read in offset order; a batch is written only when it frames, its
    CRC-32C holds and its records decode; damaged bytes are skipped and the walk goes on at
    the next intact batch. Control batches are not written, records of an aborted
    transaction are left out, and those of a transaction with no marker are written with
    "transaction": "open". Each line of FILE holds topic, partition, offset, timestamp,
    timestampType, key, value and header values (base64), header keys (text), producerId.

    Exit status: 0 nothing damaged was skipped; 1 damaged bytes were skipped; 2 could not run.
    """
    err = stderr_console()
    target = Path(out)
    if target.exists():
        err.print(f"[red]error:[/] {escape(shown(target))} exists: salvage writes a new file")
        sys.exit(EXIT_USAGE)
    try:
        folders = [folder for source in sources for folder in find_quarantines(Path(source))]
        result = _write(folders, target)
    except (SalvageError, OSError) as exc:
        err.print(f"[red]error:[/] {escape(_message(exc))}")
        sys.exit(EXIT_USAGE)
    status = 1 if result.skipped else 0
    if as_json:
        summary = {**result.to_dict(), "out": shown(target), "exitStatus": status}
        click.echo(json.dumps(summary, separators=(",", ":")))
    else:
        _print(stdout_console(), result, target)
    sys.exit(status)


def _write(folders: list[Path], target: Path) -> SalvageResult:
    """Into a temporary file renamed at the end: a failed run leaves no partial FILE."""
    tmp = target.with_name(target.name + ".partial")
    try:
        with open(tmp, "x", encoding="utf-8") as handle:
            result = salvage_records(folders, handle)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return result


def _message(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return f"{shown(exc.filename or '')}: {exc.strerror or exc}"
    return str(exc)


def _print(console, result: SalvageResult, target: Path) -> None:
    console.print(
        f"{result.records} records of {result.batches} intact batches written to "
        f"{escape(shown(target))}"
    )
    for skipped in result.skipped:
        console.print(
            f"  skipped bytes [{skipped['from']}, {skipped['to']}) of "
            f"{escape(skipped['file'])}: no intact batch there"
        )
    if result.control_batches:
        console.print(f"  {result.control_batches} control batches (transaction markers) left out")
    if result.aborted_records:
        console.print(f"  {result.aborted_records} records of aborted transactions left out")
    if result.open_records:
        console.print(
            f"  [yellow]{result.open_records} records of transactions with no marker[/] "
            '("transaction": "open"): produce them only if their transaction committed'
        )
