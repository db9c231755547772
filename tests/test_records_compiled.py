"""The compiled record decoder against the readable one (default_record.py, ``records_of``).

``RecordBatch.records()`` decodes through ``records_of``: the readable ``decode_records``
(DefaultRecord.readFrom) when the kernels are off, else the compiled decoder, which
handles well-formed records itself and hands anything else back to ``decode_records``.
These tests hold the two together (the comparisons skip on the pure path, where they are
one function):

* on every well-formed batch (hypothesis: keys, values and header values of every varint
  width, nulls, timestamp and offset gaps, LogAppendTime, sequences that wrap), the
  compiled decoder alone (its hand-over refused) gives exactly the readable records;
* on hostile record bytes (the same batches, mutated), ``records_of`` gives the
  readable decoder's records or the same error;
* ``RecordBatch.record_chunks`` (records a chunk at a time, the bounded-memory path of the
  tools) gives the records or the error of ``records()``, whatever the chunk size;
* on every v2 batch of the real-broker corpus, the two agree.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference_impl import kernels
from reference_impl.errors import KafkaLogError
from reference_impl.records import (
    Compression,
    Header,
    Record,
    RecordBatch,
    SimpleRecord,
    TimestampType,
    build_record_batch,
    decompress,
    iter_file_batches,
)
from reference_impl.records.batch import RECORD_BATCH_OVERHEAD
from reference_impl.records.default_record import (
    decode_record_chunk,
    decode_records,
    record_chunk_of,
    records_of,
)
from reference_impl.records.record import INT32_MAX

CASES = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# sizes around the varint widths: 1 byte up to 63, 2 bytes up to 8191, 3 bytes from 8192
SIZES = st.sampled_from([0, 1, 5, 63, 64, 100, 1024, 8191, 8192, 9000])
blobs = st.one_of(st.none(), SIZES.flatmap(lambda n: st.binary(min_size=n, max_size=n)))
headers = st.lists(
    st.builds(Header, st.binary(max_size=70), blobs), max_size=3
).map(tuple)  # fmt: skip


@st.composite
def batches(draw) -> bytes:
    count = draw(st.integers(1, 6))
    first = draw(st.integers(0, 2**41))
    records = [
        SimpleRecord(
            value=draw(blobs), key=draw(blobs), headers=draw(headers),
            timestamp=first + draw(st.sampled_from([0, 1, 63, 64, 10_000, 2**40])),
        )
        for _ in range(count)
    ]  # fmt: skip
    if draw(st.booleans()):  # compaction's offset gaps
        deltas = sorted(draw(st.sets(st.integers(0, 20_000), min_size=count, max_size=count)))
        records = [
            SimpleRecord(r.value, r.key, r.timestamp, r.headers, delta)
            for r, delta in zip(records, deltas, strict=True)
        ]
    log_append = draw(st.booleans())
    return build_record_batch(
        records,
        base_offset=draw(st.integers(0, 2**50)),
        base_sequence=draw(st.sampled_from([-1, 0, 7, INT32_MAX - 3, INT32_MAX])),
        producer_id=1,
        timestamp_type=TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME,
        log_append_time=first + 5 if log_append else None,
    )


compiled_only = pytest.mark.skipif(
    not kernels.compiled, reason=f"no compiled kernels: {kernels.why_pure}"
)


class _HandedOver(Exception):
    """The compiled decoder handed the batch to the readable one."""


def _refuse(*_):
    raise _HandedOver


def _compiled_alone(batch: RecordBatch, buf: bytes, start: int) -> list:
    """The compiled decoder alone on a whole batch: its hand-over raises ``_HandedOver``."""
    kernels.records.bind_records(Record, Header, _refuse, _refuse)
    try:
        return kernels.records.decode_records(batch, buf, start)
    finally:
        kernels.records.bind_records(Record, Header, decode_records, decode_record_chunk)


def outcome(decoder, batch: RecordBatch, buf: bytes, start: int):
    try:
        return "records", decoder(batch, buf, start)
    except KafkaLogError as exc:
        return "error", exc.category, exc.message


@pytest.mark.req("REC-1")
@compiled_only
@CASES
@given(batches())
def test_the_compiled_decoder_alone_decodes_well_formed_batches_as_the_readable_one(raw):
    batch = RecordBatch.from_bytes(raw)
    expected = decode_records(batch, raw, RECORD_BATCH_OVERHEAD)
    assert _compiled_alone(batch, raw, RECORD_BATCH_OVERHEAD) == expected
    assert batch.records() == expected


@st.composite
def mutated(draw) -> tuple[bytes, int]:
    """A well-formed batch whose record bytes were overwritten, cut or extended, and maybe
    a records count off by one."""
    raw = bytearray(draw(batches()))
    for _ in range(draw(st.integers(1, 4))):
        if len(raw) <= RECORD_BATCH_OVERHEAD:
            break
        at = draw(st.integers(RECORD_BATCH_OVERHEAD, len(raw) - 1))
        action = draw(st.sampled_from(["set", "cut", "insert"]))
        if action == "set":
            raw[at] = draw(st.integers(0, 255))
        elif action == "cut":
            del raw[at : at + draw(st.integers(1, 8))]
        else:
            raw[at:at] = draw(st.binary(min_size=1, max_size=8))
    count = struct.unpack_from(">i", raw, 57)[0] + draw(st.sampled_from([0, 0, -1, 1]))
    return bytes(raw), count


@pytest.mark.req("REC-1", "REC-2", "REC-3")
@compiled_only
@CASES
@given(mutated())
def test_the_compiled_decoder_gives_the_readable_records_or_error_on_hostile_bytes(case):
    raw, count = case
    if len(raw) <= RECORD_BATCH_OVERHEAD:
        return
    batch = RecordBatch.from_bytes(raw)
    batch.records_count = count
    readable = outcome(decode_records, batch, raw, RECORD_BATCH_OVERHEAD)
    assert outcome(records_of, batch, raw, RECORD_BATCH_OVERHEAD) == readable
    try:
        compiled_alone = _compiled_alone(batch, raw, RECORD_BATCH_OVERHEAD)
    except _HandedOver:  # the kernel may hand over anything: the readable decoder judges it
        return
    assert readable == ("records", compiled_alone)


def chunked(batch: RecordBatch, chunk_size: int):
    """``record_chunks`` as ``outcome`` gives it: every chunk's records joined, or the error
    (after the chunks before it), and the chunks' sizes."""
    records, sizes = [], []
    try:
        for chunk in batch.record_chunks(chunk_size=chunk_size):
            records += chunk
            sizes.append(len(chunk))
    except KafkaLogError as exc:
        return ("error", exc.category, exc.message, exc.position, exc.offset), sizes
    return ("records", records), sizes


