"""UnifiedLogTest, restated: appends and rolls (catalogue 6.1 #1-4, #8, #11-14, #17, #20;
6.2 #41-42; 6.6 #122-124)."""

from __future__ import annotations

import pytest

from reference_impl.errors import Category, KafkaLogError
from reference_impl.log.config import LogConfig
from reference_impl.log.unified_log import Log
from reference_impl.records import (
    Compression,
    SimpleRecord,
    build_legacy_message_set,
    build_record_batch,
)
from reference_impl.records.checksums import crc32c
from reference_impl.records.record import TimestampType

from .support import batch, create_log, offsets_of, singleton_records, values_of

INT32_MAX = 2**31 - 1


def category(raised) -> Category:
    return raised.value.category


@pytest.mark.req("APPEND-16", "ROLL-11")
def test_append_info_first_offset(tmp_path, clock):
    log = create_log(tmp_path, clock, segment_bytes=1024 * 1024)
    records = lambda: batch(0, "a", "b", "c", timestamp=clock.milliseconds())  # noqa: E731
    assert log.append_as_leader(records(), leader_epoch=0).first_offset == 0
    assert log.append_as_leader(records(), leader_epoch=0).first_offset == 3
    log.roll()
    assert log.append_as_leader(records(), leader_epoch=0).first_offset == 6


@pytest.mark.req("APPEND-2", "MODEL-5", "ROLL-3", "ROLL-4", "ROLL-8", "ROLL-9")
def test_time_based_log_roll_during_append(tmp_path, clock):
    """No time roll of an empty segment; wall clock when the first batch has no timestamp;
    record time otherwise; an empty set never rolls."""
    segment_ms = 1 * 60 * 60
    log = create_log(tmp_path, clock, segment_ms=segment_ms)
    records = lambda ts=-1: singleton_records(b"test", timestamp=ts)  # noqa: E731
    assert log.number_of_segments == 1
    clock.sleep(segment_ms + 1)
    log.append_as_leader(records(), leader_epoch=0)
    assert log.number_of_segments == 1, "no roll that would leave an empty segment"
    log.append_as_leader(records(), leader_epoch=0)
    assert log.number_of_segments == 2, "rolls: time has expired (wall clock)"
    for expected in (3, 4):
        clock.sleep(segment_ms + 1)
        log.append_as_leader(records(), leader_epoch=0)
        assert log.number_of_segments == expected
    timestamp = clock.milliseconds() + segment_ms + 1
    log.append_as_leader(records(timestamp), leader_epoch=0)
    assert log.number_of_segments == 4, "the first batch has no timestamp: wall clock rules"
    clock.sleep(segment_ms + 1)
    log.append_as_leader(records(timestamp), leader_epoch=0)
    assert log.number_of_segments == 5
    clock.sleep(segment_ms + 1)
    log.append_as_leader(records(timestamp), leader_epoch=0)
    assert log.number_of_segments == 5, "record time: the first batch's timestamp rules"
    log.append_as_leader(records(clock.milliseconds()), leader_epoch=0)
    assert log.number_of_segments == 6, "a record timestamp past the segment's time limit"
    clock.sleep(segment_ms + 1)
    info = log.append_as_leader(b"", leader_epoch=0)
    assert log.number_of_segments == 6, "an empty set never rolls"
    assert info.valid_bytes == 0


@pytest.mark.req("MODEL-9", "ROLL-3")
def test_time_based_log_roll_jitter(tmp_path, clock):
    """The jitter is fixed (roll_jitter_ms) rather than drawn at random per segment."""
    segment_ms, jitter = 1 * 60 * 60, 20 * 60
    log = create_log(tmp_path, clock, segment_ms=segment_ms, roll_jitter_ms=jitter)
    log.append_as_leader(singleton_records(b"test", clock.milliseconds()), leader_epoch=0)
    clock.sleep(segment_ms - jitter)
    log.append_as_leader(singleton_records(b"test", clock.milliseconds()), leader_epoch=0)
    assert log.number_of_segments == 1, "exactly segment.ms - jitter does not roll"
    clock.sleep(1)
    log.append_as_leader(singleton_records(b"test", clock.milliseconds()), leader_epoch=0)
    assert log.number_of_segments == 2, "past segment.ms - jitter rolls"


