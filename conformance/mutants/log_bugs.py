"""The mutants' bugs in segments and the log's lifecycle: roll (roll.md Table 1), index
placement and trimming (index.md), read (read.md), append (append.md), truncation,
retention, flush and checkpoints, and recovery (recovery.md). Each function is one bug,
named after it; the catalogue (catalog.py) pairs it with the rules it breaks."""

from __future__ import annotations

import contextlib
import dataclasses
import struct
from pathlib import Path
from unittest import mock

from reference_impl.errors import Category, LogOperationError
from reference_impl.log import (
    abstract_index,
    checkpoint_files,
    log_validator,
    offset_index,
    segment,
    time_index,
)
from reference_impl.log.fetch import FetchDataInfo
from reference_impl.records.stream import iter_batches

from .originals import APPEND, ORIGINAL, ROLL, Log, Seg


def conditions(**replace):
    """ROLL_CONDITIONS with some conditions' tests replaced (by name)."""
    table = tuple(
        dataclasses.replace(c, holds=replace[c.name]) if c.name in replace else c
        for c in ORIGINAL["conditions"]
    )
    return [(ROLL, "ROLL_CONDITIONS", table)]


def time_condition(compare, waited=None, jitter=True, nonempty=True):
    def holds(seg, p):
        if nonempty and seg.size <= 0:
            return False
        w = (
            waited(seg, p)
            if waited
            else seg.time_waited_for_roll(p.now, p.max_timestamp_in_messages)
        )
        limit = p.max_segment_ms - (seg.roll_jitter_ms if jitter else 0)
        return compare(w, limit)

    return holds


def append_indexing_at_interval(self, largest_offset, records):
    """LogSegment.append with >= for > in the index interval (INDEX-7): the original's >
    against one byte less, for the length of the call."""
    interval = self.index_interval_bytes
    self.index_interval_bytes = interval - 1
    try:
        return ORIGINAL["append"](self, largest_offset, records)
    finally:
        self.index_interval_bytes = interval


def append_keying_index_by_first_offset(self, largest_offset, records):
    """LogSegment.append whose index entries name their batch's first offset, not its last
    (INDEX-14): the offset index's append, during this call, takes the first offset of the
    batch that starts at the entry's position."""
    firsts, position = {}, self.log.size
    for batch in iter_batches(records) if records else ():
        firsts[position] = batch.base_offset
        position += batch.size_in_bytes

    def append(index, offset, position):
        return ORIGINAL["index_append"](index, firsts.get(position, offset), position)

    with mock.patch.object(offset_index.OffsetIndex, "append", append):
        return ORIGINAL["append"](self, largest_offset, records)


def inactive_without_trim(self):
    """A roll's on_become_inactive_segment with the indexes' trim a no-op (INDEX-4)."""
    with mock.patch.object(abstract_index.AbstractIndex, "trim_to_valid_size", lambda index: None):
        return ORIGINAL["inactive"](self)


def truncate_keeping_index(self, offset):
    """A segment truncation that leaves both indexes' entries as they were (INDEX-6)."""
    with contextlib.ExitStack() as stack:
        for index in (offset_index.OffsetIndex, time_index.TimeIndex):
            stack.enter_context(mock.patch.object(index, "truncate_to", lambda i, o: None))
        return ORIGINAL["truncate_to"](self, offset)


def time_append_equal(self, timestamp, offset, skip_full_check=False):
    """TimeIndex.maybe_append that also adds an entry whose timestamp equals the last one's
    (INDEX-10); any other entry as the original decides."""
    full = not skip_full_check and self.is_full()
    if self.entries and not full and timestamp >= 0 and timestamp == self.last_entry().timestamp:
        self._append_entry(timestamp, self.relative_offset(offset))
        return None
    return ORIGINAL["time_append"](self, timestamp, offset, skip_full_check)


def read_with(**override):
    def read(
        self, start_offset, max_size, max_position=segment.SEGMENT_SIZE, min_one_message=False
    ):
        args = {"max_size": max_size, "min_one_message": min_one_message, **override}
        return ORIGINAL["read"](
            self, start_offset, args["max_size"], max_position, args["min_one_message"]
        )

    return [(Seg, "read", read)]


