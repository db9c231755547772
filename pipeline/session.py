"""The Spark session every pipeline command runs in, with the data source registered.

* Under ``spark-submit`` (pipeline/jobs.py), or when a session is already active, that
  session is used as it is: the cluster's master, addresses and Python are its own.
* Otherwise an embedded one is started, ``local[*]`` unless ``master`` says otherwise,
  set up to need nothing beyond ``pip install``: for a local master the Python workers
  run this interpreter (``sys.executable``, unless PYSPARK_PYTHON is set: a ``python3``
  found on PATH may lack pyarrow), the driver binds to 127.0.0.1 (no traffic leaves the
  machine, no hostname lookup), and the web UI is off.

``jvm_output`` names a file for everything the JVM prints (its start-up warnings, log4j's
lines, the stack traces of failed tasks, and the stderr of the Python workers it forks in
local mode): the commands keep it off the terminal unless ``--spark-log-level`` asks.
"""

from __future__ import annotations

import os
import sys

LOG_LEVELS = ("ALL", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF")


def _local_parallelism(master: str) -> int:
    inside = master[master.find("[") + 1 : master.find("]")] if "[" in master else "1"
    if inside.startswith("*"):
        return os.cpu_count() or 2
    return max(1, int(inside.split(",")[0]))


def spark_session(
    master: str | None = None,
    conf: dict[str, str] | None = None,
    *,
    quiet: bool = False,
    log_level: str | None = None,
    jvm_output: str | None = None,
):
    """The active session, else a new one (see the module docstring); ``conf`` adds Spark
    settings, ``quiet`` turns off Spark's console progress bar and keeps its logging to
    errors unless ``log_level`` names another level; ``jvm_output`` is where a JVM started
    here writes its stdout and stderr (None: this process's)."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        settings = {"spark.app.name": "klogspec"}
        if "PYSPARK_GATEWAY_PORT" not in os.environ:  # not under spark-submit
            settings.update(_embedded(master or "local[*]", quiet))
        settings.update(conf or {})
        builder = SparkSession.builder
        if jvm_output is not None and "PYSPARK_GATEWAY_PORT" not in os.environ:
            _start_context(settings, jvm_output)  # the settings are the context's
        else:
            for key, value in settings.items():
                builder = builder.config(key, value)
        spark = builder.getOrCreate()
        if quiet or log_level:
            spark.sparkContext.setLogLevel(log_level or "ERROR")
    register(spark)
    return spark


def _embedded(master: str, quiet: bool) -> dict[str, str]:
    settings = {"spark.master": master, "spark.ui.enabled": "false"}
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        settings["spark.driver.bindAddress"] = "127.0.0.1"
        settings["spark.driver.host"] = "127.0.0.1"
        settings["spark.sql.shuffle.partitions"] = str(_local_parallelism(master))
    if quiet:
        settings["spark.ui.showConsoleProgress"] = "false"
    return settings


def _start_context(settings: dict[str, str], jvm_output: str) -> None:
    """Start the JVM with its output going to ``jvm_output``, and the SparkContext in it
    (the session builder then finds it active). pyspark's own launcher, given the file."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    spark_conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    with open(jvm_output, "ab") as output:  # the JVM keeps its own descriptor
        gateway = launch_gateway(spark_conf, popen_kwargs={"stdout": output, "stderr": output})
    SparkContext(conf=spark_conf, gateway=gateway)


def register(spark) -> None:
    from .datasource import KafkaSegmentsDataSource

    spark.dataSource.register(KafkaSegmentsDataSource)