@pytest.mark.req("ROLL-1", "ROLL-2")
def test_size_based_log_roll(tmp_path, clock):
    set_size = len(singleton_records(b"test", clock.milliseconds()))
    log = create_log(tmp_path, clock, segment_bytes=10 * (set_size - 1))
    for _ in range(11):
        log.append_as_leader(singleton_records(b"test", clock.milliseconds()), leader_epoch=0)
    assert log.number_of_segments == 2


@pytest.mark.req("ROLL-6", "ROLL-11", "ROLL-12", "ROLL-13")
def test_roll_segment_that_already_exists(tmp_path, clock):
    log = create_log(tmp_path, clock, segment_ms=1 * 60 * 60)
    log.roll(0)  # an empty active segment is recreated at the same base
    assert log.number_of_segments == 1
    log.append_as_follower(batch(0, "v1", key=b"k1", timestamp=clock.milliseconds(), epoch=0))
    assert log.number_of_segments == 1 and log.active_segment.base_offset == 0
    log.append_as_follower(batch(1, "v2", key=b"k2", timestamp=clock.milliseconds() + 10, epoch=0))
    assert log.log_end_offset == 2
    assert log.read(0, 1).fetch_offset_metadata.message_offset == 0
    assert offsets_of(log.read(1, 100)) == [1]
    log.roll()
    assert log.active_segment.base_offset == 2 and log.number_of_segments == 2
    log.active_segment.offset_index.resize(0)  # an index with no slot makes the segment "full"
    log.append_as_follower(batch(2, "v3", key=b"k3", timestamp=clock.milliseconds() + 12, epoch=0))
    assert log.active_segment.offset_index.max_entries > 1
    assert offsets_of(log.read(2, 100)) == [2]
    assert log.number_of_segments == 2
    assert (log.dir / "00000000000000000002.log.deleted").exists()


@pytest.mark.req("MODEL-12")
def test_log_roll_after_log_handler_closed(tmp_path, clock):
    log = create_log(tmp_path, clock)
    log.close_handlers()
    with pytest.raises(KafkaLogError) as raised:
        log.roll(1)
    assert category(raised) is Category.LOG_CLOSED


@pytest.mark.req("FLUSH-5", "FLUSH-7", "ROLL-20")
def test_flushing_empty_active_segments(tmp_path, clock):
    """After a roll only the old segment has an .index (lazy); flush(including) creates it."""
    log = create_log(tmp_path, clock)
    log.append_as_leader(singleton_records(b"Test", clock.milliseconds()), leader_epoch=0)
    log.roll()
    assert len(list(log.dir.glob("*.log"))) == 2
    assert len(list(log.dir.glob("*.index"))) == 1
    assert log.active_segment.size == 0
    log.flush(including_offset=True)
    assert len(list(log.dir.glob("*.index"))) == 2


@pytest.mark.req("FLUSH-4", "MODEL-6", "READ-8", "READ-9", "ROLL-2")
def test_log_rolls(tmp_path, clock):
    """100 single-record appends with segment.bytes 100, read back in order; the roll's
    flush puts the recovery point at or past the active segment's base."""
    log = create_log(tmp_path, clock, segment_bytes=100)
    values = [str(i).encode() for i in range(100)]
    for value in values:
        log.append_as_leader(singleton_records(value, clock.milliseconds()), leader_epoch=0)
    log.flush()
    offset = 0
    for value in values:
        head = log.read(offset, 1024 * 1024).batches()[0]
        assert head.last_offset == offset
        record = head.records()[0]
        assert (record.key, record.value, record.timestamp) == (None, value, clock.milliseconds())
        offset = head.last_offset + 1
    assert log.read(100, 1024 * 1024).data() == b""
    assert log.recovery_point >= log.active_segment.base_offset


@pytest.mark.req("APPEND-21")
def test_message_set_size_check(tmp_path, clock):
    """A set larger than segment.bytes is a RecordBatchTooLargeException; nothing written."""
    message_set = batch(0, "You", "bethe")
    log = create_log(tmp_path, clock, segment_bytes=len(message_set) - 1)
    with pytest.raises(KafkaLogError) as raised:
        log.append_as_leader(message_set, leader_epoch=0)
    assert category(raised) is Category.RECORD_BATCH_TOO_LARGE
    assert log.log_end_offset == 0 and log.size == 0


