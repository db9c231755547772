"""``klogspec scan`` and ``klogspec extract`` (entry points of ``klogspec.commands``).

Both start an embedded Spark (``local[*]``) unless ``--master`` names a cluster, or run
in the session ``spark-submit`` gave them (pipeline/jobs.py). Spark is imported only
when a command runs, so ``klogspec --help`` stays fast. Exit statuses are verify's: 0
clean, 1 findings at or above ``--fail-on``, 2 could not run.

What the JVM prints (its start-up warnings, log4j, failed tasks' stack traces and Python
worker tracebacks) goes to a file, named when the command fails, unless
``--spark-log-level`` asks for it on the terminal; the commands say what they are doing
on stderr instead (progress.py).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import tempfile
import time

import click
from rich.markup import escape
from rich.table import Table

from klogspec.cli import (
    EXIT_FINDINGS,
    EXIT_USAGE,
    json_option,
    no_progress_option,
    stderr_console,
    stdout_console,
)
from klogspec.verify import Severity, exit_status
from reference_impl.messages import DECODER_NAMES

from .compacted import DELETE_RETENTION_MS, MIN_COMPACTION_LAG_MS, CleanAt
from .progress import JobProgress, Status
from .session import LOG_LEVELS

_err = stderr_console()


def _conf(values: tuple[str, ...]) -> dict[str, str]:
    conf = {}
    for value in values:
        key, sep, setting = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{value!r} is not KEY=VALUE", param_hint="--conf")
        conf[key.strip()] = setting.strip()
    return conf


def spark_options(command):
    command = no_progress_option(command)
    command = click.option(
        "--spark-log-level", type=click.Choice(LOG_LEVELS, case_sensitive=False),
        help="Show Spark's own output (JVM, log4j at this level, task failures) on the "
             "terminal; by default it goes to a file named only if the command fails.",
    )(command)  # fmt: skip
    command = click.option(
        "--conf", "conf", multiple=True, metavar="KEY=VALUE",
        help="A Spark setting (repeatable), e.g. spark.executor.memory=4g.",
    )(command)  # fmt: skip
    return click.option(
        "--master", help="Spark master URL (default: local[*], or spark-submit's)."
    )(command)


class _JvmLog:
    """The file the JVM's output goes to: removed at exit unless an error named it."""

    def __init__(self) -> None:
        handle, self.path = tempfile.mkstemp(prefix="klogspec-spark-", suffix=".log")
        os.close(handle)
        self.keep = False
        atexit.register(self.remove)

    def named(self) -> str:
        self.keep = True
        return f" (Spark's output: {self.path})"

    def remove(self) -> None:
        if not self.keep:
            with contextlib.suppress(OSError):
                os.remove(self.path)


def _session(master, conf, log_level, status: Status):
    """The session (session.py), with status lines; exit 2 when Spark cannot start."""
    from pyspark.sql import SparkSession

    from .session import spark_session

    running = SparkSession.getActiveSession() is not None
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit started the JVM
    # the JVM's output goes to a file only when the JVM is started here
    log = _JvmLog() if not (running or submitted or log_level) else None
    if not running:
        status.say(f"starting Spark ({master or ('spark-submit' if submitted else 'local[*]')})")
    started = time.perf_counter()
    try:
        spark = spark_session(
            master, _conf(conf), quiet=True, log_level=log_level and log_level.upper(),
            jvm_output=log.path if log else None,
        )  # fmt: skip
    except Exception as exc:  # no Java, a bad --conf, an unreachable master
        _err.print(f"[red]error:[/] Spark did not start: {escape(_cause(exc)[0])}"
                   f"{escape(log.named()) if log else ''}")  # fmt: skip
        sys.exit(EXIT_USAGE)
    context = spark.sparkContext
    status.say(f"Spark ready in {time.perf_counter() - started:.1f} s: {context.master}, "
               f"{context.defaultParallelism} cores")  # fmt: skip
    return spark, log, time.perf_counter() - started


def _status(progress: bool, as_json: bool) -> Status:
    spark_submit = "PYSPARK_GATEWAY_PORT" in os.environ  # it merges stderr into stdout
    return Status(_err, progress and not (as_json and spark_submit))


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--out", help="Write the report here: segments/ and findings/ (Parquet), "
                            "summary.json.")  # fmt: skip
