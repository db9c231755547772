"""Cutting a big segment into byte ranges that start at batch boundaries.

A range ``[start, end)`` holds the entries that *start* in it (the last one may run past
``end``), so ranges cut at true entry boundaries give every entry exactly once. The
boundaries come from the segment's offset index, whose entries are (offset, position of a
batch) pairs (OIDX-4) [OffsetIndex.java]: for each multiple of the split size, the last
index position at or before it. An index is a hint, not a proof (it may be stale or
damaged), so a candidate is taken only when a whole entry with a valid CRC starts there
and holds offsets up to the index entry's (the broker may index an append's last offset
at the position of its first batch). Otherwise the boundary is found by a forward scan:
from the previous boundary, follow the entries' size fields to the first entry starting
at or after the target. A segment without an index is split by that scan alone (reading
its headers once on the driver); where the sizes stop framing entries (FRAME-3), the rest
of the segment is one range.
"""

from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass

from klogspec.walk import following_entry, offset_field
from reference_impl.errors import KafkaLogError
from reference_impl.formats.index_entries import (
    OFFSET_INDEX_ENTRY_SIZE,
    iter_offset_index,
    until_stop,
)
from reference_impl.records import read_batch
from reference_impl.records.batch import LOG_OVERHEAD
from reference_impl.records.stream import HEADER_SIZE_UP_TO_MAGIC

from .layout import Segment, discover_segments
from .storage import RandomAccess

DEFAULT_SPLIT_SIZE = 128 << 20
INDEX_WINDOW = 1 << 20  # bytes of an .index read at a time (a multiple of the entry size)
DEFAULT_OPEN_COST = 1 << 20  # Spark's openCostInBytes is 4 MiB; opening a local segment is cheaper


@dataclass(frozen=True)
class SegmentRange:
    """One input partition: the entries of ``segment`` starting in ``[start, end)``;
    ``part`` of ``parts`` ranges of that segment."""

    segment: Segment
    start: int
    end: int
    part: int = 0
    parts: int = 1


def plan_ranges(segment: Segment, split_size: int = DEFAULT_SPLIT_SIZE) -> list[SegmentRange]:
    """The ranges of one segment: one when it is at most ``split_size`` bytes."""
    points = [0, *split_points(segment, split_size), segment.size]
    count = len(points) - 1
    return [SegmentRange(segment, points[i], points[i + 1], i, count) for i in range(count)]


def split_points(segment: Segment, split_size: int) -> list[int]:
    """Entry boundaries about ``split_size`` bytes apart (none for a small segment, or a
    tiered-storage object, whose layout is checked only when it is read)."""
    if segment.size <= split_size or segment.manifest is not None:
        return []
    entries = _index_entries(segment)
    positions = [position for position, _ in entries]
    points: list[int] = []
    last = 0
    with RandomAccess(segment.log) as source:
        for target in range(split_size, segment.size, split_size):
            if target <= last:
                continue  # a forward scan already went past this target
            i = bisect.bisect_right(positions, target) - 1
            candidate = None
            if i >= 0 and positions[i] > last:
                position, offset = entries[i]
                if _entry_starts_at(source, position, segment.size, offset):
                    candidate = position
            if candidate is None:
                candidate = _forward_scan(source, segment.size, last, target)
            if candidate is None:
                break
            points.append(candidate)
            last = candidate
    return points


def _index_entries(segment: Segment) -> list[tuple[int, int]]:
    """(position, offset) of the index's real entries, positions increasing (an entry that
    goes back is skipped: it cannot be a later boundary). Read a window at a time and at
    most one slot per byte range an entry can take in the segment, so a sparse or hostile
    index of any size costs a window of memory (issue 20's bound)."""
    if segment.offset_index is None:
        return []
    out: list[tuple[int, int]] = []
    try:
        slots = _offset_index_slots(segment.offset_index, segment.base_offset, segment.size)
        for entry in until_stop(slots, segment.base_offset):
            if entry.position >= segment.size:
                break  # positions only grow among the entries kept: none later can split
            if entry.position > 0 and (not out or entry.position > out[-1][0]):
                out.append((entry.position, entry.offset))
    except OSError:
        return []
    return out