@pytest.mark.req("APPEND-1", "APPEND-21", "MODEL-11")
def test_message_set_size_check_leaves_the_epoch_cache_alone(tmp_path, clock):
    """The segment-size check comes before the epoch cache update: of the two answers
    APPEND-27 allows, the reference takes the one that changes nothing (Kafka updates the
    cache first, so a refused set leaves an epoch entry at the LEO behind)."""
    message_set = batch(0, "You", "bethe")
    log = create_log(tmp_path, clock, segment_bytes=len(message_set) - 1)
    with pytest.raises(KafkaLogError):
        log.append_as_leader(message_set, leader_epoch=3)
    assert log.latest_epoch is None
    assert (log.dir / "leader-epoch-checkpoint").read_bytes() == b""


@pytest.mark.req("APPEND-20", "LEPOCH-2", "MODEL-11")
def test_negative_leader_epoch_is_refused_before_any_change(tmp_path, clock):
    log = create_log(tmp_path, clock)
    log.append_as_follower(batch(0, "a", epoch=1))
    with pytest.raises(KafkaLogError) as raised:
        log.append_as_follower(batch(1, "b", epoch=2) + batch(2, "c"))  # the second has -1
    assert category(raised) is Category.INVALID_ARGUMENT
    assert log.latest_epoch == 1 and log.log_end_offset == 1
    with pytest.raises(KafkaLogError) as raised:
        log.append_as_leader(batch(0, "d"), leader_epoch=-1)
    assert category(raised) is Category.INVALID_ARGUMENT


@pytest.mark.req("APPEND-6")
def test_message_size_check(tmp_path, clock):
    first = batch(0, "You", "bethe")
    second = batch(0, "change (I need more bytes)... blah blah blah.", "More padding boo hoo")
    log = create_log(tmp_path, clock, max_message_bytes=len(second) - 1)
    log.append_as_leader(first, leader_epoch=0)
    with pytest.raises(KafkaLogError) as raised:
        log.append_as_leader(second, leader_epoch=0)
    assert category(raised) is Category.RECORD_TOO_LARGE
    assert log.log_end_offset == 2


@pytest.mark.req("APPEND-6")
def test_message_size_check_in_append_as_follower(tmp_path, clock):
    """max.message.bytes is a leader check only."""
    first = batch(0, "You", "bethe", epoch=0)
    second = batch(
        5, "change (I need more bytes)... blah blah blah.", "More padding boo hoo", epoch=0
    )
    log = create_log(tmp_path, clock, max_message_bytes=len(second) - 1)
    log.append_as_follower(first)
    log.append_as_follower(second)
    assert log.log_end_offset == 7


@pytest.mark.req("APPEND-22")
def test_append_message_with_null_payload(tmp_path, clock):
    log = create_log(tmp_path, clock)
    log.append_as_leader(build_record_batch([SimpleRecord(value=None)]), leader_epoch=0)
    record = log.read(0, 4096).batches()[0].records()[0]
    assert record.offset == 0 and record.value is None


@pytest.mark.req("APPEND-9")
def test_append_with_out_of_order_offsets_throws_exception(tmp_path, clock):
    log = create_log(tmp_path, clock)
    data = b"".join(
        batch(offset, "value", key=b"key", epoch=0, timestamp_type=TimestampType.LOG_APPEND_TIME,
              log_append_time=clock.milliseconds(), producer_id=1, producer_epoch=0, base_sequence=0)
        for offset in (0, 1, 3, 2, 4)
    )  # fmt: skip
    with pytest.raises(KafkaLogError) as raised:
        log.append_as_follower(data)
    assert category(raised) is Category.OFFSETS_OUT_OF_ORDER
    assert log.log_end_offset == 0


def legacy_or_v2(magic: int, compression: Compression, offset: int, *values: tuple[bytes, bytes]):
    records = [SimpleRecord(value=v, key=k) for k, v in values]
    if magic == 2:
        return build_record_batch(records, base_offset=offset, compression=compression)
    return build_legacy_message_set(
        records, magic=magic, base_offset=offset, compression=compression
    )


@pytest.mark.req("APPEND-18")
@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("compression", [Compression.NONE, Compression.LZ4])
def test_append_below_expected_offset_throws_exception(tmp_path, clock, magic, compression):
    log = create_log(tmp_path, clock)
    for value in (b"0", b"1"):
        log.append_as_leader(batch(0, value), leader_epoch=0)
    invalid = legacy_or_v2(magic, compression, 0, (None, b"1"))
    with pytest.raises(KafkaLogError) as raised:
        log.append_as_follower(invalid)
    assert category(raised) is Category.UNEXPECTED_APPEND_OFFSET


