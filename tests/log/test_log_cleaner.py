"""The log cleaner (spec/behaviour/compaction.md): LogCleanerTest and LogCleanerManagerTest,
restated on the reference's Cleaner, offset map and cleaner-offset-checkpoint."""

from __future__ import annotations

import pytest

from reference_impl.errors import Category, KafkaLogError
from reference_impl.log.cleaned_transaction_metadata import CleanedTransactionMetadata
from reference_impl.log.config import LogConfig
from reference_impl.log.log_cleaner import (
    Cleaner,
    CleanerStats,
    LogCleanerFilter,
    group_segments_by_size,
)
from reference_impl.log.log_cleaner_manager import (
    checkpoint_path,
    clean_once,
    cleanable_offsets,
    read_checkpoint,
    update_checkpoint,
)
from reference_impl.log.log_validator import AppendOrigin
from reference_impl.log.offset_map import OffsetMapFullError, SkimpyOffsetMap
from reference_impl.log.unified_log import Log
from reference_impl.records import (
    Compression,
    SimpleRecord,
    build_legacy_message_set,
    build_record_batch,
)
from reference_impl.records.builder import build_control_batch
from reference_impl.records.control import ControlRecordType
from reference_impl.records.stream import iter_batches

from .support import create_log

COMPACT = {"cleanup_policy": "compact", "min_cleanable_dirty_ratio": 0.0, "segment_bytes": 216}


def put(log, key: str | None, value: str | None, **batch):
    """A leader append of one record (71 bytes with a 1-byte key and a 2-byte value)."""
    record = SimpleRecord(
        value=None if value is None else value.encode(),
        key=None if key is None else key.encode(),
        timestamp=log.clock.milliseconds(),
    )
    return log.append_as_leader(build_record_batch([record], **batch), 0)


def kept(log) -> list[tuple[int, str | None]]:
    """(offset, key) of every record left in the log's segments."""
    return [
        (r.offset, None if r.key is None else r.key.decode())
        for s in log.log_segments()
        for b in iter_batches(s.log.read_bytes())
        for r in b.records()
    ]


def batches(log) -> list:
    return [b for s in log.log_segments() for b in iter_batches(s.log.read_bytes())]


@pytest.fixture
def log(tmp_path, clock):
    return create_log(tmp_path, clock, **COMPACT)


@pytest.mark.req("COMPACT-1")
def test_only_compacted_logs_are_cleaned(tmp_path, clock):
    deleting = create_log(tmp_path / "a", clock, **{**COMPACT, "cleanup_policy": "delete"})
    both = create_log(tmp_path / "b", clock, **{**COMPACT, "cleanup_policy": "compact,delete"})
    for target in (deleting, both):
        for i in range(4):
            put(target, "a", f"v{i}")
    assert clean_once(deleting, Cleaner()).cleaned is False
    assert len(kept(deleting)) == 4
    assert clean_once(both, Cleaner()).end_offset == 3
    assert kept(both) == [(2, "a"), (3, "a")]


@pytest.mark.req("COMPACT-2")
def test_compacted_log_rolls_at_max_compaction_lag():
    config = LogConfig(cleanup_policy="compact", segment_ms=5000, max_compaction_lag_ms=1000)
    assert config.max_segment_ms == 1000
    assert LogConfig(segment_ms=5000, max_compaction_lag_ms=1000).max_segment_ms == 5000
    with pytest.raises(ValueError):
        LogConfig(cleanup_policy="compact,archive")


@pytest.mark.req("COMPACT-3")
def test_keyless_record_refused_on_a_compacted_topic(log):
    with pytest.raises(KafkaLogError) as refused:
        put(log, None, "v0")
    assert refused.value.category is Category.INVALID_RECORD
    assert log.log_end_offset == 0
    control = build_control_batch(ControlRecordType.COMMIT, producer_id=7, producer_epoch=0)
    log.append_as_leader(control, 0, AppendOrigin.COORDINATOR)  # markers have their control key


