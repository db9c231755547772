"""Kafka's own record-format unit tests, restated against reference_impl.records.

Sources (see /work/shared/kafka-storage-facts.md §1 and §6.6): ByteUtilsTest, Crc32CTest,
DefaultRecordBatchTest, DefaultRecordTest, LegacyRecordTest, AbstractLegacyRecordBatchTest,
EndTransactionMarkerTest / ControlRecordTypeTest, plus the codec framing rules of §1.10 and
the .log framing rules of §1.1 (FileLogInputStream).
"""

from __future__ import annotations

import gc
import json
import struct
import subprocess
import sys
import textwrap
import zlib

import cramjam
import pytest
import xxhash
import zstandard

from reference_impl.errors import Category, KafkaLogError
from reference_impl.records import (
    Compression,
    ControlRecordType,
    Header,
    LegacyBatch,
    RecordBatch,
    SimpleRecord,
    TimestampType,
    build_control_batch,
    build_legacy_message_set,
    build_record_batch,
    compress,
    decompress,
    increment_sequence,
    iter_batches,
    iter_file_batches,
    parse_control_key,
    parse_end_txn_marker,
    read_batch,
)
from reference_impl.records.batch import (
    HEADER,
    RECORD_BATCH_OVERHEAD,
    set_base_offset,
    set_max_timestamp,
    set_partition_leader_epoch,
)
from reference_impl.records.checksums import crc32, crc32c
from reference_impl.records.compression import (
    XERIAL_MAGIC,
    kafka_lz4_frame,
    xerial_snappy_frame,
)
from reference_impl.records.legacy import encode_message
from reference_impl.records.varint import (
    decode_unsigned_varint,
    decode_varint,
    decode_varlong,
    encode_unsigned_varint,
    encode_varint,
    encode_varlong,
    size_of_varint,
    size_of_varlong,
)

INT_MAX = 2**31 - 1
INT_MIN = -(2**31)
CODECS = list(Compression)
COMPRESSED = [c for c in Compression if c is not Compression.NONE]
LEGACY_CODECS = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4]


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def expect(category: Category, fn, *args, **kwargs) -> KafkaLogError:
    """Call ``fn`` and assert it raises a KafkaLogError of ``category``."""
    with pytest.raises(KafkaLogError) as info:
        fn(*args, **kwargs)
    assert info.value.category == category, info.value
    return info.value


def recrc(raw: bytes) -> bytes:
    """Recompute a v2 batch's CRC-32C after patching bytes inside [21, end)."""
    buf = bytearray(raw)
    struct.pack_into(">I", buf, 17, crc32c(bytes(buf[21:])))
    return bytes(buf)


def patch(raw: bytes, fmt: str, offset: int, value: int, *, fix_crc: bool = True) -> bytes:
    buf = bytearray(raw)
    struct.pack_into(fmt, buf, offset, value)
    return recrc(bytes(buf)) if fix_crc else bytes(buf)


def v2_batch(
    body: bytes,
    count: int,
    *,
    attributes: int = 0,
    base_offset: int = 0,
    last_offset_delta: int | None = None,
    base_timestamp: int = 0,
    max_timestamp: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = -1,
) -> bytes:
    """A v2 batch around arbitrary (possibly malformed) record bytes, with a correct CRC."""
    header = HEADER.pack(
        base_offset, RECORD_BATCH_OVERHEAD + len(body) - 12, partition_leader_epoch, 2, 0,
        attributes, max(count - 1, 0) if last_offset_delta is None else last_offset_delta,
        base_timestamp, max_timestamp, producer_id, producer_epoch, base_sequence, count,
    )  # fmt: skip
    return recrc(header + body)


def raw_record(*fields: bytes, length: int | None = None) -> bytes:
    """A v2 record from raw field bytes, prefixed with its (optionally wrong) length."""
    body = b"".join(fields)
    return encode_varint(len(body) if length is None else length) + body


def vi(n: int) -> bytes:
    return encode_varint(n)


def good_record_fields(key: bytes | None = b"k", value: bytes | None = b"v") -> list[bytes]:
    """attributes, timestampDelta, offsetDelta, key, value, 0 headers."""
    fields = [b"\x00", encode_varlong(0), vi(0)]
    for blob in (key, value):
        fields.append(vi(-1) if blob is None else vi(len(blob)) + blob)
    fields.append(vi(0))
    return fields


SAMPLE = [
    SimpleRecord(b"a", key=b"1", timestamp=1_000),
    SimpleRecord(b"bb", key=None, timestamp=1_005, headers=(Header(b"h1", b"x"),)),
    SimpleRecord(None, key=b"3", timestamp=1_002, headers=(Header(b"h2", None), Header(b"", b""))),
]


# --------------------------------------------------------------------------------------
# ByteUtilsTest: varints (§1.5)
# --------------------------------------------------------------------------------------

VARINT_VECTORS = [
    (0, "00"), (-1, "01"), (1, "02"), (63, "7e"), (-64, "7f"), (64, "8001"), (-65, "8101"),
    (8191, "fe7f"), (-8192, "ff7f"), (8192, "808001"), (1048576, "80808001"),
    (134217728, "8080808001"), (INT_MAX, "feffffff0f"), (INT_MIN, "ffffffff0f"),
]  # fmt: skip
VARLONG_EXTRA = [(17179869184, "808080808001"), (2199023255552, "80808080808001")]
UNSIGNED_VECTORS = [(-1, "ffffffff0f"), (8192, "8040"), (INT_MIN, "8080808008")]


@pytest.mark.req("VARINT-1", "VARINT-4")
@pytest.mark.parametrize(("value", "hexed"), VARINT_VECTORS)
def test_varint_vectors(value, hexed):
    raw = bytes.fromhex(hexed)
    assert encode_varint(value) == raw
    assert decode_varint(raw, 0) == (value, len(raw))
    assert size_of_varint(value) == len(raw)
    # decoding from the middle of a buffer returns the position after the varint
    assert decode_varint(b"\xaa" + raw + b"\xbb", 1) == (value, 1 + len(raw))


@pytest.mark.req("VARINT-1", "VARINT-4")
@pytest.mark.parametrize(("value", "hexed"), VARINT_VECTORS + VARLONG_EXTRA)
def test_varlong_vectors(value, hexed):
    raw = bytes.fromhex(hexed)
    assert encode_varlong(value) == raw
    assert decode_varlong(raw, 0) == (value, len(raw))
    assert size_of_varlong(value) == len(raw)


@pytest.mark.parametrize(("value", "hexed"), UNSIGNED_VECTORS)
def test_unsigned_varint_vectors(value, hexed):
    raw = bytes.fromhex(hexed)
    assert encode_unsigned_varint(value) == raw
    # Java returns an int; we return the same 32-bit pattern as an unsigned number
    assert decode_unsigned_varint(raw, 0) == (value & 0xFFFFFFFF, len(raw))


