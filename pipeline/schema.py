"""The columns of the ``kafka-segments`` data source, declared once as data.

Each column is (name, Arrow type, what it holds). The Spark schema is derived from the
Arrow one, and docs/pipeline.md's schema tables are checked against these lists by the
tests. Names follow Kafka's (``baseOffset`` -> ``base_offset``, DumpLogSegments' columns).

* ``level=record``: one row per record; the batch's fields repeated on each of its rows.
* ``level=batch``: one row per batch (legacy v0/v1: per shallow message); records are not
  decoded, except a legacy compressed wrapper's, whose base offset and count need them.
* ``on_error=report`` adds three columns; a corrupt batch is then one row with its
  location and ``error_*`` set, every other column null.
"""

from __future__ import annotations

import pyarrow as pa

# Spark's Kafka source types ``timestamp`` as a timestamp. Spark's TimestampType is
# microseconds (Arrow's us/UTC, which a Python data source must return); the rows are built
# from the stored milliseconds as MILLIS and cast, and extract writes them back as MILLIS.
MILLIS = pa.timestamp("ms", tz="UTC")
TIMESTAMP = pa.timestamp("us", tz="UTC")
HEADER = pa.struct([("key", pa.string()), ("value", pa.binary())])

_WHERE = [
    ("topic", pa.string(), "topic, from the partition directory name (null outside one)"),
    ("partition", pa.int32(), "partition number, from the same name"),
    ("segment_base_offset", pa.int64(), "the segment's base offset (its file name)"),
    ("file", pa.string(), "path or URL of the .log"),
    ("position", pa.int64(), "byte position of the batch in the .log"),
]

RECORD_COLUMNS = [
    *_WHERE,
    ("batch_base_offset", pa.int64(), "first offset of the batch"),
    ("batch_last_offset", pa.int64(), "last offset of the batch"),
    ("offset", pa.int64(), "the record's offset"),
    ("timestamp", TIMESTAMP, "the record's time, in milliseconds, UTC (the batch's max "
                             "timestamp under LogAppendTime; -1 ms for magic 0, as Spark's "
                             "Kafka source has it)"),
    ("timestamp_type", pa.string(), "CreateTime, LogAppendTime or NoTimestampType"),
    ("key", pa.binary(), "record key (null when absent)"),
    ("value", pa.binary(), "record value (null for a tombstone)"),
    ("headers", pa.list_(HEADER), "record headers in order; keys decoded as UTF-8 "
                                  "(malformed bytes become U+FFFD, as Kafka's clients do)"),
    ("producer_id", pa.int64(), "-1 when not idempotent"),
    ("producer_epoch", pa.int16(), "-1 when not idempotent"),
    ("sequence", pa.int32(), "the record's sequence number (-1 when none)"),
    ("is_transactional", pa.bool_(), "attributes bit 4"),
    ("is_control", pa.bool_(), "attributes bit 5: a transaction marker or KRaft control "
                               "record, not user data"),
    ("control_type", pa.string(), "ABORT, COMMIT, LEADER_CHANGE... for control records"),
    ("codec", pa.string(), "none, gzip, snappy, lz4 or zstd (the batch's)"),
    ("magic", pa.int8(), "0, 1 or 2"),
    ("leader_epoch", pa.int32(), "partition leader epoch of the batch (-1 below magic 2)"),
]  # fmt: skip

BATCH_COLUMNS = [
    *_WHERE,
    ("size", pa.int32(), "bytes of the entry in the .log (12-byte prefix included)"),
    ("magic", pa.int8(), "0, 1 or 2"),
    ("base_offset", pa.int64(), "first offset"),
    ("last_offset", pa.int64(), "last offset"),
    ("record_count", pa.int32(), "records in the batch (its recordsCount field for magic 2)"),
    ("base_timestamp", pa.int64(), "the batch's base timestamp (a legacy message's own)"),
    ("max_timestamp", pa.int64(), "the batch's max timestamp"),
    ("timestamp_type", pa.string(), "CreateTime, LogAppendTime or NoTimestampType"),
    ("codec", pa.string(), "none, gzip, snappy, lz4 or zstd"),
    ("is_transactional", pa.bool_(), "attributes bit 4"),
    ("is_control", pa.bool_(), "attributes bit 5"),
    ("producer_id", pa.int64(), "-1 when not idempotent"),
    ("producer_epoch", pa.int16(), "-1 when not idempotent"),
    ("base_sequence", pa.int32(), "-1 when none"),
    ("last_sequence", pa.int32(), "-1 when none"),
    ("leader_epoch", pa.int32(), "partition leader epoch (-1 below magic 2)"),
    ("delete_horizon_ms", pa.int64(), "set when attributes bit 6 is (a compacted batch)"),
    ("crc", pa.int64(), "the stored CRC (CRC-32C for magic 2, CRC-32 below)"),
]  # fmt: skip

ERROR_COLUMNS = [
    ("error_rule", pa.string(), "requirement ID the batch breaks (spec/requirements.yaml), "
                                "as klogspec verify cites it"),
    ("error_category", pa.string(), "the reader's error category (spec/formats/errors.md), "
                                    "or 'unreadable' for a file that cannot be read"),
    ("error_message", pa.string(), "what is wrong, for people"),
]  # fmt: skip

LEVELS = ("record", "batch")
ON_ERROR = ("fail", "skip", "report")


def columns(level: str, on_error: str) -> list[tuple[str, pa.DataType, str]]:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
    base = RECORD_COLUMNS if level == "record" else BATCH_COLUMNS
    return base + ERROR_COLUMNS if on_error == "report" else list(base)


def built_as(type_: pa.DataType) -> pa.DataType:
    """The type a column's Python values are built as before the cast to ``type_``: a
    timestamp's are the stored milliseconds."""
    return MILLIS if type_ == TIMESTAMP else type_


def arrow_schema(level: str, on_error: str) -> pa.Schema:
    return pa.schema([(name, type_) for name, type_, _ in columns(level, on_error)])


def spark_schema(level: str, on_error: str):
    """The same columns as a Spark StructType."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow_schema(level, on_error))
