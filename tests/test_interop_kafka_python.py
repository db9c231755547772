"""Differential tests against kafka-python's own record encoder and decoder (``kafka.record``).

(a) batches built by kafka-python (MemoryRecordsBuilder: magic 0, 1, 2 x every codec it can
    use here) decode with our reader to exactly the records put in;
(b) batches built by us (build_record_batch, build_legacy_message_set, build_control_batch)
    decode identically in kafka-python;
(c) where both should write the same bytes (uncompressed v2 with the same fields, uncompressed
    legacy messages, the record bytes inside compressed batches) they do.

kafka-python uses gzip and zstd here; its snappy and lz4 need python-snappy / lz4, which are
not installed, so those cases skip with that reason. One extra test swaps a cramjam-backed
stand-in for python-snappy so kafka-python's own xerial framing code is still exercised.

Known disagreements between kafka-python and us (we follow Kafka's Java reader) are pinned at
the end of the file. Run with ``-s`` to see how many records were cross-checked.
"""

from __future__ import annotations

import struct
import types
from collections import Counter

import cramjam
import kafka.codec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.errors import CorruptRecordError as KafkaPythonCorruptRecordError
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatch
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from reference_impl.errors import Category, KafkaLogError
from reference_impl.records import (
    Compression,
    ControlRecordType,
    Header,
    RecordBatch,
    SimpleRecord,
    TimestampType,
    build_control_batch,
    build_legacy_message_set,
    build_record_batch,
    decompress,
    iter_batches,
)
from reference_impl.records.compression import compress
from reference_impl.records.legacy import encode_message
from reference_impl.records.varint import encode_varint, encode_varlong

INT_MAX = 2**31 - 1
EXAMPLES = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
KP_HAS = {
    Compression.NONE: True,
    Compression.GZIP: kafka.codec.has_gzip(),
    Compression.SNAPPY: kafka.codec.has_snappy(),
    Compression.LZ4: kafka.codec.has_lz4(),
    Compression.ZSTD: kafka.codec.has_zstd(),
}
KP_MISSING = {
    Compression.SNAPPY: "kafka-python's snappy codec needs python-snappy (not installed)",
    Compression.LZ4: "kafka-python's lz4 codec needs the lz4 package (not installed)",
    Compression.ZSTD: "kafka-python's zstd codec needs zstandard (not installed)",
}

CHECKED = Counter()  # records and batches cross-checked, over the whole module


@pytest.fixture(scope="module", autouse=True)
def report_cross_checked():
    yield
    print(
        f"\nkafka-python interop: {CHECKED['records']} records in {CHECKED['batches']} "
        f"batches cross-checked ({CHECKED['identical']} byte-identical comparisons)"
    )


def codec_param(magic: int, codec: Compression):
    marks = []
    if not KP_HAS[codec]:
        marks.append(pytest.mark.skip(reason=KP_MISSING[codec]))
    return pytest.param(magic, codec, marks=marks, id=f"v{magic}-{codec.label}")


MAGIC_CODECS = [
    codec_param(magic, codec)
    for magic in (0, 1, 2)
    for codec in Compression
    if not (codec is Compression.ZSTD and magic < 2)  # zstd needs magic 2
]


# --------------------------------------------------------------------------------------
# strategies: bounded record lists
# --------------------------------------------------------------------------------------

compressible = st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=4), st.integers(1, 80))
blobs = st.none() | st.binary(max_size=48) | compressible
timestamps = st.integers(min_value=0, max_value=2**42)
header_lists = st.lists(st.tuples(st.text(max_size=6), st.none() | st.binary(max_size=16)),
                        max_size=3)  # fmt: skip


def record_lists(magic: int):
    headers = header_lists if magic >= 2 else st.just([])
    one = st.tuples(blobs, blobs, timestamps, headers)  # key, value, timestamp, headers
    return st.lists(one, min_size=1, max_size=20)


def to_simple(records) -> list[SimpleRecord]:
    return [
        SimpleRecord(value, key=key, timestamp=ts,
                     headers=tuple(Header(k.encode(), v) for k, v in headers))
        for key, value, ts, headers in records
    ]  # fmt: skip