def write_checkpoints_without_log_start(self):
    """The log's checkpoints written with no log start offset line (CKPT-B-6)."""
    update = checkpoint_files.update_offset

    def update_offset(path, topic, partition, offset):
        wrote_start = Path(path).name == checkpoint_files.LOG_START_OFFSET_CHECKPOINT
        return update(path, topic, partition, None if wrote_start else offset)

    with mock.patch.object(checkpoint_files, "update_offset", update_offset):
        return ORIGINAL["write_checkpoints"](self)


def log_read_ignoring_max_offset(
    self, start_offset, max_bytes, max_offset=None, min_one_message=False, *isolation
):
    return ORIGINAL["log_read"](self, start_offset, max_bytes, None, min_one_message, *isolation)


def log_read_below_start(
    self, start_offset, max_bytes, max_offset=None, min_one_message=False, *isolation
):
    saved = self.log_start_offset
    self.log_start_offset = min(saved, start_offset)
    try:
        return ORIGINAL["log_read"](
            self, start_offset, max_bytes, max_offset, min_one_message, *isolation
        )
    finally:
        self.log_start_offset = saved


def log_read_above_leo_empty(
    self, start_offset, max_bytes, max_offset=None, min_one_message=False, *isolation
):
    if start_offset > self.log_end_offset:
        return FetchDataInfo(self.log_end_offset_metadata)
    return ORIGINAL["log_read"](
        self, start_offset, max_bytes, max_offset, min_one_message, *isolation
    )


def set_max_timestamp_keeping_crc(raw, timestamp_type, max_timestamp):
    buf = bytearray(raw)
    (attributes,) = struct.unpack_from(">h", buf, 21)
    attributes = (attributes & ~0x08) | (0x08 if timestamp_type.value == 1 else 0)
    struct.pack_into(">h", buf, 21, attributes)
    struct.pack_into(">q", buf, 35, max_timestamp)
    return bytes(buf)


def analyze_with(**override):
    def analyze(records, **kwargs):
        if "zero_client_base" in override and kwargs["origin"] is log_validator.AppendOrigin.CLIENT:
            records = bytes(8) + records[8:] if len(records) >= 8 else records
        for key in ("ignore_record_size",):
            if key in override:
                kwargs[key] = override[key]
        if "max_message_bytes_delta" in override:
            kwargs["max_message_bytes"] += override["max_message_bytes_delta"]
        return ORIGINAL["analyze"](records, **kwargs)

    return [(APPEND, "analyze_and_validate_records", analyze)]


def append_refusing_exact_segment(
    self, records, origin, assign_offsets, leader_epoch, ignore_record_size
):
    if self.config.segment_bytes <= len(records) and not self.closed:
        raise LogOperationError(Category.RECORD_BATCH_TOO_LARGE, "set of segment_bytes or more")
    return ORIGINAL["log_append"](
        self, records, origin, assign_offsets, leader_epoch, ignore_record_size
    )


def append_refusing_gaps(self, records, origin, assign_offsets, leader_epoch, ignore_record_size):
    if not assign_offsets and len(records) >= 17 and records[16] == 2 and not self.closed:
        (first,) = struct.unpack_from(">q", records, 0)
        if first > self.log_end_offset:
            raise LogOperationError(Category.UNEXPECTED_APPEND_OFFSET, "gap refused")
    return ORIGINAL["log_append"](
        self, records, origin, assign_offsets, leader_epoch, ignore_record_size
    )


def append_without_flush_messages(
    self, records, origin, assign_offsets, leader_epoch, ignore_record_size
):
    saved = self.config
    self.config = dataclasses.replace(saved, flush_messages=2**63 - 1)
    try:
        return ORIGINAL["log_append"](
            self, records, origin, assign_offsets, leader_epoch, ignore_record_size
        )
    finally:
        self.config = saved