@pytest.mark.req("VARINT-3")
@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("8000", 0),  # longer than necessary
        ("8180808000", -1),
        ("feffffff7f", INT_MAX),  # bits above 31 in the 5th byte are dropped
        ("ffffffff7f", INT_MIN),
    ],
)
def test_non_minimal_varints_are_accepted(raw, value):
    # VARINT-3: a reader does not reject a longer-than-necessary varint
    assert decode_varint(bytes.fromhex(raw), 0) == (value, len(raw) // 2)


@pytest.mark.req("VARINT-3")
def test_non_minimal_varlong_is_accepted():
    assert decode_varlong(bytes.fromhex("80808000"), 0) == (0, 4)
    # bits above 63 carried by the 10th byte are dropped
    assert decode_varlong(b"\xfe" + b"\xff" * 8 + b"\x7f", 0) == (2**63 - 1, 10)


@pytest.mark.req("VARINT-1")
def test_varlong_extremes_take_ten_bytes():
    for value in (2**63 - 1, -(2**63)):
        raw = encode_varlong(value)
        assert len(raw) == 10
        assert decode_varlong(raw, 0) == (value, 10)


def test_encoders_refuse_out_of_range_values():
    for bad in (INT_MAX + 1, INT_MIN - 1):
        with pytest.raises(ValueError):
            encode_varint(bad)
    with pytest.raises(ValueError):
        encode_varlong(2**63)


@pytest.mark.req("VARINT-2")
@pytest.mark.parametrize(
    "raw",
    [
        "ffffffff80",  # 5th byte still has its top bit: testInvalidVarint
        "ffffffffff01",
        "8080808080",
    ],
)
def test_invalid_varint(raw):
    err = expect(Category.INVALID_RECORD, decode_varint, bytes.fromhex(raw), 0)
    assert err.position == 0
    expect(Category.INVALID_RECORD, decode_unsigned_varint, bytes.fromhex(raw), 0)


@pytest.mark.req("VARINT-2")
def test_invalid_varlong_past_ten_bytes():
    # testInvalidVarlong: 10 continuation bytes then a terminator = 11 bytes
    expect(Category.INVALID_RECORD, decode_varlong, b"\xff" * 10 + b"\x01", 0)
    expect(Category.INVALID_RECORD, decode_varlong, b"\x80" * 11, 0)


@pytest.mark.req("VARINT-5")
@pytest.mark.parametrize("fn", [decode_varint, decode_varlong, decode_unsigned_varint])
def test_truncated_varint(fn):
    expect(Category.INVALID_RECORD, fn, b"\x80\x80", 0)
    expect(Category.INVALID_RECORD, fn, b"", 0)
    expect(Category.INVALID_RECORD, fn, b"\x01", 1)


# --------------------------------------------------------------------------------------
# Crc32CTest and the legacy CRC-32
# --------------------------------------------------------------------------------------


@pytest.mark.req("BATCH-3")
def test_crc32c_vector():
    assert crc32c(b"Some String") == 608512271  # Crc32CTest#testValue
    assert crc32c(b"123456789") == 0xE3069283  # the Castagnoli check value


@pytest.mark.req("LEGACY-3")
def test_crc32_is_ieee_not_castagnoli():
    assert crc32(b"123456789") == 0xCBF43926
    assert crc32(b"Some String") != crc32c(b"Some String")


# --------------------------------------------------------------------------------------
# DefaultRecordBatchTest (§1.2-1.4)
# --------------------------------------------------------------------------------------


@pytest.mark.req("BATCH-1", "BATCH-8")
def test_write_empty_header():
    raw = build_record_batch(
        [], base_offset=15, producer_id=23423, producer_epoch=145, base_sequence=7,
        partition_leader_epoch=9, empty_max_timestamp=1_234_567, is_transactional=True,
    )  # fmt: skip
    assert len(raw) == RECORD_BATCH_OVERHEAD == 61
    batch = read_batch(raw)
    assert isinstance(batch, RecordBatch)
    batch.ensure_valid()
    assert batch.records_count == 0 and batch.records() == []
    assert batch.base_timestamp == -1
    assert batch.max_timestamp == 1_234_567
    assert batch.compression is Compression.NONE
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (23423, 145, 7)
    assert batch.partition_leader_epoch == 9
    assert batch.base_offset == 15 and batch.last_offset == 15
    assert batch.is_transactional and not batch.is_control
    assert batch.timestamp_type is TimestampType.CREATE_TIME


@pytest.mark.req("BATCH-8")
def test_empty_batch_is_not_decompressed():
    # BATCH-8: count 0 with codec bits set and bytes that are no gzip stream
    batch = read_batch(v2_batch(b"not gzip at all", 0, attributes=int(Compression.GZIP)))
    batch.ensure_valid()
    assert batch.records() == []


@pytest.mark.req("BATCH-5", "BATCH-6", "BATCH-8")
def test_empty_batch_keeps_offset_span_and_ignores_payload():
    # compaction can leave a 61-byte header whose lastOffsetDelta still spans the old records;
    # with count 0 the bytes after the header are not looked at (RecordIterator)
    raw = v2_batch(b"\xff\xff garbage", 0, base_offset=100, last_offset_delta=9, base_sequence=4)
    batch = read_batch(raw)
    batch.ensure_valid()
    assert batch.records() == []
    assert (batch.base_offset, batch.last_offset, batch.next_offset) == (100, 109, 110)
    assert batch.last_sequence == 13


@pytest.mark.req("BATCH-1", "BATCH-6", "BATCH-13", "REC-1", "REC-5", "REC-12", "COMP-2")
@pytest.mark.parametrize("codec", CODECS)
def test_build_default_record_batch_with_producer_id(codec):
    raw = build_record_batch(
        SAMPLE, base_offset=1234567, compression=codec, producer_id=1324123,
        producer_epoch=4444, base_sequence=0, partition_leader_epoch=5,
    )  # fmt: skip
    batch = read_batch(raw)
    batch.ensure_valid()
    assert batch.magic == 2
    assert batch.compression is codec
    assert batch.size_in_bytes == len(raw) == batch.batch_length + 12
    assert batch.records_count == 3
    assert (batch.base_offset, batch.last_offset) == (1234567, 1234569)
    assert (batch.producer_id, batch.producer_epoch) == (1324123, 4444)
    assert (batch.base_sequence, batch.last_sequence) == (0, 2)
    assert batch.base_timestamp == 1_000 and batch.max_timestamp == 1_005
    records = batch.records()
    assert [r.offset for r in records] == [1234567, 1234568, 1234569]
    assert [r.sequence for r in records] == [0, 1, 2]
    assert [r.timestamp for r in records] == [1_000, 1_005, 1_002]
    assert [(r.key, r.value) for r in records] == [(b"1", b"a"), (None, b"bb"), (b"3", None)]
    assert records[1].headers == (Header(b"h1", b"x"),)
    assert records[2].headers == (Header(b"h2", None), Header(b"", b""))
    assert [r.offset_delta for r in records] == [0, 1, 2]
    assert [r.timestamp_delta for r in records] == [0, 5, 2]


@pytest.mark.req("BATCH-6")
def test_build_without_producer_id_has_no_sequences():
    batch = read_batch(build_record_batch(SAMPLE))
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
    assert batch.last_sequence == -1
    assert [r.sequence for r in batch.records()] == [-1, -1, -1]
    assert batch.partition_leader_epoch == -1


@pytest.mark.req("BATCH-6")
def test_sequence_wrap_around():
    raw = build_record_batch(
        SAMPLE, producer_id=23423, producer_epoch=145, base_sequence=INT_MAX - 1
    )
    batch = read_batch(raw)
    assert [r.sequence for r in batch.records()] == [INT_MAX - 1, INT_MAX, 0]
    assert batch.last_sequence == 0


@pytest.mark.req("BATCH-6")
@pytest.mark.parametrize(
    ("base", "delta", "expected"),
    [(10, 5, 15), (INT_MAX, 1, 0), (INT_MAX - 1, 2, 0), (INT_MAX - 5, 10, 4), (0, 0, 0)],
)
def test_increment_sequence(base, delta, expected):
    assert increment_sequence(base, delta) == expected


@pytest.mark.req("BATCH-2", "FRAME-3")
def test_invalid_record_size():
    # DefaultRecordBatchTest#testInvalidRecordSize: batchLength = 10
    raw = build_record_batch(SAMPLE)
    bad = patch(raw, ">i", 8, 10, fix_crc=False)
    expect(Category.INVALID_BATCH_SIZE, lambda: list(iter_batches(bad)))
    expect(Category.INVALID_BATCH_SIZE, read_batch, bad)
    # a batch object over those bytes is invalid too (Kafka: sizeInBytes() < 61)
    batch = RecordBatch.from_bytes(bad)
    assert not batch.is_valid
    expect(Category.INVALID_BATCH_SIZE, batch.ensure_valid)


@pytest.mark.req("BATCH-2", "ERR-4")
def test_batch_shorter_than_header():
    raw = build_record_batch(SAMPLE, base_offset=77)
    short = patch(raw[:40], ">i", 8, 28, fix_crc=False)  # a whole 40-byte entry with magic 2
    # past the framing checks, so the entry's offset field is reported (ERR-4)
    err = expect(Category.INVALID_BATCH_SIZE, read_batch, short)
    assert (err.position, err.offset) == (0, 77)
    err = expect(Category.INVALID_BATCH_SIZE, lambda: list(iter_batches(raw + short)))
    assert (err.position, err.offset) == (len(raw), 77)


@pytest.mark.req("BATCH-3", "BATCH-4")
def test_invalid_crc():
    # DefaultRecordBatchTest#testInvalidCrc: lastOffsetDelta changed after writing
    raw = build_record_batch(SAMPLE)
    bad = patch(raw, ">i", 23, 23, fix_crc=False)
    batch = read_batch(bad)
    assert not batch.is_valid
    err = expect(Category.CRC_MISMATCH, batch.ensure_valid)
    assert err.position == 0 and err.offset == 0


@pytest.mark.req("BATCH-3")
@pytest.mark.parametrize("codec", CODECS)
def test_set_partition_leader_epoch_and_base_offset_keep_batch_valid(codec):
    raw = build_record_batch(SAMPLE, compression=codec)
    moved = set_partition_leader_epoch(raw, 15)
    batch = read_batch(moved)
    batch.ensure_valid()
    assert batch.partition_leader_epoch == 15
    # testSetLastOffset: lastOffset 500 with 3 records gives baseOffset 498
    moved = set_base_offset(moved, 500 - 2)
    batch = read_batch(moved)
    batch.ensure_valid()
    assert batch.crc == read_batch(raw).crc  # neither field is under the CRC
    assert (batch.base_offset, batch.last_offset, batch.partition_leader_epoch) == (498, 500, 15)
    assert [r.offset for r in batch.records()] == [498, 499, 500]


@pytest.mark.req("BATCH-4", "BATCH-11")
@pytest.mark.parametrize("codec", CODECS)
def test_set_max_timestamp_log_append_time(codec):
    raw = build_record_batch(SAMPLE, compression=codec)
    stamped = set_max_timestamp(raw, TimestampType.LOG_APPEND_TIME, 1_592_000)
    batch = read_batch(stamped)
    batch.ensure_valid()  # the CRC was recomputed
    assert batch.crc != read_batch(raw).crc
    assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert batch.max_timestamp == 1_592_000
    assert [r.timestamp for r in batch.records()] == [1_592_000] * 3
    # the deltas are untouched; switching back to CreateTime restores the record timestamps
    back = read_batch(set_max_timestamp(stamped, TimestampType.CREATE_TIME, 1_005))
    back.ensure_valid()
    assert [r.timestamp for r in back.records()] == [1_000, 1_005, 1_002]
    # patching maxTimestamp without a new CRC is detected
    expect(Category.CRC_MISMATCH, read_batch(patch(raw, ">q", 35, 7, fix_crc=False)).ensure_valid)


def test_set_no_timestamp_type_not_allowed():
    # DefaultRecordBatchTest#testSetNoTimestampTypeNotAllowed
    with pytest.raises(ValueError):
        set_max_timestamp(build_record_batch(SAMPLE), TimestampType.NO_TIMESTAMP_TYPE, 5)
    with pytest.raises(ValueError):
        build_record_batch(SAMPLE, timestamp_type=TimestampType.NO_TIMESTAMP_TYPE)


@pytest.mark.req("BATCH-11", "BATCH-13")
def test_builder_log_append_time():
    raw = build_record_batch(
        SAMPLE, timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=9_999
    )
    batch = read_batch(raw)
    assert batch.max_timestamp == 9_999
    assert [r.timestamp for r in batch.records()] == [9_999] * 3


@pytest.mark.req("REC-10", "ERR-3")
@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("wrong_count", [2, 4, 100])
def test_record_count_mismatch(codec, wrong_count):
    # testInvalidRecordCount{TooMany,TooLittle}{NonCompressed,Compressed}V2
    raw = build_record_batch(SAMPLE, compression=codec)
    batch = read_batch(patch(raw, ">i", 57, wrong_count))
    batch.ensure_valid()
    err = expect(Category.INVALID_RECORD, batch.records)
    assert err.position == 0 and err.offset == 0


@pytest.mark.req("BATCH-7")
@pytest.mark.parametrize("codec", CODECS)
def test_negative_record_count(codec):
    raw = build_record_batch(SAMPLE, compression=codec)
    batch = read_batch(patch(raw, ">i", 57, -1))
    batch.ensure_valid()
    expect(Category.INVALID_RECORD, batch.records)


@pytest.mark.req("REC-10", "ERR-3", "ERR-4")
def test_record_count_mismatch_with_trailing_records_in_file():
    # the count error is reported at the batch's own position, not the file's start
    good = build_record_batch(SAMPLE)
    bad = patch(build_record_batch(SAMPLE, base_offset=3), ">i", 57, 2)
    batches = list(iter_batches(good + bad))
    assert batches[0].records()
    err = expect(Category.INVALID_RECORD, batches[1].records)
    assert err.position == len(good) and err.offset == 3


@pytest.mark.req("REC-6")
def test_null_key_and_value_round_trip():
    records = [SimpleRecord(None, key=None, timestamp=5), SimpleRecord(b"", key=b"", timestamp=6)]
    decoded = read_batch(build_record_batch(records)).records()
    assert [(r.key, r.value) for r in decoded] == [(None, None), (b"", b"")]


@pytest.mark.req("REC-6")
def test_any_negative_length_reads_as_null():
    # keyLength / valueLength: any negative value reads as null (DefaultRecord.readFrom)
    fields = [b"\x00", encode_varlong(0), vi(0), vi(-5), vi(-2), vi(0)]
    [record] = read_batch(v2_batch(raw_record(*fields), 1)).records()
    assert record.key is None and record.value is None


@pytest.mark.req("REC-1", "REC-6")
def test_header_with_null_value_and_utf8_key():
    header = Header("ключ".encode(), None)
    [record] = read_batch(build_record_batch([SimpleRecord(b"v", headers=(header,))])).records()
    assert record.headers == (header,)


DEFAULT_RECORD_CASES = {
    # DefaultRecordTest: malformed records give InvalidRecordException
    "negative header key size": [b"\x00", encode_varlong(0), vi(0), vi(1) + b"k", vi(1) + b"v",
                                 vi(1), vi(-1), vi(1) + b"x"],
    "header count too large": [b"\x00", encode_varlong(0), vi(0), vi(-1), vi(-1), vi(100)],
    "negative header count": [b"\x00", encode_varlong(0), vi(0), vi(-1), vi(-1), vi(-2)],
    "key longer than the record": [b"\x00", encode_varlong(0), vi(0), vi(50) + b"k", vi(-1), vi(0)],
    "value longer than the record": [b"\x00", encode_varlong(0), vi(0), vi(-1), vi(9) + b"v",
                                     vi(0)],
    "header key longer than the record": [b"\x00", encode_varlong(0), vi(0), vi(-1), vi(-1), vi(1),
                                          vi(40) + b"k"],
    "header value longer than the record": [b"\x00", encode_varlong(0), vi(0), vi(-1), vi(-1),
                                            vi(1), vi(1) + b"k", vi(30) + b"v"],
    "varlong timestamp delta overruns": [b"\x00", b"\xff" * 11],
    "body ends inside a varint": [b"\x00", encode_varlong(0), b"\x80"],
    "empty body": [],
}  # fmt: skip


@pytest.mark.req("REC-2", "REC-7", "REC-8", "REC-9", "VARINT-2", "VARINT-5", "ERR-3", "ERR-4")
@pytest.mark.parametrize("case", sorted(DEFAULT_RECORD_CASES))
@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP])
def test_malformed_record(case, codec):
    body = raw_record(*DEFAULT_RECORD_CASES[case])
    payload = compress(codec, body)
    prefix = build_record_batch(SAMPLE)
    data = prefix + v2_batch(payload, 1, attributes=int(codec), base_offset=3)
    [_, batch] = list(iter_batches(data))
    batch.ensure_valid()
    err = expect(Category.INVALID_RECORD, batch.records)
    # located at the batch in the file, not inside the record bytes
    assert err.position == len(prefix) and err.offset == 3


