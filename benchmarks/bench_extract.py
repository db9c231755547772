"""Figure 10: extract to Parquet against pyarrow writing the same Arrow table from memory.

*Ours* is the work of ``klogspec extract`` on one input partition, without Spark: the
``kafka-segments`` reader at level ``record`` (``pipeline.reader.read_range``: every batch
checked as verify checks it, its records decoded into Arrow chunks) over a segment of
16 KiB batches (an eighth of ``--size``), each chunk written to a Parquet file as it
comes (``pyarrow.parquet.ParquetWriter``, the writer's defaults). The *baseline* writes
the same rows, already an Arrow table in memory, with ``pyarrow.parquet.write_table``:
what writing Parquet costs by itself. Spark's share of a real extract (tasks, the sort
within partitions) is the scan figures' concern. Without pyarrow, SKIP.
"""

from __future__ import annotations

import os

from .harness import Context, Figure, Target
from .workload import KiB, MiB, batch_template, write_segment

NAME = "extract"
TARGET = Target("ratio", ">=", 0.5)


def measure(ctx: Context) -> Figure:
    figure = Figure(
        name=NAME, title="Extract to Parquet, 16 KiB batches", unit="MiB/s", ours=None,
        ours_label="kafka-segments reader (level record) + ParquetWriter, one segment",
        baseline=None, baseline_label="pyarrow.parquet.write_table of the same table",
        target=TARGET,
    )  # fmt: skip
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        from pipeline.layout import Segment
        from pipeline.reader import read_range
        from pipeline.splits import SegmentRange
    except ImportError as exc:
        figure.status, figure.note = "SKIP", f"pyarrow or the pipeline is not installed: {exc}"
        return figure
    template = batch_template(16 * KiB, ctx.shape)
    folder = ctx.scratch(NAME)
    directory = folder / "bench-0"
    directory.mkdir()
    log = write_segment(str(directory / "00000000000000000000.log"), template, ctx.size // 8)
    segment = Segment(log.path, log.size, "bench", 0, 0)
    target = folder / "out.parquet"

    def ours() -> int:
        rows = 0
        with pq.ParquetWriter(target, schema=_schema()) as writer:
            for chunk in read_range(SegmentRange(segment, 0, log.size)):
                writer.write_batch(chunk)
                rows += chunk.num_rows
        return rows

    table = pa.Table.from_batches(list(read_range(SegmentRange(segment, 0, log.size))))

    def baseline() -> None:
        pq.write_table(table, target)

    seconds, base = ctx.timed_pair(ours, baseline)
    ctx.profiled(NAME, ours)
    rows = table.num_rows
    os.unlink(target)
    figure.ours, figure.baseline = log.size / seconds / MiB, log.size / base / MiB
    figure.details = {"bytes": log.size, "batches": log.batches, "rows": rows,
                      "parquet_bytes": table.nbytes, **ctx.timings(seconds, base)}  # fmt: skip
    return figure


def _schema():
    from pipeline.schema import arrow_schema

    return arrow_schema("record", "fail")


def figures(ctx: Context) -> list:
    return [([NAME], lambda: measure(ctx))]
