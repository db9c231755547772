"""When a log rolls to a new segment (spec/behaviour/roll.md): Kafka's RollParams and shouldRoll.

Before each append the log asks its active segment whether to roll
[LogSegment.shouldRoll, RollParams.java]. The five conditions are a table, in
Kafka's order of evaluation (the order matters: the index conditions open the
lazy index files, so they are only looked at when the cheaper ones fail).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .offset_index import OffsetIndex
from .time_index import TimeIndex


class RollingSegment(Protocol):
    """What the roll conditions read of the active segment (segment.py's LogSegment)."""

    size: int
    roll_jitter_ms: int
    offset_index: OffsetIndex
    time_index: TimeIndex

    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int: ...


@dataclass(frozen=True, slots=True)
class RollParams:
    """What ``should_roll`` looks at before an append [RollParams.java]."""

    max_segment_ms: int
    max_segment_bytes: int
    max_timestamp_in_messages: int
    max_offset_in_messages: int
    messages_size: int
    now: int


# ROLL-1: any one condition rolls the log (ROLL-2, ROLL-3, ROLL-5, ROLL-6, ROLL-7).
ROLL_CONDITIONS = (
    ("size", lambda seg, p: seg.size > p.max_segment_bytes - p.messages_size),
    (
        "time",
        lambda seg, p: (
            seg.size > 0
            and seg.time_waited_for_roll(p.now, p.max_timestamp_in_messages)
            > p.max_segment_ms - seg.roll_jitter_ms
        ),
    ),
    ("offset_index_full", lambda seg, p: seg.offset_index.is_full()),
    ("time_index_full", lambda seg, p: seg.time_index.is_full()),
    (
        "offset_overflow",
        lambda seg, p: not seg.offset_index.can_append_offset(p.max_offset_in_messages),
    ),
)


def roll_reason(segment: RollingSegment, params: RollParams) -> str | None:
    """The name of the first condition that holds, or None: no roll."""
    for name, holds in ROLL_CONDITIONS:
        if holds(segment, params):
            return name
    return None
