"""TimeIndexTest, restated (catalogue 6.2 #23, #30-34)."""

from __future__ import annotations

import pytest

from reference_impl.errors import Category, CorruptIndexError, KafkaLogError
from reference_impl.formats.index_entries import TimestampOffset
from reference_impl.log.time_index import TimeIndex

MAX_ENTRIES = 30
BASE_OFFSET = 45


@pytest.fixture
def idx(tmp_path):
    index = TimeIndex(tmp_path / "test.timeindex", BASE_OFFSET, MAX_ENTRIES * 12)
    yield index
    index.close_handler()


def append_entries(idx: TimeIndex, count: int) -> None:
    for i in range(1, count + 1):
        idx.maybe_append(i * 10, i * 10 + BASE_OFFSET)


@pytest.mark.req("INDEX-19")
def test_look_up(idx):
    assert idx.lookup(100) == TimestampOffset(-1, BASE_OFFSET)
    append_entries(idx, MAX_ENTRIES - 1)
    assert idx.lookup(9) == TimestampOffset(-1, BASE_OFFSET)
    assert idx.lookup(25) == TimestampOffset(20, 65)
    assert idx.lookup(30) == TimestampOffset(30, 75)


def test_entry(idx):
    append_entries(idx, MAX_ENTRIES - 1)
    assert [idx.entry(i) for i in range(4)] == [
        TimestampOffset(10, 55),
        TimestampOffset(20, 65),
        TimestampOffset(30, 75),
        TimestampOffset(40, 85),
    ]


def test_entry_overflow(idx):
    with pytest.raises(ValueError):
        idx.entry(0)


@pytest.mark.req("INDEX-6")
def test_truncate(idx):
    append_entries(idx, MAX_ENTRIES - 1)
    idx.truncate()
    assert idx.entries == 0
    append_entries(idx, MAX_ENTRIES - 1)
    idx.truncate_to(10 + BASE_OFFSET)
    assert idx.entries == 0


@pytest.mark.req("INDEX-10", "INDEX-12", "INDEX-15")
def test_append(idx):
    """testAppend: full (the reserved slot) unless skip_full_check; an offset regression is
    an InvalidOffsetException even then; skip_full_check uses the reserved slot."""
    append_entries(idx, MAX_ENTRIES - 1)
    with pytest.raises(ValueError):
        idx.maybe_append(10000, 1000)
    with pytest.raises(KafkaLogError) as raised:
        idx.maybe_append(10000, (MAX_ENTRIES - 2) * 10, True)
    assert raised.value.category is Category.INVALID_OFFSET
    idx.maybe_append(10000, 1000, True)
    assert idx.entries == MAX_ENTRIES


def test_equal_timestamp_ignored_smaller_rejected(idx):
    """Quirk 4: an equal timestamp is silently ignored, a smaller one is an IllegalStateException."""
    idx.maybe_append(100, 50)
    idx.maybe_append(100, 60)
    assert idx.entries == 1 and idx.last_entry() == TimestampOffset(100, 50)
    with pytest.raises(RuntimeError):
        idx.maybe_append(99, 70)


def test_no_timestamp_never_indexed(idx):
    """v0 data (timestamp -1) never makes an entry: the empty last entry is (-1, base)."""
    idx.maybe_append(-1, 50)
    assert idx.entries == 0


def corrupt(path, offset: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[offset : offset + len(data)] = data
    path.write_bytes(bytes(raw))


@pytest.mark.req("TIDX-5", "TIDX-6", "TIDX-7")
def test_sanity_check(idx, tmp_path):
    """testSanityCheck: last timestamp below the first, last offset below the base, length."""
    idx.sanity_check()
    append_entries(idx, 5)
    idx.sanity_check()
    idx.close()
    path = idx.file
    good = path.read_bytes()
    assert len(good) == 5 * 12
    corrupt(path, 4 * 12, (5).to_bytes(8, "big"))  # last timestamp 5 < first 10
    with pytest.raises(CorruptIndexError):
        TimeIndex(path, BASE_OFFSET).sanity_check()
    path.write_bytes(good)
    corrupt(path, 4 * 12 + 8, (-1).to_bytes(4, "big", signed=True))  # last offset < base
    with pytest.raises(CorruptIndexError):
        TimeIndex(path, BASE_OFFSET).sanity_check()
    path.write_bytes(good + b"\x00")  # length not a multiple of 12
    with pytest.raises(CorruptIndexError):
        TimeIndex(path, BASE_OFFSET).sanity_check()
    path.write_bytes(good)
    TimeIndex(path, BASE_OFFSET).sanity_check()


@pytest.mark.req("INDEX-12")
def test_is_full(idx):
    assert not idx.is_full()
    append_entries(idx, MAX_ENTRIES - 1)
    assert idx.is_full()  # the last slot is kept for the roll/close entry


@pytest.mark.req("INDEX-11", "INDEX-19")
def test_last_entry(idx):
    assert idx.last_entry() == TimestampOffset(-1, BASE_OFFSET)
    idx.maybe_append(1, 1 + BASE_OFFSET)
    assert idx.last_entry() == TimestampOffset(1, BASE_OFFSET + 1)


@pytest.mark.req("INDEX-4", "INDEX-6")
def test_resize(idx):
    assert idx.resize(MAX_ENTRIES * idx.entry_size) is False
    assert idx.resize(MAX_ENTRIES // 2 * idx.entry_size) is True
    assert idx.resize(MAX_ENTRIES * 2 * idx.entry_size) is True
    assert idx.max_entries == MAX_ENTRIES * 2


@pytest.mark.req("TIDX-1")
def test_entry_size(idx):
    assert idx.entry_size == 12


@pytest.mark.req("TIDX-1")
def test_parse_entry(idx):
    idx.maybe_append(1, 1 + BASE_OFFSET)
    assert idx.read_file()[:12] == (1).to_bytes(8, "big") + (1).to_bytes(4, "big")
