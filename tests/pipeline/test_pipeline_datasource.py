"""The kafka-segments data source: its rows equal the reference reader's (generated segments in
every codec and format, and the real-broker corpus), a segment split into byte ranges gives
the same rows as whole, and corrupt batches follow the on_error policy."""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from pathlib import Path

import pytest
from pipeline_trees import (
    batch_positions,
    big_segment,
    data_batch,
    flip_byte,
    millis,
    reference_rows,
    write_segment,
)

from pipeline.layout import Segment, discover_segments
from pipeline.schema import spark_schema
from pipeline.splits import plan_ranges, split_points
from reference_impl.records import iter_file_batches

pytestmark = pytest.mark.spark
TOPIC_ID = "MWJ6FHTfRYy67jzwZdeqSQ"
SEGMENT_ID = "tqimKeZwStOEOwRzT3L5oQ"


def load(spark, paths, **options):
    reader = spark.read.format("kafka-segments")
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load(str(paths) if isinstance(paths, str | Path) else [str(p) for p in paths])


def logs_of(log_dir: Path) -> list[Path]:
    return sorted(p for p in log_dir.rglob("*.log") if not p.parent.name.endswith("-delete"))


def record_tuples(rows) -> list[tuple]:
    return sorted(
        (
            (r.file, r.offset, millis(r.timestamp), _bytes(r.key), _bytes(r.value),
             tuple((h.key, bytes(h.value)) for h in r.headers), r.is_control)
            for r in rows
        ),
        key=repr,
    )  # fmt: skip


def _bytes(value):
    return None if value is None else bytes(value)


# --- rows ------------------------------------------------------------------------------


def test_records_equal_the_reference_in_every_codec_and_format(spark, log_dir):
    frame = load(spark, log_dir)
    assert frame.schema == spark_schema("record", "fail")
    assert load(spark, log_dir, level="batch", on_error="report").schema == spark_schema(
        "batch", "report"
    )
    rows = frame.collect()
    assert record_tuples(rows) == reference_rows(logs_of(log_dir))
    by_file = {(r.topic, r.partition, Path(r.file).parent.name) for r in rows}
    assert by_file == {
        ("orders", 0, "orders-0"),
        ("orders", 1, "orders-1"),
        ("legacy", 0, "legacy-0"),
    }  # fmt: skip; the -delete dir is left out
    orders = [r for r in rows if r.topic == "orders"]
    assert {r.codec for r in orders} == {"none", "gzip", "snappy", "lz4", "zstd"}
    assert {r.magic for r in rows} == {0, 1, 2}
    control = sorted((r.offset, r.control_type, r.is_transactional) for r in rows if r.is_control)
    assert control == [(33, "COMMIT", True), (37, "ABORT", True)]
    appended = {millis(r.timestamp) for r in rows if r.timestamp_type == "LogAppendTime"}
    assert appended == {1_700_000_000_999}
    legacy = {(r.magic, r.timestamp_type, r.codec) for r in rows if r.topic == "legacy"}
    assert legacy == {(0, "NoTimestampType", "none"), (0, "NoTimestampType", "gzip"),
                      (1, "CreateTime", "none"), (1, "CreateTime", "snappy")}  # fmt: skip
    txn = {(r.producer_id, r.producer_epoch, r.sequence) for r in rows if r.offset in (30, 31)}
    assert txn == {(7, 1, 0), (7, 1, 1)}
    wrapped = {r.offset: (r.batch_base_offset, r.batch_last_offset) for r in rows}
    assert wrapped[4] == (3, 5) and wrapped[10] == (9, 11)  # legacy wrappers' inner offsets


