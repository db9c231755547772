"""The data every benchmark reads or writes: one record shape, batches of a given size, and
segments of those batches written to a temp dir.

The shape follows the common Kafka benchmark setup: 1 KiB values (OpenMessaging
Benchmark's default payload) of word-like text, so codecs compress them about as well as
JSON, 16-byte keys, no headers, written by an idempotent producer (producer id, epoch and
sequences set, as Kafka clients do by default since 3.0) to a leader in epoch 0. A batch
holds as many whole records as fit its size; the last record's value is stretched so the
batch is exactly that size (16 KiB is the producer's default ``batch.size``). A batch
smaller than one record holds one record cut to fit.

Every batch of a segment is the same template restamped: its base offset, timestamps and
base sequence move on, and its CRC is computed again, so indexes, time indexes and offset
checks see a realistic log.
"""

from __future__ import annotations

import random
import re
import struct
from dataclasses import dataclass

from reference_impl.records import Compression, SimpleRecord, build_record_batch
from reference_impl.records.batch import ATTRIBUTES_OFFSET, CRC_OFFSET
from reference_impl.records.checksums import crc32c

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
FIRST_TIMESTAMP = 1_700_000_000_000
PRODUCER_ID = 4242
LEADER_EPOCH = 0
_UNITS = {"": 1, "b": 1, "k": KiB, "kib": KiB, "m": MiB, "mib": MiB, "g": GiB, "gib": GiB}
_WORDS = [
    "offset", "segment", "batch", "record", "leader", "replica", "epoch", "index", "commit",
    "abort", "producer", "topic", "partition", "broker", "cluster", "fetch", "append", "flush",
    "roll", "retention", "compaction", "timestamp", "sequence", "header", "value", "key",
    "checksum", "codec", "snapshot", "checkpoint", "recovery",
]  # fmt: skip

# header fields a restamp rewrites (record-batch-v2.md layout)
_BASE_OFFSET = struct.Struct(">q")  # at 0
_TIMESTAMPS = struct.Struct(">qq")  # baseTimestamp, maxTimestamp at 27
_BASE_SEQUENCE = struct.Struct(">i")  # at 53


def parse_size(text: str) -> int:
    """``512MiB``, ``2g``, ``64k`` or a plain byte count."""
    match = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (try 512MiB, 2GiB, 64KiB)")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def format_size(size: int) -> str:
    for unit, scale in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if size >= scale:
            exact = size % scale == 0
            return f"{size // scale} {unit}" if exact else f"{size / scale:.2f} {unit}"
    return f"{size} B"


@dataclass(frozen=True)
class RecordShape:
    key_bytes: int = 16
    value_bytes: int = 1024

    def describe(self) -> str:
        return f"{self.key_bytes} B keys, {self.value_bytes} B text values, no headers"


@dataclass(frozen=True)
class Template:
    """One batch to restamp: its bytes, its record count and the records themselves."""

    raw: bytes
    records: tuple[SimpleRecord, ...]
    compression: Compression

    @property
    def size(self) -> int:
        return len(self.raw)

    @property
    def count(self) -> int:
        return len(self.records)


def _value(rnd: random.Random, size: int) -> bytes:
    text = " ".join(rnd.choice(_WORDS) for _ in range(size // 4 + 1)).encode()
    return text[:size]


def make_records(count: int, shape: RecordShape, seed: int = 0) -> list[SimpleRecord]:
    rnd = random.Random(seed)
    return [
        SimpleRecord(
            value=_value(rnd, shape.value_bytes),
            key=b"key-%0*d" % (max(shape.key_bytes - 4, 1), i),
            timestamp=FIRST_TIMESTAMP + i,
        )
        for i in range(count)
    ]


def _build(records, compression: Compression) -> bytes:
    return build_record_batch(
        records,
        compression=compression,
        producer_id=PRODUCER_ID,
        producer_epoch=0,
        base_sequence=0,
        partition_leader_epoch=LEADER_EPOCH,
    )


def batch_template(
    batch_bytes: int, shape: RecordShape, compression: Compression = Compression.NONE
) -> Template:
    """A batch of exactly ``batch_bytes`` uncompressed (see the module docstring); with a
    codec, the same records compressed, so the batch is smaller."""
    records = make_records(max(1, batch_bytes // shape.value_bytes) + 1, shape)
    count = 1
    while (
        count < len(records) and len(_build(records[: count + 1], Compression.NONE)) <= batch_bytes
    ):
        count += 1
    records = records[:count]
    for _ in range(8):  # stretch (or cut) the last value until the batch is exact
        size = len(_build(records, Compression.NONE))
        if size == batch_bytes:
            break
        last = records[-1]
        value = _value(random.Random(count), max(0, len(last.value) + batch_bytes - size))
        records[-1] = SimpleRecord(value=value, key=last.key, timestamp=last.timestamp)
    return Template(_build(records, compression), tuple(records), compression)


def restamp(buf: bytearray, base_offset: int, time_shift: int, base_sequence: int) -> None:
    """Move a template batch (in ``buf``, a copy) to new offsets, timestamps and sequence,
    then recompute its CRC."""
    _BASE_OFFSET.pack_into(buf, 0, base_offset)
    base_ts, max_ts = _TIMESTAMPS.unpack_from(buf, 27)
    _TIMESTAMPS.pack_into(buf, 27, base_ts + time_shift, max_ts + time_shift)
    _BASE_SEQUENCE.pack_into(buf, 53, base_sequence)
    crc = crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:])
    buf[CRC_OFFSET : CRC_OFFSET + 4] = crc.to_bytes(4, "big")


def batches(template: Template, count: int, *, base_offset: int = 0, client: bool = False):
    """``count`` restamped copies of ``template``, as bytes: consecutive offsets (or, for
    ``client``, base offset 0 as a producer sends them), timestamps 1 ms per record."""
    for i in range(count):
        buf = bytearray(template.raw)
        offset = 0 if client else base_offset + i * template.count
        restamp(buf, offset, i * template.count, i * template.count)
        yield bytes(buf)


@dataclass(frozen=True)
class Segment:
    path: str
    size: int  # bytes of whole batches
    batches: int
    records: int
    tail: int = 0  # bytes of the torn batch after them, if any


def write_segment(
    path: str, template: Template, total_bytes: int, *, torn_tail: bool = False
) -> Segment:
    """A ``.log`` of whole batches filling at most ``total_bytes`` (never past the 2^31-1
    bytes a segment may hold); with ``torn_tail``, half a batch follows them, as after a
    crash in the middle of a write."""
    limit = min(total_bytes, 2**31 - 1)
    count = max(1, limit // template.size)
    buf = bytearray(template.raw)
    with open(path, "wb", buffering=4 * MiB) as handle:
        for i in range(count):
            buf[:] = template.raw
            restamp(buf, i * template.count, i * template.count, i * template.count)
            handle.write(buf)
        tail = 0
        if torn_tail:
            buf[:] = template.raw
            restamp(buf, count * template.count, count * template.count, count * template.count)
            tail = template.size // 2
            handle.write(buf[:tail])
    return Segment(path, count * template.size, count, count * template.count, tail)


def restore_tail(segment: Segment, template: Template) -> None:
    """Put the torn tail back after a recovery cut it (see write_segment)."""
    if not segment.tail:
        return
    buf = bytearray(template.raw)
    count = segment.batches
    restamp(buf, count * template.count, count * template.count, count * template.count)
    with open(segment.path, "r+b") as handle:
        handle.truncate(segment.size)
        handle.seek(segment.size)
        handle.write(buf[: segment.tail])
