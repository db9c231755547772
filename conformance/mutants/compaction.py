"""Mutants of the log cleaner (spec/behaviour/compaction.md): each is the reference cleaner with
one bug a cleaner has had or could have, and the COMPACT rules the suite must fail it on."""

from __future__ import annotations

import dataclasses

from reference_impl.log import (
    cleaned_transaction_metadata,
    log_cleaner,
    log_cleaner_manager,
    record_filter,
    unified_log,
)
from reference_impl.log import log_validator as validator

from .mutant import Mutant

Manager = log_cleaner_manager
Filter = log_cleaner.LogCleanerFilter
_ORIGINAL = {
    "cleanable_offsets": Manager.cleanable_offsets,
    "log_to_clean": Manager.LogToClean.of.__func__,
    "assign": validator.assign_offsets_as_leader,
    "build_map_segment": log_cleaner.Cleaner._build_offset_map_for_segment,
    "retain": Filter.should_retain_record,
    "build": record_filter.build_record_batch,
    "ratio": Manager.LogToClean.cleanable_ratio,
    "on_batch_read": cleaned_transaction_metadata.CleanedTransactionMetadata.on_batch_read,
}


def _cleaning_any_policy(log, first_dirty_override, now, out):
    """grabFilthiestCompactedLog without its cleanup.policy check."""
    compact = dataclasses.replace(log.config, cleanup_policy=("compact",))
    saved, log.config = log.config, compact
    try:
        return _grab(log, first_dirty_override, now, out)
    finally:
        log.config = saved


_grab = Manager.grab_filthiest_compacted_log


def _keyless_accepted(records, **kwargs):
    return _ORIGINAL["assign"](records, **{**kwargs, "compacted_topic": False})


def _offsets_reset_unwritten(log, last_clean_offset, now):
    """An out-of-range checkpoint is reset for the pass but not written back."""
    offsets = _ORIGINAL["cleanable_offsets"](log, last_clean_offset, now)
    return dataclasses.replace(offsets, force_update_checkpoint=False)


def _offsets_past_lso(log, last_clean_offset, now):
    """The first uncleanable dirty offset ignores open transactions."""
    saved = type(log).last_stable_offset
    type(log).last_stable_offset = property(lambda self: self.log_end_offset)
    try:
        return _ORIGINAL["cleanable_offsets"](log, last_clean_offset, now)
    finally:
        type(log).last_stable_offset = saved


def _offsets_without_min_lag(log, last_clean_offset, now):
    saved = log.config
    log.config = dataclasses.replace(saved, min_compaction_lag_ms=0)
    try:
        return _ORIGINAL["cleanable_offsets"](log, last_clean_offset, now)
    finally:
        log.config = saved


def _log_to_clean_unrounded(cls, log, first_dirty, uncleanable):
    found = _ORIGINAL["log_to_clean"](cls, log, first_dirty, uncleanable)
    return dataclasses.replace(found, first_uncleanable_offset=uncleanable)


def _map_without_load_factor(self, segment, start, next_start, txn_metadata, stats):
    saved = self.load_factor
    self.load_factor = 1.0
    try:
        return _ORIGINAL["build_map_segment"](self, segment, start, next_start, txn_metadata, stats)
    finally:
        self.load_factor = saved


def _map_without_gaps(self, segment, start, next_start, txn_metadata, stats):
    """The map's reach stops at the last batch read, not at the segment's end."""
    last = segment.read_next_offset()
    return _ORIGINAL["build_map_segment"](self, segment, start, last, txn_metadata, stats)


def _tombstones_dropped(self, batch, record):
    if record.value is None and batch.magic >= 2 and not batch.is_control:
        return False
    return _ORIGINAL["retain"](self, batch, record)


def _natural_last_offset(records, **kwargs):
    """The batch builder without buildRetainedRecordsInto's overrideLastOffset."""
    if records:
        kwargs["last_offset_delta"] = None
    return _ORIGINAL["build"](records, **kwargs)


def _ratio_nudged(self):
    """The dirty ratio compared with >= instead of >: a ratio at the threshold passes."""
    ratio = _ORIGINAL["ratio"].fget(self)
    return None if ratio is None else ratio + 1e-9


def _never_aborted(self, batch):
    _ORIGINAL["on_batch_read"](self, batch)
    return False


