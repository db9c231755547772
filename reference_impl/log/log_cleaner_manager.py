"""Which part of a log the cleaner may clean, and where it left off: Kafka's LogCleanerManager
and the cleaner thread's pass over one log (spec/behaviour/compaction.md §1, §5).

[core/.../log/LogCleanerManager.scala cleanableOffsets, maxCompactionDelay,
grabFilthiestCompactedLog, updateCheckpoints, maybeTruncateCheckpoint, doneCleaning;
LogCleaner.scala CleanerThread.cleanFilthiestLog, cleanLog, LogToClean] The log directory's
``cleaner-offset-checkpoint`` holds, per compacted partition, its *first dirty offset*:
everything below it was cleaned. A pass cleans ``[first dirty offset, first uncleanable
offset)``: it never reaches the active segment, the first unstable offset, or a segment
newer than ``min.compaction.lag.ms``; and it runs only when the dirty share of the log
passes ``min.cleanable.dirty.ratio`` or a record has waited ``max.compaction.lag.ms``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..constants import LONG_MAX
from . import checkpoint_files as ckpt
from .log_cleaner import Cleaner, CleanerStats
from .storage import storage

CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"


@dataclass(frozen=True)
class OffsetsToClean:
    first_dirty_offset: int
    first_uncleanable_dirty_offset: int
    force_update_checkpoint: bool = False


@dataclass
class CleanOutcome:
    """What one pass found and did: the protocol's ``clean`` result."""

    compact: bool = False
    cleaned: bool = False
    first_dirty_offset: int | None = None
    first_uncleanable_dirty_offset: int | None = None
    first_uncleanable_offset: int | None = None
    end_offset: int | None = None
    cleanable_ratio: float | None = None
    compaction_delay_ms: int | None = None
    checkpoint_reset: bool = False
    stats: CleanerStats = field(default_factory=CleanerStats)


def checkpoint_path(log) -> Path:
    return log.dir.parent / CLEANER_OFFSET_CHECKPOINT


def cleanable_offsets(log, last_clean_offset: int | None, now: int) -> OffsetsToClean:
    """COMPACT-4 to COMPACT-7: the first dirty offset (the checkpoint's, reset to the log start
    offset when it is below it or past the LEO) and the first uncleanable dirty offset: the
    least of the last stable offset, the active segment's base and the first dirty segment
    whose largest timestamp is within ``min.compaction.lag.ms`` of now."""
    start = log.log_start_offset
    checkpointed = start if last_clean_offset is None else last_clean_offset
    reset = checkpointed < start or checkpointed > log.log_end_offset
    first_dirty = start if reset else checkpointed
    uncleanable = min(log.last_stable_offset, log.active_segment.base_offset)
    min_lag = max(log.config.min_compaction_lag_ms, 0)
    if min_lag > 0:
        for segment in log.segments.non_active_log_segments_from(first_dirty):
            if segment.largest_timestamp() > now - min_lag:
                uncleanable = min(uncleanable, segment.base_offset)
                break
    return OffsetsToClean(first_dirty, max(first_dirty, uncleanable), reset)


def max_compaction_delay(log, first_dirty_offset: int, now: int) -> int:
    """COMPACT-8: how long past ``max.compaction.lag.ms`` the oldest dirty non-active segment's
    first batch is (0: not overdue); an overdue log is cleaned whatever its dirty ratio."""
    stamps = [
        s.get_first_batch_timestamp()
        for s in log.segments.non_active_log_segments_from(first_dirty_offset)
    ]
    earliest = min((t for t in stamps if t > 0), default=LONG_MAX)
    clean_until = now - max(log.config.max_compaction_lag_ms, 0)
    return clean_until - earliest if earliest < clean_until else 0


@dataclass(frozen=True)
class LogToClean:
    """LogCleaner.scala LogToClean: the pass's range rounded down to a segment boundary, and
    the sizes of its clean and cleanable parts."""

    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int

    @classmethod
    def of(cls, log, first_dirty: int, uncleanable: int) -> LogToClean:
        clean_bytes = sum(s.size for s in log.segments.values(-1, first_dirty))
        later = log.segments.non_active_log_segments_from(uncleanable)
        first_uncleanable = (later[0] if later else log.active_segment).base_offset
        dirty = log.segments.values(min(first_dirty, first_uncleanable), first_uncleanable)
        return cls(first_dirty, first_uncleanable, clean_bytes, sum(s.size for s in dirty))

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float | None:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else None


