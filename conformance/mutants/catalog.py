"""The mutants: each is the reference with one realistic bug, and the requirement IDs the
suite must fail it on. ``scenarios`` (globs) keep each mutant's run short."""

from __future__ import annotations

import dataclasses
import struct
from collections import deque
from pathlib import Path

import reference_impl.formats.file_naming as naming
import reference_impl.log.append as log_append
import reference_impl.log.unified_log as log
from reference_impl.errors import Category, KafkaLogError, LogOperationError
from reference_impl.formats.index_entries import AbortedTxn, TimestampOffset
from reference_impl.log import (
    abstract_index,
    clean_shutdown,
    file_records,
    leader_epoch,
    loader,
    local_log,
    log_validator,
    offset_index,
    producer_state,
    producer_state_manager,
    retention,
    roll,
    segment,
    time_index,
    transaction_index,
)
from reference_impl.log.fetch import FetchDataInfo
from reference_impl.records.stream import iter_batches

from .compaction import COMPACTION
from .mutant import Mutant
from .timestamps import TIMESTAMP_MUTANTS

Seg = segment.LogSegment
Log = log.Log
PSM = producer_state_manager.ProducerStateManager
Append = producer_state.ProducerAppendInfo
_ORIGINAL = {
    "conditions": roll.ROLL_CONDITIONS,
    "append": Seg.append,
    "read": Seg.read,
    "truncate_to": Seg.truncate_to,
    "close": Seg.close,
    "log_read": Log.read,
    "log_append": Log._append,
    "log_truncate_to": Log.truncate_to,
    "analyze": log_validator.analyze_and_validate_records,
    "local_roll": local_log.LocalLog.roll,
    "delete_files": local_log.delete_segment_files,
    "prefix": naming.filename_prefix_from_offset,
    "recover": Seg.recover,
    "opening": clean_shutdown.LogDirs.opening,
    "log_roll": Log._roll,
    "update_producers": log_append.update_producers,
    "append_data_batch": Append.append_data_batch,
    "read_snapshot": producer_state_manager.read_snapshot,
    "collect_aborted": local_log.LocalLog.collect_aborted_transactions,
    "check_sequence": Append._check_sequence,
    "rebuild": loader.rebuild_producer_state,
    "index_init": abstract_index.AbstractIndex.__init__,
    "truncate_log": Log.truncate_to,
    "truncate_fully": Log.truncate_fully_and_start_at,
    "seg_close": Seg.close,
    "log_close": Log.close,
    "log_end_below_start": loader.LogLoader._delete_segments_if_log_start_greater_than_log_end,
    "update_producer_state": Log._update_producer_state,
}


def _conditions(**replace):
    """ROLL_CONDITIONS with some conditions' tests replaced (by name)."""
    table = tuple(
        dataclasses.replace(c, holds=replace[c.name]) if c.name in replace else c
        for c in _ORIGINAL["conditions"]
    )
    return [(roll, "ROLL_CONDITIONS", table)]


def _time_condition(compare, waited=None, jitter=True, nonempty=True):
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


def _segment_append(compare, key_offset=None):
    """LogSegment.append with another index-interval comparison or index key."""

    def append(self, largest_offset, records):
        if not records:
            return
        physical_position = self.log.size
        self.ensure_offset_in_range(largest_offset)
        self.log.append(records)
        self._touch()
        for batch in iter_batches(records):
            if batch.max_timestamp > self.max_timestamp_so_far:
                self.max_timestamp_and_offset_so_far = TimestampOffset(
                    batch.max_timestamp, batch.last_offset
                )
            if compare(self.bytes_since_last_index_entry, self.index_interval_bytes) and (
                self._has_room()
            ):
                key = key_offset(batch) if key_offset else batch.last_offset
                self.offset_index.append(key, physical_position)
                self.time_index.maybe_append(
                    self.max_timestamp_so_far, self.shallow_offset_of_max_timestamp_so_far
                )
                self.bytes_since_last_index_entry = 0
            physical_position += batch.size_in_bytes
            self.bytes_since_last_index_entry += batch.size_in_bytes

    return [(Seg, "append", append)]


def _inactive_without_trim(self):
    self.time_index.maybe_append(
        self.max_timestamp_so_far, self.shallow_offset_of_max_timestamp_so_far, True
    )
    if self.log.size < self.log.physical_size():
        self.log.trim()


def _truncate_keeping_index(self, offset):
    mapping = self.translate_offset(offset)
    truncated = 0 if mapping is None else self.log.truncate_to(mapping.position)
    if self.log.size == 0:
        self.created = self.clock.milliseconds()
        self.rolling_based_timestamp = None
    self.bytes_since_last_index_entry = 0
    return truncated


def _time_append_equal(self, timestamp, offset, skip_full_check=False):
    if not skip_full_check and self.is_full():
        raise LogOperationError(Category.INVALID_ARGUMENT, "full time index")
    last = self.last_entry()
    if timestamp >= last.timestamp and timestamp >= 0:
        self._append_entry(timestamp, self.relative_offset(offset))


def _read_with(**override):
    def read(
        self, start_offset, max_size, max_position=segment.SEGMENT_SIZE, min_one_message=False
    ):
        args = {"max_size": max_size, "min_one_message": min_one_message, **override}
        return _ORIGINAL["read"](
            self, start_offset, args["max_size"], max_position, args["min_one_message"]
        )

    return [(Seg, "read", read)]


def _write_checkpoints_without_log_start(self):
    from reference_impl.log import checkpoint_files as ckpt

    root = self.dir.parent
    ckpt.update_offset(
        root / ckpt.RECOVERY_POINT_CHECKPOINT, self.topic, self.partition, self.recovery_point
    )
    ckpt.update_offset(root / ckpt.LOG_START_OFFSET_CHECKPOINT, self.topic, self.partition, None)


