"""Index file formats: reference_impl/formats/index_entries.py against Kafka's OffsetIndexTest, TimeIndexTest
and TransactionIndexTest format cases (entry serde, sanity checks, zero-slot counting on
reopen, the txn version quirk), DumpLogSegments' stop rule and cross-checks, and the corpus."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

import reference_impl.formats.index_entries as index
from klogspec.dump.index_checks import BatchSpan, verify_offset_index, verify_time_index
from reference_impl.errors import Category, CorruptIndexError, KafkaLogError
from reference_impl.formats.file_naming import FileKind, classify
from reference_impl.formats.index_entries import (
    AbortedTxn,
    OffsetPosition,
    TimestampOffset,
)

BASE = 45


def offset_index(base: int, entries, slots: int | None = None) -> bytes:
    """An .index image; ``slots`` > len(entries) leaves a preallocated zero tail."""
    data = b"".join(index.encode_offset_index_entry(OffsetPosition(o, p), base) for o, p in entries)
    return data + bytes(8 * ((slots or len(entries)) - len(entries)))


def time_index(base: int, entries, slots: int | None = None) -> bytes:
    data = b"".join(index.encode_time_index_entry(TimestampOffset(t, o), base) for t, o in entries)
    return data + bytes(12 * ((slots or len(entries)) - len(entries)))


# --- entry layout -------------------------------------------------------------------------


@pytest.mark.req("OIDX-1")
def test_offset_index_entry_is_relative_offset_then_position():
    data = index.encode_offset_index_entry(OffsetPosition(21301, 4329), 21236)
    assert data == bytes.fromhex("00000041 000010e9")  # spec worked example, first entry
    assert index.offset_index_entry(data, 0, 21236) == OffsetPosition(21301, 4329)
    assert index.OFFSET_INDEX_ENTRY_SIZE == 8


@pytest.mark.req("TIDX-1")
def test_time_index_entry_is_timestamp_then_relative_offset():
    """TimeIndexTest#testEntrySize / #testParseEntry."""
    data = bytes.fromhex("0000019b5d6e8ca5 00000041")
    assert index.time_index_entry(data, 0, 21236) == TimestampOffset(1766799084709, 21301)
    assert index.encode_time_index_entry(TimestampOffset(1766799084709, 21301), 21236) == data
    assert index.TIME_INDEX_ENTRY_SIZE == 12


@pytest.mark.parametrize("offset", [BASE - 1, BASE + 2**31])
def test_relative_offset_must_fit_an_int32(offset):
    with pytest.raises(KafkaLogError) as caught:
        index.encode_offset_index_entry(OffsetPosition(offset, 0), BASE)
    assert caught.value.category is Category.OFFSET_OVERFLOW
    with pytest.raises(KafkaLogError):
        index.encode_time_index_entry(TimestampOffset(1, offset), BASE)
    assert index.relative_offset(BASE + 2**31 - 1, BASE) == 2**31 - 1


def test_empty_files_have_no_entries():
    assert index.read_offset_index(b"", BASE) == []
    assert index.read_time_index(b"", BASE) == []
    index.sanity_check_offset_index(b"", BASE)
    index.sanity_check_time_index(b"", BASE)


def test_read_takes_whole_entries_only():
    data = offset_index(BASE, [(50, 0), (52, 100)]) + b"\x00\x00\x00"
    assert index.read_offset_index(data, BASE) == [OffsetPosition(50, 0), OffsetPosition(52, 100)]
    assert index.trailing_bytes(len(data), 8) == 3


# --- zero slots: counting on reopen and the stop rule ---------------------------------------