@pytest.mark.req("COMPACT-4", "COMPACT-26")
def test_checkpoint_out_of_range_is_reset_and_written(log):
    """LogCleanerManagerTest testDirtyOffsetResetIfLargerThanEndOffset, testCheckpointUpdatedForInvalidOffsetNoCleaning."""
    for i in range(7):
        put(log, "a", f"v{i}")
    offsets = cleanable_offsets(log, 100, log.clock.milliseconds())
    assert (offsets.first_dirty_offset, offsets.force_update_checkpoint) == (0, True)
    log.delete_segments_before(3)
    log.config = log.local_log.config = LogConfig(**{**COMPACT, "min_compaction_lag_ms": 10**9})
    out = clean_once(log, Cleaner(), first_dirty_override=1)
    assert (out.cleaned, out.checkpoint_reset, out.first_dirty_offset) == (False, True, 3)
    assert read_checkpoint(log) == 3
    update_checkpoint(log, 4)
    assert clean_once(log, Cleaner()).cleaned is False
    assert read_checkpoint(log) == 4  # not cleaned, not reset: untouched


@pytest.mark.req("COMPACT-5", "COMPACT-7")
def test_range_stops_at_the_last_stable_offset_rounded_to_a_segment(log):
    """LogCleanerManagerTest testUndecidedTransactionalDataNotCleanable."""
    for i in range(4):
        put(log, "a", f"v{i}")
    put(log, "b", "t0", producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True)
    put(log, "a", "v5")
    put(log, "a", "v6")
    out = clean_once(log, Cleaner())
    assert (out.first_uncleanable_dirty_offset, out.first_uncleanable_offset) == (4, 3)
    assert out.end_offset == 3
    assert [o for o, _ in kept(log)] == [2, 3, 4, 5, 6]


@pytest.mark.req("COMPACT-6", "COMPACT-7")
def test_min_compaction_lag_bounds_the_range(tmp_path, clock):
    """LogCleanerManagerTest testCleanableOffsetsForTime."""
    log = create_log(tmp_path, clock, **{**COMPACT, "min_compaction_lag_ms": 10_000})
    for i in range(3):
        put(log, "a", f"v{i}")
    clock.sleep(8000)
    for i in range(4):
        put(log, "a", f"w{i}")
    clock.sleep(5000)
    out = clean_once(log, Cleaner())
    assert (out.first_uncleanable_dirty_offset, out.end_offset) == (3, 3)
    assert [o for o, _ in kept(log)] == [2, 3, 4, 5, 6]


@pytest.mark.req("COMPACT-8")
def test_dirty_ratio_and_max_compaction_lag(tmp_path, clock):
    log = create_log(tmp_path, clock, **{**COMPACT, "min_cleanable_dirty_ratio": 0.5})
    for key in "abcdefa":
        put(log, key, "v0")
    assert clean_once(log, Cleaner()).end_offset == 6  # ratio 1.0
    for _ in range(3):
        put(log, "a", "v1")
    assert clean_once(log, Cleaner()).cleaned is False  # 213 / 639
    for _ in range(3):
        put(log, "a", "v2")
    out = clean_once(log, Cleaner())
    assert (out.cleaned, out.cleanable_ratio) == (False, 0.5)  # equal is not enough
    overdue = create_log(
        tmp_path / "o",
        clock,
        **{**COMPACT, "min_cleanable_dirty_ratio": 0.99, "max_compaction_lag_ms": 1000},
    )
    for _ in range(4):
        put(overdue, "a", "v0")
    clean_once(overdue, Cleaner())
    for _ in range(3):
        put(overdue, "a", "v1")
    assert clean_once(overdue, Cleaner()).cleaned is False
    clock.sleep(2000)
    out = clean_once(overdue, Cleaner())
    assert out.cleaned and out.compaction_delay_ms == 1000


@pytest.mark.req("COMPACT-9")
def test_offset_map_capacity():
    offset_map = SkimpyOffsetMap(48)
    assert offset_map.slots == 2
    offset_map.put(b"a", 0)
    offset_map.put(b"b", 1)
    offset_map.put(b"a", 2)  # an existing key takes no slot
    assert (offset_map.get(b"a"), offset_map.get(b"c"), offset_map.latest_offset) == (2, -1, 2)
    with pytest.raises(OffsetMapFullError):
        offset_map.put(b"c", 3)
    with pytest.raises(ValueError):
        Cleaner(dedupe_buffer_size=47)  # one slot: 0.9 keys a pass