def ours_as_tuples(batches) -> list[tuple]:
    return [
        (r.offset, r.timestamp, r.key, r.value, [(h.key.decode(), h.value) for h in r.headers])
        for b in batches
        for r in b.records()
    ]


def kp_batches(buf: bytes) -> list:
    return list(MemoryRecords(bytes(buf)))


def kp_as_tuples(batches) -> list[tuple]:
    out = []
    for batch in batches:
        for r in batch:
            headers = [(k, v) for k, v in r.headers] if r.headers else []
            out.append((r.offset, r.timestamp, r.key, r.value, headers))
    return out


def kp_build(magic, codec, records, *, offset=0, **producer) -> bytes:
    builder = MemoryRecordsBuilder(magic, int(codec), batch_size=1 << 30, offset=offset,
                                   **producer)  # fmt: skip
    for key, value, ts, headers in records:
        assert builder.append(ts, key, value, headers) is not None
    builder.close()
    return bytes(builder.buffer())


# --------------------------------------------------------------------------------------
# (a) kafka-python writes, we read
# --------------------------------------------------------------------------------------


@pytest.mark.req("REC-1", "REC-5", "REC-6", "COMP-2", "LEGACY-13", "LEGACY-15")
@pytest.mark.parametrize(("magic", "codec"), MAGIC_CODECS)
def test_kafka_python_batches_decode_in_ours(magic, codec, record_property):
    checked = Counter()

    @EXAMPLES
    @given(records=record_lists(magic), offset=st.integers(0, 10**6))
    def run(records, offset):
        buf = kp_build(magic, codec, records, offset=offset)
        batches = list(iter_batches(buf))
        for batch in batches:
            batch.ensure_valid()
            assert batch.magic == magic
        if magic == 2:
            [batch] = batches
            # kafka-python sends uncompressed when compressing does not pay
            assert batch.compression in (codec, Compression.NONE)
            assert batch.records_count == len(records)
            assert batch.partition_leader_epoch == 0  # kafka-python writes 0, Kafka -1
        elif codec is Compression.NONE:
            assert len(batches) == len(records)
        else:
            [wrapper] = batches
            assert wrapper.compression is codec and wrapper.key is None
            assert wrapper.offset == 0  # kafka-python leaves the wrapper offset to the broker
        expected = [
            (offset + i, ts if magic >= 1 else -1, key, value, list(headers))
            for i, (key, value, ts, headers) in enumerate(records)
        ]
        assert ours_as_tuples(batches) == expected
        # and kafka-python reads its own output the same way (no timestamp for magic 0)
        assert kp_as_tuples(kp_batches(buf)) == [
            (o, None if magic == 0 else t, k, v, h) for o, t, k, v, h in expected
        ]
        checked["records"] += len(records)
        checked["batches"] += len(batches)

    run()
    CHECKED.update(checked)
    record_property("records_cross_checked", checked["records"])


@pytest.mark.req("BATCH-6")
@pytest.mark.parametrize("codec", [c for c in Compression if KP_HAS[c]], ids=lambda c: c.label)
def test_kafka_python_transactional_batches(codec, record_property):
    checked = Counter()

    @EXAMPLES
    @given(
        records=record_lists(2),
        producer_id=st.integers(0, 2**63 - 1),
        producer_epoch=st.integers(0, 2**15 - 1),
        base_sequence=st.integers(0, INT_MAX),
        transactional=st.booleans(),
    )
    def run(records, producer_id, producer_epoch, base_sequence, transactional):
        buf = kp_build(
            2, codec, records, transactional=transactional, producer_id=producer_id,
            producer_epoch=producer_epoch, base_sequence=base_sequence,
        )  # fmt: skip
        [batch] = list(iter_batches(buf))
        batch.ensure_valid()
        assert batch.is_transactional is transactional and not batch.is_control
        assert (batch.producer_id, batch.producer_epoch) == (producer_id, producer_epoch)
        assert batch.base_sequence == base_sequence
        decoded = batch.records()
        assert [r.sequence for r in decoded] == [
            (base_sequence + i) % (INT_MAX + 1) for i in range(len(records))
        ]
        assert batch.last_sequence == DefaultRecordBatch(buf).last_sequence == decoded[-1].sequence
        assert [(r.key, r.value) for r in decoded] == [(k, v) for k, v, _, _ in records]
        checked["records"] += len(records)
        checked["batches"] += 1

    run()
    CHECKED.update(checked)
    record_property("records_cross_checked", checked["records"])


