"""Kafka segments on Apache Spark (docs/pipeline.md).

* ``kafka-segments``, a Spark Python data source (datasource.py): files found and split on
  the driver (layout.py, splits.py, tiered.py), read by each task from its own byte range
  (reader.py, storage.py) into Arrow chunks (chunks.py) of the columns of schema.py;
* ``klogspec scan`` (scan.py): ``klogspec verify``'s checks, segments checked as a Spark
  job, partitions on the driver, and the integrity report;
* ``klogspec extract`` (extract.py): records to Parquet by topic and partition; with
  ``--latest-per-key``, the records a complete cleaning would keep (compacted.py);
* cli.py (the two commands), jobs.py (them under spark-submit), session.py (the embedded
  local session).

Spark is imported only inside functions: importing ``pipeline`` does not start a JVM.
"""