@pytest.mark.req("COMPACT-9", "COMPACT-10", "COMPACT-11", "COMPACT-25")
def test_a_full_map_cleans_part_of_the_dirty_section(log):
    """LogCleanerTest testPartialSegmentClean (a map of three keys a pass)."""
    for key in "abacbda":
        put(log, key, "v0")
    out = clean_once(log, Cleaner(dedupe_buffer_size=96))  # 4 slots, 3 keys a pass
    assert (out.end_offset, out.stats.map_messages_read) == (4, 4)
    assert [o for o, _ in kept(log)] == [1, 2, 3, 4, 5, 6]
    assert read_checkpoint(log) == 4
    out = clean_once(log, Cleaner())
    assert (out.first_dirty_offset, out.end_offset) == (4, 6)
    assert kept(log) == [(2, "a"), (3, "c"), (4, "b"), (5, "d"), (6, "a")]  # a's 6 is active


@pytest.mark.req("COMPACT-10")
def test_offset_gaps_count_as_read(log):
    """LogCleanerTest testCleaningBeyondMissingOffsets."""
    for offset, key in ((0, "a"), (4, "a"), (9, "b")):
        record = SimpleRecord(value=b"v", key=key.encode(), timestamp=0)
        log.append_as_follower(
            build_record_batch([record], base_offset=offset, partition_leader_epoch=0)
        )
    log.roll(15)
    record = SimpleRecord(value=b"v", key=b"a", timestamp=0)
    log.append_as_follower(build_record_batch([record], base_offset=20, partition_leader_epoch=0))
    assert clean_once(log, Cleaner()).end_offset == 15


@pytest.mark.req("COMPACT-12")
def test_latest_record_per_key_and_keyless_records(log):
    for offset, key in ((0, None), (1, "a"), (2, "a"), (3, "b")):
        value = b"v"
        record = SimpleRecord(value=value, key=None if key is None else key.encode(), timestamp=0)
        log.append_as_follower(
            build_record_batch([record], base_offset=offset, partition_leader_epoch=0)
        )
    log.roll()
    out = clean_once(log, Cleaner())
    assert out.stats.invalid_messages_read == 1
    assert kept(log) == [(2, "a"), (3, "b")]


@pytest.mark.req("COMPACT-13", "COMPACT-18", "COMPACT-19")
def test_tombstone_gets_a_horizon_and_goes_at_it(tmp_path, clock):
    """LogCleanerTest testCleaningWithDeletes, testCleanTombstone: the tombstone outlives passes before its horizon."""
    log = create_log(tmp_path, clock, **{**COMPACT, "delete_retention_ms": 10_000})
    stamped_at = clock.milliseconds()
    put(log, "a", "v0")
    put(log, "a", None)
    put(log, "b", "v2")
    put(log, "c", "v3")
    before = batches(log)[2].raw
    clean_once(log, Cleaner())
    tombstone, copied = batches(log)[:2]
    assert tombstone.delete_horizon_ms == stamped_at + 10_000
    assert (tombstone.base_offset, tombstone.last_offset) == (1, 1)
    assert copied.raw == before  # nothing went: byte for byte
    clock.sleep(9_999)
    clean_once(log, Cleaner(), first_dirty_override=0)
    assert [o for o, _ in kept(log)] == [1, 2, 3]
    clock.sleep(1)
    clean_once(log, Cleaner(), first_dirty_override=0)
    assert [o for o, _ in kept(log)] == [2, 3]


