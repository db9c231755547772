"""Producer state in the reference log: idempotence checks, transactions, the last stable
offset, read_committed (spec/behaviour/producer-state.md, transactions.md, read.md §5).

Modelled on Kafka's ProducerStateManagerTest and UnifiedLogTest cases named in those pages.
"""

from __future__ import annotations

import pytest

from reference_impl.constants import INT32_MAX
from reference_impl.errors import Category, KafkaLogError
from reference_impl.log.fetch import FetchIsolation
from reference_impl.log.log_validator import AppendOrigin
from reference_impl.log.producer_state import NUM_BATCHES_TO_RETAIN
from reference_impl.records import SimpleRecord, build_record_batch
from reference_impl.records.control import (
    ControlRecordType,
    encode_control_key,
    encode_end_txn_marker,
)

from .support import create_log

PID, OTHER = 1000, 2000


def data_batch(pid, epoch, seq, n=1, *, txn=False, ts=0, offset=0):
    records = [SimpleRecord(value=b"v%d" % i, timestamp=ts) for i in range(n)]
    return build_record_batch(
        records,
        base_offset=offset,
        partition_leader_epoch=0,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        is_transactional=txn,
    )


def marker_batch(pid, epoch, commit, coordinator_epoch=0, ts=0, offset=0):
    control = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    record = SimpleRecord(
        key=encode_control_key(control),
        value=encode_end_txn_marker(coordinator_epoch),
        timestamp=ts,
    )
    return build_record_batch(
        [record],
        base_offset=offset,
        partition_leader_epoch=0,
        producer_id=pid,
        producer_epoch=epoch,
        is_transactional=True,
        is_control=True,
    )


def produce(log, pid, epoch, seq, n=1, *, txn=False):
    ts = log.clock.milliseconds()
    return log.append_as_leader(data_batch(pid, epoch, seq, n, txn=txn, ts=ts), 0)


def end_txn(log, pid, epoch, commit, coordinator_epoch=0):
    ts = log.clock.milliseconds()
    batch = marker_batch(pid, epoch, commit, coordinator_epoch, ts)
    return log.append_as_leader(batch, 0, AppendOrigin.COORDINATOR)


def refused(category, fn, *args, **kwargs):
    with pytest.raises(KafkaLogError) as info:
        fn(*args, **kwargs)
    assert info.value.category is category, info.value
    return info.value


def snapshot_offsets(log):
    return sorted(int(p.name.split(".")[0]) for p in log.dir.glob("*.snapshot"))


@pytest.fixture
def log(tmp_path, clock):
    log = create_log(tmp_path, clock)
    yield log
    if not log.closed:
        log.close()


# --- producer state (PSTATE) ---


@pytest.mark.req("PSTATE-1", "PSTATE-2")
def test_entry_keeps_the_last_five_batches(log):
    for i in range(7):
        produce(log, PID, 0, i * 2, n=2)
    entry = log.producer_state_manager.last_entry(PID)
    assert len(entry.batch_metadata) == NUM_BATCHES_TO_RETAIN
    assert [b.first_seq for b in entry.batch_metadata] == [4, 6, 8, 10, 12]
    assert [b.first_offset for b in entry.batch_metadata] == [4, 6, 8, 10, 12]
    last = entry.batch_metadata[-1]
    assert (last.last_seq, last.last_offset, last.offset_delta) == (13, 13, 1)
    assert (entry.producer_epoch, entry.current_txn_first_offset) == (0, None)


@pytest.mark.req("PSTATE-4", "PSTATE-2", "PSTATE-6")
def test_duplicates_of_the_retained_batches_return_their_offsets(log):
    """Kafka's testDuplicateAppends."""
    for i in range(6):
        produce(log, PID, 0, i * 3, n=3)
    size, leo = log.size, log.log_end_offset
    for i in (1, 5):  # the oldest retained and the newest
        info = produce(log, PID, 0, i * 3, n=3)
        assert (info.first_offset, info.last_offset) == (i * 3, i * 3 + 2)
    assert (log.size, log.log_end_offset) == (size, leo)
    # the sixth-oldest is no longer retained: a retry of it is out of order
    refused(Category.OUT_OF_ORDER_SEQUENCE_NUMBER, produce, log, PID, 0, 0, 3)
    # a different range that overlaps is not a duplicate either
    refused(Category.OUT_OF_ORDER_SEQUENCE_NUMBER, produce, log, PID, 0, 15, 2)


