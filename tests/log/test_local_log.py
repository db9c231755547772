"""LocalLogTest, restated (catalogue 6.1 #4-7; 6.3 #61; 6.4 #72-73, #78)."""

from __future__ import annotations

import pytest

from reference_impl.errors import Category, KafkaLogError
from reference_impl.formats.file_naming import DELETED_FILE_SUFFIX
from reference_impl.log.config import LogConfig
from reference_impl.log.deletion import delete_segment_files
from reference_impl.log.fetch import LogOffsetMetadata
from reference_impl.log.local_log import LocalLog
from reference_impl.log.log_segments import LogSegments
from reference_impl.log.scheduler import Scheduler
from reference_impl.log.segment import LogSegment
from reference_impl.records import SimpleRecord, build_record_batch

from .support import records_of

CONFIG = LogConfig()  # LogTestUtils.createLogConfig(): Kafka's defaults


@pytest.fixture
def log(tmp_path, clock):
    """createLocalLogWithActiveSegment: one empty segment at 0, recovery point 0."""
    dir = tmp_path / "test_topic-1"
    dir.mkdir()
    segments = LogSegments()
    segments.add(LogSegment.open(dir, 0, CONFIG, clock))
    local = LocalLog(dir, CONFIG, clock, Scheduler(clock), segments, 0, LogOffsetMetadata(0, 0, 0))
    yield local
    local.close_handlers()


def append_records(
    log: LocalLog, values: list[tuple[str | None, str]], initial_offset: int = 0, timestamp: int = 0
):
    """LocalLogTest.appendRecords: one v2 batch (epoch 0) with the given key/values."""
    records = [
        SimpleRecord(value=v.encode(), key=k.encode() if k else None, timestamp=timestamp)
        for k, v in values
    ]
    data = build_record_batch(records, base_offset=initial_offset, partition_leader_epoch=0)
    log.append(initial_offset + len(records) - 1, data)


def read_records(log: LocalLog, start_offset=0, max_length=None, max_offset_metadata=None):
    return log.read(
        start_offset,
        log.segments.active_segment.size if max_length is None else max_length,
        False,
        max_offset_metadata or log.log_end_offset_metadata,
    )


def kvs(fetch):
    return [((r.key or b"").decode(), (r.value or b"").decode()) for r in records_of(fetch)]


@pytest.mark.req("RET-13", "ROLL-13")
def test_roll_empty_active_segment(log):
    old = log.segments.active_segment
    log.roll()
    assert log.segments.number_of_segments() == 1
    assert log.segments.active_segment is not old
    assert old.has_suffix(DELETED_FILE_SUFFIX)
    assert any(log.dir.iterdir())


def test_log_flush(log, clock):
    assert log.recovery_point == 0
    append_records(log, [(None, "a")], timestamp=clock.milliseconds())
    new_segment = log.roll()
    log.flush(new_segment.base_offset)
    log.mark_flushed(new_segment.base_offset)
    assert log.recovery_point == 1


def test_log_append(log):
    assert records_of(read_records(log, max_length=1)) == []
    append_records(log, [("abc", "ABC"), ("de", "DE")])
    assert log.log_end_offset == 2
    assert log.recovery_point == 0
    assert kvs(read_records(log)) == [("abc", "ABC"), ("de", "DE")]


@pytest.mark.parametrize("async_delete", [False, True])
@pytest.mark.req("RET-13", "RET-14")
def test_remove_and_delete_segments(log, clock, async_delete):
    """testRemoveAndDeleteSegments{Sync,Async} and testDeleteSegmentFiles{Sync,Async}:
    the files go .deleted at once, and away after file.delete.delay.ms."""
    for offset in range(9):
        append_records(log, [(None, "a")], initial_offset=offset)
        log.roll()
    assert log.segments.number_of_segments() == 10
    to_delete = log.segments.values()
    for segment in to_delete:
        log.segments.remove(segment.base_offset)
    delete_segment_files(
        to_delete,
        async_delete=async_delete,
        scheduler=log.scheduler,
        file_delete_delay_ms=CONFIG.file_delete_delay_ms,
    )
    if async_delete:
        for segment in to_delete:
            assert not segment.deleted()
            assert segment.has_suffix(DELETED_FILE_SUFFIX)
        clock.sleep(CONFIG.file_delete_delay_ms + 1)
        assert log.scheduler.run_due() == 1
    assert log.segments.is_empty()
    assert all(segment.deleted() for segment in to_delete)


@pytest.mark.req("ROLL-13", "TRUNC-13")
def test_create_and_delete_segment(log):
    append_records(log, [(None, "a")])
    new_offset = log.segments.active_segment.base_offset + 1
    old = log.segments.active_segment
    new_active = log.create_and_delete_segment(new_offset, old)
    log.update_log_end_offset(new_offset)
    assert log.segments.number_of_segments() == 1
    assert log.segments.active_segment is new_active is not old
    assert old.has_suffix(DELETED_FILE_SUFFIX)
    assert log.segments.active_segment.base_offset == new_offset
    assert log.recovery_point == 0
    assert log.log_end_offset == new_offset
    assert records_of(read_records(log, start_offset=new_offset)) == []


@pytest.mark.req("TRUNC-13", "TRUNC-15")
def test_truncate_fully_and_start_at(log):
    for offset in range(8):
        append_records(log, [(None, "a")], initial_offset=offset)
        if offset % 2:
            log.roll()
    for offset in range(8, 13):
        append_records(log, [(None, "a")], initial_offset=offset)
    assert log.segments.number_of_segments() == 5
    assert log.segments.active_segment.base_offset != 10
    expected = log.segments.values()
    assert log.truncate_fully_and_start_at(10) == expected
    assert log.segments.number_of_segments() == 1
    assert log.segments.active_segment.base_offset == 10
    assert log.recovery_point == 0
    assert log.log_end_offset == 10
    assert records_of(read_records(log, start_offset=10)) == []