@pytest.mark.req("REC-3")
@pytest.mark.parametrize("delta", [-1, 1, 5])
def test_record_length_mismatch(delta):
    fields = good_record_fields()
    true_length = len(b"".join(fields))
    # the declared length disagrees with what the fields consume
    body = raw_record(*fields, length=true_length + delta) + (b"\x00" * max(delta, 0))
    expect(Category.INVALID_RECORD, read_batch(v2_batch(body, 1)).records)
    # sanity: the same fields with the right length decode
    [record] = read_batch(v2_batch(raw_record(*fields), 1)).records()
    assert (record.key, record.value) == (b"k", b"v")


@pytest.mark.req("REC-2")
def test_negative_record_length():
    expect(Category.INVALID_RECORD, read_batch(v2_batch(vi(-3) + b"\x00" * 8, 1)).records)


@pytest.mark.req("REC-5", "REC-11")
def test_record_offsets_from_deltas_with_gaps():
    records = [SimpleRecord(b"a", timestamp=1, offset_delta=0),
               SimpleRecord(b"b", timestamp=2, offset_delta=7),
               SimpleRecord(b"c", timestamp=3, offset_delta=9)]  # fmt: skip
    batch = read_batch(build_record_batch(records, base_offset=40))
    assert batch.last_offset == 49 and batch.records_count == 3
    assert [r.offset for r in batch.records()] == [40, 47, 49]


@pytest.mark.req("REC-4")
def test_record_attributes_byte_is_not_a_varint():
    # record attributes is an int8: 0x80 must not be read as the start of a varint
    fields = [b"\x80", encode_varlong(3), vi(0), vi(-1), vi(1) + b"v", vi(0)]
    [record] = read_batch(v2_batch(raw_record(*fields), 1, base_timestamp=10)).records()
    assert record.attributes == 0x80 and record.timestamp == 13 and record.value == b"v"


@pytest.mark.req("BATCH-9")
def test_attribute_flags_and_high_byte_ignored():
    raw = build_record_batch(SAMPLE, is_transactional=True, producer_id=1, producer_epoch=0,
                             base_sequence=0)  # fmt: skip
    batch = read_batch(raw)
    assert batch.is_transactional and not batch.is_control and not batch.has_delete_horizon
    # bits 8-15 of the attributes are ignored by the reader
    high = read_batch(patch(raw, ">h", 21, batch.attributes | 0x7F00))
    high.ensure_valid()
    assert high.compression is Compression.NONE and high.is_transactional
    assert high.records() == batch.records()


@pytest.mark.req("BATCH-12")
def test_delete_horizon_bit():
    raw = build_record_batch(SAMPLE, delete_horizon_ms=500)
    batch = read_batch(raw)
    batch.ensure_valid()
    assert batch.attributes & 0x40
    assert batch.has_delete_horizon and batch.delete_horizon_ms == 500 == batch.base_timestamp
    # record timestamps are deltas against the base timestamp, which holds the horizon
    assert [r.timestamp for r in batch.records()] == [1_000, 1_005, 1_002]
    plain = read_batch(build_record_batch(SAMPLE))
    assert not plain.has_delete_horizon and plain.delete_horizon_ms is None


@pytest.mark.req("BATCH-8", "BATCH-12")
def test_empty_batch_with_delete_horizon():
    batch = read_batch(build_record_batch([], delete_horizon_ms=77))
    assert batch.has_delete_horizon and batch.delete_horizon_ms == 77 and batch.records() == []


@pytest.mark.req("BATCH-10")
@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_v2_unknown_codec_ids(codec_id):
    raw = build_record_batch(SAMPLE)
    batch = read_batch(patch(raw, ">h", 21, codec_id))
    batch.ensure_valid()
    err = expect(Category.UNSUPPORTED_COMPRESSION, batch.records)
    assert err.position == 0


@pytest.mark.req("BATCH-1", "REC-1")
def test_v2_batch_size_in_bytes_uncompressed():
    # testSizeInBytes: 61 + the encoded records
    raw = build_record_batch(SAMPLE)
    assert len(raw) == 61 + sum(
        len(r)
        for r in (
            raw_record(b"\x00", encode_varlong(0), vi(0), vi(1) + b"1", vi(1) + b"a", vi(0)),
            raw_record(b"\x00", encode_varlong(5), vi(1), vi(-1), vi(2) + b"bb",
                       vi(1), vi(2) + b"h1", vi(1) + b"x"),
            raw_record(b"\x00", encode_varlong(2), vi(2), vi(1) + b"3", vi(-1),
                       vi(2), vi(2) + b"h2", vi(-1), vi(0), vi(0)),
        )
    )  # fmt: skip


