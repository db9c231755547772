"""Writing v2 batches the way Kafka's MemoryRecordsBuilder does (spec/formats/record-batch-v2.md).

[clients/.../common/record/MemoryRecordsBuilder.java, DefaultRecord.java writeTo]. The
encoder is the decoder's mirror: the same 61-byte header struct, the same
zigzag varints. Byte-for-byte it matches Kafka for uncompressed batches; for
compressed ones the codec's own output may differ from the JVM's, which is fine
because readers only require that the stream decodes.
"""

from __future__ import annotations

from collections.abc import Sequence

from .batch import (
    ATTRIBUTES_OFFSET,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    DELETE_HORIZON_FLAG_MASK,
    HEADER,
    LOG_OVERHEAD,
    MAGIC,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from .checksums import crc32c
from .compression import Compression, compress
from .control import ControlRecordType, encode_control_key, encode_end_txn_marker
from .record import (
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    Header,
    SimpleRecord,
    TimestampType,
)
from .varint import encode_varint, encode_varlong


def encode_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[Header] = (),
) -> bytes:
    """One v2 record: varint length, then attributes (REC-4: 0) and the zigzag fields in the
    layout of REC-1, null as -1 (REC-6)."""
    body = bytearray(b"\x00")
    body += encode_varlong(timestamp_delta)
    body += encode_varint(offset_delta)
    for blob in (key, value):
        body += encode_varint(-1) if blob is None else encode_varint(len(blob)) + blob
    body += encode_varint(len(headers))
    for header in headers:
        body += encode_varint(len(header.key)) + header.key
        if header.value is None:
            body += encode_varint(-1)
        else:
            body += encode_varint(len(header.value)) + header.value
    return encode_varint(len(body)) + bytes(body)


def _attributes(
    compression: Compression,
    timestamp_type: TimestampType,
    is_transactional: bool,
    is_control: bool,
    has_delete_horizon: bool,
) -> int:
    attributes = int(compression)
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if is_control:
        attributes |= CONTROL_FLAG_MASK
    if has_delete_horizon:
        attributes |= DELETE_HORIZON_FLAG_MASK
    return attributes


def build_record_batch(
    records: Sequence[SimpleRecord],
    *,
    base_offset: int = 0,
    compression: Compression = Compression.NONE,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    log_append_time: int | None = None,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    delete_horizon_ms: int | None = None,
    empty_max_timestamp: int = NO_TIMESTAMP,
    last_offset_delta: int | None = None,
) -> bytes:
    """Encode a v2 batch (BATCH-1): offset deltas 0 to n-1 (REC-12; a record may name its own,
    to write hostile batches for tests), maxTimestamp per
    BATCH-13, CRC-32C per BATCH-3. With no records this is Kafka's writeEmptyHeader (BATCH-8).
    ``last_offset_delta`` is MemoryRecordsBuilder.overrideLastOffset: the cleaner keeps a
    batch's last offset when records go (COMPACT-19)."""
    if timestamp_type is TimestampType.NO_TIMESTAMP_TYPE:
        raise ValueError("a v2 batch needs CreateTime or LogAppendTime")
    deltas = [r.offset_delta if r.offset_delta is not None else i for i, r in enumerate(records)]
    if records:
        first_ts = records[0].timestamp
        base_timestamp = delete_horizon_ms if delete_horizon_ms is not None else first_ts
        max_timestamp = max(r.timestamp for r in records)
        natural_delta = deltas[-1]
    else:
        base_timestamp = NO_TIMESTAMP if delete_horizon_ms is None else delete_horizon_ms
        max_timestamp = empty_max_timestamp
        natural_delta = 0
    if last_offset_delta is None:
        last_offset_delta = natural_delta
    if base_timestamp < 0 and base_timestamp != NO_TIMESTAMP:
        raise ValueError(f"invalid base timestamp {base_timestamp}")
    if timestamp_type is TimestampType.LOG_APPEND_TIME and log_append_time is not None:
        max_timestamp = log_append_time
    body = b"".join(
        encode_record(delta, r.timestamp - base_timestamp, r.key, r.value, r.headers)
        for delta, r in zip(deltas, records, strict=True)
    )
    payload = compress(compression, body) if records else b""
    attributes = _attributes(
        compression if records else Compression.NONE,
        timestamp_type,
        is_transactional,
        is_control,
        delete_horizon_ms is not None,
    )
    fields = (
        partition_leader_epoch, attributes, last_offset_delta, base_timestamp, max_timestamp,
        producer_id, producer_epoch, base_sequence, len(records),
    )  # fmt: skip
    return _framed(base_offset, payload, fields)


def _framed(base_offset: int, payload: bytes, fields: tuple) -> bytes:
    """The 61-byte header (BATCH-1) before ``payload``, with batchLength and the CRC-32C
    (BATCH-3) computed; ``fields``: partitionLeaderEpoch, then attributes to recordsCount."""
    epoch, *rest = fields
    header = bytearray(HEADER.size)
    length = HEADER.size + len(payload) - LOG_OVERHEAD
    HEADER.pack_into(header, 0, base_offset, length, epoch, MAGIC, 0, *rest)
    batch = header + payload
    crc = crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:])
    batch[CRC_OFFSET : CRC_OFFSET + 4] = crc.to_bytes(4, "big")
    return bytes(batch)


def build_raw_batch(
    body: bytes,
    records_count: int,
    compression: Compression = Compression.NONE,
    *,
    base_offset: int = 0,
    last_offset_delta: int | None = None,
) -> bytes:
    """A v2 batch around record bytes encoded elsewhere (``encode_record``'s, or hostile
    ones), with the header fields given and a valid CRC: CreateTime, timestamps -1, no
    producer. ``last_offset_delta`` defaults to ``records_count - 1``."""
    last = records_count - 1 if last_offset_delta is None else last_offset_delta
    fields = (NO_PARTITION_LEADER_EPOCH, int(compression), last, NO_TIMESTAMP, NO_TIMESTAMP,
              NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_SEQUENCE, records_count)  # fmt: skip
    return _framed(base_offset, compress(compression, body), fields)


def build_control_batch(
    control_type: ControlRecordType,
    *,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int = 0,
    base_offset: int = 0,
    timestamp: int = NO_TIMESTAMP,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    value: bytes | None = None,
) -> bytes:
    """A control batch of one record (CTRL-1, CTRL-10). COMMIT/ABORT carry an
    EndTransactionMarker value.

    Transaction markers are transactional, uncompressed and have baseSequence -1;
    an ABORT or COMMIT batch is 78 bytes.
    """
    is_marker = control_type in (ControlRecordType.ABORT, ControlRecordType.COMMIT)
    if is_marker:
        value = encode_end_txn_marker(coordinator_epoch)
    record = SimpleRecord(value=value, key=encode_control_key(control_type), timestamp=timestamp)
    return build_record_batch(
        [record],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        is_transactional=is_marker,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
    )
