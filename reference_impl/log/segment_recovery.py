"""Recovering one segment (spec/behaviour/recovery.md §4): Kafka's LogSegment.recover and
LogSegment.updateProducerState [storage/.../log/LogSegment.java].

After a crash a segment's ``.log`` may end with a torn batch, garbage or a
preallocated zero tail, and its indexes may be stale [LogSegment.recover]. Recovery
trusts only the ``.log``: it rebuilds both indexes from it, batch by batch, and
cuts the file after the last batch that passes the checks. Records inside a batch
are not parsed; a batch is valid when its framing, size and CRC are.

``LogSegment.recover`` (segment.py) resets the segment's indexes, runs this module's walk
and cuts the ``.log``. The walk, batch by batch, is ``RecoveryScanner``, and
``recover_batch`` what each batch adds to the segment's indexes, the leader epoch cache
and the producer state. When the compiled kernels are built,
``recover_batches`` is their walk (_compiled_recovery.py): it takes the runs of clean
batches and hands every other batch to the same ``take`` and ``recover_batch``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Protocol

from .. import kernels
from ..errors import CorruptRecordError
from ..formats.index_entries import TimestampOffset
from ..records import Batch
from ..records.record import NO_TIMESTAMP
from .log_validator import AppendOrigin
from .producer_state import has_producer_id

PARTIAL_BATCH = "partial_batch"  # the bytes after the last whole entry are a partial one
ZERO_TAIL = "zero_tail"  # ... or zeros (a preallocated file, RECOV-3)
_CHUNK = 1 << 20

if TYPE_CHECKING:
    from .leader_epoch import LeaderEpochFileCache
    from .offset_index import OffsetIndex
    from .producer_state import CompletedTxn
    from .producer_state_manager import ProducerStateManager
    from .time_index import TimeIndex


class RecoveringSegment(Protocol):
    """What ``recover_batch`` reads and writes of the segment it recovers (segment.py's
    LogSegment)."""

    offset_index: OffsetIndex
    time_index: TimeIndex
    max_timestamp_and_offset_so_far: TimestampOffset | None

    def ensure_offset_in_range(self, offset: int) -> None: ...

    def update_txn_index(self, completed_txn: CompletedTxn, last_stable_offset: int) -> None: ...


class RecoveryScanner:
    """LogSegment.recover's walk over a ``.log`` (RECOV-2, INDEX-8): iterate it for each batch
    that frames and passes ``ensure_valid``, with the position it starts at and whether it
    gets an index entry (more than ``index_interval_bytes`` lie between it and the last
    indexed batch: positions of batches, not of appends).

    A framing or validity error ends the walk by propagating (the caller records it as the
    failure). Meanwhile ``valid_bytes`` is where the batches yielded so far end (the caller
    cuts the file there) and ``max_timestamp`` the largest batch maxTimestamp so far, with
    that batch's last offset (the time index's entry).
    """

    def __init__(self, batches: Iterable[Batch], base_offset: int, index_interval_bytes: int):
        self._batches = batches
        self.index_interval_bytes = index_interval_bytes
        self.valid_bytes = 0
        self.last_index_entry = 0  # the position of the last indexed batch
        self.max_timestamp = TimestampOffset(NO_TIMESTAMP, base_offset)

    def __iter__(self) -> Iterator[tuple[Batch, int, bool]]:
        for batch in self._batches:
            position, indexed = self.take(batch)
            yield batch, position, indexed

    def take(self, batch: Batch) -> tuple[int, bool]:
        """The next batch, at ``valid_bytes``: its checks, the max timestamp and the index
        rule. Returns its position and whether it gets an index entry."""
        batch.ensure_valid()
        if batch.max_timestamp > self.max_timestamp.timestamp:
            self.max_timestamp = TimestampOffset(batch.max_timestamp, batch.last_offset)
        position = self.valid_bytes
        indexed = position - self.last_index_entry > self.index_interval_bytes
        if indexed:
            self.last_index_entry = position
        self.valid_bytes += batch.size_in_bytes  # counted even if what the caller does fails
        return position, indexed


def new_leader_epoch(batch: Batch, latest_epoch: int | None) -> int | None:
    """RECOV-7: the epoch a batch adds to the leader epoch cache in recovery: a v2 batch's
    partition leader epoch when it is >= 0 and above the cache's latest; else None."""
    epoch = batch.partition_leader_epoch if batch.magic >= 2 else -1
    return epoch if epoch >= 0 and (latest_epoch is None or epoch > latest_epoch) else None


