"""Log configuration: Kafka's topic configs that shape the files (spec/behaviour/append.md,
compaction.md for ``cleanup_policy`` and the compaction keys, COMPACT-1).

Names are the snake_case forms of Kafka's topic configs (``segment.bytes`` ->
``segment_bytes``); defaults and validators are Kafka's [LogConfig.java,
ServerLogConfigs.java]. ``roll_jitter_ms`` is not a Kafka config: Kafka draws the
jitter at random per segment from ``segment.jitter.ms``; the reference takes it as
a fixed value so every run is deterministic (see the roll page's Deviation note).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from ..constants import LONG_MAX
from ..records.compression import DEFAULT_MAX_MESSAGE_BYTES
from ..records.record import TimestampType


@dataclass(frozen=True)
class LogConfig:
    segment_bytes: int = 1024 * 1024 * 1024
    segment_ms: int = 7 * 24 * 60 * 60 * 1000
    roll_jitter_ms: int = 0
    segment_index_bytes: int = 10 * 1024 * 1024
    index_interval_bytes: int = 4096
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    message_timestamp_type: TimestampType = TimestampType.CREATE_TIME
    preallocate: bool = False
    flush_messages: int = LONG_MAX
    retention_ms: int = 7 * 24 * 60 * 60 * 1000
    retention_bytes: int = -1
    file_delete_delay_ms: int = 60_000
    # compaction (COMPACT-1): cleanup.policy and the keys the log cleaner reads
    cleanup_policy: str | tuple[str, ...] = "delete"
    min_cleanable_dirty_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    delete_retention_ms: int = 24 * 60 * 60 * 1000

    def __post_init__(self) -> None:
        minimums = {
            "segment_bytes": 14,
            "segment_ms": 1,
            "roll_jitter_ms": 0,
            "segment_index_bytes": 4,
            "index_interval_bytes": 0,
            "max_message_bytes": 0,
            "flush_messages": 1,
            "retention_ms": -1,  # -1: no time limit (MODEL-8 Table 1)
            "file_delete_delay_ms": 0,
            "min_compaction_lag_ms": 0,
            "max_compaction_lag_ms": 1,
            "delete_retention_ms": 0,
        }
        for name, minimum in minimums.items():
            if getattr(self, name) < minimum:
                raise ValueError(f"{name} must be >= {minimum}, got {getattr(self, name)}")
        if self.roll_jitter_ms and self.roll_jitter_ms >= self.segment_ms:
            # MODEL-8: a jitter Kafka could draw is below segment.ms
            raise ValueError(
                f"roll_jitter_ms must be 0 or below segment_ms ({self.segment_ms}), "
                f"got {self.roll_jitter_ms}"
            )
        if self.message_timestamp_type is TimestampType.NO_TIMESTAMP_TYPE:
            raise ValueError("message_timestamp_type must be CreateTime or LogAppendTime")
        object.__setattr__(
            self, "message_timestamp_type", TimestampType(self.message_timestamp_type)
        )
        object.__setattr__(self, "cleanup_policy", _cleanup_policy(self.cleanup_policy))
        if not 0 <= self.min_cleanable_dirty_ratio <= 1:
            raise ValueError(
                f"min_cleanable_dirty_ratio must be in [0, 1], got {self.min_cleanable_dirty_ratio}"
            )
        if self.min_compaction_lag_ms > self.max_compaction_lag_ms:
            # LogConfig.validate refuses it at topic creation
            raise ValueError(
                f"min_compaction_lag_ms ({self.min_compaction_lag_ms}) must not exceed "
                f"max_compaction_lag_ms ({self.max_compaction_lag_ms})"
            )

    @property
    def compact(self) -> bool:
        """COMPACT-1: ``cleanup.policy`` holds ``compact``: the log cleaner may clean this log."""
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def max_segment_ms(self) -> int:
        """COMPACT-2: LogConfig.maxSegmentMs: a compacted log also rolls by max.compaction.lag.ms,
        so that no record waits in the active segment (which is never cleaned) past it."""
        if self.compact and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms

    @property
    def init_file_size(self) -> int:
        """Preallocated .log size: segment.bytes when preallocate is on, else 0."""
        return self.segment_bytes if self.preallocate else 0

    @classmethod
    def from_dict(cls, values: dict) -> LogConfig:
        """Build from the conformance protocol's ``config`` object; unknown keys are errors."""
        known = {f.name for f in fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown log config keys: {sorted(unknown)}")
        values = dict(values)
        if isinstance(values.get("message_timestamp_type"), str):
            values["message_timestamp_type"] = _timestamp_type(values["message_timestamp_type"])
        return cls(**values)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["message_timestamp_type"] = self.message_timestamp_type.label
        out["cleanup_policy"] = ",".join(self.cleanup_policy)
        return out


CLEANUP_POLICIES = ("compact", "delete")


def _cleanup_policy(value: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``cleanup.policy``: a comma-separated string or a list of ``compact``/``delete``, as
    Kafka's ConfigDef.Type.LIST reads it (spaces around the names ignored)."""
    names = value.split(",") if isinstance(value, str) else list(value)
    names = tuple(str(name).strip() for name in names)
    bad = [name for name in names if name not in CLEANUP_POLICIES]
    if bad:
        raise ValueError(f"cleanup_policy names must be compact or delete, got {bad}")
    return names


def _timestamp_type(name: str) -> TimestampType:
    by_name = {
        "CreateTime": TimestampType.CREATE_TIME,
        "LogAppendTime": TimestampType.LOG_APPEND_TIME,
    }
    if name not in by_name:
        raise ValueError(
            f"message_timestamp_type must be CreateTime or LogAppendTime, not {name!r}"
        )
    return by_name[name]