# --------------------------------------------------------------------------------------
# (b) we write, kafka-python reads
# --------------------------------------------------------------------------------------

V2_CODECS = [codec_param(2, c) for c in Compression]


@pytest.mark.req("BATCH-1", "BATCH-3", "BATCH-11", "BATCH-13", "REC-12")
@pytest.mark.parametrize(("magic", "codec"), V2_CODECS)
def test_our_v2_batches_decode_in_kafka_python(magic, codec, record_property):
    checked = Counter()

    @EXAMPLES
    @given(
        records=record_lists(2),
        base_offset=st.integers(0, 2**40),
        log_append_time=st.none() | timestamps,
        producer=st.none() | st.tuples(st.integers(0, 2**40), st.integers(0, 2**15 - 1),
                                       st.integers(0, INT_MAX), st.booleans()),
        epoch=st.integers(-1, INT_MAX),
    )  # fmt: skip
    def run(records, base_offset, log_append_time, producer, epoch):
        pid, pepoch, seq, txn = producer if producer else (-1, -1, -1, False)
        ts_type = (TimestampType.CREATE_TIME if log_append_time is None
                   else TimestampType.LOG_APPEND_TIME)  # fmt: skip
        raw = build_record_batch(
            to_simple(records), base_offset=base_offset, compression=codec,
            timestamp_type=ts_type, log_append_time=log_append_time, producer_id=pid,
            producer_epoch=pepoch, base_sequence=seq, is_transactional=txn,
            partition_leader_epoch=epoch,
        )  # fmt: skip
        [batch] = kp_batches(raw)
        assert isinstance(batch, DefaultRecordBatch)
        assert batch.validate_crc()
        assert batch.compression_type == int(codec)
        assert (batch.base_offset, batch.leader_epoch) == (base_offset, epoch)
        assert batch.last_offset == base_offset + len(records) - 1
        assert batch.records_count == len(records)
        assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (pid, pepoch, seq)
        assert batch.is_transactional is txn and not batch.is_control_batch
        assert batch.timestamp_type == int(ts_type)
        ours = iter_batches(raw).__iter__().__next__()
        assert batch.last_sequence == ours.last_sequence
        assert (batch.first_timestamp, batch.max_timestamp) == (
            ours.base_timestamp, ours.max_timestamp,
        )  # fmt: skip
        want_ts = [log_append_time if log_append_time is not None else ts
                   for _, _, ts, _ in records]  # fmt: skip
        expected = [
            (base_offset + i, want_ts[i], key, value, list(headers))
            for i, (key, value, _, headers) in enumerate(records)
        ]
        assert kp_as_tuples([batch]) == expected
        assert ours_as_tuples([ours]) == expected
        checked["records"] += len(records)
        checked["batches"] += 1

    run()
    CHECKED.update(checked)
    record_property("records_cross_checked", checked["records"])


LEGACY_CODECS = [
    codec_param(m, c) for m in (0, 1) for c in Compression if c is not Compression.ZSTD
]


