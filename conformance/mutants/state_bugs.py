"""The mutants' bugs in producer state and transactions (producer-state.md,
transactions.md), in agreement with Kafka's code (issue 17), and those seen only once the
log is closed (issue 13 §2). Each function is one bug, named after it; the catalogue
(catalog.py) pairs it with the rules it breaks."""

from __future__ import annotations

import dataclasses
from collections import deque
from pathlib import Path

from reference_impl.errors import Category, KafkaLogError, LogOperationError
from reference_impl.formats.index_entries import AbortedTxn, TimestampOffset
from reference_impl.log import (
    clean_shutdown,
    log_validator,
    producer_state,
)

from .originals import ORIGINAL

# --- producer state and transactions (issue 9) ---


def roll_without_snapshot(self, expected_next_offset):
    """A roll that moves the map end offset but writes no snapshot."""
    psm = self.producer_state_manager
    psm.take_snapshot = lambda sync=True: None
    try:
        return ORIGINAL["log_roll"](self, expected_next_offset)
    finally:
        del psm.take_snapshot


def update_producers_as_client(psm, batch, producers, origin):
    """Followers' batches checked as a client's: sequences and epochs enforced."""
    if origin is log_validator.AppendOrigin.REPLICATION:
        origin = log_validator.AppendOrigin.CLIENT
    return ORIGINAL["update_producers"](psm, batch, producers, origin)


def append_data_ignoring_txn_state(self, epoch, first_seq, last_seq, *rest):
    """A non-transactional batch during a transaction is taken as part of it."""
    *middle, is_transactional = rest
    if self.updated_entry.current_txn_first_offset is not None:
        is_transactional = True
    return ORIGINAL["append_data_batch"](
        self, epoch, first_seq, last_seq, *middle, is_transactional
    )


def read_snapshot_fatal(data, **kwargs):
    """A snapshot that does not read fails the whole load instead of being deleted."""
    try:
        return ORIGINAL["read_snapshot"](data, **kwargs)
    except KafkaLogError as exc:
        raise KafkaLogError(Category.CORRUPT_MESSAGE, f"snapshot unreadable: {exc}") from exc


def read_committed_ignoring_lso(self, start_offset, max_bytes, *args, **kwargs):
    """read_committed bounded by the high watermark, not the last stable offset."""
    saved = self.first_unstable_offset
    self.first_unstable_offset = None
    try:
        return ORIGINAL["log_read"](self, start_offset, max_bytes, *args, **kwargs)
    finally:
        self.first_unstable_offset = saved


def collect_aborted_in_first_segment(self, first, start_offset, upper_bound_offset):
    """Aborted transactions searched in the fetched segment's .txnindex only."""
    return list(first.collect_aborted_txns(start_offset, upper_bound_offset).aborted_transactions)


def check_sequence_but_not_new_epochs(self, producer_epoch, first_seq, offset):
    """A new epoch may start at any sequence."""
    if producer_epoch != self.updated_entry.producer_epoch:
        return None
    return ORIGINAL["check_sequence"](self, producer_epoch, first_seq, offset)


def check_sequence_leaking_epoch(self, producer_epoch, first_seq, offset):
    """A batch refused for its sequence still bumps the producer's epoch."""
    try:
        return ORIGINAL["check_sequence"](self, producer_epoch, first_seq, offset)
    except LogOperationError:
        self.current_entry.producer_epoch = max(self.current_entry.producer_epoch, producer_epoch)
        raise


def transaction_starting_at_last_offset(self, *args):
    """A transaction is taken to start at its first batch's last offset."""
    started = len(self.started_transactions)
    ORIGINAL["append_data_batch"](self, *args)
    if len(self.started_transactions) > started:
        last_offset = args[5]
        self.started_transactions[-1] = producer_state.TxnMetadata(self.producer_id, last_offset)
        self.updated_entry.current_txn_first_offset = last_offset


def load_ignoring_snapshots(self, log_start_offset, now):
    """Snapshots are never read: the state is always rebuilt from the log start."""
    self.last_snap_offset = self.last_map_offset = log_start_offset


def rebuild_scanning_after_clean_shutdown(psm, segments, log_start, last_offset, now, clean):
    """The load replays the log even after a clean shutdown that left no snapshot."""
    return ORIGINAL["rebuild"](psm, segments, log_start, last_offset, now, False)


def index_every_transaction(self, completed_txn, last_stable_offset):
    """Every completed transaction goes to the .txnindex, committed ones too."""
    txn = completed_txn
    self.txn_index.append(
        AbortedTxn(txn.producer_id, txn.first_offset, txn.last_offset, last_stable_offset)
    )


def recover_without_producer_state(segment_, *args, **kwargs):
    """Recovery that rebuilds the indexes but replays no batch into the producer state."""
    kwargs.pop("producer_state_manager", None)
    return ORIGINAL["recover"](segment_, *args, **kwargs)


def exact_upper_bound(self, fetch_offset, fetch_size):
    """The first entry at or past the end of the bytes read, by a plain scan: right by the
    words of a sparse index, but not Kafka's search, which passes over an exact match in the
    first slot (READ-22)."""
    target = fetch_offset.position + fetch_size
    for n in range(self.entries):
        entry = self.entry(n)
        if entry.position >= target:
            return entry
    return None


