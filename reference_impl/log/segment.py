"""LogSegment: one ``.log`` with its offset, time and transaction indexes: Kafka's LogSegment
(spec/behaviour/append.md, read.md, truncate.md, index.md).

A segment holds the batches whose offsets start at its base offset (the number in
its file names) [storage/.../log/LogSegment.java]. It appends, reads through its offset
index and truncates on batch boundaries; whether the log must roll before an append is
roll.py's SegmentRoll and rebuilding its indexes in recovery segment_recovery.py's
SegmentRecovery, both mixed in. The indexes are lazy: their files appear on first access.
"""

from __future__ import annotations

import contextlib
from collections import deque
from pathlib import Path

from ..errors import Category, InvalidArgumentError, KafkaLogError
from ..formats.file_naming import (
    log_file_name,
    offset_index_file_name,
    time_index_file_name,
    txn_index_file_name,
)
from ..formats.index_entries import AbortedTxn, OffsetPosition, TimestampOffset
from ..records.stream import iter_batches
from .abstract_index import LazyIndex
from .clock import Clock
from .config import LogConfig
from .fetch import FetchDataInfo, LogOffsetMetadata
from .file_records import FileRecords, LogOffsetPosition, TimestampAndOffset
from .offset_index import OffsetIndex
from .roll import SegmentRoll
from .segment_recovery import SegmentRecovery
from .time_index import TimeIndex
from .transaction_index import TransactionIndex, TxnIndexSearchResult


class _SegmentSize:
    """The default ``max_position`` of ``read``: the segment's size when the read starts."""


SEGMENT_SIZE = _SegmentSize()