@pytest.mark.req("LEGACY-1", "LEGACY-3", "LEGACY-17", "LEGACY-18")
@pytest.mark.parametrize(("magic", "codec"), LEGACY_CODECS)
def test_our_legacy_message_sets_decode_in_kafka_python(magic, codec, record_property):
    checked = Counter()

    @EXAMPLES
    @given(records=record_lists(magic), base_offset=st.integers(0, 2**40),
           log_append_time=st.none() | timestamps)  # fmt: skip
    def run(records, base_offset, log_append_time):
        ts_type = (TimestampType.CREATE_TIME if log_append_time is None
                   else TimestampType.LOG_APPEND_TIME)  # fmt: skip
        raw = build_legacy_message_set(
            to_simple(records), magic=magic, base_offset=base_offset, compression=codec,
            timestamp_type=ts_type, log_append_time=log_append_time,
        )  # fmt: skip
        batches = kp_batches(raw)
        assert all(isinstance(b, LegacyRecordBatch) and b.validate_crc() for b in batches)
        assert len(batches) == (len(records) if codec is Compression.NONE else 1)
        if magic == 0:
            want_ts = [None] * len(records)  # kafka-python: no timestamp; we report -1
        elif log_append_time is not None:
            want_ts = [log_append_time] * len(records)
        else:
            want_ts = [ts for _, _, ts, _ in records]
        got = []
        for batch in batches:
            assert batch.compression_type == int(codec)
            for record in batch:
                assert record.validate_crc()
                assert record.timestamp_type == (None if magic == 0 else int(ts_type))
                got.append((record.offset, record.timestamp, record.key, record.value))
        expected = [
            (base_offset + i, want_ts[i], key, value)
            for i, (key, value, _, _) in enumerate(records)
        ]
        assert got == expected
        ours = [(o, -1 if t is None else t, k, v) for o, t, k, v, _ in
                ours_as_tuples(iter_batches(raw))]  # fmt: skip
        assert ours == [(o, -1 if t is None else t, k, v) for o, t, k, v in expected]
        checked["records"] += len(records)
        checked["batches"] += len(batches)

    run()
    CHECKED.update(checked)
    record_property("records_cross_checked", checked["records"])


@pytest.mark.req("CTRL-1", "CTRL-10")
@pytest.mark.parametrize("kind", [ControlRecordType.COMMIT, ControlRecordType.ABORT])
def test_our_control_batches_decode_in_kafka_python(kind, record_property):
    checked = Counter()

    @EXAMPLES
    @given(
        producer_id=st.integers(0, 2**63 - 1),
        producer_epoch=st.integers(0, 2**15 - 1),
        coordinator_epoch=st.integers(0, INT_MAX),
        base_offset=st.integers(0, 2**50),
        timestamp=timestamps,
    )
    def run(producer_id, producer_epoch, coordinator_epoch, base_offset, timestamp):
        raw = build_control_batch(
            kind, producer_id=producer_id, producer_epoch=producer_epoch,
            coordinator_epoch=coordinator_epoch, base_offset=base_offset, timestamp=timestamp,
        )  # fmt: skip
        [batch] = kp_batches(raw)
        assert batch.validate_crc()
        assert batch.is_control_batch and batch.is_transactional
        assert (batch.producer_id, batch.producer_epoch) == (producer_id, producer_epoch)
        assert batch.base_sequence == -1 and batch.size_in_bytes == 78
        [record] = list(batch)
        assert (record.offset, record.timestamp) == (base_offset, timestamp)
        assert (record.version, record.type) == (0, int(kind))
        assert record.commit is (kind is ControlRecordType.COMMIT)
        assert record.abort is (kind is ControlRecordType.ABORT)
        # kafka-python does not parse the EndTransactionMarker value: compare its bytes
        assert record.value == struct.pack(">hi", 0, coordinator_epoch)
        checked["records"] += 1
        checked["batches"] += 1

    run()
    CHECKED.update(checked)
    record_property("records_cross_checked", checked["records"])


# --------------------------------------------------------------------------------------
# (c) byte-identical output where the fields are the same
# --------------------------------------------------------------------------------------


