"""Hypothesis fuzzing of every record decoder on hostile bytes.

The property, for every decoder (iter_batches + ensure_valid + records, read_batch, decompress
for each codec, the varint decoders, parse_control_key / parse_end_txn_marker):

* only ``reference_impl.errors.KafkaLogError`` subclasses escape, each with a stable category
  that fits the decoder, and a position when it comes from a batch (the batch's own start);
* nothing hangs: a hypothesis ``deadline`` per example plus an alarm that turns a stuck decoder
  into a failure instead of a stuck test run;
* memory stays bounded: decompression runs with a small limit and what comes out is checked
  against it.

The default run executes a few thousand cases (about 15 s); ``--runslow`` adds the same tests
with 50,000 examples each. Alongside, exhaustive bit-flip tests: CRC-32C catches every single
bit flip (and every 2-3 bit flip) in a v2 batch's CRC-covered range, while flips in baseOffset
and partitionLeaderEpoch, which the CRC does not cover, leave the batch valid.
"""

from __future__ import annotations

import signal
import struct
from collections import Counter
from contextlib import contextmanager
from datetime import timedelta

import cramjam
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    iter_batches,
    parse_control_key,
    parse_end_txn_marker,
    read_batch,
)
from reference_impl.records.batch import HEADER
from reference_impl.records.checksums import crc32c
from reference_impl.records.compression import kafka_lz4_frame, xerial_snappy_frame
from reference_impl.records.legacy import encode_message
from reference_impl.records.varint import (
    decode_unsigned_varint,
    decode_varint,
    decode_varlong,
    encode_varint,
    encode_varlong,
)

LIMIT = 64 * 1024  # decompression limit during fuzzing: keeps memory small
HANG_SECONDS = 10  # a single example taking this long is a hang

