"""UnifiedLogTest (and LogLoaderTest, LogManagerTest), restated: truncation, log start offset,
deletion, leader epochs and checkpoint files (catalogue 6.4 #71, #73-82; 6.5 #106-107, #112)."""

from __future__ import annotations

import pytest

from reference_impl.errors import Category, KafkaLogError
from reference_impl.formats.checkpoints import EpochEntry
from reference_impl.log.config import LogConfig
from reference_impl.log.unified_log import Log

from .support import batch, create_log, offsets_of, singleton_records

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"


@pytest.mark.req("TRUNC-2", "TRUNC-3", "TRUNC-4", "TRUNC-5", "TRUNC-6", "TRUNC-13")
def test_truncate_to(tmp_path, clock):
    set_size = len(singleton_records(b"test", clock.milliseconds()))
    log = create_log(tmp_path, clock, segment_bytes=10 * set_size)
    append = lambda: log.append_as_leader(singleton_records(b"test", clock.milliseconds()), 0)  # noqa: E731
    for _ in range(10):
        append()
    assert log.number_of_segments == 1 and log.log_end_offset == 10
    last_offset, size = log.log_end_offset, log.size
    assert log.truncate_to(log.log_end_offset) is False  # keep everything
    assert (log.log_end_offset, log.size) == (last_offset, size)
    log.truncate_to(log.log_end_offset + 1)  # past the end: nothing happens
    assert (log.log_end_offset, log.size) == (last_offset, size)
    log.truncate_to(5)
    assert log.log_end_offset == 5 and log.size < size
    log.truncate_to(0)
    assert log.log_end_offset == 0 and log.size == 0
    for _ in range(10):
        append()
    assert (log.log_end_offset, log.size) == (last_offset, size)
    log.truncate_fully_and_start_at(log.log_end_offset - 9)
    assert log.log_end_offset == last_offset - 9 and log.size == 0
    for _ in range(10):
        append()
    assert log.log_end_offset > 10 and log.size == size
    log.truncate_to(0)  # below the first segment: truncate fully and start at 0
    assert log.log_end_offset == 0 and log.size == 0
    assert log.log_start_offset == 0


@pytest.mark.req("TRUNC-1")
def test_truncate_to_negative_offset_is_an_error(tmp_path, clock):
    log = create_log(tmp_path, clock)
    with pytest.raises(KafkaLogError) as raised:
        log.truncate_to(-1)
    assert raised.value.category is Category.INVALID_ARGUMENT


@pytest.mark.req("TRUNC-12")
def test_truncate_fully_to_negative_offset_is_an_error(tmp_path, clock):
    log = create_log(tmp_path, clock)
    with pytest.raises(KafkaLogError) as raised:
        log.truncate_fully_and_start_at(-1)
    assert raised.value.category is Category.INVALID_ARGUMENT
    assert [s.base_offset for s in log.log_segments()] == [0]


@pytest.mark.req("TRUNC-5", "TRUNC-6", "TRUNC-10")
def test_truncate_inside_a_batch_sets_leo_to_the_target(tmp_path, clock):
    """Quirk 9: the batch holding the target goes whole, yet LEO = target."""
    log = create_log(tmp_path, clock)
    log.append_as_leader(batch(0, "a", "b", "c"), leader_epoch=0)
    log.append_as_leader(batch(0, "d", "e"), leader_epoch=0)
    log.flush()
    assert log.recovery_point == 5
    log.truncate_to(4)
    assert log.log_end_offset == 4 and log.recovery_point == 4
    assert offsets_of(log.read(0, 10_000)) == [0, 1, 2]
    assert log.append_as_leader(batch(0, "f"), leader_epoch=0).first_offset == 4


@pytest.mark.req("TRUNC-4")
def test_truncate_to_segment_base_keeps_the_segment_empty(tmp_path, clock):
    """Quirk 9: a segment whose base equals the target stays, emptied."""
    log = create_log(tmp_path, clock)
    log.append_as_leader(batch(0, "a"), leader_epoch=0)
    log.roll()
    log.append_as_leader(batch(0, "b"), leader_epoch=0)
    log.truncate_to(1)
    assert [(s.base_offset, s.size) for s in log.log_segments()][-1] == (1, 0)
    assert log.number_of_segments == 2


