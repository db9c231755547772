"""LogSegmentTest, restated (catalogue 6.1 #9, #10, #19; 6.2 #43-45; 6.3 #48-53; 6.4 #68-70;
6.5 #84-87)."""

from __future__ import annotations

import pytest

from reference_impl.errors import Category, KafkaLogError
from reference_impl.formats.checkpoints import EpochEntry
from reference_impl.log.abstract_index import LazyIndex
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.fetch import LogOffsetMetadata
from reference_impl.log.file_records import FileRecords
from reference_impl.log.leader_epoch import LeaderEpochFileCache
from reference_impl.log.offset_index import OffsetIndex
from reference_impl.log.roll import RollParams
from reference_impl.log.segment import LogSegment
from reference_impl.log.time_index import TimeIndex
from reference_impl.log.transaction_index import TransactionIndex
from reference_impl.records import SimpleRecord, build_legacy_message_set

from .support import batch, create_segment, legacy_records, offsets_of, records_of

NO_TIMESTAMP = -1
INT32_MAX = 2**31 - 1


@pytest.fixture
def segments():
    opened: list[LogSegment] = []
    yield opened
    for seg in opened:
        if not seg.log._channel.closed:
            seg.close()


@pytest.fixture
def make(tmp_path, segments, clock):
    def make(offset: int, index_interval_bytes: int = 10, clock_: ManualClock | None = None):
        seg = create_segment(tmp_path, offset, index_interval_bytes, clock_ or clock)
        segments.append(seg)
        return seg

    return make


@pytest.mark.parametrize(
    ("base_offset", "largest_offset"),
    [
        (0, -(2**31)),
        (0, 2**31),
        (1, 0),
        (100, 10),
        (2**31, 0),
        (-(2**31), 0),
        (2**31, 2**32),
    ],
)
@pytest.mark.req("APPEND-23", "ROLL-7")
def test_append_for_log_segment_offset_overflow_exception(
    tmp_path, clock, base_offset, largest_offset
):
    # file names cannot hold a negative base offset: name the files by hand
    seg = LogSegment(
        FileRecords.open(tmp_path / "seg.log"),
        LazyIndex(tmp_path / "seg.index", lambda f: OffsetIndex(f, base_offset, 1000)),
        LazyIndex(tmp_path / "seg.timeindex", lambda f: TimeIndex(f, base_offset, 1500)),
        TransactionIndex(base_offset, tmp_path / "seg.txnindex"),
        base_offset,
        10,
        0,
        clock,
    )
    with pytest.raises(KafkaLogError) as raised:
        seg.append(largest_offset, legacy_records(0, "hello"))
    assert raised.value.category is Category.OFFSET_OVERFLOW
    assert seg.size == 0
    seg.close()


@pytest.mark.req("READ-8")
def test_read_on_empty_segment(make):
    assert make(40).read(40, 300) is None


@pytest.mark.req("READ-8", "READ-9")
def test_read_before_first_offset(make):
    seg = make(40)
    ms = legacy_records(50, "hello", "there", "little", "bee")
    seg.append(53, ms)
    assert seg.read(41, 300).data() == ms


@pytest.mark.req("READ-8")
def test_read_after_last(make):
    seg = make(40)
    seg.append(51, legacy_records(50, "hello", "there"))
    assert seg.read(52, 200) is None


@pytest.mark.req("READ-8", "READ-9")
def test_read_from_gap(make):
    seg = make(40)
    seg.append(51, legacy_records(50, "hello", "there"))
    ms2 = legacy_records(60, "alpha", "beta")
    seg.append(61, ms2)
    assert seg.read(55, 200).data() == ms2


@pytest.mark.parametrize("min_one_message", [True, False])
@pytest.mark.req("READ-11", "READ-12")
def test_read_when_no_max_position(make, min_one_message):
    seg = make(40)
    seg.append(51, legacy_records(50, "hello", "there"))
    # READ-11 (Kafka 4.0 on, KAFKA-17803): the found batch's base offset, not start_offset
    for start, found, position in ((48, 50, 0), (50, 50, 0), (51, 51, 39)):
        read = seg.read(start, 1, None, min_one_message)
        assert read.fetch_offset_metadata == LogOffsetMetadata(found, 40, position)
        assert read.data() == b""
    assert seg.read(52, 1, None, min_one_message) is None
    assert seg.read(53, 1, None, min_one_message) is None


