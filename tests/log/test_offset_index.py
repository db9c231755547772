"""OffsetIndexTest, restated (catalogue 6.2 #21-29)."""

from __future__ import annotations

import random

import pytest

from reference_impl.errors import Category, CorruptIndexError, KafkaLogError
from reference_impl.formats.index_entries import OffsetPosition
from reference_impl.log import storage as storage_module
from reference_impl.log.offset_index import OffsetIndex

BASE_OFFSET = 45


@pytest.fixture
def index(tmp_path):
    idx = OffsetIndex(tmp_path / "test.index", BASE_OFFSET, 30 * 8)
    yield idx
    idx.close()


def monotonic_seq(rng: random.Random, base: int, length: int) -> list[int]:
    seq, last = [], base
    for _ in range(length):
        last += rng.randint(1, 15)
        seq.append(last)
    return seq


@pytest.mark.req("INDEX-18", "OIDX-6")
def test_random_lookup(index):
    """randomLookupTest: floor semantics against a sorted map; below the first entry (base, 0)."""
    assert index.lookup(92) == OffsetPosition(BASE_OFFSET, 0)
    rng = random.Random(1)
    offsets = monotonic_seq(rng, BASE_OFFSET + 1, index.max_entries)
    positions = monotonic_seq(rng, 0, index.max_entries)
    for offset, position in zip(offsets, positions, strict=True):
        index.append(offset, position)
    for offset, position in zip(offsets, positions, strict=True):
        assert index.lookup(offset) == OffsetPosition(offset, position)
    for target in rng.sample(range(BASE_OFFSET, offsets[-1]), 30):
        floor = [(o, p) for o, p in zip(offsets, positions, strict=True) if o <= target]
        expected = OffsetPosition(*floor[-1]) if floor else OffsetPosition(BASE_OFFSET, 0)
        assert index.lookup(target) == expected


@pytest.mark.req("INDEX-18")
def test_lookup_extreme_cases(index):
    assert index.lookup(BASE_OFFSET) == OffsetPosition(BASE_OFFSET, 0)
    for i in range(index.max_entries):
        index.append(BASE_OFFSET + i + 1, i)
    assert index.lookup(BASE_OFFSET) == OffsetPosition(BASE_OFFSET, 0)
    last = BASE_OFFSET + index.max_entries
    assert index.lookup(last) == OffsetPosition(last, index.max_entries - 1)


@pytest.mark.req("OIDX-1", "TIDX-1")
def test_entry(index):
    for i in range(index.max_entries):
        index.append(BASE_OFFSET + i, i)
    for i in range(index.max_entries):
        assert index.entry(i) == OffsetPosition(BASE_OFFSET + i, i)


@pytest.mark.req("OIDX-1", "TIDX-1")
def test_entry_overflow(index):
    with pytest.raises(ValueError):
        index.entry(0)


@pytest.mark.req("INDEX-17")
def test_append_too_many(index):
    """appendTooMany: a full index refuses appends (IllegalArgumentException)."""
    for i in range(index.max_entries):
        index.append(BASE_OFFSET + i + 1, i)
    assert index.is_full()
    with pytest.raises(KafkaLogError) as raised:
        index.append(BASE_OFFSET + index.max_entries + 1, 1)
    assert raised.value.category is Category.INVALID_ARGUMENT


@pytest.mark.req("INDEX-13")
def test_append_out_of_order(index):
    """appendOutOfOrder: a smaller (or equal) offset is an InvalidOffsetException."""
    index.append(51, 0)
    for offset in (50, 51):
        with pytest.raises(KafkaLogError) as raised:
            index.append(offset, 1)
        assert raised.value.category is Category.INVALID_OFFSET


def test_append_offset_overflow(index):
    with pytest.raises(KafkaLogError) as raised:
        index.append(BASE_OFFSET + 2**31, 0)
    assert raised.value.category is Category.OFFSET_OVERFLOW