FAST = settings(
    max_examples=3000,
    deadline=timedelta(seconds=2),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
MEDIUM = settings(FAST, max_examples=1000)
SLOW = settings(FAST, max_examples=50_000)

BATCH_CATEGORIES = {
    Category.TRUNCATED_BATCH, Category.INVALID_BATCH_SIZE, Category.BAD_MAGIC,
    Category.CRC_MISMATCH, Category.INVALID_RECORD, Category.UNSUPPORTED_COMPRESSION,
    Category.CORRUPT_COMPRESSED_DATA, Category.DECOMPRESSION_LIMIT,
    Category.INVALID_CONTROL_RECORD,
}  # fmt: skip
CODEC_CATEGORIES = {Category.CORRUPT_COMPRESSED_DATA, Category.DECOMPRESSION_LIMIT}

RUNS = Counter()  # cases run, for the report at the end of the module
OUTCOMES = Counter()  # error categories seen and records decoded: shows the fuzzers get deep


@pytest.fixture(scope="module", autouse=True)
def report_runs():
    yield
    total = sum(RUNS.values())
    detail = ", ".join(f"{name} {n}" for name, n in sorted(RUNS.items()))
    print(f"\nfuzz cases run: {total} ({detail})")
    print("outcomes: " + ", ".join(f"{name} {n}" for name, n in OUTCOMES.most_common()))


@contextmanager
def no_hang(seconds: int = HANG_SECONDS):
    """Fail (TimeoutError is not a KafkaLogError) instead of hanging."""

    def alarm(signum, frame):
        raise TimeoutError(f"decoder still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --------------------------------------------------------------------------------------
# seeds: valid batches of every magic, codec and kind
# --------------------------------------------------------------------------------------

RECORDS = [
    SimpleRecord(b"value-%d" % i * (i + 1), key=None if i % 3 == 0 else b"key-%d" % i,
                 timestamp=1_600_000_000_000 + 7 * i,
                 headers=(Header(b"h%d" % i, None if i % 2 else b"hv"),) if i % 2 else ())
    for i in range(6)
]  # fmt: skip
BIG = [SimpleRecord(bytes(range(256)) * 40, key=b"big", timestamp=5)]  # several codec blocks


def _seeds() -> dict[str, bytes]:
    seeds = {}
    for codec in Compression:
        seeds[f"v2-{codec.label}"] = build_record_batch(
            RECORDS, base_offset=100, compression=codec, producer_id=7, producer_epoch=2,
            base_sequence=40, partition_leader_epoch=3,
        )  # fmt: skip
        seeds[f"v2-{codec.label}-big"] = build_record_batch(BIG, compression=codec)
        seeds[f"v2-{codec.label}-lat"] = build_record_batch(
            RECORDS[:2], compression=codec, timestamp_type=TimestampType.LOG_APPEND_TIME,
            log_append_time=99, is_transactional=True, producer_id=1, producer_epoch=0,
            base_sequence=0, delete_horizon_ms=5,
        )  # fmt: skip
    for magic in (0, 1):
        for codec in (Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4):
            seeds[f"v{magic}-{codec.label}"] = build_legacy_message_set(
                RECORDS, magic=magic, base_offset=50, compression=codec
            )
    for kind in ControlRecordType:
        if kind is ControlRecordType.UNKNOWN:
            continue
        seeds[f"control-{kind.name}"] = build_control_batch(
            kind, producer_id=9, producer_epoch=1, coordinator_epoch=4, base_offset=8,
            value=None if kind in (ControlRecordType.ABORT, ControlRecordType.COMMIT) else b"x",
        )  # fmt: skip
    seeds["v2-empty"] = build_record_batch([], base_offset=5, empty_max_timestamp=1)
    return seeds


SEEDS = _seeds()
SEED_LIST = list(SEEDS.values())
V2_SEEDS = {k: v for k, v in SEEDS.items() if v[16] == 2}
UNCOMPRESSED_BODY = SEEDS["v2-none"][61:]  # the record bytes of a 6-record batch
INNER_V1 = build_legacy_message_set(RECORDS, magic=1)  # an uncompressed inner message set
INNER_V0 = build_legacy_message_set(RECORDS, magic=0, base_offset=50)

V2_FIELDS = [(0, 8), (8, 4), (12, 4), (16, 1), (17, 4), (21, 2), (23, 4), (27, 8), (35, 8),
             (43, 8), (51, 2), (53, 4), (57, 4)]  # fmt: skip
LEGACY_FIELDS = [(0, 8), (8, 4), (12, 4), (16, 1), (17, 1), (18, 8), (18, 4), (22, 4), (26, 4)]
INTERESTING = [0, 1, -1, 2, 13, 14, 17, 21, 22, 60, 61, 62, 127, 128, 255, 256, 2**15 - 1,
               -(2**15), 2**31 - 1, -(2**31), 2**31, 2**63 - 1, -(2**63), 0x80, 0x7F, 1000]  # fmt: skip


# --------------------------------------------------------------------------------------
# mutation strategies
# --------------------------------------------------------------------------------------


@st.composite
def mutate(draw, data: bytes, *, max_ops: int = 6) -> bytes:
    """Bit flips, byte and field overwrites, truncation, insertion, deletion, splicing."""
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, max_ops))):
        if not buf:
            buf += draw(st.binary(min_size=1, max_size=32))
            continue
        op = draw(st.sampled_from(
            ["flip", "flip", "byte", "field", "int", "truncate", "insert", "delete", "splice"]
        ))  # fmt: skip
        i = draw(st.integers(0, len(buf) - 1))
        if op == "flip":
            buf[i] ^= 1 << draw(st.integers(0, 7))
        elif op == "byte":
            buf[i] = draw(st.integers(0, 255))
        elif op in ("field", "int"):
            if op == "field":
                fields = V2_FIELDS if len(buf) > 16 and buf[16] == 2 else LEGACY_FIELDS
                i, width = draw(st.sampled_from(fields))
            else:
                width = draw(st.sampled_from([1, 2, 4, 8]))
            value = draw(st.sampled_from(INTERESTING) | st.integers(-(2**63), 2**64))
            buf[i : i + width] = (value % 2 ** (8 * width)).to_bytes(width, "big")
        elif op == "truncate":
            del buf[i:]
        elif op == "insert":
            buf[i:i] = draw(st.binary(min_size=1, max_size=24))
        elif op == "delete":
            del buf[i : i + draw(st.integers(1, 24))]
        else:
            other = draw(st.sampled_from(SEED_LIST))
            buf[i:] = other[draw(st.integers(0, len(other))) :]
    return bytes(buf)


@st.composite
def mutated_log(draw) -> bytes:
    """One to three seed batches back to back, then mutated."""
    parts = draw(st.lists(st.sampled_from(SEED_LIST), min_size=1, max_size=3))
    return draw(mutate(b"".join(parts)))


def v2_around(payload: bytes, count: int, codec: Compression) -> bytes:
    """A v2 batch with a valid CRC around arbitrary (compressed) record bytes."""
    header = HEADER.pack(0, 61 + len(payload) - 12, -1, 2, 0, int(codec), max(count - 1, 0),
                         0, 0, -1, -1, -1, count)  # fmt: skip
    raw = bytearray(header + payload)
    struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
    return bytes(raw)


