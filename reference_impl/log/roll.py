"""When and how a log rolls to a new segment (spec/behaviour/roll.md): Kafka's RollParams,
LogSegment.shouldRoll with the segment's roll times, and UnifiedLog.maybeRoll and roll.

Before each append the log asks its active segment whether to roll
[LogSegment.shouldRoll, RollParams.java]. The five conditions are data: roll.md's
Table 1, declared once (``ROLL_CONDITIONS``), in Kafka's order of evaluation (the order
matters: the index conditions open the lazy index files, so they are only looked at when
the cheaper ones fail).
``LogSegment.should_roll`` (segment.py) evaluates the table; ``UnifiedLog.maybe_roll``
(unified_log.py) rolls when a row holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol

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
