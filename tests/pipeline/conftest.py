"""One Spark session for every pipeline test: local[2], loopback only, workers on this
interpreter (pipeline.session does all three), stopped at the end of the run."""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("pyspark", reason="the spark extra is not installed")


@pytest.fixture(scope="session")
def spark():
    from pipeline.session import spark_session

    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = spark_session("local[2]", quiet=True)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def log_dir(tmp_path_factory):
    from pipeline_trees import build_log_dir

    return build_log_dir(tmp_path_factory.mktemp("pipeline"))