@pytest.mark.req("COMPACT-19")
def test_rewritten_batch_keeps_its_offsets_and_producer_fields(log):
    log.config = log.local_log.config = LogConfig(**{**COMPACT, "segment_bytes": 1000})
    records = [
        SimpleRecord(value=b"v", key=key.encode(), timestamp=1000 + i)
        for i, key in enumerate("abac")
    ]
    log.append_as_leader(
        build_record_batch(records, producer_id=9, producer_epoch=2, base_sequence=0), 5
    )
    put(log, "c", "v4")
    log.roll()
    clean_once(log, Cleaner())
    first = batches(log)[0]
    assert (first.base_offset, first.last_offset, first.records_count) == (0, 3, 2)
    assert (first.producer_id, first.producer_epoch, first.base_sequence) == (9, 2, 0)
    assert (first.partition_leader_epoch, first.base_timestamp) == (5, 1001)
    assert [r.offset for r in first.records()] == [1, 2]


@pytest.mark.req("COMPACT-14", "COMPACT-15", "COMPACT-17", "COMPACT-20", "COMPACT-23")
def test_aborted_data_goes_and_the_last_batch_stays_empty(log):
    """LogCleanerTest testLogCleanerRetainsLastSequenceEvenIfTransactionAborted."""
    log.config = log.local_log.config = LogConfig(**{**COMPACT, "segment_bytes": 1000})
    txn = {"producer_id": 7, "producer_epoch": 0, "is_transactional": True}
    put(log, "a", "t0", base_sequence=0, **txn)
    put(log, "b", "t1", base_sequence=1, **txn)
    marker = build_control_batch(ControlRecordType.ABORT, producer_id=7, producer_epoch=0)
    log.append_as_leader(marker, 0, AppendOrigin.COORDINATOR)
    put(log, "c", "v3")
    log.roll()
    clean_once(log, Cleaner())
    left = batches(log)
    assert [(b.base_offset, b.records_count) for b in left] == [(1, 0), (2, 1), (3, 1)]
    empty = left[0]
    assert (empty.size_in_bytes, empty.base_timestamp, empty.is_transactional) == (61, -1, True)
    aborted = log.segments.first_segment.txn_index.all_aborted_txns()
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in aborted] == [(7, 0, 2)]


@pytest.mark.req("COMPACT-17", "COMPACT-20")
def test_clean_segments_retaining_last_empty_batch(log):
    """LogCleanerTest testCleanSegmentsRetainingLastEmptyBatch (KAFKA-17076): the batch whose
    next offset is the pass's first uncleanable offset stays as an empty batch, so the offset
    that ends the cleaned range is still in the log; an emptied batch before it goes."""
    for offset, key in ((0, "a"), (1, "a"), (2, None), (3, "b")):
        record = SimpleRecord(value=b"v", key=None if key is None else key.encode(), timestamp=0)
        log.append_as_follower(
            build_record_batch([record], base_offset=offset, partition_leader_epoch=0)
        )
        if offset == 2:
            log.roll()
    out = clean_once(log, Cleaner())
    assert out.end_offset == 3
    assert [(b.base_offset, b.records_count) for b in batches(log)] == [(1, 1), (2, 0), (3, 1)]


@pytest.mark.req("COMPACT-15")
def test_commit_marker_goes_after_its_horizon(tmp_path, clock):
    """LogCleanerTest testCommitMarkerRemoval."""
    log = create_log(
        tmp_path, clock, **{**COMPACT, "segment_bytes": 1000, "delete_retention_ms": 10_000}
    )
    txn = {"producer_id": 7, "producer_epoch": 0, "is_transactional": True}
    commit = build_control_batch(ControlRecordType.COMMIT, producer_id=7, producer_epoch=0)
    put(log, "a", "t0", base_sequence=0, **txn)
    log.append_as_leader(commit, 0, AppendOrigin.COORDINATOR)
    put(log, "a", "v2")
    put(log, "b", "t3", base_sequence=1, **txn)
    log.append_as_leader(commit, 0, AppendOrigin.COORDINATOR)
    log.roll()
    for _ in range(2):
        clean_once(log, Cleaner(), first_dirty_override=0)
    assert [b.base_offset for b in batches(log)] == [1, 2, 3, 4]
    assert batches(log)[0].delete_horizon_ms == clock.milliseconds() + 10_000
    clock.sleep(10_000)
    clean_once(log, Cleaner(), first_dirty_override=0)
    assert [b.base_offset for b in batches(log)] == [2, 3, 4]