# --------------------------------------------------------------------------------------
# Control records: EndTransactionMarkerTest, ControlRecordTypeTest (§1.8)
# --------------------------------------------------------------------------------------


@pytest.mark.req("CTRL-1", "CTRL-10")
@pytest.mark.parametrize("kind", [ControlRecordType.COMMIT, ControlRecordType.ABORT])
def test_read_and_write_control_batch(kind):
    raw = build_control_batch(
        kind, producer_id=4, producer_epoch=7, coordinator_epoch=15, base_offset=42, timestamp=99
    )
    assert len(raw) == 78
    batch = read_batch(raw)
    batch.ensure_valid()
    assert batch.is_control and batch.is_transactional
    assert batch.compression is Compression.NONE
    assert batch.base_sequence == -1 and batch.records_count == 1
    assert (batch.producer_id, batch.producer_epoch) == (4, 7)
    [record] = batch.records()
    assert record.offset == 42 and record.offset_delta == 0 and record.timestamp_delta == 0
    assert len(record.key) == 4 and len(record.value) == 6 and record.headers == ()
    assert parse_control_key(record.key) is kind
    marker = parse_end_txn_marker(record.key, record.value)
    assert marker.control_type is kind and marker.coordinator_epoch == 15


@pytest.mark.req("CTRL-9")
def test_non_marker_control_batch():
    raw = build_control_batch(
        ControlRecordType.LEADER_CHANGE, producer_id=-1, producer_epoch=-1, value=b"\x00\x01"
    )
    batch = read_batch(raw)
    assert batch.is_control and not batch.is_transactional
    [record] = batch.records()
    assert parse_control_key(record.key) is ControlRecordType.LEADER_CHANGE
    expect(Category.INVALID_CONTROL_RECORD, parse_end_txn_marker, record.key, record.value)


@pytest.mark.req("CTRL-2")
@pytest.mark.parametrize("key", [None, b"", b"\x00", b"\x00\x00\x01"])
def test_control_key_too_short(key):
    expect(Category.INVALID_CONTROL_RECORD, parse_control_key, key)


@pytest.mark.req("CTRL-3")
def test_control_key_negative_version():
    expect(Category.INVALID_CONTROL_RECORD, parse_control_key, struct.pack(">hh", -1, 1))


@pytest.mark.req("CTRL-4")
def test_control_key_higher_version_reads_as_version_zero():
    assert parse_control_key(struct.pack(">hh", 3, 1) + b"extra") is ControlRecordType.COMMIT


@pytest.mark.req("CTRL-5")
@pytest.mark.parametrize("type_id", [-2, 7, 100, 32767])
def test_control_key_unknown_type(type_id):
    assert parse_control_key(struct.pack(">hh", 0, type_id)) is ControlRecordType.UNKNOWN


@pytest.mark.req("CTRL-1", "CTRL-5")
@pytest.mark.parametrize("type_id", range(7))
def test_control_type_ids(type_id):
    assert int(parse_control_key(struct.pack(">hh", 0, type_id))) == type_id


@pytest.mark.req("CTRL-6", "CTRL-7", "CTRL-8")
def test_end_txn_marker_value_rules():
    key = struct.pack(">hh", 0, 0)
    for value in (None, b"", b"\x00\x00\x00\x00\x01"):
        expect(Category.INVALID_CONTROL_RECORD, parse_end_txn_marker, key, value)
    expect(Category.INVALID_CONTROL_RECORD, parse_end_txn_marker, key, struct.pack(">hi", -1, 5))
    marker = parse_end_txn_marker(key, struct.pack(">hi", 2, 5) + b"future fields")
    assert marker.control_type is ControlRecordType.ABORT and marker.coordinator_epoch == 5


# --------------------------------------------------------------------------------------
# LegacyRecordTest, AbstractLegacyRecordBatchTest (§1.6, §1.7)
# --------------------------------------------------------------------------------------


@pytest.mark.req("LEGACY-1", "LEGACY-3", "LEGACY-6")
def test_legacy_v0_layout_and_crc():
    raw = encode_message(7, 0, b"key", b"value")
    assert len(raw) == 12 + 14 + 3 + 5
    offset, size, crc, magic, attributes = struct.unpack_from(">qiIbb", raw)
    assert (offset, size, magic, attributes) == (7, 14 + 8, 0, 0)
    assert raw[18:22] == struct.pack(">i", 3) and raw[22:25] == b"key"
    assert raw[25:29] == struct.pack(">i", 5) and raw[29:] == b"value"
    assert crc == zlib.crc32(raw[16:])  # CRC-32 over magic..end of value
    batch = read_batch(raw)
    assert isinstance(batch, LegacyBatch)
    batch.ensure_valid()
    assert batch.timestamp == -1 and batch.timestamp_type is TimestampType.NO_TIMESTAMP_TYPE
    [record] = batch.records()
    assert (record.offset, record.timestamp, record.key, record.value) == (7, -1, b"key", b"value")


@pytest.mark.req("LEGACY-1", "LEGACY-3", "LEGACY-6", "LEGACY-7")
def test_legacy_v1_layout_and_crc():
    raw = encode_message(9, 1, None, b"value", timestamp=1_234_567, attributes=0x08)
    assert len(raw) == 12 + 22 + 5
    offset, size, crc, magic, attributes, timestamp = struct.unpack_from(">qiIbbq", raw)
    assert (offset, size, magic, attributes, timestamp) == (9, 27, 1, 0x08, 1_234_567)
    assert raw[26:30] == struct.pack(">i", -1) and raw[30:34] == struct.pack(">i", 5)
    assert crc == zlib.crc32(raw[16:])
    batch = read_batch(raw)
    batch.ensure_valid()
    assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert batch.max_timestamp == 1_234_567 and batch.last_offset == 9 == batch.base_offset
    assert batch.key is None and batch.value == b"value"


@pytest.mark.req("LEGACY-7")
@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_batch_reports_v2_sentinels(magic):
    batch = read_batch(encode_message(3, magic, b"k", b"v", timestamp=5 if magic else -1))
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
    assert batch.last_sequence == -1 and batch.partition_leader_epoch == -1
    assert batch.records_count is None
    assert not batch.is_transactional and not batch.is_control
    assert batch.next_offset == 4


@pytest.mark.req("LEGACY-4")
@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_crc_mismatch(magic):
    raw = bytearray(encode_message(3, magic, b"k", b"value", timestamp=5 if magic else -1))
    raw[-1] ^= 0x01
    batch = read_batch(bytes(raw))
    assert not batch.is_valid
    err = expect(Category.CRC_MISMATCH, batch.ensure_valid)
    assert err.offset == 3 and err.position == 0


@pytest.mark.req("LEGACY-2", "ERR-4")
@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_message_below_overhead(magic):
    raw = encode_message(0, magic, None, None)
    bad = struct.pack(">qi", 6, (14 if magic == 0 else 22) - 1) + raw[12:-1]
    err = expect(Category.INVALID_BATCH_SIZE, read_batch, bad)
    # magic 0's overhead is the framing minimum itself (no offset); a magic 1 message of
    # 14..21 bytes passed the framing checks, so its offset field is reported (ERR-4)
    assert (err.position, err.offset) == (0, None if magic == 0 else 6)


@pytest.mark.req("LEGACY-13", "LEGACY-14", "LEGACY-18")
@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_legacy_message_set_round_trip(magic, codec):
    records = [SimpleRecord(b"v%d" % i, key=None if i % 2 else b"k", timestamp=100 + i)
               for i in range(5)]  # fmt: skip
    raw = build_legacy_message_set(records, magic=magic, base_offset=1000, compression=codec)
    batches = list(iter_batches(raw))
    assert len(batches) == (5 if codec is Compression.NONE else 1)
    for batch in batches:
        batch.ensure_valid()
    assert batches[-1].last_offset == 1004  # a wrapper carries its last inner offset
    decoded = [r for b in batches for r in b.records()]
    assert [r.offset for r in decoded] == [1000, 1001, 1002, 1003, 1004]
    assert [(r.key, r.value) for r in decoded] == [(r.key, r.value) for r in records]
    expected_ts = [-1] * 5 if magic == 0 else [100, 101, 102, 103, 104]
    assert [r.timestamp for r in decoded] == expected_ts
    if codec is not Compression.NONE:
        wrapper = batches[0]
        assert wrapper.key is None and wrapper.compression is codec
        assert wrapper.base_offset == 1000
        inner = decompress(codec, wrapper.value, magic=magic)
        inner_offsets = [b.offset for b in iter_batches(inner)]
        # v1 inner offsets are relative, v0 absolute
        assert inner_offsets == ([0, 1, 2, 3, 4] if magic == 1 else [1000, 1001, 1002, 1003, 1004])
        if magic == 1:
            assert wrapper.max_timestamp == 104


