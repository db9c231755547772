"""reference_impl/log/storage.py: every file operation of the log goes through the current
storage, and only there. A log's whole life (appends, rolls, flushes, a truncation, retention,
the log start offset, a compaction pass, a close, a crash and an unclean reload) run over a
storage that keeps the files in memory leaves the directory on disk as it found it: a file
operation that bypassed the seam would show there (and a dry run of ``klogspec recover``
would then write into the partition it plans for)."""

from __future__ import annotations

from pathlib import Path

import pytest

from klogspec.recover.recording import RecordingStorage
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.loader import LoadOptions
from reference_impl.log.log_cleaner import Cleaner
from reference_impl.log.log_cleaner_manager import clean_once
from reference_impl.log.storage import OS, storage, using
from reference_impl.log.unified_log import Log
from reference_impl.records import SimpleRecord, build_record_batch


def _batch(key: int, epoch: int = 0) -> bytes:
    record = SimpleRecord(b"value-%d" % key, str(key % 5).encode(), timestamp=1000 + key)
    return build_record_batch([record], partition_leader_epoch=epoch)


def _keys(log: Log) -> list[int]:
    return [int(r.value.split(b"-")[1]) for s in log.log_segments() for b in s.log.batches()
            for r in b.records()]  # fmt: skip


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_log_over_another_storage_leaves_the_disk_alone(tmp_path):
    dir = tmp_path / "logs" / "topic-0"
    dir.mkdir(parents=True)
    (dir.parent / "recovery-point-offset-checkpoint").write_bytes(b"0\n1\ntopic 0 0\n")
    before = _tree(tmp_path)
    config = LogConfig(segment_bytes=300, index_interval_bytes=1, segment_index_bytes=4096,
                       file_delete_delay_ms=0, retention_bytes=900, cleanup_policy=("compact", "delete"))  # fmt: skip
    clock = ManualClock(10_000)
    layer = RecordingStorage()
    with using(layer):
        log = Log.open(dir, config, clock)
        for key in range(30):
            log.append_as_leader(_batch(key, key // 10), key // 10)
            clock.sleep(10)
        log.flush()
        assert log.number_of_segments > 3
        assert clean_once(log, Cleaner()).cleaned  # .cleaned, .swap, .deleted, a checkpoint
        log.truncate_to(25)
        log.maybe_increment_log_start_offset(3)
        log.delete_old_segments()
        log.close()
        log = Log.open(dir, config, clock)  # clean: the marker the close wrote, in memory
        kept = _keys(log)
        log.append_as_leader(_batch(99, 3), 3)
        log.crash()
        load = LoadOptions(had_clean_shutdown=False, recovery_point=0, index_sanity_check=True)
        log = Log.open(dir, config, clock, load=load)
        assert _keys(log) == [*kept, 99] and kept[-1] == 24
        log.close()
    layer.close()
    assert _tree(tmp_path) == before
    assert len(layer.created) > 10  # the segments, indexes, checkpoints, snapshots, marker


def test_using_switches_the_storage_for_its_block_only(tmp_path):
    layer = RecordingStorage()
    assert storage() is OS
    with using(layer) as current:
        assert storage() is current is layer
        channel = storage().open_channel(tmp_path / "f")
    assert storage() is OS
    channel.write_at(b"kept in memory", 0)  # a channel keeps the storage that opened it
    assert channel.read_at(0, 100) == b"kept in memory" and not (tmp_path / "f").exists()
    with pytest.raises(ZeroDivisionError), using(layer):
        raise ZeroDivisionError
    assert storage() is OS


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts /proc/self/fd (Linux)")
def test_a_log_nobody_closes_gives_its_descriptors_back(tmp_path):
    """A log dropped without ``close`` or ``crash`` (as many tests drop theirs, and a
    killed process would): its channels, collected, give their descriptors back, or a long
    run (the test suite) ends at the process's limit of open files."""
    import gc
    import os

    def open_descriptors() -> int:
        return len(os.listdir("/proc/self/fd"))

    before = open_descriptors()
    for _ in range(3):
        log = Log.open(tmp_path / "topic-0", LogConfig(segment_bytes=300), ManualClock(0))
        for key in range(10):
            log.append_as_leader(_batch(key), leader_epoch=0)
        assert open_descriptors() > before
        del log
        gc.collect()
    assert open_descriptors() == before
