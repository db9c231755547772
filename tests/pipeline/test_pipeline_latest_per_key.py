"""``extract --latest-per-key`` (pipeline/compacted.py) against the reference cleaner: on
generated compacted logs (transactions committed, aborted and open, tombstones on both
sides of their delete horizon, records without a key, several segments and partitions)
and on the corpus's compacted ``__consumer_offsets``, the records the Spark view keeps
are the records a complete cleaning by reference_impl's Cleaner leaves, with the same
delete horizons (COMPACT-10 to COMPACT-16)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.log_cleaner import Cleaner
from reference_impl.log.log_cleaner_manager import LogToClean, clean_once, cleanable_offsets
from reference_impl.log.log_validator import AppendOrigin
from reference_impl.log.unified_log import Log
from reference_impl.records import SimpleRecord, build_record_batch
from reference_impl.records.builder import build_control_batch
from reference_impl.records.control import ControlRecordType
from reference_impl.records.stream import iter_batches

T0 = 1_700_000_000_000
DAY = 86_400_000
COMPACT = {"cleanup_policy": "compact", "min_cleanable_dirty_ratio": 0.0, "segment_bytes": 400}
CORPUS = Path(os.environ.get("KLOGSPEC_CORPUS", "../shared/kafka-corpus"))


def complete_clean(partition: Path, config: LogConfig, now: int) -> set[tuple]:
    """What the reference's cleaner leaves after one pass over the whole log at ``now``
    with a map for every key: the active segment rolled first (so it is cleanable), the
    first dirty offset the log start, no dirty-ratio test (compaction.md §8)."""
    log = Log.open(partition, config, ManualClock(now))
    try:
        if log.active_segment.size:
            log.roll()
        offsets = cleanable_offsets(log, log.log_start_offset, now)
        to_clean = LogToClean.of(
            log, offsets.first_dirty_offset, offsets.first_uncleanable_dirty_offset
        )
        Cleaner(dedupe_buffer_size=64 << 20).clean(
            log, to_clean.first_dirty_offset, to_clean.first_uncleanable_offset, now
        )
        return {
            (r.offset, r.key, r.value, b.delete_horizon_ms)
            for s in log.log_segments()
            for b in iter_batches(s.log.read_bytes())
            for r in b.records()
        }
    finally:
        log.close()


def _put(log, pairs, **batch) -> None:
    records = [
        SimpleRecord(
            key=None if k is None else k.encode(),
            value=None if v is None else v.encode(),
            timestamp=log.clock.milliseconds(),
        )
        for k, v in pairs
    ]
    log.append_as_leader(build_record_batch(records, **batch), 0)
    log.clock.sleep(1000)


def _marker(log, kind: ControlRecordType, producer_id: int) -> None:
    control = build_control_batch(
        kind, producer_id=producer_id, producer_epoch=0, timestamp=log.clock.milliseconds()
    )
    log.append_as_leader(control, 0, AppendOrigin.COORDINATOR)
    log.clock.sleep(1000)


def _txn(producer_id: int, sequence: int) -> dict:
    return dict(
        producer_id=producer_id, producer_epoch=0, base_sequence=sequence, is_transactional=True
    )


def _table_partition(partition: Path) -> None:
    """Updates and tombstones; cleaned once at T0 + 30 s, so the first tombstones carry a
    horizon a day later, and written on after it (an aborted transaction among them); records without a key come from the
    days before the topic was compacted (COMPACT-3 refuses them now)."""
    log = Log.open(partition, LogConfig(segment_bytes=400), ManualClock(T0))
    _put(log, [(None, "before compaction"), ("k0", "v0")])
    log.close()
    log = Log.open(partition, LogConfig(**COMPACT), ManualClock(T0 + 2000))
    for i in range(12):
        _put(log, [(f"k{i % 5}", f"v{i}"), (f"k{i % 3}", None if i % 4 == 0 else f"w{i}")])
    log.clock.sleep(20_000)
    clean_once(log, Cleaner())  # stamps the horizon of the tombstones it keeps
    for i in range(6):
        _put(log, [(f"k{i % 4}", None if i == 2 else f"x{i}")])
        if i == 3:  # a transaction its coordinator aborts (COMPACT-14)
            # k2's latest committed record is older: only the abort removes this one
            _put(log, [("k2", "aborted"), ("k9", "aborted")], **_txn(11, 0))
            _marker(log, ControlRecordType.ABORT, 11)
    log.close()
    # a while under cleanup.policy=delete again: a record without a key, after the first pass
    log = Log.open(partition, LogConfig(segment_bytes=400), ManualClock(log.clock.milliseconds()))
    _put(log, [(None, "while not compacted"), ("k4", "y")])
    log.close()


def _transactions_partition(partition: Path) -> None:
    """A committed, an aborted and a still open transaction among plain and idempotent
    writes. A first pass removes producer 7's superseded first transaction and the aborted
    one, so their markers are spent and the complete cleaning stamps them (COMPACT-15);
    producer 8's second transaction is superseded too, but its batch stays empty as that
    producer's last (COMPACT-17), so its COMMIT is not spent."""
    log = Log.open(partition, LogConfig(**COMPACT), ManualClock(T0))
    _put(log, [("a", "1"), ("b", "1")])
    _put(log, [("a", "t7"), ("c", "t7")], **_txn(7, 0))
    _put(log, [("b", "idempotent")], producer_id=9, producer_epoch=0, base_sequence=0)
    _marker(log, ControlRecordType.COMMIT, 7)
    _put(log, [("a", "aborted"), ("d", "aborted")], **_txn(8, 0))
    _marker(log, ControlRecordType.ABORT, 8)
    _put(log, [("e", "t8")], **_txn(8, 2))
    _marker(log, ControlRecordType.COMMIT, 8)
    _put(log, [("e", "e2"), ("a", None), ("c", "c2")])  # producer 7's first transaction ...
    log.roll()  # (the open transaction below starts a segment: cleanings stop there)
    _put(log, [("f", "open")], **_txn(7, 2))  # (no marker yet: the last stable offset)
    clean_once(log, Cleaner())  # ... and the aborted one gone: their markers are spent
    _put(log, [("a", "after"), ("c", "after")])
    log.close()


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("latest-per-key") / "data"
    _table_partition(root / "table-0")
    _table_partition(root / "table-1")
    _transactions_partition(root / "table-2")
    return root