def _log_read_ignoring_max_offset(
    self, start_offset, max_bytes, max_offset=None, min_one_message=False, *isolation
):
    return _ORIGINAL["log_read"](self, start_offset, max_bytes, None, min_one_message, *isolation)


def _log_read_below_start(
    self, start_offset, max_bytes, max_offset=None, min_one_message=False, *isolation
):
    saved = self.log_start_offset
    self.log_start_offset = min(saved, start_offset)
    try:
        return _ORIGINAL["log_read"](
            self, start_offset, max_bytes, max_offset, min_one_message, *isolation
        )
    finally:
        self.log_start_offset = saved


def _log_read_above_leo_empty(
    self, start_offset, max_bytes, max_offset=None, min_one_message=False, *isolation
):
    if start_offset > self.log_end_offset:
        return FetchDataInfo(self.log_end_offset_metadata)
    return _ORIGINAL["log_read"](
        self, start_offset, max_bytes, max_offset, min_one_message, *isolation
    )


def _set_max_timestamp_keeping_crc(raw, timestamp_type, max_timestamp):
    buf = bytearray(raw)
    (attributes,) = struct.unpack_from(">h", buf, 21)
    attributes = (attributes & ~0x08) | (0x08 if timestamp_type.value == 1 else 0)
    struct.pack_into(">h", buf, 21, attributes)
    struct.pack_into(">q", buf, 35, max_timestamp)
    return bytes(buf)


def _analyze(**override):
    def analyze(records, **kwargs):
        if "zero_client_base" in override and kwargs["origin"] is log_validator.AppendOrigin.CLIENT:
            records = bytes(8) + records[8:] if len(records) >= 8 else records
        for key in ("ignore_record_size",):
            if key in override:
                kwargs[key] = override[key]
        if "max_message_bytes_delta" in override:
            kwargs["max_message_bytes"] += override["max_message_bytes_delta"]
        return _ORIGINAL["analyze"](records, **kwargs)

    return [(log_append, "analyze_and_validate_records", analyze)]


def _append_refusing_exact_segment(
    self, records, origin, assign_offsets, leader_epoch, ignore_record_size
):
    if self.config.segment_bytes <= len(records) and not self.closed:
        raise LogOperationError(Category.RECORD_BATCH_TOO_LARGE, "set of segment_bytes or more")
    return _ORIGINAL["log_append"](
        self, records, origin, assign_offsets, leader_epoch, ignore_record_size
    )


def _append_refusing_gaps(self, records, origin, assign_offsets, leader_epoch, ignore_record_size):
    if not assign_offsets and len(records) >= 17 and records[16] == 2 and not self.closed:
        (first,) = struct.unpack_from(">q", records, 0)
        if first > self.log_end_offset:
            raise LogOperationError(Category.UNEXPECTED_APPEND_OFFSET, "gap refused")
    return _ORIGINAL["log_append"](
        self, records, origin, assign_offsets, leader_epoch, ignore_record_size
    )


def _append_without_flush_messages(
    self, records, origin, assign_offsets, leader_epoch, ignore_record_size
):
    saved = self.config
    self.config = dataclasses.replace(saved, flush_messages=2**63 - 1)
    try:
        return _ORIGINAL["log_append"](
            self, records, origin, assign_offsets, leader_epoch, ignore_record_size
        )
    finally:
        self.config = saved


def _truncate_keeping(attribute_path):
    def truncate_to(self, target_offset):
        owner = self.local_log if attribute_path == "recovery_point" else self
        saved = getattr(owner, attribute_path)
        result = _ORIGINAL["log_truncate_to"](self, target_offset)
        setattr(owner, attribute_path, saved)
        self._write_checkpoints()
        return result

    return [(Log, "truncate_to", truncate_to)]


def _local_truncate_leo_at_last_batch(self, target_offset):
    deletable = self.segments.filter(lambda s: s.base_offset > target_offset)
    self.remove_and_delete_segments(deletable)
    self.segments.active_segment.truncate_to(target_offset)
    self.update_log_end_offset(self.segments.active_segment.read_next_offset())
    return deletable


def _delete_at_once(segments, **kwargs):
    return _ORIGINAL["delete_files"](segments, **{**kwargs, "async_delete": False})


def _size_pass_strict(self):
    retention_bytes = self.config.retention_bytes
    if retention_bytes < 0 or self.size < retention_bytes:
        return 0
    excess = self.size - retention_bytes

    def should_delete(seg, next_segment):
        nonlocal excess
        if excess - seg.size <= 0:
            return False
        excess -= seg.size
        return True

    return self._delete_old_segments(should_delete)


def _time_pass_inclusive(self):
    if self.config.retention_ms < 0:
        return 0
    now = self.clock.milliseconds()
    return self._delete_old_segments(
        lambda seg, nxt: now - seg.largest_timestamp() >= self.config.retention_ms
    )


def _close_without_time_entry(self):
    self._lazy_offset_index.close()
    self._lazy_time_index.close()
    trims = self.log.size < self.log.physical_size()
    self.log.close()
    if trims:
        self._touch()
    self.txn_index.close()


def _search_returning_batch_offset(self, target_timestamp, starting_position, starting_offset):
    for batch in self.batches_from(starting_position):
        if batch.max_timestamp >= target_timestamp:
            for record in batch.records():
                if record.timestamp >= target_timestamp and record.offset >= starting_offset:
                    epoch = file_records._maybe_leader_epoch(batch.partition_leader_epoch)
                    return file_records.TimestampAndOffset(
                        record.timestamp, batch.base_offset, epoch
                    )
    return None