@pytest.mark.req("APPEND-18")
@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("compression", [Compression.NONE, Compression.LZ4])
def test_append_empty_log_below_log_start_offset_throws_exception(
    tmp_path, clock, magic, compression
):
    dir = tmp_path / "topic-0"
    dir.mkdir()
    (dir / "00000000000000000007.log").touch()  # createEmptyLogs(logDir, 7)
    (dir / "00000000000000000007.index").touch()
    log = Log.open(dir, clock=clock)
    assert (log.log_start_offset, log.log_end_offset) == (7, 7)
    data = legacy_or_v2(magic, compression, 4, (b"k1", b"v1"), (b"k2", b"v2"), (b"k3", b"v3"))
    with pytest.raises(KafkaLogError) as raised:
        log.append_as_follower(data)
    assert category(raised) is Category.UNEXPECTED_APPEND_OFFSET
    assert raised.value.offset == 4  # Kafka's UnexpectedAppendOffsetException.firstOffset
    assert "to 6" in raised.value.message  # ... and its lastOffset


@pytest.mark.req("APPEND-17")
def test_append_with_no_timestamp(tmp_path, clock):
    log = create_log(tmp_path, clock)
    log.append_as_leader(batch(0, "value", key=b"key", timestamp=-1), leader_epoch=0)
    assert log.log_end_offset == 1


@pytest.mark.req("APPEND-24", "INDEX-7", "INDEX-9")
def test_build_time_index_when_not_assigning_offsets(tmp_path, clock):
    """Follower appends with index.interval.bytes 1: one time entry per append but the first."""
    log = create_log(tmp_path, clock, segment_bytes=10000, index_interval_bytes=1)
    now = clock.milliseconds()
    for i in range(100):
        log.append_as_follower(batch(100 + i, str(i), timestamp=now + i, epoch=0))
    assert sum(s.time_index.entries for s in log.log_segments()) == 99
    assert log.active_segment.time_index.last_entry().timestamp == now + 99


@pytest.mark.req("INDEX-4", "INDEX-6", "INDEX-7", "ROLL-2")
def test_index_resizing_at_truncation(tmp_path, clock):
    set_size = len(singleton_records(b"test", clock.milliseconds()))
    log = create_log(
        tmp_path, clock, segment_bytes=10 * set_size, index_interval_bytes=set_size - 1
    )
    for i in range(1, 11):
        log.append_as_leader(singleton_records(b"test", clock.milliseconds() + i), leader_epoch=0)
    assert log.number_of_segments == 1
    clock.sleep(10)
    for i in range(1, 11):
        log.append_as_leader(singleton_records(b"test", clock.milliseconds() + i), leader_epoch=0)
    assert log.number_of_segments == 2
    first = log.log_segments()[0]
    assert first.offset_index.max_entries == 9  # trimmed at the roll
    assert first.time_index.max_entries == 9
    log.truncate_to(0)
    assert log.number_of_segments == 1
    first = log.log_segments()[0]
    assert first.offset_index.max_entries == log.config.segment_index_bytes // 8
    assert first.time_index.max_entries == log.config.segment_index_bytes // 12
    clock.sleep(10)
    for i in range(1, 11):
        log.append_as_leader(singleton_records(b"test", clock.milliseconds() + i), leader_epoch=0)
    assert log.number_of_segments == 1


def over_compacted_batch(offset: int, value: str, magic: int = 2) -> bytes:
    if magic == 2:
        return batch(offset, value, epoch=0)
    return build_legacy_message_set(
        [SimpleRecord(value=value.encode())], magic=magic, base_offset=offset
    )


@pytest.mark.req("INDEX-13", "ROLL-7", "ROLL-11")
def test_over_compacted_log_roll(tmp_path, clock):
    """testOverCompactedLogRecovery (the roll half): a v2 follower jumping from offset 0 to
    past Int.MAX rolls to a segment at the batch's first offset."""
    log = create_log(tmp_path, clock)
    log.append_as_follower(over_compacted_batch(0, "v1"))
    log.append_as_follower(over_compacted_batch(INT32_MAX + 2, "v3"))
    log.append_as_follower(over_compacted_batch(INT32_MAX + 3, "v4"))
    assert [s.base_offset for s in log.log_segments()] == [0, INT32_MAX + 2]
    assert all(s.offset_index.last_offset >= 0 for s in log.log_segments())