@pytest.mark.req("PSTATE-3", "PSTATE-7", "PSTATE-5")
def test_a_new_epoch_starts_at_zero_and_forgets_the_old_batches(log):
    produce(log, PID, 0, 0, n=2)
    refused(Category.OUT_OF_ORDER_SEQUENCE_NUMBER, produce, log, PID, 1, 2)
    produce(log, PID, 1, 0)
    entry = log.producer_state_manager.last_entry(PID)
    assert (entry.producer_epoch, len(entry.batch_metadata)) == (1, 1)
    refused(Category.INVALID_PRODUCER_EPOCH, produce, log, PID, 0, 0, 2)  # fenced


@pytest.mark.req("PSTATE-6")
def test_sequences_must_follow_on_and_wrap(log):
    produce(log, PID, 0, INT32_MAX - 1, n=2)  # an unknown producer takes any sequence
    refused(Category.OUT_OF_ORDER_SEQUENCE_NUMBER, produce, log, PID, 0, 1)
    info = produce(log, PID, 0, 0)  # Int.MAX is followed by 0
    assert info.first_offset == 2


@pytest.mark.req("PSTATE-8")
def test_followers_take_the_state_from_the_data(log):
    log.append_as_follower(data_batch(PID, 3, 10))
    log.append_as_follower(data_batch(PID, 3, 50, offset=1))  # a gap
    log.append_as_follower(data_batch(PID, 2, 0, offset=2))  # an older epoch
    log.append_as_follower(marker_batch(PID, 2, True, coordinator_epoch=5, offset=3))
    log.append_as_follower(marker_batch(PID, 2, False, coordinator_epoch=1, offset=4))
    entry = log.producer_state_manager.last_entry(PID)
    assert (entry.producer_epoch, entry.coordinator_epoch, log.log_end_offset) == (2, 1, 5)


@pytest.mark.req("PSTATE-9")
def test_a_refused_append_changes_no_state(log):
    produce(log, PID, 1, 0, n=2)
    before = (log.size, log.log_end_offset, repr(log.producer_state_manager.last_entry(PID)))
    refused(Category.OUT_OF_ORDER_SEQUENCE_NUMBER, produce, log, PID, 1, 7)
    refused(Category.INVALID_PRODUCER_EPOCH, produce, log, PID, 0, 2)
    after = (log.size, log.log_end_offset, repr(log.producer_state_manager.last_entry(PID)))
    assert after == before
    assert log.producer_state_manager.map_end_offset == 2


@pytest.mark.req("PSTATE-10")
def test_expired_producers_are_not_loaded_from_a_snapshot(tmp_path, clock):
    log = create_log(tmp_path, clock)
    produce(log, PID, 0, 0)
    produce(log, OTHER, 0, 0, txn=True)  # an open transaction never expires
    log.close()
    clock.sleep(86_400_000)
    log = create_log(tmp_path, clock)
    assert set(log.producer_state_manager.producers) == {OTHER}
    produce(log, PID, 0, 42)  # forgotten: any sequence
    log.close()


# --- transactions (TXN-B) ---


@pytest.mark.req("TXN-B-1", "TXN-B-2")
def test_a_transaction_starts_at_its_first_batch(log):
    produce(log, OTHER, 0, 0)
    produce(log, PID, 0, 0, n=2, txn=True)
    produce(log, PID, 0, 2, txn=True)
    assert log.producer_state_manager.last_entry(PID).current_txn_first_offset == 1
    refused(Category.INVALID_TXN_STATE, produce, log, PID, 0, 3)


@pytest.mark.req("TXN-B-3", "TXN-B-5")
def test_markers_end_transactions_and_only_aborts_are_indexed(log):
    produce(log, PID, 0, 0, txn=True)
    end_txn(log, PID, 0, commit=True)
    assert not log.active_segment.txn_index.file.exists()
    produce(log, PID, 0, 1, txn=True)
    end_txn(log, PID, 0, commit=False)
    entries = log.active_segment.txn_index.all_aborted_txns()
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in entries] == [(PID, 2, 3)]
    assert log.producer_state_manager.last_entry(PID).current_txn_first_offset is None
    # a marker with no transaction open completes nothing, but moves the epochs
    end_txn(log, PID, 1, commit=False, coordinator_epoch=4)
    assert len(log.active_segment.txn_index.all_aborted_txns()) == 1
    entry = log.producer_state_manager.last_entry(PID)
    assert (entry.producer_epoch, entry.coordinator_epoch) == (1, 4)
    assert log.last_stable_offset == log.log_end_offset


