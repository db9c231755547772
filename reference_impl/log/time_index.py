"""The time index, ``<base>.timeindex`` (spec/formats/time-index.md, spec/behaviour/index.md).

Each 12-byte entry (T, O) says: T is the largest timestamp seen up to and
including offset O, so any record with a timestamp above T lies after O
[storage/.../log/TimeIndex.java]::

    timestamp int64 | relativeOffset int32 (offset - baseOffset)

Timestamps strictly increase from entry to entry. The last slot is held back
(``is_full`` at max entries - 1) so the final entry written at roll and close
always fits.
"""

from __future__ import annotations

from ..errors import Category, IllegalStateError, InvalidArgumentError, LogOperationError
from ..formats.index_entries import TIME_INDEX_ENTRY, TIME_INDEX_ENTRY_SIZE, TimestampOffset
from ..records.record import NO_TIMESTAMP
from .abstract_index import AbstractIndex, largest_lower_bound_slot


class TimeIndex(AbstractIndex):
    ENTRY = TIME_INDEX_ENTRY
    TIME = True

    def _decode(self, fields: tuple) -> TimestampOffset:
        timestamp, relative = fields
        return TimestampOffset(timestamp, self.base_offset + relative)

    def _timestamp_at(self, slot: int) -> int:
        return self._fields_at(slot)[0]

    def _offset_at(self, slot: int) -> int:
        return self.base_offset + self._fields_at(slot)[1]

    def is_full(self) -> bool:
        """INDEX-12: one slot is reserved for the roll/close entry."""
        return self.entries >= self.max_entries - 1

    def last_entry(self) -> TimestampOffset:
        """The last entry, or (-1, baseOffset) when empty."""
        entries = self.entries
        if not entries:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self._entry_at(entries - 1)

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """INDEX-10: append (timestamp, offset) if the timestamp is above the last entry's.

        A full index (unless ``skip_full_check``) is an ``invalid_argument``; an offset
        below the last entry's is an ``invalid_offset``; a smaller timestamp is an
        ``illegal_state``; an equal timestamp is silently ignored, so repeating the last
        entry (at close) does nothing. With no entries the last entry is (-1, base), so
        a timestamp of -1 (v0 data) never makes an entry.
        """
        if not skip_full_check and self.is_full():
            raise InvalidArgumentError(
                f"attempt to append to a full time index (size = {self.entries})",
                file=str(self.file),
            )
        last_timestamp = NO_TIMESTAMP
        if self.entries:
            last_timestamp, last_relative = self._last_fields()
            self._check_order(timestamp, offset, last_timestamp, self.base_offset + last_relative)
        if timestamp > last_timestamp:
            self._append_entry(timestamp, self.relative_offset(offset))

    def _check_order(self, timestamp: int, offset: int, last_timestamp: int, last_offset: int):
        if offset < last_offset:
            raise LogOperationError(
                Category.INVALID_OFFSET,
                f"attempt to append an offset ({offset}) to slot {self.entries} no larger than "
                f"the last offset appended ({last_offset})",
                file=str(self.file),
                offset=offset,
            )
        if timestamp < last_timestamp:
            raise IllegalStateError(
                f"attempt to append a timestamp ({timestamp}) to slot {self.entries} no larger "
                f"than the last timestamp appended ({last_timestamp})",
                file=str(self.file),
            )

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """INDEX-19: the entry with the largest timestamp <= target, else (-1, baseOffset)."""
        slot = largest_lower_bound_slot(
            self._timestamp_at, self.entries, target_timestamp, TIME_INDEX_ENTRY_SIZE
        )
        if slot == -1:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self._entry_at(slot)

    def entry(self, n: int) -> TimestampOffset:
        if n >= self.entries:
            raise InvalidArgumentError(
                f"attempt to fetch the {n}th entry from time index {self.file} which has size "
                f"{self.entries}"
            )
        return self._entry_at(n)