@pytest.mark.req("INDEX-13", "ROLL-7", "ROLL-11")
def test_over_compacted_log_roll_multi_record(tmp_path, clock):
    """testOverCompactedLogRecoveryMultiRecord (the roll half): a v2 batch of two records
    jumping past Int.MAX rolls to a segment at the batch's base offset."""
    log = create_log(tmp_path, clock)
    log.append_as_follower(batch(0, "v1", epoch=0))
    log.append_as_follower(batch(INT32_MAX + 2, "v3", "v4", epoch=0))
    assert [s.base_offset for s in log.log_segments()] == [0, INT32_MAX + 2]
    assert offsets_of(log.read(1, 10_000)) == [INT32_MAX + 2, INT32_MAX + 3]


@pytest.mark.req("INDEX-13", "ROLL-7", "ROLL-11")
def test_over_compacted_log_roll_multi_record_v1(tmp_path, clock):
    """testOverCompactedLogRecoveryMultiRecordV1 (the roll half): a legacy set's first
    offset is unknown, so the new segment starts at lastOffset - Int.MAX, raised to the LEO."""
    log = create_log(tmp_path, clock)
    log.append_as_follower(over_compacted_batch(0, "v1", magic=1))
    legacy_set = build_legacy_message_set(
        [SimpleRecord(value=b"v3"), SimpleRecord(value=b"v4")], magic=1, base_offset=INT32_MAX + 2
    )  # offsets MAX+2, MAX+3
    log.append_as_follower(legacy_set)
    log.append_as_follower(over_compacted_batch(INT32_MAX + 4, "v5", magic=1))
    # the set ending at MAX+3 rolls to max(MAX+3 - MAX, LEO 1) = 3; the next one overflows
    # base 3 and rolls to max(MAX+4 - MAX, LEO MAX+4) = MAX+4
    assert [s.base_offset for s in log.log_segments()] == [0, 3, INT32_MAX + 4]
    assert offsets_of(log.read(3, 10_000)) == [INT32_MAX + 2, INT32_MAX + 3]


@pytest.mark.req("APPEND-16", "APPEND-17", "CKPT-B-2", "LEPOCH-5", "MODEL-5")
def test_leader_append_assigns_offsets_epoch_and_log_append_time(tmp_path, clock):
    """LogAppendTime: the broker's time becomes maxTimestamp and the CRC is rewritten."""
    log = create_log(tmp_path, clock, message_timestamp_type=TimestampType.LOG_APPEND_TIME)
    log.append_as_leader(batch(0, "a"), leader_epoch=0)
    info = log.append_as_leader(batch(0, "b", "c", timestamp=5), leader_epoch=7)
    assert (info.first_offset, info.last_offset) == (1, 2)
    assert info.log_append_time == clock.milliseconds() == info.max_timestamp
    stored = log.read(1, 10_000).batches()[0]
    stored.ensure_valid()
    assert (log.dir / "leader-epoch-checkpoint").read_text() == "0\n2\n0 0\n7 1\n"
    assert stored.base_offset == 1 and stored.partition_leader_epoch == 7
    assert stored.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert [r.timestamp for r in stored.records()] == [clock.milliseconds()] * 2
    assert values_of(log.read(0, 10_000)) == [b"a", b"b", b"c"]


@pytest.mark.req("APPEND-15")
def test_leader_append_refuses_producer_marked_log_append_time(tmp_path, clock):
    log = create_log(tmp_path, clock, message_timestamp_type=TimestampType.LOG_APPEND_TIME)
    marked = batch(0, "a", timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=5)
    with pytest.raises(KafkaLogError) as raised:
        log.append_as_leader(marked, leader_epoch=0)
    assert category(raised) is Category.INVALID_TIMESTAMP