@pytest.mark.req("COMPACT-16")
def test_legacy_tombstones_live_by_the_clean_segments_mtime():
    legacy = next(
        iter(
            iter_batches(
                build_legacy_message_set(
                    [SimpleRecord(value=None, key=b"a", timestamp=0)], magic=1, base_offset=1
                )
            )
        )
    )
    offset_map = SkimpyOffsetMap(1024)
    offset_map.put(b"a", 1)
    stats = CleanerStats()

    def keeps(retain_legacy_deletes: bool) -> bool:
        record_filter = LogCleanerFilter(
            offset_map,
            0,
            86_400_000,
            CleanedTransactionMetadata(),
            {},
            10,
            retain_legacy_deletes=retain_legacy_deletes,
            stats=stats,
        )
        return record_filter.should_retain_record(legacy, legacy.records()[0])

    assert keeps(True) and not keeps(False)


@pytest.mark.req("COMPACT-21", "COMPACT-22")
def test_chunks_and_groups(tmp_path, clock):
    log = create_log(tmp_path, clock, **{**COMPACT, "index_interval_bytes": 0})
    for key in "abacbda":
        put(log, key, "v0")
    groups = group_segments_by_size(log.log_segments()[:2], 426, 480, 6)
    assert [[s.base_offset for s in g] for g in groups] == [[0, 3]]
    assert len(group_segments_by_size(log.log_segments()[:2], 425, 480, 6)) == 2
    clean_once(log, Cleaner(io_buffer_size=150))  # one batch a chunk: one append each
    index = log.segments.get(3).offset_index
    assert [index.entry(n).offset for n in range(index.entries)] == [4, 5]


@pytest.mark.req("COMPACT-23", "COMPACT-24")
def test_write_path_leaves_no_temporary_file_and_reloads(tmp_path, clock):
    log = create_log(tmp_path, clock, **{**COMPACT, "file_delete_delay_ms": 10**6})
    for i in range(4):
        put(log, "a", f"v{i}")
    mtime = log.segments.first_segment.last_modified()
    clean_once(log, Cleaner())
    names = sorted(p.name for p in log.dir.iterdir())
    assert not [n for n in names if n.endswith((".cleaned", ".swap"))]
    assert "00000000000000000000.log.deleted" in names
    assert log.segments.first_segment.last_modified() == mtime
    log.close()
    reopened = create_log(tmp_path, clock, **COMPACT)
    assert kept(reopened) == [(2, "a"), (3, "a")]


@pytest.mark.req("COMPACT-25", "COMPACT-27")
def test_checkpoint_end_offset_and_truncation(log):
    for i in range(8):
        put(log, "a", f"v{i}")
    path = checkpoint_path(log)
    path.write_text("0\n1\nzz 3 17\n")
    clean_once(log, Cleaner())
    assert read_checkpoint(log) == 6 and "zz 3 17" in path.read_text()
    log.truncate_to(7)  # inside the active segment: kept
    assert read_checkpoint(log) == 6
    log.truncate_to(4)
    assert read_checkpoint(log) == 3
    log.truncate_fully_and_start_at(20)
    assert read_checkpoint(log) == 3
    log.truncate_fully_and_start_at(2)
    assert read_checkpoint(log) == 2


@pytest.mark.req("COMPACT-17", "COMPACT-20")
def test_log_cleaner_retains_producer_last_sequence(tmp_path, clock):
    """LogCleanerTest testLogCleanerRetainsProducerLastSequence: the producer's emptied last
    batch stays, so its next sequence is accepted after a reload."""
    log = create_log(tmp_path, clock, **{**COMPACT, "segment_bytes": 1000})
    put(log, "a", "p0", producer_id=9, producer_epoch=0, base_sequence=0)
    put(log, "b", "p1", producer_id=9, producer_epoch=0, base_sequence=1)
    put(log, "a", "v2")
    put(log, "b", "v3")
    log.roll()
    clean_once(log, Cleaner())
    assert [(b.base_offset, b.records_count) for b in batches(log)] == [(1, 0), (2, 1), (3, 1)]
    log.close()
    log = create_log(tmp_path, clock, **{**COMPACT, "segment_bytes": 1000})
    assert put(log, "a", "p4", producer_id=9, producer_epoch=0, base_sequence=2).first_offset == 4