@st.composite
def hostile_inside_codec(draw) -> bytes:
    """Valid framing, valid CRC, valid compressed stream: hostile bytes only after inflating,
    so the record and inner-message parsers see them."""
    codec = draw(st.sampled_from([c for c in Compression if c is not Compression.NONE]))
    if draw(st.booleans()):  # v2 records
        body = draw(mutate(UNCOMPRESSED_BODY) | st.binary(max_size=200))
        count = draw(st.sampled_from([6, 0, 1, 5, 7, -1, 2**31 - 1]))
        return v2_around(compress(codec, body), count, codec)
    if codec is Compression.ZSTD:
        codec = Compression.GZIP
    magic = draw(st.sampled_from([0, 1]))
    inner = draw(mutate(INNER_V1 if magic else INNER_V0) | st.binary(max_size=200))
    return encode_message(
        draw(st.sampled_from([0, 1, 5, 55, 2**40])), magic, None,
        compress(codec, inner, magic=magic), timestamp=5 if magic else -1,
        attributes=int(codec) | draw(st.sampled_from([0, 0x08])) * magic,
    )  # fmt: skip


framed_noise = st.builds(
    lambda offset, size, epoch, magic, rest: (
        struct.pack(">qiib", offset, size, epoch, magic) + rest
    ),
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([14, 22, 49, 60, 61, 80, 200]) | st.integers(-(2**31), 2**31 - 1),
    st.integers(-(2**31), 2**31 - 1),
    st.sampled_from([0, 1, 2]) | st.integers(-128, 127),
    st.binary(max_size=250),
)
hostile_logs = st.binary(max_size=400) | framed_noise | mutated_log() | hostile_inside_codec()


# --------------------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------------------


def check_error(err: KafkaLogError, categories: set, *, position: int | None = None) -> None:
    OUTCOMES[err.category.value] += 1
    assert isinstance(err.category, Category)
    assert err.category in categories, err
    assert err.to_dict()["category"] == err.category.value
    if position is not None:
        assert err.position == position, err


def exercise_batch(batch, data_len: int) -> int:
    """ensure_valid, records and the derived fields of one batch; returns decoded bytes."""
    assert isinstance(batch, RecordBatch | LegacyBatch)
    assert 0 <= batch.position < data_len
    assert batch.size_in_bytes == len(batch.raw) >= 26
    _ = (batch.last_offset, batch.next_offset, batch.timestamp_type, batch.is_control,
         batch.is_transactional, batch.max_timestamp, batch.last_sequence)  # fmt: skip
    try:
        batch.ensure_valid()
    except KafkaLogError as err:
        check_error(err, {Category.CRC_MISMATCH, Category.INVALID_BATCH_SIZE},
                    position=batch.position)  # fmt: skip
    decoded = 0
    try:
        records = batch.records(decompression_limit=LIMIT)
    except KafkaLogError as err:
        check_error(err, BATCH_CATEGORIES, position=batch.position)
        return 0
    OUTCOMES[f"records decoded (magic {batch.magic})"] += len(records)
    for record in records:
        decoded += len(record.key or b"") + len(record.value or b"")
        decoded += sum(len(h.key) + len(h.value or b"") for h in record.headers)
    if isinstance(batch, RecordBatch):
        assert len(records) == batch.records_count
        if batch.is_control and records:
            try:
                parse_control_key(records[0].key)
                parse_end_txn_marker(records[0].key, records[0].value)
            except KafkaLogError as err:
                check_error(err, {Category.INVALID_CONTROL_RECORD})
    # memory: nothing inflates past the limit; uncompressed records come from the input
    assert decoded <= max(LIMIT, len(batch.raw))
    return decoded


def exercise_log(data: bytes) -> None:
    with no_hang():
        scanner = iter_batches(data)
        try:
            for batch in scanner:
                exercise_batch(batch, len(data))
        except KafkaLogError as err:
            # a framing error names the entry it is about
            check_error(err, BATCH_CATEGORIES)
            assert err.position is not None and 0 <= err.position < len(data), err
            return
        # the walk stopped quietly: at most 17 bytes left, or an entry only partly present
        assert scanner.valid_bytes + scanner.trailing_bytes == len(data)
        rest = data[scanner.valid_bytes :]
        if len(rest) > 17:
            (size,) = struct.unpack_from(">i", rest, 8)
            assert size >= 14 and 12 + size > len(rest), (len(rest), size)


def exercise_read_batch(data: bytes, position: int) -> None:
    with no_hang():
        try:
            batch = read_batch(data, position=position)
        except KafkaLogError as err:
            check_error(err, BATCH_CATEGORIES, position=position)
            return
        assert batch.position == position
        exercise_batch(batch, len(data))