def whole(batch: RecordBatch):
    try:
        return "records", batch.records()
    except KafkaLogError as exc:
        return "error", exc.category, exc.message, exc.position, exc.offset


@pytest.mark.req("REC-1", "REC-2", "REC-10")
@CASES
@given(mutated(), st.integers(1, 7))
def test_record_chunks_give_the_records_or_the_error_of_records(case, chunk_size):
    """The bounded-memory path (issue 20): chunks of at most ``chunk_size`` records, which
    together are ``records()``, or the same error with the same location."""
    raw, count = case
    if len(raw) <= RECORD_BATCH_OVERHEAD:
        return
    batch = RecordBatch.from_bytes(raw)
    batch.records_count = count
    found, sizes = chunked(batch, chunk_size)
    assert found == whole(batch)
    assert all(0 < size <= chunk_size for size in sizes)
    if found[0] == "records":
        assert sizes == [min(chunk_size, count - i) for i in range(0, count, chunk_size)]


@pytest.mark.req("REC-1", "REC-2")
@compiled_only
@CASES
@given(mutated(), st.integers(0, 6), st.integers(1, 7))
def test_the_compiled_chunk_decoder_gives_the_readable_chunk_or_error(case, done, count):
    raw, _ = case
    if len(raw) <= RECORD_BATCH_OVERHEAD:
        return
    batch = RecordBatch.from_bytes(raw)
    start = RECORD_BATCH_OVERHEAD
    for decoder in (decode_record_chunk, record_chunk_of):
        try:
            result = decoder(batch, raw, start, done, count)
        except KafkaLogError as exc:
            result = ("error", exc.category, exc.message)
        if decoder is decode_record_chunk:
            readable = result
    assert result == readable


@pytest.mark.req("COMP-3", "REC-10")
def test_record_chunks_bound_a_batch_of_a_million_tiny_records():
    """A zstd batch of 10^6 seven-byte records (64 KB on disk): the chunks hold at most
    RECORDS_PER_CHUNK records each, and together every record (the issue's batch held 6
    million: records() as one list took gigabytes)."""
    from reference_impl.records.batch import RECORDS_PER_CHUNK
    from reference_impl.records.builder import build_raw_batch

    count = 10**6
    raw = build_raw_batch(b"\x0c\x00\x00\x00\x01\x01\x00" * count, count, Compression.ZSTD)
    batch = RecordBatch.from_bytes(raw)
    sizes = [len(chunk) for chunk in batch.record_chunks()]
    assert max(sizes) == RECORDS_PER_CHUNK and sum(sizes) == count


@pytest.mark.req("BATCH-6", "REC-11")
def test_a_negative_offset_delta_gives_the_same_sequence_both_ways():
    """BATCH-6's incrementSequence on a hostile negative offsetDelta: ``s + d``, no
    wrap-around (the compiled decoder once computed Int.MAX - d in 32 bits and wrapped)."""
    raw = bytearray(
        build_record_batch([SimpleRecord(b"v", timestamp=0)], producer_id=7, base_sequence=0)
    )
    at = RECORD_BATCH_OVERHEAD + 3  # length, attributes, timestampDelta 0, then offsetDelta
    assert raw[at] == 0
    raw[at] = 0x01  # zigzag -1
    batch = RecordBatch.from_bytes(bytes(raw))
    readable = outcome(decode_records, batch, bytes(raw), RECORD_BATCH_OVERHEAD)
    assert readable[0] == "records" and readable[1][0].sequence == -1
    assert outcome(records_of, batch, bytes(raw), RECORD_BATCH_OVERHEAD) == readable


@pytest.mark.corpus
@compiled_only
def test_the_compiled_and_readable_decoders_agree_on_the_corpus(corpus):
    decoded = 0
    for path in sorted(corpus.rglob("*.log")):
        with open(path, "rb") as handle:
            try:
                found = [b for b in iter_file_batches(handle) if b.magic == 2 and b.is_valid]
            except KafkaLogError:
                continue  # the damaged files of the corpus: their whole batches are elsewhere
        for batch in found:
            if batch.records_count <= 0:
                continue
            buf, start = batch.raw, RECORD_BATCH_OVERHEAD
            if batch.compression is not Compression.NONE:
                buf, start = decompress(batch.compression, buf[start:], magic=2), 0
            readable = outcome(decode_records, batch, buf, start)
            assert outcome(records_of, batch, buf, start) == readable, path
            decoded += readable[0] == "records"
    assert decoded > 1000