@pytest.mark.req("TXN-B-4")
def test_an_older_coordinator_is_fenced(log):
    produce(log, PID, 0, 0, txn=True)
    end_txn(log, PID, 0, commit=True, coordinator_epoch=3)
    produce(log, PID, 0, 1, txn=True)
    size = log.size
    refused(Category.TRANSACTION_COORDINATOR_FENCED, end_txn, log, PID, 0, False, 2)
    assert log.size == size
    end_txn(log, PID, 0, commit=False, coordinator_epoch=3)


@pytest.mark.req("TXN-B-6", "TXN-B-7", "TXN-B-5")
def test_last_stable_offsets_with_two_producers(log):
    produce(log, PID, 0, 0, txn=True)  # 0
    produce(log, OTHER, 0, 0, txn=True)  # 1
    assert log.last_stable_offset == 0
    produce(log, PID, 0, 1, txn=True)  # 2
    end_txn(log, PID, 0, commit=False)  # 3: OTHER's transaction from 1 is still open
    assert log.active_segment.txn_index.all_aborted_txns()[0].last_stable_offset == 1
    assert log.last_stable_offset == 1
    end_txn(log, OTHER, 0, commit=False)  # 4: none open any more
    assert log.active_segment.txn_index.all_aborted_txns()[1].last_stable_offset == 5
    assert log.last_stable_offset == log.log_end_offset == 5
    assert log.state().last_stable_offset == 5


@pytest.mark.req("TXN-B-7")
def test_the_last_stable_offset_is_never_below_the_log_start_offset(tmp_path, clock):
    log = create_log(tmp_path, clock)
    produce(log, OTHER, 0, 0)
    produce(log, PID, 0, 0, txn=True)  # 1
    produce(log, OTHER, 0, 1)  # 2
    log.delete_segments_before(2)
    assert log.log_start_offset == 2 and log.last_stable_offset == 2
    log.close()


@pytest.mark.req("READ-21", "READ-22")
def test_read_committed_stops_at_the_lso_and_lists_aborted_transactions(tmp_path, clock):
    """Kafka's testFetchUpToLastStableOffset and testAbortedTransactionSpanningMultipleSegments."""
    log = create_log(tmp_path, clock, segment_bytes=300)
    produce(log, PID, 0, 0, n=2, txn=True)  # 0-1
    produce(log, OTHER, 0, 0, txn=True)  # 2
    end_txn(log, PID, 0, commit=False)  # 3
    produce(log, PID, 0, 2, txn=True)  # 4: open
    end_txn(log, OTHER, 0, commit=True)  # 5
    assert log.last_stable_offset == 4
    fetch = log.read(0, 100_000, isolation=FetchIsolation.TXN_COMMITTED)
    last = [b.last_offset for b in fetch.batches()]
    assert last and max(last) < 4
    assert [(t.producer_id, t.first_offset) for t in fetch.aborted_transactions] == [(PID, 0)]
    assert log.read(0, 100_000).aborted_transactions is None  # other isolations list none
    at_lso = log.read(4, 100, isolation=FetchIsolation.TXN_COMMITTED)
    assert at_lso.data() == b"" and at_lso.aborted_transactions == ()
    log.close()


# --- snapshots (SNAP-B) ---


@pytest.mark.req("SNAP-B-1")
def test_snapshots_at_roll_and_close(tmp_path, clock):
    """Kafka's testTakeSnapshotOnRollAndDeleteSnapshotOnRecoveryPointCheckpoint (the roll
    half) and testProducerSnapshotAfterSegmentRollOnAppend."""
    log = create_log(tmp_path, clock)
    produce(log, PID, 0, 0, n=3)
    log.roll()
    assert snapshot_offsets(log) == [3]
    log.roll()  # the map end offset did not move: no new snapshot
    assert snapshot_offsets(log) == [3]
    produce(log, PID, 0, 3)
    log.close()
    assert snapshot_offsets(log) == [3, 4]


@pytest.mark.req("SNAP-B-2")
def test_state_survives_a_clean_close_and_a_crash(tmp_path, clock):
    """Kafka's testProducerSnapshotsRecoveryAfterUncleanShutdownCurrentMessageFormat."""
    log = create_log(tmp_path, clock, segment_bytes=200)
    for i in range(6):
        produce(log, PID, 0, i)
    produce(log, OTHER, 0, 0, txn=True)
    log.close()
    log = create_log(tmp_path, clock)
    assert produce(log, PID, 0, 5).first_offset == 5  # still a duplicate
    assert log.producer_state_manager.last_entry(OTHER).current_txn_first_offset == 6
    produce(log, PID, 0, 6)  # 7
    log.crash()
    log = create_log(tmp_path, clock)  # unclean: replayed from the log
    assert produce(log, PID, 0, 6).first_offset == 7
    assert log.last_stable_offset == 6
    log.close()