# --------------------------------------------------------------------------------------
# fuzz tests (default run)
# --------------------------------------------------------------------------------------


def _fuzz_iter_batches(data: bytes) -> None:
    RUNS["iter_batches"] += 1
    exercise_log(data)


def _fuzz_read_batch(data: bytes, position: int) -> None:
    RUNS["read_batch"] += 1
    exercise_read_batch(data, min(position, len(data)))


CODECS = [c for c in Compression if c is not Compression.NONE]
COMPRESSED_SEEDS = {
    codec: [
        compress(codec, UNCOMPRESSED_BODY),
        compress(codec, bytes(range(256)) * 100),
        compress(codec, b""),
        *([xerial_snappy_frame(UNCOMPRESSED_BODY, 7),
           bytes(cramjam.snappy.compress_raw(UNCOMPRESSED_BODY))]
          if codec is Compression.SNAPPY else []),
        *([kafka_lz4_frame(UNCOMPRESSED_BODY, magic=0)] if codec is Compression.LZ4 else []),
        compress(codec, bytes(LIMIT + 1)),  # over the limit as it is
    ]
    for codec in CODECS
}  # fmt: skip


@st.composite
def codec_inputs(draw):
    codec = draw(st.sampled_from(CODECS))
    seed = draw(st.sampled_from(COMPRESSED_SEEDS[codec]))
    data = draw(mutate(seed) | st.binary(max_size=120) | st.just(seed))
    return codec, data, draw(st.sampled_from([0, 1, 2]))


def _fuzz_decompress(case) -> None:
    RUNS["decompress"] += 1
    codec, data, magic = case
    with no_hang():
        try:
            out = decompress(codec, data, limit=LIMIT, magic=magic)
        except KafkaLogError as err:
            check_error(err, CODEC_CATEGORIES)
            return
    assert len(out) <= LIMIT
    OUTCOMES[f"{codec.label} streams inflated"] += 1


def _fuzz_small_decoders(data: bytes, pos: int) -> None:
    RUNS["varint+control"] += 1
    pos = min(pos, len(data))
    for decode in (decode_varint, decode_varlong, decode_unsigned_varint):
        try:
            value, end = decode(data, pos)
        except KafkaLogError as err:
            check_error(err, {Category.INVALID_RECORD}, position=pos)
            continue
        width = 5 if decode is not decode_varlong else 10
        assert pos < end <= pos + width and end <= len(data)
        if decode is decode_varint:
            assert -(2**31) <= value < 2**31
            assert decode_varint(encode_varint(value), 0)[0] == value
        elif decode is decode_varlong:
            assert -(2**63) <= value < 2**63
            assert decode_varlong(encode_varlong(value), 0)[0] == value
        else:
            assert 0 <= value < 2**32
    key = data[:4] if len(data) > 2 else None  # None and short keys are invalid too
    value = data[4:] or None
    try:
        parse_control_key(key)
    except KafkaLogError as err:
        check_error(err, {Category.INVALID_CONTROL_RECORD})
    try:
        marker = parse_end_txn_marker(key, value)
    except KafkaLogError as err:
        check_error(err, {Category.INVALID_CONTROL_RECORD})
    else:
        assert marker.control_type in (ControlRecordType.ABORT, ControlRecordType.COMMIT)


def _varint_bytes():
    return st.binary(max_size=14) | st.lists(
        st.sampled_from([0x80, 0xFF, 0x7F, 0x00, 0x01, 0x0F, 0x10]), max_size=12
    ).map(bytes)


@pytest.mark.req("ERR-2", "ERR-3", "FRAME-2", "FRAME-4", "COMP-3")
@FAST
@given(hostile_logs)
def test_fuzz_iter_batches(data):
    _fuzz_iter_batches(data)


@pytest.mark.req("ERR-2", "ERR-3", "FRAME-10")
@MEDIUM
@given(mutated_log(), st.integers(0, 600))
def test_fuzz_read_batch(data, position):
    _fuzz_read_batch(data, position)


@pytest.mark.req("COMP-3", "COMP-4")
@FAST
@given(codec_inputs())
def test_fuzz_decompress(case):
    _fuzz_decompress(case)


@pytest.mark.req("VARINT-2", "VARINT-5", "CTRL-2", "CTRL-6")
@FAST
@given(_varint_bytes(), st.integers(0, 6))
def test_fuzz_varints_and_control_records(data, pos):
    _fuzz_small_decoders(data, pos)


# --- the same with many more examples ---------------------------------------------------