@pytest.mark.req("TRUNC-7")
def test_truncate_below_log_start_offset_lowers_it(tmp_path, clock):
    """Quirk 10: a target below the log start offset (but not below the first segment)
    lowers the log start offset."""
    log = create_log(tmp_path, clock)
    for _ in range(5):
        log.append_as_leader(batch(0, "a"), leader_epoch=0)
    log.maybe_increment_log_start_offset(3)
    log.truncate_to(2)
    assert (log.log_start_offset, log.log_end_offset) == (2, 2)


@pytest.mark.req("READ-3", "TRUNC-14")
def test_truncate_fully_and_start(tmp_path, clock):
    log = create_log(tmp_path, clock, segment_bytes=1024 * 1024)
    log.append_as_leader(batch(0, "0", "1", "2"), leader_epoch=0)
    log.append_as_leader(batch(0, "3", "4"), leader_epoch=0)
    log.close()
    reopened = create_log(tmp_path, clock, segment_bytes=1024 * 1024)
    reopened.truncate_fully_and_start_at(2, 1)
    assert (reopened.log_start_offset, reopened.log_end_offset) == (1, 2)
    assert reopened.leader_epoch_cache.epoch_entries() == []
    assert reopened.recovery_point == 2  # lowered from 5


@pytest.mark.req("MODEL-3", "TRUNC-14")
def test_full_truncation_resets_offsets(tmp_path, clock):
    """testHighWatermarkMaintenance, its last step: LSO = LEO (= HW here) = 4."""
    log = create_log(tmp_path, clock, segment_bytes=1024 * 1024)
    log.append_as_leader(batch(0, "a", "b", "c"), leader_epoch=0)
    log.truncate_fully_and_start_at(4)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (4, 4, 4)


@pytest.mark.req("LEPOCH-6", "LEPOCH-8", "TRUNC-2")
def test_truncate_to_end_offset_clears_epoch_cache(tmp_path, clock):
    log = create_log(tmp_path, clock)
    log.append_as_follower(batch(27, "a", "b", epoch=19))
    assert log.leader_epoch_cache.latest_entry() == EpochEntry(19, 27)
    assert log.log_end_offset == 29
    for epoch, target in ((20, 29), (24, 30)):
        log.maybe_assign_epoch_start_offset(epoch, log.log_end_offset)
        assert log.leader_epoch_cache.latest_entry() == EpochEntry(epoch, 29)
        log.truncate_to(target)
        assert log.leader_epoch_cache.latest_entry() == EpochEntry(19, 27)
        assert log.log_end_offset == 29


@pytest.mark.req("CKPT-B-3", "LEPOCH-8")
def test_should_truncate_leader_epoch_checkpoint_file_when_truncating_log(tmp_path, clock):
    size = len(batch(0, "value", epoch=0))
    log = create_log(tmp_path, clock, segment_bytes=10 * size)
    cache = log.leader_epoch_cache

    def append(epoch, start, count):
        for i in range(count):
            log.append_as_follower(batch(start + i, "value", epoch=epoch))

    append(0, 0, 10)
    append(1, 10, 6)
    append(2, 16, 4)
    assert log.number_of_segments == 2 and log.log_end_offset == 20
    log.truncate_to(log.log_end_offset)
    assert len(cache.epoch_entries()) == 3
    log.truncate_to(11)
    assert len(cache.epoch_entries()) == 2
    log.truncate_to(10)
    assert len(cache.epoch_entries()) == 1
    log.truncate_to(0)
    assert cache.epoch_entries() == []
    assert (log.dir / "leader-epoch-checkpoint").read_text() == "0\n0\n"


