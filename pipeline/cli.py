"""``klogspec scan`` and ``klogspec extract`` (entry points of ``klogspec.commands``).

Both start an embedded Spark (``local[*]``) unless ``--master`` names a cluster, or run
in the session ``spark-submit`` gave them (pipeline/jobs.py). Spark is imported only
when a command runs, so ``klogspec --help`` stays fast. Exit statuses are verify's: 0
clean, 1 findings at or above ``--fail-on``, 2 could not run.
"""

from __future__ import annotations

import sys

import click
from rich.markup import escape
from rich.table import Table

from klogspec.cli import EXIT_FINDINGS, EXIT_USAGE, json_option, stderr_console, stdout_console
from klogspec.verify import Severity, exit_status
from reference_impl.messages import DECODER_NAMES

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
    command = click.option(
        "--conf", "conf", multiple=True, metavar="KEY=VALUE",
        help="A Spark setting (repeatable), e.g. spark.executor.memory=4g.",
    )(command)  # fmt: skip
    return click.option(
        "--master", help="Spark master URL (default: local[*], or spark-submit's)."
    )(command)


def _session(master, conf):
    from .session import spark_session

    return spark_session(master, _conf(conf), quiet=True)


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
def scan(paths, out, deep, fail_on, max_message_bytes, master, conf, as_json):
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

    from .scan import scan as run_scan
    from .scan import write_report

    spark = _session(master, conf)
    run = run_scan(spark, list(paths), deep=deep, max_message_bytes=max_message_bytes)
    for message in run.warnings:
        _err.print(f"[yellow]warning:[/] {escape(message)}")
    if not run.plans:
        _err.print("[red]error:[/] nothing to verify")
        sys.exit(EXIT_USAGE)
    stats = run.stats
    status = EXIT_USAGE if stats.io_errors else exit_status(stats.findings, Severity(fail_on))
    renderer = JsonRenderer() if as_json else TableRenderer(stdout_console())
    for finding in run.findings:
        renderer.finding(finding)
    for problem in stats.io_errors:
        _err.print(f"[red]unreadable:[/] {escape(problem)}")
    renderer.finish(stats, status)
    if out:
        try:
            write_report(spark, run, out, status)
        except Exception as exc:  # an unwritable --out: the findings are printed already
            _err.print(f"[red]error:[/] the report could not be written: {escape(_cause(exc)[0])}")
            sys.exit(EXIT_USAGE)
        if not as_json:  # spark-submit merges stderr into stdout: keep JSON output clean
            _err.print(f"report: {escape(out)} (segments/, findings/, summary.json)")
    sys.exit(status)


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
@spark_options
@json_option
def extract(
    paths, out, skip_control, on_error, split_size, overwrite, decode, master, conf, as_json
):  # fmt: skip
    """Write the records of Kafka segments to Parquet, partitioned by topic and partition.

    Each PATH is a .log file, a partition or log directory, a tree of them, or a URL
    (s3://, gs://, hdfs://...). Compressed batches are decoded; control records are kept
    and flagged (is_control, control_type) unless --skip-control. The columns are the
    kafka-segments data source's record level (docs/pipeline.md). With --decode, the
    records of internal topics also carry key_decoded and value_decoded (JSON), and two
    typed tables are written: OUT/_offset_commits (group, topic, partition, offset, leader
    epoch, metadata, commit and expire time) and OUT/_cluster_metadata (each metadata
    record's type, version, fields and the topic and partition it describes).

    Exit status: 0 written; 1 a corrupt batch stopped it (--on-error fail); 2 the command
    could not run (a missing path, OUT exists).
    """
    from .datasource import parse_size
    from .extract import extract as run_extract
    from .extract import written

    try:
        parse_size(split_size)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--split-size")
    spark = _session(master, conf)
    try:
        tables = run_extract(
            spark, list(paths), out, skip_control=skip_control, on_error=on_error,
            split_size=split_size, mode="overwrite" if overwrite else "errorifexists",
            decode=decode,
        )  # fmt: skip
    except Exception as exc:  # Spark wraps executors' errors: show the line of ours
        message, corrupt = _cause(exc)
        _err.print(f"[red]error:[/] {escape(message)}")
        sys.exit(EXIT_FINDINGS if corrupt else EXIT_USAGE)
    counts = written(spark, out)
    if as_json:
        for topic, partition, records, control in counts:
            line = {"topic": topic, "partition": partition, "records": records,
                    "controlRecords": control}  # fmt: skip
            click.echo(_json(line))
        summary = {"type": "summary", "out": out, "records": sum(c[2] for c in counts)}
        click.echo(_json(summary | ({"decodedTables": tables} if tables else {})))
        return
    table = Table("topic", "partition", "records", "control records", title=f"{out}")
    for topic, partition, records, control in counts:
        table.add_row(escape(str(topic)), str(partition), str(records), str(control))
    stdout_console().print(table)
    for name, rows in tables.items():
        stdout_console().print(f"{escape(out)}/_{name}: {rows} rows")


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
