"""Figure 2: record-level decode against kafka-python, per codec.

Both sides walk the same in-memory log image of 16 KiB batches (uncompressed size) and
produce every record's offset, timestamp, key, value and headers. *Ours* is
``iter_batches`` then ``RecordBatch.records()``: the path of ``dump --deep``, of
``verify --deep`` and of the pipeline's record reader. The *baseline* is kafka-python's
``MemoryRecords`` / ``DefaultRecordBatch`` iteration, pure Python like ours. Neither side
checks CRCs here (kafka-python's iteration does not); the batch-level figures measure that.
"""

from __future__ import annotations

from kafka.record import MemoryRecords

from reference_impl.records import Compression, iter_batches

from .harness import Context, Figure, Target
from .workload import KiB, batch_template, batches

TARGET = Target("ratio", ">=", 3.0)
CODECS = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]


def decode_ours(data: bytes) -> int:
    count = 0
    for batch in iter_batches(data):
        for record in batch.records():
            record.offset, record.timestamp, record.key, record.value, record.headers  # noqa: B018
            count += 1
    return count


def decode_kafka_python(data: bytes) -> int:
    count = 0
    records = MemoryRecords(data)
    while (batch := records.next_batch()) is not None:
        for record in batch:
            record.offset, record.timestamp, record.key, record.value, record.headers  # noqa: B018
            count += 1
    return count


def measure(ctx: Context, codec: Compression) -> Figure:
    name = f"decode-{codec.label}"
    template = batch_template(16 * KiB, ctx.shape, codec)
    count = max(1, ctx.size // 8 // (16 * KiB))
    data = b"".join(batches(template, count))
    records = decode_ours(data)
    if decode_kafka_python(data) != records:
        raise AssertionError("kafka-python and the reference decode different record counts")
    ours, base = ctx.timed_pair(lambda: decode_ours(data), lambda: decode_kafka_python(data))
    ctx.profiled(name, lambda: decode_ours(data))
    return Figure(
        name=name,
        title=f"Record decode, {codec.label}",
        unit="krec/s",
        ours=records / ours / 1000,
        ours_label="iter_batches + RecordBatch.records()",
        baseline=records / base / 1000,
        baseline_label="kafka-python 3 MemoryRecords / DefaultRecordBatch",
        target=TARGET,
        details={"records": records, "batches": count, "bytes": len(data),
                 "records_per_batch": template.count, **ctx.timings(ours, base)},
    )  # fmt: skip


def figures(ctx: Context) -> list:
    return [
        ([f"decode-{codec.label}"], lambda codec=codec: measure(ctx, codec)) for codec in CODECS
    ]
