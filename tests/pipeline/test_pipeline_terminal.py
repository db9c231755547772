"""What a data engineer sees on the terminal: each step said as it happens, Spark's own output
(JVM warnings, log4j, Python worker tracebacks) kept off the terminal in a file named only
when the command fails, and ``summary.json``'s ``seconds`` the whole command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from pipeline_trees import batch_positions, data_batch, flip_byte, write_segment

import pipeline.session
from pipeline.cli import scan

pytestmark = pytest.mark.spark

_SPARK_NOISE = ("log4j", "WARN", "Using incubator modules", "setLogLevel", "Traceback")


def corrupt_partition(tmp_path):
    directory = tmp_path / "logs" / "bad-0"
    directory.mkdir(parents=True)
    write_segment(directory, 0, [data_batch(0), data_batch(3)])
    log = directory / f"{0:020d}.log"
    flip_byte(log, batch_positions(log)[1] + 70)
    return directory, log


def test_extract_on_error_fail_prints_its_steps_and_one_clear_error(tmp_path):
    """A fresh process, so a JVM of its own: before this fix it printed five lines of JVM and
    log4j noise, then five Python worker tracebacks, then the error line (issue 20 §3, §5)."""
    directory, log = corrupt_partition(tmp_path)
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, "-c", "from klogspec.cli import main; main()", "extract", "--master", "local[1]",
         "--out", str(tmp_path / "out"), str(directory)],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert not [w for w in _SPARK_NOISE if w in done.stderr + done.stdout], done.stderr
    lines = done.stderr.splitlines()
    steps = [re.sub(r"^\s*[\d.]+s ", "", line) for line in lines[:-1]]
    assert steps[0] == "listed 1 segments of 1 partitions, 224 bytes"
    assert steps[1] == "starting Spark (local[1])"
    assert steps[2].startswith("Spark ready in ") and steps[2].endswith("local[1], 1 cores")
    error = lines[-1]
    assert error.startswith(f"error: {log}, position {batch_positions(log)[1]}, offset 3: "
                            "crc_mismatch: ")  # fmt: skip
    spark_log = re.search(r"\(Spark's output: (\S+\.log)\)$", error).group(1)
    try:
        kept = Path(spark_log).read_text()
        assert "Traceback" in kept and "crc_mismatch" in kept  # the details are there
    finally:
        os.remove(spark_log)
    assert not (tmp_path / "out").exists()  # a failed extract leaves nothing behind


def test_summary_seconds_are_the_whole_command(spark, tmp_path, monkeypatch):
    """``seconds`` counts Spark's start (here a session that takes 0.5 s to come up) and the
    report's writing, not only the checks; ``sparkSeconds`` is the start alone."""
    directory, _ = corrupt_partition(tmp_path)
    real = pipeline.session.spark_session

    def slow_start(*args, **kwargs):
        time.sleep(0.5)
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline.session, "spark_session", slow_start)
    result = CliRunner().invoke(scan, ["--out", str(tmp_path / "report"), str(directory)])
    assert result.exit_code == 1, result.output
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["sparkSeconds"] >= 0.5
    assert summary["seconds"] >= summary["sparkSeconds"] + 0.01  # the checks and the report
    steps = [re.sub(r"^\s*[\d.]+s ", "", line) for line in result.stderr.splitlines()]
    assert steps[0].startswith("Spark ready in ")
    assert steps[1:3] == ["listed 1 segments of 1 partitions, 224 bytes",
                          "checked 1 segments: 1 findings"]  # fmt: skip


def test_the_progress_bar_follows_the_spark_job_s_tasks(spark):
    """On a terminal and over 64 MiB, the bar moves with the job's completed tasks (polled
    from Spark's status tracker) and ends full when the job is done."""
    import io

    from rich.console import Console

    from pipeline.progress import JobProgress

    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    total = 1 << 30
    with JobProgress(spark, "checking", total, console) as progress:
        spark.sparkContext.parallelize(range(6), 6).map(lambda n: time.sleep(0.3) or n).collect()
    assert progress.bar.completed == total
    assert progress.bar.bar.tasks[0].description == "checking: 6 of 6 tasks"
    with JobProgress(spark, "checking", 1 << 20, console) as small:  # under 64 MiB: no bar
        spark.sparkContext.parallelize(range(2), 2).collect()
    assert small.bar.bar is None


def test_a_missing_path_is_said_before_spark_starts(tmp_path, monkeypatch):
    """extract lists its paths first: a missing one is exit 2 with its name, without the
    20-40 s of starting Spark."""
    from pipeline.cli import extract

    def no_spark(*args, **kwargs):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(pipeline.session, "spark_session", no_spark)
    missing = tmp_path / "nowhere"
    result = CliRunner().invoke(extract, ["--out", str(tmp_path / "out"), str(missing)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {missing}: no such file or directory"