def _maybe_roll_at_leo(self, messages_size, info):
    segment_ = self.segments.active_segment
    params = self.roll_params(messages_size, info)
    return self._roll(None) if segment_.should_roll(params) else segment_


def _roll_with_eager_indexes(self, expected_next_offset=None):
    new_segment = _ORIGINAL["local_roll"](self, expected_next_offset)
    new_segment.offset_index  # noqa: B018 - opening the lazy index creates its file
    new_segment.time_index  # noqa: B018
    return new_segment


def _recover_keeping_torn_tail(segment_, *args, **kwargs):
    """Recovery that cuts only what fails a check, keeping a partial last batch."""
    before = segment_.log.slice(0, segment_.log.size).read_bytes()
    truncated = _ORIGINAL["recover"](segment_, *args, **kwargs)
    tail = before[segment_.log.size :]
    if tail and len(tail) >= 12 and struct.unpack_from(">i", tail, 8)[0] + 12 > len(tail):
        segment_.log.append(tail)
        return 0
    return truncated


def _recover_dropping_one_more(segment_, *args, **kwargs):
    """Recovery that, having cut a bad tail, also drops the valid batch before it."""
    truncated = _ORIGINAL["recover"](segment_, *args, **kwargs)
    if truncated:
        batches = list(segment_.log.batches())
        if batches:
            truncated += segment_.truncate_to(batches[-1].base_offset)
    return truncated


def _opening_always_unclean(self, log_dir):
    _ORIGINAL["opening"](self, log_dir)
    return False


def _first_offset(batch) -> int:
    return batch.base_offset


# --- producer state and transactions (issue 9) ---


def _roll_without_snapshot(self, expected_next_offset):
    """A roll that moves the map end offset but writes no snapshot."""
    psm = self.producer_state_manager
    psm.take_snapshot = lambda sync=True: None
    try:
        return _ORIGINAL["log_roll"](self, expected_next_offset)
    finally:
        del psm.take_snapshot


def _update_producers_as_client(psm, batch, producers, origin):
    """Followers' batches checked as a client's: sequences and epochs enforced."""
    if origin is log_validator.AppendOrigin.REPLICATION:
        origin = log_validator.AppendOrigin.CLIENT
    return _ORIGINAL["update_producers"](psm, batch, producers, origin)


def _append_data_ignoring_txn_state(self, epoch, first_seq, last_seq, *rest):
    """A non-transactional batch during a transaction is taken as part of it."""
    *middle, is_transactional = rest
    if self.updated_entry.current_txn_first_offset is not None:
        is_transactional = True
    return _ORIGINAL["append_data_batch"](
        self, epoch, first_seq, last_seq, *middle, is_transactional
    )


def _read_snapshot_fatal(data, **kwargs):
    """A snapshot that does not read fails the whole load instead of being deleted."""
    try:
        return _ORIGINAL["read_snapshot"](data, **kwargs)
    except KafkaLogError as exc:
        raise KafkaLogError(Category.CORRUPT_MESSAGE, f"snapshot unreadable: {exc}") from exc


def _read_committed_ignoring_lso(self, start_offset, max_bytes, *args, **kwargs):
    """read_committed bounded by the high watermark, not the last stable offset."""
    saved = self.first_unstable_offset
    self.first_unstable_offset = None
    try:
        return _ORIGINAL["log_read"](self, start_offset, max_bytes, *args, **kwargs)
    finally:
        self.first_unstable_offset = saved


def _collect_aborted_in_first_segment(self, first, start_offset, upper_bound_offset):
    """Aborted transactions searched in the fetched segment's .txnindex only."""
    return list(first.collect_aborted_txns(start_offset, upper_bound_offset).aborted_transactions)


def _check_sequence_but_not_new_epochs(self, producer_epoch, first_seq, offset):
    """A new epoch may start at any sequence."""
    if producer_epoch != self.updated_entry.producer_epoch:
        return None
    return _ORIGINAL["check_sequence"](self, producer_epoch, first_seq, offset)


def _check_sequence_leaking_epoch(self, producer_epoch, first_seq, offset):
    """A batch refused for its sequence still bumps the producer's epoch."""
    try:
        return _ORIGINAL["check_sequence"](self, producer_epoch, first_seq, offset)
    except LogOperationError:
        self.current_entry.producer_epoch = max(self.current_entry.producer_epoch, producer_epoch)
        raise


def _transaction_starting_at_last_offset(self, *args):
    """A transaction is taken to start at its first batch's last offset."""
    started = len(self.started_transactions)
    _ORIGINAL["append_data_batch"](self, *args)
    if len(self.started_transactions) > started:
        last_offset = args[5]
        self.started_transactions[-1] = producer_state.TxnMetadata(self.producer_id, last_offset)
        self.updated_entry.current_txn_first_offset = last_offset


def _load_ignoring_snapshots(self, log_start_offset, now):
    """Snapshots are never read: the state is always rebuilt from the log start."""
    self.last_snap_offset = self.last_map_offset = log_start_offset


def _rebuild_scanning_after_clean_shutdown(psm, segments, log_start, last_offset, now, clean):
    """The load replays the log even after a clean shutdown that left no snapshot."""
    return _ORIGINAL["rebuild"](psm, segments, log_start, last_offset, now, False)


def _index_every_transaction(self, completed_txn, last_stable_offset):
    """Every completed transaction goes to the .txnindex, committed ones too."""
    txn = completed_txn
    self.txn_index.append(
        AbortedTxn(txn.producer_id, txn.first_offset, txn.last_offset, last_stable_offset)
    )


def _recover_without_producer_state(segment_, *args, **kwargs):
    """Recovery that rebuilds the indexes but replays no batch into the producer state."""
    kwargs.pop("producer_state_manager", None)
    return _ORIGINAL["recover"](segment_, *args, **kwargs)