@pytest.mark.req("BATCH-1", "REC-12", "VARINT-4")
def test_uncompressed_v2_bytes_identical(record_property):
    checked = Counter()

    @EXAMPLES
    @given(
        records=record_lists(2),
        producer=st.none() | st.tuples(st.integers(0, 2**40), st.integers(0, 2**15 - 1),
                                       st.integers(0, INT_MAX), st.booleans()),
    )  # fmt: skip
    def run(records, producer):
        pid, pepoch, seq, txn = producer if producer else (-1, -1, -1, False)
        theirs = kp_build(2, Compression.NONE, records, transactional=txn, producer_id=pid,
                          producer_epoch=pepoch, base_sequence=seq)  # fmt: skip
        # kafka-python's producer-side header: baseOffset 0, partitionLeaderEpoch 0
        ours = build_record_batch(
            to_simple(records), producer_id=pid, producer_epoch=pepoch, base_sequence=seq,
            is_transactional=txn, partition_leader_epoch=0,
        )  # fmt: skip
        assert ours == theirs
        checked["records"] += len(records)
        checked["identical"] += 1

    run()
    CHECKED.update(checked)
    record_property("records_cross_checked", checked["records"])


@pytest.mark.req("LEGACY-1", "LEGACY-3")
@pytest.mark.parametrize("magic", [0, 1])
def test_uncompressed_legacy_bytes_identical(magic, record_property):
    checked = Counter()

    @EXAMPLES
    @given(records=record_lists(magic), offset=st.integers(0, 2**40))
    def run(records, offset):
        theirs = kp_build(magic, Compression.NONE, records, offset=offset)
        ours = build_legacy_message_set(to_simple(records), magic=magic, base_offset=offset)
        assert ours == theirs
        checked["records"] += len(records)
        checked["identical"] += 1

    run()
    CHECKED.update(checked)
    record_property("records_cross_checked", checked["records"])


COMPRESSED_PAIRS = [
    codec_param(m, c)
    for m in (0, 1, 2)
    for c in (Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD)
    if not (c is Compression.ZSTD and m < 2)
]


@pytest.mark.req("COMP-2", "LEGACY-18")
@pytest.mark.parametrize(("magic", "codec"), COMPRESSED_PAIRS)
def test_compressed_contents_identical(magic, codec, record_property):
    """The compressed bytes differ (codec settings), what they inflate to must not."""
    checked = Counter()

    @EXAMPLES
    @given(records=record_lists(magic))
    def run(records):
        theirs = kp_build(magic, codec, records)
        if magic == 2:
            ours = build_record_batch(to_simple(records), partition_leader_epoch=0)
            [batch] = list(iter_batches(theirs))
            if batch.compression is Compression.NONE:
                return  # kafka-python sent it uncompressed: compared in the test above
            assert decompress(codec, batch.raw[61:]) == ours[61:]
            assert batch.raw[12:17] == ours[12:17] and batch.raw[23:61] == ours[23:61]
        else:
            # inner offsets 0..n-1 (kafka-python's producer offsets; our v1 relative offsets)
            [wrapper] = list(iter_batches(theirs))
            ours = build_legacy_message_set(to_simple(records), magic=magic, compression=codec)
            inner = decompress(codec, wrapper.value, magic=magic)
            assert inner == build_legacy_message_set(to_simple(records), magic=magic)
            assert decompress(codec, next(iter(iter_batches(ours))).value, magic=magic) == inner
        checked["records"] += len(records)
        checked["identical"] += 1

    run()
    CHECKED.update(checked)
    record_property("records_cross_checked", checked["records"])


# --------------------------------------------------------------------------------------
# kafka-python's xerial snappy framing, with cramjam standing in for python-snappy
# --------------------------------------------------------------------------------------

SNAPPY_SHIM = types.SimpleNamespace(
    compress=lambda data: bytes(cramjam.snappy.compress_raw(bytes(data))),
    decompress=lambda data: bytes(cramjam.snappy.decompress_raw(bytes(data))),
)