@click.option("--deep", is_flag=True, help="Also decode every record (varints, counts, codecs).")
@click.option(
    "--fail-on", type=click.Choice(["warning", "error"]), default="warning", show_default=True,
    help="The least severe finding that makes the exit status 1.",
)  # fmt: skip
@click.option(
    "--max-message-bytes", type=click.IntRange(min=0),
    help="Report entries longer than this (FRAME-11); no limit by default.",
)  # fmt: skip
@spark_options
@json_option
def scan(paths, out, deep, fail_on, max_message_bytes, master, conf, spark_log_level, progress,
         as_json):  # fmt: skip
    """Verify Kafka log directories on Spark: klogspec verify's checks and findings.

    Each DIR is a partition directory, a log directory or a tree holding log directories,
    as for verify, on a path every executor can read. The segments are checked in
    parallel, then each partition and log directory on the driver; the findings are
    verify's, in verify's order (printed as verify prints them, or as JSON Lines with
    --json). With --out, also writes the integrity report: Parquet with one row per
    segment and one per finding, and a JSON summary.

    Exit status: 0 clean (info findings allowed); 1 when a finding is at least as severe
    as --fail-on; 2 when the command cannot run.
    """
    from klogspec.verify.cli import JsonRenderer, TableRenderer

    from .scan import Timing, write_report
    from .scan import scan as run_scan

    status = _status(progress, as_json)
    spark, log, spark_seconds = _session(master, conf, spark_log_level, status)
    run = run_scan(spark, list(paths), deep=deep, max_message_bytes=max_message_bytes,
                   status=status)  # fmt: skip
    for message in run.warnings:
        _err.print(f"[yellow]warning:[/] {escape(message)}")
    if not run.plans:
        _err.print("[red]error:[/] nothing to verify")
        sys.exit(EXIT_USAGE)
    stats = run.stats
    code = EXIT_USAGE if stats.io_errors else exit_status(stats.findings, Severity(fail_on))
    renderer = JsonRenderer() if as_json else TableRenderer(stdout_console())
    for finding in run.findings:
        renderer.finding(finding)
    for problem in stats.io_errors:
        _err.print(f"[red]unreadable:[/] {escape(problem)}")
    renderer.finish(stats, code)
    if out:
        timing = Timing(status.started, spark_seconds)
        try:
            write_report(spark, run, out, code, timing)
        except Exception as exc:  # an unwritable --out: the findings are printed already
            _err.print(f"[red]error:[/] the report could not be written: "
                       f"{escape(_cause(exc)[0])}{escape(log.named()) if log else ''}")  # fmt: skip
            sys.exit(EXIT_USAGE)
        if not as_json:  # spark-submit merges stderr into stdout: keep JSON output clean
            _err.print(f"report: {escape(out)} (segments/, findings/, summary.json)")
    sys.exit(code)


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", required=True, help="Output directory (or URL) of the Parquet dataset.")
@click.option("--skip-control", is_flag=True, help="Leave out control records (transaction "
                                                   "markers, KRaft control records).")  # fmt: skip
@click.option(
    "--on-error", type=click.Choice(["fail", "skip", "report"]), default="fail",
    show_default=True, help="A corrupt batch fails the job, is skipped, or is written as an "
                            "error row (error_rule, error_category, error_message).",
)  # fmt: skip
@click.option("--split-size", default="128m", show_default=True,
              help="Bytes per task of a big segment (e.g. 64m, 1g).")  # fmt: skip
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists.")
@click.option(
    "--decode", type=click.Choice(DECODER_NAMES), default="none", is_flag=False,
    flag_value="auto", show_default=True,
    help="Decode internal topics' keys and values (key_decoded, value_decoded) and write "
    "OUT/_offset_commits and OUT/_cluster_metadata; auto picks by topic.",
)  # fmt: skip
@click.option(
    "--latest-per-key", "latest", is_flag=True,
    help="Only the records a complete cleaning of each partition at --clean-at would keep "
    "(the table view of a compacted topic), with their delete_horizon_ms.",
)  # fmt: skip
@click.option("--clean-at", type=int, default=None, metavar="MS",
              help="The cleaning's time, ms since the epoch (default: now).")  # fmt: skip
@click.option("--delete-retention-ms", type=click.IntRange(min=0), default=DELETE_RETENTION_MS,
              show_default=True, help="The topics' delete.retention.ms.")  # fmt: skip
@click.option("--min-compaction-lag-ms", type=click.IntRange(min=0),
              default=MIN_COMPACTION_LAG_MS, show_default=True,
              help="The topics' min.compaction.lag.ms.")  # fmt: skip
