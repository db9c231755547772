"""Mutants of the timestamp lookups and LogAppendTime (issue 26): each is a shortcut an
implementer could take for READ-15, READ-16, READ-19, APPEND-28, LEGACY-14 or the time index's
lookup (INDEX-19). Seven of them passed the whole suite of 388 scenarios; the scenarios
``read.time.compressed.*``, ``read.time.legacy-wrapper.*``, ``read.time.max-timestamp-*``,
``read.time.chosen-segment-no-match``, ``read.time.follower-header-max-timestamp`` and
``append.log-append-time.*`` kill every one (spec/behaviour/read.md §4)."""

from __future__ import annotations

import dataclasses

from reference_impl.formats.index_entries import TimestampOffset
from reference_impl.log import (
    file_records,
    log_validator,
    time_index,
    timestamp_lookup,
    unified_log,
)
from reference_impl.log.abstract_index import smallest_upper_bound_slot
from reference_impl.log.time_index import TIME_INDEX_ENTRY_SIZE
from reference_impl.records import TimestampType, legacy
from reference_impl.records.record import Record

from .mutant import Mutant, module_of

_ORIGINAL = {
    "assign": log_validator.assign_offsets_as_leader,
    "absolute": legacy._absolute,
    "fetch": timestamp_lookup.fetch_offset_by_timestamp,
}
TimestampAndOffset = file_records.TimestampAndOffset


def _assign_naming_first_offset(records, **kwargs):
    """APPEND-28 shortcut: a LogAppendTime batch's offset of its maxTimestamp is its first
    offset (every record carries the same timestamp, so 'the first' looks as right)."""
    result = _ORIGINAL["assign"](records, **kwargs)
    if kwargs["timestamp_type"] is not TimestampType.LOG_APPEND_TIME:
        return result
    return dataclasses.replace(result, shallow_offset_of_max_timestamp=kwargs["next_offset"])


def _max_timestamp_with(pick_segment, pick_offset):
    """A -3 lookup (READ-19) that chooses the segment and the answer's offset otherwise."""

    def lookup(segments):
        segment = pick_segment(list(segments.values()))
        so_far = segment.read_max_timestamp_and_offset_so_far()
        position = segment.offset_index.lookup(so_far.offset).position
        for batch in segment.log.batches_from(position):
            if batch.max_timestamp == so_far.timestamp and batch.magic > 0:
                offset = pick_offset(batch, so_far.timestamp)
                if offset is None:
                    return None
                epoch = batch.partition_leader_epoch
                return TimestampAndOffset(so_far.timestamp, offset, epoch if epoch >= 0 else None)
        return None

    return lookup


def _first_greatest(segments):
    return max(segments, key=lambda s: s.max_timestamp_so_far)


def _last_greatest(segments):
    best = max(s.max_timestamp_so_far for s in segments)
    return [s for s in segments if s.max_timestamp_so_far == best][-1]


def _last_carrier(batch, timestamp):
    carriers = [r.offset for r in batch.records() if r.timestamp == timestamp]
    return carriers[-1] if carriers else None


def _first_carrier(batch, timestamp):
    return next((r.offset for r in batch.records() if r.timestamp == timestamp), None)


def _search_with(answer, *, by_max_timestamp=True):
    """FileRecords.search_for_timestamp (READ-16) whose answer inside a batch is
    ``answer(batch, target, starting_offset)``; ``by_max_timestamp`` False searches every
    batch, whatever its maxTimestamp."""

    def search(self, target_timestamp, starting_position, starting_offset):
        for batch in self.batches_from(starting_position):
            if batch.max_timestamp >= target_timestamp or not by_max_timestamp:
                found = answer(batch, target_timestamp, starting_offset)
                if found is not None:
                    epoch = file_records._maybe_leader_epoch(batch.partition_leader_epoch)
                    return TimestampAndOffset(found.timestamp, found.offset, epoch)
        return None

    return search


def _matches(batch, target, starting_offset):
    return [r for r in batch.records() if r.timestamp >= target and r.offset >= starting_offset]


def _first_match(batch, target, starting_offset):
    found = _matches(batch, target, starting_offset)
    return found[0] if found else None


def _compressed_batch_at_base(batch, target, starting_offset):
    """A compressed batch is not decompressed: its base offset and maxTimestamp answer."""
    if batch.compression_id != 0:
        return Record(batch.base_offset, batch.max_timestamp, None, None)
    return _first_match(batch, target, starting_offset)


def _closest_timestamp(batch, target, starting_offset):
    """The record with the smallest timestamp at or after the target, not the first one."""
    found = _matches(batch, target, starting_offset)
    return min(found, key=lambda r: r.timestamp) if found else None


def _max_of_records(segments):
    """READ-19 shortcut: the largest record timestamp, not the largest batch maxTimestamp."""
    best = None
    for segment in segments.values():
        for batch in segment.log.batches_from(0):
            for record in batch.records() if batch.magic > 0 else ():
                if best is None or record.timestamp > best.timestamp:
                    epoch = batch.partition_leader_epoch
                    best = TimestampAndOffset(
                        record.timestamp, record.offset, epoch if epoch >= 0 else None
                    )
    return best


def _time_lookup_ceiling(self, target_timestamp):
    """INDEX-19 shortcut: the time index answers its first entry at or after the target (the
    last one when none is), not the last entry at or before it."""
    slot = smallest_upper_bound_slot(
        self._timestamp_at, self.entries, target_timestamp, TIME_INDEX_ENTRY_SIZE
    )
    if slot == -1:
        return self.last_entry() if self.entries else TimestampOffset(-1, self.base_offset)
    return self._entry_at(slot)


