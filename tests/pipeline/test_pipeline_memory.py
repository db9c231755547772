"""The data source's reader streams: a segment much bigger than a chunk is read in bounded
memory (the reader is plain Python; no Spark session is needed)."""

from __future__ import annotations

import random
import tracemalloc

import pytest

from pipeline.chunks import MAX_ROWS
from pipeline.layout import discover_segments
from pipeline.reader import read_range
from pipeline.splits import plan_ranges
from reference_impl.records import Compression, SimpleRecord, build_record_batch
from reference_impl.records.batch import set_base_offset
from reference_impl.records.builder import build_raw_batch
from reference_impl.records.varint import encode_varint


def test_a_48_mib_segment_is_read_in_bounded_memory(tmp_path):
    rng = random.Random(0)
    records = [SimpleRecord(rng.randbytes(1000), b"k%d" % i, 1_700_000_000_000) for i in range(40)]
    template = build_record_batch(records, compression=Compression.NONE)
    directory = tmp_path / "big-0"
    directory.mkdir()
    log = directory / f"{0:020d}.log"
    with open(log, "wb") as handle:
        offset = 0
        while offset < 40 * (48 << 20) // len(template):
            handle.write(b"".join(set_base_offset(template, offset + 40 * i) for i in range(100)))
            offset += 4000
    [segment] = discover_segments([str(directory)])
    [whole] = plan_ranges(segment)
    next(read_range(whole, "record"))  # the imports a first chunk makes are not the reader's
    tracemalloc.start()
    try:
        rows = chunks = 0
        for chunk in read_range(whole, "record"):
            rows, chunks = rows + chunk.num_rows, chunks + 1
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rows == offset and chunks > 4
    assert peak < 16 << 20, f"peak {peak >> 20} MiB for a {segment.size >> 20} MiB segment"


@pytest.mark.req("COMP-3")
def test_a_batch_of_150000_tiny_records_is_read_in_bounded_memory(tmp_path):
    """One zstd batch of 150,000 nine-byte records (issue 20: 6 million of them made the
    executor ask Arrow for 1.3 GB), more than LARGE_BATCH_RECORDS: chunks of at most MAX_ROWS
    rows, every record once, offsets in order, the peak under 16 MiB (the whole batch's
    records and rows at once took about 40)."""
    count = 150_000
    deltas = [encode_varint(i) for i in range(count)]  # length, attributes, timestampDelta
    body = b"".join(bytes([10 + 2 * len(d)]) + b"\x00\x00" + d + b"\x01\x01\x00" for d in deltas)
    directory = tmp_path / "tiny-0"
    directory.mkdir()
    (directory / f"{0:020d}.log").write_bytes(build_raw_batch(body, count, Compression.ZSTD))
    [segment] = discover_segments([str(directory)])
    [whole] = plan_ranges(segment)
    next(read_range(whole, "record"))  # the imports a first chunk makes are not the reader's
    tracemalloc.start()
    try:
        sizes, last = [], -1
        for chunk in read_range(whole, "record"):
            offsets = chunk.column("offset").to_pylist()
            assert offsets == list(range(last + 1, last + 1 + len(offsets)))
            sizes.append(chunk.num_rows)
            last = offsets[-1]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sum(sizes) == count and max(sizes) <= MAX_ROWS
    assert peak < 16 << 20, f"peak {peak >> 20} MiB"
