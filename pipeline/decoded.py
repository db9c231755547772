"""``--decode`` on Spark: what the records of Kafka's internal topics mean, as columns
(spec/formats/internal-topics/; the decoders are reference_impl/messages).

* The ``kafka-segments`` data source's ``decode`` option (``auto``, a decoder's name, or
  ``none``, the default) adds ``key_decoded`` and ``value_decoded`` to the record level: the
  JSON text ``klogspec dump --decode --json`` prints, null for a topic without a decoder.
* ``klogspec extract --decode`` also writes two typed tables beside the records, hidden from a
  read of ``OUT`` as the record dataset (Spark skips names starting with ``_``):
  ``OUT/_offset_commits`` (one row per offset commit of ``__consumer_offsets``: where was this
  group on that day) and ``OUT/_cluster_metadata`` (one row per metadata record, with the
  topic and partition it describes).

The row functions take and give Arrow record batches, so that they run in ``mapInArrow``
and in tests without Spark.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyarrow as pa

from reference_impl.messages import decode_record, decoder_for
from reference_impl.messages.cluster_metadata import described_partitions
from reference_impl.messages.consumer_offsets import offset_commit

from .schema import TIMESTAMP

DECODED_COLUMNS = [
    ("key_decoded", pa.string(), "the key as its internal topic's message, JSON (--decode)"),
    ("value_decoded", pa.string(), "the value likewise; a tombstone's is null"),
]
_SOURCE = [
    ("log_partition", pa.int32(), "the internal topic's partition the record is in"),
    ("log_offset", pa.int64(), "the record's offset there"),
    ("log_timestamp", TIMESTAMP, "the record's timestamp, UTC, as the records' own column"),
]
OFFSET_COMMIT_COLUMNS = [
    ("group", pa.string(), "the consumer group"),
    ("topic", pa.string(), "the committed topic"),
    ("partition", pa.int32(), "the committed partition"),
    ("offset", pa.int64(), "the committed offset (null: the commit was deleted)"),
    ("leader_epoch", pa.int32(), "leaderEpoch (-1 when the value version has none)"),
    ("metadata", pa.string(), "the client's metadata string"),
    ("commit_timestamp", pa.int64(), "commitTimestamp (ms)"),
    ("expire_timestamp", pa.int64(), "expireTimestamp (ms; -1 when the value version has none)"),
    ("value_version", pa.int16(), "the OffsetCommitValue version (null for a tombstone)"),
    *_SOURCE,
]
METADATA_RECORD_COLUMNS = [
    ("type", pa.string(), "the record's message name (TopicRecord, PartitionChangeRecord...)"),
    ("version", pa.int16(), "its version"),
    ("fields", pa.string(), "its fields, JSON, under Kafka's names"),
    ("is_control", pa.bool_(), "a KRaft control record (LeaderChangeMessage...)"),
    ("described_topic", pa.string(), "the topic name the record gives, if any"),
    ("described_topic_id", pa.string(), "the topic id it gives, if any"),
    ("described_partition", pa.int32(), "the partition it gives, if any"),
    ("decode_error", pa.string(), "why the record did not decode (then the rest is null)"),
    ("file", pa.string(), "the .log or .checkpoint it is in"),
    *_SOURCE,
]


def schema_of(columns) -> pa.Schema:
    return pa.schema([(name, type_) for name, type_, _ in columns])


def _json(value) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))


def _sides(row: dict, name: str):
    decoder = decoder_for(name, row["topic"])
    if decoder is None:
        return None, None
    return decode_record(decoder, row["key"], row["value"], control=bool(row["is_control"]))


def add_decoded(batch: pa.RecordBatch, name: str) -> pa.RecordBatch:
    """The record-level ``batch`` with ``key_decoded`` and ``value_decoded`` appended (an
    error row of on_error=report has neither)."""
    keys, values = [], []
    for row in batch.select(["topic", "key", "value", "is_control"]).to_pylist():
        key, value = _sides(row, name) if row["is_control"] is not None else (None, None)
        keys.append(_json(key))
        values.append(_json(value))
    return batch.append_column("key_decoded", pa.array(keys, pa.string())).append_column(
        "value_decoded", pa.array(values, pa.string())
    )


def offset_commits(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """COFF-3: the offset commits among ``__consumer_offsets`` records, one typed row each."""
    schema = schema_of(OFFSET_COMMIT_COLUMNS)
    for batch in batches:
        rows = []
        for row in batch.to_pylist():
            if row["topic"] != "__consumer_offsets" or row["is_control"] is not False:
                continue
            commit = offset_commit(*_sides(row, "offsets"))
            if commit is not None:
                rows.append({**commit, **_source(row)})
        yield pa.RecordBatch.from_pylist(rows, schema=schema)


def metadata_records(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The records of ``__cluster_metadata`` (its log and snapshots), one typed row each."""
    schema = schema_of(METADATA_RECORD_COLUMNS)
    for batch in batches:
        rows = []
        for row in batch.to_pylist():
            if row["topic"] == "__cluster_metadata" and row["is_control"] is not None:
                rows.append(_metadata_row(row))
        yield pa.RecordBatch.from_pylist(rows, schema=schema)


def _metadata_row(row: dict) -> dict:
    _, value = _sides(row, "metadata")
    out = {"is_control": row["is_control"], "file": row["file"], **_source(row)}
    if value is None or "decode_error" in value:
        return out | {"decode_error": _json(value and value["decode_error"]) or "null value"}
    fields = {k: v for k, v in value.items() if k not in ("type", "version")}
    name, topic_id, partition = described_partitions(value)
    return out | {
        "type": value["type"], "version": value["version"], "fields": _json(fields),
        "described_topic": name, "described_topic_id": topic_id, "described_partition": partition,
    }  # fmt: skip


def _source(row: dict) -> dict:
    return {"log_partition": row["partition"], "log_offset": row["offset"],
            "log_timestamp": row["timestamp"]}  # fmt: skip


def write_decoded_tables(spark, frame, out: str, mode: str) -> None:
    """``OUT/_offset_commits`` and ``OUT/_cluster_metadata`` from the record-level ``frame``."""
    for name, function, columns in _TABLES:
        table = frame.mapInArrow(function, spark_schema(columns))
        table.write.mode(mode).parquet(f"{out.rstrip('/')}/_{name}")


def decoded_table_rows(spark, out: str) -> dict[str, int]:
    """The rows each table of ``write_decoded_tables`` holds under ``out``."""
    return {name: spark.read.parquet(f"{out.rstrip('/')}/_{name}").count() for name, *_ in _TABLES}


_TABLES = (
    ("offset_commits", offset_commits, OFFSET_COMMIT_COLUMNS),
    ("cluster_metadata", metadata_records, METADATA_RECORD_COLUMNS),
)


def spark_schema(columns):
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema_of(columns))