@pytest.mark.req("SNAP-B-3")
def test_no_snapshot_after_a_clean_shutdown_means_no_scan(tmp_path, clock):
    """Kafka's testSkipTruncateAndReloadIfNewMessageFormatAndCleanShutdown."""
    log = create_log(tmp_path, clock, segment_bytes=200)
    for i in range(6):
        produce(log, PID, 0, i)
    bases = [s.base_offset for s in log.log_segments()]
    log.close()
    for path in log.dir.glob("*.snapshot"):
        path.unlink()
    log = create_log(tmp_path, clock)
    assert not log.producer_state_manager.producers
    assert snapshot_offsets(log) == sorted({*bases[-2:], 6})
    log.close()


@pytest.mark.req("SNAP-B-4")
def test_stray_snapshots_are_removed_at_load(tmp_path, clock):
    """Kafka's testLoadingLogKeepsLargestStrayProducerStateSnapshot and testRemoveStraySnapshotsKeepCleanShutdownSnapshot."""
    log = create_log(tmp_path, clock, segment_bytes=200)
    for i in range(6):
        produce(log, PID, 0, i)
    bases = [s.base_offset for s in log.log_segments()]
    log.close()
    snapshot = log.dir / f"{6:020d}.snapshot"
    for stray in (1, bases[-1] + 1 if bases[-1] + 1 < 6 else 5):
        (log.dir / f"{stray:020d}.snapshot").write_bytes(snapshot.read_bytes())
    log = create_log(tmp_path, clock)
    kept = snapshot_offsets(log)
    assert 1 not in kept and 6 in kept
    assert all(o in bases or o == 6 for o in kept)
    log.close()


@pytest.mark.req("SNAP-B-5")
def test_truncation_deletes_later_snapshots_and_rebuilds(tmp_path, clock):
    log = create_log(tmp_path, clock, segment_bytes=200)
    for i in range(8):
        produce(log, PID, 0, i)
    log.close()
    log = create_log(tmp_path, clock)
    log.truncate_to(3)
    assert all(o <= 3 for o in snapshot_offsets(log))
    assert log.producer_state_manager.last_entry(PID).last_seq == 2
    assert produce(log, PID, 0, 3).first_offset == 3
    log.close()


@pytest.mark.req("TXN-B-7", "SNAP-B-5")
def test_truncate_below_first_unstable_offset(log):
    """Kafka's testTruncateBelowFirstUnstableOffset."""
    produce(log, PID, 0, 0)
    produce(log, OTHER, 0, 0, n=2, txn=True)  # 1-2
    assert log.last_stable_offset == 1
    log.truncate_to(1)
    assert log.last_stable_offset == log.log_end_offset == 1
    assert log.producer_state_manager.last_entry(OTHER) is None


@pytest.mark.req("SNAP-B-6")
def test_a_corrupt_snapshot_is_deleted_and_the_next_tried(tmp_path, clock):
    """Kafka's testLoadFromCorruptSnapshotFile."""
    log = create_log(tmp_path, clock, segment_bytes=200)
    for i in range(6):
        produce(log, PID, 0, i)
    log.roll()
    log.crash()
    newest = max(snapshot_offsets(log))
    path = log.dir / f"{newest:020d}.snapshot"
    path.write_bytes(path.read_bytes()[:-1] + b"\xff")
    log = create_log(tmp_path, clock)
    assert produce(log, PID, 0, 5).first_offset == 5  # rebuilt from an older one + the log
    log.close()


@pytest.mark.req("SNAP-B-7")
def test_truncate_fully_forgets_everything(log):
    """Kafka's testTruncateFullyAndStartBelowFirstUnstableOffset and testProducerIdMapTruncateFullyAndStartAt."""
    produce(log, PID, 0, 0)
    produce(log, OTHER, 0, 0, txn=True)
    log.roll()
    assert log.last_stable_offset == 1
    log.truncate_fully_and_start_at(10)
    assert not log.producer_state_manager.producers
    assert all(o == 10 for o in snapshot_offsets(log))
    assert log.last_stable_offset == 10
    produce(log, PID, 0, 99)  # unknown again


