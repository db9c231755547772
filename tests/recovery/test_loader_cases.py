"""The loader's own cases, beyond Kafka's tests: unreadable checkpoints, a corrupt .txnindex,
offsets that go back, what recovery cannot see, zeros after a clean shutdown."""

from __future__ import annotations

import pytest

from reference_impl.errors import Category, KafkaLogError
from reference_impl.formats.file_naming import (
    log_file_name,
    offset_index_file_name,
    time_index_file_name,
)
from reference_impl.log.config import LogConfig
from reference_impl.log.file_records import FileRecords
from reference_impl.log.load_events import LoadObserver, Reason
from reference_impl.records import iter_batches

from .support import (
    keyed_batch,
    keys_in_log,
    open_log,
    partition_dir,
    record,
    recovered,
    small_config,
)


def crashed_log(tmp_path, clock, n: int = 12, config: LogConfig | None = None):
    """A log of ``n`` keyed one-record batches in segments of 3, crashed."""
    log = open_log(
        tmp_path, clock, config or small_config(segment_bytes=250, index_interval_bytes=0)
    )
    for i in range(n):
        log.append_as_leader(keyed_batch(0, i), 0)
    log.crash()
    return log


@pytest.mark.req("LOAD-4")
def test_checkpoints_that_do_not_parse_read_as_zero(tmp_path, clock):
    log = crashed_log(tmp_path, clock)
    segments = log.number_of_segments
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n1\ntopic 0 not-a-number\n")
    (tmp_path / "log-start-offset-checkpoint").write_text("garbage")
    observer = LoadObserver()
    log = open_log(tmp_path, clock, clean=False, recovery_point=None, observer=observer)
    assert len(recovered(observer)) == segments  # recovery point 0: every segment
    assert log.log_start_offset == 0 and keys_in_log(log) == list(range(12))
    log.close()


@pytest.mark.req("LOAD-15", "RECOV-4")
def test_corrupt_transaction_index_recovers_the_segment(tmp_path, clock):
    from reference_impl.formats.file_naming import txn_index_file_name
    from reference_impl.formats.index_entries import AbortedTxn, encode_aborted_txn

    log = crashed_log(tmp_path, clock)
    base = log.log_segments()[1].base_offset
    txn = partition_dir(tmp_path) / txn_index_file_name(base)
    txn.write_bytes(encode_aborted_txn(AbortedTxn(7, 0, base - 1, base - 1)))  # below the base
    observer = LoadObserver()
    log = open_log(tmp_path, clock, clean=True, observer=observer)
    assert recovered(observer, Reason.CORRUPT_TXN_INDEX) == [log_file_name(base)]
    assert txn.stat().st_size == 0  # emptied; producer state would refill it
    log.close()


@pytest.mark.req("RECOV-6", "RECOV-5")
def test_offsets_that_go_back_empty_the_segment(tmp_path, clock):
    """A batch whose baseOffset (outside the CRC) points back: the rebuilt offset index would
    go back, so the segment is emptied and every later segment deleted. Met while loading (a
    segment without .index, LOAD-13), the same makes the load fail, as in Kafka."""
    dir = partition_dir(tmp_path)
    dir.mkdir(parents=True)
    first = FileRecords.open(dir / log_file_name(0))
    for offset in (0, 1, 2, 1):
        first.append(keyed_batch(offset, offset))
    first.close()
    second = FileRecords.open(dir / log_file_name(10))
    second.append(keyed_batch(10, 10))
    second.close()
    config = small_config(index_interval_bytes=0, file_delete_delay_ms=0)
    with pytest.raises(KafkaLogError) as raised:
        open_log(tmp_path, clock, config, clean=False)
    assert raised.value.category is Category.INVALID_OFFSET
    for base in (0, 10):
        (dir / offset_index_file_name(base)).touch()
        (dir / time_index_file_name(base)).touch()
    observer = LoadObserver()
    log = open_log(tmp_path, clock, config, clean=False, observer=observer)
    cuts = [(e.file.name, e.position, e.error) for e in observer.events if e.action == "truncate"]
    assert cuts == [(log_file_name(0), 0, "invalid_offset")]
    assert log.log_end_offset == 0 and log.number_of_segments == 1
    assert not (dir / log_file_name(10)).exists()
    log.close()


@pytest.mark.req("RECOV-2", "RECOV-7")
def test_what_recovery_does_not_see(tmp_path, clock):
    """baseOffset and partitionLeaderEpoch are outside the CRC: a changed base offset that no
    index entry meets stays (verify reports it, FRAME-13); a larger epoch enters the cache."""
    from klogspec.verify.run import verify_paths
    from reference_impl.records.batch import set_base_offset, set_partition_leader_epoch

    log = crashed_log(
        tmp_path, clock, config=small_config(segment_bytes=250, index_interval_bytes=10**6)
    )
    segment = log.log_segments()[1]
    raws = [b.raw for b in iter_batches(segment.log.file.read_bytes())]
    raws[1] = set_partition_leader_epoch(set_base_offset(raws[1], segment.base_offset + 2), 9)
    segment.log.file.write_bytes(b"".join(raws))
    log = open_log(tmp_path, clock, clean=False)
    assert log.log_end_offset == 12
    assert (9, segment.base_offset + 2) in [
        (e.epoch, e.start_offset) for e in log.leader_epoch_cache.epoch_entries()
    ]
    log.close()
    assert "FRAME-13" in {f.rule for f in verify_paths([tmp_path])}


@pytest.mark.req("LOAD-17", "FRAME-8")
@pytest.mark.parametrize("zeros", [17, 18, 64])
def test_zeros_after_a_clean_shutdown(tmp_path, clock, zeros):
    """A clean load reads the last segment's batches for its next offset but recovers
    nothing: 17 zero bytes or fewer end the scan quietly, more fail the load
    (``invalid_batch_size``), as in Kafka; ``klogspec recover`` cuts them."""
    from klogspec.recover.run import recover_partition

    log = open_log(tmp_path, clock, small_config(), clean=None)
    for i in range(3):
        log.append_as_leader(record(b"x%d" % i), 0)
    log.close()
    active = partition_dir(tmp_path) / log_file_name(0)
    size = active.stat().st_size
    active.write_bytes(active.read_bytes() + bytes(zeros))
    if zeros <= 17:
        log = open_log(tmp_path, clock, small_config(), clean=None)
        assert log.log_end_offset == 3 and log.active_segment.size == size + zeros
        log.crash()
        return
    with pytest.raises(KafkaLogError) as raised:
        open_log(tmp_path, clock, small_config(), clean=None)
    assert raised.value.category is Category.INVALID_BATCH_SIZE
    report = recover_partition(partition_dir(tmp_path), small_config())
    assert [(a.action, a.error) for a in report.plan.actions][:1] == [("truncate", "zero_tail")]
    assert open_log(tmp_path, clock, small_config(), clean=None).log_end_offset == 3
