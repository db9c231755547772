"""Recovering one segment (spec/behaviour/recovery.md §4): Kafka's LogSegment.recover.

After a crash a segment's ``.log`` may end with a torn batch, garbage or a
preallocated zero tail, and its indexes may be stale [LogSegment.recover]. Recovery
trusts only the ``.log``: it rebuilds both indexes from it, batch by batch, and
cuts the file after the last batch that passes the checks. Records inside a batch
are not parsed; a batch is valid when its framing, size and CRC are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from . import _speedups
from .errors import CorruptRecordError
from .index import TimestampOffset
from .producer_state_rebuild import update_producer_state

PARTIAL_BATCH = "partial_batch"  # the bytes after the last whole entry are a partial one
ZERO_TAIL = "zero_tail"  # ... or zeros (a preallocated file, RECOV-3)
_CHUNK = 1 << 20

if TYPE_CHECKING:
    from .leader_epoch import LeaderEpochFileCache
    from .producer_state_manager import ProducerStateManager
    from .segment import LogSegment


def recover_segment(
    segment: LogSegment,
    leader_epoch_cache: LeaderEpochFileCache | None = None,
    before_truncate: Callable[[int, str | None], None] | None = None,
    *,
    producer_state_manager: ProducerStateManager | None = None,
) -> int:
    """RECOV-2 to RECOV-4, RECOV-7, INDEX-8: rebuild ``segment``'s indexes from its .log and truncate it at the first invalid
    batch; returns the number of bytes truncated.

    Per batch from position 0: the framing rules, ``ensure_valid`` (size and CRC) and
    the offset range (``offset_overflow`` propagates: the loader must split the
    segment). The index rule runs per batch on batch positions (an entry when more
    than ``index.interval.bytes`` lie between this batch and the last indexed one),
    so a rebuilt index can differ from the one appends made. v2 batches with a newer
    leader epoch than the cache's latest add an epoch entry. Given a
    ``producer_state_manager``, each v2 batch is replayed into it and the aborted
    transactions it completes are indexed again (RECOV-19).

    ``before_truncate(position, why)``, when given, is called before bytes are cut: ``why``
    is ``zero_tail`` when they are all zeros, else the category of the entry that failed,
    else ``partial_batch``.
    """
    segment.offset_index.reset()
    segment.time_index.reset()
    segment.txn_index.reset()
    segment.max_timestamp_and_offset_so_far = None
    valid_bytes, failure = _recover_batches(segment, leader_epoch_cache, producer_state_manager)
    truncated = segment.log.size - valid_bytes
    if truncated and before_truncate is not None:
        before_truncate(valid_bytes, _tail_kind(segment, valid_bytes, failure))
    segment.log.truncate_to(valid_bytes)
    if truncated:
        segment.log.set_last_modified(segment.clock.milliseconds())
    segment.offset_index.trim_to_valid_size()
    # a cleanly closed segment ends with its max timestamp; recovery writes it too
    segment.time_index.maybe_append(
        segment.max_timestamp_so_far, segment.shallow_offset_of_max_timestamp_so_far, True
    )
    segment.time_index.trim_to_valid_size()
    return truncated


def _recover_batches(
    segment: LogSegment,
    leader_epoch_cache: LeaderEpochFileCache | None,
    producer_state_manager: ProducerStateManager | None,
) -> tuple[int, str | None]:
    """The batch loop of ``recover_segment``: every batch from position 0 until one fails
    (Kafka: a CorruptRecordException or InvalidRecordException ends the scan). Returns the
    bytes of the valid batches and the failing entry's category (None: none failed)."""
    valid_bytes = last_index_entry = 0
    try:
        for batch in segment.log.batches():
            last_index_entry = recover_batch(segment, batch, valid_bytes, last_index_entry)
            valid_bytes += batch.size_in_bytes  # counted even if what follows fails
            learn_batch(segment, batch, leader_epoch_cache, producer_state_manager)
    except CorruptRecordError as exc:
        return valid_bytes, exc.category.value
    return valid_bytes, None


def recover_batch(segment: LogSegment, batch, position: int, last_index_entry: int) -> int:
    """One batch of LogSegment.recover at ``position``: size and CRC (``ensure_valid``), the
    offset range, the running max timestamp and the index rule (INDEX-8). Returns where
    the last index entry now points."""
    batch.ensure_valid()
    segment.ensure_offset_in_range(batch.last_offset)
    if batch.max_timestamp > segment.max_timestamp_so_far:
        segment.max_timestamp_and_offset_so_far = TimestampOffset(
            batch.max_timestamp, batch.last_offset
        )
    if position - last_index_entry > segment.index_interval_bytes:
        segment.offset_index.append(batch.last_offset, position)
        segment.time_index.maybe_append(
            segment.max_timestamp_so_far, segment.shallow_offset_of_max_timestamp_so_far
        )
        last_index_entry = position
    return last_index_entry


def learn_batch(
    segment: LogSegment,
    batch,
    leader_epoch_cache: LeaderEpochFileCache | None,
    producer_state_manager: ProducerStateManager | None,
) -> None:
    """What a valid v2 batch teaches: a newer leader epoch (LEPOCH) and its producer's
    state (RECOV-19)."""
    if batch.magic >= 2 and leader_epoch_cache is not None:
        epoch = batch.partition_leader_epoch
        latest = leader_epoch_cache.latest_epoch()
        if epoch >= 0 and (latest is None or epoch > latest):
            leader_epoch_cache.assign(epoch, batch.base_offset)
    if batch.magic >= 2 and producer_state_manager is not None:
        update_producer_state(producer_state_manager, segment, batch)


def _tail_kind(segment: LogSegment, position: int, failure: str | None) -> str:
    """What the bytes cut off are: zeros (whatever stopped the scan: 17 zero bytes or more
    read as an entry of size 0), else the failure, else a partial entry. Read in chunks, as
    a preallocated tail can be a whole segment's worth of zeros."""
    end = segment.log.size
    while position < end:
        chunk = segment.log.slice(position, min(_CHUNK, end - position)).read_bytes()
        if chunk.strip(b"\0"):
            return failure or PARTIAL_BATCH
        position += len(chunk)
    return ZERO_TAIL


# The compiled batch walk (issue 14), unless pure Python: reference_impl/_speedups.
if _speedups.kernels is not None:
    from ._speedups.recovery_run import recover_batches as _compiled_recover_batches

    _readable_recover_batches, _recover_batches = _recover_batches, _compiled_recover_batches