def tail_kind(read: Callable[[int, int], bytes], position: int, end: int, failure: str | None):
    """What the bytes a recovery cuts off are: zeros (whatever stopped the scan: 17 zero bytes
    or more read as an entry of size 0), else the failure, else a partial entry.
    ``read(position, size)`` reads the file; chunks, as a preallocated tail can be a whole
    segment's worth of zeros."""
    while position < end:
        chunk = read(position, min(_CHUNK, end - position))
        if chunk.strip(b"\0"):
            return failure or PARTIAL_BATCH
        position += len(chunk)
    return ZERO_TAIL


def recover_batch(
    segment: RecoveringSegment,
    scanner: RecoveryScanner,
    batch: Batch,
    position: int,
    indexed: bool,
    leader_epoch_cache: LeaderEpochFileCache | None,
    producer_state_manager: ProducerStateManager | None,
) -> None:
    """What ``LogSegment.recover`` does with a batch the scanner took at ``position``: the
    offset range, the max timestamp, its index entries (INDEX-8), a newer leader epoch
    (RECOV-7) and its producer's state (RECOV-19)."""
    segment.ensure_offset_in_range(batch.last_offset)
    segment.max_timestamp_and_offset_so_far = scanner.max_timestamp
    if indexed:
        segment.offset_index.append(batch.last_offset, position)
        segment.time_index.maybe_append(*scanner.max_timestamp)
    if leader_epoch_cache is not None:
        epoch = new_leader_epoch(batch, leader_epoch_cache.latest_epoch())
        if epoch is not None:
            leader_epoch_cache.assign(epoch, batch.base_offset)
    if batch.magic >= 2 and producer_state_manager is not None:
        update_producer_state(segment, producer_state_manager, batch)


def update_producer_state(segment: RecoveringSegment, psm: ProducerStateManager, batch) -> None:
    """RECOV-19: recovery replays each v2 batch into the state and re-indexes the aborted
    transactions it completes in ``segment`` (LogSegment.updateProducerState)."""
    if has_producer_id(batch):
        info = psm.prepare_update(batch.producer_id, AppendOrigin.REPLICATION)
        completed = info.append(batch)
        psm.update(info)
        if completed is not None:
            segment.update_txn_index(completed, psm.last_stable_offset(completed))
            psm.complete_txn(completed)
    psm.update_map_end_offset(batch.last_offset + 1)


def recover_batches(
    segment: RecoveringSegment,
    scanner: RecoveryScanner,
    leader_epoch_cache: LeaderEpochFileCache | None,
    producer_state_manager: ProducerStateManager | None,
) -> str | None:
    """The batch loop of ``recover``: every batch the scanner takes from position 0 until one
    fails. Returns the failing entry's category (None: none failed)."""
    cache, psm = leader_epoch_cache, producer_state_manager
    try:
        for batch, position, indexed in scanner:
            recover_batch(segment, scanner, batch, position, indexed, cache, psm)
    except CorruptRecordError as exc:
        # Kafka: a CorruptRecordException or InvalidRecordException ends the scan
        return exc.category.value
    return None


# The compiled batch walk (issue 14), unless pure Python: _compiled_recovery.py, on the
# kernels of reference_impl/kernels.
if kernels.recovery is not None:
    from ._compiled_recovery import recover_batches as _compiled_recover_batches

    readable_recover_batches = recover_batches
    recover_batches = functools.partial(_compiled_recover_batches, recover_batch=recover_batch)