def _absolute_inner_offsets(wrapper, inner, last_inner_offset):
    """LEGACY-14 shortcut: magic 1 inner offsets read as absolute, as magic 0's are."""
    record = _ORIGINAL["absolute"](wrapper, inner, last_inner_offset)
    return Record(inner.offset, record.timestamp, record.key, record.value)


def _fetch_searching_on(segments, cache, target_timestamp, **kwargs):
    """READ-15 shortcut: when the chosen segment has no match, search the next ones."""
    found = _ORIGINAL["fetch"](segments, cache, target_timestamp, **kwargs)
    if found is not None or target_timestamp < 0:
        return found
    for segment in segments.values():
        if segment.largest_timestamp() >= target_timestamp:
            found = segment.find_offset_by_timestamp(target_timestamp, kwargs["log_start_offset"])
            if found is not None:
                return found
    return None


def _fetch_strictly_above(segments, cache, target_timestamp, **kwargs):
    """READ-15 shortcut: the first segment whose largest timestamp is above the target."""
    if target_timestamp < 0:
        return _ORIGINAL["fetch"](segments, cache, target_timestamp, **kwargs)
    for segment in segments.values():
        if segment.largest_timestamp() > target_timestamp:
            return segment.find_offset_by_timestamp(target_timestamp, kwargs["log_start_offset"])
    return None


_SEARCH = (file_records.FileRecords, "search_for_timestamp")


TIMESTAMP_MUTANTS = (
    Mutant("log-append-time-offset-at-first-offset", "a LogAppendTime append names its first offset as the offset of its maxTimestamp", frozenset({"APPEND-28"}), ("append.log-append-time.*",),
           lambda: [(module_of(unified_log.Log._assign_offsets), "assign_offsets_as_leader", _assign_naming_first_offset)]),
    Mutant("max-timestamp-at-batch-last-offset", "-3 answers the last offset of the batch holding the largest timestamp (Kafka 3.7.0, KAFKA-16310)", frozenset({"READ-19"}), ("read.time.*",),
           lambda: [(timestamp_lookup, "_max_timestamp", _max_timestamp_with(_first_greatest, lambda b, t: b.last_offset))]),
    Mutant("max-timestamp-at-batch-base-offset", "-3 answers the base offset of the batch holding the largest timestamp", frozenset({"READ-19"}), ("read.time.*",),
           lambda: [(timestamp_lookup, "_max_timestamp", _max_timestamp_with(_first_greatest, lambda b, t: b.base_offset))]),
    Mutant("max-timestamp-at-last-carrier", "-3 answers the last record carrying the largest timestamp", frozenset({"READ-19"}), ("read.time.*",),
           lambda: [(timestamp_lookup, "_max_timestamp", _max_timestamp_with(_first_greatest, _last_carrier))]),
    Mutant("max-timestamp-in-last-segment", "-3 searches the last segment holding the largest timestamp", frozenset({"READ-19"}), ("read.time.*",),
           lambda: [(timestamp_lookup, "_max_timestamp", _max_timestamp_with(_last_greatest, _first_carrier))]),
    Mutant("lookup-compressed-batch-at-base", "a timestamp lookup does not decompress: a compressed batch answers its base offset", frozenset({"READ-16"}), ("read.time.compressed.*",),
           lambda: [(*_SEARCH, _search_with(_compressed_batch_at_base))]),
    Mutant("lookup-closest-timestamp", "a timestamp lookup answers the record with the closest timestamp at or after the target", frozenset({"READ-16"}), ("read.time.*",),
           lambda: [(*_SEARCH, _search_with(_closest_timestamp))]),
    Mutant("lookup-ignores-batch-max-timestamp", "a timestamp lookup searches the records of every batch, whatever its maxTimestamp", frozenset({"READ-16"}), ("read.time.*",),
           lambda: [(*_SEARCH, _search_with(_first_match, by_max_timestamp=False))]),
    Mutant("max-timestamp-of-records", "-3 takes the largest record timestamp, not the largest batch maxTimestamp", frozenset({"READ-19"}), ("read.time.*",),
           lambda: [(timestamp_lookup, "_max_timestamp", _max_of_records)]),
    Mutant("time-lookup-ceiling-entry", "the time index's lookup answers the first entry at or after the target", frozenset({"READ-16"}), ("read.time.*",),
           lambda: [(time_index.TimeIndex, "lookup", _time_lookup_ceiling)]),
    Mutant("legacy-inner-offsets-absolute", "magic 1 inner offsets are read as absolute", frozenset({"LEGACY-14"}), ("read.time.legacy-wrapper.*",),
           lambda: [(legacy, "_absolute", _absolute_inner_offsets)]),
    Mutant("timestamp-search-goes-on", "a timestamp lookup searches past the chosen segment when it has no match", frozenset({"READ-15"}), ("read.time.*",),
           lambda: [(module_of(unified_log.Log.fetch_offset_by_timestamp), "fetch_offset_by_timestamp", _fetch_searching_on)]),
    Mutant("timestamp-segment-strictly-above", "a timestamp lookup chooses the first segment whose largest timestamp is above the target", frozenset({"READ-15"}), ("read.time.*",),
           lambda: [(module_of(unified_log.Log.fetch_offset_by_timestamp), "fetch_offset_by_timestamp", _fetch_strictly_above)]),
)  # fmt: skip
