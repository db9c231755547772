"""LogSegment: one ``.log`` with its offset, time and transaction indexes: Kafka's LogSegment
(spec/behaviour/append.md, read.md, truncate.md, index.md).

A segment holds the batches whose offsets start at its base offset (the number in
its file names) [storage/.../log/LogSegment.java]. It appends, reads through its offset
index, truncates on batch boundaries, says whether the log must roll before an append
(roll.py's table of conditions) and rebuilds its indexes in recovery (the batch walk is
segment_recovery.py's). The indexes are lazy: their files appear on first access.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..constants import LONG_MAX
from ..errors import Category, InvalidArgumentError, KafkaLogError
from ..formats.file_naming import (
    log_file_name,
    offset_index_file_name,
    time_index_file_name,
    txn_index_file_name,
)
from ..formats.index_entries import AbortedTxn, OffsetPosition, TimestampOffset
from ..records.stream import iter_batches
from . import segment_recovery
from .abstract_index import LazyIndex
from .clock import Clock
from .config import LogConfig
from .fetch import SEGMENT_SIZE, FetchDataInfo, LogOffsetMetadata, SegmentSize
from .file_records import FileRecords, LogOffsetPosition, TimestampAndOffset
from .offset_index import OffsetIndex
from .roll import RollParams, roll_reason
from .segment_recovery import RecoveryScanner, tail_kind
from .storage import storage
from .time_index import TimeIndex
from .transaction_index import TransactionIndex, TxnIndexSearchResult

if TYPE_CHECKING:
    from .leader_epoch import LeaderEpochFileCache
    from .producer_state_manager import ProducerStateManager


class LogSegment:
    def __init__(
        self, log: FileRecords, lazy_offset_index: LazyIndex[OffsetIndex],
        lazy_time_index: LazyIndex[TimeIndex], txn_index: TransactionIndex, base_offset: int,
        index_interval_bytes: int, roll_jitter_ms: int, clock: Clock,
    ) -> None:  # fmt: skip
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
        cls, dir: str | Path, base_offset: int, config: LogConfig, clock: Clock, *,
        file_already_exists: bool = False, init_file_size: int = 0, preallocate: bool = False,
        file_suffix: str = "",
    ) -> LogSegment:  # fmt: skip
        dir, max_index_size = Path(dir), config.segment_index_bytes

        def file(name) -> Path:
            return dir / name(base_offset, file_suffix)

        log = FileRecords.open(
            file(log_file_name), file_already_exists=file_already_exists,
            init_file_size=init_file_size, preallocate=preallocate,
        )  # fmt: skip
        if not file_already_exists:
            log.set_last_modified(clock.milliseconds())
        offset_index = LazyIndex(
            file(offset_index_file_name), lambda f: OffsetIndex(f, base_offset, max_index_size)
        )
        time_index = LazyIndex(
            file(time_index_file_name), lambda f: TimeIndex(f, base_offset, max_index_size)
        )
        txn_index = TransactionIndex(base_offset, file(txn_index_file_name))
        return cls(
            log, offset_index, time_index, txn_index, base_offset,
            config.index_interval_bytes, config.roll_jitter_ms, clock,
        )  # fmt: skip

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
        """LogLoader's: no .index is FileNotFoundError, a new .timeindex is cut to 0 (KAFKA-7283)."""
        if not storage().exists(self.offset_index_file):
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
        """Append a message set of whole batches, walking them as Kafka 4.x does (KAFKA-806).
        INDEX-7: an entry (the batch's last offset, its position) before a batch when more
        than ``index.interval.bytes`` were written since the last one, so never for a
        segment's first batch; INDEX-11: the largest timestamp so far from each batch; ROLL-8:
        the rolling-based timestamp is read from the first batch on demand, not set here."""
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
        """INDEX-7's Deviation: a set's later batch may find an index full (a roll counts sets);
        Kafka 4.x throws with the bytes written, the reference leaves the entry out and rolls."""
        return not (self.offset_index.is_full() or self.time_index.is_full())

    def ensure_offset_in_range(self, offset: int) -> None:
        """APPEND-23: an offset outside ``[base, base + 2^31-1]`` is ``offset_overflow``."""
        if not self.offset_index.can_append_offset(offset):
            raise KafkaLogError(
                Category.OFFSET_OVERFLOW, f"detected offset overflow at offset {offset} in "
                f"segment with base offset {self.base_offset}", file=str(self.log.file), offset=offset,
            )  # fmt: skip

    # --- roll (ROLL) ---
    def should_roll(self, params: RollParams) -> bool:
        """ROLL-1: whether any of the five roll conditions holds before an append."""
        return roll_reason(self, params) is not None

    def _load_first_batch_timestamp(self) -> None:
        if self.rolling_based_timestamp is None:
            first = next(iter(self.log.batches()), None)
            self.rolling_based_timestamp = None if first is None else first.max_timestamp

    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int:
        """ROLL-4: the incoming set's max timestamp minus the first batch's, when that has a
        timestamp; else wall time since the segment's creation."""
        self._load_first_batch_timestamp()
        ts = self.rolling_based_timestamp
        return message_timestamp - ts if ts is not None and ts >= 0 else now - self.created

    def get_first_batch_timestamp(self) -> int:
        """ROLL-10: the first batch's max timestamp, or Long.MAX when empty or without timestamps."""
        self._load_first_batch_timestamp()
        ts = self.rolling_based_timestamp
        return ts if ts is not None and ts >= 0 else LONG_MAX

    def on_become_inactive_segment(self) -> None:
        """ROLL-17, ROLL-18: at roll, the final time-index entry, then trim the indexes, .log."""
        self.time_index.maybe_append(
            self.max_timestamp_so_far, self.shallow_offset_of_max_timestamp_so_far, True
        )
        self.offset_index.trim_to_valid_size()
        self.time_index.trim_to_valid_size()
        if self.log.size < self.log.physical_size():
            self.log.trim()
            self._touch()

    # --- reading (READ) ---
    def translate_offset(
        self, offset: int, starting_file_position: int = 0
    ) -> LogOffsetPosition | None:
        """INDEX-20: the first batch whose lastOffset >= ``offset``, by a forward scan from the
        offset index's floor entry; None when none reaches it."""
        mapping = self.offset_index.lookup(offset)
        return self.log.search_for_offset_with_size(
            offset, max(mapping.position, starting_file_position)
        )

    def read(
        self, start_offset: int, max_size: int,
        max_position: int | None | SegmentSize = SEGMENT_SIZE, min_one_message: bool = False,
    ) -> FetchDataInfo | None:  # fmt: skip
        """READ-11 to READ-14: up to ``max_size`` bytes (``min_one_message``: at least the first
        batch) from the batch holding ``start_offset``, never past ``max_position`` (None: no
        bytes, only where the read would start); None when no batch here reaches it."""
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

    def fetch_upper_bound_offset(self, start: OffsetPosition, fetch_size: int) -> int | None:
        entry = self.offset_index.fetch_upper_bound_offset(start, fetch_size)
        return None if entry is None else entry.offset

    def read_next_offset(self) -> int:
        """The offset after the last batch (read from the last indexed offset), else the base."""
        fetch = self.read(self.offset_index.last_offset, self.log.size)
        if fetch is None:
            return self.base_offset
        last = deque(fetch.records.batches(), maxlen=1)
        return last[0].next_offset if last else self.base_offset

    def find_offset_by_timestamp(
        self, timestamp: int, starting_offset: int | None = None
    ) -> TimestampAndOffset | None:
        """The first record with timestamp >= ``timestamp`` and offset >= ``starting_offset``
        (default the base offset), from the time index's floor entry."""
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
        """TXN-B-5: an aborted transaction is indexed with the last stable offset of the
        moment in the segment holding its marker; a committed one is not."""
        txn = completed_txn
        if txn.is_aborted:
            aborted = AbortedTxn(
                txn.producer_id, txn.first_offset, txn.last_offset, last_stable_offset
            )
            self.txn_index.append(aborted)

    # --- truncation (TRUNC) ---
    def truncate_to(self, offset: int) -> int:
        """TRUNC-5, TRUNC-8, TRUNC-9, INDEX-6: remove the batches whose last offset is >=
        ``offset`` (whole) and the index entries at or past it; returns the .log bytes removed.
        The indexes are resized to the maximum, so a trimmed index does not stay "full"."""
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
        """The time index's last entry, or a later batch's larger max timestamp."""
        last_entry = self.time_index.last_entry()
        position = self.offset_index.lookup(last_entry.offset).position
        after = self.log.largest_timestamp_after(position)
        if after.timestamp > last_entry.timestamp:
            return TimestampOffset(after.timestamp, after.offset)
        return last_entry

    # --- recovery (RECOV) ---
    def recover(
        self, leader_epoch_cache: LeaderEpochFileCache | None = None,
        producer_state_manager: ProducerStateManager | None = None, *,
        before_truncate: Callable[[int, str | None], None] | None = None,
    ) -> int:  # fmt: skip
        """RECOV-2 to RECOV-4, RECOV-7, INDEX-8, RECOV-19: rebuild the indexes from the .log
        (segment_recovery.py's walk) and cut it after the last valid batch; returns the bytes
        cut (``offset_overflow`` propagates: the loader splits the segment). ``before_truncate
        (position, why)`` is told first: ``zero_tail``, the failing category or ``partial_batch``.
        """
        for index in (self.offset_index, self.time_index, self.txn_index):
            index.reset()
        self.max_timestamp_and_offset_so_far = None
        scanner = RecoveryScanner(self.log.batches(), self.base_offset, self.index_interval_bytes)
        failure = segment_recovery.recover_batches(
            self, scanner, leader_epoch_cache, producer_state_manager
        )
        valid_bytes = scanner.valid_bytes
        truncated = self.log.size - valid_bytes
        if truncated and before_truncate is not None:
            read = lambda position, size: self.log.slice(position, size).read_bytes()  # noqa: E731
            before_truncate(valid_bytes, tail_kind(read, valid_bytes, self.log.size, failure))
        self.log.truncate_to(valid_bytes)
        if truncated:
            self.log.set_last_modified(self.clock.milliseconds())
        self.offset_index.trim_to_valid_size()
        # a cleanly closed segment ends with its max timestamp; recovery writes it too
        self.time_index.maybe_append(
            self.max_timestamp_so_far, self.shallow_offset_of_max_timestamp_so_far, True
        )
        self.time_index.trim_to_valid_size()
        return truncated

    # --- lifecycle ---
    def flush(self) -> None:
        """fsync the .log and every index (creating the lazy index files)."""
        for part in (self.log, self.offset_index, self.time_index, self.txn_index):
            part.flush()

    def close(self) -> None:
        """FLUSH-8, FLUSH-9: the final time-index entry, trim the indexes, fsync and trim."""
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

    def _parts(self) -> tuple[FileRecords | LazyIndex | TransactionIndex, ...]:
        """The .log and its three indexes, each with its ``file``, renamed or deleted alike."""
        return (self.log, self._lazy_offset_index, self._lazy_time_index, self.txn_index)

    def change_file_suffixes(self, old_suffix: str, new_suffix: str) -> None:
        """Rename the four files; index files never created are skipped."""
        for part in self._parts():
            name = part.file.name
            stem = name[: len(name) - len(old_suffix)] if old_suffix else name
            part.rename_to(part.file.with_name(stem + new_suffix))

    def has_suffix(self, suffix: str) -> bool:
        return all(part.file.name.endswith(suffix) for part in self._parts())

    def delete_if_exists(self) -> None:
        for part in self._parts():
            part.delete_if_exists()

    def deleted(self) -> bool:
        return not any(storage().exists(part.file) for part in self._parts())

    def __repr__(self) -> str:
        return f"LogSegment(base_offset={self.base_offset}, size={self.size})"
