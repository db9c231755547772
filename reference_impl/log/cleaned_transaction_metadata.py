"""What the cleaner knows of transactions while it walks a log: Kafka's CleanedTransactionMetadata
(spec/behaviour/compaction.md §3, COMPACT-14 to COMPACT-16).

[core/.../log/LogCleaner.scala CleanedTransactionMetadata, AbortedTransactionMetadata] The
cleaner reads batches in offset order. The aborted transactions of the range (from the
``.txnindex`` files) are fed in up front; as the walk passes an aborted transaction's
first offset, that producer's transactional batches count as aborted until its ABORT
marker. Aborted data is discarded; a marker is discardable once no batch of its
transaction is left (and, COMPACT-16, once its delete horizon has passed).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from ..formats.index_entries import AbortedTxn
from ..records.control import ControlRecordType, parse_control_key
from .transaction_index import TransactionIndex


@dataclass(slots=True)
class AbortedTransactionMetadata:
    aborted_txn: AbortedTxn
    last_observed_batch_offset: int | None = None


class CleanedTransactionMetadata:
    def __init__(self, cleaned_index: TransactionIndex | None = None) -> None:
        self.ongoing_committed_txns: set[int] = set()
        self.ongoing_aborted_txns: dict[int, AbortedTransactionMetadata] = {}
        self._aborted: list[tuple[int, int, AbortedTxn]] = []  # a min-heap by first offset
        self._added = 0
        # the cleaned segment's .txnindex: an aborted transaction with data left is re-indexed
        self.cleaned_index = cleaned_index

    def add_aborted_transactions(self, aborted: list[AbortedTxn]) -> None:
        for txn in aborted:
            heapq.heappush(self._aborted, (txn.first_offset, self._added, txn))
            self._added += 1

    def _consume_aborted_txns_up_to(self, offset: int) -> None:
        while self._aborted and self._aborted[0][0] <= offset:
            txn = heapq.heappop(self._aborted)[2]
            self.ongoing_aborted_txns.setdefault(txn.producer_id, AbortedTransactionMetadata(txn))

    def on_control_batch_read(self, batch) -> bool:
        """COMPACT-15: whether a control batch may be discarded: an ABORT marker once none of its
        transaction's batches is left (else its transaction goes into the cleaned
        ``.txnindex``), a COMMIT marker once the walk met none of its batches, an already
        emptied control batch always."""
        self._consume_aborted_txns_up_to(batch.last_offset)
        records = batch.records()
        if not records:
            return True  # an empty control batch was cleaned before
        control_type = parse_control_key(records[0].key)
        producer_id = batch.producer_id
        if control_type is ControlRecordType.ABORT:
            aborted = self.ongoing_aborted_txns.pop(producer_id, None)
            if aborted is not None and aborted.last_observed_batch_offset is not None:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(aborted.aborted_txn)
                return False
            return True
        if control_type is ControlRecordType.COMMIT:
            if producer_id in self.ongoing_committed_txns:
                self.ongoing_committed_txns.discard(producer_id)
                return False
            return True
        return False

    def on_batch_read(self, batch) -> bool:
        """COMPACT-14: whether a data batch belongs to an aborted transaction (and may go)."""
        self._consume_aborted_txns_up_to(batch.last_offset)
        if batch.magic < 2 or not batch.is_transactional:
            return False
        aborted = self.ongoing_aborted_txns.get(batch.producer_id)
        if aborted is not None:
            aborted.last_observed_batch_offset = batch.last_offset
            return True
        self.ongoing_committed_txns.add(batch.producer_id)
        return False
