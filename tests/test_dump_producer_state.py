"""``klogspec dump`` on the producer snapshots and transaction indexes the reference log
writes: an idempotent producer, an aborted and a committed transaction, a transaction
still open at a roll and at close. Every field dump prints must be what was written.

Kafka's DumpLogSegments prints, per ``.txnindex`` entry, version, producerId, firstOffset,
lastOffset and lastStableOffset; per ``.snapshot`` entry, producerId, producerEpoch,
coordinatorEpoch, currentTxnFirstOffset, lastTimestamp and (with batch metadata)
firstSequence, lastSequence, lastOffset, offsetDelta, timestamp
(kafka-storage-facts.md §7.2). A snapshot keeps one timestamp per producer, which Kafka's
reader gives both as ``lastTimestamp`` and as the batch's ``timestamp``: dump's
``timestamp`` is that value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from klogspec import cli
from reference_impl.log.clock import ManualClock
from reference_impl.log.config import LogConfig
from reference_impl.log.loader import LoadOptions
from reference_impl.log.log_validator import AppendOrigin
from reference_impl.log.unified_log import Log
from reference_impl.records import ControlRecordType, SimpleRecord, build_record_batch
from reference_impl.records.builder import build_control_batch

T0 = 1_700_000_000_000
IDEMPOTENT, ABORTING, COMMITTING, MARKER_ONLY = 100, 200, 300, 400


class Writer:
    """A log and the timestamps of what was appended, by offset."""

    def __init__(self, dir: Path) -> None:
        self.clock = ManualClock(T0)
        self.log = Log.open(
            dir, LogConfig(), self.clock, load=LoadOptions(had_clean_shutdown=False)
        )
        self.timestamps: dict[int, int] = {}

    def data(self, pid: int, epoch: int, seq: int, count: int = 1, txn: bool = False) -> int:
        self.clock.sleep(7)
        now = self.clock.milliseconds()
        raw = build_record_batch(
            [SimpleRecord(value=b"v%d" % i, timestamp=now - count + i + 1) for i in range(count)],
            producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=txn,
        )  # fmt: skip
        info = self.log.append_as_leader(raw, 0)
        self.timestamps[info.last_offset] = now  # the batch's max timestamp
        return info.first_offset

    def marker(self, kind: ControlRecordType, pid: int, epoch: int, coordinator_epoch: int) -> int:
        self.clock.sleep(11)
        now = self.clock.milliseconds()
        raw = build_control_batch(
            kind, producer_id=pid, producer_epoch=epoch, coordinator_epoch=coordinator_epoch,
            timestamp=now,
        )  # fmt: skip
        info = self.log.append_as_leader(raw, 0, AppendOrigin.COORDINATOR)
        self.timestamps[info.first_offset] = now
        return info.first_offset


def dump_json(*paths: Path) -> list[dict]:
    result = CliRunner().invoke(
        cli.main, ["dump", "--json", *map(str, paths)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def dump_text(*paths: Path) -> str:
    result = CliRunner().invoke(cli.main, ["dump", *map(str, paths)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def snapshot_entry(pid, epoch, last_seq, last_offset, delta, timestamp, coord=-1, txn_first=-1):
    return {
        "producerId": pid, "producerEpoch": epoch, "lastSequence": last_seq,
        "lastOffset": last_offset, "offsetDelta": delta, "timestamp": timestamp,
        "coordinatorEpoch": coord, "currentTxnFirstOffset": txn_first,
        "firstSequence": None if last_offset < 0 else last_seq - delta,
    }  # fmt: skip


@pytest.fixture
def written(tmp_path):
    """The scenario; returns the partition directory, the writer and the expected entries."""
    dir = tmp_path / "txns-0"
    w = Writer(dir)
    assert w.data(IDEMPOTENT, 0, 0, count=3) == 0
    assert w.data(IDEMPOTENT, 0, 3, count=2) == 3
    assert w.data(ABORTING, 1, 0, count=2, txn=True) == 5
    assert w.data(COMMITTING, 0, 0, txn=True) == 7
    assert w.log.roll().base_offset == 8  # both transactions open in 8.snapshot
    assert w.marker(ControlRecordType.ABORT, ABORTING, 1, 3) == 8
    assert w.data(IDEMPOTENT, 0, 5) == 9
    assert w.marker(ControlRecordType.COMMIT, COMMITTING, 0, 3) == 10
    assert w.data(ABORTING, 1, 2, txn=True) == 11
    assert w.marker(ControlRecordType.ABORT, ABORTING, 1, 3) == 12
    assert w.marker(ControlRecordType.COMMIT, MARKER_ONLY, 2, 4) == 13  # no transaction: no batch
    assert w.log.roll().base_offset == 14
    assert w.data(COMMITTING, 0, 1, txn=True) == 14  # open at close: in 15.snapshot
    w.log.close()
    ts = w.timestamps
    after_first_roll = [
        snapshot_entry(IDEMPOTENT, 0, 4, 4, 1, ts[4]),
        snapshot_entry(ABORTING, 1, 1, 6, 1, ts[6], txn_first=5),
        snapshot_entry(COMMITTING, 0, 0, 7, 0, ts[7], txn_first=7),
    ]
    after_second_roll = [
        snapshot_entry(IDEMPOTENT, 0, 5, 9, 0, ts[9]),
        snapshot_entry(ABORTING, 1, 2, 11, 0, ts[12], coord=3),  # the ABORT's timestamp
        snapshot_entry(COMMITTING, 0, 0, 7, 0, ts[10], coord=3),  # the COMMIT's
        snapshot_entry(MARKER_ONLY, 2, -1, -1, 0, ts[13], coord=4),
    ]
    at_close = [
        *after_second_roll[:2],
        snapshot_entry(COMMITTING, 0, 1, 14, 0, ts[14], coord=3, txn_first=14),
        after_second_roll[3],
    ]
    snapshots = {8: after_first_roll, 14: after_second_roll, 15: at_close}
    # TXN-B-6: the first ABORT's LSO is the other open transaction's first offset (7); the
    # second has none open besides its own: the marker's offset + 1
    aborted = {
        8: [
            {"version": 0, "producerId": ABORTING, "firstOffset": 5, "lastOffset": 8,
             "lastStableOffset": 7},
            {"version": 0, "producerId": ABORTING, "firstOffset": 11, "lastOffset": 12,
             "lastStableOffset": 13},
        ]
    }  # fmt: skip
    return dir, snapshots, aborted


@pytest.mark.req("SNAP-B-1", "TXN-B-5", "TXN-B-6", "SNAP-6", "SNAP-7")
def test_dump_json_shows_the_snapshots_and_txn_indexes_written(written):
    dir, snapshots, aborted = written
    assert sorted(p.name for p in dir.glob("*.snapshot")) == [
        f"{offset:020d}.snapshot" for offset in snapshots
    ]
    assert sorted(p.name for p in dir.glob("*.txnindex")) == ["00000000000000000008.txnindex"]
    for offset, expected in snapshots.items():
        path = dir / f"{offset:020d}.snapshot"
        events = dump_json(path)
        entries = [e for e in events if e["type"] == "producer_snapshot_entry"]
        assert [{k: v for k, v in e.items() if k not in ("file", "type")} for e in entries] == (
            expected
        ), offset
        (summary,) = [e for e in events if e["type"] == "summary"]
        assert summary["kind"] == "producer_snapshot" and summary["endOffset"] == offset
        assert summary["entries"] == len(expected) and summary["ok"]
        assert summary["sizeBytes"] == path.stat().st_size == 10 + 46 * len(expected)
    for base, expected in aborted.items():
        path = dir / f"{base:020d}.txnindex"
        events = dump_json(path)
        entries = [e for e in events if e["type"] == "txn_index_entry"]
        assert [{k: v for k, v in e.items() if k not in ("file", "type")} for e in entries] == (
            expected
        )
        (summary,) = [e for e in events if e["type"] == "summary"]
        assert (summary["baseOffset"], summary["entries"], summary["ok"]) == (base, 2, True)
        assert summary["sizeBytes"] == 34 * len(expected)


def test_dump_of_the_directory_shows_the_same_entries(written):
    """Walking the partition directory reaches every snapshot and txn index, in offset order."""
    dir, snapshots, aborted = written
    events = dump_json(dir)
    found_snapshots = [
        Path(e["file"]).name for e in events if e["type"] == "producer_snapshot_entry"
    ]
    assert found_snapshots == [
        f"{offset:020d}.snapshot" for offset, entries in snapshots.items() for _ in entries
    ]
    txns = [e for e in events if e["type"] == "txn_index_entry"]
    assert [(e["producerId"], e["firstOffset"], e["lastOffset"]) for e in txns] == [
        (a["producerId"], a["firstOffset"], a["lastOffset"]) for a in aborted[8]
    ]


def test_dump_text_prints_every_field(written):
    """The aligned text output: one row per entry with the columns in the header's order."""
    dir, snapshots, aborted = written
    for offset, expected in snapshots.items():
        lines = dump_text(dir / f"{offset:020d}.snapshot").splitlines()
        header = lines[1].split()
        assert header == [
            "producerId", "epoch", "firstSeq", "lastSeq", "lastOffset", "offsetDelta",
            "timestamp", "coordEpoch", "txnFirstOffset",
        ]  # fmt: skip
        rows = [line.split() for line in lines[2 : 2 + len(expected)]]
        keys = [
            "producerId", "producerEpoch", "firstSequence", "lastSequence", "lastOffset",
            "offsetDelta", "timestamp", "coordinatorEpoch", "currentTxnFirstOffset",
        ]  # fmt: skip
        assert rows == [["-" if e[k] is None else str(e[k]) for k in keys] for e in expected]
        assert f"{len(expected)} entries" in lines[2 + len(expected)]
    lines = dump_text(dir / "00000000000000000008.txnindex").splitlines()
    keys = ["version", "producerId", "firstOffset", "lastOffset", "lastStableOffset"]
    assert lines[1].split() == keys
    assert [line.split() for line in lines[2:4]] == [[str(a[k]) for k in keys] for a in aborted[8]]