@pytest.mark.req(
    "APPEND-5", "APPEND-10", "APPEND-11", "APPEND-12", "APPEND-13", "APPEND-14", "MODEL-11"
)
def test_leader_append_rejects_client_batch_rules(tmp_path, clock):
    log = create_log(tmp_path, clock)
    wrong_count = bytearray(batch(0, "a", "b"))
    wrong_count[57:61] = (3).to_bytes(4, "big")  # recordsCount 3, lastOffsetDelta 1
    bad_record = bytearray(batch(0, "a", "b"))
    bad_record[61] = 0x7F  # the first record's length varint now overruns the batch
    for raw in (wrong_count, bad_record):
        raw[17:21] = crc32c(bytes(raw[21:])).to_bytes(4, "big")
    cases = {
        "records count differs from the offset range": bytes(wrong_count),
        "a record that does not decode": bytes(bad_record),
        "nonzero base offset": batch(5, "a"),
        "two batches": batch(0, "a") + batch(0, "b"),
        "control batch": batch(0, "a", is_control=True),
        "producer id without sequence": batch(0, "a", producer_id=3, producer_epoch=0),
    }
    for name, data in cases.items():
        with pytest.raises(KafkaLogError) as raised:
            log.append_as_leader(data, leader_epoch=0)
        assert category(raised) is Category.INVALID_RECORD, name
    assert log.log_end_offset == 0


def test_leader_append_of_legacy_records_is_unsupported(tmp_path, clock):
    log = create_log(tmp_path, clock)
    with pytest.raises(KafkaLogError) as raised:
        log.append_as_leader(build_legacy_message_set([SimpleRecord(value=b"a")], magic=1), 0)
    assert category(raised) is Category.UNSUPPORTED_APPEND


@pytest.mark.req("APPEND-4", "APPEND-7", "APPEND-8", "MODEL-10")
def test_corrupt_batch_is_refused_before_any_write(tmp_path, clock):
    log = create_log(tmp_path, clock)
    data = bytearray(batch(0, "a", epoch=0))
    data[-1] ^= 0xFF  # inside the CRC's range
    bad_magic = bytearray(batch(0, "a", epoch=0))
    bad_magic[16] = 3
    short_size = batch(0, "a", epoch=0)[:8] + (13).to_bytes(4, "big") + bytes(10)
    bad_codec = bytearray(batch(0, "a", epoch=0))
    bad_codec[22] |= 0x05  # codec id 5, CRC fixed up below
    bad_codec[17:21] = crc32c(bytes(bad_codec[21:])).to_bytes(4, "big")
    for raw, expected in (
        (data, Category.CORRUPT_MESSAGE),
        (bad_magic, Category.CORRUPT_MESSAGE),
        (short_size, Category.CORRUPT_MESSAGE),
        (bad_codec, Category.INVALID_ARGUMENT),
    ):
        with pytest.raises(KafkaLogError) as raised:
            log.append_as_follower(bytes(raw))
        assert category(raised) is expected
    assert log.size == 0


@pytest.mark.req("APPEND-3")
def test_partial_trailing_batch_is_dropped(tmp_path, clock):
    """validBytes: a batch only partly present at the end of the set is not appended."""
    log = create_log(tmp_path, clock)
    whole = batch(0, "a", epoch=0)
    info = log.append_as_follower(whole + batch(1, "b", epoch=0)[:20])
    assert info.valid_bytes == len(whole)
    assert log.size == len(whole) and log.log_end_offset == 1


@pytest.mark.req("APPEND-18", "APPEND-19", "APPEND-22")
def test_follower_gap_allowed(tmp_path, clock):
    log = create_log(tmp_path, clock)
    first, second = batch(0, "a", epoch=0), batch(10, "b", epoch=0)
    log.append_as_follower(first)
    log.append_as_follower(second)
    assert log.log_end_offset == 11
    assert offsets_of(log.read(1, 10_000)) == [10]
    assert log.read(0, 10_000).data() == first + second  # written byte for byte


@pytest.mark.req("APPEND-20")
def test_follower_v2_batch_without_leader_epoch_is_refused(tmp_path, clock):
    """Kafka assigns each v2 batch's epoch to the epoch cache, which refuses -1."""
    log = create_log(tmp_path, clock)
    with pytest.raises(ValueError):
        log.append_as_follower(batch(0, "a"))
    assert log.size == 0


@pytest.mark.req("APPEND-25", "FLUSH-3")
def test_flush_messages_triggers_flush(tmp_path, clock):
    log = create_log(tmp_path, clock, flush_messages=3)
    for _ in range(2):
        log.append_as_leader(batch(0, "a"), leader_epoch=0)
    assert log.recovery_point == 0
    log.append_as_leader(batch(0, "a"), leader_epoch=0)
    assert log.recovery_point == 3


