"""One pass of the log cleaner over one log: Kafka's Cleaner (spec/behaviour/compaction.md §2-§4).

[core/.../log/LogCleaner.scala Cleaner: clean, doClean, cleanSegments, cleanInto,
shouldRetainRecord, buildOffsetMap, buildOffsetMapForSegment, groupSegmentsBySize]
A pass over the cleanable range ``[first dirty offset, first uncleanable offset)``
(log_cleaner_manager.py picks it):

1. **offset map** (COMPACT-9 to COMPACT-11): read the dirty section, remembering each key's
   latest offset, until the section ends or the map holds its quota of keys; the map's
   reach plus one is the pass's *end offset*, the next first dirty offset;
2. **groups** (COMPACT-22): the segments below the end offset, consecutive ones merged while
   the merged segment stays within ``segment.bytes``, the index size and an int's offsets;
3. **copy** (COMPACT-12 to COMPACT-21): each group's batches through the filter into one new
   ``.cleaned`` segment, keeping a record only if no later record of its key is in the map
   and, for a tombstone, its delete horizon has not passed; aborted transactions go;
4. **swap** (COMPACT-23, COMPACT-24): the new segment replaces the group by the crash-safe
   ``.cleaned`` -> ``.swap`` -> final-name protocol of LocalLog.replaceSegments.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..constants import INT32_MAX
from .cleaned_transaction_metadata import CleanedTransactionMetadata
from .offset_map import SkimpyOffsetMap
from .offset_overflow import create_new_cleaned_segment
from .record_filter import BatchRetention, RecordFilter, filter_to
from .segment import LogSegment
from .storage import storage

DEDUPE_BUFFER_SIZE = 4 * 1024 * 1024  # the protocol's default (Kafka's broker: 128 MiB)
IO_BUFFER_SIZE = 512 * 1024  # log.cleaner.io.buffer.size; the Cleaner gets half
LOAD_FACTOR = 0.9  # log.cleaner.io.buffer.load.factor
MESSAGE_MAX_BYTES = 1024 * 1024 + 12  # the broker's message.max.bytes


@dataclass
class CleanerStats:
    """LogCleaner.scala CleanerStats: the counters a pass reports (the protocol's result)."""

    messages_read: int = 0
    bytes_read: int = 0
    messages_written: int = 0
    bytes_written: int = 0
    invalid_messages_read: int = 0
    map_messages_read: int = 0
    map_bytes_read: int = 0


@dataclass(frozen=True)
class LastRecord:
    """UnifiedLog.lastRecordsOfActiveProducers: a producer's last data offset (None when it
    has written only markers) and epoch."""

    last_data_offset: int | None
    producer_epoch: int


class Cleaner:
    def __init__(
        self,
        dedupe_buffer_size: int = DEDUPE_BUFFER_SIZE,
        io_buffer_size: int = IO_BUFFER_SIZE,
        max_io_buffer_size: int = MESSAGE_MAX_BYTES,
        load_factor: float = LOAD_FACTOR,
    ) -> None:
        """COMPACT-9: a map too small for one key would never make progress: refused."""
        self.offset_map = SkimpyOffsetMap(dedupe_buffer_size)
        if not self.offset_map.slots * load_factor > 1:
            raise ValueError(
                "offset map is too small to fit in even a single message, so log cleaning "
                "will never make progress: increase dedupe_buffer_size"
            )
        self.io_buffer_size = io_buffer_size // 2  # one read and one write buffer
        self.max_io_buffer_size = max_io_buffer_size
        self.load_factor = load_factor
        self._buffer = self.io_buffer_size

    # --- the pass (doClean) ---
    def clean(self, log, first_dirty_offset: int, first_uncleanable_offset: int, now: int):
        """COMPACT-11: one pass; returns (end offset, stats)."""
        stats = CleanerStats()
        clean_segments = log.segments.values(0, first_dirty_offset)
        # COMPACT-16: legacy (v0/v1) tombstones live by the last clean segment's mtime
        legacy_delete_horizon = (
            clean_segments[-1].last_modified() - log.config.delete_retention_ms
            if clean_segments
            else 0
        )
        self.build_offset_map(log, first_dirty_offset, first_uncleanable_offset, stats)
        end_offset = self.offset_map.latest_offset + 1
        groups = group_segments_by_size(
            log.segments.values(0, end_offset),
            log.config.segment_bytes,
            log.config.segment_index_bytes,
            first_uncleanable_offset,
        )
        txn_metadata = CleanedTransactionMetadata()
        for group in groups:
            self.clean_segments(
                log,
                group,
                now,
                stats,
                txn_metadata,
                legacy_delete_horizon,
                first_uncleanable_offset,
            )
        return end_offset, stats

    # --- the offset map (COMPACT-9, COMPACT-10) ---
    def build_offset_map(self, log, start: int, end: int, stats: CleanerStats) -> None:
        """COMPACT-10: the latest offset of each key of ``[start, end)``, segment by segment,
        until the map is full; aborted transactions' records are not keys."""
        offset_map = self.offset_map
        offset_map.clear()
        dirty = log.segments.values(start, end)
        txn_metadata = CleanedTransactionMetadata()
        txn_metadata.add_aborted_transactions(_aborted_transactions(log, start, end))
        for i, segment in enumerate(dirty):
            next_start = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
            if self._build_offset_map_for_segment(segment, start, next_start, txn_metadata, stats):
                return

    def _build_offset_map_for_segment(
        self, segment, start, next_start, txn_metadata, stats
    ) -> bool:
        """True when the map filled up before the segment's end."""
        offset_map = self.offset_map
        max_keys = int(offset_map.slots * self.load_factor)
        position = segment.offset_index.lookup(start).position
        while position < segment.log.size:
            batches = self._read_chunk(segment.log, position)
            for batch in batches:
                if batch.is_control:
                    txn_metadata.on_control_batch_read(batch)
                    stats.map_messages_read += 1
                elif txn_metadata.on_batch_read(batch):
                    stats.map_messages_read += batch.records_count  # aborted: no keys
                else:
                    for record in batch.records():
                        if record.key is not None and record.offset >= start:
                            if offset_map.size >= max_keys:
                                return True
                            offset_map.put(record.key, record.offset)
                        stats.map_messages_read += 1
                if batch.last_offset >= start:
                    offset_map.update_latest_offset(batch.last_offset)
            read = sum(b.size_in_bytes for b in batches)
            position += read
            stats.map_bytes_read += read
        # offsets with no record up to the next segment still count as read (a gap)
        offset_map.update_latest_offset(next_start - 1)
        self._buffer = self.io_buffer_size
        return False

    # --- copying a group into a .cleaned segment (cleanSegments) ---
    def clean_segments(
        self, log, segments, now, stats, txn_metadata, legacy_delete_horizon, upper_bound
    ) -> None:
        """COMPACT-21, COMPACT-23: the group's kept batches into one new segment, swapped in."""
        cleaned = create_new_cleaned_segment(
            log.dir, log.config, log.clock, segments[0].base_offset
        )
        txn_metadata.cleaned_index = cleaned.txn_index
        last_records = last_records_of_active_producers(log)
        for i, segment in enumerate(segments):
            following = segments[i + 1] if i + 1 < len(segments) else None
            upper = following.base_offset if following else segment.read_next_offset()
            txn_metadata.add_aborted_transactions(
                _aborted_transactions(log, segment.base_offset, upper)
            )
            cleaner_filter = LogCleanerFilter(
                self.offset_map,
                now,
                log.config.delete_retention_ms,
                txn_metadata,
                last_records,
                upper_bound,
                retain_legacy_deletes=segment.last_modified() > legacy_delete_horizon,
                stats=stats,
            )
            self._clean_into(segment, cleaned, cleaner_filter, stats)
        # a failure above leaves the .cleaned files, as Kafka does; the next load deletes them
        cleaned.on_become_inactive_segment()
        cleaned.flush()
        set_last_modified(cleaned, segments[-1].last_modified())  # COMPACT-23
        log.replace_segments([cleaned], segments)

    def _clean_into(self, source: LogSegment, dest: LogSegment, cleaner_filter, stats) -> None:
        """COMPACT-21: chunk by chunk of the read buffer, one ``append`` of what each keeps."""
        position = 0
        while position < source.log.size:
            batches = self._read_chunk(source.log, position)
            result = filter_to(batches, cleaner_filter)
            stats.messages_read += result.messages_read
            stats.bytes_read += result.bytes_read
            stats.messages_written += result.messages_retained
            stats.bytes_written += result.bytes_retained
            position += result.bytes_read
            if result.output:
                dest.append(result.max_offset, bytes(result.output))
        self._buffer = self.io_buffer_size

    def _read_chunk(self, records, position: int) -> list:
        """The whole batches from ``position`` that fit the read buffer; one that does not fit
        grows the buffer (doubling, up to the largest message size)."""
        while True:
            batches, used = [], 0
            for batch in records.batches_from(position):
                if used + batch.size_in_bytes > self._buffer:
                    break
                batches.append(batch)
                used += batch.size_in_bytes
            if batches or used == 0 and position >= records.size:
                return batches
            if self._buffer >= self.max_io_buffer_size:
                raise ValueError(
                    f"{records.file} holds a batch at position {position} larger than the "
                    f"cleaner's largest buffer ({self.max_io_buffer_size} bytes)"
                )
            self._buffer = min(self._buffer * 2, self.max_io_buffer_size)


class LogCleanerFilter(RecordFilter):
    """cleanInto's RecordFilter: the batch and record decisions of COMPACT-12 to COMPACT-20."""

    def __init__(
        self,
        offset_map: SkimpyOffsetMap,
        now: int,
        delete_retention_ms: int,
        txn_metadata: CleanedTransactionMetadata,
        last_records: dict[int, LastRecord],
        upper_bound: int,
        *,
        retain_legacy_deletes: bool,
        stats: CleanerStats,
    ) -> None:
        super().__init__(now, delete_retention_ms)
        self.offset_map = offset_map
        self.txn_metadata = txn_metadata
        self.last_records = last_records
        self.upper_bound = upper_bound
        self.retain_legacy_deletes = retain_legacy_deletes
        self.stats = stats
        self.discard_batch_records = False

    def check_batch_retention(self, batch) -> tuple[BatchRetention, bool]:
        """COMPACT-14, COMPACT-15, COMPACT-20: aborted data and spent markers go (a marker only past
        its delete horizon); a producer's last batch, and the batch ending the pass's range,
        stay at least as an empty header."""
        if batch.magic < 2:  # no producer, never transactional: only its records are filtered
            self.txn_metadata.on_batch_read(batch)
            self.discard_batch_records = False
            return BatchRetention.DELETE_EMPTY, False
        if batch.is_control:
            can_discard = self.txn_metadata.on_control_batch_read(batch)
            horizon = batch.delete_horizon_ms
            self.discard_batch_records = (
                can_discard and horizon is not None and horizon <= self.current_time
            )
        else:
            can_discard = self.txn_metadata.on_batch_read(batch)
            self.discard_batch_records = can_discard
        if batch.producer_id >= 0 and self._is_last_batch_of_producer(batch):
            retention = BatchRetention.RETAIN_EMPTY
        elif batch.next_offset == self.upper_bound:
            retention = BatchRetention.RETAIN_EMPTY  # the round's last batch, even if empty
        elif self.discard_batch_records:
            retention = BatchRetention.DELETE
        else:
            retention = BatchRetention.DELETE_EMPTY
        return retention, can_discard and batch.is_control

    def _is_last_batch_of_producer(self, batch) -> bool:
        last = self.last_records.get(batch.producer_id)
        if last is None:
            return False
        if last.last_data_offset is not None:
            return batch.last_offset == last.last_data_offset
        return batch.is_control and batch.producer_epoch == last.producer_epoch

    def should_retain_record(self, batch, record) -> bool:
        """COMPACT-12, COMPACT-13: past the map's reach everything stays; below it a record stays if
        it is its key's latest, and a tombstone only until its batch's delete horizon."""
        if self.discard_batch_records:
            return False
        if batch.magic >= 2 and batch.is_control:
            return True
        if record.offset > self.offset_map.latest_offset:
            return True
        if record.key is None:
            self.stats.invalid_messages_read += 1
            return False
        latest = record.offset >= self.offset_map.get(record.key)
        if batch.magic >= 2:
            horizon = batch.delete_horizon_ms
            retain_deletes = horizon is None or self.current_time < horizon
        else:
            retain_deletes = self.retain_legacy_deletes
        return latest and (record.value is not None or retain_deletes)


def last_records_of_active_producers(log) -> dict[int, LastRecord]:
    return {
        pid: LastRecord(
            entry.last_data_offset if entry.last_data_offset >= 0 else None, entry.producer_epoch
        )
        for pid, entry in log.producer_state_manager.producers.items()
    }


def _aborted_transactions(log, start: int, upper_bound: int):
    """UnifiedLog.collectAbortedTransactions: from the segment holding ``start``, every
    aborted transaction ending at or after the log start offset and starting below
    ``upper_bound``."""
    first = log.segments.floor_segment(start)
    if first is None:
        return []
    return log.local_log.collect_aborted_transactions(first, log.log_start_offset, upper_bound)


def group_segments_by_size(segments, max_size: int, max_index_size: int, first_uncleanable: int):
    """COMPACT-22: consecutive segments merged while the sum of their ``.log`` sizes, offset-index
    and time-index sizes stays within ``segment.bytes`` / ``segment.index.bytes`` and their
    offsets fit one segment (an empty segment always joins)."""
    groups, i = [], 0
    while i < len(segments):
        group = [segments[i]]
        log_size = segments[i].size
        index_size = segments[i].offset_index.size_in_bytes()
        time_index_size = segments[i].time_index.size_in_bytes()
        i += 1
        while i < len(segments):
            nxt = segments[i]
            last = (
                segments[i + 1].base_offset - 1 if i + 1 < len(segments) else first_uncleanable - 1
            )
            fits = (
                log_size + nxt.size <= max_size
                and index_size + nxt.offset_index.size_in_bytes() <= max_index_size
                and time_index_size + nxt.time_index.size_in_bytes() <= max_index_size
                and (nxt.size == 0 or last - group[0].base_offset <= INT32_MAX)
            )
            if not fits:
                break
            group.append(nxt)
            log_size += nxt.size
            index_size += nxt.offset_index.size_in_bytes()
            time_index_size += nxt.time_index.size_in_bytes()
            i += 1
        groups.append(group)
    return groups


def set_last_modified(segment: LogSegment, ms: int) -> None:
    """LogSegment.setLastModified: the ``.log`` and both indexes."""
    segment.log.set_last_modified(ms)
    for path in (segment.offset_index_file, segment.time_index_file):
        if storage().exists(path):
            storage().set_last_modified(path, ms * 1_000_000)
