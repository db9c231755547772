"""FileRecordsTest, restated (catalogue 6.3 #64-65, 6.4 #83, 6.5 #87)."""

from __future__ import annotations

import os

import pytest

from reference_impl.constants import INT32_MAX
from reference_impl.errors import CorruptRecordError, KafkaLogError
from reference_impl.log import storage as storage_module
from reference_impl.log.file_records import FileRecords, LogOffsetPosition
from reference_impl.records import SimpleRecord, build_legacy_message_set, build_record_batch

VALUES = [b"abcd", b"efgh", b"ijkl"]


def append_values(records: FileRecords, values=VALUES) -> None:
    for offset, value in enumerate(values):
        records.append(
            build_record_batch([SimpleRecord(value=value, timestamp=1000)], base_offset=offset)
        )
    records.flush()


@pytest.fixture
def file_records(tmp_path):
    records = FileRecords.open(tmp_path / "00000000000000000000.log")
    append_values(records)
    yield records
    if not records._channel.closed:
        records.close()


def batches(records: FileRecords):
    return [b.raw for b in records.batches()]


def test_append_protects_from_overflow(tmp_path):
    path = tmp_path / "big.log"
    with open(path, "wb") as out:
        out.truncate(INT32_MAX)  # sparse
    records = FileRecords.open(path, file_already_exists=True)
    assert records.size == INT32_MAX
    with pytest.raises(ValueError):
        records.append(b"x")
    records.close_handlers()


def test_open_oversize_file(tmp_path):
    path = tmp_path / "huge.log"
    with open(path, "wb") as out:
        out.truncate(INT32_MAX + 5)
    with pytest.raises(KafkaLogError):
        FileRecords.open(path, file_already_exists=True)


def test_out_of_range_slice(file_records):
    with pytest.raises(ValueError):
        file_records.slice(file_records.size + 1, 15)
    with pytest.raises(ValueError):
        file_records.slice(-1, 15)
    with pytest.raises(ValueError):
        file_records.slice(0, -1)


@pytest.mark.req("FRAME-4", "TRUNC-11")
def test_file_size(file_records):
    assert file_records.physical_size() == file_records.size
    for _ in range(20):
        file_records.append(build_record_batch([SimpleRecord(value=b"abcd")]))
        assert file_records.physical_size() == file_records.size


@pytest.mark.parametrize("tail", [0, 2, 4, 5, 6])
@pytest.mark.req("FRAME-4", "TRUNC-11")
def test_iteration_over_partial_and_truncation(file_records, tail):
    """Zero bytes after the data (a torn or preallocated tail) do not break iteration."""
    file_records._channel.write_at(bytes(tail), file_records.size)
    reopened = FileRecords.open(file_records.file, file_already_exists=True)
    values = [r.value for b in reopened.batches() for r in b.records()]
    assert values == VALUES
    reopened.close_handlers()


@pytest.mark.req("INDEX-20", "READ-14")
def test_read(file_records):
    size = file_records.size
    items = batches(file_records)
    first = len(items[0])
    read = file_records.slice(0, size)
    assert read.size == size and batches(read) == items
    for sliced in (
        file_records.slice(first, size - first),
        file_records.slice(first, size),
        file_records.slice(first, INT32_MAX),
        file_records.slice(1, size - 1).slice(first - 1, size),
        file_records.slice(1, size - 1).slice(first - 1, INT32_MAX),
    ):
        assert sliced.size == size - first
        assert batches(sliced) == items[1:], "read starting from the second batch"
    second = file_records.slice(first, len(items[1]))
    assert second.size == len(items[1]) and batches(second) == [items[1]]
    assert second.read_bytes() == items[1]


@pytest.mark.req("INDEX-20", "READ-14")
def test_search(file_records):
    file_records.append(build_record_batch([SimpleRecord(value=b"test")], base_offset=50))
    sizes = [len(b) for b in batches(file_records)]
    assert file_records.search_for_offset_with_size(0, 0) == LogOffsetPosition(0, 0, sizes[0])
    position = sizes[0]
    assert file_records.search_for_offset_with_size(1, 0) == LogOffsetPosition(
        1, position, sizes[1]
    )
    assert file_records.search_for_offset_with_size(1, position) == LogOffsetPosition(
        1, position, sizes[1]
    )
    position += sizes[1] + sizes[2]
    fourth = LogOffsetPosition(50, position, sizes[3])
    assert file_records.search_for_offset_with_size(3, position) == fourth
    assert file_records.search_for_offset_with_size(50, position) == fourth
    assert file_records.search_for_offset_with_size(51, 0) is None


@pytest.mark.req("INDEX-20", "READ-14")
def test_iterator_with_limits(file_records):
    batch = batches(file_records)[1]
    start = file_records.search_for_offset_with_size(1, 0).position
    assert batches(file_records.slice(start, len(batch))) == [batch]
    assert batches(file_records.slice(start, len(batch) - 1)) == []


@pytest.mark.req("TRUNC-11")
def test_truncate(file_records):
    items = batches(file_records)
    batch = items[0]
    end = file_records.search_for_offset_with_size(1, 0).position
    assert file_records.truncate_to(end) == len(items[1]) + len(items[2])
    assert batches(file_records) == [batch]
    assert file_records.size == len(batch)