def test_batches_equal_the_reference(spark, log_dir):
    rows = load(spark, log_dir, level="batch").collect()
    got = sorted((r.file, r.position, r.base_offset, r.last_offset, r.record_count, r.crc)
                 for r in rows)  # fmt: skip
    want = []
    for log in logs_of(log_dir):
        with open(log, "rb") as handle:
            for b in iter_file_batches(handle):
                count = b.records_count if b.magic == 2 else len(b.records())
                want.append((str(log), b.position, b.base_offset, b.last_offset, count, b.crc))
    assert got == sorted(want)
    empty = [r for r in rows if r.record_count == 0]
    assert [(r.base_offset, r.delete_horizon_ms) for r in empty] == [(41, 1_700_000_000_000)]


@pytest.mark.corpus
def test_the_corpus_reads_as_the_reference_reads_it(spark, corpus, record_property):
    """Every .log of the corpus: 157,716 batches (test_corpus.py's count), and per file the
    records' count, offsets and value bytes."""
    started = time.perf_counter()
    assert load(spark, corpus, level="batch").count() == 157_716
    batch_seconds = time.perf_counter() - started
    want = {}
    for log in sorted(corpus.rglob("*.log")):
        with open(log, "rb") as handle:
            records = [r for b in iter_file_batches(handle) for r in b.records()]
        if records:
            values = sum(len(r.value) for r in records if r.value is not None)
            want[str(log)] = (len(records), sum(r.offset for r in records), values)
    started = time.perf_counter()
    got = {
        r[0]: (r[1], r[2], r[3] or 0)
        for r in load(spark, corpus).groupBy("file").agg(*_aggregates()).collect()
    }
    record_seconds = time.perf_counter() - started
    assert got == want
    records = sum(n for n, _, _ in want.values())
    assert records == 475_045
    record_property("batch_rows_per_s", round(157_716 / batch_seconds))
    record_property("record_rows_per_s", round(records / record_seconds))
    print(f"corpus: {157_716 / batch_seconds:,.0f} batch rows/s, "
          f"{records / record_seconds:,.0f} record rows/s on local[2]")  # fmt: skip


def _aggregates():
    from pyspark.sql import functions as F

    return [F.count("*"), F.sum("offset"), F.sum(F.length("value"))]


# --- splitting -----------------------------------------------------------------------------


def test_split_points_are_batch_boundaries_even_with_a_bad_index(tmp_path):
    log = big_segment(tmp_path / "big-0")
    positions = set(batch_positions(log))
    index = log.with_suffix(".index")
    segment = Segment(str(log), log.stat().st_size, "big", 0, 0, str(index))
    good = split_points(segment, 32 << 10)
    assert len(good) >= 10 and set(good) <= positions
    # an index entry pointing inside a batch, and one past the end: resynchronised
    data = bytearray(index.read_bytes())
    data[4 * 8 + 7] ^= 0x01
    data[9 * 8 + 4 : 9 * 8 + 8] = (10**8).to_bytes(4, "big")
    index.write_bytes(bytes(data))
    assert set(split_points(segment, 32 << 10)) <= positions
    index.unlink()  # no index: a forward scan alone
    unindexed = Segment(str(log), log.stat().st_size, "big", 0, 0, None)
    assert set(split_points(unindexed, 32 << 10)) <= positions
    ranges = plan_ranges(unindexed, 32 << 10)
    assert ranges[0].start == 0 and ranges[-1].end == unindexed.size
    assert all(a.end == b.start for a, b in zip(ranges, ranges[1:], strict=False))


def test_a_segment_split_into_ranges_gives_the_same_rows(spark, tmp_path):
    log = big_segment(tmp_path / "big-0")
    data = bytearray(log.with_suffix(".index").read_bytes())
    data[3 * 8 + 7] ^= 0x01  # one damaged index entry: that boundary is found by a scan
    log.with_suffix(".index").write_bytes(bytes(data))
    whole = load(spark, log.parent)
    split = load(spark, log.parent, split_size="32k")
    assert whole.rdd.getNumPartitions() == 1 and split.rdd.getNumPartitions() >= 10
    assert sorted(split.collect()) == sorted(whole.collect())
    assert sorted(load(spark, log.parent, level="batch", split_size="32k").collect()) == sorted(
        load(spark, log.parent, level="batch").collect()
    )