@pytest.mark.req("COMPACT-14", "COMPACT-15")
def test_abort_marker_removal(tmp_path, clock):
    """LogCleanerTest testAbortMarkerRemoval: the marker outlives its data by one pass, is
    stamped with a horizon, and goes at it."""
    log = create_log(
        tmp_path, clock, **{**COMPACT, "segment_bytes": 1000, "delete_retention_ms": 10_000}
    )
    txn = {"producer_id": 7, "producer_epoch": 0, "is_transactional": True}
    put(log, "a", "t0", base_sequence=0, **txn)
    abort = build_control_batch(ControlRecordType.ABORT, producer_id=7, producer_epoch=0)
    log.append_as_leader(abort, 0, AppendOrigin.COORDINATOR)
    put(log, "b", "t2", base_sequence=1, **txn)
    commit = build_control_batch(ControlRecordType.COMMIT, producer_id=7, producer_epoch=0)
    log.append_as_leader(commit, 0, AppendOrigin.COORDINATOR)
    log.roll()
    clean_once(log, Cleaner())
    assert [b.base_offset for b in batches(log)] == [1, 2, 3]
    clean_once(log, Cleaner(), first_dirty_override=0)
    assert batches(log)[0].delete_horizon_ms == clock.milliseconds() + 10_000
    clock.sleep(10_000)
    clean_once(log, Cleaner(), first_dirty_override=0)
    assert [b.base_offset for b in batches(log)] == [2, 3]


@pytest.mark.req("COMPACT-10", "COMPACT-12")
def test_cleaning_a_broker_compacted_topic(corpus, tmp_path, clock):
    """The real __consumer_offsets partitions of a Kafka 2.7 broker (corpus
    kafka-2.7-compacted-offsets), cleaned once from offset 0: exactly the latest record of
    each key survives, as a dictionary over the records says, and the end offset is the LEO."""
    logs = corpus / "kafka-2.7-compacted-offsets" / "kafka-logs"
    if not logs.is_dir():
        pytest.skip(f"{logs} is not in this corpus")
    cleaned = 0
    for source in sorted(logs.glob("__consumer_offsets-*")):
        segments = sorted(source.glob("*.log"))
        if not any(s.stat().st_size for s in segments):
            continue
        target = tmp_path / source.name
        target.mkdir()
        for segment in segments:
            (target / segment.name).write_bytes(segment.read_bytes())
        log = Log.open(target, LogConfig(**{**COMPACT, "segment_bytes": 1 << 20}), clock)
        latest = {key: offset for offset, key in kept(log)}
        log.roll()
        out = clean_once(log, Cleaner(), first_dirty_override=0)
        assert out.end_offset == log.log_end_offset, source.name
        assert [o for o, _ in kept(log)] == sorted(latest.values()), source.name
        log.close()
        cleaned += 1
    assert cleaned >= 5


@pytest.mark.req("COMPACT-29")
def test_legacy_records_kept_are_written_as_a_v2_batch():
    """Every 4.x cleaner writes the records it keeps of a magic 0/1 entry as one v2 batch
    (KIP-724): first and last offset the kept records', the entry's codec, no producer."""
    from reference_impl.log.record_filter import convert_legacy

    records = [SimpleRecord(value=b"v%d" % i, key=b"k%d" % i, timestamp=100 + i) for i in range(3)]
    wrapper = build_legacy_message_set(
        records, magic=1, base_offset=7, compression=Compression.GZIP
    )
    (entry,) = iter_batches(wrapper)
    kept_records = entry.records()[1:]
    (batch,) = iter_batches(convert_legacy(entry, kept_records, None))
    assert batch.magic == 2 and entry.magic == 1
    assert (batch.base_offset, batch.last_offset) == (8, 9)
    assert batch.compression == entry.compression and batch.producer_id == -1
    assert batch.partition_leader_epoch == -1
    assert [(r.offset, r.key, r.value, r.timestamp) for r in batch.records()] == [
        (r.offset, r.key, r.value, r.timestamp) for r in kept_records
    ]
