"""Truncating a log (spec/behaviour/truncate.md): Kafka's UnifiedLog.truncateTo and
truncateFullyAndStartAt [core/.../log/UnifiedLog.scala].

Truncation removes data from the end of the log: whole batches from the one holding the
target offset on (LocalLog.truncateTo cuts the segments), then the leader epoch cache,
the log start offset and the producer state follow (SNAP-B-5, SNAP-B-7), and the
checkpoints are written. ``LogTruncation`` is mixed into ``UnifiedLog`` (unified_log.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import InvalidArgumentError
from .log_cleaner_manager import maybe_truncate_checkpoint
from .producer_state_rebuild import rebuild_producer_state

if TYPE_CHECKING:
    from .clock import Clock
    from .leader_epoch import LeaderEpochFileCache
    from .local_log import LocalLog
    from .log_segments import LogSegments
    from .producer_state_manager import ProducerStateManager
    from .segment import LogSegment


class LogTruncation:
    """Mixed into ``UnifiedLog``: removing data from the end. What it uses of UnifiedLog
    (unified_log.py) is declared here."""

    clock: Clock
    local_log: LocalLog
    segments: LogSegments
    active_segment: LogSegment
    leader_epoch_cache: LeaderEpochFileCache
    producer_state_manager: ProducerStateManager
    log_start_offset: int
    log_end_offset: int
    _begin: Callable[[], None]
    _update_high_watermark: Callable[[], None]
    _write_checkpoints: Callable[[], None]
    _delete_producer_snapshots: Callable[[list[LogSegment]], None]

    def truncate_to(self, target_offset: int) -> bool:
        """TRUNC-1 to TRUNC-7, LEPOCH-8: remove every batch holding an offset >= ``target_offset``.

        At or past the LEO nothing changes (False), though the epoch cache still drops
        entries from the LEO on. Below the first segment's base this is
        ``truncate_fully_and_start_at``. Otherwise later segments go, the active one is
        cut on a batch boundary, LEO = target (even inside a removed batch), and a log
        start offset above the target comes down to it.
        """
        self._begin()
        if target_offset < 0:
            raise InvalidArgumentError(f"cannot truncate to a negative offset ({target_offset})")
        # COMPACT-27: a cut below the active segment also cuts the cleaner's checkpoint
        below_active = target_offset < self.active_segment.base_offset
        truncated = self._truncate_to(target_offset)
        if below_active:
            maybe_truncate_checkpoint(self, self.active_segment.base_offset)
        return truncated

    def _truncate_to(self, target_offset: int) -> bool:
        if target_offset >= self.log_end_offset:
            self.leader_epoch_cache.truncate_from_end(self.log_end_offset)
            return False
        if self.segments.first_segment.base_offset > target_offset:
            self._truncate_fully_and_start_at(target_offset, None)
            return True
        deleted = self.local_log.truncate_to(target_offset)
        self._delete_producer_snapshots(deleted)
        self.leader_epoch_cache.truncate_from_end(target_offset)
        self.log_start_offset = min(target_offset, self.log_start_offset)
        self._rebuild_producer_state(target_offset)  # SNAP-B-5
        self._write_checkpoints()
        return True

    def truncate_fully_and_start_at(
        self, new_offset: int, log_start_offset: int | None = None
    ) -> None:
        """TRUNC-12 to TRUNC-15: delete everything and start an empty segment at ``new_offset``; the log
        start offset becomes ``log_start_offset`` (default ``new_offset``). The recovery
        point only comes down (to ``new_offset``) if it was above."""
        self._begin()
        if new_offset < 0:
            raise InvalidArgumentError(f"cannot start a log at a negative offset ({new_offset})")
        self._truncate_fully_and_start_at(new_offset, log_start_offset)
        maybe_truncate_checkpoint(self, self.active_segment.base_offset)  # COMPACT-27

    def _truncate_fully_and_start_at(self, new_offset: int, log_start_offset: int | None) -> None:
        self.local_log.truncate_fully_and_start_at(new_offset)
        self.leader_epoch_cache.clear_and_flush()
        self.producer_state_manager.truncate_fully_and_start_at(new_offset)  # SNAP-B-7
        self.log_start_offset = new_offset if log_start_offset is None else log_start_offset
        self._rebuild_producer_state(new_offset)
        self._write_checkpoints()

    def _rebuild_producer_state(self, last_offset: int) -> None:
        rebuild_producer_state(
            self.producer_state_manager,
            self.segments,
            self.log_start_offset,
            last_offset,
            self.clock.milliseconds(),
            False,
        )
        self._update_high_watermark()