@pytest.mark.req("ERR-2", "ERR-3", "FRAME-2", "FRAME-4", "COMP-3")
@pytest.mark.slow
@SLOW
@given(hostile_logs)
def test_fuzz_iter_batches_slow(data):
    _fuzz_iter_batches(data)


@pytest.mark.req("ERR-2", "ERR-3", "FRAME-10")
@pytest.mark.slow
@SLOW
@given(mutated_log(), st.integers(0, 600))
def test_fuzz_read_batch_slow(data, position):
    _fuzz_read_batch(data, position)


@pytest.mark.req("COMP-3", "COMP-4")
@pytest.mark.slow
@SLOW
@given(codec_inputs())
def test_fuzz_decompress_slow(case):
    _fuzz_decompress(case)


@pytest.mark.req("VARINT-2", "VARINT-5", "CTRL-2", "CTRL-6")
@pytest.mark.slow
@SLOW
@given(_varint_bytes(), st.integers(0, 6))
def test_fuzz_varints_and_control_records_slow(data, pos):
    _fuzz_small_decoders(data, pos)


# --------------------------------------------------------------------------------------
# bit flips and the CRCs
# --------------------------------------------------------------------------------------


def flipped(raw: bytes, bit: int) -> bytes:
    buf = bytearray(raw)
    buf[bit // 8] ^= 0x80 >> (bit % 8)
    return bytes(buf)


@pytest.mark.req("BATCH-3", "BATCH-4")
@pytest.mark.parametrize("name", sorted(V2_SEEDS))
def test_every_single_bit_flip_in_crc_range_is_caught(name):
    raw = V2_SEEDS[name]
    read_batch(raw).ensure_valid()
    flips = 0
    for bit in range(17 * 8, len(raw) * 8):  # the crc field itself and [21, end)
        batch = read_batch(flipped(raw, bit))
        assert not batch.is_valid
        with pytest.raises(KafkaLogError) as info:
            batch.ensure_valid()
        assert info.value.category == Category.CRC_MISMATCH, (name, bit)
        flips += 1
    RUNS["crc bit flips"] += flips


@pytest.mark.req("BATCH-3")
@pytest.mark.parametrize("name", sorted(V2_SEEDS))
def test_bit_flips_outside_the_crc_keep_the_batch_valid(name):
    raw = V2_SEEDS[name]
    original = read_batch(raw)
    original_records = original.records()
    for bit in [*range(0, 64), *range(96, 128)]:  # baseOffset, partitionLeaderEpoch
        batch = read_batch(flipped(raw, bit))
        batch.ensure_valid()
        assert batch.is_valid and batch.crc == original.crc
        records = batch.records()
        shift = batch.base_offset - original.base_offset
        assert shift != 0 or batch.partition_leader_epoch != original.partition_leader_epoch
        assert [(r.offset - shift, r.key, r.value) for r in records] == [
            (r.offset, r.key, r.value) for r in original_records
        ]
        RUNS["crc bit flips"] += 1


@pytest.mark.req("BATCH-3", "BATCH-4")
@MEDIUM
@given(st.sampled_from(sorted(V2_SEEDS)), st.data())
def test_two_or_three_bit_flips_in_crc_range_are_caught(name, data):
    # CRC-32C has Hamming distance >= 4 for any length a batch can have
    raw = V2_SEEDS[name]
    bits = data.draw(st.lists(st.integers(17 * 8, len(raw) * 8 - 1), min_size=2, max_size=3,
                              unique=True))  # fmt: skip
    for bit in bits:
        raw = flipped(raw, bit)
    RUNS["crc multi-bit flips"] += 1
    with pytest.raises(KafkaLogError) as info:
        read_batch(raw).ensure_valid()
    assert info.value.category == Category.CRC_MISMATCH


@pytest.mark.req("LEGACY-3", "LEGACY-4")
@pytest.mark.parametrize("name", sorted(k for k in SEEDS if k[:2] in ("v0", "v1")))
def test_single_bit_flips_in_legacy_messages_never_pass(name):
    """CRC-32 covers magic..end of value: a flip there is caught, by the CRC or by the parser
    (a flipped magic or length changes how the message reads)."""
    data = SEEDS[name]
    first = read_batch(data)
    raw = data[: first.size_in_bytes]
    for bit in range(16 * 8, len(raw) * 8):
        try:
            batch = read_batch(flipped(raw, bit))
            batch.ensure_valid()
        except KafkaLogError as err:
            assert err.category in BATCH_CATEGORIES
        else:
            pytest.fail(f"{name}: flip of bit {bit} went unnoticed")
        RUNS["crc bit flips"] += 1
