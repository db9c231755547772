"""Producer state: one producer's entry and the checks an append makes against it
(spec/behaviour/producer-state.md §1-§3).

Kafka keeps, per producer id, what idempotence and transactions need
[ProducerStateEntry.java, ProducerAppendInfo.java, BatchMetadata.java]:

* the producer **epoch** (a newer epoch fences the older one);
* the **last five batches** (sequence range, last offset, timestamp): a retried batch
  whose sequence range matches one of them is a duplicate and is not written again;
* the **coordinator epoch** of the last transaction marker;
* the first offset of the **ongoing transaction**, if any.

An append builds a ``ProducerAppendInfo`` per producer id: it checks each batch against
the entry (leader appends only; replication trusts the leader) and collects the
updated entry, the transactions the batches start and the one a marker completes. The
``ProducerStateManager`` (producer_state_manager.py) applies it after the batch is
written.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from ..constants import INT32_MAX
from ..errors import Category, LogOperationError
from ..formats.producer_snapshot import ProducerSnapshotEntry
from ..records.control import ControlRecordType, parse_end_txn_marker
from ..records.record import decrement_sequence
from .log_validator import AppendOrigin

NUM_BATCHES_TO_RETAIN = 5  # PSTATE-2: Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1


def in_sequence(last_seq: int, next_seq: int) -> bool:
    """PSTATE-6: the next batch starts right after the last one (Int.MAX wraps to 0)."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


def has_producer_id(batch) -> bool:
    """RecordBatch.hasProducerId: a v2 batch with a producer id; legacy batches never."""
    return batch.magic >= 2 and batch.producer_id >= 0


class BatchMetadata(NamedTuple):
    """One of a producer's recent batches: its last sequence and offset, and how far
    back its first ones are (``offset_delta`` = lastOffset - firstOffset). A NamedTuple:
    recovery makes one per batch."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(frozen=True, slots=True)
class TxnMetadata:
    """A transaction seen in the log: its producer and first offset, and once a marker
    completes it, the marker's offset."""

    producer_id: int
    first_offset: int
    last_offset: int | None = None


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction a COMMIT or ABORT marker ended (the marker is at ``last_offset``)."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