@pytest.mark.req("COMP-6", "COMP-9")
@pytest.mark.parametrize("magic", [0, 1, 2])
def test_snappy_with_kafka_pythons_xerial_framing(magic, monkeypatch, record_property):
    """Not python-snappy itself: kafka-python's snappy_encode/snappy_decode (the xerial
    header and 32 KiB blocks) over cramjam's raw snappy, both directions."""
    monkeypatch.setattr(kafka.codec, "snappy", SNAPPY_SHIM)
    assert kafka.codec.has_snappy()
    checked = Counter()

    @EXAMPLES
    @given(records=record_lists(magic), big=st.booleans())
    def run(records, big):
        if big:  # several xerial blocks
            records = records + [(None, bytes(range(256)) * 300, 1, [])]
        theirs = kp_build(magic, Compression.SNAPPY, records)
        batches = list(iter_batches(theirs))
        expected = [(i, ts if magic else -1, k, v, list(h))
                    for i, (k, v, ts, h) in enumerate(records)]  # fmt: skip
        assert ours_as_tuples(batches) == expected
        if magic < 2 or batches[0].compression is Compression.SNAPPY:
            payload = batches[0].raw[61:] if magic == 2 else batches[0].value
            assert payload[:16] == b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
        if magic == 2:
            ours = build_record_batch(to_simple(records), compression=Compression.SNAPPY)
        else:
            ours = build_legacy_message_set(to_simple(records), magic=magic,
                                            compression=Compression.SNAPPY)  # fmt: skip
        # kafka-python reports no timestamp (None) for magic 0 where we report -1
        assert kp_as_tuples(kp_batches(ours)) == [
            (o, None if magic == 0 else t, k, v, h) for o, t, k, v, h in expected
        ]
        checked["records"] += 2 * len(records)
        checked["batches"] += 2

    run()
    CHECKED.update(checked)
    record_property("records_cross_checked", checked["records"])


@pytest.mark.req("COMP-11", "COMP-12")
def test_kafka_python_lz4_magic0_header_checksum_matches_ours():
    """kafka-python's lz4_encode_old_kafka/lz4_decode_old_kafka compute Kafka's magic-0 header
    checksum with xxhash; its lz4 frame codec itself is not installed, so feed it our frame."""
    from reference_impl.records.compression import kafka_lz4_frame

    frame0 = kafka_lz4_frame(b"payload" * 50, magic=0)
    frame1 = kafka_lz4_frame(b"payload" * 50, magic=1)
    seen = {}
    monkey = {"lz4_decode": lambda data: seen.setdefault("fixed", bytes(data))}
    original = kafka.codec.lz4_decode
    try:
        kafka.codec.lz4_decode = monkey["lz4_decode"]
        kafka.codec.lz4_decode_old_kafka(frame0)
    finally:
        kafka.codec.lz4_decode = original
    # kafka-python rewrites the magic-0 checksum into the standard one: ours for magic >= 1
    assert seen["fixed"] == frame1


# --------------------------------------------------------------------------------------
# pinned disagreements: hostile or unusual input where kafka-python and Kafka (us) differ
# --------------------------------------------------------------------------------------


def v2_raw(body: bytes, count: int, attributes: int = 0) -> bytes:
    from reference_impl.records.batch import HEADER
    from reference_impl.records.checksums import crc32c

    raw = bytearray(HEADER.pack(0, 61 + len(body) - 12, -1, 2, 0, attributes, max(count - 1, 0),
                                0, 0, -1, -1, -1, count) + body)  # fmt: skip
    struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
    return bytes(raw)


def record(*fields: bytes) -> bytes:
    body = b"".join(fields)
    return encode_varint(len(body)) + body


def vi(n: int) -> bytes:
    return encode_varint(n)


def ours_records(raw: bytes):
    return [r for b in iter_batches(raw) for r in b.records()]


@pytest.mark.req("LEGACY-16")
def test_disagreement_v1_wrapper_offset_below_last_inner_offset():
    inner = b"".join(encode_message(o, 1, None, b"m", timestamp=5) for o in (0, 1, 2))
    raw = encode_message(1, 1, None, compress(Compression.GZIP, inner), timestamp=5,
                         attributes=int(Compression.GZIP))  # fmt: skip
    # Kafka (AbstractLegacyRecordBatch): InvalidRecordException
    with pytest.raises(KafkaLogError) as info:
        ours_records(raw)
    assert info.value.category == Category.INVALID_RECORD
    # kafka-python: silently falls back to the inner offsets
    assert [r.offset for b in kp_batches(raw) for r in b] == [0, 1, 2]


