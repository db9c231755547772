"""The ``kafka-segments`` Spark data source (``pyspark.sql.datasource``, PySpark >= 4.0).

    spark.dataSource.register(KafkaSegmentsDataSource)   # pipeline.session does it
    df = (spark.read.format("kafka-segments")
          .option("level", "record")        # or "batch"
          .option("on_error", "fail")       # or "skip", "report"
          .option("split_size", "128m")     # bytes per input partition of a big segment
          .option("decode", "auto")         # internal topics' keys and values (decoded.py)
          .load("/var/lib/kafka/data"))     # or .load([path, ...]); URLs work too

Planning (``partitions()``, on the driver) lists the files and cuts them into byte
ranges: one per segment, several for a segment bigger than the split size (splits.py).
Each input partition is a list of ranges worth about a split (every range counted
``open_cost`` bytes more): a big segment's range alone, or many small segments, since a
Python task costs tens of milliseconds of its own. ``read()`` (on executors) opens each
file itself and yields Arrow record batches of at most 10,000 rows (reader.py); no file
is ever held in memory whole. The schema is schema.py's.
"""

from __future__ import annotations

import json
import os
import re

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from reference_impl.messages import DECODER_NAMES

from .schema import arrow_schema, spark_schema
from .splits import DEFAULT_OPEN_COST, DEFAULT_SPLIT_SIZE, SegmentRange

NAME = "kafka-segments"
_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)


def parse_size(text: str, *, zero: bool = False) -> int:
    """'134217728', '128m', '1g', '512KiB' -> bytes.

    >>> parse_size("128m")
    134217728
    """
    match = _SIZE.match(str(text))
    if match is None or int(match.group(1)) < (0 if zero else 1):
        raise ValueError(f"expected a number of bytes (e.g. 128m), not {text!r}")
    power = " kmgt".index(match.group(2).lower() or " ")
    return int(match.group(1)) << (10 * power)


class SegmentPartition(InputPartition):
    """One input partition: a list of ``SegmentRange`` (picklable plain data)."""

    def __init__(self, value: list[SegmentRange]) -> None:
        super().__init__(value)


class KafkaSegmentsDataSource(DataSource):
    """Kafka segment files as rows of records or batches."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def _options(self) -> tuple[list[str], str, str, int]:
        options = self.options
        paths = json.loads(options["paths"]) if "paths" in options else []
        if "path" in options:
            paths.append(options["path"])
        if not paths:
            raise ValueError(f"{NAME}: give a path: .load(path) or .load([path, ...])")
        level = options.get("level", "record")
        on_error = options.get("on_error", "fail")
        split_size = parse_size(options.get("split_size", str(DEFAULT_SPLIT_SIZE)))
        open_cost = parse_size(options.get("open_cost", str(DEFAULT_OPEN_COST)), zero=True)
        min_partitions = int(options.get("min_partitions", os.cpu_count() or 1))
        arrow_schema(level, on_error)  # validates both
        return paths, level, on_error, (split_size, open_cost, max(1, min_partitions))

    def _decode(self, level: str) -> str:
        """The ``decode`` option: a decoder of reference_impl.messages, ``auto`` or ``none``."""
        decode = self.options.get("decode", "none")
        if decode not in DECODER_NAMES or (decode != "none" and level != "record"):
            raise ValueError(
                f"{NAME}: decode must be one of {', '.join(DECODER_NAMES)} "
                f"(and needs level=record), not {decode!r}"
            )
        return decode

    def schema(self):
        _, level, on_error, _ = self._options()
        return _with_decoded(spark_schema(level, on_error), self._decode(level))

    def reader(self, schema) -> DataSourceReader:
        paths, level, on_error, sizes = self._options()
        decode = self._decode(level)
        expected = _with_decoded(spark_schema(level, on_error), decode)
        if schema != expected:
            raise ValueError(
                f"{NAME} has a fixed schema for level={level}, on_error={on_error}; "
                f"do not pass .schema(): select or cast the columns instead"
            )
        return KafkaSegmentsReader(paths, level, on_error, sizes, decode)


def _with_decoded(schema, decode: str):
    """The record level's columns, and decoded.py's two when ``decode`` is not none."""
    if decode == "none":
        return schema
    from .decoded import DECODED_COLUMNS, spark_schema

    return StructType(schema.fields + spark_schema(DECODED_COLUMNS).fields)


class KafkaSegmentsReader(DataSourceReader):
    def __init__(
        self, paths: list[str], level: str, on_error: str, sizes: tuple, decode: str = "none"
    ) -> None:
        self.paths, self.level, self.on_error = paths, level, on_error
        self.split_size, self.open_cost, self.min_partitions = sizes
        self.decode = decode

    def partitions(self):
        from .splits import plan_partitions

        planned = plan_partitions(
            self.paths, self.split_size, open_cost=self.open_cost,
            min_partitions=self.min_partitions,
        )  # fmt: skip
        return [SegmentPartition(ranges) for ranges in planned] or [SegmentPartition([])]

    def read(self, partition: SegmentPartition):
        from .reader import read_range

        for segment_range in partition.value:
            batches = read_range(segment_range, self.level, self.on_error)
            if self.decode == "none":
                yield from batches
            else:
                from .decoded import add_decoded

                yield from (add_decoded(batch, self.decode) for batch in batches)