def _exact_upper_bound(self, fetch_offset, fetch_size):
    """The first entry at or past the end of the bytes read, by a plain scan: right by the
    words of a sparse index, but not Kafka's search, which passes over an exact match in the
    first slot (READ-22)."""
    target = fetch_offset.position + fetch_size
    for n in range(self.entries):
        entry = self.entry(n)
        if entry.position >= target:
            return entry
    return None


def _truncate_after_reading_largest_timestamp(self, offset):
    """A segment truncation that reads the largest timestamp before truncating the time index,
    so a reopened segment always recomputes it (not Kafka's order: TRUNC-9)."""
    _ = self.max_timestamp_so_far
    return _ORIGINAL["truncate_to"](self, offset)


# --- agreement with Kafka's code (issue 17) ---


def _log_start_without_recovery_point(self, offset):
    """A new log start offset that leaves a lower recovery point where it is."""
    self.log_start_offset = offset


def _truncate_without_checkpoint(method):
    """A truncation that leaves the recovery-point checkpoint as it was (written at close)."""

    def truncate(self, *args, **kwargs):
        path = self.dir.parent / "recovery-point-offset-checkpoint"
        before = path.read_bytes() if path.exists() else None
        try:
            return method(self, *args, **kwargs)
        finally:
            if before is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(before)

    return truncate


def _index_refused_before_its_file(self, file, base_offset, max_index_size=-1):
    """A too-small index size refused before the file is created."""
    try:
        _ORIGINAL["index_init"](self, file, base_offset, max_index_size)
    except LogOperationError:
        Path(file).unlink(missing_ok=True)
        raise


def _index_size_rounded_up(self, file, base_offset, max_index_size=-1):
    """A segment_index_bytes below one entry taken as one entry instead of refused."""
    if 0 <= max_index_size < self.entry_size:
        max_index_size = self.entry_size
    _ORIGINAL["index_init"](self, file, base_offset, max_index_size)


# --- close-time and missing-file bugs (issue 13 §2: seen only once the log is closed) ---


def _batch_base_offsets(segment_) -> dict[int, tuple[int, int]]:
    """position -> (base offset, last offset) of every batch of a segment's .log."""
    return {b.position: (b.base_offset, b.last_offset) for b in segment_.log.batches()}


def _close_keying_index_by_base_offset(self):
    """At close the offset index is written out keyed by each batch's base offset (an
    implementation that keeps its entries in memory and writes them when it trims)."""
    if self._lazy_offset_index.is_loaded:
        index = self.offset_index
        batches = _batch_base_offsets(self)
        entries = [index.entry(n) for n in range(index.entries)]
        index.truncate()
        for entry in entries:
            base_offset = batches.get(entry.position, (entry.offset,))[0]
            index._append_entry(index.relative_offset(base_offset), entry.position)
    _ORIGINAL["seg_close"](self)


def _close_time_entry_at_base_offset(self):
    """The final time-index entry written at close names the batch's base offset, not the
    last offset of the batch carrying the largest timestamp (INDEX-16)."""
    known = self.max_timestamp_and_offset_so_far
    if known is not None and known.offset >= 0:
        for base_offset, last_offset in _batch_base_offsets(self).values():
            if base_offset <= known.offset <= last_offset:
                self.max_timestamp_and_offset_so_far = TimestampOffset(known.timestamp, base_offset)
    _ORIGINAL["seg_close"](self)


def _close_time_entry_only_into_empty_index(self):
    """close() writes the largest timestamp to the time index only when it has no entry
    yet, so a time index whose last entry lags the largest timestamp stays behind."""
    if self._lazy_time_index.is_loaded and self.time_index.entries:
        self.max_timestamp_and_offset_so_far = None
    _ORIGINAL["seg_close"](self)


def _close_without_trimming_indexes(self):
    """close() leaves every index at its preallocated length."""
    for lazy in (self._lazy_offset_index, self._lazy_time_index):
        if lazy.is_loaded:
            lazy.get().trim_to_valid_size = lambda: None
    _ORIGINAL["seg_close"](self)


def _close_dropping_empty_offset_index(self):
    """An offset index with no entries is not kept at close (no empty .index file)."""
    empty = self._lazy_offset_index.is_loaded and self.offset_index.entries == 0
    _ORIGINAL["seg_close"](self)
    if empty:
        self.offset_index_file.unlink(missing_ok=True)


def _close_without_leo_snapshot(self):
    """close() writes no producer snapshot at the LEO."""
    psm = self.producer_state_manager
    psm.take_snapshot = lambda sync=True: None
    try:
        _ORIGINAL["log_close"](self)
    finally:
        del psm.take_snapshot


def _close_lowering_recovery_point(self):
    """A close that 'flushes to the LEO' by setting the recovery point to it, even when a roll
    beyond the LEO left it above (FLUSH-7 keeps it)."""
    if not self.closed:
        self.local_log.recovery_point = min(self.local_log.recovery_point, self.log_end_offset)
    return _ORIGINAL["log_close"](self)


def _close_without_marker(self):
    """close() writes the checkpoints but no clean-shutdown marker."""
    saved = clean_shutdown.write_marker
    clean_shutdown.write_marker = lambda log_dir, broker_epoch=-1: None
    try:
        _ORIGINAL["log_close"](self)
    finally:
        clean_shutdown.write_marker = saved


def _txn_last_offset_of_set(self, segment_, producers, completed, last_offset):
    """An aborted transaction is indexed with the appended set's last offset as its
    lastOffset, not its marker's."""
    completed = [dataclasses.replace(txn, last_offset=last_offset) for txn in completed]
    return _ORIGINAL["update_producer_state"](self, segment_, producers, completed, last_offset)