def wrapper_message(
    magic: int,
    wrapper_offset: int,
    inner_offsets: list[int],
    *,
    codec: Compression = Compression.GZIP,
    inner_attributes: int = 0,
    wrapper_attributes: int | None = None,
    timestamp: int = 10,
) -> bytes:
    inner = b"".join(
        encode_message(o, magic, None, b"m%d" % o, timestamp=timestamp + i if magic else -1,
                       attributes=inner_attributes)
        for i, o in enumerate(inner_offsets)
    )  # fmt: skip
    attributes = int(codec) if wrapper_attributes is None else wrapper_attributes
    return encode_message(
        wrapper_offset, magic, None, compress(codec, inner, magic=magic),
        timestamp=timestamp if magic else -1, attributes=attributes,
    )  # fmt: skip


@pytest.mark.req("LEGACY-14")
def test_v1_wrapper_relative_offsets():
    batch = read_batch(wrapper_message(1, 50, [0, 1, 2]))
    assert [r.offset for r in batch.records()] == [48, 49, 50]
    # relative offsets with gaps (a compacted wrapper) keep their spacing
    batch = read_batch(wrapper_message(1, 50, [0, 4, 9]))
    assert [r.offset for r in batch.records()] == [41, 45, 50]


@pytest.mark.req("LEGACY-15")
def test_v1_wrapper_offset_zero_uses_inner_offsets_as_is():
    # AbstractLegacyRecordBatchTest#testIterateCompressedRecordWithWrapperOffsetZero
    batch = read_batch(wrapper_message(1, 0, [5, 6, 7]))
    assert [r.offset for r in batch.records()] == [5, 6, 7]


@pytest.mark.req("LEGACY-16")
def test_v1_wrapper_offset_below_last_inner_offset():
    # AbstractLegacyRecordBatchTest#testInvalidWrapperOffsetV1
    batch = read_batch(wrapper_message(1, 1, [0, 1, 2]))
    err = expect(Category.INVALID_RECORD, batch.records)
    assert err.offset == 1 and err.position == 0


@pytest.mark.req("LEGACY-13")
def test_v0_wrapper_inner_offsets_are_absolute():
    batch = read_batch(wrapper_message(0, 7, [5, 6, 7]))
    assert [r.offset for r in batch.records()] == [5, 6, 7]


@pytest.mark.req("LEGACY-17")
def test_v1_log_append_time_wrapper_stamps_inner_records():
    raw = wrapper_message(1, 2, [0, 1, 2], wrapper_attributes=int(Compression.GZIP) | 0x08,
                          timestamp=777)  # fmt: skip
    batch = read_batch(raw)
    assert batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert [r.timestamp for r in batch.records()] == [777, 777, 777]
    create = read_batch(wrapper_message(1, 2, [0, 1, 2], timestamp=777))
    assert [r.timestamp for r in create.records()] == [777, 778, 779]


@pytest.mark.req("LEGACY-8")
@pytest.mark.parametrize("magic", [0, 1])
def test_zstd_below_magic_2(magic):
    raw = wrapper_message(magic, 2, [0, 1, 2], codec=Compression.ZSTD)
    batch = read_batch(raw)
    batch.ensure_valid()
    err = expect(Category.UNSUPPORTED_COMPRESSION, batch.records)
    assert err.position == 0
    with pytest.raises(KafkaLogError):
        build_legacy_message_set(SAMPLE, magic=magic, compression=Compression.ZSTD)


@pytest.mark.req("LEGACY-8")
@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_legacy_unknown_codec_ids(magic, codec_id):
    raw = wrapper_message(magic, 2, [0, 1, 2], wrapper_attributes=codec_id)
    expect(Category.UNSUPPORTED_COMPRESSION, read_batch(raw).records)


@pytest.mark.req("LEGACY-12")
@pytest.mark.parametrize("magic", [0, 1])
def test_inner_message_compressed(magic):
    raw = wrapper_message(magic, 2, [0, 1, 2], inner_attributes=int(Compression.GZIP))
    expect(Category.INVALID_RECORD, read_batch(raw).records)


@pytest.mark.req("LEGACY-9")
@pytest.mark.parametrize("magic", [0, 1])
def test_wrapper_with_null_value(magic):
    raw = encode_message(3, magic, None, None, timestamp=1 if magic else -1, attributes=1)
    expect(Category.INVALID_RECORD, read_batch(raw).records)


@pytest.mark.req("LEGACY-9")
@pytest.mark.parametrize("magic", [0, 1])
def test_wrapper_with_no_inner_messages(magic):
    raw = encode_message(
        3, magic, None, compress(Compression.GZIP, b""), timestamp=1 if magic else -1, attributes=1
    )
    expect(Category.INVALID_RECORD, read_batch(raw).records)


@pytest.mark.req("LEGACY-11")
def test_wrapper_partial_trailing_inner_entry_ends_stream():
    inner = b"".join(encode_message(o, 0, None, b"x") for o in (0, 1))
    inner += encode_message(2, 0, None, b"cut")[:-2]
    raw = encode_message(2, 0, None, compress(Compression.GZIP, inner), attributes=1)
    assert [r.offset for r in read_batch(raw).records()] == [0, 1]


@pytest.mark.req("LEGACY-19", "ERR-3", "ERR-4")
@pytest.mark.parametrize("magic", [0, 1])
def test_wrapper_inner_crc_is_checked(magic):
    inner = bytearray(encode_message(0, magic, None, b"payload", timestamp=1 if magic else -1))
    inner[-1] ^= 0xFF
    raw = encode_message(7, magic, None, compress(Compression.GZIP, bytes(inner)),
                         timestamp=1 if magic else -1, attributes=1)  # fmt: skip
    # the error locates the wrapper in the file, not the inner message in its stream
    prefix = build_record_batch(SAMPLE)
    [_, wrapper] = list(iter_batches(prefix + raw))
    wrapper.ensure_valid()
    err = expect(Category.CRC_MISMATCH, wrapper.records)
    assert err.position == len(prefix) and err.offset == 7


# --------------------------------------------------------------------------------------
# Codec framing (§1.10)
# --------------------------------------------------------------------------------------

PAYLOAD = b"".join(b"kafka record %06d|" % i for i in range(5000))


@pytest.mark.req("COMP-1")
@pytest.mark.parametrize("codec", CODECS)
def test_codec_round_trip(codec):
    assert decompress(codec, compress(codec, PAYLOAD)) == PAYLOAD


@pytest.mark.req("COMP-5")
def test_gzip_concatenated_members():
    assert decompress(Compression.GZIP, compress(Compression.GZIP, b"ab") +
                      compress(Compression.GZIP, b"cd")) == b"abcd"  # fmt: skip


GZ = compress(Compression.GZIP, b"hello")


@pytest.mark.req("COMP-5")
@pytest.mark.parametrize(
    "tail",
    [
        b"xx",
        b"\x1f\x8b",  # the magic, header cut short
        b"\x1f\x8b\x07" + bytes(20),  # not deflate
        b"\x1f\x8b\x08\x00" + bytes(3),  # header cut short
        b"\x1f\x8b\x08\x08" + bytes(6) + b"name-without-terminator",
        b"\x1f\x8b\x08\x02" + bytes(6) + b"\x00\x00",  # header CRC mismatch
        b"\x1f\x8b\x08\x04" + bytes(6) + b"\xff\x00",  # FEXTRA longer than the data
    ],
    ids=["junk", "magic-only", "not-deflate", "short-header", "unterminated-name",
         "bad-header-crc", "short-extra"],
)  # fmt: skip
def test_gzip_bytes_after_a_member_that_are_no_member_header_end_the_stream(tail):
    # COMP-5: GZIPInputStream stops quietly when no valid member header follows
    assert decompress(Compression.GZIP, GZ + tail) == b"hello"


@pytest.mark.req("COMP-4", "COMP-5")
def test_gzip_following_member_with_a_valid_header_is_decoded():
    named = zlib.compressobj(wbits=31)
    second = named.compress(b" world") + named.flush()
    # a second member with FNAME and FHCRC set: the header is valid, so it is read
    header = b"\x1f\x8b\x08\x0a" + bytes(6) + b"name\x00"
    header += (zlib.crc32(header) & 0xFFFF).to_bytes(2, "little")
    member = header + second[10:]
    assert decompress(Compression.GZIP, GZ + member) == b"hello world"
    # a valid header followed by data cut short is corrupt
    expect(Category.CORRUPT_COMPRESSED_DATA, decompress, Compression.GZIP, GZ + member[:-5])
    expect(Category.CORRUPT_COMPRESSED_DATA, decompress, Compression.GZIP, b"")
    expect(Category.CORRUPT_COMPRESSED_DATA, decompress, Compression.GZIP, b"\x1f\x8b\x07" * 9)


@pytest.mark.req("COMP-6")
def test_xerial_header_without_blocks_is_empty():
    # COMP-6: at least 16 bytes with the magic is xerial, even with no block after the header
    assert decompress(Compression.SNAPPY, xerial_snappy_frame(b"")) == b""
    assert len(xerial_snappy_frame(b"")) == 16


@pytest.mark.req("COMP-15")
def test_zstd_concatenated_frames():
    data = zstandard.ZstdCompressor().compress(b"ab") + bytes(cramjam.zstd.compress(b"cd"))
    assert decompress(Compression.ZSTD, data) == b"abcd"


@pytest.mark.req("COMP-14")
def test_lz4_frame_header_is_kafkas():
    frame = kafka_lz4_frame(PAYLOAD)
    assert frame[:4] == b"\x04\x22\x4d\x18" and frame[4] == 0x60 and frame[5] == 0x40
    assert frame[-4:] == b"\x00\x00\x00\x00"


