"""Appending to a log (spec/behaviour/append.md, producer-state.md §2-§3): Kafka's
UnifiedLog.append, appendAsLeader, appendAsFollower and analyzeAndValidateProducerState
[core/.../log/UnifiedLog.scala].

An append is checked whole before anything changes (APPEND-1): the batches' framing,
sizes and CRCs (log_validator.py), a leader's offsets and timestamps, the set's size
against ``segment_bytes``, then each producer's sequences and epochs against its state
(producer_state.py). Only then may the log roll (roll.py), the epoch cache learn the
batches' epochs and the active segment take the bytes; the producer state is applied
after the write, and ``flush_messages`` may flush. ``LogAppend`` is mixed into ``Log``
(unified_log.py).
"""

from __future__ import annotations

from .. import _speedups
from ..errors import Category, InvalidArgumentError, LogOperationError
from ..records import TimestampType
from .log_validator import (
    AppendOrigin,
    LogAppendInfo,
    analyze_and_validate_records,
    assign_offsets_as_leader,
    iter_memory_batches,
)
from .producer_state import BatchMetadata, CompletedTxn, ProducerAppendInfo, has_producer_id
from .producer_state_rebuild import update_producers
from .segment import LogSegment

_lean_append = None  # the compiled path of a client's common batch, below