@pytest.mark.req("OIDX-9", "TIDX-11")
def test_reopened_preallocated_index_counts_zero_slots():
    """OffsetIndexTest#testReopen and the 'entries = floor(len/entrySize)' rule."""
    data = offset_index(BASE, [(46, 0), (50, 90), (53, 200)], slots=10)
    assert index.entry_count(len(data), 8) == 10
    assert index.read_offset_index(data, BASE)[3:] == [OffsetPosition(BASE, 0)] * 7
    trimmed = data[: 3 * 8]
    assert index.entry_count(len(trimmed), 8) == 3  # a trimmed index reopens full
    times = time_index(BASE, [(1000, 46), (1001, 50)], slots=5)
    assert index.entry_count(len(times), 12) == 5
    assert index.entry_count(10485756, 12) == 873813  # default segment.index.bytes


@pytest.mark.req("OIDX-10", "TIDX-12")
def test_stop_rule_ends_at_the_first_base_offset_entry_after_slot_0():
    data = offset_index(BASE, [(BASE, 0), (50, 90), (53, 200)], slots=6)
    used = list(index.until_stop(index.iter_offset_index(data, BASE), BASE))
    assert used == [OffsetPosition(BASE, 0), OffsetPosition(50, 90), OffsetPosition(53, 200)]
    times = time_index(BASE, [(0, BASE), (7, 46)], slots=4)  # slot 0 may hold the base offset
    assert [e.offset for e in index.until_stop(index.iter_time_index(times, BASE), BASE)] == [
        BASE,
        46,
    ]


def test_stop_rule_is_lazy():
    """A 10 MiB preallocated index must not be decoded past its last real entry."""
    consumed = []

    def entries():
        for slot in range(10**9):
            consumed.append(slot)
            yield OffsetPosition(BASE + 1 if slot < 2 else BASE, 0)

    assert len(list(index.until_stop(entries(), BASE))) == 2
    assert consumed == [0, 1, 2]


# --- sanity checks ------------------------------------------------------------------------


@pytest.mark.req("OIDX-3")
def test_sanity_last_offset_equal_to_base_offset():
    """OffsetIndexTest#testSanityLastOffsetEqualToBaseOffset."""
    index.sanity_check_offset_index(offset_index(BASE, [(BASE, 0)]), BASE)


@pytest.mark.req("OIDX-3")
def test_offset_index_with_a_negative_last_relative_offset_is_corrupt():
    data = offset_index(BASE, [(50, 0)]) + struct.pack(">ii", -1, 100)
    with pytest.raises(CorruptIndexError) as caught:
        index.sanity_check_offset_index(data, BASE, file="x.index")
    assert (caught.value.position, caught.value.offset) == (8, BASE - 1)


@pytest.mark.req("OIDX-2", "TIDX-5")
def test_length_must_be_a_multiple_of_the_entry_size():
    with pytest.raises(CorruptIndexError) as caught:
        index.sanity_check_offset_index(offset_index(BASE, [(50, 0)]) + b"\x00", BASE)
    assert caught.value.category is Category.CORRUPT_INDEX and caught.value.position == 0
    with pytest.raises(CorruptIndexError):
        index.sanity_check_time_index(time_index(BASE, [(5, 50)]) + b"\x00" * 11, BASE)


@pytest.mark.req("OIDX-3", "OIDX-9")
def test_untrimmed_offset_index_passes_its_sanity_check():
    """The zero tail's last slot is (baseOffset, 0): lastOffset == baseOffset is valid."""
    index.sanity_check_offset_index(offset_index(BASE, [(50, 0), (60, 99)], slots=1000), BASE)


@pytest.mark.req("TIDX-6", "TIDX-7", "TIDX-5")
def test_time_index_sanity_check_rules():
    """TimeIndexTest#testSanityCheck: the three corruption rules."""
    good = time_index(BASE, [(100, 50), (200, 60)])
    index.sanity_check_time_index(good, BASE)
    with pytest.raises(CorruptIndexError, match="last timestamp"):
        index.sanity_check_time_index(time_index(BASE, [(100, 50), (99, 60)]), BASE)
    negative = time_index(BASE, [(100, 50)]) + struct.pack(">qi", 200, -1)
    with pytest.raises(CorruptIndexError, match="last offset") as caught:
        index.sanity_check_time_index(negative, BASE)
    assert caught.value.position == 12
    with pytest.raises(CorruptIndexError, match="multiple"):
        index.sanity_check_time_index(good[:-1], BASE)