@pytest.mark.req("READ-5", "READ-6", "READ-11", "READ-12")
def test_when_fetch_offset_higher_than_max_offset(log):
    for offset in range(5):
        append_records(log, [(None, "a")], initial_offset=offset)
        if offset % 2:
            log.roll()
    assert log.segments.number_of_segments() == 3
    bound = LogOffsetMetadata(4, 4, 0)
    # case 0: start < max offset
    fetch = read_records(log, 3, max_offset_metadata=bound)
    assert len(records_of(fetch)) == 1
    assert fetch.fetch_offset_metadata == LogOffsetMetadata(3, 2, 69)
    # case 1: start == max offset
    fetch = read_records(log, 4, max_offset_metadata=bound)
    assert records_of(fetch) == [] and fetch.fetch_offset_metadata == bound
    # case 2: start > max offset
    fetch = read_records(log, 5, max_offset_metadata=bound)
    assert records_of(fetch) == []
    assert fetch.fetch_offset_metadata == LogOffsetMetadata(5, 4, 69)
    # case 3: start < max offset, but the max offset's position is unknown
    fetch = read_records(log, 3, max_offset_metadata=LogOffsetMetadata(4, -1, -1))
    assert records_of(fetch) == []
    assert fetch.fetch_offset_metadata == LogOffsetMetadata(3, 2, 69)
    # case 4: the max offset's segment is below the start's
    fetch = read_records(log, 3, max_offset_metadata=LogOffsetMetadata(4, 0, 40))
    assert records_of(fetch) == []
    assert fetch.fetch_offset_metadata == LogOffsetMetadata(3, 2, 69)


@pytest.mark.req("TRUNC-4", "TRUNC-6")
def test_truncate_to(log):
    for offset in range(12):
        append_records(log, [(None, "a")], initial_offset=offset)
        if offset % 3 == 2:
            log.roll()
    assert log.segments.number_of_segments() == 5
    assert log.log_end_offset == 12
    expected = log.segments.values(9, log.log_end_offset + 1)
    assert log.truncate_to(7) == expected
    assert log.segments.number_of_segments() == 3
    assert log.segments.active_segment.base_offset == 6
    assert log.recovery_point == 0
    assert log.log_end_offset == 7
    assert kvs(read_records(log, start_offset=6)) == [("", "a")]
    append_records(log, [(None, "a")], initial_offset=7)
    assert log.log_end_offset == 8


def test_non_active_segments_from(log):
    for i in range(5):
        append_records(log, [(str(i), str(i))], initial_offset=i)
        log.roll()

    def bases(start):
        return [s.base_offset for s in log.segments.non_active_log_segments_from(start)]

    assert log.segments.active_segment.base_offset == 5
    assert bases(0) == [0, 1, 2, 3, 4]
    assert bases(5) == []
    assert bases(2) == [2, 3, 4]
    assert bases(6) == []


@pytest.mark.req("ROLL-12", "ROLL-13", "ROLL-19")
def test_roll_segment_that_already_exists(log, clock):
    assert log.segments.number_of_segments() == 1
    log.roll(0)  # an empty active segment at the same base is recreated
    assert log.segments.number_of_segments() == 1
    append_records(log, [("k1", "v1")])
    assert log.segments.active_segment.base_offset == 0
    append_records(log, [("k2", "v2")], initial_offset=1, timestamp=10)
    assert log.log_end_offset == 2
    assert kvs(read_records(log)) == [("k1", "v1"), ("k2", "v2")]
    log.roll()
    assert log.segments.active_segment.base_offset == 2
    assert log.segments.number_of_segments() == 2
    assert log.log_end_offset == 2


@pytest.mark.req("ROLL-12", "ROLL-19")
def test_new_segments_after_roll(log):
    new_segment = log.roll()
    assert (new_segment.base_offset, log.segments.number_of_segments(), log.log_end_offset) == (
        0,
        1,
        0,
    )
    append_records(log, [("k1", "v1")])
    new_segment = log.roll()
    assert (new_segment.base_offset, log.segments.number_of_segments(), log.log_end_offset) == (
        1,
        2,
        1,
    )
    append_records(log, [("k2", "v2")], initial_offset=1)
    new_segment = log.roll(1)  # max(expected, LEO)
    assert (new_segment.base_offset, log.segments.number_of_segments(), log.log_end_offset) == (
        2,
        3,
        2,
    )


@pytest.mark.req("ROLL-15")
def test_roll_segment_error_when_next_offset_is_illegal(log):
    append_records(log, [("k1", "v1"), ("k2", "v2"), ("k3", "v3")])
    assert log.segments.active_segment.base_offset == 0
    assert log.log_end_offset == 3
    log.roll()
    assert log.segments.active_segment.base_offset == 3
    log.update_log_end_offset(1)  # an LEO below the active segment's base
    with pytest.raises(KafkaLogError) as raised:
        log.roll()
    assert raised.value.category is Category.INVALID_ROLL_OFFSET


@pytest.mark.req("ROLL-14")
def test_roll_to_an_existing_non_empty_segment_fails(log):
    append_records(log, [("k1", "v1")])
    log.update_log_end_offset(0)  # the new base would be 0, taken by a non-empty segment
    with pytest.raises(KafkaLogError) as raised:
        log.roll(0)
    assert raised.value.category is Category.INVALID_ROLL_OFFSET
