"""Rebuilding producer state from snapshots and the log (spec/behaviour/producer-state.md
§5-§6) [UnifiedLog.java rebuildProducerState, loadProducersFromRecords,
updateProducers, deleteProducerSnapshots].

Producer state is never the source of truth: the log is. A snapshot only bounds how
much of the log must be re-read. Rebuilding takes the newest snapshot at or below the
target offset and replays every batch with a producer id from there, as a follower
would (no sequence checks: the leader made them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..constants import INT32_MAX
from ..errors import CorruptRecordError
from .log_validator import AppendOrigin
from .producer_state import CompletedTxn, ProducerAppendInfo, has_producer_id
from .storage import storage

if TYPE_CHECKING:
    from .log_segments import LogSegments
    from .producer_state_manager import ProducerStateManager
    from .scheduler import Scheduler
    from .segment import LogSegment


def update_producers(
    psm: ProducerStateManager,
    batch,
    producers: dict[int, ProducerAppendInfo],
    origin: AppendOrigin,
) -> CompletedTxn | None:
    """Check one batch against its producer's state, collecting the state in ``producers``."""
    info = producers.get(batch.producer_id)
    if info is None:
        info = producers[batch.producer_id] = psm.prepare_update(batch.producer_id, origin)
    return info.append(batch)


def load_producers_from_records(psm: ProducerStateManager, batches: Iterable) -> None:
    """Replay batches into ``psm`` (replication origin); transactions complete at the end."""
    producers: dict[int, ProducerAppendInfo] = {}
    completed: list[CompletedTxn] = []
    for batch in batches:
        if has_producer_id(batch):
            txn = update_producers(psm, batch, producers, AppendOrigin.REPLICATION)
            if txn is not None:
                completed.append(txn)
    for info in producers.values():
        psm.update(info)
    for txn in completed:
        psm.complete_txn(txn)


def rebuild_producer_state(
    psm: ProducerStateManager,
    segments: LogSegments,
    log_start_offset: int,
    last_offset: int,
    now: int,
    reload_from_clean_shutdown: bool,
) -> None:
    """SNAP-B-2, SNAP-B-3, SNAP-B-5, SNAP-B-6: bring ``psm`` to ``last_offset``.

    With no snapshot after a clean shutdown there is nothing to replay (a log written
    before producer state existed): empty snapshots are taken at the bases of the last
    two segments and at ``last_offset``, so the next load has them. Otherwise the state
    is reloaded from the newest snapshot in (log start, ``last_offset``] and the batches
    from there to ``last_offset`` are replayed, with snapshots at those two bases.
    """
    offsets_to_snapshot = _offsets_to_snapshot(segments, last_offset)
    if psm.latest_snapshot_offset() is None and reload_from_clean_shutdown:
        for offset in offsets_to_snapshot:
            psm.update_map_end_offset(offset)
            psm.take_snapshot()
        return
    empty_before_truncation = psm.is_empty() and psm.map_end_offset >= last_offset
    psm.truncate_and_reload(log_start_offset, last_offset, now)
    if last_offset > psm.map_end_offset and not empty_before_truncation:
        _replay(psm, segments, log_start_offset, last_offset, offsets_to_snapshot)
    psm.update_map_end_offset(last_offset)
    psm.take_snapshot()


def _offsets_to_snapshot(segments: LogSegments, last_offset: int) -> list[int]:
    offsets = []
    last = segments.last_segment
    if last is not None:
        lower = segments.lower_segment(last.base_offset)
        if lower is not None:
            offsets.append(lower.base_offset)
        offsets.append(last.base_offset)
    offsets.append(last_offset)
    return offsets


def _replay(
    psm: ProducerStateManager,
    segments: LogSegments,
    log_start_offset: int,
    last_offset: int,
    offsets_to_snapshot: list[int],
) -> None:
    """Re-read [map end offset, ``last_offset``) segment by segment."""
    segment_of_last_offset = segments.floor_segment(last_offset)
    for segment in segments.values(psm.map_end_offset, last_offset):
        start_offset = max(segment.base_offset, psm.map_end_offset, log_start_offset)
        psm.update_map_end_offset(start_offset)
        if segment.base_offset in offsets_to_snapshot:
            psm.take_snapshot()
        try:
            _replay_segment(psm, segment, start_offset, last_offset, segment_of_last_offset)
        except CorruptRecordError:
            continue  # SNAP-B-3: see _replay_segment


def _replay_segment(psm, segment, start_offset, last_offset, segment_of_last_offset) -> None:
    """Replay one segment from ``start_offset``, the last one only up to ``last_offset``.

    Deviation: a batch that does not frame ends the segment's replay. Kafka fails the
    whole load there (a segment recovered while loading replays earlier segments the
    unclean-shutdown pass has not cut yet); that pass cuts the segment at that batch
    anyway, so the reference goes on as if it had already.
    """
    max_position = segment.size
    if segment is segment_of_last_offset:
        found = segment.translate_offset(last_offset)
        if found is not None:
            max_position = found.position
    fetch = segment.read(start_offset, INT32_MAX, max_position)
    if fetch is not None and fetch.records is not None:
        load_producers_from_records(psm, _readable_batches(fetch.records.batches()))


def _readable_batches(batches: Iterable) -> Iterable:
    """The batches before the first one that does not frame (see _replay_segment)."""
    try:
        yield from batches
    except CorruptRecordError:
        return


def delete_producer_snapshots(
    segments: Iterable[LogSegment],
    psm: ProducerStateManager,
    *,
    async_delete: bool,
    scheduler: Scheduler,
    file_delete_delay_ms: int,
) -> None:
    """SNAP-B-8: the snapshots named after deleted segments' bases go ``.deleted``, then
    away with the segments' files."""
    doomed = [psm.remove_and_mark_snapshot_for_deletion(s.base_offset) for s in segments]
    doomed = [path for path in doomed if path is not None]

    def delete() -> None:
        for path in doomed:
            storage().unlink(path, missing_ok=True)

    if async_delete:
        scheduler.schedule_once("delete-producer-snapshot", delete, file_delete_delay_ms)
    else:
        delete()