def test_fetch_upper_bound_offset(index):
    first = OffsetPosition(BASE_OFFSET, 0)
    second = OffsetPosition(BASE_OFFSET + 1, 10)
    third = OffsetPosition(BASE_OFFSET + 2, 23)
    fourth = OffsetPosition(BASE_OFFSET + 3, 37)
    assert index.fetch_upper_bound_offset(first, 5) is None
    for entry in (first, second, third, fourth):
        index.append(entry.offset, entry.position)
    assert index.fetch_upper_bound_offset(first, 5) == second
    assert index.fetch_upper_bound_offset(first, 10) == second
    assert index.fetch_upper_bound_offset(first, 23) == third
    assert index.fetch_upper_bound_offset(first, 22) == third
    assert index.fetch_upper_bound_offset(second, 24) == fourth
    assert index.fetch_upper_bound_offset(fourth, 1) is None
    assert index.fetch_upper_bound_offset(first, 200) is None
    assert index.fetch_upper_bound_offset(second, 200) is None


@pytest.mark.req("INDEX-5")
def test_reopen(index):
    """testReopen: a closed (trimmed) index reopens with its entries, and is full."""
    first, second = OffsetPosition(51, 0), OffsetPosition(52, 1)
    index.append(first.offset, first.position)
    index.append(second.offset, second.position)
    index.close()
    reopened = OffsetIndex(index.file, BASE_OFFSET)
    assert reopened.lookup(first.offset) == first
    assert reopened.lookup(second.offset) == second
    assert reopened.last_offset == second.offset
    assert reopened.entries == 2
    assert reopened.is_full()
    with pytest.raises(ValueError):
        reopened.append(53, 1)


def test_reopen_untrimmed_counts_zero_slots(tmp_path):
    """Quirk 3: an index that was not trimmed reopens with every slot as an entry."""
    idx = OffsetIndex(tmp_path / "00.index", 0, 10 * 8)
    idx.append(3, 100)
    idx.flush()
    idx.close_handler()  # a crash: no trim
    reopened = OffsetIndex(tmp_path / "00.index", 0, 10 * 8)
    assert reopened.entries == 10
    assert reopened.entry(0) == OffsetPosition(3, 100)
    assert reopened.entry(9) == OffsetPosition(0, 0)
    assert reopened.last_offset == 0
    reopened.sanity_check()  # lastOffset == baseOffset passes


@pytest.mark.req("INDEX-6")
def test_truncate(tmp_path):
    idx = OffsetIndex(tmp_path / "00.index", 0, 10 * 8)
    idx.truncate()
    for i in range(1, 10):
        idx.append(i, i)
    idx.truncate_to(12)
    assert idx.lookup(10) == OffsetPosition(9, 9), "unchanged by truncate past the end"
    assert idx.last_offset == 9
    idx.append(10, 10)
    idx.truncate_to(10)
    assert idx.lookup(10) == OffsetPosition(9, 9), "unchanged by truncate at the end"
    assert idx.last_offset == 9
    idx.append(10, 10)
    idx.truncate_to(9)
    assert idx.lookup(10) == OffsetPosition(8, 8), "truncates off the last entry"
    assert idx.last_offset == 8
    idx.append(9, 9)
    idx.truncate_to(5)
    assert idx.lookup(10) == OffsetPosition(4, 4)
    assert idx.last_offset == 4
    idx.append(5, 5)
    idx.truncate()
    assert idx.entries == 0
    idx.close()


@pytest.mark.req("OIDX-3")
def test_sanity_last_offset_equal_to_base_offset(tmp_path):
    idx = OffsetIndex(tmp_path / "20.index", 20, 10 * 8)
    idx.append(20, 0)
    idx.sanity_check()
    idx.close()


def test_sanity_check_length_not_a_multiple(tmp_path):
    path = tmp_path / "00.index"
    path.write_bytes(bytes(8 * 3 + 5))
    with pytest.raises(CorruptIndexError):
        OffsetIndex(path, 0).sanity_check()