# --- corrupt batches -------------------------------------------------------------------------


@pytest.fixture
def damaged(tmp_path) -> Path:
    """A partition whose second batch has a flipped byte (a CRC mismatch)."""
    directory = tmp_path / "bad-0"
    directory.mkdir()
    write_segment(directory, 0, [data_batch(0), data_batch(3), data_batch(6)])
    log = directory / f"{0:020d}.log"
    second = batch_positions(log)[1]
    flip_byte(log, second + 70)
    return log


def test_on_error_fail_names_the_file_position_and_offset(spark, damaged):
    second = batch_positions(damaged)[1]
    with pytest.raises(Exception) as caught:
        load(spark, damaged.parent).collect()
    message = str(caught.value)
    assert f"{damaged}, position {second}, offset 3: crc_mismatch" in message
    assert "on_error=skip or report" in message


def test_on_error_skip_and_report(spark, damaged):
    skipped = load(spark, damaged.parent, on_error="skip").collect()
    assert sorted(r.offset for r in skipped) == [0, 1, 2, 6, 7, 8]
    reported = load(spark, damaged.parent, on_error="report").collect()
    errors = [r for r in reported if r.error_rule is not None]
    assert [(r.error_rule, r.error_category, r.position, r.batch_base_offset, r.offset, r.file)
            for r in errors] == [
        ("BATCH-4", "crc_mismatch", batch_positions(damaged)[1], 3, None, str(damaged))
    ]  # fmt: skip
    assert sorted(r.offset for r in reported if r.error_rule is None) == [0, 1, 2, 6, 7, 8]
    batches = load(spark, damaged.parent, level="batch", on_error="report").collect()
    assert Counter(r.error_rule for r in batches) == Counter({None: 2, "BATCH-4": 1})


def test_bad_options_are_refused(spark, log_dir):
    for options, fragment in (({"level": "rows"}, "level must be one of"),
                              ({"on_error": "ignore"}, "on_error must be one of"),
                              ({"split_size": "lots"}, "number of bytes")):  # fmt: skip
        with pytest.raises(Exception, match=fragment):
            load(spark, log_dir, **options).schema  # noqa: B018


# --- other layouts ---------------------------------------------------------------------------


def test_a_tiered_storage_bucket(spark, tmp_path, log_dir):
    """Aiven's object layout: a raw segment is read, a compressed one is reported unreadable."""
    bucket = tmp_path / "bucket" / "prefix"
    for topic, compression in (("raw", False), ("zipped", True)):
        directory = bucket / f"{topic}-{TOPIC_ID}" / "0"
        directory.mkdir(parents=True)
        stem = directory / f"{0:020d}-{SEGMENT_ID}"
        shutil.copy(log_dir / "orders-1" / f"{0:020d}.log", stem.with_suffix(".log"))
        manifest = {"version": "1", "chunkIndex": {"type": "fixed"}, "segmentIndexes": {},
                    "compression": compression}  # fmt: skip
        stem.with_suffix(".rsm-manifest").write_text(json.dumps(manifest))
    found = {(s.topic, s.partition, s.base_offset) for s in discover_segments([str(bucket)])}
    assert found == {("raw", 0, 0), ("zipped", 0, 0)}
    rows = load(spark, f"file://{bucket}", on_error="report").collect()
    assert Counter((r.topic, r.error_category) for r in rows) == Counter(
        {("raw", None): 12, ("zipped", "unreadable"): 1}
    )
    [error] = [r for r in rows if r.error_category]
    assert "zstd-compressed" in error.error_message and error.file.endswith(".log")
    with pytest.raises(Exception, match="unreadable: the segment object is zstd-compressed"):
        load(spark, bucket).collect()


def test_a_missing_path_is_an_error(spark, tmp_path):
    with pytest.raises(Exception, match="no such file or directory"):
        load(spark, tmp_path / "nowhere").collect()
