"""The split planner reads an ``.index`` a window at a time (pipeline/splits.py): a sparse
4 GiB index beside a small segment costs a window of memory, not the index's size."""

from __future__ import annotations

import tracemalloc

from pipeline.layout import discover_segments
from pipeline.splits import plan_ranges
from reference_impl.formats.index_entries import OffsetPosition, encode_offset_index_entry
from reference_impl.records import SimpleRecord, build_record_batch


def _segment(tmp_path, index_size: int):
    partition = tmp_path / "t-0"
    partition.mkdir()
    batches = [
        build_record_batch([SimpleRecord(b"v" * 4000, timestamp=o)], base_offset=o)
        for o in range(64)
    ]
    (partition / "00000000000000000000.log").write_bytes(b"".join(batches))
    positions, position = [], 0
    for batch in batches:
        positions.append(position)
        position += len(batch)
    entries = b"".join(
        encode_offset_index_entry(OffsetPosition(o, positions[o]), 0) for o in range(7, 64, 8)
    )
    with open(partition / "00000000000000000000.index", "wb") as index:
        index.write(entries)
        index.truncate(index_size)
    (segment,) = discover_segments([str(partition)])
    return segment, positions


def test_sparse_index_costs_a_window(tmp_path):
    segment, positions = _segment(tmp_path, 4 << 30)
    tracemalloc.start()
    ranges = plan_ranges(segment, split_size=32_000)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 16 << 20, f"planning the splits took {peak} bytes"
    starts = [r.start for r in ranges]
    assert len(ranges) > 1 and set(starts) <= {0, *positions}
