"""UnifiedLogTest, restated: reads and timestamp lookups (catalogue 6.1 #13, #19; 6.2 #46;
6.3 #54-60, #62)."""

from __future__ import annotations

import pytest

from klogspec.dump.index_checks import BatchSpan, verify_offset_index, verify_time_index
from reference_impl.errors import Category, KafkaLogError
from reference_impl.formats.index_entries import read_offset_index, read_time_index, until_stop
from reference_impl.log.file_records import TimestampAndOffset
from reference_impl.log.timestamp_lookup import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
)
from reference_impl.log.unified_log import Log
from reference_impl.records import Compression, SimpleRecord, build_record_batch

from .support import batch, create_log, create_segment, offsets_of, records_of, singleton_records

MESSAGE_IDS = list(range(50)) + list(range(50, 200, 7))


def non_sequential_log(tmp_path, clock) -> Log:
    log = create_log(tmp_path, clock, segment_bytes=72)
    for message_id in MESSAGE_IDS:
        log.append_as_follower(batch(message_id, str(message_id), epoch=0))
    return log


@pytest.mark.req("APPEND-16", "READ-5", "READ-8")
def test_append_and_read_with_sequential_offsets(tmp_path, clock):
    log = create_log(tmp_path, clock, segment_bytes=71)
    values = [str(i).encode() for i in range(0, 100, 2)]
    for value in values:
        log.append_as_leader(singleton_records(value), leader_epoch=0)
    for i, value in enumerate(values):
        read = log.read(i, 1, min_one_message=True).batches()[0]
        assert read.last_offset == i
        record = read.records()[0]
        assert record.key is None and record.value == value
    assert log.read(len(values), 100).batches() == []


@pytest.mark.req("APPEND-18", "READ-8")
def test_append_and_read_with_non_sequential_offsets(tmp_path, clock):
    log = non_sequential_log(tmp_path, clock)
    for i in range(50, max(MESSAGE_IDS)):
        expected = next(m for m in MESSAGE_IDS if m >= i)
        record = records_of(log.read(i, 100))[0]
        assert record.offset == expected and record.value == str(expected).encode()


@pytest.mark.req("READ-8")
def test_read_at_log_gap(tmp_path, clock):
    """A gap at the end of a segment: reading into it continues in the next segment."""
    log = create_log(tmp_path, clock, segment_bytes=300)
    while log.number_of_segments == 1:
        log.append_as_leader(singleton_records(b"42"), leader_epoch=0)
    log.log_segments()[0].truncate_to(1)
    assert log.read(1, 200).batches()[0].last_offset == log.log_end_offset - 1


@pytest.mark.req("READ-13", "READ-14")
def test_read_with_min_message(tmp_path, clock):
    log = non_sequential_log(tmp_path, clock)
    for i in range(50, max(MESSAGE_IDS)):
        expected = next(m for m in MESSAGE_IDS if m >= i)
        for max_length in (1, 100_000, 100):
            record = records_of(log.read(i, max_length, min_one_message=True))[0]
            assert record.offset == expected and record.value == str(expected).encode()


@pytest.mark.req("READ-13", "READ-14")
def test_read_with_too_small_max_length(tmp_path, clock):
    """max_bytes 0 gives nothing; 1 gives a 1-byte slice marked first_entry_incomplete."""
    log = non_sequential_log(tmp_path, clock)
    for i in range(50, max(MESSAGE_IDS)):
        empty = log.read(i, 0)
        assert empty.records is None and empty.data() == b""
        fetch = log.read(i, 1)
        assert fetch.first_entry_incomplete
        assert fetch.size_in_bytes == 1 and len(fetch.data()) == 1


@pytest.mark.req("READ-1", "READ-2", "READ-5")
def test_read_out_of_range(tmp_path, clock):
    """At the LEO: 0 bytes; below the log start offset or past the LEO: out of range."""
    dir = tmp_path / "topic-0"
    dir.mkdir()
    (dir / "00000000000000001024.log").touch()
    (dir / "00000000000000001024.index").touch()
    log = Log.open(dir, clock=clock)
    log.append_as_leader(singleton_records(b"42"), leader_epoch=0)
    assert log.read(1025, 1000).size_in_bytes == 0
    for offset in (0, 1023, 1026):
        with pytest.raises(KafkaLogError) as raised:
            log.read(offset, 1000)
        assert raised.value.category is Category.OFFSET_OUT_OF_RANGE
        assert raised.value.offset == offset


@pytest.mark.req("READ-9")
def test_compressed_messages(tmp_path, clock):
    """A read inside a compressed batch starts at the batch's first record."""
    log = create_log(tmp_path, clock, segment_bytes=110)
    for values in ((b"hello", b"there"), (b"alpha", b"beta")):
        data = build_record_batch(
            [SimpleRecord(value=v) for v in values], compression=Compression.GZIP
        )
        log.append_as_leader(data, leader_epoch=0)
    assert [offsets_of(log.read(o, 4096))[0] for o in range(4)] == [0, 0, 2, 2]


