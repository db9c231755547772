"""Log directories for the pipeline tests, written the way a broker writes them (the append
rule for index entries), from the reference's encoders; and the reference's own reading of
them, which the Spark rows must equal."""

from __future__ import annotations

import random
import struct
from pathlib import Path

from reference_impl.formats.checkpoints import TopicPartitionOffset, write_offset_checkpoint
from reference_impl.formats.index_entries import (
    OffsetPosition,
    TimestampOffset,
    encode_offset_index_entry,
    encode_time_index_entry,
)
from reference_impl.records import (
    Compression,
    ControlRecordType,
    Header,
    SimpleRecord,
    TimestampType,
    build_control_batch,
    build_legacy_message_set,
    build_record_batch,
    iter_file_batches,
    read_batch,
)

NOW = 1_700_000_000_000


def millis(moment) -> int:
    """A ``timestamp`` column's value (a datetime: aware from pyarrow, local time from Spark's
    collect()) as milliseconds since the epoch, as the batch stores it."""
    return round(moment.timestamp() * 1000)


CODECS = list(Compression)


def data_batch(offset: int, n: int = 3, *, codec=Compression.NONE, size: int = 8, **kw) -> bytes:
    """``n`` records from ``offset``: keys, one null key, one tombstone, a header; values
    padded with ``size`` random bytes (so compression does not shrink them away)."""
    records = [
        SimpleRecord(
            key=None if i == 1 else b"k%d" % (offset + i),
            value=None
            if i == 2
            else b"v%d-" % (offset + i) + random.Random(offset).randbytes(size),
            timestamp=NOW + offset + i,
            headers=(Header(b"h", b"%d" % i),) if i == 0 else (),
        )
        for i in range(n)
    ]
    return build_record_batch(records, base_offset=offset, compression=codec, **kw)


def transaction(offset: int, *, abort: bool) -> list[bytes]:
    """A transactional batch and its marker: offsets offset..offset+3."""
    ids = {"producer_id": 7, "producer_epoch": 1}
    data = data_batch(offset, base_sequence=0, is_transactional=True, **ids)
    marker = build_control_batch(
        ControlRecordType.ABORT if abort else ControlRecordType.COMMIT,
        base_offset=offset + 3, timestamp=NOW + offset, **ids,
    )  # fmt: skip
    return [data, marker]


def write_segment(directory: Path, base: int, batches: list[bytes], *, interval: int = 200):
    """The .log, .index and .timeindex (entries every ``interval`` bytes, by the append rule)."""
    prefix = directory / f"{base:020d}"
    index, time_index = bytearray(), bytearray()
    since = position = 0
    max_ts = -1
    for raw in batches:
        batch = read_batch(raw)
        if since > interval:
            index += encode_offset_index_entry(OffsetPosition(batch.last_offset, position), base)
            if batch.max_timestamp > max_ts:
                entry = TimestampOffset(batch.max_timestamp, batch.last_offset)
                time_index += encode_time_index_entry(entry, base)
            since = 0
        max_ts = max(max_ts, batch.max_timestamp)
        since += len(raw)
        position += len(raw)
    prefix.with_suffix(".log").write_bytes(b"".join(batches))
    prefix.with_suffix(".index").write_bytes(bytes(index))
    prefix.with_suffix(".timeindex").write_bytes(bytes(time_index))


def build_log_dir(root: Path) -> Path:
    """A log directory: ``orders-0`` (two segments, every codec, transactions, a
    LogAppendTime batch, an empty compacted batch), ``orders-1`` (one segment),
    ``legacy-0`` (magic 0 and 1, plain and gzip wrappers) and a ``-delete`` directory that
    readers leave out."""
    log_dir = root / "logs"
    orders0 = log_dir / "orders-0"
    orders0.mkdir(parents=True)
    first = [data_batch(3 * i, codec=CODECS[i % len(CODECS)]) for i in range(10)]
    second = [
        *transaction(30, abort=False),
        *transaction(34, abort=True),
        data_batch(38, codec=Compression.ZSTD, timestamp_type=TimestampType.LOG_APPEND_TIME,
                   log_append_time=NOW + 999),
        build_record_batch([], base_offset=41, delete_horizon_ms=NOW),
        *[data_batch(42 + 3 * i, codec=CODECS[i % len(CODECS)]) for i in range(6)],
    ]  # fmt: skip
    write_segment(orders0, 0, first)
    write_segment(orders0, 30, second)
    orders1 = log_dir / "orders-1"
    orders1.mkdir()
    write_segment(orders1, 0, [data_batch(3 * i, codec=Compression.LZ4) for i in range(4)])
    legacy = log_dir / "legacy-0"
    legacy.mkdir()
    records = [SimpleRecord(b"legacy-%d" % i, b"k%d" % i, NOW + i) for i in range(3)]
    entries = [
        build_legacy_message_set(records, magic=0, base_offset=0),
        build_legacy_message_set(records, magic=0, base_offset=3, compression=Compression.GZIP),
        build_legacy_message_set(records, magic=1, base_offset=6),
        build_legacy_message_set(records, magic=1, base_offset=9, compression=Compression.SNAPPY),
    ]
    (legacy / f"{0:020d}.log").write_bytes(b"".join(entries))
    deleted = log_dir / "orders-2.0123456789abcdef0123456789abcdef-delete"
    deleted.mkdir()
    write_segment(deleted, 0, [data_batch(0)])
    leo = [TopicPartitionOffset("orders", 0, 60), TopicPartitionOffset("orders", 1, 12),
           TopicPartitionOffset("legacy", 0, 12)]  # fmt: skip
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        (log_dir / name).write_bytes(write_offset_checkpoint(leo))
    (log_dir / "meta.properties").write_text("version=0\nbroker.id=0\n")
    return log_dir


def big_segment(directory: Path, batches: int = 600, *, interval: int = 4096) -> Path:
    """One partition with a segment of about ``batches`` x 1.4 KB, every codec."""
    directory.mkdir(parents=True)
    raw = [data_batch(3 * i, codec=CODECS[i % len(CODECS)], size=400) for i in range(batches)]
    write_segment(directory, 0, raw, interval=interval)
    return directory / f"{0:020d}.log"


def flip_byte(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))


def batch_positions(log: Path) -> list[int]:
    with open(log, "rb") as handle:
        return [batch.position for batch in iter_file_batches(handle)]


def reference_rows(logs: list[Path]) -> list[tuple]:
    """(file, offset, timestamp, key, value, headers, is_control) of every record, by the
    reference's reader."""
    rows = []
    for log in logs:
        with open(log, "rb") as handle:
            for batch in iter_file_batches(handle):
                for r in batch.records():
                    headers = tuple((h.key.decode(), h.value) for h in r.headers)
                    rows.append((str(log), r.offset, r.timestamp, r.key, r.value, headers,
                                 batch.is_control))  # fmt: skip
    return sorted(rows, key=repr)


def overwrite_index_entry(index: Path, slot: int, position: int) -> None:
    """Point slot ``slot`` of an offset index at ``position`` (keeping its offset)."""
    data = bytearray(index.read_bytes())
    struct.pack_into(">i", data, slot * 8 + 4, position)
    index.write_bytes(bytes(data))
