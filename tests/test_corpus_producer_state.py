"""The corpus's producer snapshots (../shared/kafka-corpus, see its SOURCES.md) load into the
state ``klogspec dump`` shows, and a corpus partition opened as a Log rebuilds its producer
state from its newest usable snapshot plus the batches after it.

Every partition directory holding a ``.snapshot`` is copied to a temporary directory first:
loading deletes and writes snapshots, and the corpus must never change (nor be copied into
the repository). The clock is set where no snapshot entry has expired (producer.id.expiration.ms
is a day; the corpus spans more), except in the check of PSTATE-10 itself.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from klogspec import cli
from reference_impl.formats.producer_snapshot import read_snapshot
from reference_impl.log.checkpoint_files import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
)
from reference_impl.log.clean_shutdown import CLEAN_SHUTDOWN_FILE
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.loader import LoadOptions
from reference_impl.log.producer_state_manager import (
    DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    ProducerStateManager,
)
from reference_impl.log.unified_log import Log
from reference_impl.records import iter_file_batches, parse_end_txn_marker

pytestmark = pytest.mark.corpus

EXPIRATION = DEFAULT_PRODUCER_ID_EXPIRATION_MS


@dataclass
class Expected:
    """One producer as a snapshot entry or the log says: what a loaded state must hold."""

    epoch: int
    last_seq: int = -1
    last_offset: int = -1
    offset_delta: int = 0
    timestamp: int = -1
    coordinator_epoch: int = -1
    txn_first_offset: int | None = None


def actual(entry) -> Expected:
    return Expected(
        entry.producer_epoch,
        entry.last_seq,
        entry.last_data_offset,
        entry.last_offset_delta,
        entry.last_timestamp,
        entry.coordinator_epoch,
        entry.current_txn_first_offset,
    )


def snapshot_offset(path: Path) -> int:
    return int(path.name.split(".")[0])


def snapshot_dirs(corpus: Path) -> list[Path]:
    return sorted({path.parent for path in corpus.rglob("*.snapshot")})


def dumped_entries(path: Path) -> list[dict]:
    result = CliRunner().invoke(cli.main, ["dump", "--json", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    return [e for e in events if e["type"] == "producer_snapshot_entry"]


def from_dump(entry: dict) -> Expected:
    has_batch = entry["lastOffset"] >= 0
    return Expected(
        entry["producerEpoch"],
        entry["lastSequence"] if has_batch else -1,
        entry["lastOffset"],
        entry["offsetDelta"] if has_batch else 0,
        entry["timestamp"],
        entry["coordinatorEpoch"],
        entry["currentTxnFirstOffset"] if entry["currentTxnFirstOffset"] >= 0 else None,
    )


def unexpired_at(entries: list[dict]) -> int:
    """A time at which none of ``entries`` has expired: a day after the oldest, less 1 ms."""
    stamps = [e["timestamp"] for e in entries if e["timestamp"] >= 0]
    return min(stamps) + EXPIRATION - 1 if stamps else 0


def is_expired(entry: dict, now: int) -> bool:
    """PSTATE-10: no transaction ongoing and idle for producer.id.expiration.ms."""
    return entry["currentTxnFirstOffset"] < 0 and now - entry["timestamp"] >= EXPIRATION


def load_snapshot(path: Path, into: Path, now: int) -> ProducerStateManager:
    """A ProducerStateManager over a copy of ``path`` alone, loaded by the load path:
    truncate_and_reload keeping only (offset - 1, offset]."""
    into.mkdir(parents=True)
    shutil.copy2(path, into / path.name)
    (into / path.name).chmod(0o644)
    psm = ProducerStateManager(into)
    offset = snapshot_offset(path)
    psm.truncate_and_reload(offset - 1, offset, now)
    return psm


@pytest.mark.req("SNAP-B-2", "SNAP-6", "SNAP-7", "PSTATE-1", "PSTATE-10")
def test_every_corpus_snapshot_loads_into_the_state_dump_shows(corpus, tmp_path):
    """Each snapshot file, loaded alone, gives exactly the producers dump --json lists: epoch,
    last batch (sequence, offset, delta, timestamp), coordinator epoch, ongoing transaction.
    Loaded a day after its newest entry instead, the idle producers are gone (PSTATE-10)."""
    files = entries = expired = 0
    for n, path in enumerate(sorted(corpus.rglob("*.snapshot"))):
        dumped = dumped_entries(path)
        files, entries = files + 1, entries + len(dumped)
        expected = {e["producerId"]: from_dump(e) for e in dumped}
        now = unexpired_at(dumped)
        psm = load_snapshot(path, tmp_path / f"a{n}" / path.parent.name, now)
        assert {pid: actual(entry) for pid, entry in psm.producers.items()} == expected, path
        assert psm.map_end_offset == snapshot_offset(path)
        for pid, entry in psm.producers.items():  # the snapshot's one batch, if any
            dump = next(e for e in dumped if e["producerId"] == pid)
            if dump["lastOffset"] >= 0:
                (batch,) = entry.batch_metadata
                assert (batch.first_seq, batch.first_offset) == (
                    dump["firstSequence"],
                    dump["lastOffset"] - dump["offsetDelta"],
                )
            else:
                assert not entry.batch_metadata
        assert {first: txn.producer_id for first, txn in psm.ongoing_txns.items()} == {
            e.txn_first_offset: pid for pid, e in expected.items() if e.txn_first_offset is not None
        }
        if dumped:  # PSTATE-10: at the newest entry's time, a day-old idle producer is dropped
            late = max(e["timestamp"] for e in dumped)
            psm = load_snapshot(path, tmp_path / f"b{n}" / path.parent.name, late)
            kept = {e["producerId"] for e in dumped if not is_expired(e, late)}
            assert set(psm.producers) == kept, path
            expired += len(dumped) - len(kept)
    # the corpus as SOURCES.md describes it: 67 snapshots, 3 of them with 9 producers in all;
    # loaded at their newest entry's time, input-topic-0's producers 0, 1 and 2 have expired
    assert (files, entries, expired) == (67, 9, 3)


# --- a corpus partition opened as a Log ---------------------------------------------------------


def apply_batch(state: dict[int, Expected], batch) -> None:
    """A follower's replay of one batch (PSTATE-3, PSTATE-8, TXN-B-2, TXN-B-3)."""
    entry = state.setdefault(batch.producer_id, Expected(epoch=-1))
    if entry.epoch != batch.producer_epoch:  # a new epoch forgets the old epoch's batches
        entry.epoch, entry.last_seq, entry.last_offset, entry.offset_delta = (
            batch.producer_epoch, -1, -1, 0,
        )  # fmt: skip
    if batch.is_control:
        records = batch.records()
        if not records:
            return
        marker = parse_end_txn_marker(records[0].key, records[0].value)
        entry.coordinator_epoch = marker.coordinator_epoch
        entry.txn_first_offset = None
        entry.timestamp = records[0].timestamp
        return
    entry.last_seq, entry.last_offset = batch.last_sequence, batch.last_offset
    entry.offset_delta = batch.last_offset - batch.base_offset
    entry.timestamp = batch.max_timestamp
    if entry.txn_first_offset is None and batch.is_transactional:
        entry.txn_first_offset = batch.base_offset


