"""``recover_batches`` (segment_recovery.py) with the compiled batch walk
(``recover_clean_batches`` of reference_impl/kernels, the compiled ``recovery`` kernel): Kafka's
LogSegment.recover (LogSegment.java) of spec/behaviour/recovery.md §4, faster.

``kernels.recovery.recover_clean_batches`` takes the runs of batches whose recovery is only
bookkeeping (valid, in range, index entries that append, no new leader epoch, no
producer or a known producer's plain data batch) a window at a time; this module applies
what a run collected (the index entries, one ``pwrite`` per index; the last five batches
of each known producer, which is all ``ProducerStateEntry`` keeps; the map end offset)
and the scanner's state after the run, and gives every other batch to the readable
``RecoveryScanner.take`` and ``segment_recovery.recover_batch``. The result, files included,
is the readable loop's (tests/test_speedups.py).
"""

from __future__ import annotations

from .. import kernels
from ..errors import CorruptRecordError
from ..formats.index_entries import TimestampOffset
from ..records.record import increment_sequence
from ..records.stream import CHUNK_SIZE, HEADER_SIZE_UP_TO_MAGIC, BatchScanner

APPLY_BYTES = 1 << 20  # index entries a run collects before they are written


def recover_batches(segment, scanner, leader_epoch_cache, producer_state_manager, recover_batch):
    """What ``segment_recovery.recover_batches`` returns, and does, faster; ``recover_batch``
    (segment_recovery's) takes each batch that is not clean."""
    log = segment.log
    source = log.file_source()
    end, name = log.size, str(log.file)
    cache, psm = leader_epoch_cache, producer_state_manager
    try:
        while True:
            _clean_batches(segment, scanner, source, end, cache, psm)
            start = scanner.valid_bytes
            batch = next(iter(BatchScanner(source, end, start=start, file=name)), None)
            if batch is None:
                return None
            position, indexed = scanner.take(batch)
            recover_batch(segment, scanner, batch, position, indexed, cache, psm)
    except CorruptRecordError as exc:
        return exc.category.value


def _clean_batches(segment, scanner, source, end, cache, psm) -> None:
    """Let the kernel take the clean batches from the scanner's ``valid_bytes``, window after
    window; the scanner then stands where the readable code must go on."""
    refilled_at = None
    position = scanner.valid_bytes
    run = _load(segment, scanner, cache, psm)
    while position < end - HEADER_SIZE_UP_TO_MAGIC:
        window, at = source.view(position, HEADER_SIZE_UP_TO_MAGIC)
        position, reason = kernels.recovery.recover_clean_batches(window, at, position, end, run)
        if len(run.offset_entries) + len(run.time_entries) > APPLY_BYTES:
            _apply_entries(segment, run)
        if reason != kernels.recovery.REFILL or refilled_at == position:
            break
        source.view(position, CHUNK_SIZE)  # a window from the entry on
        refilled_at = position
    _apply(segment, run, psm)
    scanner.valid_bytes, scanner.last_index_entry = position, run.last_index_entry
    if run.max_timestamp_changed:
        scanner.max_timestamp = segment.max_timestamp_and_offset_so_far


def _load(segment, scanner, cache, psm):
    known = ()
    if psm is not None:
        known = [
            producer_id
            for producer_id, entry in psm.producers.items()
            if entry.current_txn_first_offset is None
        ]
    run = kernels.recovery.RecoveryRun(known[: kernels.recovery.KNOWN_PRODUCERS])
    run.segment_base, run.interval = segment.base_offset, segment.index_interval_bytes
    run.last_index_entry = scanner.last_index_entry
    largest = scanner.max_timestamp
    run.max_timestamp, run.max_timestamp_offset = largest.timestamp, largest.offset
    offset_index, time_index = segment.offset_index, segment.time_index
    run.offset_room = offset_index.max_entries - offset_index.entries
    run.offset_has_last = bool(offset_index.entries)
    run.offset_last = offset_index.last_offset
    run.time_room = time_index.max_entries - time_index.entries
    run.time_has_last = bool(time_index.entries)
    last = time_index.last_entry()
    run.time_last_timestamp, run.time_last_offset = last.timestamp, last.offset
    run.epochs = cache is not None
    latest = cache.latest_epoch() if cache is not None else None
    run.latest_epoch = -1 if latest is None else latest
    run.producers = psm is not None
    return run


def _apply(segment, run, psm) -> None:
    """What the run's batches did, as ``segment_recovery.recover_batch`` would have."""
    if run.max_timestamp_changed:
        segment.max_timestamp_and_offset_so_far = TimestampOffset(
            run.max_timestamp, run.max_timestamp_offset
        )
    _apply_entries(segment, run)
    if psm is None or not run.any_v2:
        return
    _replay(psm, run.replayed())
    psm.update_map_end_offset(run.map_end_offset)


def _apply_entries(segment, run) -> None:
    """The index entries the run collected, one write per index."""
    if run.offset_entries:
        segment.offset_index.append_packed(run.offset_entries)
    if run.time_entries:
        segment.time_index.append_packed(run.time_entries)
    del run.offset_entries[:], run.time_entries[:]


def _replay(psm, replayed: dict) -> None:
    """``update_producer_state`` of each batch, for its producer's last five batches only (the
    kernel keeps no more): an entry keeps ``NUM_BATCHES_TO_RETAIN`` (5) batches, forgets them
    all on a new epoch, and takes its epoch and timestamp from the last one, so the
    earlier batches leave no trace (tests/test_speedups.py compares with the readable
    loop, which replays every batch)."""
    for producer_id, batches in replayed.items():
        entry = psm.producers[producer_id]
        for epoch, base_sequence, last_delta, last, timestamp in batches:
            last_sequence = (
                -1 if base_sequence < 0 else increment_sequence(base_sequence, last_delta)
            )
            entry.add_batch(epoch, last_sequence, last, last_delta, timestamp)