@pytest.mark.req("TIDX-6", "TIDX-11")
def test_untrimmed_time_index_fails_its_sanity_check_but_all_zero_passes():
    """The edge case: the last counted slot is (0, base), below a positive first timestamp;
    an all-zero file has first and last timestamps both 0."""
    with pytest.raises(CorruptIndexError):
        index.sanity_check_time_index(time_index(BASE, [(100, 50)], slots=10), BASE)
    index.sanity_check_time_index(bytes(12 * 10), BASE)
    index.sanity_check_time_index(
        time_index(BASE, [(100, 50)], slots=10), BASE, entries=1
    )  # a live index knows its real count


# --- lookups ------------------------------------------------------------------------------


@pytest.mark.req("OIDX-6")
def test_offset_lookup_is_a_floor_search():
    """OffsetIndexTest#randomLookupTest and #lookupExtremeCases."""
    rng = random.Random(7)
    offsets = sorted(rng.sample(range(BASE + 1, BASE + 10_000), 300))
    entries = [OffsetPosition(o, i * 10) for i, o in enumerate(offsets)]
    assert index.lookup_offset([], BASE + 5, BASE) == OffsetPosition(BASE, 0)
    assert index.lookup_offset(entries, offsets[0] - 1, BASE) == OffsetPosition(BASE, 0)
    assert index.lookup_offset(entries, offsets[0], BASE) == entries[0]
    assert index.lookup_offset(entries, offsets[-1] + 100, BASE) == entries[-1]
    for target in rng.sample(range(BASE, BASE + 10_100), 500):
        below = [e for e in entries if e.offset <= target]
        assert index.lookup_offset(entries, target, BASE) == (
            below[-1] if below else OffsetPosition(BASE, 0)
        )


@pytest.mark.req("TIDX-8")
def test_time_lookup_is_a_floor_search_by_timestamp():
    """TimeIndexTest#testLookUp: empty or below the first gives (-1, baseOffset)."""
    entries = [TimestampOffset(BASE + i * 10, BASE + i) for i in range(1, 20)]
    assert index.lookup_timestamp([], 100, BASE) == TimestampOffset(-1, BASE)
    assert index.lookup_timestamp(entries, BASE + 9, BASE) == TimestampOffset(-1, BASE)
    assert index.lookup_timestamp(entries, BASE + 10, BASE) == entries[0]
    assert index.lookup_timestamp(entries, BASE + 15, BASE) == entries[0]
    assert index.lookup_timestamp(entries, 10**12, BASE) == entries[-1]


# --- transaction index ------------------------------------------------------------------------


@pytest.mark.req("TXN-1")
def test_aborted_txn_serde():
    """TransactionIndexTest#testAbortedTxnSerde: 34 bytes, version written as 00 00."""
    txn = AbortedTxn(producer_id=983493, first_offset=2342, last_offset=9283, last_stable_offset=3)
    data = index.encode_aborted_txn(txn)
    assert len(data) == index.ABORTED_TXN_SIZE == 34
    assert data[:2] == b"\x00\x00"
    assert index.decode_aborted_txn(data) == txn
    assert index.read_txn_index(data * 3) == [txn] * 3


@pytest.mark.req("TXN-2", "TXN-3")
@pytest.mark.parametrize(
    ("version_bytes", "version"),
    [(b"\x00\x00", 0), (b"\x00\x01", 0), (b"\x00\xff", 0), (b"\x80\x00", -128), (b"\xff\xff", -1)],
)
def test_txn_version_is_the_signed_first_byte(version_bytes, version):
    body = index.encode_aborted_txn(AbortedTxn(1, 2, 3, 4))[2:]
    assert index.decode_aborted_txn(version_bytes + body).version == version


