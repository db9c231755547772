"""pipeline/jobs.py under spark-submit: the same findings as verify, in the session spark-submit
made (a fresh JVM: about half a minute, so behind --runslow)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from klogspec.verify.cli import verify

JOBS = Path(__file__).resolve().parents[2] / "pipeline" / "jobs.py"


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.corpus
def test_spark_submit_runs_scan(corpus, tmp_path):
    submit = shutil.which("spark-submit")
    if submit is None:
        pytest.skip("spark-submit is not on PATH")
    target = corpus / "snappy-v2"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    command = [
        submit, "--master", "local[2]", "--conf", "spark.ui.enabled=false",
        "--conf", "spark.driver.bindAddress=127.0.0.1", "--conf", "spark.driver.host=127.0.0.1",
        str(JOBS), "scan", "--json", "--out", str(tmp_path / "report"), str(target),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    # spark-submit merges the Python driver's stderr into stdout: keep the JSON lines
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    want = CliRunner().invoke(verify, ["--json", str(target)])
    assert done.returncode == want.exit_code, done.stdout[-2000:]
    assert [json.loads(line) for line in lines] == [
        json.loads(line) for line in want.stdout.splitlines()
    ]
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["master"] == "local[2]" and summary["segments"] == 52
