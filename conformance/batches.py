"""Batches described as data (scenario ``append`` steps) turned into bytes.

A batch spec is a mapping; every field is optional::

    records: 3                      # three records, values "v0".."v2"; or a list of records
    value_bytes: 20                 # with an int ``records``: each value is 20 bytes of "x"
    timestamp: 1000                 # every record's timestamp (default: now_ms of the step)
    timestamps: [1000, 1200]        # or one per record
    base_offset: 0                  # follower appends give real offsets
    magic: 2                        # 0 or 1: a legacy message set (one entry per record,
                                    # or one wrapper when compressed)
    codec: none                     # gzip, snappy, lz4, zstd
    timestamp_type: CreateTime      # or LogAppendTime (with log_append_time)
    partition_leader_epoch: 0       # a follower's batches must carry an epoch (APPEND-20)
    producer_id: -1, producer_epoch: -1, base_sequence: -1, transactional: false, control: false
    marker: {type: ABORT, coordinator_epoch: 0}
                                    # a COMMIT or ABORT marker: a transactional control
                                    # batch of one EndTransactionMarker record (baseSequence
                                    # -1, producer_id/producer_epoch from the spec, the
                                    # record's timestamp ``timestamp``); ``records`` and the
                                    # record fields are ignored
    max_timestamp: 5                # header overwrites, the CRC recomputed ...
    last_offset_delta: 4
    records_count: 2
    patch: [{at: 17, hex: "00"}]    # ... raw byte patches after that (CRC not recomputed
    recrc: true                     # unless recrc; magic 2 only)
    bad_crc: true                   # flip one bit of the stored CRC
    cut: -3                         # keep the first n bytes (negative: drop the last n)
    hex: "0000..."                  # raw bytes; every other field is ignored

A record in a list: ``{key, value, value_hex, timestamp, headers: [{key, value}]}``;
``value: null`` is a null value. The harness builds the bytes with the reference
encoders (reference_impl.records); the testee only ever sees bytes.
"""

from __future__ import annotations

import struct

from reference_impl.records import (
    Compression,
    ControlRecordType,
    Header,
    SimpleRecord,
    TimestampType,
    build_control_batch,
    build_legacy_message_set,
    build_record_batch,
)
from reference_impl.records.checksums import crc32c

ATTRIBUTES_OFFSET = 21
CRC_OFFSET = 17
LAST_OFFSET_DELTA_OFFSET = 23
MAX_TIMESTAMP_OFFSET = 35
RECORDS_COUNT_OFFSET = 57

CODECS = {c.label: c for c in Compression}
TIMESTAMP_TYPES = {
    "CreateTime": TimestampType.CREATE_TIME,
    "LogAppendTime": TimestampType.LOG_APPEND_TIME,
}


def _blob(value) -> bytes | None:
    if value is None:
        return None
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _records(spec: dict, now_ms: int) -> list[SimpleRecord]:
    default_ts = spec.get("timestamp", now_ms)
    given = spec.get("records", 1)
    if isinstance(given, int):
        size = spec.get("value_bytes")
        given = [{"value": "x" * size if size is not None else f"v{i}"} for i in range(given)]
    stamps = spec.get("timestamps") or [None] * len(given)
    if len(stamps) != len(given):
        raise ValueError("timestamps must give one timestamp per record")
    records = []
    for record, stamp in zip(given, stamps, strict=True):
        if "value_hex" in record:
            value = bytes.fromhex(record["value_hex"])
        else:
            value = _blob(record.get("value", "v"))
        ts = record.get("timestamp", stamp if stamp is not None else default_ts)
        headers = tuple(
            Header(_blob(h["key"]), _blob(h.get("value"))) for h in record.get("headers", ())
        )
        records.append(
            SimpleRecord(value=value, key=_blob(record.get("key")), timestamp=ts, headers=headers)
        )
    return records


def _recrc(buf: bytearray) -> None:
    struct.pack_into(">I", buf, CRC_OFFSET, crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:]))


def _marker(spec: dict, now_ms: int) -> bytes:
    """A COMMIT or ABORT control batch: one EndTransactionMarker record (CTRL-*, TXN-B-3)."""
    marker = spec["marker"]
    return build_control_batch(
        ControlRecordType[marker["type"]],
        producer_id=spec.get("producer_id", -1),
        producer_epoch=spec.get("producer_epoch", -1),
        coordinator_epoch=marker.get("coordinator_epoch", 0),
        base_offset=spec.get("base_offset", 0),
        timestamp=spec.get("timestamp", now_ms),
        partition_leader_epoch=spec.get("partition_leader_epoch", 0),
    )


def build(spec: dict, now_ms: int) -> bytes:
    """The bytes of one batch spec (for magic 0/1 possibly several entries)."""
    if "hex" in spec:
        return bytes.fromhex(spec["hex"])
    magic = spec.get("magic", 2)
    codec = CODECS[spec.get("codec", "none")]
    timestamp_type = TIMESTAMP_TYPES[spec.get("timestamp_type", "CreateTime")]
    if "marker" in spec:
        magic, data = 2, bytearray(_marker(spec, now_ms))
    elif magic in (0, 1):
        data = bytearray(
            build_legacy_message_set(
                _records(spec, now_ms),
                magic=magic,
                base_offset=spec.get("base_offset", 0),
                compression=codec,
                timestamp_type=timestamp_type,
                log_append_time=spec.get("log_append_time"),
            )
        )
    else:
        data = bytearray(
            build_record_batch(
                _records(spec, now_ms),
                base_offset=spec.get("base_offset", 0),
                compression=codec,
                timestamp_type=timestamp_type,
                log_append_time=spec.get("log_append_time"),
                producer_id=spec.get("producer_id", -1),
                producer_epoch=spec.get("producer_epoch", -1),
                base_sequence=spec.get("base_sequence", -1),
                is_transactional=spec.get("transactional", False),
                is_control=spec.get("control", False),
                partition_leader_epoch=spec.get("partition_leader_epoch", 0),
            )
        )
    if magic == 2:
        _rewrite_header(spec, data)
    for patch in spec.get("patch", ()):
        raw = bytes.fromhex(patch["hex"])
        at = patch["at"] if patch["at"] >= 0 else len(data) + patch["at"]
        data[at : at + len(raw)] = raw
    if spec.get("recrc") and magic == 2:
        _recrc(data)
    if spec.get("bad_crc"):
        data[CRC_OFFSET + 3] ^= 0x01
    if "cut" in spec:
        data = data[: spec["cut"]]
    return bytes(data)


def _rewrite_header(spec: dict, data: bytearray) -> None:
    """A v2 batch's header fields the spec sets by hand (a lying maxTimestamp, count...),
    with the CRC made right again for them."""
    rewrites = (
        ("max_timestamp", ">q", MAX_TIMESTAMP_OFFSET),
        ("last_offset_delta", ">i", LAST_OFFSET_DELTA_OFFSET),
        ("records_count", ">i", RECORDS_COUNT_OFFSET),
        ("attributes", ">h", ATTRIBUTES_OFFSET),
    )
    changed = False
    for field, fmt, at in rewrites:
        if field in spec:
            struct.pack_into(fmt, data, at, spec[field])
            changed = True
    if changed:
        _recrc(data)


def build_all(specs: list[dict], now_ms: int) -> list[bytes]:
    return [build(spec, now_ms) for spec in specs]