@pytest.mark.req("INDEX-6", "TRUNC-5")
def test_truncate(make):
    """In a loop: append two messages, truncate the second off, the first stays readable."""
    seg = make(40)
    offset = 40
    for _ in range(30):
        ms1 = legacy_records(offset, "hello")
        seg.append(offset, ms1)
        ms2 = legacy_records(offset + 1, "hello")
        seg.append(offset + 1, ms2)
        assert seg.read(offset, 10000).data() == ms1 + ms2
        seg.truncate_to(offset + 1)
        assert seg.read(offset, 10000).data() == ms1
        offset += 1


@pytest.mark.req("INDEX-5", "INDEX-6", "ROLL-3", "ROLL-7", "TRUNC-8")
def test_truncate_empty_segment(tmp_path, make, clock):
    """A follower truncating to an empty segment resizes its trimmed indexes, so it is not
    rolled for a "full" index; no time roll while empty; the overflow condition rolls."""
    max_segment_ms = 300_000
    seg = make(0)
    _ = seg.time_index, seg.offset_index  # load the indexes before closing
    seg.close()
    assert seg.time_index.size_in_bytes() == 0 and seg.offset_index.size_in_bytes() == 0
    reopened = make(0)
    assert reopened.offset_index.is_full()  # a trimmed index reopens full
    clock.sleep(500)
    reopened.truncate_to(57)
    assert reopened.time_waited_for_roll(clock.milliseconds(), NO_TIMESTAMP) == 0
    assert not reopened.time_index.is_full()
    assert not reopened.offset_index.is_full()
    params = RollParams(max_segment_ms, INT32_MAX, NO_TIMESTAMP, 100, 1024, clock.milliseconds())
    assert not reopened.should_roll(params)
    clock.sleep(max_segment_ms + 1)
    assert reopened.time_waited_for_roll(clock.milliseconds(), NO_TIMESTAMP) == max_segment_ms + 1
    params = RollParams(max_segment_ms, INT32_MAX, NO_TIMESTAMP, 100, 1024, clock.milliseconds())
    assert not reopened.should_roll(params)
    params = RollParams(
        max_segment_ms, INT32_MAX, NO_TIMESTAMP, INT32_MAX + 200, 1024, clock.milliseconds()
    )
    assert reopened.should_roll(params)


@pytest.mark.req("INDEX-7", "TRUNC-9", "LOAD-24")
def test_reload_largest_timestamp_and_next_offset_after_truncation(make):
    num_messages = 30
    seg = make(40, 2 * len(legacy_records(0, "hello")) - 1)
    offset = 40
    for _ in range(num_messages):
        seg.append(offset, legacy_records(offset, "hello"))
        offset += 1
    assert seg.read_next_offset() == offset
    assert seg.time_index.entries == num_messages // 2 - 1
    seg.truncate_to(41)
    assert seg.time_index.entries == 0
    assert seg.largest_timestamp() == 400
    assert seg.read_next_offset() == 41


@pytest.mark.req("TRUNC-5", "TRUNC-8")
def test_truncate_full(make, clock):
    seg = make(40)
    untimed = [SimpleRecord(value=b"hello"), SimpleRecord(value=b"there")]
    seg.append(41, build_legacy_message_set(untimed, magic=0, base_offset=40))  # wall-clock roll
    clock.sleep(500)
    assert seg.time_waited_for_roll(clock.milliseconds(), NO_TIMESTAMP) == 500
    seg.truncate_to(0)
    assert seg.time_waited_for_roll(clock.milliseconds(), NO_TIMESTAMP) == 0  # created reset
    assert not seg.time_index.is_full() and not seg.offset_index.is_full()
    assert seg.read(0, 1024) is None
    seg.append(41, legacy_records(40, "hello", "there"))


@pytest.mark.req("READ-16")
def test_find_offset_by_timestamp(make):
    message_size = len(legacy_records(0, "msg00"))
    seg = make(40, message_size * 2 - 1)
    for i in range(40, 50):
        seg.append(i, legacy_records(i, f"msg{i}"))
    assert seg.largest_timestamp() == 490
    assert seg.find_offset_by_timestamp(420, 0).offset == 42  # indexed
    assert seg.find_offset_by_timestamp(421, 0).offset == 43
    assert seg.find_offset_by_timestamp(430, 0).offset == 43  # not indexed
    assert seg.find_offset_by_timestamp(431, 0).offset == 44
    assert seg.find_offset_by_timestamp(491, 0) is None  # past the last timestamp
    assert seg.find_offset_by_timestamp(401, 0).offset == 41  # before the first indexed one
    assert seg.find_offset_by_timestamp(399, 0).offset == 40  # before the first