def truncate_after_reading_largest_timestamp(self, offset):
    """A segment truncation that reads the largest timestamp before truncating the time index,
    so a reopened segment always recomputes it (not Kafka's order: TRUNC-9)."""
    _ = self.max_timestamp_so_far
    return ORIGINAL["truncate_to"](self, offset)


# --- agreement with Kafka's code (issue 17) ---


def log_start_without_recovery_point(self, offset):
    """A new log start offset that leaves a lower recovery point where it is."""
    self.log_start_offset = offset


def truncate_without_checkpoint(method):
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


def index_refused_before_its_file(self, file, base_offset, max_index_size=-1):
    """A too-small index size refused before the file is created."""
    try:
        ORIGINAL["index_init"](self, file, base_offset, max_index_size)
    except LogOperationError:
        Path(file).unlink(missing_ok=True)
        raise


def index_size_rounded_up(self, file, base_offset, max_index_size=-1):
    """A segment_index_bytes below one entry taken as one entry instead of refused."""
    if 0 <= max_index_size < self.entry_size:
        max_index_size = self.entry_size
    ORIGINAL["index_init"](self, file, base_offset, max_index_size)


# --- close-time and missing-file bugs (issue 13 §2: seen only once the log is closed) ---


def batch_base_offsets(segment_) -> dict[int, tuple[int, int]]:
    """position -> (base offset, last offset) of every batch of a segment's .log."""
    return {b.position: (b.base_offset, b.last_offset) for b in segment_.log.batches()}


def close_keying_index_by_base_offset(self):
    """At close the offset index is written out keyed by each batch's base offset (an
    implementation that keeps its entries in memory and writes them when it trims)."""
    if self._lazy_offset_index.is_loaded:
        index = self.offset_index
        batches = batch_base_offsets(self)
        entries = [index.entry(n) for n in range(index.entries)]
        index.truncate()
        for entry in entries:
            base_offset = batches.get(entry.position, (entry.offset,))[0]
            index._append_entry(index.relative_offset(base_offset), entry.position)
    ORIGINAL["seg_close"](self)


def close_time_entry_at_base_offset(self):
    """The final time-index entry written at close names the batch's base offset, not the
    last offset of the batch carrying the largest timestamp (INDEX-16)."""
    known = self.max_timestamp_and_offset_so_far
    if known is not None and known.offset >= 0:
        for base_offset, last_offset in batch_base_offsets(self).values():
            if base_offset <= known.offset <= last_offset:
                self.max_timestamp_and_offset_so_far = TimestampOffset(known.timestamp, base_offset)
    ORIGINAL["seg_close"](self)


def close_time_entry_only_into_empty_index(self):
    """close() writes the largest timestamp to the time index only when it has no entry
    yet, so a time index whose last entry lags the largest timestamp stays behind."""
    if self._lazy_time_index.is_loaded and self.time_index.entries:
        self.max_timestamp_and_offset_so_far = None
    ORIGINAL["seg_close"](self)


def close_without_trimming_indexes(self):
    """close() leaves every index at its preallocated length."""
    for lazy in (self._lazy_offset_index, self._lazy_time_index):
        if lazy.is_loaded:
            lazy.get().trim_to_valid_size = lambda: None
    ORIGINAL["seg_close"](self)


def close_dropping_empty_offset_index(self):
    """An offset index with no entries is not kept at close (no empty .index file)."""
    empty = self._lazy_offset_index.is_loaded and self.offset_index.entries == 0
    ORIGINAL["seg_close"](self)
    if empty:
        self.offset_index_file.unlink(missing_ok=True)


def close_without_leo_snapshot(self):
    """close() writes no producer snapshot at the LEO."""
    psm = self.producer_state_manager
    psm.take_snapshot = lambda sync=True: None
    try:
        ORIGINAL["log_close"](self)
    finally:
        del psm.take_snapshot


def close_lowering_recovery_point(self):
    """A close that 'flushes to the LEO' by setting the recovery point to it, even when a roll
    beyond the LEO left it above (FLUSH-7 keeps it)."""
    if not self.closed:
        self.local_log.recovery_point = min(self.local_log.recovery_point, self.log_end_offset)
    return ORIGINAL["log_close"](self)


def close_without_marker(self):
    """close() writes the checkpoints but no clean-shutdown marker."""
    saved = clean_shutdown.write_marker
    clean_shutdown.write_marker = lambda log_dir, broker_epoch=-1: None
    try:
        ORIGINAL["log_close"](self)
    finally:
        clean_shutdown.write_marker = saved


def txn_last_offset_of_set(self, segment_, producers, completed, last_offset):
    """An aborted transaction is indexed with the appended set's last offset as its
    lastOffset, not its marker's."""
    completed = [dataclasses.replace(txn, last_offset=last_offset) for txn in completed]
    return ORIGINAL["update_producer_state"](self, segment_, producers, completed, last_offset)


def log_end_from_last_base_offset(self):
    """A load takes the LEO as the last batch's base offset + 1 (lastOffsetDelta ignored)."""
    log_end_offset = ORIGINAL["log_end_below_start"](self)
    if log_end_offset is None:
        return None
    last = deque(self.segments.last_segment.log.batches(), maxlen=1)
    return last[0].base_offset + 1 if last else log_end_offset