def batches_of(dir: Path) -> list:
    batches = []
    for path in sorted(dir.glob("*.log")):
        with open(path, "rb") as handle:
            batches.extend(iter_file_batches(handle))
    return batches


def copy_partition(dir: Path, tmp_path: Path) -> Path:
    """The partition directory and its log directory's offset checkpoints, writable."""
    root = tmp_path / dir.parent.name
    shutil.copytree(dir, root / dir.name)
    for name in (RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT):
        if (dir.parent / name).is_file():
            shutil.copy2(dir.parent / name, root / name)
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root / dir.name


@pytest.mark.req("SNAP-B-2", "SNAP-B-5", "PSTATE-8", "TXN-B-7", "RECOV-19")
def test_corpus_partitions_rebuild_producer_state_from_snapshot_and_log(corpus, tmp_path):
    """Each partition directory with snapshots and segments, opened as a Log (clean when its log
    directory has the clean-shutdown marker): the producers are those of the newest snapshot
    in (log start, LEO], with the batches after it replayed as a follower would; the LSO is the
    earliest open transaction's first offset, else the LEO; a snapshot is left at the LEO."""
    checked = producers = 0
    for n, dir in enumerate(snapshot_dirs(corpus)):
        if not any(dir.glob("*.log")):
            continue  # a KRaft metadata log whose segments the corpus does not hold
        copy = copy_partition(dir, tmp_path / f"p{n}")
        snapshots = {snapshot_offset(p): p for p in dir.glob("*.snapshot")}
        stamps = [e.timestamp for p in snapshots.values() for e in read_snapshot(p.read_bytes())]
        stamps = [t for t in stamps if t >= 0]
        now = min(stamps) + EXPIRATION - 1 if stamps else 0
        clean = (dir.parent / CLEAN_SHUTDOWN_FILE).exists()
        log = Log.open(
            copy, LogConfig(), ManualClock(now), load=LoadOptions(had_clean_shutdown=clean)
        )
        try:
            start, end = log.log_start_offset, log.log_end_offset
            usable = [offset for offset in snapshots if start < offset <= end]
            expected: dict[int, Expected] = {}
            replay_from = start
            if usable:  # SNAP-B-2, SNAP-B-5: the newest snapshot in (log start, LEO]
                replay_from = max(usable)
                for e in dumped_entries(snapshots[replay_from]):
                    expected[e["producerId"]] = from_dump(e)
            for batch in batches_of(dir):
                has_producer = batch.magic >= 2 and batch.producer_id >= 0
                if has_producer and batch.last_offset >= replay_from and batch.base_offset < end:
                    apply_batch(expected, batch)
            psm = log.producer_state_manager
            got = {pid: actual(entry) for pid, entry in psm.producers.items()}
            assert got == expected, dir
            open_txns = [
                e.txn_first_offset for e in expected.values() if e.txn_first_offset is not None
            ]
            assert log.last_stable_offset == min([*open_txns, end]), dir
            assert not list(copy.glob("*.txnindex")), dir  # the corpus has no aborted txn
            if end > start:  # SNAP-B-2: the load leaves a snapshot at the LEO
                at_end = read_snapshot((copy / f"{end:020d}.snapshot").read_bytes())
                assert {e.producer_id for e in at_end} == set(expected), dir
            checked += 1
            producers += len(expected)
        finally:
            log.close()
    # 42 partition directories hold snapshots; 2 (KRaft metadata) have no segments in the
    # corpus. myTopic-0's snapshot sits at its log start offset, so its 3 producers are not
    # loaded (SNAP-B-5); input-topic-0 has 5 from its snapshot and producer 3000 from its log,
    # the ksqlDB command topic 1 whose transaction its COMMIT marker closed
    assert (checked, producers) == (40, 7)