def grab_filthiest_compacted_log(log, first_dirty_override: int | None, now: int, out):
    """COMPACT-4, COMPACT-8, COMPACT-26: the log's range to clean, or None when it is not compacted,
    empty, or neither dirty enough nor overdue. A checkpoint that had to be reset is
    rewritten even if nothing is cleaned."""
    out.compact = log.config.compact
    if not log.config.compact:
        return None
    checkpointed = read_checkpoint(log)
    last = first_dirty_override if first_dirty_override is not None else checkpointed
    offsets = cleanable_offsets(log, last, now)
    if offsets.force_update_checkpoint:
        update_checkpoint(log, offsets.first_dirty_offset)
    delay = max_compaction_delay(log, offsets.first_dirty_offset, now)
    to_clean = LogToClean.of(
        log, offsets.first_dirty_offset, offsets.first_uncleanable_dirty_offset
    )
    out.first_dirty_offset = offsets.first_dirty_offset
    out.first_uncleanable_dirty_offset = offsets.first_uncleanable_dirty_offset
    out.first_uncleanable_offset = to_clean.first_uncleanable_offset
    out.compaction_delay_ms = delay
    out.checkpoint_reset = offsets.force_update_checkpoint
    out.cleanable_ratio = to_clean.cleanable_ratio
    if not to_clean.total_bytes > 0:
        return None
    ratio = to_clean.cleanable_ratio
    if (delay > 0 and to_clean.cleanable_bytes > 0) or ratio > log.config.min_cleanable_dirty_ratio:
        return to_clean
    return None


def clean_once(log, cleaner: Cleaner, first_dirty_override: int | None = None) -> CleanOutcome:
    """COMPACT-11, COMPACT-25: one pass of the cleaner thread over this log at the log's clock;
    the checkpoint then holds the pass's end offset (the first dirty offset if it failed)."""
    out = CleanOutcome()
    now = log.clock.milliseconds()
    create_checkpoint_file(log)
    to_clean = grab_filthiest_compacted_log(log, first_dirty_override, now, out)
    if to_clean is None:
        return out
    end_offset = to_clean.first_dirty_offset
    try:
        end_offset, out.stats = cleaner.clean(
            log, to_clean.first_dirty_offset, to_clean.first_uncleanable_offset, now
        )
    finally:
        update_checkpoint(log, end_offset)  # doneCleaning
    out.cleaned, out.end_offset = True, end_offset
    return out


# --- the cleaner-offset-checkpoint (COMPACT-25 to COMPACT-27) ---
def create_checkpoint_file(log) -> None:
    """Kafka's CheckpointFile creates the file, empty, when the cleaner starts (LogManager's
    startup); the reference creates it at its first pass, so that a log never cleaned keeps
    the directory it had."""
    storage().touch(checkpoint_path(log))


def read_checkpoint(log) -> int | None:
    """This partition's first dirty offset; an unreadable file counts as empty (Kafka logs
    the failure and cleans from the log start offset)."""
    return ckpt.read_offsets_or_empty(checkpoint_path(log)).get((log.topic, log.partition))


def update_checkpoint(log, offset: int) -> None:
    """Kafka's OffsetCheckpointFile format, written atomically, other partitions kept."""
    ckpt.update_offset(checkpoint_path(log), log.topic, log.partition, offset)


def maybe_truncate_checkpoint(log, offset: int) -> None:
    """COMPACT-27 [LogManager.truncateTo -> maybeTruncateCheckpoint]: a truncation below the
    checkpointed offset of a compacted log brings it down to ``offset``. Only an existing
    file is cut (Kafka's, created empty at startup, has no entry to cut otherwise)."""
    path = checkpoint_path(log)
    if not storage().exists(path) or not log.config.compact:
        return
    current = read_checkpoint(log)
    if (current if current is not None else 0) > offset:
        update_checkpoint(log, offset)