@pytest.mark.req("TRUNC-4", "TRUNC-6", "LOAD-1", "LOAD-17")
def test_reopen_then_truncate(tmp_path, clock):
    size = len(singleton_records(b"test", clock.milliseconds()))
    config = dict(segment_bytes=5 * size, segment_index_bytes=1000, index_interval_bytes=10000)
    log = create_log(tmp_path, clock, **config)
    for _ in range(100):
        log.append_as_leader(singleton_records(b"test", clock.milliseconds()), leader_epoch=0)
    log.close()
    log = create_log(tmp_path, clock, **config)
    log.truncate_to(3)
    assert log.number_of_segments == 1
    assert log.log_end_offset == 3


@pytest.mark.req("MODEL-7", "RET-13", "RET-14")
def test_async_delete(tmp_path, clock):
    size = len(singleton_records(b"test", clock.milliseconds() - 1000))
    log = create_log(
        tmp_path, clock, segment_bytes=5 * size, segment_index_bytes=1000,
        index_interval_bytes=10000, retention_ms=999, file_delete_delay_ms=1000,
    )  # fmt: skip
    for _ in range(100):
        log.append_as_leader(
            singleton_records(b"test", clock.milliseconds() - 1000), leader_epoch=0
        )
    segments = log.log_segments()
    old_files = [s.log.file for s in segments] + [s.offset_index_file for s in segments]
    log.delete_old_segments()
    assert log.number_of_segments == 1
    assert all(s.log.file.name.endswith(".deleted") for s in segments)
    assert all(s.offset_index_file.name.endswith(".deleted") for s in segments)
    assert all(s.log.file.exists() and s.offset_index_file.exists() for s in segments)
    assert not any(f.exists() for f in old_files)
    deleted_files = [s.log.file for s in segments] + [s.offset_index_file for s in segments]
    clock.sleep(1000 + 1)
    log.state()  # the next use of the log runs the deletions now due
    assert not any(f.exists() for f in deleted_files)


@pytest.mark.req("MODEL-6", "RET-14")
def test_delete_with_zero_delay_is_immediate(tmp_path, clock):
    log = create_log(tmp_path, clock, file_delete_delay_ms=0)
    log.append_as_leader(batch(0, "a"), leader_epoch=0)
    log.roll()
    log.delete_segments_before(1)
    assert sorted(p.name for p in log.dir.glob("*.log*")) == ["00000000000000000001.log"]


@pytest.mark.req("LEPOCH-8", "RET-5", "RET-10", "RET-12")
def test_delete_old_segments(tmp_path, clock):
    """Time retention and the epoch cache (the high-watermark steps do not apply: HW = LEO)."""
    size = len(singleton_records(b"test", clock.milliseconds() - 1000))
    log = create_log(
        tmp_path, clock, segment_bytes=5 * size, segment_index_bytes=1000, retention_ms=999
    )
    for _ in range(100):
        log.append_as_leader(
            singleton_records(b"test", clock.milliseconds() - 1000), leader_epoch=0
        )
    log.maybe_assign_epoch_start_offset(0, 40)
    log.maybe_assign_epoch_start_offset(1, 90)
    log.delete_old_segments()
    assert log.number_of_segments == 1
    assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(1, 100)]
    assert (log.log_start_offset, log.log_end_offset) == (100, 100)


@pytest.mark.req("RET-3", "RET-4", "RET-6")
def test_log_deletion_after_delete_records(tmp_path, clock):
    size = len(singleton_records(b"test"))
    log = create_log(tmp_path, clock, segment_bytes=5 * size)
    for _ in range(15):
        log.append_as_leader(singleton_records(b"test"), leader_epoch=0)
    assert log.number_of_segments == 3 and log.log_start_offset == 0
    for new_start, segments in ((1, 3), (6, 2), (15, 1)):
        log.maybe_increment_log_start_offset(new_start)
        log.delete_old_segments()
        assert log.number_of_segments == segments
        assert log.log_start_offset == new_start


