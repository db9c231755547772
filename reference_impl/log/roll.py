"""When and how a log rolls to a new segment (spec/behaviour/roll.md): Kafka's RollParams,
LogSegment.shouldRoll with the segment's roll times, and UnifiedLog.maybeRoll and roll.

Before each append the log asks its active segment whether to roll
[LogSegment.shouldRoll, RollParams.java]. The five conditions are data: roll.md's
Table 1, declared once (``ROLL_CONDITIONS``), in Kafka's order of evaluation (the order
matters: the index conditions open the lazy index files, so they are only looked at when
the cheaper ones fail).
``LogSegment.should_roll`` (segment.py) evaluates the table; ``LogRoll``, mixed into
``UnifiedLog`` (unified_log.py), rolls when a row holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from ..constants import INT32_MAX, UNKNOWN_OFFSET
from .log_validator import LogAppendInfo
from .offset_index import OffsetIndex
from .time_index import TimeIndex


class RollingSegment(Protocol):
    """What the roll conditions read of the active segment (segment.py's LogSegment)."""

    size: int
    roll_jitter_ms: int
    offset_index: OffsetIndex
    time_index: TimeIndex

    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int: ...


class RollParams(NamedTuple):
    """What ``should_roll`` looks at before an append [RollParams.java]. A tuple, as it is
    built for every append (a frozen dataclass costs 1.5 µs of the compiled append's 25)."""

    max_segment_ms: int
    max_segment_bytes: int
    max_timestamp_in_messages: int
    max_offset_in_messages: int
    messages_size: int
    now: int


@dataclass(frozen=True)
class RollCondition:
    """One row of roll.md Table 1: its number, a name for reports, the condition as the spec
    writes it, the rules that state it, and its test against the active segment."""

    number: int
    name: str
    condition: str
    rules: tuple[str, ...]
    holds: Callable[[RollingSegment, RollParams], bool]


# ROLL-1: a log rolls before an append when any condition holds. This is spec/behaviour/
# roll.md Table 1, row for row (tests/test_rule_tables.py holds the two together).
ROLL_CONDITIONS = (
    RollCondition(
        1, "size", "`size > segment_bytes − messages_size`", ("ROLL-2",),
        lambda seg, p: seg.size > p.max_segment_bytes - p.messages_size,
    ),
    RollCondition(
        2, "time", "`size > 0` and `time_waited > segment_ms − roll_jitter_ms`",
        ("ROLL-3", "ROLL-4"),
        lambda seg, p: (
            seg.size > 0
            and seg.time_waited_for_roll(p.now, p.max_timestamp_in_messages)
            > p.max_segment_ms - seg.roll_jitter_ms
        ),
    ),
    RollCondition(
        3, "offset_index_full", "offset index entries ≥ its capacity", ("ROLL-5",),
        lambda seg, p: seg.offset_index.is_full(),
    ),
    RollCondition(
        4, "time_index_full", "time index entries ≥ its capacity − 1", ("ROLL-6",),
        lambda seg, p: seg.time_index.is_full(),
    ),
    RollCondition(
        5, "offset_overflow", "`last_offset − base_offset` outside `[0, 2^31−1]`", ("ROLL-7",),
        lambda seg, p: not seg.offset_index.can_append_offset(p.max_offset_in_messages),
    ),
)  # fmt: skip


def roll_reason(segment: RollingSegment, params: RollParams) -> str | None:
    """The name of the first condition that holds, in the table's order, or None: no roll."""
    for condition in ROLL_CONDITIONS:
        if condition.holds(segment, params):
            return condition.name
    return None


class LogRoll:
    """Mixed into ``UnifiedLog``: rolling the log to a new active segment."""

    def maybe_roll(self, messages_size: int, info: LogAppendInfo) -> RollingSegment:
        """ROLL-1, ROLL-11: roll when the active segment meets a roll condition. The new base offset is
        the set's first offset, or for a legacy follower set (first offset unknown) its
        last offset - (2^31 - 1), raised to the LEO by the roll."""
        segment = self.segments.active_segment
        if not segment.should_roll(self.roll_params(messages_size, info)):
            return segment
        if info.first_offset == UNKNOWN_OFFSET:
            return self._roll(info.last_offset - INT32_MAX)
        return self._roll(info.first_offset)

    def roll_params(self, messages_size: int, info: LogAppendInfo) -> RollParams:
        """What the roll conditions look at before appending ``info``'s set."""
        return RollParams(
            max_segment_ms=self.config.max_segment_ms,
            max_segment_bytes=self.config.segment_bytes,
            max_timestamp_in_messages=info.max_timestamp,
            max_offset_in_messages=info.last_offset,
            messages_size=messages_size,
            now=self.clock.milliseconds(),
        )

    def roll(self, expected_next_offset: int | None = None) -> RollingSegment:
        """ROLL-12, FLUSH-4: start a new active segment at max(``expected_next_offset``, LEO)."""
        self._begin()
        return self._roll(expected_next_offset)

    def _roll(self, expected_next_offset: int | None) -> RollingSegment:
        new_segment = self.local_log.roll(expected_next_offset)
        # SNAP-B-1: a snapshot named after the new base, so recovering the new segment can
        # start from it; the map end offset is set to the base (it may lie above the LEO)
        self.producer_state_manager.update_map_end_offset(new_segment.base_offset)
        self.producer_state_manager.take_snapshot()
        # Kafka flushes up to the new base in the background; the reference does it at once
        self._flush(new_segment.base_offset, including_offset=False)
        return new_segment
