"""The pipeline's commands as a ``spark-submit`` application.

    spark-submit --master yarn --deploy-mode client \\
        --archives klogspec-env.tar.gz#env --conf spark.pyspark.python=./env/bin/python \\
        pipeline/jobs.py scan /mnt/kafka/data --out hdfs:///reports/kafka-2024-06-01

    spark-submit ... pipeline/jobs.py extract s3://bucket/tiered/ --out s3://bucket/records/

The arguments are those of ``klogspec scan`` / ``klogspec extract`` (docs/pipeline.md);
the session is the one spark-submit made (its master, resources and Python), never an
embedded one. The packages ``pipeline`` and ``reference_impl`` must be importable on the
driver and the executors: an installed wheel, a packed environment (``--archives``) or
``--py-files`` (see docs/pipeline.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import pipeline  # noqa: F401
except ImportError:  # run from a source checkout: the repository root holds the packages
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from .cli import extract, scan


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def jobs() -> None:
    """klogspec's Spark commands, for spark-submit."""


jobs.add_command(scan)
jobs.add_command(extract)

if __name__ == "__main__":
    jobs(prog_name="jobs.py")