class LogSegment(SegmentRoll, SegmentRecovery):
    def __init__(
        self,
        log: FileRecords,
        lazy_offset_index: LazyIndex[OffsetIndex],
        lazy_time_index: LazyIndex[TimeIndex],
        txn_index: TransactionIndex,
        base_offset: int,
        index_interval_bytes: int,
        roll_jitter_ms: int,
        clock: Clock,
    ) -> None:
        self.log = log
        self._lazy_offset_index = lazy_offset_index
        self._lazy_time_index = lazy_time_index
        self.txn_index = txn_index
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.roll_jitter_ms = roll_jitter_ms
        self.clock = clock
        self.created = clock.milliseconds()
        self.rolling_based_timestamp: int | None = None
        # (max timestamp, last offset of the batch holding it); None until first needed
        self.max_timestamp_and_offset_so_far: TimestampOffset | None = None
        self.bytes_since_last_index_entry = 0

    @classmethod
    def open(
        cls,
        dir: str | Path,
        base_offset: int,
        config: LogConfig,
        clock: Clock,
        *,
        file_already_exists: bool = False,
        init_file_size: int = 0,
        preallocate: bool = False,
        file_suffix: str = "",
    ) -> LogSegment:
        dir = Path(dir)
        max_index_size = config.segment_index_bytes
        log = FileRecords.open(
            dir / log_file_name(base_offset, file_suffix),
            file_already_exists=file_already_exists,
            init_file_size=init_file_size,
            preallocate=preallocate,
        )
        if not file_already_exists:
            log.set_last_modified(clock.milliseconds())
        return cls(
            log,
            LazyIndex(
                dir / offset_index_file_name(base_offset, file_suffix),
                lambda f: OffsetIndex(f, base_offset, max_index_size),
            ),
            LazyIndex(
                dir / time_index_file_name(base_offset, file_suffix),
                lambda f: TimeIndex(f, base_offset, max_index_size),
            ),
            TransactionIndex(base_offset, dir / txn_index_file_name(base_offset, file_suffix)),
            base_offset,
            config.index_interval_bytes,
            config.roll_jitter_ms,
            clock,
        )

    # --- indexes (opened, so created, on first access) ---
    @property
    def offset_index(self) -> OffsetIndex:
        return self._lazy_offset_index.get()

    @property
    def time_index(self) -> TimeIndex:
        return self._lazy_time_index.get()

    @property
    def offset_index_file(self) -> Path:
        return self._lazy_offset_index.file

    @property
    def time_index_file(self) -> Path:
        return self._lazy_time_index.file

    @property
    def size(self) -> int:
        return self.log.size

    def resize_indexes(self, size: int) -> None:
        self.offset_index.resize(size)
        self.time_index.resize(size)

    def sanity_check(self, time_index_file_newly_created: bool) -> None:
        """LogLoader's check: a missing .index means the segment must be recovered
        (FileNotFoundError); a new empty .timeindex is cut to 0 bytes; only the
        transaction index's contents are checked (KAFKA-7283)."""
        if not self.offset_index_file.exists():
            raise FileNotFoundError(f"offset index file {self.offset_index_file} does not exist")
        if time_index_file_newly_created:
            self.time_index.resize(0)
        self.txn_index.sanity_check()

    # --- max timestamp so far ---
    def read_max_timestamp_and_offset_so_far(self) -> TimestampOffset:
        """INDEX-11: loaded lazily from the time index's last entry (stale until recomputed)."""
        if self.max_timestamp_and_offset_so_far is None:
            self.max_timestamp_and_offset_so_far = self.time_index.last_entry()
        return self.max_timestamp_and_offset_so_far

    @property
    def max_timestamp_so_far(self) -> int:
        return self.read_max_timestamp_and_offset_so_far().timestamp

    @property
    def shallow_offset_of_max_timestamp_so_far(self) -> int:
        return self.read_max_timestamp_and_offset_so_far().offset

    def largest_timestamp(self) -> int:
        """RET-9: the max record timestamp, else the .log's mtime."""
        ts = self.max_timestamp_so_far
        return ts if ts >= 0 else self.last_modified()

    def last_modified(self) -> int:
        return self.log.last_modified()

    def _touch(self) -> None:
        # the .log's mtime follows the injected clock, so retention by mtime is deterministic
        self.log.set_last_modified(self.clock.milliseconds())

    # --- append (APPEND-22, INDEX-7) ---
    def append(self, largest_offset: int, records: bytes) -> None:
        """Append one message set (one or more whole batches), as Kafka 4.x does
        (``LogSegment.append(largestOffset, records)``, KAFKA-806).

        INDEX-7: walking the set's batches, an index entry (the batch's last offset, its
        position) is added before a batch when more than ``index.interval.bytes`` were written
        since the last one; the first batch of a segment is never indexed. INDEX-11: the
        largest timestamp so far and its offset come from each batch. ROLL-8: the
        rolling-based timestamp is not set here; it is read from the first batch on demand.
        """
        if not records:
            return
        physical_position = self.log.size
        self.ensure_offset_in_range(largest_offset)
        self.log.append(records)
        self._touch()
        for batch in iter_batches(records, file=str(self.log.file)):
            if batch.max_timestamp > self.max_timestamp_so_far:
                self.max_timestamp_and_offset_so_far = TimestampOffset(
                    batch.max_timestamp, batch.last_offset
                )
            if self.bytes_since_last_index_entry > self.index_interval_bytes and self._has_room():
                self.offset_index.append(batch.last_offset, physical_position)
                self.time_index.maybe_append(
                    self.max_timestamp_so_far, self.shallow_offset_of_max_timestamp_so_far
                )
                self.bytes_since_last_index_entry = 0
            physical_position += batch.size_in_bytes
            self.bytes_since_last_index_entry += batch.size_in_bytes

    def _has_room(self) -> bool:
        """INDEX-7's Deviation: a set's later batches find the indexes full (the roll check
        counts appends, not batches); Kafka 4.x then throws with the set's bytes written,
        the reference leaves the entry out (the index is sparse) and the next append rolls."""
        return not (self.offset_index.is_full() or self.time_index.is_full())

    def ensure_offset_in_range(self, offset: int) -> None:
        """APPEND-23: an offset outside ``[base, base + 2^31-1]`` is ``offset_overflow``."""
        if not self.offset_index.can_append_offset(offset):
            raise KafkaLogError(
                Category.OFFSET_OVERFLOW,
                f"detected offset overflow at offset {offset} in segment with base offset "
                f"{self.base_offset}",
                file=str(self.log.file),
                offset=offset,
            )

    # --- reading (READ) ---
    def translate_offset(
        self, offset: int, starting_file_position: int = 0
    ) -> LogOffsetPosition | None:
        """INDEX-20: the first batch whose lastOffset >= ``offset``, found from the offset index's
        floor entry by a forward scan; None when no batch reaches ``offset``."""
        mapping = self.offset_index.lookup(offset)
        return self.log.search_for_offset_with_size(
            offset, max(mapping.position, starting_file_position)
        )

    def read(
        self,
        start_offset: int,
        max_size: int,
        max_position: int | None | _SegmentSize = SEGMENT_SIZE,
        min_one_message: bool = False,
    ) -> FetchDataInfo | None:
        """READ-11 to READ-14: up to ``max_size`` bytes from the batch holding ``start_offset``, never past
        ``max_position`` (None: return no bytes, only where the read would start).

        Returns None when no batch in this segment reaches ``start_offset``. With
        ``min_one_message`` the first batch is returned whole even above ``max_size``.
        """
        if max_size < 0:
            raise InvalidArgumentError(
                f"invalid max size {max_size} for a read from {self.log.file}"
            )
        if max_position is SEGMENT_SIZE:
            max_position = self.size
        start = self.translate_offset(start_offset)
        if start is None:
            return None
        metadata = LogOffsetMetadata(start.offset, self.base_offset, start.position)
        adjusted_max_size = max(max_size, start.size) if min_one_message else max_size
        if adjusted_max_size == 0 or max_position is None:
            return FetchDataInfo(metadata)
        fetch_size = min(max_position - start.position, adjusted_max_size)
        return FetchDataInfo(
            metadata, self.log.slice(start.position, fetch_size), adjusted_max_size < start.size
        )

    def fetch_upper_bound_offset(
        self, start_offset_position: OffsetPosition, fetch_size: int
    ) -> int | None:
        entry = self.offset_index.fetch_upper_bound_offset(start_offset_position, fetch_size)
        return None if entry is None else entry.offset

    def read_next_offset(self) -> int:
        """The offset after the last batch (a read from the last indexed offset), else the
        base offset."""
        fetch = self.read(self.offset_index.last_offset, self.log.size)
        if fetch is None:
            return self.base_offset
        last = deque(fetch.records.batches(), maxlen=1)
        return last[0].next_offset if last else self.base_offset

    def find_offset_by_timestamp(
        self, timestamp: int, starting_offset: int | None = None
    ) -> TimestampAndOffset | None:
        """The first record with timestamp >= ``timestamp`` and offset >= ``starting_offset``
        (default: the base offset), searched from the time index's floor entry."""
        if starting_offset is None:
            starting_offset = self.base_offset
        entry = self.time_index.lookup(timestamp)
        position = self.offset_index.lookup(max(entry.offset, starting_offset)).position
        return self.log.search_for_timestamp(timestamp, position, starting_offset)

    def collect_aborted_txns(
        self, fetch_offset: int, upper_bound_offset: int
    ) -> TxnIndexSearchResult:
        return self.txn_index.collect_aborted_txns(fetch_offset, upper_bound_offset)

    def update_txn_index(self, completed_txn, last_stable_offset: int) -> None:
        """TXN-B-5: an aborted transaction is indexed in the segment holding its marker, with
        the last stable offset at that point; a committed one is not indexed."""
        if completed_txn.is_aborted:
            self.txn_index.append(
                AbortedTxn(
                    completed_txn.producer_id,
                    completed_txn.first_offset,
                    completed_txn.last_offset,
                    last_stable_offset,
                )
            )

    # --- truncation (TRUNC) ---
    def truncate_to(self, offset: int) -> int:
        """TRUNC-5, TRUNC-8, TRUNC-9, INDEX-6: remove every batch whose last offset is >= ``offset`` and every index entry
        at or past it; returns the number of .log bytes removed.

        Whole batches only: the batch holding ``offset`` goes entirely. Both indexes are
        then resized to the maximum, so a trimmed index does not stay "full".
        """
        mapping = self.translate_offset(offset)  # before the indexes change
        offset_index, time_index = self.offset_index, self.time_index
        offset_index.truncate_to(offset)
        time_index.truncate_to(offset)
        self.txn_index.truncate_to(offset)
        offset_index.resize(offset_index.max_index_size)
        time_index.resize(time_index.max_index_size)
        bytes_truncated = 0 if mapping is None else self.log.truncate_to(mapping.position)
        if bytes_truncated:
            self._touch()
        if self.log.size == 0:
            self.created = self.clock.milliseconds()
            self.rolling_based_timestamp = None
        self.bytes_since_last_index_entry = 0
        if self.max_timestamp_so_far >= 0:
            self.max_timestamp_and_offset_so_far = self._read_largest_timestamp()
        return bytes_truncated

    def _read_largest_timestamp(self) -> TimestampOffset:
        """The time index's last entry, unless a batch after its indexed position has a
        larger max timestamp."""
        last_entry = self.time_index.last_entry()
        position = self.offset_index.lookup(last_entry.offset).position
        after = self.log.largest_timestamp_after(position)
        if after.timestamp > last_entry.timestamp:
            return TimestampOffset(after.timestamp, after.offset)
        return last_entry

    # --- lifecycle ---
    def flush(self) -> None:
        """fsync the .log and every index (creating the lazy index files)."""
        self.log.flush()
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def close(self) -> None:
        """FLUSH-8, FLUSH-9: the final time-index entry if a max timestamp is known, trim the indexes,
        fsync and trim the .log."""
        if self.max_timestamp_and_offset_so_far is not None:
            # Kafka logs and swallows a failure here: closing must still release the files
            with contextlib.suppress(KafkaLogError):
                self.time_index.maybe_append(
                    self.max_timestamp_so_far, self.shallow_offset_of_max_timestamp_so_far, True
                )
        self._lazy_offset_index.close()
        self._lazy_time_index.close()
        trims = self.log.size < self.log.physical_size()
        self.log.close()
        if trims:
            self._touch()
        self.txn_index.close()

    def close_handlers(self) -> None:
        self._lazy_offset_index.close_handler()
        self._lazy_time_index.close_handler()
        self.log.close_handlers()
        self.txn_index.close()

    def change_file_suffixes(self, old_suffix: str, new_suffix: str) -> None:
        """Rename the four files; index files never created are skipped."""

        def renamed(path: Path) -> Path:
            name = path.name
            stem = name[: len(name) - len(old_suffix)] if old_suffix else name
            return path.with_name(stem + new_suffix)

        self.log.rename_to(renamed(self.log.file))
        self._lazy_offset_index.rename_to(renamed(self.offset_index_file))
        self._lazy_time_index.rename_to(renamed(self.time_index_file))
        self.txn_index.rename_to(renamed(self.txn_index.file))

    def has_suffix(self, suffix: str) -> bool:
        files = (self.log.file, self.offset_index_file, self.time_index_file, self.txn_index.file)
        return all(f.name.endswith(suffix) for f in files)

    def delete_if_exists(self) -> None:
        self.log.delete_if_exists()
        self._lazy_offset_index.delete_if_exists()
        self._lazy_time_index.delete_if_exists()
        self.txn_index.delete_if_exists()

    def deleted(self) -> bool:
        files = (self.log.file, self.offset_index_file, self.time_index_file, self.txn_index.file)
        return not any(f.exists() for f in files)

    def __repr__(self) -> str:
        return f"LogSegment(base_offset={self.base_offset}, size={self.size})"
