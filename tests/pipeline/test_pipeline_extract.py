"""``klogspec extract``: the records as Parquet that pyarrow reads back, partitioned by topic and
partition, compressed batches decoded, control records flagged or left out."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from pipeline_trees import (
    batch_positions,
    data_batch,
    flip_byte,
    millis,
    reference_rows,
    write_segment,
)

from pipeline.cli import extract
from pipeline.schema import RECORD_COLUMNS

pytestmark = pytest.mark.spark


def run(*args):
    return CliRunner().invoke(extract, [*map(str, args)], catch_exceptions=False)


def logs_of(log_dir: Path) -> list[Path]:
    return sorted(p for p in log_dir.rglob("*.log") if not p.parent.name.endswith("-delete"))


def read_back(out: Path):
    return ds.dataset(out, format="parquet", partitioning="hive").to_table()


def test_records_to_parquet_by_topic_and_partition(spark, log_dir, tmp_path):
    out = tmp_path / "records"
    result = run("--json", "--out", out, log_dir)
    assert result.exit_code == 0, result.output
    *counts, summary = [json.loads(line) for line in result.stdout.splitlines()]
    assert {(c["topic"], c["partition"]): (c["records"], c["controlRecords"]) for c in counts} == {
        ("legacy", 0): (12, 0), ("orders", 0): (59, 2), ("orders", 1): (12, 0)
    }  # fmt: skip
    assert summary == {"type": "summary", "out": str(out), "records": 83}
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["topic=legacy", "topic=orders"]
    assert sorted(p.name for p in (out / "topic=orders").iterdir()) == [
        "partition=0", "partition=1"
    ]  # fmt: skip
    table = read_back(out)
    assert sorted(table.column_names) == sorted(name for name, _, _ in RECORD_COLUMNS)
    rows = table.to_pylist()
    got = sorted(
        ((r["file"], r["offset"], millis(r["timestamp"]), r["key"], r["value"],
          tuple((h["key"], h["value"]) for h in r["headers"]), r["is_control"]) for r in rows),
        key=repr,
    )  # fmt: skip
    assert got == reference_rows(logs_of(log_dir))  # every codec decoded
    for fragment in ds.dataset(out / "topic=orders", format="parquet").get_fragments():
        offsets = fragment.to_table(columns=["offset"]).column("offset").to_pylist()
        assert offsets == sorted(offsets)  # each file in offset order


def test_each_file_holds_its_topic_partition_and_millisecond_utc_timestamps(
    spark, log_dir, tmp_path
):
    """As Spark's Kafka source has them: a file read on its own says whose records it holds,
    and ``timestamp`` is a timestamp (the stored milliseconds, UTC), not a number."""
    out = tmp_path / "records"
    result = run("--out", out, log_dir)
    assert result.exit_code == 0, result.output
    files = sorted(out.rglob("*.parquet"))
    assert files and (out / "_SUCCESS").exists() and not (out / "_temporary").exists()
    for file in files:
        table = pq.read_table(file)  # the file alone, no directory names
        assert table.schema.field("timestamp").type == pa.timestamp("ms", tz="UTC")
        topic, partition = (part.split("=", 1)[1] for part in file.parts[-3:-1])
        assert set(table.column("topic").to_pylist()) == {topic}
        assert set(table.column("partition").to_pylist()) == {int(partition)}
    spark_rows = spark.read.parquet(str(out)).select("topic", "partition", "timestamp").collect()
    assert {type(r.timestamp).__name__ for r in spark_rows} == {"datetime"}
    assert len(spark_rows) == 83
    assert "Spark ready" in result.stderr and "wrote 83 records of 3 partitions" in result.stderr


def test_skip_control_leaves_out_the_markers(spark, log_dir, tmp_path):
    out = tmp_path / "records"
    assert run("--skip-control", "--out", out, log_dir).exit_code == 0
    table = read_back(out)
    assert table.num_rows == 81 and not any(table.column("is_control").to_pylist())
    assert "already exists" in run("--out", out, log_dir).output  # no --overwrite: exit 2
    assert run("--out", out, "--overwrite", log_dir).exit_code == 0
    assert read_back(out).num_rows == 83


def test_a_corrupt_batch_stops_extract_unless_skipped_or_reported(spark, tmp_path):
    directory = tmp_path / "logs" / "bad-0"
    directory.mkdir(parents=True)
    write_segment(directory, 0, [data_batch(0), data_batch(3)])
    log = directory / f"{0:020d}.log"
    flip_byte(log, batch_positions(log)[1] + 70)
    failed = run("--out", tmp_path / "a", directory)
    assert failed.exit_code == 1
    assert f"{log}, position {batch_positions(log)[1]}, offset 3: crc_mismatch" in failed.output
    assert run("--on-error", "report", "--out", tmp_path / "b", directory).exit_code == 0
    rows = read_back(tmp_path / "b").to_pylist()
    assert sorted((r["offset"], r["error_rule"]) for r in rows if r["offset"] is not None) == [
        (0, None), (1, None), (2, None)
    ]  # fmt: skip
    assert [r["error_rule"] for r in rows if r["offset"] is None] == ["BATCH-4"]