@pytest.mark.req("COMP-11", "COMP-12")
def test_lz4_magic0_header_checksum_quirk():
    frame0 = kafka_lz4_frame(PAYLOAD, magic=0)
    frame1 = kafka_lz4_frame(PAYLOAD, magic=1)
    assert frame0[6] != frame1[6] and frame0[7:] == frame1[7:]
    assert decompress(Compression.LZ4, frame0, magic=0) == PAYLOAD
    assert decompress(Compression.LZ4, frame1, magic=1) == PAYLOAD
    # the magic-0 (wrong) checksum is rejected for magic >= 1
    for magic in (1, 2):
        expect(Category.CORRUPT_COMPRESSED_DATA, decompress, Compression.LZ4, frame0, magic=magic)
    # through a whole magic-0 and magic-1 wrapper
    records = [SimpleRecord(b"v%d" % i, timestamp=i) for i in range(4)]
    v0 = read_batch(build_legacy_message_set(records, magic=0, compression=Compression.LZ4))
    assert v0.value[6] == frame0[6]  # the builder reproduces the magic-0 checksum
    assert [r.value for r in v0.records()] == [r.value for r in records]
    wrong = encode_message(3, 1, None, v0.value, timestamp=3, attributes=int(Compression.LZ4))
    expect(Category.CORRUPT_COMPRESSED_DATA, read_batch(wrong).records)


def lz4_frame_with_checksums(content: bytes, block_checksum: int | None = None) -> bytes:
    """A frame as a non-Kafka writer may make it: content size, block and content checksums."""
    block = bytes(cramjam.lz4.compress_block(content, store_size=False))
    flg = 0x60 | 0x10 | 0x08 | 0x04  # block checksum, content size, content checksum
    descriptor = bytes([flg, 0x40]) + struct.pack("<Q", len(content))
    hc = (xxhash.xxh32_intdigest(descriptor, seed=0) >> 8) & 0xFF
    if block_checksum is None:
        block_checksum = xxhash.xxh32_intdigest(block, seed=0)  # over the stored bytes
    return (struct.pack("<I", 0x184D2204) + descriptor + bytes([hc])
            + struct.pack("<I", len(block)) + block + struct.pack("<I", block_checksum)
            + b"\x00\x00\x00\x00"  # end mark
            + struct.pack("<I", xxhash.xxh32_intdigest(content, seed=0)))  # fmt: skip


@pytest.mark.req("COMP-13")
def test_lz4_frame_with_content_size_and_checksums():
    content = b"hello lz4 " * 100
    assert decompress(Compression.LZ4, lz4_frame_with_checksums(content)) == content


@pytest.mark.req("COMP-4")
def test_lz4_block_checksum_is_verified():
    content = b"hello lz4 " * 100
    good = lz4_frame_with_checksums(content)
    wrong = lz4_frame_with_checksums(content, block_checksum=0x12345678)
    expect(Category.CORRUPT_COMPRESSED_DATA, decompress, Compression.LZ4, wrong)
    block_end = len(good) - 12  # the block checksum, end mark and content checksum follow
    expect(Category.CORRUPT_COMPRESSED_DATA, decompress, Compression.LZ4, good[: block_end + 2])


@pytest.mark.req("COMP-10")
@pytest.mark.parametrize("flg", [0x40, 0x61, 0xA0, 0x20])
def test_lz4_frame_unsupported_flags(flg):
    frame = bytearray(kafka_lz4_frame(PAYLOAD))
    frame[4] = flg
    frame[6] = (xxhash.xxh32_intdigest(bytes(frame[4:6]), seed=0) >> 8) & 0xFF
    expect(Category.CORRUPT_COMPRESSED_DATA, decompress, Compression.LZ4, bytes(frame))


@pytest.mark.req("COMP-4", "COMP-13")
def test_lz4_uncompressed_block():
    content = bytes(range(256)) * 3
    frame = kafka_lz4_frame(b"")[:7] + struct.pack("<I", len(content) | 0x80000000) + content
    assert decompress(Compression.LZ4, frame + b"\x00" * 4) == content
    expect(Category.CORRUPT_COMPRESSED_DATA, decompress, Compression.LZ4, frame)  # no end mark


def lz4_frame_of_one_block(content: bytes, block_size_id: int) -> bytes:
    """A Kafka-style frame (no checksums, no content size) of one compressed block, with the
    maximum block size of BD ``block_size_id`` (4: 64 KiB ... 7: 4 MiB)."""
    block = bytes(cramjam.lz4.compress_block(content, store_size=False))
    descriptor = bytes([0x60, block_size_id << 4])
    hc = (xxhash.xxh32_intdigest(descriptor, seed=0) >> 8) & 0xFF
    return (struct.pack("<I", 0x184D2204) + descriptor + bytes([hc])
            + struct.pack("<I", len(block)) + block + b"\x00\x00\x00\x00")  # fmt: skip


@pytest.mark.req("COMP-13")
def test_lz4_block_larger_than_its_frame_declares_is_corrupt():
    """A block inflating past its frame's maximum block size is corrupt, also after a frame
    with 4 MiB blocks has grown the thread's block buffer (which the decoder keeps)."""
    content = bytes(range(200)) * 500  # 100,000 bytes: more than 64 KiB
    assert decompress(Compression.LZ4, lz4_frame_of_one_block(content, 7)) == content
    expect(Category.CORRUPT_COMPRESSED_DATA, decompress, Compression.LZ4,
           lz4_frame_of_one_block(content, 4))  # fmt: skip
    small = b"kafka " * 1000
    assert decompress(Compression.LZ4, lz4_frame_of_one_block(small, 4)) == small


@pytest.mark.req("COMP-9")
def test_xerial_snappy_header():
    frame = xerial_snappy_frame(PAYLOAD)
    assert frame[:8] == XERIAL_MAGIC == b"\x82SNAPPY\x00"
    assert struct.unpack(">ii", frame[8:16]) == (1, 1)
    assert compress(Compression.SNAPPY, PAYLOAD)[:16] == frame[:16]


@pytest.mark.req("COMP-6", "COMP-7")
@pytest.mark.parametrize("block_size", [1, 7, 1000, 32 * 1024, 100_000, 10**7])
def test_xerial_snappy_any_block_size(block_size):
    assert decompress(Compression.SNAPPY, xerial_snappy_frame(PAYLOAD, block_size)) == PAYLOAD


@pytest.mark.req("COMP-7")
@pytest.mark.parametrize(
    "fields", [(0, 0), (1, 0), (-1, -1), (0x01000000, 0x01000000), (2, 1)]
)  # zero, little-endian 1 (redpanda), garbage
def test_xerial_snappy_odd_version_fields(fields):
    frame = bytearray(xerial_snappy_frame(PAYLOAD))
    frame[8:16] = struct.pack(">ii", *fields)
    assert decompress(Compression.SNAPPY, bytes(frame)) == PAYLOAD


@pytest.mark.req("COMP-8")
def test_raw_snappy():
    raw = bytes(cramjam.snappy.compress_raw(PAYLOAD))
    assert not raw.startswith(XERIAL_MAGIC)
    assert decompress(Compression.SNAPPY, raw) == PAYLOAD
    batch = read_batch(v2_batch(bytes(cramjam.snappy.compress_raw(b"".join(
        raw_record(*good_record_fields(value=b"v%d" % i)) for i in range(1)))), 1,
        attributes=int(Compression.SNAPPY)))  # fmt: skip
    assert [r.value for r in batch.records()] == [b"v0"]


@pytest.mark.req("COMP-4")
def test_xerial_snappy_truncated():
    frame = xerial_snappy_frame(PAYLOAD)
    for cut in (10, 18, len(frame) - 3):
        expect(Category.CORRUPT_COMPRESSED_DATA, decompress, Compression.SNAPPY, frame[:cut])