@pytest.mark.req("READ-1", "RET-4", "RET-6")
def test_delete_segments_before(tmp_path, clock):
    """The conformance ``delete_segments_before``: LSO up, then the LSO-breach pass only."""
    size = len(singleton_records(b"test"))
    log = create_log(tmp_path, clock, segment_bytes=5 * size, retention_ms=0)
    for _ in range(15):
        log.append_as_leader(singleton_records(b"test", timestamp=1), leader_epoch=0)
    assert log.delete_segments_before(7) == 1
    assert [s.base_offset for s in log.log_segments()] == [5, 10]
    assert log.log_start_offset == 7
    with pytest.raises(KafkaLogError) as raised:
        log.read(6, 100)
    assert raised.value.category is Category.OFFSET_OUT_OF_RANGE
    assert offsets_of(log.read(7, 10_000))[0] == 7


@pytest.mark.req("RET-8", "RET-10")
def test_should_delete_size_based_segments(tmp_path, clock):
    size = len(singleton_records(b"test"))
    log = create_log(tmp_path, clock, segment_bytes=5 * size, retention_bytes=10 * size)
    for _ in range(15):
        log.append_as_leader(singleton_records(b"test"), leader_epoch=0)
    log.delete_old_segments()
    assert log.number_of_segments == 2


@pytest.mark.req("RET-8", "RET-10")
def test_should_not_delete_size_based_segments_when_under_retention_size(tmp_path, clock):
    size = len(singleton_records(b"test"))
    log = create_log(tmp_path, clock, segment_bytes=5 * size, retention_bytes=15 * size)
    for _ in range(15):
        log.append_as_leader(singleton_records(b"test"), leader_epoch=0)
    log.delete_old_segments()
    assert log.number_of_segments == 3


@pytest.mark.req("RET-7", "RET-9", "RET-10")
def test_should_delete_time_based_segments_ready_to_be_deleted(tmp_path, clock):
    size = len(singleton_records(b"test", timestamp=10))
    log = create_log(tmp_path, clock, segment_bytes=5 * size, retention_ms=10000)
    for _ in range(15):
        log.append_as_leader(singleton_records(b"test", timestamp=10), leader_epoch=0)
    log.delete_old_segments()
    assert log.number_of_segments == 1


@pytest.mark.req("RET-7", "RET-9", "RET-10")
def test_should_not_delete_time_based_segments_when_none_ready_to_be_deleted(tmp_path, clock):
    now = clock.milliseconds()
    size = len(singleton_records(b"test", timestamp=now))
    log = create_log(tmp_path, clock, segment_bytes=5 * size, retention_ms=10_000_000)
    for _ in range(15):
        log.append_as_leader(singleton_records(b"test", timestamp=now), leader_epoch=0)
    log.delete_old_segments()
    assert log.number_of_segments == 3


@pytest.mark.req("RET-7", "RET-9")
def test_time_retention_falls_back_to_the_log_file_mtime(tmp_path, clock):
    """Without record timestamps a segment's largest timestamp is its .log mtime, which the
    reference keeps on the injected clock."""
    size = len(singleton_records(b"test"))
    log = create_log(tmp_path, clock, segment_bytes=5 * size, retention_ms=1000)
    for _ in range(10):
        log.append_as_leader(singleton_records(b"test"), leader_epoch=0)
    assert log.log_segments()[0].largest_timestamp() == clock.milliseconds()
    log.delete_old_segments()
    assert log.number_of_segments == 2
    clock.sleep(1001)
    log.delete_old_segments()
    assert log.number_of_segments == 1 and log.log_start_offset == 10


def test_should_delete_start_offset_breached_segments_when_policy_does_not_include_delete(
    tmp_path, clock
):
    """shouldDeleteStartOffsetBreachedSegmentsWhenPolicyDoesNotIncludeDelete, the LSO pass."""
    size = len(singleton_records(b"test", key=b"test", timestamp=10))
    log = create_log(tmp_path, clock, segment_bytes=5 * size)
    for _ in range(15):
        log.append_as_leader(singleton_records(b"test", key=b"test", timestamp=10), 0)
    assert log.number_of_segments == 3
    log.maybe_increment_log_start_offset(5)
    log.delete_segments_before(5)
    assert log.number_of_segments == 2
    segments = log.log_segments()
    assert segments[0].base_offset <= log.log_start_offset
    assert all(s.base_offset > log.log_start_offset for s in segments[1:])


