"""Recovering one segment (spec/behaviour/recovery.md §4): Kafka's LogSegment.recover and
LogSegment.updateProducerState.

After a crash a segment's ``.log`` may end with a torn batch, garbage or a
preallocated zero tail, and its indexes may be stale [LogSegment.recover]. Recovery
trusts only the ``.log``: it rebuilds both indexes from it, batch by batch, and
cuts the file after the last batch that passes the checks. Records inside a batch
are not parsed; a batch is valid when its framing, size and CRC are.

``SegmentRecovery`` is mixed into ``LogSegment`` (segment.py): its methods read and
change the segment's own files, as Kafka's do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import CorruptRecordError
from ..formats.index_entries import TimestampOffset
from .log_validator import AppendOrigin
from .producer_state import has_producer_id

PARTIAL_BATCH = "partial_batch"  # the bytes after the last whole entry are a partial one
ZERO_TAIL = "zero_tail"  # ... or zeros (a preallocated file, RECOV-3)
_CHUNK = 1 << 20

if TYPE_CHECKING:
    from .leader_epoch import LeaderEpochFileCache
    from .producer_state_manager import ProducerStateManager


class SegmentRecovery:
    """Mixed into ``LogSegment``: recovery of the segment's own files."""

    def recover(
        self,
        leader_epoch_cache: LeaderEpochFileCache | None = None,
        producer_state_manager: ProducerStateManager | None = None,
        *,
        before_truncate: Callable[[int, str | None], None] | None = None,
    ) -> int:
        """RECOV-2 to RECOV-4, RECOV-7, INDEX-8: rebuild the indexes from the .log and truncate
        it at the first invalid batch; returns the number of bytes truncated.

        Per batch from position 0: the framing rules, ``ensure_valid`` (size and CRC) and
        the offset range (``offset_overflow`` propagates: the loader must split the
        segment). The index rule runs per batch on batch positions (an entry when more
        than ``index.interval.bytes`` lie between this batch and the last indexed one),
        so a rebuilt index can differ from the one appends made. v2 batches with a newer
        leader epoch than the cache's latest add an epoch entry. Given a
        ``producer_state_manager``, each v2 batch is replayed into it and the aborted
        transactions it completes are indexed again (RECOV-19).

        ``before_truncate(position, why)``, when given, is called before bytes are cut:
        ``why`` is ``zero_tail`` when they are all zeros, else the category of the entry
        that failed, else ``partial_batch``.
        """
        self.offset_index.reset()
        self.time_index.reset()
        self.txn_index.reset()
        valid_bytes = 0
        last_index_entry = 0
        failure: str | None = None
        self.max_timestamp_and_offset_so_far = None
        try:
            for batch in self.log.batches():
                batch.ensure_valid()
                self.ensure_offset_in_range(batch.last_offset)
                if batch.max_timestamp > self.max_timestamp_so_far:
                    self.max_timestamp_and_offset_so_far = TimestampOffset(
                        batch.max_timestamp, batch.last_offset
                    )
                if valid_bytes - last_index_entry > self.index_interval_bytes:
                    self.offset_index.append(batch.last_offset, valid_bytes)
                    self.time_index.maybe_append(
                        self.max_timestamp_so_far, self.shallow_offset_of_max_timestamp_so_far
                    )
                    last_index_entry = valid_bytes
                valid_bytes += batch.size_in_bytes
                if batch.magic >= 2 and leader_epoch_cache is not None:
                    epoch = batch.partition_leader_epoch
                    latest = leader_epoch_cache.latest_epoch()
                    if epoch >= 0 and (latest is None or epoch > latest):
                        leader_epoch_cache.assign(epoch, batch.base_offset)
                if batch.magic >= 2 and producer_state_manager is not None:
                    self.update_producer_state(producer_state_manager, batch)
        except CorruptRecordError as exc:
            # Kafka: a CorruptRecordException or InvalidRecordException ends the scan
            failure = exc.category.value
        truncated = self.log.size - valid_bytes
        if truncated and before_truncate is not None:
            before_truncate(valid_bytes, self._tail_kind(valid_bytes, failure))
        self.log.truncate_to(valid_bytes)
        if truncated:
            self.log.set_last_modified(self.clock.milliseconds())
        self.offset_index.trim_to_valid_size()
        # a cleanly closed segment ends with its max timestamp; recovery writes it too
        self.time_index.maybe_append(
            self.max_timestamp_so_far, self.shallow_offset_of_max_timestamp_so_far, True
        )
        self.time_index.trim_to_valid_size()
        return truncated

    def update_producer_state(self, psm: ProducerStateManager, batch) -> None:
        """RECOV-19: recovery replays each v2 batch into the state and re-indexes the aborted
        transactions it completes (LogSegment.updateProducerState)."""
        if has_producer_id(batch) and not psm.replay_data_batch(batch):
            info = psm.prepare_update(batch.producer_id, AppendOrigin.REPLICATION)
            completed = info.append(batch)
            psm.update(info)
            if completed is not None:
                self.update_txn_index(completed, psm.last_stable_offset(completed))
                psm.complete_txn(completed)
        psm.update_map_end_offset(batch.last_offset + 1)

    def _tail_kind(self, position: int, failure: str | None) -> str:
        """What the bytes cut off are: zeros (whatever stopped the scan: 17 zero bytes or more
        read as an entry of size 0), else the failure, else a partial entry. Read in chunks,
        as a preallocated tail can be a whole segment's worth of zeros."""
        end = self.log.size
        while position < end:
            chunk = self.log.slice(position, min(_CHUNK, end - position)).read_bytes()
            if chunk.strip(b"\0"):
                return failure or PARTIAL_BATCH
            position += len(chunk)
        return ZERO_TAIL