@pytest.mark.req("LOAD-24")
def test_next_offset_calculation(make):
    seg = make(40)
    assert seg.read_next_offset() == 40
    seg.append(52, legacy_records(50, "hello", "there", "you"))
    assert seg.read_next_offset() == 53


@pytest.mark.req("RET-13", "ROLL-20")
def test_change_file_suffixes(make):
    seg = make(40)
    log_file, index_file, time_index_file = seg.log.file, seg.offset_index_file, seg.time_index_file
    assert not index_file.exists() and not time_index_file.exists()  # lazy
    seg.change_file_suffixes("", ".deleted")
    assert not seg.offset_index_file.exists() and not seg.time_index_file.exists()
    assert str(seg.log.file) == f"{log_file}.deleted"
    assert str(seg.offset_index_file) == f"{index_file}.deleted"
    assert str(seg.time_index_file) == f"{time_index_file}.deleted"
    assert seg.log.file.exists()
    _ = seg.offset_index
    assert seg.offset_index_file.exists()
    _ = seg.time_index
    assert seg.time_index_file.exists()


def write_nonsense(path, position: int, size: int) -> None:
    data = bytearray(path.read_bytes())
    for i in range(size):
        data[position + i] = (i * 37 + 11) % 256
    path.write_bytes(bytes(data))


@pytest.mark.req("INDEX-8", "RECOV-4")
def test_recovery_fixes_corrupt_index(make):
    seg = make(0)
    for i in range(100):
        seg.append(i, legacy_records(i, str(i)))
    index_file = seg.offset_index_file
    write_nonsense(index_file, 5, index_file.stat().st_size - 5)
    seg.recover()
    for i in range(100):
        read = seg.read(i, 1, seg.size, True)
        assert records_of(read)[0].offset == i


@pytest.mark.req("RECOV-7")
def test_recovery_rebuilds_epoch_cache(make, tmp_path):
    seg = make(0)
    cache = LeaderEpochFileCache(tmp_path / "leader-epoch-checkpoint")
    for offset, epoch in ((104, 0), (106, 1), (108, 1), (110, 2)):
        seg.append(offset + 1, batch(offset, "a", "b", epoch=epoch))
    seg.recover(cache)
    assert cache.epoch_entries() == [EpochEntry(0, 104), EpochEntry(1, 106), EpochEntry(2, 110)]


@pytest.mark.req("INDEX-8", "INDEX-9", "RECOV-4")
def test_recovery_fixes_corrupt_time_index(make):
    seg = make(0)
    for i in range(100):
        seg.append(i, legacy_records(i, str(i)))
    time_index_file = seg.time_index_file
    write_nonsense(time_index_file, 5, time_index_file.stat().st_size - 5)
    seg.recover()
    for i in range(100):
        assert seg.find_offset_by_timestamp(i * 10, 0).offset == i
        if i < 99:
            assert seg.find_offset_by_timestamp(i * 10 + 1, 0).offset == i + 1


@pytest.mark.req("INDEX-8", "RECOV-2", "RECOV-3")
@pytest.mark.parametrize("corrupt_from", range(20))
@pytest.mark.parametrize("shift", [0, 7, 14])
def test_recovery_with_corrupt_message(tmp_path, corrupt_from, shift):
    """Garbage from inside batch k to the end leaves batches 0..k-1 (Kafka picks k and the
    shift at random; here every k and three shifts)."""
    seg = create_segment(tmp_path, 0)
    for i in range(20):
        seg.append(i, legacy_records(i, str(i)))
    position = seg.log.search_for_offset_with_size(corrupt_from, 0).position + shift
    write_nonsense(seg.log.file, position, seg.log.size - position)
    seg.recover()
    assert [b.last_offset for b in seg.log.batches()] == list(range(corrupt_from))
    seg.delete_if_exists()


def open_preallocated(dir, clock, *, exists: bool = False) -> LogSegment:
    config = LogConfig(index_interval_bytes=10, segment_index_bytes=1000)
    return LogSegment.open(
        dir, 40, config, clock, file_already_exists=exists, init_file_size=512 * 1024 * 1024,
        preallocate=True,
    )  # fmt: skip