@spark_options
@json_option
def extract(paths, out, skip_control, on_error, split_size, overwrite, decode, latest, clean_at,
            delete_retention_ms, min_compaction_lag_ms, master, conf, spark_log_level,
            progress, as_json):  # fmt: skip
    """Write the records of Kafka segments to Parquet, partitioned by topic and partition.

    Each PATH is a .log file, a partition or log directory, a tree of them, or a URL
    (s3://, gs://, hdfs://...). Compressed batches are decoded; control records are kept
    and flagged (is_control, control_type) unless --skip-control. The columns are the
    kafka-segments data source's record level (docs/pipeline.md); each file holds its
    topic and partition too. With --decode, the records of internal topics also carry
    key_decoded and value_decoded (JSON), and two typed tables are written:
    OUT/_offset_commits (group, topic, partition, offset, leader epoch, metadata, commit
    and expire time) and OUT/_cluster_metadata (each metadata record's type, version,
    fields and the topic and partition it describes).

    With --latest-per-key, each partition's records are cut to those a complete cleaning
    at --clean-at would keep (spec/behaviour/compaction.md §8): the latest record of each
    key, tombstones before their delete horizon, no aborted transaction, markers while
    their transaction has data; the partition from its first open transaction or its
    first segment newer than --min-compaction-lag-ms on is kept whole.

    Exit status: 0 written; 1 a corrupt batch stopped it (--on-error fail); 2 the command
    could not run (a missing path, OUT exists).
    """
    from .datasource import parse_size
    from .decoded import decoded_table_rows
    from .extract import extract as run_extract

    try:
        parse_size(split_size)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--split-size")
    if latest and on_error == "report":
        raise click.BadParameter("--latest-per-key needs fail or skip", param_hint="--on-error")
    clean = None
    if latest:
        now = clean_at if clean_at is not None else int(time.time() * 1000)
        clean = CleanAt(now, delete_retention_ms, min_compaction_lag_ms)
    status = _status(progress, as_json)
    total = _listed(paths, status)
    spark, log, _ = _session(master, conf, spark_log_level, status)
    try:
        with JobProgress(spark, "extracting", total if status.enabled else 0, _err):
            counts = run_extract(
                spark, list(paths), out, skip_control=skip_control, on_error=on_error,
                split_size=split_size, overwrite=overwrite, decode=decode, latest=clean,
            )  # fmt: skip
    except FileExistsError as exc:
        _err.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(EXIT_USAGE)
    except Exception as exc:  # Spark wraps executors' errors: show the line of ours
        message, corrupt = _cause(exc)
        _err.print(f"[red]error:[/] {escape(message)}{escape(log.named()) if log else ''}")
        sys.exit(EXIT_FINDINGS if corrupt else EXIT_USAGE)
    records = sum(c.records for c in counts)
    tables = {} if decode == "none" else decoded_table_rows(spark, out)
    status.say(f"wrote {records} records of {len(counts)} partitions to {out}")
    if as_json:
        for c in counts:
            line = {"topic": c.topic, "partition": c.partition, "records": c.records,
                    "controlRecords": c.control}  # fmt: skip
            click.echo(_json(line))
        summary = {"type": "summary", "out": out, "records": records}
        click.echo(_json(summary | ({"decodedTables": tables} if tables else {})))
        return
    table = Table("topic", "partition", "records", "control records", title=f"{out}")
    for c in counts:
        table.add_row(escape(str(c.topic)), str(c.partition), str(c.records), str(c.control))
    stdout_console().print(table)
    for name, rows in tables.items():
        stdout_console().print(f"{escape(out)}/_{name}: {rows} rows")


def _listed(paths, status: Status) -> int:
    """Lists the segments for the status line and the progress bar's total (the data
    source lists them again when Spark plans the read); exit 2 for a path not found."""
    from .layout import discover_segments

    try:
        segments = discover_segments(list(paths))
    except (OSError, ValueError) as exc:
        _err.print(f"[red]error:[/] {escape(str(exc))}")
        sys.exit(EXIT_USAGE)
    total = sum(s.size for s in segments)
    partitions = len({(s.topic, s.partition) for s in segments})
    status.say(f"listed {len(segments)} segments of {partitions} partitions, {total:,} bytes")
    return total


def _json(value) -> str:
    import json

    return json.dumps(value, separators=(",", ":"))


_CORRUPT = ("CorruptRecordError", "KafkaLogError")
_OTHER = ("SegmentUnreadableError", "FileNotFoundError", "AnalysisException", "OSError")


def _cause(exc: Exception) -> tuple[str, bool]:
    """The line naming what went wrong in a Spark failure, and whether it is a corrupt
    batch: our typed errors read '<file>, position <p>, offset <o>: <category>: ...'."""
    text = str(exc)
    for line in text.splitlines():
        for marker in _CORRUPT + _OTHER:
            if f"{marker}: " in line:
                return line.split(f"{marker}: ", 1)[1].strip(), marker in _CORRUPT
    lines = text.strip().splitlines()
    java = [line[2:] for line in lines if line.startswith(": ")]  # a Py4JJavaError's cause
    return (java or lines or [type(exc).__name__])[0], False
