"""``klogspec extract``: every record of some segments to Parquet, partitioned by topic and
partition (``OUT/topic=<t>/partition=<p>/part-*.parquet``).

The rows are the data source's record level (schema.py): compressed batches decoded,
control records kept with ``is_control`` and ``control_type`` set, or left out with
``skip_control``. Within each file, rows are in (file, position, offset) order. With
``decode``, internal topics' records carry ``key_decoded`` and ``value_decoded``, and the
tables of offset commits and metadata records are written beside them (decoded.py).
"""

from __future__ import annotations

from .datasource import NAME
from .splits import DEFAULT_SPLIT_SIZE


def read_segments(
    spark,
    paths: list[str],
    *,
    level: str = "record",
    on_error: str = "fail",
    split_size: int | str = DEFAULT_SPLIT_SIZE,
    decode: str = "none",
):
    """The data source over ``paths``, spread over the session's cores."""
    return (
        spark.read.format(NAME)
        .option("level", level)
        .option("on_error", on_error)
        .option("split_size", str(split_size))
        .option("min_partitions", str(spark.sparkContext.defaultParallelism))
        .option("decode", decode)
        .load(list(paths))
    )


def extract(
    spark,
    paths: list[str],
    out: str,
    *,
    skip_control: bool = False,
    on_error: str = "fail",
    split_size: int | str = DEFAULT_SPLIT_SIZE,
    mode: str = "errorifexists",
    decode: str = "none",
) -> dict[str, int]:
    """Write the records; with ``decode``, their decoded columns and the typed tables of
    decoded.py too (the rows of each, returned)."""
    from pyspark.sql import functions as F

    frame = read_segments(spark, paths, on_error=on_error, split_size=split_size, decode=decode)
    if skip_control:  # error rows (on_error=report) have no flag: they are kept
        frame = frame.where(F.col("is_control").isNull() | ~F.col("is_control"))
    (
        frame.sortWithinPartitions("topic", "partition", "file", "position", "offset")
        .write.mode(mode)
        .partitionBy("topic", "partition")
        .parquet(out)
    )
    if decode == "none":
        return {}
    from .decoded import write_decoded_tables

    return write_decoded_tables(spark, frame, out, mode)


def written(spark, out: str) -> list[tuple]:
    """(topic, partition, records, control records) of what ``out`` holds."""
    from pyspark.sql import functions as F

    counts = (
        spark.read.parquet(out)
        .groupBy("topic", "partition")
        .agg(F.count("*").alias("records"), F.sum(F.col("is_control").cast("int")))
        .orderBy("topic", "partition")
        .collect()
    )
    return [(r[0], r[1], r[2], r[3] or 0) for r in counts]