@pytest.mark.req("TXN-3")
@pytest.mark.parametrize("version_bytes", [b"\x01\x00", b"\x7f\x00"])
def test_txn_version_above_0_is_rejected(version_bytes):
    good = index.encode_aborted_txn(AbortedTxn(1, 2, 3, 4))
    data = good + version_bytes + good[2:]
    with pytest.raises(CorruptIndexError) as caught:
        index.read_txn_index(data, file="x.txnindex")
    assert (caught.value.category, caught.value.position) == (Category.CORRUPT_INDEX, 34)


@pytest.mark.req("TXN-4", "TXN-5")
def test_txn_partial_trailing_entry_is_ignored():
    txn = AbortedTxn(1, 0, 10, 11)
    assert index.read_txn_index(index.encode_aborted_txn(txn) + b"\x00" * 33) == [txn]
    assert index.read_txn_index(b"") == []


@pytest.mark.req("TXN-6")
def test_txn_sanity_check():
    """TransactionIndexTest#testSanityCheck: a lastOffset below the segment's base offset."""
    data = b"".join(
        index.encode_aborted_txn(t) for t in (AbortedTxn(0, 0, 10, 11), AbortedTxn(1, 5, 15, 13))
    )
    index.sanity_check_txn_index(data, 0)
    index.sanity_check_txn_index(data, 10)
    with pytest.raises(CorruptIndexError) as caught:
        index.sanity_check_txn_index(data, 12)
    assert (caught.value.position, caught.value.offset) == (0, 10)


# --- DumpLogSegments cross-checks -------------------------------------------------------------


def spans(*batches):
    """batch_at / find callables over (position, base, last, max timestamp) tuples."""
    table = [(p, BatchSpan(b, last, ts)) for p, b, last, ts in batches]

    def batch_at(position):
        return next((span for p, span in table if p == position), None)

    def find(position, target):
        return next((s for p, s in table if p >= position and s.last_offset >= target), None)

    return batch_at, find


def test_verify_offset_index_kinds():
    batch_at, _ = spans((0, 0, 9, 0), (100, 10, 19, 0), (200, 20, 29, 0))
    entries = [
        OffsetPosition(19, 100),  # exact
        OffsetPosition(25, 200),  # inside the batch
        OffsetPosition(29, 100),  # beyond: a follower's chunk
        OffsetPosition(5, 200),  # below the batch at the position
        OffsetPosition(40, 150),  # no batch starts there
    ]
    found = verify_offset_index(entries, batch_at)
    assert [(m.kind, m.slot, m.index_value, m.log_value, m.allowed_by) for m in found] == [
        ("offset_inside_batch", 1, 25, 29, "OIDX-7"),
        ("offset_beyond_batch", 2, 29, 19, "OIDX-7"),
        ("offset_below_batch", 3, 5, 29, None),
        ("no_batch_at_position", 4, 40, -1, None),
    ]


def test_verify_time_index_kinds():
    _, find = spans((0, 0, 9, 1000), (100, 10, 19, 2000), (200, 25, 29, 3000))
    offsets = [OffsetPosition(19, 100)]
    entries = [
        TimestampOffset(1000, 9),  # exact
        TimestampOffset(1500, 9),  # timestamp differs from the batch's records
        TimestampOffset(2000, 15),  # inside a batch (a leader's record-level entry)
        TimestampOffset(2500, 21),  # removed by compaction: the next batch starts at 25
        TimestampOffset(2400, 29),  # out of order
        TimestampOffset(4000, 99),  # beyond the log
    ]
    found = verify_time_index(entries, offsets, 0, find)
    assert [(m.kind, m.slot, m.index_value, m.log_value, m.allowed_by) for m in found] == [
        ("timestamp_mismatch", 1, 1500, 1000, "TIDX-9"),
        ("offset_inside_batch", 2, 15, 19, "TIDX-2"),
        ("offset_not_found", 3, 21, 29, "TIDX-9"),
        ("timestamp_mismatch", 4, 2400, 3000, "TIDX-9"),
        ("out_of_order", 4, 2400, 2500, None),
        ("offset_not_found", 5, 99, -1, "TIDX-9"),
    ]