@pytest.mark.parametrize("messages", [0, 1, 25])
@pytest.mark.req("RET-11", "RET-15")
def test_that_garbage_collecting_segments_doesnt_change_offset(tmp_path, clock, messages):
    log = create_log(tmp_path, clock, segment_bytes=100, retention_ms=0)
    for i in range(messages):
        log.append_as_leader(singleton_records(str(i).encode(), clock.milliseconds() - 10), 0)
    assert log.log_end_offset == messages
    log.delete_old_segments()
    assert log.log_end_offset == messages
    assert log.number_of_segments == 1
    assert log.delete_old_segments() == 0
    assert log.log_end_offset == messages
    info = log.append_as_leader(singleton_records(b"hello", clock.milliseconds()), 0)
    assert info.first_offset == messages


@pytest.mark.req("LEPOCH-7", "LEPOCH-8", "RET-12")
def test_should_truncate_leader_epochs_when_deleting_segments(tmp_path, clock):
    size = len(singleton_records(b"test"))
    log = create_log(tmp_path, clock, segment_bytes=5 * size, retention_bytes=10 * size)
    for _ in range(15):
        log.append_as_leader(singleton_records(b"test"), leader_epoch=0)
    cache = log.leader_epoch_cache
    for epoch, start in ((0, 0), (1, 5), (2, 10)):
        cache.assign(epoch, start)
    log.delete_old_segments()
    assert cache.epoch_entries() == [EpochEntry(1, 5), EpochEntry(2, 10)]


@pytest.mark.req("CKPT-B-4", "LEPOCH-7", "LEPOCH-8", "RET-12")
def test_should_update_offset_for_leader_epochs_when_deleting_segments(tmp_path, clock):
    size = len(singleton_records(b"test"))
    log = create_log(tmp_path, clock, segment_bytes=5 * size, retention_bytes=10 * size)
    for _ in range(15):
        log.append_as_leader(singleton_records(b"test"), leader_epoch=0)
    cache = log.leader_epoch_cache
    for epoch, start in ((0, 0), (1, 7), (2, 10)):
        cache.assign(epoch, start)
    log.delete_old_segments()
    assert cache.epoch_entries() == [EpochEntry(0, 5), EpochEntry(1, 7), EpochEntry(2, 10)]
    assert (log.dir / "leader-epoch-checkpoint").read_text() == "0\n3\n0 5\n1 7\n2 10\n"


@pytest.mark.req("RET-1", "RET-2")
def test_cannot_increment_log_start_offset_past_high_watermark(tmp_path, clock):
    """Single replica: the high watermark is the LEO."""
    log = create_log(tmp_path, clock, segment_bytes=512)
    for i in range(100):
        log.append_as_leader(singleton_records(f"test{i}".encode()), leader_epoch=0)
    with pytest.raises(KafkaLogError) as raised:
        log.maybe_increment_log_start_offset(101)
    assert raised.value.category is Category.OFFSET_OUT_OF_RANGE
    assert log.maybe_increment_log_start_offset(100) is True
    assert log.maybe_increment_log_start_offset(50) is False


@pytest.mark.req("RET-5")
def test_deletable_segments_filter(tmp_path, clock):
    log = create_log(tmp_path, clock, segment_bytes=1024 * 1024)
    for _ in range(9):
        log.append_as_leader(batch(0, "a", timestamp=clock.milliseconds()), leader_epoch=0)
        log.roll()
    assert log.number_of_segments == 10
    non_active = log.segments.non_active_log_segments_from(0)
    assert log.deletable_segments(lambda s, _: s.base_offset <= 5) == non_active[:6]
    assert log.deletable_segments(lambda s, _: True) == non_active  # not the empty active one
    log.append_as_leader(batch(0, "a", timestamp=clock.milliseconds()), leader_epoch=0)
    assert log.deletable_segments(lambda s, _: True) == log.log_segments()


