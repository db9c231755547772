"""The record-level values shared by every batch format (spec/formats/record-batch-v2.md).

A *record* is what a producer sent (key, value, headers, timestamp); the batch it
sits in decides its offset and, for LogAppendTime, its timestamp. These are plain
immutable values: decoders produce them, encoders take ``SimpleRecord``
[clients/.../common/record/Record.java, SimpleRecord.java, TimestampType.java].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple

from ..constants import INT32_MAX

NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1


class TimestampType(IntEnum):
    """Timestamp types [TimestampType.java]: -1 only for magic 0."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def label(self) -> str:
        return {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}[self.value]


class Header(NamedTuple):
    """A v2 record header. The key is UTF-8 text in Kafka; kept as bytes so bytes round-trip."""

    key: bytes
    value: bytes | None


class Record(NamedTuple):
    """One decoded record, with its absolute offset and effective timestamp.

    Records and headers are NamedTuples, not frozen dataclasses: decoders build millions of
    them, and a frozen dataclass's ``__init__`` (an ``object.__setattr__`` per field) costs
    about four times a tuple's (benchmarks/README.md, the decode figures)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    sequence: int = NO_SEQUENCE
    attributes: int = 0
    offset_delta: int = 0
    timestamp_delta: int = 0


@dataclass(frozen=True, slots=True)
class SimpleRecord:
    """What an encoder is given: Kafka's SimpleRecord, plus an optional explicit offset delta
    (compaction leaves gaps, so a rewritten batch's deltas need not be 0..n-1)."""

    value: bytes | None
    key: bytes | None = None
    timestamp: int = NO_TIMESTAMP
    headers: tuple[Header, ...] = field(default=())
    offset_delta: int | None = None


def increment_sequence(sequence: int, increment: int) -> int:
    """Sequence arithmetic that wraps past Int.MAX to 0 (BATCH: sequence wrap-around).

    >>> increment_sequence(INT32_MAX - 1, 2)
    0
    """
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    """The inverse of ``increment_sequence``: below 0 wraps to Int.MAX.

    >>> decrement_sequence(0, 2)
    2147483646
    """
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement
