"""The attack set's Spark case (tests/test_attack_set.py has the others): the data source
on a log directory holding a FIFO under a segment's name and a batch of 150,000 tiny
records reads every record, in chunks, and never blocks on the FIFO."""

from __future__ import annotations

import os

import pytest

from reference_impl.records import Compression
from reference_impl.records.builder import build_raw_batch
from reference_impl.records.varint import encode_varint

pytestmark = [pytest.mark.spark, pytest.mark.req("PART-8", "COMP-3")]
COUNT = 150_000


@pytest.fixture
def hostile(tmp_path):
    tiny = tmp_path / "tiny-0"
    tiny.mkdir()
    deltas = [encode_varint(i) for i in range(COUNT)]  # length, attributes, timestampDelta
    body = b"".join(bytes([10 + 2 * len(d)]) + b"\x00\x00" + d + b"\x01\x01\x00" for d in deltas)
    (tiny / f"{0:020d}.log").write_bytes(build_raw_batch(body, COUNT, Compression.ZSTD))
    fifo = tmp_path / "fifo-0"
    fifo.mkdir()
    os.mkfifo(fifo / f"{0:020d}.log")  # opening it for reading would block the task
    return tmp_path


def test_a_fifo_and_a_batch_of_150000_records_are_read_without_blocking(spark, hostile):
    frame = spark.read.format("kafka-segments").option("level", "record").load(str(hostile))
    rows = frame.groupBy("topic").count().collect()
    assert {row["topic"]: row["count"] for row in rows} == {"tiny": COUNT}