@pytest.mark.req("RET-5")
def test_deletable_segments_iteration(tmp_path, clock):
    log = create_log(tmp_path, clock, segment_bytes=1024 * 1024)
    for _ in range(9):
        log.append_as_leader(batch(0, "a", timestamp=clock.milliseconds()), leader_epoch=0)
        log.roll()
    seen = []

    def predicate(segment, next_segment):
        seen.append(segment.base_offset)
        assert log.segments.floor_segment(segment.base_offset) is segment
        if segment.base_offset == log.log_end_offset:
            assert next_segment is None
        else:
            assert next_segment is log.segments.higher_segment(segment.base_offset)
            assert next_segment.base_offset == segment.base_offset + 1
        return True

    assert log.deletable_segments(predicate) == log.segments.non_active_log_segments_from(0)
    assert seen == list(range(10))


@pytest.mark.req("CKPT-B-6", "LOAD-18", "LOAD-20")
def test_log_reinitialize_after_manual_delete(tmp_path, clock):
    """An empty partition directory with a log-start-offset checkpoint of 500."""
    (tmp_path / "log-start-offset-checkpoint").write_text("0\n1\ntopic 0 500\n")
    log = create_log(tmp_path, clock)
    assert (log.log_start_offset, log.log_end_offset) == (500, 500)
    assert [s.base_offset for s in log.log_segments()] == [500]


@pytest.mark.req("LOAD-11", "LOAD-24")
def test_load_empty_log(tmp_path, clock):
    dir = tmp_path / "topic-0"
    dir.mkdir()
    (dir / "00000000000000000000.log").touch()
    (dir / "00000000000000000000.index").touch()
    log = Log.open(dir, clock=clock)
    log.append_as_leader(singleton_records(b"test", clock.milliseconds()), leader_epoch=0)
    assert log.log_end_offset == 1


@pytest.mark.req("CKPT-B-6", "CKPT-B-7")
def test_checkpoint_log_start_offset_for_normal_topic(tmp_path, clock):
    """log-start-offset-checkpoint holds the log only while its start is above its first
    segment's base."""
    log = create_log(tmp_path, clock)
    for _ in range(50):
        info = log.append_as_leader(singleton_records(b"test"), leader_epoch=0)
        if info.last_offset and info.last_offset % 10 == 0:
            log.roll()
    assert log.number_of_segments == 5
    checkpoint = tmp_path / "log-start-offset-checkpoint"
    log.maybe_increment_log_start_offset(31)
    assert checkpoint.read_text() == "0\n1\ntopic 0 31\n"
    log.delete_old_segments()
    assert log.number_of_segments == 2 and log.log_start_offset == 31
    assert checkpoint.read_text() == "0\n0\n"


@pytest.mark.req("CKPT-B-9", "TRUNC-10", "TRUNC-15")
def test_truncation_writes_the_recovery_point_checkpoint(tmp_path, clock):
    """LogManager.truncateTo and truncateFullyAndStartAt checkpoint the recovery points at
    once (LogManager.scala:767-769, 803): the file never keeps a value above the lowered
    recovery point, which would make a crash skip unflushed segments."""
    checkpoint = tmp_path / "recovery-point-offset-checkpoint"
    log = create_log(tmp_path, clock, segment_bytes=200)
    for _ in range(6):
        log.append_as_leader(singleton_records(b"test"), leader_epoch=0)
    log.flush()
    assert checkpoint.read_text() == "0\n1\ntopic 0 6\n"
    log.truncate_to(3)
    assert log.recovery_point == 3 and checkpoint.read_text() == "0\n1\ntopic 0 3\n"
    log.truncate_fully_and_start_at(1)
    assert log.recovery_point == 1 and checkpoint.read_text() == "0\n1\ntopic 0 1\n"
    log.close()


