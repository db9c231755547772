"""The producer state of a partition and its ``.snapshot`` files
(spec/behaviour/producer-state.md §4-§6) [ProducerStateManager.java].

It maps producer ids to their ``ProducerStateEntry``, keeps the transactions in
progress (ordered by first offset: the first one bounds the last stable offset) and
those completed but not yet replicated, and its **map end offset**: the offset up to
which the log's batches have been applied. ``take_snapshot`` writes the state to
``<map end offset>.snapshot`` (a name is the exclusive end offset it covers, NAME-5),
so a restart reads the newest snapshot and re-applies only the batches after it.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import CorruptSnapshotError, InvalidFileNameError
from ..formats.file_naming import (
    DELETED_FILE_SUFFIX,
    PRODUCER_SNAPSHOT_FILE_SUFFIX,
    producer_snapshot_file_name,
)
from ..formats.producer_snapshot import read_snapshot, write_snapshot
from .log_validator import AppendOrigin
from .producer_state import CompletedTxn, ProducerAppendInfo, ProducerStateEntry, TxnMetadata
from .storage import storage

DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000  # producer.id.expiration.ms, a broker config


def list_snapshot_files(dir: Path) -> dict[int, Path]:
    """Every ``<offset>.snapshot`` file in ``dir`` by offset (``.deleted`` ones are not)."""
    found: dict[int, Path] = {}
    if not storage().is_dir(dir):
        return found
    for path in storage().files(dir):
        if path.name.endswith(PRODUCER_SNAPSHOT_FILE_SUFFIX):
            prefix = path.name.split(".", 1)[0]
            if not prefix.isdigit():  # Kafka's offsetFromFile: NumberFormatException
                raise InvalidFileNameError(f"{path.name} has no offset in its name", file=str(path))
            found[int(prefix)] = path
    return found


class ProducerStateManager:
    def __init__(
        self,
        dir: Path,
        producer_id_expiration_ms: int = DEFAULT_PRODUCER_ID_EXPIRATION_MS,
    ) -> None:
        self.dir = Path(dir)
        self.producer_id_expiration_ms = producer_id_expiration_ms
        self.producers: dict[int, ProducerStateEntry] = {}
        self.ongoing_txns: dict[int, TxnMetadata] = {}  # by first offset
        self.unreplicated_txns: dict[int, TxnMetadata] = {}  # completed, by first offset
        self.snapshots = list_snapshot_files(self.dir)
        self.last_map_offset = 0
        self.last_snap_offset = 0

    # --- state ---
    @property
    def map_end_offset(self) -> int:
        return self.last_map_offset

    def update_map_end_offset(self, offset: int) -> None:
        self.last_map_offset = offset

    def is_empty(self) -> bool:
        return not self.producers and not self.unreplicated_txns

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self.producers.get(producer_id)

    def first_unstable_offset(self) -> int | None:
        """TXN-B-7: the first offset of the earliest transaction not yet decided or not yet
        replicated."""
        return min([*self.ongoing_txns, *self.unreplicated_txns], default=None)

    # --- applying appends ---
    def prepare_update(self, producer_id: int, origin: AppendOrigin) -> ProducerAppendInfo:
        current = self.producers.get(producer_id) or ProducerStateEntry(producer_id)
        return ProducerAppendInfo(producer_id, current, origin)

    def update(self, append_info: ProducerAppendInfo) -> None:
        """Apply an append's checked state: the entry and the transactions it started."""
        entry = self.producers.get(append_info.producer_id)
        if entry is None:
            self.producers[append_info.producer_id] = append_info.updated_entry
        else:
            entry.update(append_info.updated_entry)
        for txn in append_info.started_transactions:
            self.ongoing_txns[txn.first_offset] = txn

    def last_stable_offset(self, completed: CompletedTxn) -> int:
        """TXN-B-6: the LSO an aborted transaction is indexed with: the first offset of the
        earliest transaction of another producer still in progress, else the offset
        after the marker."""
        for first_offset in sorted(self.ongoing_txns):
            if self.ongoing_txns[first_offset].producer_id != completed.producer_id:
                return first_offset
        return completed.last_offset + 1

    def complete_txn(self, completed: CompletedTxn) -> None:
        txn = self.ongoing_txns.pop(completed.first_offset, None)
        if txn is None:
            raise ValueError(f"transaction {completed} was never started")
        self.unreplicated_txns[completed.first_offset] = TxnMetadata(
            txn.producer_id, txn.first_offset, completed.last_offset
        )

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        self._remove_unreplicated_transactions(high_watermark)

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        """SNAP-B-8: transactions ended below the new start are forgotten; the map end
        offset is raised to it."""
        self._remove_unreplicated_transactions(log_start_offset)
        if self.last_map_offset < log_start_offset:
            self.last_map_offset = log_start_offset
        latest = self.latest_snapshot_offset()
        self.last_snap_offset = log_start_offset if latest is None else latest

    def _remove_unreplicated_transactions(self, offset: int) -> None:
        for first, txn in list(self.unreplicated_txns.items()):
            if txn.last_offset is not None and txn.last_offset < offset:
                del self.unreplicated_txns[first]

    # --- expiration ---
    def _is_expired(self, now: int, entry: ProducerStateEntry) -> bool:
        """PSTATE-10: idle for ``producer.id.expiration.ms`` with no transaction open. Only a
        snapshot load applies it: Kafka's periodic expiration is not modelled."""
        return (
            entry.current_txn_first_offset is None
            and now - entry.last_timestamp >= self.producer_id_expiration_ms
        )

    # --- snapshots (SNAP-B) ---
    def latest_snapshot_offset(self) -> int | None:
        return max(self.snapshots, default=None)

    def take_snapshot(self, sync: bool = True) -> Path | None:
        """SNAP-B-1: write ``<map end offset>.snapshot`` if the state moved past the last
        snapshot; every producer, in id order (Kafka's order is its hash map's)."""
        if self.last_map_offset <= self.last_snap_offset:
            return None
        path = self.dir / producer_snapshot_file_name(self.last_map_offset)
        entries = [self.producers[pid].to_snapshot_entry() for pid in sorted(self.producers)]
        storage().write_file(path, write_snapshot(entries), sync=sync)
        self.snapshots[self.last_map_offset] = path
        self.last_snap_offset = self.last_map_offset
        return path

    def remove_stray_snapshots(self, segment_base_offsets: list[int]) -> None:
        """SNAP-B-4: a snapshot not at a segment base is stray: all but the largest are
        deleted, and that one too if it is below the largest base."""
        self.snapshots = list_snapshot_files(self.dir)
        bases = set(segment_base_offsets)
        strays = sorted(offset for offset in self.snapshots if offset not in bases)
        for offset in strays[:-1]:
            self._remove_and_delete_snapshot(offset)
        if strays and bases and strays[-1] < max(bases):
            self._remove_and_delete_snapshot(strays[-1])

    def truncate_and_reload(self, log_start_offset: int, log_end_offset: int, now: int) -> None:
        """SNAP-B-5, SNAP-B-6: delete the snapshots outside (logStart, logEnd]; unless the
        state already ends at ``log_end_offset``, reload it from the newest snapshot left."""
        for offset in list(self.snapshots):
            if offset > log_end_offset or offset <= log_start_offset:
                self._remove_and_delete_snapshot(offset)
        if log_end_offset != self.map_end_offset:
            self.producers.clear()
            self.ongoing_txns.clear()
            self.unreplicated_txns.clear()
            self._load_from_snapshot(log_start_offset, now)
        else:
            self.on_log_start_offset_incremented(log_start_offset)

    def _load_from_snapshot(self, log_start_offset: int, now: int) -> None:
        """SNAP-B-6, PSTATE-10: the newest snapshot that reads; a corrupt one is deleted and the
        next newest tried. Expired producers are not loaded."""
        while self.snapshots:
            offset = max(self.snapshots)
            try:
                entries = read_snapshot(storage().read_file(self.snapshots[offset]))
            except (CorruptSnapshotError, OSError):
                self._remove_and_delete_snapshot(offset)
                continue
            for snapshot_entry in entries:
                entry = ProducerStateEntry.from_snapshot_entry(snapshot_entry)
                if not self._is_expired(now, entry):
                    self.load_producer_entry(entry)
            self.last_snap_offset = self.last_map_offset = offset
            return
        self.last_snap_offset = self.last_map_offset = log_start_offset

    def load_producer_entry(self, entry: ProducerStateEntry) -> None:
        self.producers[entry.producer_id] = entry
        if entry.current_txn_first_offset is not None:
            first = entry.current_txn_first_offset
            self.ongoing_txns[first] = TxnMetadata(entry.producer_id, first)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """SNAP-B-7: forget every producer and delete every snapshot."""
        self.producers.clear()
        self.ongoing_txns.clear()
        self.unreplicated_txns.clear()
        for snapshot_offset in list(self.snapshots):
            self._remove_and_delete_snapshot(snapshot_offset)
        self.last_snap_offset = 0
        self.last_map_offset = offset

    def remove_and_mark_snapshot_for_deletion(self, offset: int) -> Path | None:
        """SNAP-B-8: a deleted segment's snapshot is renamed ``.deleted``, to go with it."""
        path = self.snapshots.pop(offset, None)
        if path is None or not storage().exists(path):
            return None
        target = path.with_name(path.name + DELETED_FILE_SUFFIX)
        storage().rename(path, target)
        return target

    def _remove_and_delete_snapshot(self, offset: int) -> None:
        path = self.snapshots.pop(offset, None)
        if path is not None:
            storage().unlink(path, missing_ok=True)