@pytest.mark.req("REC-4")
def test_disagreement_record_attributes_byte():
    # record attributes is an int8; kafka-python decodes it as a varint
    raw = v2_raw(record(b"\x80", encode_varlong(3), vi(0), vi(-1), vi(1) + b"v", vi(0)), 1)
    [r] = ours_records(raw)
    assert r.attributes == 0x80 and r.value == b"v"
    with pytest.raises(KafkaPythonCorruptRecordError):
        kp_as_tuples(kp_batches(raw))


@pytest.mark.req("VARINT-2")
def test_disagreement_overlong_varint():
    # a 6-byte varint offsetDelta: Java's readVarint throws after 5 bytes; kafka-python reads it
    raw = v2_raw(record(b"\x00", encode_varlong(0), b"\x80" * 5 + b"\x00", vi(-1), vi(1) + b"v",
                        vi(0)), 1)  # fmt: skip
    with pytest.raises(KafkaLogError) as info:
        ours_records(raw)
    assert info.value.category == Category.INVALID_RECORD
    assert [r.value for b in kp_batches(raw) for r in b] == [b"v"]


@pytest.mark.req("REC-1")
def test_disagreement_non_utf8_header_key():
    # Java reads header keys as UTF-8 with replacement; we keep the bytes; kafka-python raises
    raw = v2_raw(record(b"\x00", encode_varlong(0), vi(0), vi(-1), vi(1) + b"v", vi(1),
                        vi(2) + b"\xff\xfe", vi(-1)), 1)  # fmt: skip
    [r] = ours_records(raw)
    assert r.headers == (Header(b"\xff\xfe", None),)
    with pytest.raises(KafkaPythonCorruptRecordError):
        kp_as_tuples(kp_batches(raw))


@pytest.mark.req("CTRL-2")
def test_disagreement_short_control_key():
    # a 2-byte control key: we decode the record and parse_control_key raises
    # invalid_control_record; kafka-python's ControlRecord raises a bare struct.error
    from reference_impl.records import parse_control_key

    raw = v2_raw(record(b"\x00", encode_varlong(0), vi(0), vi(2) + b"\x00\x01", vi(-1), vi(0)), 1,
                 attributes=0x30)  # fmt: skip
    [r] = ours_records(raw)
    with pytest.raises(KafkaLogError) as info:
        parse_control_key(r.key)
    assert info.value.category == Category.INVALID_CONTROL_RECORD
    with pytest.raises(struct.error):
        kp_as_tuples(kp_batches(raw))


@pytest.mark.req("BATCH-7", "BATCH-8")
def test_disagreement_record_count_edge_cases():
    # negative count: Kafka rejects; kafka-python yields nothing
    raw = v2_raw(b"", -1)
    with pytest.raises(KafkaLogError) as info:
        ours_records(raw)
    assert info.value.category == Category.INVALID_RECORD
    assert kp_as_tuples(kp_batches(raw)) == []
    # count 0 with bytes after the header: Kafka does not look at them; kafka-python raises
    raw = v2_raw(b"junk", 0)
    assert ours_records(raw) == []
    with pytest.raises(KafkaPythonCorruptRecordError):
        kp_as_tuples(kp_batches(raw))


def test_kafka_python_partition_leader_epoch_default():
    # not a reader disagreement: kafka-python's producer writes partitionLeaderEpoch 0 where
    # Kafka's MemoryRecordsBuilder writes -1 (the broker overwrites it either way)
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    builder.append(0, 1, None, b"v", [])
    raw = bytes(builder.build())
    batch = next(iter(iter_batches(raw)))
    assert isinstance(batch, RecordBatch) and batch.partition_leader_epoch == 0
    assert (
        next(iter(iter_batches(build_record_batch([SimpleRecord(b"v")])))).partition_leader_epoch
        == -1
    )
