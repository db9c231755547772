"""LogSegments: a log's segments, sorted by base offset (spec/behaviour/read.md).

Kafka keeps them in a ConcurrentSkipListMap [storage/.../log/LogSegments.java];
the reference keeps a dict plus the sorted list of base offsets. The last segment
is the *active* one, the only one appended to.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator

from ..errors import InvalidArgumentError
from .segment import LogSegment


class LogSegments:
    """MODEL-1: the segments by strictly increasing base offset; the last is active."""

    def __init__(self) -> None:
        self._by_base: dict[int, LogSegment] = {}
        self._bases: list[int] = []  # sorted

    # --- membership ---
    def add(self, segment: LogSegment) -> LogSegment:
        """Add a segment, replacing any with the same base offset."""
        if segment.base_offset not in self._by_base:
            bisect.insort(self._bases, segment.base_offset)
        self._by_base[segment.base_offset] = segment
        return segment

    def remove(self, base_offset: int) -> None:
        if self._by_base.pop(base_offset, None) is not None:
            self._bases.remove(base_offset)

    def clear(self) -> None:
        self._by_base.clear()
        self._bases.clear()

    def contains(self, base_offset: int) -> bool:
        return base_offset in self._by_base

    def get(self, base_offset: int) -> LogSegment | None:
        return self._by_base.get(base_offset)

    def is_empty(self) -> bool:
        return not self._bases

    def number_of_segments(self) -> int:
        return len(self._bases)

    def base_offsets(self) -> list[int]:
        return list(self._bases)

    def __iter__(self) -> Iterator[LogSegment]:
        return iter(self.values())

    def __len__(self) -> int:
        return len(self._bases)

    # --- ranges ---
    def values(
        self, from_offset: int | None = None, to_offset: int | None = None
    ) -> list[LogSegment]:
        """All segments; or, given both bounds, the segment holding ``from_offset`` (the
        first one if none does) through the last segment whose base is < ``to_offset``.

        ``from == to`` gives none; ``to < from`` is an ``invalid_argument``.
        """
        if from_offset is None and to_offset is None:
            return [self._by_base[b] for b in self._bases]
        if from_offset == to_offset:
            return []
        if to_offset < from_offset:
            raise InvalidArgumentError(
                f"invalid log segment range: requested segments from offset {from_offset} "
                f"which is greater than limit offset {to_offset}"
            )
        floor = self._floor_base(from_offset)
        start = 0 if floor is None else self._bases.index(floor)
        end = bisect.bisect_left(self._bases, to_offset)
        return [self._by_base[b] for b in self._bases[start:end]]

    def non_active_log_segments_from(self, from_offset: int) -> list[LogSegment]:
        active = self.active_segment
        if from_offset > active.base_offset:
            return []
        return self.values(from_offset, active.base_offset)

    def higher_segments(self, base_offset: int) -> list[LogSegment]:
        """The segments whose base is > ``base_offset``."""
        start = bisect.bisect_right(self._bases, base_offset)
        return [self._by_base[b] for b in self._bases[start:]]

    def filter(self, predicate: Callable[[LogSegment], bool]) -> list[LogSegment]:
        return [s for s in self.values() if predicate(s)]

    # --- neighbours ---
    def _floor_base(self, offset: int) -> int | None:
        i = bisect.bisect_right(self._bases, offset)
        return self._bases[i - 1] if i else None

    def floor_segment(self, offset: int) -> LogSegment | None:
        """The segment with the greatest base offset <= ``offset``."""
        base = self._floor_base(offset)
        return None if base is None else self._by_base[base]

    def lower_segment(self, offset: int) -> LogSegment | None:
        i = bisect.bisect_left(self._bases, offset)
        return self._by_base[self._bases[i - 1]] if i else None

    def higher_segment(self, offset: int) -> LogSegment | None:
        i = bisect.bisect_right(self._bases, offset)
        return self._by_base[self._bases[i]] if i < len(self._bases) else None

    @property
    def first_segment(self) -> LogSegment | None:
        return self._by_base[self._bases[0]] if self._bases else None

    @property
    def last_segment(self) -> LogSegment | None:
        return self._by_base[self._bases[-1]] if self._bases else None

    @property
    def active_segment(self) -> LogSegment:
        return self._by_base[self._bases[-1]]

    # --- whole-log operations ---
    def size_in_bytes(self) -> int:
        """The total size as an unbounded int (Kafka: a long, never an int)."""
        return sum(s.size for s in self.values())

    def close(self) -> None:
        for segment in self.values():
            segment.close()

    def close_handlers(self) -> None:
        for segment in self.values():
            segment.close_handlers()