def _group_everything(segments, max_size, max_index_size, first_uncleanable):
    return [list(segments)] if segments else []


COMPACTION = (
    Mutant("clean-any-policy", "a log with cleanup_policy delete is cleaned too", frozenset({"COMPACT-1"}), ("compaction.policy.*",),
           lambda: [(Manager, "grab_filthiest_compacted_log", _cleaning_any_policy)]),
    Mutant("compacted-accepts-keyless", "a compacted topic takes a record without a key", frozenset({"COMPACT-3"}), ("compaction.append.*",),
           lambda: [(unified_log, "assign_offsets_as_leader", _keyless_accepted)]),
    Mutant("checkpoint-reset-unwritten", "an out-of-range checkpoint is reset for the pass but not rewritten", frozenset({"COMPACT-4"}), ("compaction.checkpoint.*",),
           lambda: [(Manager, "cleanable_offsets", _offsets_reset_unwritten)]),
    Mutant("clean-past-last-stable-offset", "the cleanable range ignores open transactions", frozenset({"COMPACT-5"}), ("compaction.range.*",),
           lambda: [(Manager, "cleanable_offsets", _offsets_past_lso)]),
    Mutant("min-compaction-lag-ignored", "min_compaction_lag_ms does not bound the range", frozenset({"COMPACT-6"}), ("compaction.range.*",),
           lambda: [(Manager, "cleanable_offsets", _offsets_without_min_lag)]),
    Mutant("range-not-rounded-to-segment", "the map's upper bound is the uncleanable offset itself, inside a segment", frozenset({"COMPACT-7"}), ("compaction.range.*",),
           lambda: [(Manager.LogToClean, "of", classmethod(_log_to_clean_unrounded))]),
    Mutant("ratio-at-threshold-cleans", "a dirty ratio equal to min_cleanable_dirty_ratio is cleaned", frozenset({"COMPACT-8"}), ("compaction.ratio.*",),
           lambda: [(log_cleaner_manager.LogToClean, "cleanable_ratio", property(_ratio_nudged))]),
    Mutant("map-fills-every-slot", "the offset map takes a key for every slot, ignoring the load factor", frozenset({"COMPACT-9"}), ("compaction.offset-map.*",),
           lambda: [(log_cleaner.Cleaner, "_build_offset_map_for_segment", _map_without_load_factor)]),
    Mutant("end-offset-stops-at-last-batch", "the next dirty offset stops at the last batch, not the segment's end", frozenset({"COMPACT-10"}), ("compaction.offset-map.*",),
           lambda: [(log_cleaner.Cleaner, "_build_offset_map_for_segment", _map_without_gaps)]),
    Mutant("tombstones-dropped-at-once", "a latest tombstone goes in the first pass, without waiting for its delete horizon", frozenset({"COMPACT-13"}), ("compaction.tombstone.*",),
           lambda: [(Filter, "should_retain_record", _tombstones_dropped)]),
    Mutant("aborted-data-kept", "aborted transactional batches are cleaned like committed ones", frozenset({"COMPACT-14"}), ("compaction.txn.*", "compaction.write.*"),
           lambda: [(cleaned_transaction_metadata.CleanedTransactionMetadata, "on_batch_read", _never_aborted)]),
    Mutant("producer-last-batch-dropped", "an emptied last batch of a producer is removed, losing its last sequence", frozenset({"COMPACT-17"}), ("compaction.producer.*",),
           lambda: [(Filter, "_is_last_batch_of_producer", lambda self, batch: False)]),
    Mutant("rewrite-loses-last-offset", "a rewritten batch's lastOffsetDelta is its last kept record's", frozenset({"COMPACT-19"}), ("compaction.batch.*",),
           lambda: [(record_filter, "build_record_batch", _natural_last_offset)]),
    Mutant("groups-ignore-segment-bytes", "every segment below the end offset is cleaned into one", frozenset({"COMPACT-22"}), ("compaction.basic.*", "compaction.group.*"),
           lambda: [(log_cleaner, "group_segments_by_size", _group_everything)]),
    Mutant("truncation-keeps-cleaner-checkpoint", "a truncation below the cleaned offset leaves cleaner-offset-checkpoint", frozenset({"COMPACT-27"}), ("compaction.checkpoint.*",),
           lambda: [(unified_log, "maybe_truncate_checkpoint", lambda log, offset: None)]),
)  # fmt: skip