@pytest.mark.req("CKPT-B-5", "CKPT-B-6", "FLUSH-10")
def test_checkpoints_round_trip_through_close_and_reopen(tmp_path, clock):
    """testCheckpointRecoveryPoints: close writes the recovery point (= LEO) and keeps other
    partitions' lines; a reopen reads them back."""
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\nother 3 42\n")
    log = create_log(tmp_path, clock, segment_bytes=200)
    for _ in range(10):
        log.append_as_leader(singleton_records(b"test"), leader_epoch=0)
    log.delete_segments_before(5)  # two records per segment: 0 and 2 go, 4 holds offset 5
    log.close()
    recovery = (tmp_path / "recovery-point-offset-checkpoint").read_text()
    assert recovery == "0\n2\nother 3 42\ntopic 0 10\n"
    assert (tmp_path / "log-start-offset-checkpoint").read_text() == "0\n1\ntopic 0 5\n"
    reopened = create_log(tmp_path, clock, segment_bytes=200)
    assert (reopened.log_start_offset, reopened.log_end_offset, reopened.recovery_point) == (
        5,
        10,
        10,
    )
    assert [s.base_offset for s in reopened.log_segments()] == [4, 6, 8]


@pytest.mark.req("CKPT-B-8")
def test_log_recovers_topic_id(tmp_path, clock):
    dir = tmp_path / "topic-0"
    log = Log.open(dir, LogConfig(), clock, topic_id=TOPIC_ID)
    assert (dir / "partition.metadata").read_bytes() == f"version: 0\ntopic_id: {TOPIC_ID}".encode()
    log.close()
    reopened = Log.open(dir, LogConfig(), clock)
    assert reopened.topic_id == TOPIC_ID


@pytest.mark.req("CKPT-B-8")
def test_log_fails_when_inconsistent_topic_id_set(tmp_path, clock):
    dir = tmp_path / "topic-0"
    Log.open(dir, LogConfig(), clock, topic_id=TOPIC_ID).close()
    with pytest.raises(KafkaLogError) as raised:
        Log.open(dir, LogConfig(), clock, topic_id="AAAAAAAAAAAAAAAAAAAAAg")
    assert raised.value.category is Category.INCONSISTENT_TOPIC_ID


@pytest.mark.req("MODEL-12", "FLUSH-10")
def test_closed_log_refuses_operations(tmp_path, clock):
    log = create_log(tmp_path, clock)
    log.close()
    for operation in (
        lambda: log.append_as_leader(batch(0, "a"), 0),
        lambda: log.read(0, 10),
        lambda: log.truncate_to(0),
        lambda: log.flush(),
    ):
        with pytest.raises(KafkaLogError) as raised:
            operation()
        assert raised.value.category is Category.LOG_CLOSED


@pytest.mark.req("APPEND-26", "FLUSH-8", "FLUSH-9", "INDEX-4")
def test_close_trims_and_writes_final_time_index_entry(tmp_path, clock):
    """§4.13: a closed log's active segment has trimmed indexes ending with its max timestamp;
    a preallocated .log is cut to its data."""
    log = create_log(tmp_path, clock, preallocate=True, segment_bytes=1 << 20)
    for ts in (100, 300, 200):
        log.append_as_leader(singleton_records(b"x", timestamp=ts), leader_epoch=0)
    data_size = log.size
    assert (log.dir / "00000000000000000000.log").stat().st_size == 1 << 20
    log.close()
    assert (log.dir / "00000000000000000000.log").stat().st_size == data_size
    assert (log.dir / "00000000000000000000.index").stat().st_size == 0
    time_index = (log.dir / "00000000000000000000.timeindex").read_bytes()
    assert time_index == (300).to_bytes(8, "big") + (1).to_bytes(4, "big")


@pytest.mark.req("MODEL-12")
def test_append_to_or_read_from_log_in_failed_log_dir(tmp_path, clock):
    """An offline directory (close_handlers): every later operation is log_closed."""
    log = create_log(tmp_path, clock)
    log.append_as_leader(batch(0, "a"), leader_epoch=0)
    assert offsets_of(log.read(0, 4096)) == [0]
    log.close_handlers()
    for operation in (lambda: log.append_as_leader(batch(0, "b"), 0), lambda: log.read(0, 4096)):
        with pytest.raises(KafkaLogError) as raised:
            operation()
        assert raised.value.category is Category.LOG_CLOSED