def _offset_index_slots(path: str, base_offset: int, log_size: int):
    """The slots of an ``.index`` file, ``INDEX_WINDOW`` bytes at a time, no more than a
    segment of ``log_size`` bytes can have real entries for (one per entry, each at least
    ``LOG_OVERHEAD`` bytes long, FRAME-1)."""
    with RandomAccess(path) as index:
        size = min(index.size, OFFSET_INDEX_ENTRY_SIZE * (log_size // LOG_OVERHEAD + 1))
        size -= size % OFFSET_INDEX_ENTRY_SIZE
        for start in range(0, size, INDEX_WINDOW):
            window = index.read(start, min(INDEX_WINDOW, size - start))
            yield from iter_offset_index(window, base_offset)


def _entry_starts_at(source: RandomAccess, position: int, size: int, offset: int) -> bool:
    """Whether a whole, CRC-valid entry starts at ``position`` and its first offset is at
    most ``offset`` (the index entry's)."""
    following = following_entry(source.read, position, size)
    if following is None:
        return False
    try:
        batch = read_batch(source.read(position, following - position), position=position)
        batch.ensure_valid()
    except KafkaLogError:
        return False
    return offset_field(batch) <= offset


def _forward_scan(source: RandomAccess, size: int, start: int, target: int) -> int | None:
    """The first entry boundary at or after ``target``, following size fields from the
    boundary ``start``; None when they stop framing entries or the file ends first."""
    position: int | None = start
    while position is not None and position < target:
        position = following_entry(source.read, position, size)
    return position if position is not None and position + HEADER_SIZE_UP_TO_MAGIC < size else None


def max_split_bytes(total: int, count: int, split_size: int, open_cost: int, min_partitions: int):
    """Spark's FilePartition.maxSplitBytes: ``split_size``, lowered so that the bytes (each
    file counted ``open_cost`` more) spread over at least ``min_partitions`` tasks."""
    spread = (total + count * open_cost) // max(1, min_partitions)
    return min(split_size, max(open_cost, spread))


def plan_partitions(
    paths: list[str],
    split_size: int = DEFAULT_SPLIT_SIZE,
    *,
    open_cost: int = DEFAULT_OPEN_COST,
    min_partitions: int = 1,
) -> list[list[SegmentRange]]:
    """The input partitions for ``paths``: ranges of at most a split's size (lowered as
    Spark lowers it to spread the bytes over ``min_partitions`` tasks), each range costing
    its bytes plus ``open_cost``, dealt largest first to the least loaded of enough
    partitions to hold them all at a split's cost each. So a thousand empty segments are a
    few tasks, not a thousand, and the big ranges do not all land in one."""
    segments = discover_segments(paths)
    split = max_split_bytes(
        sum(s.size for s in segments), len(segments), split_size, open_cost, min_partitions
    )
    ranges = [r for s in segments for r in plan_ranges(s, split)]
    if not ranges:
        return []
    weights = [r.end - r.start + open_cost for r in ranges]
    count = max(min_partitions, -(-sum(weights) // split))
    partitions = deal(ranges, weights, count)
    for ranges_of_one in partitions:
        ranges_of_one.sort(key=lambda r: (r.segment.log, r.start))  # file order within a task
    return partitions


def deal(items: list, weights: list[int], count: int) -> list[list]:
    """``items`` in at most ``count`` groups of about equal weight: heaviest first, each to
    the lightest group so far (LPT scheduling), groups in the order of their heaviest item."""
    count = max(1, min(count, len(items)))
    loads = [(0, i) for i in range(count)]  # a heap of (load, group)
    groups: list[list] = [[] for _ in range(count)]
    for weight, item in sorted(zip(weights, items, strict=True), key=lambda p: -p[0]):
        load, i = heapq.heappop(loads)
        groups[i].append(item)
        heapq.heappush(loads, (load + weight, i))
    return [g for g in groups if g]