def test_create_rounds_down_and_rejects_tiny_size(tmp_path):
    idx = OffsetIndex(tmp_path / "a.index", 0, 67)
    assert idx.length == 64 and idx.max_entries == 8
    assert (tmp_path / "a.index").stat().st_size == 64
    with pytest.raises(ValueError):
        OffsetIndex(tmp_path / "b.index", 0, 7)


def test_stale_entries_stay_in_file_until_trim(tmp_path):
    """Truncation does not rewrite bytes: the file keeps stale entries until trimmed."""
    path = tmp_path / "00.index"
    idx = OffsetIndex(path, 0, 4 * 8)
    for i in range(1, 4):
        idx.append(i, i * 10)
    idx.truncate_to(2)
    assert idx.entries == 1
    assert path.read_bytes()[8:16] == bytes.fromhex("00000002 00000014")
    idx.close()
    assert path.read_bytes() == bytes.fromhex("00000001 0000000a")


def test_lookup_on_unsorted_slots_matches_kafka_search(tmp_path):
    """On a reopened untrimmed index the zero slots make the array unsorted; the lookup
    runs Kafka's exact search (warm section first), not a plain bisect."""
    path = tmp_path / "00.index"
    idx = OffsetIndex(path, 0, 6 * 8)
    for offset in (5, 9):
        idx.append(offset, offset * 10)
    idx.close_handler()
    reopened = OffsetIndex(path, 0, 6 * 8)
    # entries: (5,50) (9,90) (0,0) (0,0) (0,0) (0,0); the warm section starts at slot 0
    assert reopened.lookup(9) == OffsetPosition(0, 0)
    assert reopened.lookup(4) == OffsetPosition(0, 0)


def _count_preads(monkeypatch) -> list[int]:
    sizes: list[int] = []
    real = storage_module.os.pread

    def pread(fd, size, position):
        sizes.append(size)
        return real(fd, size, position)

    monkeypatch.setattr(storage_module.os, "pread", pread)
    return sizes


def test_reopened_slots_are_read_on_first_use_and_a_reset_reads_none(tmp_path, monkeypatch):
    """Opening an existing index reads none of its slots (Kafka maps the file): the first
    use reads them once; a reset, recovery's first step, drops them unread."""
    path = tmp_path / "00.index"
    idx = OffsetIndex(path, 0, 1000 * 8)
    for offset in range(1, 4):
        idx.append(offset, offset * 10)
    idx.close_handler()  # a crash: 1000 slots, 997 of them zeros
    preads = _count_preads(monkeypatch)
    reopened = OffsetIndex(path, 0, 1000 * 8)
    assert reopened.entries == 1000 and preads == []
    assert reopened.entry(2) == OffsetPosition(3, 30)
    assert reopened.entry(1) == OffsetPosition(2, 20)
    assert preads == [1000 * 8]
    recovered = OffsetIndex(path, 0, 1000 * 8)
    recovered.reset()
    recovered.append(7, 70)
    assert recovered.entries == 1 and recovered.lookup(9) == OffsetPosition(7, 70)
    assert preads == [1000 * 8]  # the reset index read nothing
    recovered.close()
    assert path.read_bytes() == bytes.fromhex("00000007 00000046")


def test_truncating_unread_slots_reads_only_those_kept(tmp_path, monkeypatch):
    path = tmp_path / "00.index"
    idx = OffsetIndex(path, 0, 10 * 8)
    for offset in range(1, 6):
        idx.append(offset, offset)
    idx.close_handler()
    preads = _count_preads(monkeypatch)
    reopened = OffsetIndex(path, 0, 10 * 8)
    reopened._truncate_to_entries(3)
    assert reopened.entries == 3 and preads == []
    assert reopened.last_offset == 3
    assert preads == [3 * 8]