@pytest.mark.req("READ-4", "READ-5", "READ-12")
def test_fetch_up_to_log_end_offset(tmp_path, clock):
    log = create_log(tmp_path, clock, segment_bytes=1024 * 1024)
    log.append_as_leader(batch(0, "0", "1", "2"), leader_epoch=0)
    log.append_as_leader(batch(0, "3", "4"), leader_epoch=0)
    for offset in range(log.log_start_offset, log.log_end_offset):
        fetch = log.read(offset, 2**31 - 1, min_one_message=True)
        assert not fetch.first_entry_incomplete and fetch.size_in_bytes > 0
        assert all(o < log.log_end_offset for o in offsets_of(fetch))
        # READ-11 (Kafka 4.0 on): the found batch's base offset, 0 for 0-2 and 3 for 3-4
        assert fetch.fetch_offset_metadata.message_offset == (0 if offset < 3 else 3)


@pytest.mark.req("READ-12")
def test_fetch_up_to_max_offset(tmp_path, clock):
    """testFetchUpToHighWatermark, with ``max_offset`` standing for the high watermark: no
    batch at or past it is returned, and reads at or past it are empty."""
    log = create_log(tmp_path, clock, segment_bytes=1024 * 1024)
    log.append_as_leader(batch(0, "0", "1", "2"), leader_epoch=0)
    log.append_as_leader(batch(0, "3", "4"), leader_epoch=0)
    for bound in (0, 3, 5):
        for offset in range(0, bound):
            fetch = log.read(offset, 2**31 - 1, max_offset=bound, min_one_message=True)
            assert fetch.size_in_bytes > 0 and all(o < bound for o in offsets_of(fetch))
        for offset in range(bound, log.log_end_offset + 1):
            fetch = log.read(offset, 2**31 - 1, max_offset=bound, min_one_message=True)
            assert fetch.size_in_bytes == 0
            # READ-5 at the bound (its metadata), else READ-6/READ-11: the batch's base offset
            found = offset if offset in (bound, log.log_end_offset) else (0 if offset < 3 else 3)
            assert fetch.fetch_offset_metadata.message_offset == found


@pytest.mark.req("READ-4", "READ-12", "ROLL-19")
def test_max_offset_metadata_updated_after_segment_roll(tmp_path, clock):
    """testHighWatermarkMetadataUpdatedAfterSegmentRoll, with max_offset as the bound."""
    log = create_log(tmp_path, clock, segment_bytes=1024 * 1024)
    records = batch(0, "value", "value", "value", timestamp=clock.milliseconds())
    log.append_as_leader(records, leader_epoch=0)
    assert log.read(0, 2048, max_offset=0).size_in_bytes == 0
    fetch = log.read(0, 2048, max_offset=3)
    assert fetch.size_in_bytes == len(records) and offsets_of(fetch) == [0, 1, 2]
    log.roll()
    fetch = log.read(0, 2048, max_offset=3)
    assert fetch.size_in_bytes == len(records) and offsets_of(fetch) == [0, 1, 2]
    log.append_as_leader(records, leader_epoch=0)
    assert log.read(3, 2048, max_offset=3).size_in_bytes == 0


@pytest.mark.req("READ-4")
def test_max_offset_above_log_end_reads_as_log_end(tmp_path, clock):
    log = create_log(tmp_path, clock)
    log.append_as_leader(batch(0, "a"), leader_epoch=0)
    assert offsets_of(log.read(0, 100, max_offset=5)) == [0]


@pytest.mark.req("READ-7")
def test_negative_max_bytes_is_an_invalid_argument(tmp_path, clock):
    log = create_log(tmp_path, clock)
    log.append_as_leader(batch(0, "a"), leader_epoch=0)
    with pytest.raises(KafkaLogError) as raised:
        log.read(0, -1)
    assert raised.value.category is Category.INVALID_ARGUMENT
    assert log.read(1, -1).data() == b""  # at the max offset: empty before the size check


@pytest.mark.req("FLUSH-2")
def test_log_segments_call_correct(tmp_path, clock):
    set_size = len(singleton_records(b"test", clock.milliseconds()))
    log = create_log(tmp_path, clock, segment_bytes=10 * set_size)
    for _ in range(22):
        log.append_as_leader(singleton_records(b"test", clock.milliseconds()), leader_epoch=0)
    assert log.number_of_segments == 3

    def bases(start, end):
        return [s.base_offset for s in log.segments.values(start, end)]

    assert bases(10, 10) == [] and bases(15, 15) == []
    assert bases(0, 21) == [0, 10, 20]
    assert bases(1, 5) == [0]
    assert bases(13, 21) == [10, 20]
    assert bases(13, 17) == [10]
    with pytest.raises(ValueError):
        log.segments.values(10, 0)