@dataclass(slots=True)
class ProducerStateEntry:
    """PSTATE-1, PSTATE-2: what the log remembers of one producer id."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    current_txn_first_offset: int | None = None
    batch_metadata: deque[BatchMetadata] = field(default_factory=deque)

    # --- the last batch ---
    @property
    def is_empty(self) -> bool:
        return not self.batch_metadata

    @property
    def first_seq(self) -> int:
        return self.batch_metadata[0].first_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        return self.batch_metadata[-1].last_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batch_metadata[-1].last_offset if self.batch_metadata else -1

    @property
    def last_offset_delta(self) -> int:
        return self.batch_metadata[-1].offset_delta if self.batch_metadata else 0

    # --- changes ---
    def without_batches(self) -> ProducerStateEntry:
        """withProducerIdAndBatchMetadata(pid, empty): the scratch copy an append fills."""
        return ProducerStateEntry(
            self.producer_id,
            self.producer_epoch,
            self.coordinator_epoch,
            self.last_timestamp,
            self.current_txn_first_offset,
        )

    def maybe_update_producer_epoch(self, producer_epoch: int) -> None:
        """PSTATE-3: a new epoch forgets the old epoch's batches."""
        if self.producer_epoch != producer_epoch:
            self.batch_metadata.clear()
            self.producer_epoch = producer_epoch

    def add_batch(
        self,
        producer_epoch: int,
        last_seq: int,
        last_offset: int,
        offset_delta: int,
        timestamp: int,
    ) -> None:
        self.maybe_update_producer_epoch(producer_epoch)
        self._add_batch_metadata(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def _add_batch_metadata(self, batch: BatchMetadata) -> None:
        if len(self.batch_metadata) == NUM_BATCHES_TO_RETAIN:
            self.batch_metadata.popleft()
        self.batch_metadata.append(batch)

    def update(self, next_entry: ProducerStateEntry) -> None:
        """Merge an append's entry into this one: its epoch, batches, marker state."""
        self.maybe_update_producer_epoch(next_entry.producer_epoch)
        for batch in next_entry.batch_metadata:
            self._add_batch_metadata(batch)
        self.coordinator_epoch = next_entry.coordinator_epoch
        self.current_txn_first_offset = next_entry.current_txn_first_offset
        self.last_timestamp = next_entry.last_timestamp

    def end_transaction(self, producer_epoch: int, coordinator_epoch: int, timestamp: int) -> None:
        """A marker: no transaction is ongoing any more (Kafka's update(epoch, ce, ts))."""
        self.maybe_update_producer_epoch(producer_epoch)
        self.coordinator_epoch = coordinator_epoch
        self.current_txn_first_offset = None
        self.last_timestamp = timestamp

    def find_duplicate_batch(self, batch) -> BatchMetadata | None:
        """PSTATE-4: a batch of the current epoch whose exact sequence range is one of the
        retained batches."""
        if batch.producer_epoch != self.producer_epoch:
            return None
        first, last = batch.base_sequence, batch.last_sequence
        for metadata in self.batch_metadata:
            if metadata.first_seq == first and metadata.last_seq == last:
                return metadata
        return None

    # --- snapshots (SNAP-6, SNAP-7) ---
    def to_snapshot_entry(self) -> ProducerSnapshotEntry:
        """Only the last batch is kept, as in Kafka's writeSnapshot."""
        return ProducerSnapshotEntry(
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            last_sequence=self.last_seq,
            last_offset=self.last_data_offset,
            offset_delta=self.last_offset_delta,
            timestamp=self.last_timestamp,
            coordinator_epoch=self.coordinator_epoch,
            current_txn_first_offset=(
                -1 if self.current_txn_first_offset is None else self.current_txn_first_offset
            ),
        )

    @classmethod
    def from_snapshot_entry(cls, entry: ProducerSnapshotEntry) -> ProducerStateEntry:
        batches = deque()
        if entry.has_batch_metadata:
            batches.append(
                BatchMetadata(
                    entry.last_sequence, entry.last_offset, entry.offset_delta, entry.timestamp
                )
            )
        return cls(
            entry.producer_id,
            entry.producer_epoch,
            entry.coordinator_epoch,
            entry.timestamp,
            entry.current_txn_first_offset if entry.has_ongoing_transaction else None,
            batches,
        )


def _refuse(category: Category, message: str, offset: int) -> LogOperationError:
    return LogOperationError(category, message, offset=offset)


class ProducerAppendInfo:
    """The state one append builds for one producer id, checked batch by batch
    (PSTATE-5 to PSTATE-9, TXN-B-1 to TXN-B-4) [ProducerAppendInfo.java].

    Transaction verification (KIP-890) is not modelled: the log has no coordinator to
    ask, as with ``transaction.partition.verification.enable=false``.
    """

    def __init__(
        self, producer_id: int, current_entry: ProducerStateEntry, origin: AppendOrigin
    ) -> None:
        self.producer_id = producer_id
        self.current_entry = current_entry
        self.origin = origin
        self.updated_entry = current_entry.without_batches()
        self.started_transactions: list[TxnMetadata] = []

    def append(self, batch) -> CompletedTxn | None:
        """One batch: a transaction marker, or a data batch."""
        if batch.is_control:
            records = batch.records()
            if not records:
                return None  # the whole transaction was cleaned away: nothing to end
            record = records[0]
            marker = parse_end_txn_marker(record.key, record.value)
            return self.append_end_txn_marker(
                marker.control_type,
                marker.coordinator_epoch,
                batch.producer_epoch,
                batch.base_offset,
                record.timestamp,
            )
        self.append_data_batch(
            batch.producer_epoch,
            batch.base_sequence,
            batch.last_sequence,
            batch.max_timestamp,
            batch.base_offset,
            batch.last_offset,
            batch.is_transactional,
        )
        return None

    def append_data_batch(
        self,
        epoch: int,
        first_seq: int,
        last_seq: int,
        last_timestamp: int,
        first_offset: int,
        last_offset: int,
        is_transactional: bool,
    ) -> None:
        """PSTATE-5 to PSTATE-7, TXN-B-1, TXN-B-2."""
        self._check_producer_epoch(epoch, first_offset)
        if self.origin is AppendOrigin.CLIENT:
            self._check_sequence(epoch, first_seq, first_offset)
        self.updated_entry.add_batch(
            epoch, last_seq, last_offset, last_offset - first_offset, last_timestamp
        )
        ongoing = self.updated_entry.current_txn_first_offset
        if ongoing is not None and not is_transactional:
            raise _refuse(
                Category.INVALID_TXN_STATE,
                f"expected a transactional write from producer {self.producer_id} at offset "
                f"{first_offset}: its transaction from offset {ongoing} is ongoing",
                first_offset,
            )
        if ongoing is None and is_transactional:
            self.updated_entry.current_txn_first_offset = first_offset
            self.started_transactions.append(TxnMetadata(self.producer_id, first_offset))

    def append_end_txn_marker(
        self,
        control_type: ControlRecordType,
        coordinator_epoch: int,
        producer_epoch: int,
        offset: int,
        timestamp: int,
    ) -> CompletedTxn | None:
        """TXN-B-3, TXN-B-4: a COMMIT or ABORT ends the ongoing transaction; a marker with
        none ongoing completes nothing (it cannot change the last stable offset)."""
        self._check_producer_epoch(producer_epoch, offset)
        self._check_coordinator_epoch(coordinator_epoch, offset)
        first = self.updated_entry.current_txn_first_offset
        completed = None
        if first is not None:
            aborted = control_type is ControlRecordType.ABORT
            completed = CompletedTxn(self.producer_id, first, offset, aborted)
        self.updated_entry.end_transaction(producer_epoch, coordinator_epoch, timestamp)
        return completed

    # --- the checks ---
    def _check_producer_epoch(self, producer_epoch: int, offset: int) -> None:
        """PSTATE-5: an older epoch is fenced; replication only logs it in Kafka."""
        if producer_epoch < self.updated_entry.producer_epoch and (
            self.origin is not AppendOrigin.REPLICATION
        ):
            raise _refuse(
                Category.INVALID_PRODUCER_EPOCH,
                f"epoch of producer {self.producer_id} at offset {offset} is {producer_epoch}, "
                f"which is smaller than the last seen epoch {self.updated_entry.producer_epoch}",
                offset,
            )

    def _check_sequence(self, producer_epoch: int, first_seq: int, offset: int) -> None:
        """PSTATE-6, PSTATE-7: a new epoch starts at sequence 0 (unless the producer is
        unknown); the same epoch continues right after the last sequence (unless the
        producer's state was lost to retention: no epoch known)."""
        updated = self.updated_entry
        if producer_epoch != updated.producer_epoch:
            if first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise _refuse(
                    Category.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"invalid sequence number {first_seq} for the new epoch {producer_epoch} "
                    f"of producer {self.producer_id} at offset {offset} (current epoch "
                    f"{updated.producer_epoch}): a new epoch starts at 0",
                    offset,
                )
            return
        if not updated.is_empty:
            last_seq = updated.last_seq
        elif producer_epoch == self.current_entry.producer_epoch:
            last_seq = self.current_entry.last_seq
        else:
            last_seq = NO_SEQUENCE
        unknown = self.current_entry.producer_epoch == NO_PRODUCER_EPOCH
        if not (unknown or in_sequence(last_seq, first_seq)):
            raise _refuse(
                Category.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"out of order sequence number for producer {self.producer_id} at offset "
                f"{offset}: {first_seq} (incoming), {last_seq} (current end sequence)",
                offset,
            )

    def _check_coordinator_epoch(self, coordinator_epoch: int, offset: int) -> None:
        """TXN-B-4: a marker from an older coordinator is a zombie's."""
        if self.updated_entry.coordinator_epoch > coordinator_epoch and (
            self.origin is not AppendOrigin.REPLICATION
        ):
            raise _refuse(
                Category.TRANSACTION_COORDINATOR_FENCED,
                f"invalid coordinator epoch for producer {self.producer_id} at offset {offset}: "
                f"{coordinator_epoch} (zombie), {self.updated_entry.coordinator_epoch} (current)",
                offset,
            )