@pytest.mark.req("APPEND-26")
def test_create_with_init_file_size_append_message(tmp_path, clock):
    seg = open_preallocated(tmp_path, clock)
    seg.append(51, legacy_records(50, "hello", "there"))
    ms2 = legacy_records(60, "alpha", "beta")
    seg.append(61, ms2)
    assert seg.read(55, 200).data() == ms2
    seg.close()


@pytest.mark.req("APPEND-26", "FLUSH-9")
def test_create_with_init_file_size_clear_shutdown(tmp_path, clock):
    seg = open_preallocated(tmp_path, clock)
    seg.append(51, legacy_records(50, "hello", "there"))
    ms2 = legacy_records(60, "alpha", "beta")
    seg.append(61, ms2)
    assert seg.read(55, 200).data() == ms2
    old_size = seg.log.size
    assert seg.log.file.stat().st_size == 512 * 1024 * 1024
    seg.close()
    assert seg.log.file.stat().st_size == old_size  # trimmed at close
    reopened = open_preallocated(tmp_path, clock, exists=True)
    assert reopened.read(55, 200).data() == ms2
    assert reopened.log.size == old_size == reopened.log.file.stat().st_size
    reopened.close()


@pytest.mark.req("TRUNC-5")
def test_should_truncate_even_if_offset_points_to_a_gap_in_the_log(make):
    seg = make(40)
    seg.append(40, batch(40, "first message", timestamp=40_000))
    seg.append(43, batch(43, "message after gap", timestamp=43_000))
    seg.truncate_to(41)
    assert [b.base_offset for b in seg.read(40, 10000).batches()] == [40]


@pytest.mark.req("ROLL-10")
def test_get_first_batch_timestamp(make):
    seg = make(1)
    assert seg.get_first_batch_timestamp() == 2**63 - 1
    seg.append(1, batch(1, "one", timestamp=1000))
    assert seg.get_first_batch_timestamp() == 1000


@pytest.mark.req("INDEX-7")
def test_index_rule_first_append_never_indexed_and_checked_before_adding(make):
    """INDEX: an entry when the bytes since the last one exceed the interval, counted before
    this append; it pairs the set's last offset with the set's start position."""
    one = len(legacy_records(0, "x"))
    seg = make(0, index_interval_bytes=one)  # strictly greater: two appends needed
    for i in range(5):
        seg.append(i, legacy_records(i, "x"))
    entries = [seg.offset_index.entry(i) for i in range(seg.offset_index.entries)]
    assert [(e.offset, e.position) for e in entries] == [(2, 2 * one), (4, 4 * one)]


@pytest.mark.req("INDEX-7", "INDEX-14")
def test_index_rule_indexes_each_batch_of_a_set(make):
    """INDEX-7 (Kafka 4.0 on, KAFKA-806): a set's batches are indexed one by one, each entry
    its batch's last offset at its batch's position; the first batch of a segment is not."""
    seg = make(0, index_interval_bytes=0)
    seg.append(1, legacy_records(0, "a", "b"))
    first_size = seg.size
    seg.append(4, legacy_records(2, "c", "d", "e"))
    step = (seg.size - first_size) // 3  # three v1 messages of one size
    entries = [seg.offset_index.entry(i) for i in range(seg.offset_index.entries)]
    assert [(e.offset, e.position) for e in entries] == [
        (1, len(legacy_records(0, "a"))),
        (2, first_size),
        (3, first_size + step),
        (4, first_size + 2 * step),
    ]
    assert offsets_of(seg.read(3, 10_000)) == [3, 4]
    assert offsets_of(seg.read(4, 10_000)) == [4]


@pytest.mark.req("INDEX-12", "ROLL-17", "ROLL-18")
def test_on_become_inactive_segment_writes_final_time_entry_and_trims(make):
    seg = make(0, index_interval_bytes=100_000)
    seg.append(0, legacy_records(0, "a"))
    seg.append(1, legacy_records(1, "b"))
    assert seg.time_index.entries == 0
    seg.on_become_inactive_segment()
    assert seg.time_index.entries == 1 and seg.time_index.entry(0).timestamp == 10
    assert seg.time_index_file.stat().st_size == 12
    assert seg.offset_index_file.stat().st_size == 0