def count_ftruncate(monkeypatch) -> list[int]:
    calls = []
    real = os.ftruncate

    def spy(fd, length):
        calls.append(length)
        real(fd, length)

    monkeypatch.setattr(storage_module.os, "ftruncate", spy)
    return calls


@pytest.mark.req("TRUNC-11")
def test_truncate_not_called_if_size_is_same_as_target_size(file_records, monkeypatch):
    calls = count_ftruncate(monkeypatch)
    assert file_records.truncate_to(file_records.size) == 0
    assert calls == []


@pytest.mark.req("TRUNC-11")
def test_truncate_not_called_if_size_is_bigger_than_target_size(file_records, monkeypatch):
    calls = count_ftruncate(monkeypatch)
    with pytest.raises(ValueError):
        file_records.truncate_to(file_records.size + 1)
    with pytest.raises(ValueError):
        file_records.truncate_to(-1)
    assert calls == []


@pytest.mark.req("TRUNC-11")
def test_truncate_if_size_is_different_to_target_size(file_records, monkeypatch):
    calls = count_ftruncate(monkeypatch)
    file_records.truncate_to(23)
    assert calls == [23]
    assert file_records.size == 23


def test_preallocate_true(tmp_path):
    path = tmp_path / "p.log"
    records = FileRecords.open(path, init_file_size=1024 * 1024, preallocate=True)
    assert records.size == 0
    assert path.stat().st_size == 1024 * 1024
    records.close()


def test_preallocate_false(tmp_path):
    path = tmp_path / "p.log"
    records = FileRecords.open(path, init_file_size=1024 * 1024, preallocate=False)
    assert records.size == 0
    assert path.stat().st_size == 0
    records.close()


def test_preallocate_clear_shutdown(tmp_path, file_records):
    path = tmp_path / "p.log"
    records = FileRecords.open(path, init_file_size=1024 * 1024, preallocate=True)
    append_values(records)
    assert records.size == file_records.size
    records.close()  # trims to the logical size
    reopened = FileRecords.open(
        path, file_already_exists=True, init_file_size=1024 * 1024, preallocate=True
    )
    assert reopened.size == file_records.size == path.stat().st_size
    reopened.close()


def test_reopen_untrimmed_preallocated_file_counts_the_zero_tail(tmp_path):
    """A preallocated file not trimmed (a crash) reopens with its physical length."""
    path = tmp_path / "p.log"
    records = FileRecords.open(path, init_file_size=4096, preallocate=True)
    append_values(records)
    written = records.size
    records.close_handlers()
    reopened = FileRecords.open(path, file_already_exists=True)
    assert reopened.size == 4096
    seen = []
    with pytest.raises(CorruptRecordError) as raised:  # a zero size field is below 14
        for b in reopened.batches():
            seen.append(b.last_offset)
    assert seen == [0, 1, 2]
    assert raised.value.position == written
    reopened.close_handlers()


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.req("READ-16", "READ-20")
def test_search_for_timestamp(tmp_path, magic):
    """v0 never matches; v1 and v2 do, and v2 carries the leader epoch."""
    records = FileRecords.open(tmp_path / "t.log", init_file_size=1024 * 1024, preallocate=True)
    for timestamp, offset, epoch in ((10, 5, 0), (11, 6, 1)):
        record = SimpleRecord(value=b"", key=b"", timestamp=timestamp)
        if magic == 2:
            data = build_record_batch([record], base_offset=offset, partition_leader_epoch=epoch)
        else:
            data = build_legacy_message_set([record], magic=magic, base_offset=offset)
        records.append(data)
    found = [records.search_for_timestamp(ts, 0, 0) for ts in (9, 10, 11)]
    assert records.search_for_timestamp(12, 0, 0) is None
    if magic == 0:
        assert found == [None, None, None]
    else:
        assert [(f.timestamp, f.offset) for f in found] == [(10, 5), (10, 5), (11, 6)]
        expected_epochs = [0, 0, 1] if magic == 2 else [None, None, None]
        assert [f.leader_epoch for f in found] == expected_epochs
    records.close()


@pytest.mark.req("FRAME-4")
@pytest.mark.parametrize("magic", [0, 1, 2])
def test_batch_iteration_incomplete_batch(tmp_path, magic):
    """FileLogInputStreamTest: a last batch cut short (13 bytes missing) is not returned."""
    records = FileRecords.open(tmp_path / "i.log")
    for offset, (ts, value) in enumerate(((100, b"foo"), (200, b"bar"))):
        record = SimpleRecord(value=value, timestamp=ts)
        if magic == 2:
            records.append(build_record_batch([record], base_offset=offset))
        else:
            records.append(build_legacy_message_set([record], magic=magic, base_offset=offset))
    records.truncate_to(records.size - 13)
    assert [b.last_offset for b in records.batches()] == [0]
    records.close()


@pytest.mark.req("FRAME-2")
def test_next_batch_selection_with_maxed_and_zeroed_params(tmp_path):
    """testNextBatchSelectionWith{Maxed,Zeroed}Params: degenerate start/end give no batch."""
    records = FileRecords.open(tmp_path / "e.log")
    assert list(records.batches_from(INT32_MAX)) == []
    assert list(records.slice(0, 0).batches()) == []
    records.close()
