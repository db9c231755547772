"""``klogspec extract --decode`` and the data source's ``decode`` option: internal topics' keys
and values as columns, the offset commits and metadata records as typed tables
(pipeline/decoded.py; spec/formats/internal-topics/)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from click.testing import CliRunner

from pipeline.cli import extract
from pipeline.decoded import (
    METADATA_RECORD_COLUMNS,
    OFFSET_COMMIT_COLUMNS,
    add_decoded,
    metadata_records,
    offset_commits,
)
from pipeline.schema import arrow_schema
from reference_impl.records import ControlRecordType, SimpleRecord, build_record_batch
from reference_impl.records.control import encode_control_key


def s16(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


COMMIT_KEY = struct.pack(">h", 1) + s16("g1") + s16("orders") + struct.pack(">i", 2)
COMMIT_V3 = struct.pack(">hqi", 3, 42, 7) + s16("m") + struct.pack(">q", 1_700_000_000_000)
COMMIT_V1 = (
    struct.pack(">hq", 1, 40) + s16("") + struct.pack(">qq", 1_600_000_000_000, 1_700_000_000_000)
)
GROUP_KEY = struct.pack(">h", 2) + s16("g1")
TOPIC_RECORD = b"\x01\x02\x00\x07orders" + bytes(range(16)) + b"\x00"
PARTITION_CHANGE = b"\x01\x05\x00" + struct.pack(">i", 3) + bytes(range(16)) + b"\x00"


def row(topic, key, value, offset, control=False, partition=0):
    return {"topic": topic, "partition": partition, "file": f"/x/{topic}-{partition}/0.log",
            "offset": offset, "timestamp": 1000 + offset, "key": key, "value": value,
            "is_control": control}  # fmt: skip


def batch_of(rows) -> pa.RecordBatch:
    schema = arrow_schema("record", "fail")
    full = [{name: r.get(name) for name in schema.names} for r in rows]
    return pa.RecordBatch.from_pylist(full, schema=schema)


@pytest.mark.req("COFF-3")
def test_offset_commits_are_typed_rows():
    rows = [row("__consumer_offsets", COMMIT_KEY, COMMIT_V3, 0, partition=7),
            row("__consumer_offsets", COMMIT_KEY, COMMIT_V1, 1, partition=7),
            row("__consumer_offsets", GROUP_KEY, None, 2, partition=7),
            row("__consumer_offsets", COMMIT_KEY, None, 3, partition=7),
            row("orders", COMMIT_KEY, COMMIT_V3, 0)]  # fmt: skip
    (table,) = offset_commits(iter([batch_of(rows)]))
    assert table.schema.names == [name for name, _, _ in OFFSET_COMMIT_COLUMNS]
    got = [(r["group"], r["topic"], r["partition"], r["offset"], r["leader_epoch"], r["metadata"],
            r["commit_timestamp"], r["expire_timestamp"], r["log_partition"], r["log_offset"])
           for r in table.to_pylist()]  # fmt: skip
    assert got == [
        ("g1", "orders", 2, 42, 7, "m", 1_700_000_000_000, -1, 7, 0),
        ("g1", "orders", 2, 40, -1, "", 1_600_000_000_000, 1_700_000_000_000, 7, 1),
        ("g1", "orders", 2, None, None, None, None, None, 7, 3),  # the commit deleted
    ]


def test_metadata_records_name_what_they_describe():
    leader_change = SimpleRecord(None, encode_control_key(ControlRecordType.LEADER_CHANGE))
    rows = [row("__cluster_metadata", None, TOPIC_RECORD, 0),
            row("__cluster_metadata", None, PARTITION_CHANGE, 1),
            row("__cluster_metadata", leader_change.key, b"\x00", 2, control=True),
            row("__cluster_metadata", None, b"\x01\x63\x00", 3)]  # fmt: skip
    (table,) = metadata_records(iter([batch_of(rows)]))
    assert table.schema.names == [name for name, _, _ in METADATA_RECORD_COLUMNS]
    topic, change, control, bad = table.to_pylist()
    assert (topic["type"], topic["described_topic"], topic["described_topic_id"]) == (
        "TopicRecord",
        "orders",
        "AAECAwQFBgcICQoLDA0ODw",
    )
    assert json.loads(topic["fields"]) == {"Name": "orders", "TopicId": "AAECAwQFBgcICQoLDA0ODw"}
    assert (change["type"], change["described_partition"]) == ("PartitionChangeRecord", 3)
    assert control["is_control"] and "MSG-4" in control["decode_error"]
    assert bad["type"] is None and "record type 99" in bad["decode_error"]


def test_the_data_source_columns_hold_dump_json():
    decoded = add_decoded(batch_of([row("__consumer_offsets", COMMIT_KEY, COMMIT_V3, 0),
                                    row("orders", b"k", b"v", 1)]), "auto")  # fmt: skip
    keys = decoded.column("key_decoded").to_pylist()
    assert json.loads(keys[0])["type"] == "OffsetCommitKey" and keys[1] is None


@pytest.mark.spark
def test_extract_decode_writes_the_typed_tables(spark, tmp_path: Path):
    pytest.importorskip("pyspark")
    part = tmp_path / "data" / "__consumer_offsets-7"
    part.mkdir(parents=True)
    records = [SimpleRecord(COMMIT_V3, COMMIT_KEY, 1), SimpleRecord(None, GROUP_KEY, 2)]
    (part / "00000000000000000000.log").write_bytes(build_record_batch(records))
    meta = tmp_path / "data" / "__cluster_metadata-0"
    meta.mkdir()
    (meta / "00000000000000000000.log").write_bytes(
        build_record_batch([SimpleRecord(TOPIC_RECORD, None, 1)])
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        extract, ["--json", "--decode", "auto", "--out", str(out), str(tmp_path / "data")],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.splitlines()[-1])
    assert summary["decodedTables"] == {"offset_commits": 1, "cluster_metadata": 1}
    commits = ds.dataset(out / "_offset_commits", format="parquet").to_table().to_pylist()
    assert [(c["group"], c["offset"], c["leader_epoch"]) for c in commits] == [("g1", 42, 7)]
    records = ds.dataset(out, format="parquet", partitioning="hive").to_table()
    values = [json.loads(v)["type"] for v in records.column("value_decoded").to_pylist() if v]
    assert sorted(values) == ["OffsetCommitValue", "TopicRecord"]


def test_the_decoded_columns_are_documented():
    from test_pipeline_docs import DOC, documented_tables

    from pipeline.decoded import DECODED_COLUMNS, spark_schema

    def declared(columns):
        return [(f.name, f.dataType.simpleString()) for f in spark_schema(columns).fields]

    decoded, commits, metadata = documented_tables()[5:8]
    assert decoded == declared(DECODED_COLUMNS)
    assert commits == declared(OFFSET_COMMIT_COLUMNS)
    assert metadata == declared(METADATA_RECORD_COLUMNS)
    assert "| `decode` |" in DOC.read_text()