@pytest.mark.req("READ-15", "READ-16", "READ-17", "READ-18", "READ-20")
def test_fetch_offset_by_timestamp_includes_leader_epoch(tmp_path, clock):
    log = create_log(tmp_path, clock, segment_bytes=200, index_interval_bytes=1)
    assert log.fetch_offset_by_timestamp(0) is None
    first = clock.milliseconds()
    log.append_as_leader(singleton_records(b"0123456789", first), leader_epoch=0)
    log.append_as_leader(singleton_records(b"0123456789", first + 1), leader_epoch=1)
    assert log.fetch_offset_by_timestamp(first) == TimestampAndOffset(first, 0, 0)
    assert log.fetch_offset_by_timestamp(first + 1) == TimestampAndOffset(first + 1, 1, 1)
    assert log.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP) == TimestampAndOffset(-1, 0, 0)
    assert log.fetch_offset_by_timestamp(EARLIEST_LOCAL_TIMESTAMP) == TimestampAndOffset(-1, 0, 0)
    assert log.fetch_offset_by_timestamp(LATEST_TIMESTAMP) == TimestampAndOffset(-1, 2, 1)
    log.maybe_assign_epoch_start_offset(2, 2)
    assert log.fetch_offset_by_timestamp(LATEST_TIMESTAMP) == TimestampAndOffset(-1, 2, 2)


@pytest.mark.req("READ-19", "READ-20")
def test_fetch_offset_by_timestamp_with_max_timestamp_includes_timestamp(tmp_path, clock):
    log = create_log(tmp_path, clock, segment_bytes=200, index_interval_bytes=1)
    assert log.fetch_offset_by_timestamp(0) is None
    first = clock.milliseconds()
    for ts in (first, first + 1, first):
        log.append_as_leader(singleton_records(b"0123456789", ts), leader_epoch=0)
    assert log.fetch_offset_by_timestamp(MAX_TIMESTAMP) == TimestampAndOffset(first + 1, 1, 0)


def test_fetch_latest_tiered_timestamp_no_remote_storage(tmp_path, clock):
    log = create_log(tmp_path, clock)
    assert log.fetch_offset_by_timestamp(LATEST_TIERED_TIMESTAMP) == TimestampAndOffset(-1, -1, -1)


@pytest.mark.req("ROLL-10")
def test_get_first_batch_timestamp_for_segments(tmp_path, clock):
    seg1, seg2 = create_segment(tmp_path, 1), create_segment(tmp_path, 2)
    assert [s.get_first_batch_timestamp() for s in (seg1, seg2)] == [2**63 - 1] * 2
    seg1.append(1, batch(1, "one", timestamp=1000))
    seg2.append(2, batch(2, "two", timestamp=2000))
    assert [s.get_first_batch_timestamp() for s in (seg1, seg2)] == [1000, 2000]
    seg1.close()
    seg2.close()


@pytest.mark.req("INDEX-14", "INDEX-16", "OIDX-10", "TIDX-12")
def test_dump_index_mismatches_and_time_index_errors(tmp_path, clock):
    """DumpLogSegmentsTest testDumpIndexMismatches / testDumpTimeIndexErrors: a log written
    with index.interval.bytes 128 and flushed, not closed (its indexes keep their zero
    slots), passes the verifier's offset- and time-index checks (index.py)."""
    log = create_log(tmp_path, clock, index_interval_bytes=128)
    now = clock.milliseconds()
    sets = [
        [SimpleRecord(key=f"message key {i}".encode(), value=f"message value {i}".encode(), timestamp=now + i * 2) for i in range(10)],
        [SimpleRecord(key=f"message key {i}".encode(), value=None, timestamp=now + i * 3) for i in range(10, 30)],
        [SimpleRecord(key=None, value=f"message value {i}".encode(), timestamp=now + i * 5) for i in range(30, 50)],
        [SimpleRecord(key=None, value=None, timestamp=now + i * 7) for i in range(50, 60)],
    ]  # fmt: skip
    for records in sets:
        log.append_as_leader(build_record_batch(records), leader_epoch=0)
    log.flush()
    segment = log.active_segment
    index_bytes = segment.offset_index_file.read_bytes()
    time_bytes = segment.time_index_file.read_bytes()
    assert len(index_bytes) == log.config.segment_index_bytes  # untrimmed: zero slots
    offset_entries = list(until_stop(read_offset_index(index_bytes, 0), 0))
    time_entries = list(until_stop(read_time_index(time_bytes, 0), 0))
    assert offset_entries and time_entries
    spans = {b.position: b for b in segment.log.batches()}

    def batch_at(position):
        b = spans.get(position)
        return None if b is None else BatchSpan(b.base_offset, b.last_offset, b.max_timestamp)

    def find_batch(position, offset):
        for b in segment.log.batches_from(position):
            if b.last_offset >= offset:
                return BatchSpan(b.base_offset, b.last_offset, b.max_timestamp)
        return None

    assert verify_offset_index(offset_entries, batch_at) == []
    assert verify_time_index(time_entries, offset_entries, 0, find_batch) == []