@pytest.mark.req("SNAP-B-8")
def test_deleted_segments_take_their_snapshots_with_them(tmp_path, clock):
    log = create_log(tmp_path, clock, file_delete_delay_ms=1000)
    produce(log, PID, 0, 0)
    log.roll()
    produce(log, PID, 0, 1)
    log.roll()
    assert snapshot_offsets(log) == [1, 2]
    log.delete_segments_before(2)
    assert snapshot_offsets(log) == [2]
    assert (log.dir / f"{1:020d}.snapshot.deleted").exists()
    clock.sleep(1000)
    log.state()  # runs the deletions due
    assert not (log.dir / f"{1:020d}.snapshot.deleted").exists()
    log.close()


@pytest.mark.req("SNAP-B-9", "RECOV-5", "SNAP-B-8")
def test_a_load_deletes_the_snapshots_above_a_recovered_segment_outright(tmp_path, clock):
    """LogLoader.recoverSegment rebuilds the producer state to the segment's base first, which
    deletes the snapshots above it; the segment its cut then removes leaves no
    .snapshot.deleted (SNAP-B-8 renames only for retention and truncation)."""
    log = create_log(tmp_path, clock)
    produce(log, PID, 0, 0)
    log.roll()
    produce(log, PID, 0, 1)
    produce(log, PID, 0, 2)
    log.roll()
    produce(log, PID, 0, 3)
    assert snapshot_offsets(log) == [1, 3]
    log.crash()
    segment = log.dir / f"{1:020d}.log"
    data = bytearray(segment.read_bytes())
    data[len(data) // 2 + 40] ^= 0xFF  # inside offset 2's batch, under its CRC
    segment.write_bytes(bytes(data))
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\ntopic 0 1\n")
    log = create_log(tmp_path, clock)
    assert log.log_end_offset == 2
    assert snapshot_offsets(log) == [1, 2]
    assert not list(log.dir.glob("*.snapshot.deleted"))
    assert (log.dir / f"{3:020d}.log.deleted").exists()
    produce(log, PID, 0, 2)  # the state is segment 1's: sequence 1 was the last
    log.close()


@pytest.mark.req("RECOV-19")
def test_recovery_rebuilds_the_transaction_index(tmp_path, clock):
    """Kafka's testRecoverTransactionIndex, testFullTransactionIndexRecovery and
    testRecoverLastSegmentWithNoSnapshots: with no snapshot and no .txnindex, recovery
    rebuilds the aborted transactions, their last stable offsets included."""
    log = create_log(tmp_path, clock)
    produce(log, OTHER, 0, 0, txn=True)
    produce(log, PID, 0, 0, txn=True)
    end_txn(log, PID, 0, commit=False)
    end_txn(log, OTHER, 0, commit=False)
    expected = [(t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset)
                for t in log.active_segment.txn_index.all_aborted_txns()]  # fmt: skip
    assert expected == [(PID, 1, 2, 0), (OTHER, 0, 3, 4)]
    log.crash()
    for path in log.dir.glob("*.txnindex"):
        path.unlink()
    for path in log.dir.glob("*.snapshot"):
        path.unlink()
    log = create_log(tmp_path, clock)
    rebuilt = [(t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset)
               for t in log.active_segment.txn_index.all_aborted_txns()]  # fmt: skip
    assert rebuilt == expected
    assert snapshot_offsets(log) == [4]
    log.close()


@pytest.mark.req("RECOV-19", "SNAP-B-2", "TXN-B-6")
def test_recover_only_last_segment(tmp_path, clock):
    """Kafka's testRecoverOnlyLastSegment: the snapshot at the last segment's base carries the
    transaction still open there, so the rebuilt entry's last stable offset is right."""
    log = create_log(tmp_path, clock)
    produce(log, OTHER, 0, 0, txn=True)  # 0: open across the roll
    produce(log, PID, 0, 0, txn=True)  # 1
    log.roll()
    produce(log, PID, 0, 1, txn=True)  # 2
    end_txn(log, PID, 0, commit=False)  # 3
    entry = log.active_segment.txn_index.all_aborted_txns()
    assert [(t.first_offset, t.last_offset, t.last_stable_offset) for t in entry] == [(1, 3, 0)]
    log.crash()
    (log.dir / f"{2:020d}.txnindex").unlink()
    log = create_log(tmp_path, clock)
    rebuilt = log.active_segment.txn_index.all_aborted_txns()
    assert [(t.first_offset, t.last_offset, t.last_stable_offset) for t in rebuilt] == [(1, 3, 0)]
    assert log.last_stable_offset == 0
    log.close()