def _spark_kept(spark, root: Path, clean) -> set[tuple]:
    from pipeline.extract import read_latest_per_key

    frame = read_latest_per_key(spark, [str(root)], clean)
    return {
        (r.topic, r.partition, r.offset, r.key, r.value, r.delete_horizon_ms)
        for r in frame.select(
            "topic", "partition", "offset", "key", "value", "delete_horizon_ms"
        ).collect()
    }


def _reference_kept(root: Path, clean, config: dict) -> set[tuple]:
    copy = root.parent / f"reference-{clean.now_ms}-{clean.min_compaction_lag_ms}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy)
    kept = set()
    for partition in sorted(p for p in copy.iterdir() if p.is_dir()):
        topic, number = partition.name.rsplit("-", 1)
        settings = config | {
            "delete_retention_ms": clean.delete_retention_ms,
            "min_compaction_lag_ms": clean.min_compaction_lag_ms,
        }
        for row in complete_clean(partition, LogConfig(**settings), clean.now_ms):
            kept.add((topic, int(number), *row))
    return kept


@pytest.mark.parametrize(
    ("now", "lag"),
    [
        (T0 + DAY + 60_000, 0),  # the first pass's horizon has passed: its tombstones go
        (T0 + 40_000, 20_000),  # the horizon ahead; the newest segments too new to clean
    ],
    ids=["past-the-horizon", "min-compaction-lag"],
)
def test_latest_per_key_is_what_the_reference_cleaner_keeps(spark, generated, now, lag):
    from pipeline.compacted import CleanAt

    clean = CleanAt(now, delete_retention_ms=DAY, min_compaction_lag_ms=lag)
    expected = _reference_kept(generated, clean, COMPACT)
    got = _spark_kept(spark, generated, clean)
    assert got == expected, (sorted(got - expected), sorted(expected - got))
    # the data exercises the rules: aborted data and expired tombstones on disk, not kept
    written = _written(generated)
    aborted = {r for r in written if r[4] == b"aborted"}
    expired = {r for r in written if r[4] is None and r[5] is not None and r[5] <= now}
    assert aborted and bool(aborted & got) == (lag > 0)  # with the lag: in the uncleaned tail
    keyless = {r for r in written if r[3] is None}
    assert keyless and bool(keyless & got) == (lag > 0)
    assert bool(expired) == (lag == 0) and not expired & got
    assert any(v is None and h is not None for *_, v, h in got)  # a tombstone kept, stamped


def _written(root: Path) -> set[tuple]:
    """Every record on disk, as _spark_kept's rows (the horizon its batch has now)."""
    return {
        (partition.name.rsplit("-", 1)[0], int(partition.name.rsplit("-", 1)[1]), r.offset,
         r.key, r.value, b.delete_horizon_ms)
        for partition in root.iterdir()
        for segment in sorted(partition.glob("*.log"))
        for b in iter_batches(segment.read_bytes())
        for r in b.records()
    }  # fmt: skip


def test_latest_per_key_on_the_corpus_compacted_offsets(spark, tmp_path):
    """``kafka-2.7-compacted-offsets``: Kafka 2.7.1's cleaned ``__consumer_offsets``."""
    from pipeline.compacted import CleanAt

    source = CORPUS / "kafka-2.7-compacted-offsets"
    if not source.is_dir():
        pytest.skip(f"the corpus set {source} is absent (KLOGSPEC_CORPUS)")
    root = tmp_path / "data"
    shutil.copytree(source / "kafka-logs", root, ignore=_offsets_only)
    clean = CleanAt(T0 + 365 * DAY)
    expected = _reference_kept(root, clean, {"cleanup_policy": "compact"})
    got = _spark_kept(spark, root, clean)
    assert got == expected, (sorted(got - expected), sorted(expected - got))
    assert {p for _, p, *_ in got} >= {17, 28, 39}


def _offsets_only(directory, entries) -> list[str]:
    """The log directory's files and its ``__consumer_offsets`` partitions; not the rest."""
    here = Path(directory)
    return [e for e in entries if (here / e).is_dir() and not e.startswith("__consumer_offsets-")]


def test_latest_per_key_refuses_error_rows(tmp_path):
    """``--on-error report`` writes error rows, which have no key to compare: refused (exit 2)
    before Spark starts; a negative retention is refused too."""
    from click.testing import CliRunner

    from klogspec.cli import main
    from pipeline.compacted import CleanAt

    args = ["extract", str(tmp_path), "--out", str(tmp_path / "out"), "--latest-per-key"]
    result = CliRunner().invoke(main, [*args, "--on-error", "report"])
    assert result.exit_code == 2 and "--latest-per-key needs fail or skip" in result.output
    assert not (tmp_path / "out").exists()
    result = CliRunner().invoke(main, [*args, "--delete-retention-ms", "-1"])
    assert result.exit_code == 2
    with pytest.raises(ValueError, match="at least 0"):
        CleanAt(T0, delete_retention_ms=-5)
