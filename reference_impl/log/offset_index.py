"""The offset index, ``<base>.index`` (spec/formats/offset-index.md, spec/behaviour/index.md).

Each 8-byte entry maps an offset to the byte position in the ``.log`` of the batch
set that holds it [storage/.../log/OffsetIndex.java]::

    relativeOffset int32 (offset - baseOffset) | position int32

The index is sparse: the segment adds an entry every ``index.interval.bytes``
(segment.py). A lookup finds the greatest indexed offset <= the target and the
reader scans the ``.log`` forward from its position.
"""

from __future__ import annotations

from ..errors import Category, InvalidArgumentError, LogOperationError
from ..formats.index_entries import OFFSET_INDEX_ENTRY, OFFSET_INDEX_ENTRY_SIZE, OffsetPosition
from .abstract_index import AbstractIndex, largest_lower_bound_slot, smallest_upper_bound_slot


class OffsetIndex(AbstractIndex):
    ENTRY = OFFSET_INDEX_ENTRY
    TIME = False

    def _decode(self, fields: tuple) -> OffsetPosition:
        relative, position = fields
        return OffsetPosition(self.base_offset + relative, position)

    def _offset_at(self, slot: int) -> int:
        return self.base_offset + self._fields_at(slot)[0]

    def _position_at(self, slot: int) -> int:
        return self._fields_at(slot)[1]

    @property
    def last_offset(self) -> int:
        """The last entry's offset, or the base offset when empty."""
        return self.base_offset + self._last_fields()[0] if self.entries else self.base_offset

    def append(self, offset: int, position: int) -> None:
        """INDEX-13, INDEX-17: offsets strictly increase; positions are not checked.

        A full index is an ``invalid_argument``, an offset not above the last one an
        ``invalid_offset``, an offset outside [base, base + 2^31-1] an ``offset_overflow``.
        """
        if self.is_full():
            raise InvalidArgumentError(
                f"attempt to append to a full index (size = {self.entries})", file=str(self.file)
            )
        if self.entries and offset <= self.last_offset:
            raise LogOperationError(
                Category.INVALID_OFFSET,
                f"attempt to append an offset {offset} to position {self.entries} no larger than "
                f"the last offset appended ({self.last_offset})",
                file=str(self.file),
                offset=offset,
            )
        self._append_entry(self.relative_offset(offset), position)

    def lookup(self, target_offset: int) -> OffsetPosition:
        """INDEX-18: the entry with the largest offset <= target, else (baseOffset, 0)."""
        slot = largest_lower_bound_slot(
            self._offset_at, self.entries, target_offset, OFFSET_INDEX_ENTRY_SIZE
        )
        return OffsetPosition(self.base_offset, 0) if slot == -1 else self._entry_at(slot)

    def entry(self, n: int) -> OffsetPosition:
        if n >= self.entries:
            raise InvalidArgumentError(
                f"attempt to fetch the {n}th entry from index {self.file}, which has size "
                f"{self.entries}"
            )
        return self._entry_at(n)

    def fetch_upper_bound_offset(
        self, fetch_offset: OffsetPosition, fetch_size: int
    ) -> OffsetPosition | None:
        """The entry with the smallest position >= start position + fetch size, or None:
        an offset certainly past a fetch of ``fetch_size`` bytes from ``fetch_offset``."""
        target = fetch_offset.position + fetch_size
        slot = smallest_upper_bound_slot(
            self._position_at, self.entries, target, OFFSET_INDEX_ENTRY_SIZE
        )
        return None if slot == -1 else self._entry_at(slot)
