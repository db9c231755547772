"""The Spark session every pipeline command runs in, with the data source registered.

* Under ``spark-submit`` (pipeline/jobs.py), or when a session is already active, that
  session is used as it is: the cluster's master, addresses and Python are its own.
* Otherwise an embedded one is started, ``local[*]`` unless ``master`` says otherwise,
  set up to need nothing beyond ``pip install``: for a local master the Python workers
  run this interpreter (``sys.executable``, unless PYSPARK_PYTHON is set: a ``python3``
  found on PATH may lack pyarrow), the driver binds to 127.0.0.1 (no traffic leaves the
  machine, no hostname lookup), and the web UI is off.
"""

from __future__ import annotations

import os
import sys


def _local_parallelism(master: str) -> int:
    inside = master[master.find("[") + 1 : master.find("]")] if "[" in master else "1"
    if inside.startswith("*"):
        return os.cpu_count() or 2
    return max(1, int(inside.split(",")[0]))


def spark_session(
    master: str | None = None, conf: dict[str, str] | None = None, *, quiet: bool = False
):
    """The active session, else a new one (see the module docstring); ``conf`` adds Spark
    settings, ``quiet`` keeps Spark's own logging to errors (the CLI's choice)."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        builder = SparkSession.builder.appName("klogspec")
        if "PYSPARK_GATEWAY_PORT" not in os.environ:  # not under spark-submit
            master = master or "local[*]"
            builder = builder.master(master).config("spark.ui.enabled", "false")
            if master.startswith("local"):
                os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
                os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
                os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
                shuffle = str(_local_parallelism(master))
                builder = (
                    builder.config("spark.driver.bindAddress", "127.0.0.1")
                    .config("spark.driver.host", "127.0.0.1")
                    .config("spark.sql.shuffle.partitions", shuffle)
                )
            if quiet:
                builder = builder.config("spark.ui.showConsoleProgress", "false")
        for key, value in (conf or {}).items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        if quiet:
            spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def register(spark) -> None:
    from .datasource import KafkaSegmentsDataSource

    spark.dataSource.register(KafkaSegmentsDataSource)
