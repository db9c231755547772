"""URLs go through the same listing, splitting and reading code as local paths. No network
here: an ``s3://bucket`` file system is stood in for by a local directory (pyarrow's
SubTreeFileSystem), so everything but pyarrow's S3 client itself is exercised."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.fs as pafs
from pipeline_trees import big_segment, build_log_dir

from pipeline import storage
from pipeline.layout import discover_segments
from pipeline.reader import read_range
from pipeline.splits import plan_partitions


def read_all_rows(partitions) -> pa.Table:
    tables = [
        pa.Table.from_batches(list(read_range(r, "record")))
        for ranges in partitions
        for r in ranges
    ]
    return pa.concat_tables(t for t in tables if t.num_rows).sort_by("offset")


def test_a_bucket_reads_as_the_same_files_on_disk(tmp_path, monkeypatch):
    build_log_dir(tmp_path / "bucket")
    big_segment(tmp_path / "bucket" / "logs" / "big-0")
    stand_in = pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())
    monkeypatch.setattr(storage, "_url_filesystem", lambda root: stand_in)
    remote = discover_segments(["s3://bucket/logs"])
    local = discover_segments([str(tmp_path / "bucket" / "logs")])
    assert [s.log for s in remote] == [s.log.replace(f"{tmp_path}/", "s3://") for s in local]
    assert [s.offset_index for s in remote if s.topic == "big"] == [
        "s3://bucket/logs/big-0/00000000000000000000.index"
    ]
    from_bucket = plan_partitions(["s3://bucket/logs/big-0"], 32 << 10)
    assert len(from_bucket) > 5  # split at the index's boundaries, read from the "bucket"
    on_disk = plan_partitions([str(tmp_path / "bucket" / "logs" / "big-0")])
    left, right = read_all_rows(from_bucket), read_all_rows(on_disk)
    assert left.drop(["file"]).equals(right.drop(["file"]))
    assert set(left.column("file").to_pylist()) == {
        "s3://bucket/logs/big-0/00000000000000000000.log"
    }