# --- the corpus -------------------------------------------------------------------------------


def corpus_indexes(corpus: Path, kind: FileKind):
    return [p for p in sorted(corpus.rglob("*")) if classify(p).kind is kind]


@pytest.mark.corpus
@pytest.mark.req("OIDX-1", "OIDX-2", "OIDX-3", "OIDX-4", "OIDX-8")
def test_corpus_offset_indexes_pass_sanity_and_reencode(corpus):
    paths = corpus_indexes(corpus, FileKind.OFFSET_INDEX)
    assert len(paths) == 222
    for path in paths:
        data, base = path.read_bytes(), classify(path).base_offset
        index.sanity_check_offset_index(data, base, file=str(path))
        entries = index.read_offset_index(data, base)
        assert list(index.until_stop(entries, base)) == entries  # every file was trimmed
        assert offset_index(base, [(e.offset, e.position) for e in entries]) == data
        assert all(a.offset < b.offset for a, b in zip(entries, entries[1:], strict=False))


@pytest.mark.corpus
@pytest.mark.req("TIDX-1", "TIDX-3", "TIDX-5", "TIDX-6", "TIDX-7", "TIDX-10")
def test_corpus_time_indexes_pass_sanity_and_reencode(corpus):
    paths = corpus_indexes(corpus, FileKind.TIME_INDEX)
    assert len(paths) == 222
    for path in paths:
        data, base = path.read_bytes(), classify(path).base_offset
        index.sanity_check_time_index(data, base, file=str(path))
        entries = index.read_time_index(data, base)
        assert list(index.until_stop(entries, base)) == entries  # every file was trimmed
        assert time_index(base, [(e.timestamp, e.offset) for e in entries]) == data
        pairs = zip(entries, entries[1:], strict=False)
        assert all(a.timestamp < b.timestamp and a.offset <= b.offset for a, b in pairs)


@pytest.mark.corpus
def test_spec_worked_example_leader_index(corpus):
    segment = corpus / "snappy-kraft-nonzero-base/kafka-data/oms_order_status_changed-1"
    entries = index.read_offset_index((segment / "00000000000000021236.index").read_bytes(), 21236)
    assert len(entries) == 71
    assert entries[:3] == [
        OffsetPosition(21301, 4329),
        OffsetPosition(21341, 8492),
        OffsetPosition(21387, 12605),
    ]
    assert index.lookup_offset(entries, 21320, 21236) == OffsetPosition(21301, 4329)
    assert index.lookup_offset(entries, 21299, 21236) == OffsetPosition(21236, 0)
    times = index.read_time_index((segment / "00000000000000021236.timeindex").read_bytes(), 21236)
    assert len(times) == 74
    assert times[0] == TimestampOffset(1766799084709, 21301)
    assert times[-1] == TimestampOffset(1766802778666, 24650)


@pytest.mark.corpus
@pytest.mark.req("TIDX-2")
def test_corpus_time_index_entries_bound_every_earlier_record(corpus):
    """TIDX-2 on every corpus time index that has its .log: no record at an offset up to O has
    a timestamp above T. It holds for the leader's record-level entries too, which is why a
    verifier must accept an offset inside a batch (verify_time_index)."""
    from reference_impl.records import iter_file_batches

    checked = 0
    for path in corpus_indexes(corpus, FileKind.TIME_INDEX):
        log, data = path.with_suffix(".log"), path.read_bytes()
        if not data or not log.exists():
            continue
        entries = index.read_time_index(data, classify(path).base_offset)
        with open(log, "rb") as handle:
            records = [
                (r.offset, r.timestamp) for b in iter_file_batches(handle) for r in b.records()
            ]
        for entry in entries:
            later = [r for r in records if r[0] <= entry.offset and r[1] > entry.timestamp]
            assert not later, (path, entry, later[:3])
        checked += 1
    assert checked == 29