@pytest.mark.req("COMP-4")
@pytest.mark.parametrize("codec", COMPRESSED)
def test_truncated_compressed_stream(codec):
    data = compress(codec, PAYLOAD)
    expect(Category.CORRUPT_COMPRESSED_DATA, decompress, codec, data[: len(data) // 2])


@pytest.mark.req("COMP-4")
@pytest.mark.parametrize("codec", COMPRESSED)
def test_garbage_compressed_stream(codec):
    expect(Category.CORRUPT_COMPRESSED_DATA, decompress, codec, b"\x00\x11garbage" * 4)


@pytest.mark.req("COMP-3")
@pytest.mark.parametrize("codec", COMPRESSED)
def test_decompression_limit_is_exact(codec):
    data = compress(codec, PAYLOAD)
    assert decompress(codec, data, limit=len(PAYLOAD)) == PAYLOAD
    expect(Category.DECOMPRESSION_LIMIT, decompress, codec, data, limit=len(PAYLOAD) - 1)


# --- decompression bombs: 50 MB of zeros against a 1 MB limit, in a fresh process -------

BOMB_SCRIPT = textwrap.dedent(
    """
    import json, resource, struct, sys, zlib
    import cramjam, zstandard
    from reference_impl.errors import KafkaLogError
    from reference_impl.records import Compression, decompress
    from reference_impl.records.compression import XERIAL_MAGIC, kafka_lz4_frame

    SIZE, CHUNK = 50 * 2**20, 2**20
    zero = bytes(CHUNK)

    def gzip_bomb():
        z = zlib.compressobj(9, wbits=31)
        return b"".join(z.compress(zero) for _ in range(SIZE // CHUNK)) + z.flush()

    def zstd_bomb():
        z = zstandard.ZstdCompressor().compressobj()
        return b"".join(z.compress(zero) for _ in range(SIZE // CHUNK)) + z.flush()

    def xerial_bomb():
        block = bytes(cramjam.snappy.compress_raw(bytes(32768)))
        head = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
        return head + (struct.pack(">i", len(block)) + block) * (SIZE // 32768)

    def raw_snappy_bomb():
        copies = SIZE // 64
        n, pre = 1 + 64 * copies, bytearray()
        while n >= 0x80:
            pre.append(n & 0x7F | 0x80)
            n >>= 7
        pre.append(n)
        return bytes(pre) + b"\\x00\\x00" + b"\\xfe\\x01\\x00" * copies

    def lz4_bomb():
        block = bytes(cramjam.lz4.compress_block(bytes(65536), store_size=False))
        body = (struct.pack("<I", len(block)) + block) * (SIZE // 65536)
        return kafka_lz4_frame(b"")[:7] + body + b"\\x00" * 4

    bombs = {"gzip": (Compression.GZIP, gzip_bomb), "zstd": (Compression.ZSTD, zstd_bomb),
             "snappy-xerial": (Compression.SNAPPY, xerial_bomb),
             "snappy-raw": (Compression.SNAPPY, raw_snappy_bomb),
             "lz4": (Compression.LZ4, lz4_bomb)}
    codec, build = bombs[sys.argv[1]]
    data = build()
    del zero
    # ru_maxrss is a high-water mark: one bomb per process keeps the measurements apart
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        decompress(codec, data, limit=int(sys.argv[2]))
        category = None
    except KafkaLogError as exc:
        category = exc.category.value
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    json.dump({"category": category, "rss_growth_kib": after - before, "compressed": len(data)},
              sys.stdout)
    """
)
BOMBS = ["gzip", "zstd", "snappy-xerial", "snappy-raw", "lz4"]


def run_bombs(limit: int) -> dict:
    from tests.conftest import REPO_ROOT

    procs = {
        name: subprocess.Popen(
            [sys.executable, "-c", BOMB_SCRIPT, name, str(limit)],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for name in BOMBS
    }
    results = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results[name] = json.loads(out)
    return results


@pytest.mark.req("COMP-3")
def test_decompression_bombs_stay_bounded():
    # each codec in its own process: 50 MB of zeros, a 1 MiB limit
    results = run_bombs(2**20)
    assert set(results) == set(BOMBS)
    for name, result in results.items():
        assert result["category"] == "decompression_limit", (name, result)
        assert result["compressed"] < 3 * 2**20, (name, result)  # really a bomb
        # 50 MB would have been inflated; allow the 1 MB limit plus codec overshoot
        assert result["rss_growth_kib"] < 24 * 1024, (name, result)


@pytest.mark.req("COMP-3", "ERR-3")
@pytest.mark.parametrize("codec", COMPRESSED)
def test_bomb_inside_a_batch_is_reported_at_the_batch(codec):
    data = bytes(4 * 2**20)
    body = raw_record(*good_record_fields(value=data))
    batch = read_batch(b"x" * 0 + v2_batch(compress(codec, body), 1, attributes=int(codec)))
    err = expect(Category.DECOMPRESSION_LIMIT, batch.records, decompression_limit=2**20)
    assert err.position == 0 and err.offset == 0
    assert len(batch.records()[0].value) == len(data)  # the default limit lets it through


@pytest.mark.req("COMP-3")
@pytest.mark.parametrize("magic", [0, 1])
def test_bomb_inside_a_legacy_wrapper(magic):
    records = [SimpleRecord(bytes(2**20), timestamp=1) for _ in range(3)]
    batch = read_batch(build_legacy_message_set(records, magic=magic, compression=Compression.GZIP))
    expect(Category.DECOMPRESSION_LIMIT, batch.records, decompression_limit=2**20)
    assert len(batch.records()) == 3


# --------------------------------------------------------------------------------------
# Framing: FileLogInputStream rules (§1.1)
# --------------------------------------------------------------------------------------


def sample_log() -> bytes:
    return (
        build_record_batch(SAMPLE, base_offset=0)
        + build_legacy_message_set(SAMPLE, magic=1, base_offset=3)
        + build_record_batch(SAMPLE, base_offset=6, compression=Compression.GZIP)
        + build_legacy_message_set(SAMPLE, magic=0, base_offset=9, compression=Compression.SNAPPY)
        + build_control_batch(ControlRecordType.COMMIT, producer_id=1, producer_epoch=0,
                              base_offset=12)
    )  # fmt: skip


@pytest.mark.req("FRAME-1", "FRAME-5", "FRAME-7")
def test_walk_mixed_magics():
    data = sample_log()
    scanner = iter_batches(data)
    batches = list(scanner)
    assert [b.magic for b in batches] == [2, 1, 1, 1, 2, 0, 2]
    assert [b.last_offset for b in batches] == [2, 3, 4, 5, 8, 11, 12]
    assert scanner.valid_bytes == len(data) and scanner.trailing_bytes == 0
    positions = [b.position for b in batches]
    assert positions[0] == 0 and positions == sorted(positions)
    assert sum(b.size_in_bytes for b in batches) == len(data)
    for b in batches:
        b.ensure_valid()
    assert [r.offset for b in batches for r in b.records()] == list(range(13))


@pytest.mark.req("FRAME-2", "FRAME-7")
@pytest.mark.parametrize("extra", [1, 5, 12, 16, 17])
def test_short_tail_stops_quietly(extra):
    data = sample_log()
    tail = b"\xff" * extra  # even bytes that would be an invalid size
    scanner = iter_batches(data + tail)
    assert len(list(scanner)) == 7
    assert scanner.trailing_bytes == extra and scanner.valid_bytes == len(data)


@pytest.mark.req("FRAME-3", "ERR-4")
def test_eighteen_byte_tail_is_read():
    data = sample_log()
    tail = struct.pack(">qi", 99, 5) + b"\x00" * 6  # 18 bytes, size 5 < 14
    err = expect(Category.INVALID_BATCH_SIZE, lambda: list(iter_batches(data + tail)))
    assert err.position == len(data)
    assert err.offset is None  # a framing error carries no offset (ERR-4)


@pytest.mark.req("FRAME-2", "FRAME-3", "FRAME-8")
@pytest.mark.parametrize("zeros", [1, 17, 18, 100])
def test_zero_tail(zeros):
    # FRAME-8: zeros are not an end marker; 17 or fewer end the scan, more are an error
    data = sample_log()
    scanner = iter_batches(data + bytes(zeros))
    if zeros <= 17:
        assert len(list(scanner)) == 7 and scanner.trailing_bytes == zeros
    else:
        err = expect(Category.INVALID_BATCH_SIZE, lambda: list(scanner))
        assert (err.position, err.offset) == (len(data), None)
        assert scanner.valid_bytes == len(data)


@pytest.mark.req("FRAME-3", "ERR-4")
@pytest.mark.parametrize("size", [-1, 0, 13, -(2**31)])
def test_size_below_14(size):
    data = build_record_batch(SAMPLE)
    bad = struct.pack(">qi", 5, size) + b"\x02" * 20
    err = expect(Category.INVALID_BATCH_SIZE, lambda: list(iter_batches(data + bad)))
    assert (err.position, err.offset) == (len(data), None)
    err = expect(Category.INVALID_BATCH_SIZE, read_batch, bad)
    assert (err.position, err.offset) == (0, None)


@pytest.mark.req("FRAME-4", "FRAME-7", "FRAME-10")
def test_partial_last_entry_stops_quietly():
    data = sample_log()
    last = build_record_batch(SAMPLE, base_offset=13)
    for cut in (18, 40, len(last) - 1):
        scanner = iter_batches(data + last[:cut])
        assert len(list(scanner)) == 7
        assert scanner.trailing_bytes == cut
        err = expect(Category.TRUNCATED_BATCH, read_batch, last[:cut])
        assert err.offset is None
    # a huge declared size counts as partly present too
    huge = struct.pack(">qi", 13, 2**31 - 1) + b"\x02" * 30
    scanner = iter_batches(data + huge)
    assert len(list(scanner)) == 7 and scanner.trailing_bytes == len(huge)


@pytest.mark.req("FRAME-6")
@pytest.mark.parametrize("magic", [3, 4, 127, 0x80, 0xFF])
def test_unknown_magic(magic):
    data = sample_log()
    bad = bytearray(build_record_batch(SAMPLE, base_offset=13))
    bad[16] = magic
    err = expect(Category.BAD_MAGIC, lambda: list(iter_batches(data + bytes(bad))))
    assert err.position == len(data) and err.offset == 13
    expect(Category.BAD_MAGIC, read_batch, bytes(bad))


@pytest.mark.req("FRAME-10")
def test_read_batch_short_buffer_and_position():
    expect(Category.TRUNCATED_BATCH, read_batch, b"\x00" * 16)
    data = sample_log()
    first = read_batch(data)
    second = read_batch(data, position=first.size_in_bytes)
    assert second.position == first.size_in_bytes and second.magic == 1


@pytest.mark.req("FRAME-1")
def test_walk_start_and_end():
    data = sample_log()
    all_batches = list(iter_batches(data))
    start = all_batches[2].position
    end = all_batches[5].position
    middle = list(iter_batches(data, start=start, end=end))
    assert [b.position for b in middle] == [b.position for b in all_batches[2:5]]


@pytest.mark.req("FRAME-1", "FRAME-4", "FRAME-7")
def test_iter_file_batches_matches_iter_batches(tmp_path):
    # several MiB, so the 1 MiB read-ahead window moves, plus one batch larger than the window
    parts, offset, entries = [], 0, 0
    for i in range(60):
        recs = [SimpleRecord(bytes([i]) * 40_000, key=b"%d" % i, timestamp=i)]
        parts.append(build_record_batch(recs, base_offset=offset))
        offset, entries = offset + 1, entries + 1
        if i == 30:
            parts.append(build_record_batch([SimpleRecord(b"x" * (3 * 2**20), timestamp=0)],
                                            base_offset=offset))  # fmt: skip
            offset, entries = offset + 1, entries + 1
        if i % 7 == 0:  # three uncompressed v1 messages
            parts.append(build_legacy_message_set(SAMPLE, magic=1, base_offset=offset))
            offset, entries = offset + 3, entries + 3
    data = b"".join(parts) + build_record_batch(SAMPLE, base_offset=offset)[:50]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    memory = iter_batches(data, file=str(path))
    from_memory = list(memory)
    with open(path, "rb") as handle:
        scanner = iter_file_batches(handle)
        from_file = list(scanner)
    assert len(from_file) == len(from_memory) == entries == 88
    assert [(b.position, b.raw) for b in from_file] == [(b.position, b.raw) for b in from_memory]
    assert all(b.file == str(path) for b in from_file)
    assert scanner.trailing_bytes == memory.trailing_bytes == 50
    # start/end on a file
    with open(path, "rb") as handle:
        part = list(iter_file_batches(handle, start=from_memory[3].position,
                                      end=from_memory[9].position))  # fmt: skip
    assert [b.position for b in part] == [b.position for b in from_memory[3:9]]


@pytest.mark.req("ERR-1", "ERR-3", "ERR-4")
def test_file_errors_name_the_file(tmp_path):
    path = tmp_path / "00000000000000000042.log"
    good = build_record_batch(SAMPLE, base_offset=42)
    path.write_bytes(good + struct.pack(">qi", 45, 3) + b"\x02" * 10)
    with open(path, "rb") as handle, pytest.raises(KafkaLogError) as info:
        list(iter_file_batches(handle))
    assert info.value.category == Category.INVALID_BATCH_SIZE
    assert info.value.file == str(path) and info.value.position == len(good)
    path.write_bytes(patch(good, ">i", 57, 9))
    with open(path, "rb") as handle:
        [batch] = list(iter_file_batches(handle))
    err = expect(Category.INVALID_RECORD, batch.records)
    assert err.file == str(path) and err.position == 0 and err.offset == 42
    assert err.to_dict()["category"] == "invalid_record"


@pytest.mark.req("FRAME-1")
def test_iter_file_batches_keeps_its_file_open(tmp_path):
    # the scanner must hold the file object: a collected handle closes its fd, and the
    # number can be reused by the next open() (here: a file of zeros)
    path, other = tmp_path / "00000000000000000000.log", tmp_path / "zeros"
    path.write_bytes(sample_log())
    other.write_bytes(bytes(4096))
    handle = open(path, "rb")  # noqa: SIM115
    scanner = iter_file_batches(handle)
    del handle
    gc.collect()
    try:
        with open(other, "rb"):
            batches = list(scanner)
        assert [b.last_offset for b in batches] == [2, 3, 4, 5, 8, 11, 12]
    finally:
        scanner.source.handle.close()


@pytest.mark.req("REC-11", "BATCH-5")
def test_offset_deltas_need_not_reach_last_offset_delta():
    # REC-11: compaction may remove the last record; lastOffsetDelta keeps the old span
    body = raw_record(*good_record_fields(value=b"a")) + raw_record(
        b"\x00", encode_varlong(0), vi(2), vi(-1), vi(1) + b"b", vi(0)
    )
    batch = read_batch(v2_batch(body, 2, base_offset=10, last_offset_delta=5))
    assert [r.offset for r in batch.records()] == [10, 12]
    assert batch.last_offset == 15  # from the header (BATCH-5), not from the records


@pytest.mark.req("LEGACY-5", "ERR-4")
@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_key_or_value_running_past_the_message(magic):
    ts = 1 if magic else -1
    good = encode_message(4, magic, b"key", b"value", timestamp=ts)
    key_at = 26 if magic else 18
    for field_at, length in ((key_at, 100), (key_at + 7, 6)):  # key, then value length
        bad = bytearray(good)
        struct.pack_into(">i", bad, field_at, length)
        err = expect(Category.INVALID_RECORD, read_batch, bytes(bad))
        assert (err.position, err.offset) == (0, 4)
    # negative lengths read as null
    null = bytearray(good[:key_at]) + struct.pack(">i", -7) + struct.pack(">i", -2)
    struct.pack_into(">i", null, 8, len(null) - 12)
    message = read_batch(bytes(null))
    assert message.key is None and message.value is None


@pytest.mark.req("LEGACY-10", "ERR-3")
@pytest.mark.parametrize("magic", [0, 1])
def test_inner_entry_below_14_bytes(magic):
    inner = encode_message(0, magic, None, b"x", timestamp=1 if magic else -1)
    inner += struct.pack(">qi", 1, 5) + bytes(10)
    raw = encode_message(1, magic, None, compress(Compression.GZIP, inner),
                         timestamp=1 if magic else -1, attributes=1)  # fmt: skip
    err = expect(Category.INVALID_BATCH_SIZE, read_batch(raw).records)
    assert (err.position, err.offset) == (0, 1)  # the wrapper's


@pytest.mark.req("LEGACY-9", "LEGACY-11")
@pytest.mark.parametrize("magic", [0, 1])
def test_wrapper_with_only_a_partial_inner_entry(magic):
    inner = encode_message(0, magic, None, b"payload", timestamp=1 if magic else -1)[:-3]
    raw = encode_message(0, magic, None, compress(Compression.GZIP, inner),
                         timestamp=1 if magic else -1, attributes=1)  # fmt: skip
    expect(Category.INVALID_RECORD, read_batch(raw).records)


@pytest.mark.req("ERR-5")
def test_error_order():
    # ERR-5: framing, then magic, then the size of the magic, then the CRC, then the codec,
    # then the records
    raw = bytearray(build_record_batch(SAMPLE, base_offset=3))
    short = struct.pack(">qi", 3, 10) + b"\x07" * 10  # size 10 and magic 7
    expect(Category.INVALID_BATCH_SIZE, lambda: list(iter_batches(bytes(short))))
    small = struct.pack(">qi", 3, 30) + b"\x00" * 4 + b"\x07" + bytes(25)  # magic 7, 42 bytes
    expect(Category.BAD_MAGIC, lambda: list(iter_batches(small)))
    small = small[:16] + b"\x02" + small[17:]  # magic 2 but below 61 bytes
    expect(Category.INVALID_BATCH_SIZE, lambda: list(iter_batches(small)))
    struct.pack_into(">h", raw, 21, 7)  # codec 7, CRC now wrong, records too many
    struct.pack_into(">i", raw, 57, 9)
    batch = read_batch(bytes(raw))
    expect(Category.CRC_MISMATCH, batch.ensure_valid)
    expect(Category.UNSUPPORTED_COMPRESSION, batch.records)
    batch = read_batch(recrc(bytes(raw)))
    batch.ensure_valid()
    expect(Category.UNSUPPORTED_COMPRESSION, batch.records)


@pytest.mark.req("LEGACY-20")
@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_bytes_after_value_are_ignored(magic):
    """LegacyRecord reads key and value as size-delimited slices, so extra bytes inside the
    message (still covered by the CRC) are ignored, not rejected."""
    entry = bytearray(encode_message(7, magic, b"k", b"v", timestamp=5 if magic else -1))
    entry += b"\xaa\xbb"  # two stray bytes after the value
    struct.pack_into(">i", entry, 8, len(entry) - 12)
    struct.pack_into(">I", entry, 12, zlib.crc32(bytes(entry[16:])))
    (batch,) = list(iter_batches(bytes(entry)))
    batch.ensure_valid()
    (record,) = batch.records()
    assert (record.offset, record.key, record.value) == (7, b"k", b"v")


@pytest.mark.req("FRAME-11")
def test_scanner_rejects_entry_above_max_message_bytes():
    batch = build_record_batch([SimpleRecord(value=b"x" * 100)])
    assert len(list(iter_batches(batch, max_message_bytes=len(batch)))) == 1
    with pytest.raises(KafkaLogError) as info:
        list(iter_batches(batch, max_message_bytes=len(batch) - 1))
    assert info.value.category is Category.RECORD_TOO_LARGE
    assert info.value.position == 0


@pytest.mark.req("FRAME-12", "ERR-4")
@pytest.mark.parametrize(
    ("segment_base", "batch_base", "ok"),
    [(0, 0, True), (100, 99, True), (100, 98, False), (0, 2**31 - 2, True), (0, 2**31 - 1, False)],
)
def test_scanner_rejects_offsets_outside_the_segment_range(segment_base, batch_base, ok):
    """Two records: last offset = batch_base + 1, which must lie in [base, base + 2^31 - 1]."""
    data = build_record_batch(
        [SimpleRecord(value=b"a"), SimpleRecord(value=b"b")], base_offset=batch_base
    )
    scan = iter_batches(data, base_offset=segment_base)
    if ok:
        assert [b.last_offset for b in scan] == [batch_base + 1]
        return
    with pytest.raises(KafkaLogError) as info:
        list(scan)
    assert info.value.category is Category.OFFSET_OVERFLOW
    assert info.value.offset == batch_base  # ERR-4: the entry's own offset field