@pytest.mark.req("INDEX-1", "ROLL-5")
def test_offset_index_full_rolls(tmp_path, clock):
    """ROLL-5: 24 index bytes give 3 offset-index slots; without timestamps the time index
    stays empty, so the full offset index alone rolls the fifth append."""
    log = create_log(tmp_path, clock, segment_index_bytes=24, index_interval_bytes=0)
    for _ in range(4):
        log.append_as_leader(batch(0, "a"), leader_epoch=0)
    assert log.number_of_segments == 1 and log.active_segment.offset_index.is_full()
    log.append_as_leader(batch(0, "a"), leader_epoch=0)
    assert [s.base_offset for s in log.log_segments()] == [0, 4]


@pytest.mark.req("ROLL-16")
def test_roll_deletes_stale_files_of_the_new_base(tmp_path, clock):
    log = create_log(tmp_path, clock)
    log.append_as_leader(batch(0, "a"), leader_epoch=0)
    (log.dir / "00000000000000000001.log").write_bytes(b"stale")
    (log.dir / "00000000000000000001.txnindex").write_bytes(b"stale")
    log.roll()
    assert (log.dir / "00000000000000000001.log").read_bytes() == b""
    assert not (log.dir / "00000000000000000001.txnindex").exists()


@pytest.mark.req("INDEX-3", "INDEX-22")
def test_too_small_segment_index_bytes_fails_where_the_index_is_created(tmp_path, clock):
    """10 bytes hold an 8-byte offset entry but no 12-byte time entry: the open that creates
    the time index fails and, as Kafka's AbstractIndex does, leaves a 0-byte .timeindex
    beside the .log and the 8-byte .index made before it."""
    with pytest.raises(KafkaLogError) as raised:
        create_log(tmp_path, clock, segment_index_bytes=10)
    assert category(raised) is Category.INVALID_ARGUMENT
    sizes = {p.name: p.stat().st_size for p in (tmp_path / "topic-0").iterdir()}
    assert sizes == {
        "00000000000000000000.log": 0,
        "00000000000000000000.index": 8,
        "00000000000000000000.timeindex": 0,
        "leader-epoch-checkpoint": 0,
    }


@pytest.mark.req("CKPT-B-2", "LEPOCH-5")
def test_legacy_follower_batch_empties_the_epoch_cache(tmp_path, clock):
    log = create_log(tmp_path, clock)
    log.append_as_follower(batch(0, "a", epoch=4))
    assert log.latest_epoch == 4
    log.append_as_follower(
        build_legacy_message_set([SimpleRecord(value=b"b")], magic=1, base_offset=1)
    )
    assert log.leader_epoch_cache.epoch_entries() == []
    assert (log.dir / "leader-epoch-checkpoint").read_text() == "0\n0\n"


@pytest.mark.req("CKPT-B-1", "INDEX-2", "MODEL-2", "MODEL-13")
def test_new_log(tmp_path, clock):
    """A log created in an empty directory: one empty segment at 0 with its index files,
    an empty leader-epoch-checkpoint, every offset 0."""
    log = create_log(tmp_path, clock)
    assert sorted(p.name for p in log.dir.iterdir()) == [
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000000.timeindex",
        "leader-epoch-checkpoint",
    ]
    assert (log.dir / "leader-epoch-checkpoint").read_bytes() == b""
    state = log.state()
    assert (state.log_start_offset, state.log_end_offset, state.recovery_point) == (0, 0, 0)


@pytest.mark.req("MODEL-8")
def test_invalid_config_is_refused():
    for bad in (
        {"segment_bytes": 13},
        {"segment_ms": 0},
        {"roll_jitter_ms": -1},
        {"segment_ms": 100, "roll_jitter_ms": 100},
        {"index_interval_bytes": -1},
    ):
        with pytest.raises(ValueError):
            LogConfig(**bad)


@pytest.mark.req("FLUSH-1", "FLUSH-2")
def test_flush_fsyncs_before_moving_the_recovery_point(tmp_path, clock, monkeypatch):
    from reference_impl.log.file_records import FileRecords

    synced = []
    real = FileRecords.flush

    def spy(self):
        synced.append((self.file.name, log.recovery_point))
        real(self)

    monkeypatch.setattr(FileRecords, "flush", spy)
    log = create_log(tmp_path, clock)
    log.append_as_leader(batch(0, "a"), leader_epoch=0)
    assert synced == [] and log.recovery_point == 0
    log.flush()
    assert synced == [("00000000000000000000.log", 0)]  # fsynced while the point was still 0
    assert log.recovery_point == 1