def truncate_keeping(attribute_path):
    def truncate_to(self, target_offset):
        owner = self.local_log if attribute_path == "recovery_point" else self
        saved = getattr(owner, attribute_path)
        result = ORIGINAL["log_truncate_to"](self, target_offset)
        setattr(owner, attribute_path, saved)
        self._write_checkpoints()
        return result

    return [(Log, "truncate_to", truncate_to)]


def local_truncate_leo_at_last_batch(self, target_offset):
    """A truncation whose LEO is the end of the kept batches, not the target (TRUNC-6)."""
    deleted = ORIGINAL["local_truncate"](self, target_offset)
    self.update_log_end_offset(self.segments.active_segment.read_next_offset())
    return deleted


def delete_at_once(segments, **kwargs):
    return ORIGINAL["delete_files"](segments, **{**kwargs, "async_delete": False})


def size_pass_strict(self):
    """The size pass deleting a segment only when the excess stays above 0, not at 0
    (RET-8): the original's at-or-above, with one byte more retained."""
    retention_bytes = self.config.retention_bytes
    if retention_bytes < 0:
        return ORIGINAL["size_pass"](self)
    return with_config(self, ORIGINAL["size_pass"], retention_bytes=retention_bytes + 1)


def time_pass_inclusive(self):
    """The time pass with >= for > (RET-7): the original's > against a limit one
    millisecond lower (for a retention_ms above 0)."""
    retention_ms = self.config.retention_ms
    if retention_ms <= 0:
        return ORIGINAL["time_pass"](self)
    return with_config(self, ORIGINAL["time_pass"], retention_ms=retention_ms - 1)


def with_config(log_, method, **changes):
    saved = log_.config
    log_.config = dataclasses.replace(saved, **changes)
    try:
        return method(log_)
    finally:
        log_.config = saved


def close_without_time_entry(self):
    """close() that forgets the largest timestamp first, so it writes no final time-index
    entry (FLUSH-8)."""
    self.max_timestamp_and_offset_so_far = None
    ORIGINAL["seg_close"](self)


def search_returning_batch_offset(self, target_timestamp, starting_position, starting_offset):
    """A timestamp search that answers the found record's batch's base offset (READ-16)."""
    found = ORIGINAL["search"](self, target_timestamp, starting_position, starting_offset)
    if found is None:
        return None
    batch = next(b for b in self.batches_from(starting_position) if b.last_offset >= found.offset)
    return dataclasses.replace(found, offset=batch.base_offset)


def maybe_roll_at_leo(self, messages_size, info):
    """maybe_roll whose roll, if any, bases the new segment at the LEO (``_roll(None)``),
    not at the set's first offset (ROLL-11)."""
    roll = self._roll
    self._roll = lambda expected_next_offset=None: roll(None)
    try:
        return ORIGINAL["maybe_roll"](self, messages_size, info)
    finally:
        del self._roll


def roll_with_eager_indexes(self, expected_next_offset=None):
    new_segment = ORIGINAL["local_roll"](self, expected_next_offset)
    new_segment.offset_index  # noqa: B018 - opening the lazy index creates its file
    new_segment.time_index  # noqa: B018
    return new_segment


def recover_keeping_torn_tail(segment_, *args, **kwargs):
    """Recovery that cuts only what fails a check, keeping a partial last batch."""
    before = segment_.log.slice(0, segment_.log.size).read_bytes()
    truncated = ORIGINAL["recover"](segment_, *args, **kwargs)
    tail = before[segment_.log.size :]
    if tail and len(tail) >= 12 and struct.unpack_from(">i", tail, 8)[0] + 12 > len(tail):
        segment_.log.append(tail)
        return 0
    return truncated


def recover_dropping_one_more(segment_, *args, **kwargs):
    """Recovery that, having cut a bad tail, also drops the valid batch before it."""
    truncated = ORIGINAL["recover"](segment_, *args, **kwargs)
    if truncated:
        batches = list(segment_.log.batches())
        if batches:
            truncated += segment_.truncate_to(batches[-1].base_offset)
    return truncated


def opening_always_unclean(self, log_dir):
    ORIGINAL["opening"](self, log_dir)
    return False