class LogAppend:
    """Mixed into ``Log``: the two appends and their producer-state steps."""

    def append_as_leader(
        self, records: bytes, leader_epoch: int, origin: AppendOrigin = AppendOrigin.CLIENT
    ) -> LogAppendInfo:
        """APPEND-5 to APPEND-17: a client's batch, given offsets from the LEO and stamped with ``leader_epoch``.
        ``origin`` COORDINATOR is the transaction coordinator writing a marker (TXN-B-5)."""
        return self._append(records, origin, True, leader_epoch, False)

    def append_as_follower(self, records: bytes) -> LogAppendInfo:
        """APPEND-9, APPEND-18, APPEND-19: batches that keep their offsets, which must increase and start at or
        after the LEO (gaps allowed); ``max.message.bytes`` is not checked."""
        return self._append(records, AppendOrigin.REPLICATION, False, -1, True)

    def _append(
        self,
        records: bytes,
        origin: AppendOrigin,
        assign_offsets: bool,
        leader_epoch: int,
        ignore_record_size: bool,
    ) -> LogAppendInfo:
        self._begin()
        lean = assign_offsets and origin is AppendOrigin.CLIENT and not self.config.compact
        if _lean_append is not None and lean:
            info = _lean_append(self, records, leader_epoch)  # None: nothing done, not common
            if info is not None:
                return info
        info = analyze_and_validate_records(
            records,
            origin=origin,
            ignore_record_size=ignore_record_size,
            require_offsets_monotonic=not assign_offsets,
            max_message_bytes=self.config.max_message_bytes,
            log_start_offset=self.log_start_offset,
        )
        if info.valid_bytes <= 0:
            return info  # an empty set (or only a partial batch) writes and rolls nothing
        valid = records[: info.valid_bytes]  # a partial batch at the end is dropped
        if assign_offsets:
            valid = self._assign_offsets(info, valid, leader_epoch, origin)
        elif info.first_or_last_offset_of_first_batch < self.log_end_offset:
            first = next(iter_memory_batches(valid)).base_offset  # a legacy wrapper decompresses
            raise LogOperationError(
                Category.UNEXPECTED_APPEND_OFFSET,
                f"first offset (or, for a legacy batch, its last offset) "
                f"{info.first_or_last_offset_of_first_batch} is less than the next offset "
                f"{self.log_end_offset}; the append holds offsets {first} to {info.last_offset}",
                offset=first,
            )
        # APPEND-20, APPEND-21 come before any change; Kafka makes them after updating the
        # epoch cache, so a refused set can leave an epoch entry (append.md §1, Deviation)
        batches = list(iter_memory_batches(valid))
        for batch in batches:
            if batch.magic >= 2 and batch.partition_leader_epoch < 0:
                raise InvalidArgumentError(
                    f"a batch at offset {batch.base_offset} carries the negative leader epoch "
                    f"{batch.partition_leader_epoch} into the epoch cache",
                    offset=batch.base_offset,
                )
        if len(valid) > self.config.segment_bytes:
            raise LogOperationError(
                Category.RECORD_BATCH_TOO_LARGE,
                f"message batch size is {len(valid)} bytes, which exceeds the maximum configured "
                f"segment size of {self.config.segment_bytes}",
            )
        # LEPOCH-5: the epoch cache learns each v2 batch's epoch; a legacy batch empties it
        for batch in batches:
            if batch.magic >= 2:
                self.leader_epoch_cache.assign(batch.partition_leader_epoch, batch.base_offset)
            elif self.leader_epoch_cache.epoch_entries():
                self.leader_epoch_cache.clear_and_flush()
        segment = self.maybe_roll(len(valid), info)
        producers, completed, duplicate = self._analyze_and_validate_producer_state(batches, origin)
        if duplicate is not None:  # PSTATE-4: the earlier batch's offsets, nothing written
            info.first_offset, info.last_offset = duplicate.first_offset, duplicate.last_offset
            info.log_append_time = duplicate.timestamp
            info.log_start_offset = self.log_start_offset
            return info
        self.local_log.append(info.last_offset, valid)
        self._update_producer_state(segment, producers, completed, info.last_offset)
        if self.log_end_offset - self.recovery_point >= self.config.flush_messages:
            self._flush(self.log_end_offset, including_offset=False)
        return info

    def _assign_offsets(
        self, info: LogAppendInfo, records: bytes, leader_epoch: int, origin: AppendOrigin
    ) -> bytes:
        """APPEND-10 to APPEND-17: a leader's set given offsets from the LEO and stamped
        (log_validator.py); ``info`` takes its offsets and timestamps. Returns the bytes
        to write."""
        result = assign_offsets_as_leader(
            records,
            next_offset=self.log_end_offset,
            now=self.clock.milliseconds(),
            timestamp_type=self.config.message_timestamp_type,
            leader_epoch=leader_epoch,
            origin=origin,
            compacted_topic=self.config.compact,
        )
        info.first_offset = self.log_end_offset
        info.last_offset = result.last_offset
        info.max_timestamp = result.max_timestamp
        info.shallow_offset_of_max_timestamp = result.shallow_offset_of_max_timestamp
        if self.config.message_timestamp_type is TimestampType.LOG_APPEND_TIME:
            info.log_append_time = result.log_append_time
        return result.validated_records

    def _analyze_and_validate_producer_state(
        self, batches: list, origin: AppendOrigin
    ) -> tuple[dict[int, ProducerAppendInfo], list[CompletedTxn], BatchMetadata | None]:
        """PSTATE-4 to PSTATE-9: check each batch with a producer id against its producer's
        state; a client's retry of a recent batch is a duplicate. Nothing changes yet."""
        producers: dict[int, ProducerAppendInfo] = {}
        completed: list[CompletedTxn] = []
        psm = self.producer_state_manager
        for batch in batches:
            if not has_producer_id(batch):
                continue
            if origin is AppendOrigin.CLIENT:
                entry = psm.last_entry(batch.producer_id)
                duplicate = entry.find_duplicate_batch(batch) if entry else None
                if duplicate is not None:
                    return producers, completed, duplicate
            txn = update_producers(psm, batch, producers, origin)
            if txn is not None:
                completed.append(txn)
        return producers, completed, None

    def _update_producer_state(
        self,
        segment: LogSegment,
        producers: dict[int, ProducerAppendInfo],
        completed: list[CompletedTxn],
        last_offset: int,
    ) -> None:
        """After the write: apply the producers' state, index aborted transactions with the
        last stable offset of the moment (TXN-B-5, TXN-B-6), move the map end offset."""
        psm = self.producer_state_manager
        for append_info in producers.values():
            psm.update(append_info)
        for txn in completed:
            segment.update_txn_index(txn, psm.last_stable_offset(txn))
            psm.complete_txn(txn)
        psm.update_map_end_offset(last_offset + 1)
        self._update_high_watermark()


# The compiled path of a client's common batch (issue 14), unless pure Python:
# _compiled_append.py
if _speedups.kernels is not None:
    from ._compiled_append import append_client_batch as _lean_append  # noqa: F811