def _log_end_from_last_base_offset(self):
    """A load takes the LEO as the last batch's base offset + 1 (lastOffsetDelta ignored)."""
    log_end_offset = _ORIGINAL["log_end_below_start"](self)
    if log_end_offset is None:
        return None
    last = deque(self.segments.last_segment.log.batches(), maxlen=1)
    return last[0].base_offset + 1 if last else log_end_offset


ALL = ("*",)
CATALOG = (
    # --- roll (roll.md Table 1) ---
    Mutant("roll-one-batch-late", "rolls only once the segment already holds segment_bytes", frozenset({"ROLL-2"}), ("roll.size.*",),
           lambda: _conditions(size=lambda seg, p: seg.size >= p.max_segment_bytes)),
    Mutant("roll-one-batch-early", "rolls when the append would make the segment exactly segment_bytes", frozenset({"ROLL-2"}), ("roll.size.*",),
           lambda: _conditions(size=lambda seg, p: seg.size >= p.max_segment_bytes - p.messages_size)),
    Mutant("roll-time-inclusive", ">= for > in the time condition", frozenset({"ROLL-3"}), ("roll.time.*",),
           lambda: _conditions(time=_time_condition(lambda w, limit: w >= limit))),
    Mutant("roll-time-wall-clock-only", "time_waited is always now - created, never record time", frozenset({"ROLL-4"}), ("roll.time.*",),
           lambda: _conditions(time=_time_condition(lambda w, limit: w > limit, waited=lambda seg, p: p.now - seg.created))),
    Mutant("roll-time-without-jitter", "roll_jitter_ms ignored", frozenset({"ROLL-3"}), ("roll.time.*", "model.jitter.*"),
           lambda: _conditions(time=_time_condition(lambda w, limit: w > limit, jitter=False))),
    Mutant("roll-empty-segment-by-time", "an empty segment rolls by time", frozenset({"ROLL-3"}), ("roll.time.*",),
           lambda: _conditions(time=_time_condition(lambda w, limit: w > limit, nonempty=False))),
    Mutant("roll-ignores-full-offset-index", "never rolls for a full offset index", frozenset({"ROLL-5"}), ("roll.offset-index-full.*",),
           lambda: _conditions(offset_index_full=lambda seg, p: False)),
    Mutant("time-index-without-reserved-slot", "the time index is full only at its capacity", frozenset({"ROLL-6"}), ("roll.time-index-full.*", "roll.index.*"),
           lambda: [(time_index.TimeIndex, "is_full", lambda self: self.entries >= self.max_entries)]),
    Mutant("roll-ignores-offset-range", "no roll for a set past base + 2^31 - 1", frozenset({"ROLL-7"}), ("roll.offset-range.*",),
           lambda: _conditions(offset_overflow=lambda seg, p: False)),
    Mutant("roll-base-at-leo", "an append's roll bases the new segment at the LEO, not the set's first offset", frozenset({"ROLL-11"}), ("roll.base.*", "roll.offset-range.*"),
           lambda: [(Log, "maybe_roll", _maybe_roll_at_leo)]),
    Mutant("eager-index-files", "a rolled-in segment's index files are created at once", frozenset({"ROLL-20"}), ("roll.lazy-indexes*", "flush.empty-active-left-out"),
           lambda: [(local_log.LocalLog, "roll", _roll_with_eager_indexes)]),
    # --- index ---
    Mutant("index-interval-inclusive", ">= for > in the index interval", frozenset({"INDEX-7"}), ("index.interval.*",),
           lambda: _segment_append(lambda since, interval: since >= interval)),
    Mutant("index-keyed-by-first-offset", "an index entry names its batch's first offset, not its last", frozenset({"INDEX-14"}), ("index.invariants.*", "index.placement.*"),
           lambda: _segment_append(lambda since, interval: since > interval, key_offset=_first_offset)),
    Mutant("index-not-trimmed-on-roll", "a roll does not trim the old segment's indexes", frozenset({"INDEX-4"}), ("roll.trim", "roll.size.worked-example"),
           lambda: [(Seg, "on_become_inactive_segment", _inactive_without_trim)]),
    Mutant("truncation-keeps-index-entries", "truncation leaves stale index entries", frozenset({"INDEX-6"}), ("index.truncate.*",),
           lambda: [(Seg, "truncate_to", _truncate_keeping_index)]),
    Mutant("time-index-accepts-equal-timestamps", "an entry whose timestamp equals the last one's is added", frozenset({"INDEX-10"}), ("index.time.*",),
           lambda: [(time_index.TimeIndex, "maybe_append", _time_append_equal)]),
    Mutant("file-name-padding-19", "segment files named with 19 digits instead of 20", frozenset({"MODEL-2"}), ("model.create.*",),
           lambda: [(naming, "filename_prefix_from_offset", lambda offset: f"{offset:019d}")]),
    # --- read ---
    Mutant("read-ignores-max-bytes", "max_bytes ignored: the whole segment is returned", frozenset({"READ-14"}), ("read.size.*",),
           lambda: _read_with(max_size=2**31 - 1)),
    Mutant("read-ignores-min-one-message", "min_one_message ignored", frozenset({"READ-13"}), ("read.size.*", "read.max-bytes.*"),
           lambda: _read_with(min_one_message=False)),
    Mutant("read-ignores-max-offset", "max_offset ignored", frozenset({"READ-5"}), ("read.max-offset.*",),
           lambda: [(Log, "read", _log_read_ignoring_max_offset)]),
    Mutant("read-below-log-start", "reads below the log start offset are served", frozenset({"READ-1"}), ("read.range.*", "read.out-of-range.*"),
           lambda: [(Log, "read", _log_read_below_start)]),
    Mutant("read-above-leo-is-empty", "a read above the LEO returns nothing instead of an error", frozenset({"READ-2"}), ("read.range.*", "read.out-of-range.*"),
           lambda: [(Log, "read", _log_read_above_leo_empty)]),
    Mutant("timestamp-lookup-batch-offset", "a timestamp lookup returns the batch's base offset, not the record's", frozenset({"READ-16"}), ("read.time.*",),
           lambda: [(file_records.FileRecords, "search_for_timestamp", _search_returning_batch_offset)]),
    # --- append ---
    Mutant("leader-keeps-stale-crc", "maxTimestamp corrected without recomputing the CRC", frozenset({"APPEND-17"}), ("append.leader.*", "model.clock.*"),
           lambda: [(log_validator, "set_max_timestamp", _set_max_timestamp_keeping_crc)]),
    Mutant("leader-accepts-nonzero-base-offset", "a leader takes a batch whose baseOffset is not 0", frozenset({"APPEND-5"}), ("append.leader.*",),
           lambda: _analyze(zero_client_base=True)),
    Mutant("max-message-bytes-off-by-one", "a batch of exactly max_message_bytes is refused", frozenset({"APPEND-6"}), ("append.leader.max-message-bytes",),
           lambda: _analyze(max_message_bytes_delta=-1)),
    Mutant("follower-checks-max-message-bytes", "followers are held to max_message_bytes", frozenset({"APPEND-6"}), ("append.follower.*",),
           lambda: _analyze(ignore_record_size=False)),
    Mutant("set-of-segment-bytes-refused", "a set of exactly segment_bytes is refused", frozenset({"APPEND-21"}), ("append.set-size.*",),
           lambda: [(Log, "_append", _append_refusing_exact_segment)]),
    Mutant("follower-refuses-gaps", "a follower set starting above the LEO is refused", frozenset({"APPEND-18"}), ("append.follower.*",),
           lambda: [(Log, "_append", _append_refusing_gaps)]),
    Mutant("flush-messages-ignored", "flush_messages never triggers a flush", frozenset({"APPEND-25"}), ("append.flush.*",),
           lambda: [(Log, "_append", _append_without_flush_messages)]),
    # --- truncation ---
    Mutant("truncate-keeps-log-start", "truncation never lowers the log start offset", frozenset({"TRUNC-7"}), ("truncate.*",),
           lambda: _truncate_keeping("log_start_offset")),
    Mutant("truncate-keeps-recovery-point", "truncation leaves the recovery point above the LEO", frozenset({"TRUNC-10"}), ("truncate.*", "model.recovery-point.*"),
           lambda: _truncate_keeping("recovery_point")),
    Mutant("truncate-reads-largest-timestamp-first", "a truncation reads the segment's largest timestamp before truncating its time index", frozenset({"TRUNC-9"}), ("truncate.largest-timestamp*",),
           lambda: [(Seg, "truncate_to", _truncate_after_reading_largest_timestamp)]),
    Mutant("truncation-keeps-txnindex-entries", "a truncation leaves the .txnindex as it was", frozenset({"TRUNC-16"}), ("transactions.lso.after-truncate", "transactions.truncate.*"),
           lambda: [(transaction_index.TransactionIndex, "truncate_to", lambda self, offset: None)]),
    Mutant("truncate-leo-at-last-batch", "the LEO after truncation is the end of the kept batches", frozenset({"TRUNC-6"}), ("truncate.*",),
           lambda: [(local_log.LocalLog, "truncate_to", _local_truncate_leo_at_last_batch)]),
    # --- retention, flush, checkpoints, epochs ---
    Mutant("deleted-files-removed-at-once", "file_delete_delay_ms ignored", frozenset({"RET-14"}), ("model.scheduler.*", "retention.start.*"),
           lambda: [(local_log, "delete_segment_files", _delete_at_once)]),
    Mutant("retention-size-off-by-one", "a segment is deleted by size only when the excess stays above 0", frozenset({"RET-8"}), ("retention.size.*",),
           lambda: [(retention.LogRetention, "_delete_retention_size_breached_segments", _size_pass_strict)]),
    Mutant("retention-time-inclusive", ">= for > in the time pass", frozenset({"RET-7"}), ("retention.time.*",),
           lambda: [(retention.LogRetention, "_delete_retention_ms_breached_segments", _time_pass_inclusive)]),
    Mutant("flush-does-not-move-recovery-point", "a flush never raises the recovery point", frozenset({"FLUSH-5"}), ("flush.recovery-point.*",),
           lambda: [(local_log.LocalLog, "mark_flushed", lambda self, offset: None)]),
    Mutant("close-without-final-time-entry", "close does not append the largest timestamp to the time index", frozenset({"FLUSH-8"}), ("flush.close.*",),
           lambda: [(Seg, "close", _close_without_time_entry)]),
    Mutant("close-lowers-recovery-point", "close sets the recovery point to the LEO when a roll beyond the LEO left it above", frozenset({"FLUSH-7"}), ("flush.close.*", "model.recovery-point.*"),
           lambda: [(Log, "close", _close_lowering_recovery_point)]),
    Mutant("log-start-offset-not-persisted", "the log start offset is never written to its checkpoint", frozenset({"CKPT-B-6"}), ("flush.close.*",),
           lambda: [(Log, "_write_checkpoints", _write_checkpoints_without_log_start)]),
    # --- recovery ---
    Mutant("recovery-keeps-torn-batch", "recovery keeps a partial last batch", frozenset({"FRAME-4"}), ("recovery.damage.*",),
           lambda: [(Seg, "recover", _recover_keeping_torn_tail)]),
    Mutant("recovery-drops-valid-batch", "recovery also drops the last valid batch before a bad one", frozenset({"FRAME-7"}), ("recovery.damage.*",),
           lambda: [(Seg, "recover", _recover_dropping_one_more)]),
    Mutant("recovery-ignores-clean-marker", "every open recovers, clean shutdown or not", frozenset({"CLEAN-1"}), ("recovery.damage.*",),
           lambda: [(clean_shutdown.LogDirs, "opening", _opening_always_unclean)]),
    Mutant("epoch-cache-not-truncated", "truncation leaves the leader epoch cache as it was", frozenset({"LEPOCH-6"}), ("epoch.*",),
           lambda: [(leader_epoch.LeaderEpochFileCache, "truncate_from_end", lambda self, end_offset: None)]),
    # --- producer state: idempotence (PSTATE) ---
    Mutant("no-duplicate-detection", "a retried batch is never recognised as a duplicate", frozenset({"PSTATE-4"}), ("producer.duplicate.*",),
           lambda: [(producer_state.ProducerStateEntry, "find_duplicate_batch", lambda self, batch: None)]),
    Mutant("no-sequence-check", "sequences are never checked", frozenset({"PSTATE-6"}), ("producer.sequence.*",),
           lambda: [(Append, "_check_sequence", lambda self, epoch, first_seq, offset: None)]),
    Mutant("older-epoch-accepted", "a batch of an older producer epoch is accepted", frozenset({"PSTATE-5"}), ("producer.epoch.*",),
           lambda: [(Append, "_check_producer_epoch", lambda self, epoch, offset: None)]),
    Mutant("follower-checks-sequences", "follower appends are checked as a client's", frozenset({"PSTATE-8"}), ("producer.follower.*",),
           lambda: [(log_append, "update_producers", _update_producers_as_client)]),
    Mutant("retains-six-batches", "six batches per producer are kept for duplicate detection", frozenset({"PSTATE-2"}), ("producer.duplicate.*",),
           lambda: [(producer_state, "NUM_BATCHES_TO_RETAIN", 6)]),
    Mutant("new-epoch-any-sequence", "a new producer epoch may start at any sequence", frozenset({"PSTATE-7"}), ("producer.epoch.*",),
           lambda: [(Append, "_check_sequence", _check_sequence_but_not_new_epochs)]),
    Mutant("refused-append-bumps-epoch", "a batch refused for its sequence still moves the producer to its epoch", frozenset({"PSTATE-9"}), ("producer.epoch.*",),
           lambda: [(Append, "_check_sequence", _check_sequence_leaking_epoch)]),
    Mutant("expired-producers-loaded", "producer.id.expiration.ms ignored at load", frozenset({"PSTATE-10"}), ("producer.snapshot.expired-*",),
           lambda: [(PSM, "_is_expired", lambda self, now, entry: False)]),
    # --- producer snapshots (SNAP-B, RECOV-19) ---
    Mutant("no-snapshot-at-roll", "a roll writes no producer snapshot", frozenset({"SNAP-B-1"}), ("producer.snapshot.roll-*",),
           lambda: [(Log, "_roll", _roll_without_snapshot)]),
    Mutant("snapshots-ignored-at-load", "a load never reads a snapshot: the whole log is replayed", frozenset({"SNAP-B-2"}), ("producer.snapshot.*",),
           lambda: [(PSM, "_load_from_snapshot", _load_ignoring_snapshots)]),
    Mutant("clean-load-scans-log", "after a clean shutdown without snapshots the log is replayed", frozenset({"SNAP-B-3"}), ("producer.snapshot.clean-*",),
           lambda: [(loader, "rebuild_producer_state", _rebuild_scanning_after_clean_shutdown)]),
    Mutant("snapshots-never-deleted", "snapshots outside the log's range are never deleted", frozenset({"SNAP-B-5"}), ("producer.snapshot.at-log-start-*", "producer.snapshot.truncate-*"),
           lambda: [(PSM, "_remove_and_delete_snapshot", lambda self, offset: None)]),
    Mutant("stray-snapshots-kept", "stray snapshots are never removed at load", frozenset({"SNAP-B-4"}), ("producer.snapshot.stray-*",),
           lambda: [(PSM, "remove_stray_snapshots", lambda self, bases: None)]),
    Mutant("corrupt-snapshot-fails-load", "a snapshot that does not read fails the load", frozenset({"SNAP-B-6"}), ("producer.snapshot.corrupt-*",),
           lambda: [(producer_state_manager, "read_snapshot", _read_snapshot_fatal)]),
    Mutant("snapshots-kept-with-deleted-segments", "a deleted segment's snapshot stays", frozenset({"SNAP-B-8"}), ("producer.snapshot.retention",),
           lambda: [(Log, "_delete_producer_snapshots", lambda self, segments: None)]),
    Mutant("recovery-without-producer-state", "recovery replays no batch into the producer state", frozenset({"RECOV-19"}), ("transactions.crash.*", "producer.snapshot.crash-*"),
           lambda: [(Seg, "recover", _recover_without_producer_state)]),
    # --- transactions (TXN-B, READ-21, READ-22) ---
    Mutant("committed-transactions-indexed", "committed transactions go to the .txnindex too", frozenset({"TXN-B-5"}), ("transactions.commit",),
           lambda: [(Seg, "update_txn_index", _index_every_transaction)]),
    Mutant("transaction-starts-at-last-offset", "a transaction starts at its first batch's last offset", frozenset({"TXN-B-2"}), ("transactions.commit",),
           lambda: [(Append, "append_data_batch", _transaction_starting_at_last_offset)]),
    Mutant("non-transactional-write-in-transaction", "a non-transactional batch joins the open transaction", frozenset({"TXN-B-1"}), ("transactions.non-transactional-*",),
           lambda: [(Append, "append_data_batch", _append_data_ignoring_txn_state)]),
    Mutant("coordinator-epoch-unchecked", "a marker from an older coordinator epoch is accepted", frozenset({"TXN-B-4"}), ("transactions.coordinator-*",),
           lambda: [(Append, "_check_coordinator_epoch", lambda self, coordinator_epoch, offset: None)]),
    Mutant("lso-ignores-other-producers", "an aborted transaction is indexed with its marker's offset + 1 as LSO", frozenset({"TXN-B-6"}), ("transactions.lso.*",),
           lambda: [(PSM, "last_stable_offset", lambda self, completed: completed.last_offset + 1)]),
    Mutant("lso-is-high-watermark", "the last stable offset is always the high watermark", frozenset({"TXN-B-7"}), ("transactions.lso.*", "transactions.commit"),
           lambda: [(Log, "last_stable_offset", property(lambda self: self.high_watermark))]),
    Mutant("read-committed-ignores-lso", "read_committed is bounded by the high watermark", frozenset({"READ-21"}), ("transactions.read-committed.*",),
           lambda: [(Log, "read", _read_committed_ignoring_lso)]),
    Mutant("txnindex-last-offset-of-set", "an aborted transaction's lastOffset is the appended set's last offset, not its marker's", frozenset({"TXN-B-5"}), ("transactions.*",),
           lambda: [(Log, "_update_producer_state", _txn_last_offset_of_set)]),
    Mutant("aborted-transactions-one-segment", "aborted transactions are looked up in the fetched segment only", frozenset({"READ-22"}), ("transactions.read-committed.*",),
           lambda: [(local_log.LocalLog, "collect_aborted_transactions", _collect_aborted_in_first_segment)]),
    Mutant("upper-bound-plain-search", "the read_committed upper bound is the first index entry at or past the end of the bytes read, found by a plain scan", frozenset({"READ-22"}), ("transactions.read-committed.*",),
           lambda: [(offset_index.OffsetIndex, "fetch_upper_bound_offset", _exact_upper_bound)]),
    # --- agreement with Kafka's code (RECOV-9, CKPT-B-9, INDEX-3) ---
    Mutant("recovery-point-below-log-start", "a loaded recovery point is not raised to the log start offset", frozenset({"RECOV-9"}), ("recovery.offsets.raised-to-log-start", "recovery.checkpoint.log-start-past-end"),
           lambda: [(Log, "_update_log_start_offset", _log_start_without_recovery_point)]),
    Mutant("no-checkpoint-at-truncation", "a truncation leaves the recovery-point checkpoint of the last close", frozenset({"CKPT-B-9"}), ("flush.checkpoints.after-truncation",),
           lambda: [(Log, "truncate_to", _truncate_without_checkpoint(_ORIGINAL["truncate_log"])),
                    (Log, "truncate_fully_and_start_at", _truncate_without_checkpoint(_ORIGINAL["truncate_fully"]))]),
    Mutant("too-small-index-without-file", "a too-small index is refused before its file is created", frozenset({"INDEX-22"}), ("index.files.too-small-*",),
           lambda: [(abstract_index.AbstractIndex, "__init__", _index_refused_before_its_file)]),
    Mutant("too-small-index-accepted", "a segment_index_bytes below one entry is taken as one entry", frozenset({"INDEX-3"}), ("index.files.too-small-*",),
           lambda: [(abstract_index.AbstractIndex, "__init__", _index_size_rounded_up)]),

    # --- close time and missing files (issue 13 §2) ---
    Mutant("close-index-keyed-by-base-offset", "the offset index is written at close keyed by each batch's base offset", frozenset({"INDEX-14"}), ("index.*",),
           lambda: [(Seg, "close", _close_keying_index_by_base_offset)]),
    Mutant("close-time-entry-at-base-offset", "the final time-index entry of close names the batch's base offset", frozenset({"INDEX-16"}), ("index.*", "flush.close.*"),
           lambda: [(Seg, "close", _close_time_entry_at_base_offset)]),
    Mutant("close-time-entry-only-into-empty-index", "close appends the largest timestamp only to a time index without entries", frozenset({"FLUSH-8"}), ("index.*", "roll.*"),
           lambda: [(Seg, "close", _close_time_entry_only_into_empty_index)]),
    Mutant("close-without-trimming-indexes", "close leaves the indexes at their preallocated length", frozenset({"FLUSH-9"}), ("index.*",),
           lambda: [(Seg, "close", _close_without_trimming_indexes)]),
    Mutant("close-drops-empty-offset-index", "an offset index without entries is deleted at close", frozenset({"ROLL-20"}), ("append.*",),
           lambda: [(Seg, "close", _close_dropping_empty_offset_index)]),
    Mutant("close-without-leo-snapshot", "close writes no producer snapshot at the LEO", frozenset({"SNAP-B-1"}), ("append.*",),
           lambda: [(Log, "close", _close_without_leo_snapshot)]),
    Mutant("close-without-clean-shutdown-marker", "close writes no .kafka_cleanshutdown", frozenset({"CLEAN-1"}), ("append.*",),
           lambda: [(Log, "close", _close_without_marker)]),
    Mutant("load-leo-from-last-base-offset", "a load sets the LEO to the last batch's base offset + 1", frozenset({"LOAD-24"}), ("append.*", "index.*"),
           lambda: [(loader.LogLoader, "_delete_segments_if_log_start_greater_than_log_end", _log_end_from_last_base_offset)]),
)  # fmt: skip
CATALOG += TIMESTAMP_MUTANTS
CATALOG += COMPACTION  # the log cleaner's mutants (compaction.md)
